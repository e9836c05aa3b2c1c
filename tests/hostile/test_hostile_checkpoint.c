/* test_hostile_checkpoint.c: drift sample --resume against checkpoints
 * that changed after they were written: every part (the manifest, each
 * chain's state and its draws) is checked against its checksum and a
 * mismatch refused, naming the file, before a byte of it reaches an
 * output; a manifest or state forged with its checksum made right is
 * still held to what drift writes (the manifest's line forms, a
 * plugin's fingerprint, the data stream's rows); and the checkpoint
 * resumed is the directory given, whatever its name, never another one
 * the run's command implies. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostile.h"

/* Changes the last digit of the fifth draw of dir/name (same length, as
 * a flipped bit or a torn sector would). */
static void flip_a_draw(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    assert_non_null(text);
    int draws = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        if (line[0] != '#' && line[0] != 'l' && ++draws == 5) {
            nl[-1] = nl[-1] == '1' ? '2' : '1';
            break;
        }
        line = nl + 1;
    }
    assert_int_equal(draws, 5);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    free(text);
    free(p);
}

static void test_damaged_rows(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    flip_a_draw(dir, "r.ckpt/chain_1.rows");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    th_cli r = hx_run(dir, resume, 120);
    if (r.status == 0 || !strstr(r.err, "chain_1.rows is damaged"))
        fail_msg("a changed draw in the checkpoint: exit %d, stderr:\n%s",
                 r.status, r.err);
    th_cli_free(&r);
    assert_false(hx_exists(dir, "r.csv"));
    /* The checkpoint is kept, for whoever can repair it. */
    assert_true(hx_exists(dir, "r.ckpt/chain_1.rows"));
    hx_rm(dir);
    free(dir);
}

static void test_damaged_manifest(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    /* One digit of the spec: a longer run than the one begun. */
    hx_replace(dir, "r.ckpt/run", "\noption iter 100000000\n",
               "\noption iter 100000001\n");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    hx_expect(dir, resume, 2, "r.ckpt/run is damaged (its checksum does not "
                              "match)");
    assert_false(hx_exists(dir, "r.csv"));
    hx_rm(dir);
    free(dir);
}

/* A manifest forged with a valid checksum is still checked file by
 * file: another build's is refused as such. */
static void test_forged_build(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    char *text = hx_slurp(dir, "r.ckpt/run");
    char *line = strstr(text, "\nfile build ");
    assert_non_null(line);
    char old[4300];
    snprintf(old, sizeof old, "%.*s", (int)(strchr(line + 1, '\n') - line),
             line);
    free(text);
    hx_replace(dir, "r.ckpt/run", old, "\nfile build drift 0\t1 0");
    hx_resum(dir, "r.ckpt/run");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    hx_expect(dir, resume, 2, "another build of drift");
    hx_rm(dir);
    free(dir);
}

/* The checkpoint resumed is DIR: a copy under another name is resumed
 * (and removed once done) while the run's own STEM.ckpt, absent or
 * different, is left alone. */
static void test_resume_a_copy(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char *from = hx_in(dir, "r.ckpt"), *to = hx_in(dir, "bak.ckpt");
    assert_int_equal(rename(from, to), 0);
    const char *resume[] = {"sample", "--resume", "bak.ckpt", "--quiet",
                            NULL};
    hx_expect(dir, resume, 0, "");
    assert_true(hx_exists(dir, "r.csv"));
    assert_false(hx_exists(dir, "bak.ckpt"));
    assert_false(hx_exists(dir, "r.ckpt"));
    /* Both there, and the run's own one damaged: the copy is used. */
    char *out = hx_in(dir, "r.csv");
    assert_int_equal(remove(out), 0);
    free(out);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
    hx_write(dir, "r.ckpt/chain_1.state", "damaged");
    hx_expect(dir, resume, 0, "");
    assert_true(hx_exists(dir, "r.csv"));
    assert_false(hx_exists(dir, "bak.ckpt"));
    assert_true(hx_exists(dir, "r.ckpt/chain_1.state"));
    free(from);
    free(to);
    hx_rm(dir);
    free(dir);
}

/* The line of dir/name that starts with "\n" key, without its line end
 * (malloc'd, leading "\n" kept). */
static char *line_of(const char *dir, const char *name, const char *key)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    assert_non_null(text);
    char *line = strstr(text, key);
    assert_non_null(line);
    char *nl = strchr(line + 1, '\n');
    assert_non_null(nl);
    *nl = '\0';
    char *out = strdup(line);
    free(text);
    free(p);
    return out;
}

/* A manifest forged with a valid checksum holds only lines of the forms
 * drift writes: an over-long directory (once cut to the run's own
 * directory and resumed there), an escape drift never writes or a line
 * of another kind is refused as such, before anything runs. */
