/* test_hostile_trust.c: a file drift reads is data, never a source of
 * code.  A draws file's header (drift summary --ksd) and a checkpoint's
 * manifest (drift sample --resume) name files; none of them may get a
 * shared object loaded that the user did not give on the command line or
 * install, nor make drift hang on a FIFO.  The payload is a shared object
 * whose constructor leaves a mark: the mark must never appear. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostile.h"

static char *mark_in(const char *dir)
{
    char *mark = hx_in(dir, "PWNED");
    setenv("DRIFT_TEST_PAYLOAD_MARK", mark, 1);
    return mark;
}

static void expect_no_mark(const char *mark)
{
    if (access(mark, F_OK) == 0)
        fail_msg("code named by a file ran: %s exists", mark);
}

/* A draws file of the logistic model plugin, its header edited. */
static void draws_file(const char *dir)
{
    const char *args[] = {"sample", "--model", "logistic", "--data",
                          "pima.csv", "--sampler", "sgld", "--set",
                          "h=1e-4", "--batch", "20", "--iter", "2000",
                          "--thin", "10", "--chains", "1", "--seed", "1",
                          "--quiet", "--out", "fit.csv", NULL};
    hx_expect(dir, args, 0, "");
    char *text = hx_slurp(dir, "fit.csv");
    /* The recorded plugin path, whatever the build tree's is. */
    char *line = strstr(text, "# model_file = ");
    assert_non_null(line);
    char *eol = strchr(line, '\n');
    char old[4300];
    snprintf(old, sizeof old, "%.*s", (int)(eol - line), line);
    free(text);
    hx_replace(dir, "fit.csv", old, "# model_file = ./fit-model.so");
}

static void test_ksd_header_names_a_plugin(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    char *mark = mark_in(dir);
    hx_logistic(dir);
    hx_copy_payload(dir, "fit-model.so");
    draws_file(dir);
    const char *ksd[] = {"summary", "--ksd", "fit.csv", NULL};
    /* The header's model name is installed: that model is used, the
     * recorded plugin path is not loaded, and the note says so. */
    hx_expect(dir, ksd, 0, "recomputed with the installed model logistic");
    expect_no_mark(mark);
    /* A model by a name found nowhere: refused, naming the cure. */
    hx_replace(dir, "fit.csv", "# model = logistic", "# model = payload");
    hx_expect(dir, ksd, 2, "loads no code that a draws file names");
    expect_no_mark(mark);
    /* A path as the model's name is a path all the same. */
    hx_replace(dir, "fit.csv", "# model = payload",
               "# model = ./fit-model.so");
    hx_expect(dir, ksd, 2, "loads no code that a draws file names");
    expect_no_mark(mark);
    /* Given on the command line, the user's own choice is loaded (and
     * refused as no plugin, after its constructor ran: that is dlopen). */
    const char *given[] = {"summary", "--ksd", "fit.csv", "--model",
                           "./fit-model.so", "--data", "pima.csv", NULL};
    hx_expect(dir, given, 2, "not a drift plugin");
    unlink(mark);
    free(mark);
    hx_rm(dir);
    free(dir);
}

static void test_ksd_header_names_a_fifo(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    draws_file(dir);
    hx_replace(dir, "fit.csv", "# data = pima.csv", "# data = ff");
    char *ff = hx_in(dir, "ff");
    assert_int_equal(mkfifo(ff, 0600), 0);
    const char *ksd[] = {"summary", "--ksd", "fit.csv", NULL};
    hx_expect(dir, ksd, 2, "names the data ff, which is not a regular file");
    free(ff);
    hx_rm(dir);
    free(dir);
}

static void test_resume_manifest_names_a_plugin(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    char *mark = mark_in(dir);
    hx_logistic(dir);
    hx_copy_payload(dir, "payload.so");
    hx_make_ckpt(dir, "r", 1, "100000000");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    /* The command's sampler swapped for a path the manifest never
     * listed. */
    hx_replace(dir, "r.ckpt/run", "\nsampler sgld\n",
               "\nsampler ./payload.so\n");
    hx_expect(dir, resume, 2, "is damaged (its checksum does not match)");
    expect_no_mark(mark);
    /* A forger recomputes the checksum: the plugin is still refused. */
    hx_resum(dir, "r.ckpt/run");
    hx_expect(dir, resume, 2, "which its manifest does not list");
    expect_no_mark(mark);
    /* ... and listed, but not with the size and hash it has. */
    char *text = hx_slurp(dir, "r.ckpt/run");
    char *line = strstr(text, "\nfile sampler ");
    assert_non_null(line);
    char old[4300];
    snprintf(old, sizeof old, "%.*s", (int)(strchr(line + 1, '\n') - line),
             line);
    free(text);
    hx_replace(dir, "r.ckpt/run", old,
               "\nfile sampler ./payload.so\t31304 ea5c9e08b7ee8b1c");
    hx_resum(dir, "r.ckpt/run");
    hx_expect(dir, resume, 2, "is not the file the checkpoint was written");
    expect_no_mark(mark);
    /* The model: a plugin path in place of the .drift file. */
    hx_replace(dir, "r.ckpt/run", "\nsampler ./payload.so\n",
               "\nsampler sgld\n");
    hx_replace(dir, "r.ckpt/run", "\nmodel logistic.drift\n",
               "\nmodel ./payload.so\n");
    hx_resum(dir, "r.ckpt/run");
    hx_expect(dir, resume, 2, "the model plugin ./payload.so");
    expect_no_mark(mark);
    free(mark);
    hx_rm(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ksd_header_names_a_plugin),
        cmocka_unit_test(test_ksd_header_names_a_fifo),
        cmocka_unit_test(test_resume_manifest_names_a_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