static void test_forged_forms(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char *p = hx_in(dir, "r.ckpt/run");
    char *orig = th_slurp(p);
    assert_non_null(orig);
    char *cwd = line_of(dir, "r.ckpt/run", "\ncwd ");
    /* The run's directory, then "/." to past PATH_MAX, then a directory
     * that is not there. */
    size_t n = strlen(cwd);
    char *longer = malloc(n + 5000);
    assert_non_null(longer);
    memcpy(longer, cwd, n + 1);
    while (strlen(longer) < 4200)
        strcat(longer, "/.");
    strcat(longer, "/elsewhere");
    struct {
        const char *old, *new_text, *why;
    } cases[] = {
        {cwd, longer, "its directory line is malformed"},
        {"\noption quiet\n", "\noption qu\\iet\n", "an option is malformed"},
        {"\noption quiet\n", "\noption quiet\nexec /bin/sh\n",
         "a line drift does not write is malformed"},
        {"\nsampler sgld\n", "\nsampler sgld\nsampler sgld\n",
         "the sampler line is malformed"},
        {"\nfile model ", "\nfile payload ", "a file line is malformed"},
    };
    const char *resume[] = {"sample", "--resume", "r.ckpt", "--quiet", NULL};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        hx_write(dir, "r.ckpt/run", orig);
        hx_replace(dir, "r.ckpt/run", cases[k].old, cases[k].new_text);
        hx_resum(dir, "r.ckpt/run");
        th_cli r = hx_run(dir, resume, 60);
        if (r.status != 2 || !strstr(r.err, cases[k].why) ||
            !strstr(r.err, "is not a manifest drift wrote"))
            fail_msg("forged manifest %zu: exit %d, stderr:\n%s", k,
                     r.status, r.err);
        th_cli_free(&r);
        assert_false(hx_exists(dir, "r.csv"));
    }
    free(longer);
    free(cwd);
    free(orig);
    free(p);
    hx_rm(dir);
    free(dir);
}

/* A forged manifest that names a FIFO as the sampler's file: its
 * fingerprint is taken without waiting for a writer, and the file is
 * refused, not hung on. */
static void test_forged_fifo_plugin(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char *fifo = hx_in(dir, "fifo.so");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *line = line_of(dir, "r.ckpt/run", "\nfile sampler ");
    hx_replace(dir, "r.ckpt/run", line, "\nfile sampler ./fifo.so\t1 0");
    hx_replace(dir, "r.ckpt/run", "\nsampler sgld\n", "\nsampler ./fifo.so\n");
    hx_resum(dir, "r.ckpt/run");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    th_cli r = hx_run(dir, resume, 20);
    if (r.status != 2 ||
        !strstr(r.err, "is not the file the checkpoint was written with"))
        fail_msg("a FIFO as the sampler: exit %d (124: hung), stderr:\n%s",
                 r.status, r.err);
    th_cli_free(&r);
    free(line);
    free(fifo);
    hx_rm(dir);
    free(dir);
}

/* Sets block which (0: the engine's scalars; -1: the last) of
 * dir/r.ckpt/chain_1.state to 0xff bytes and makes its checksum right
 * again, as a forger would. */
static void forge_block(const char *dir, int which)
{
    char *p = hx_in(dir, "r.ckpt/chain_1.state");
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, len, f), len);
    fclose(f);
    assert_true(len > 16 && !memcmp(b, "DRIFTCK", 7));
    size_t at = 8, hit = 0;
    uint64_t n, hit_n = 0;
    for (int k = 0; at + 8 <= len - 8; k++) {
        memcpy(&n, b + at, 8);
        assert_true(at + 8 + n <= len - 8);
        if (k == which || which < 0) {
            hit = at;
            hit_n = n;
        }
        at += 8 + (size_t)n;
    }
    assert_int_equal(at, len - 8);
    assert_true(hit > 0 && hit_n > 0);
    memset(b + hit + 8, 0xff, (size_t)hit_n);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t k = 8; k < len - 8; k++) {
        h ^= b[k];
        h *= 0x100000001b3ULL;
    }
    memcpy(b + len - 8, &h, 8);
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(b);
    free(p);
}

/* A chain's state forged with its checksum made right: the rows its data
 * stream had drawn ahead (the third block: after the engine's scalars
 * and the point) set to row 2^64 - 1, which the resumed chain would have
 * read at once (from before the data); and the output file's layout (the
 * last block, sgld keeping nothing of its own) all -1 bytes, which says
 * where stepsize__ is among each draw's diagnostics.  Each refused as
 * damaged, naming the file or chain. */
static void test_forged_state(void **state)
{
    (void)state;
    static const struct {
        int block;
        const char *why;
    } cases[] = {
        {2, "chain_1.state is damaged: its data stream's look-ahead holds "
            "row "},
        {-1, "chain 1's state is damaged: its output file's layout is not "
             "this run's"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *dir = hx_tmpdir();
        hx_logistic(dir);
        hx_make_ckpt(dir, "r", 1, "3000000");
        forge_block(dir, cases[k].block);
        const char *resume[] = {"sample", "--resume", "r.ckpt", "--quiet",
                                NULL};
        th_cli r = hx_run(dir, resume, 60);
        if (r.status != 2 || !strstr(r.err, cases[k].why))
            fail_msg("forged state block %d: exit %d, stderr:\n%s",
                     cases[k].block, r.status, r.err);
        th_cli_free(&r);
        hx_rm(dir);
        free(dir);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damaged_rows),
        cmocka_unit_test(test_damaged_manifest),
        cmocka_unit_test(test_forged_build),
        cmocka_unit_test(test_resume_a_copy),
        cmocka_unit_test(test_forged_forms),
        cmocka_unit_test(test_forged_fifo_plugin),
        cmocka_unit_test(test_forged_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
