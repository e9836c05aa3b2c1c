/* test_cli.c: the drift command as users meet it: exit statuses, messages
 * for bad options, values and data files, the output file's format,
 * byte-identical reruns, and no file left behind by a run that fails
 * before it starts. */
#include "config.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

extern char **environ;

typedef struct result {
    int status;
    char *out, *err;
} result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* Runs drift with args (NULL-terminated). */
static result run(const char *const *args)
{
    const char *bin = getenv("DRIFT_BIN");
    if (!bin)
        fail_msg("DRIFT_BIN is not set: run with make check");
    char outp[] = "/tmp/drift-cli-out-XXXXXX", errp[] = "/tmp/drift-cli-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    assert_true(fo >= 0 && fe >= 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fo, 1);
    posix_spawn_file_actions_adddup2(&fa, fe, 2);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    for (const char *const *a = args; *a; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv,
                                 environ),
                     0);
    int st;
    waitpid(pid, &st, 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fo);
    close(fe);
    result r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                slurp(outp), slurp(errp)};
    unlink(outp);
    unlink(errp);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

static void expect(const char *const *args, int status, const char *needle)
{
    result r = run(args);
    if (r.status != status || (needle && !strstr(r.err, needle)))
        fail_msg("exit %d (want %d), stderr:\n%s\n(wanted '%s')", r.status,
                 status, r.err, needle ? needle : "");
    result_free(&r);
}

static const char *pima(void)
{
    static char path[4096];
    const char *src = getenv("srcdir");
    snprintf(path, sizeof path, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    return path;
}

static void test_usage(void **state)
{
    (void)state;
    expect((const char *[]){NULL}, 2, "usage: drift COMMAND");
    expect((const char *[]){"smaple", NULL}, 2, "did you mean 'sample'?");
    result r = run((const char *[]){"--help", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "sample"));
    result_free(&r);
    const char *cmds[] = {"sample", "samplers", "models"};
    for (int k = 0; k < 3; k++) {
        r = run((const char *[]){cmds[k], "--help", NULL});
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "usage: drift"));
        result_free(&r);
    }
}

static void test_bad_options(void **state)
{
    (void)state;
    const char *d = pima();
    expect((const char *[]){"sample", "--bath", "5", NULL}, 2,
           "unknown option '--bath' (did you mean '--batch'?)");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "abc", NULL},
           2, "--batch abc: expected an integer");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "0", NULL},
           2, "--batch 0");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "h=-1", NULL},
           2, "'h' of sampler sgld accepts (0, inf)");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "step=1", NULL},
           2, "sampler sgld has no hyperparameter 'step'");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgdl", NULL},
           2, "did you mean 'sgld'?");
    expect((const char *[]){"sample", "--model", "logistc", "--data", d,
                            "--sampler", "sgld", NULL},
           2, "did you mean 'logistic'?");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--access", "zz", NULL},
           2, "--access zz: expected ra, rr or ca");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "100000", NULL},
           2, "larger than the 200 rows");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--model-set", "s=0", NULL},
           2, "--model-set s=0: value out of range");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "batch=10", NULL},
           2, "use --batch 10");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--seed", "-3", NULL},
           2, "--seed -3");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--thin", "1.5", NULL},
           2, "--thin");
    expect((const char *[]){"sample", "--sampler", "sgld", "--data", d, NULL},
           2, "no model given");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            NULL},
           2, "no sampler given");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", NULL},
           2, "--sampler needs a value");
}

static void test_bad_data(void **state)
{
    (void)state;
    struct {
        const char *text, *where, *what;
    } cases[] = {
        {"y,x.1\n0,1\n1\n", ":3:2: error: ", "row has 1 fields"},
        {"y,x.1\n0,1\n1,zz\n", ":3:3: error: ", "is not a number"},
        {"y,x.1\n0,NaN\n", ":2:3: error: ", "not finite"},
        {"", ":1:1: error: ", "the file is empty"},
        {"y,z.1\n0,1\n", "", "x.1 ... x.D"},
        {"y,x.1\n0,1\n3,1\n", ":3: error: ", "must be 0 or 1"},
    };
    char out[] = "/tmp/drift-cli-never-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *path = th_write_text(cases[k].text, ".csv");
        char want[4200];
        snprintf(want, sizeof want, "%s%s", path, cases[k].where);
        result r = run((const char *[]){"sample", "--model", "logistic",
                                        "--data", path, "--sampler", "sgld",
                                        "--out", out, NULL});
        if (r.status != 2 || !strstr(r.err, want) ||
            !strstr(r.err, cases[k].what))
            fail_msg("case %zu: exit %d, stderr: %s", k, r.status, r.err);
        /* Nothing written under the requested name. */
        assert_int_not_equal(access(out, F_OK), 0);
        result_free(&r);
        unlink(path);
        free(path);
    }
    expect((const char *[]){"sample", "--model", "logistic", "--data",
                            "/nonexistent.csv", "--sampler", "sgld", NULL},
           2, "/nonexistent.csv: cannot open data file");
}

static void test_output(void **state)
{
    (void)state;
    char out1[] = "/tmp/drift-cli-a-XXXXXX", out2[] = "/tmp/drift-cli-b-XXXXXX";
    close(mkstemp(out1));
    close(mkstemp(out2));
    const char *d = pima();
    for (int k = 0; k < 2; k++) {
        result r = run((const char *[]){"sample", "--model", "logistic",
                                        "--data", d, "--sampler", "sgld",
                                        "--set", "h=0.001", "--batch", "20",
                                        "--iter", "300", "--seed", "42",
                                        "--out", k ? out2 : out1, "--quiet",
                                        NULL});
        assert_int_equal(r.status, 0);
        result_free(&r);
    }
    char *a = slurp(out1), *b = slurp(out2);
    assert_non_null(a);
    assert_string_equal(a, b); /* same seed, same build: same bytes */
    assert_non_null(strstr(a, "# drift_version = "));
    assert_non_null(strstr(a, "# model = logistic\n"));
    assert_non_null(strstr(a, "# sampler = sgld\n"));
    assert_non_null(strstr(a, "#   h = 0.001\n"));
    assert_non_null(strstr(a, "# seed = 42\n"));
    assert_non_null(strstr(a, "# batch = 20\n"));
    assert_non_null(strstr(a, "\nlp__,grads__,w.1,w.2,w.3,w.4,w.5,w.6,w.7,w.8\n"));
    /* 300 draws of 10 fields each; grads__ counts 20 per iteration. */
    size_t rows = 0;
    char *line = strstr(a, "\nlp__");
    line = strchr(line + 1, '\n') + 1;
    long last_grads = 0;
    while (*line && *line != '#') {
        size_t commas = 0;
        char *end = strchr(line, '\n');
        for (char *p = line; p < end; p++)
            commas += *p == ',';
        assert_int_equal(commas, 9);
        last_grads = strtol(strchr(line, ',') + 1, NULL, 10);
        rows++;
        line = end + 1;
    }
    assert_int_equal(rows, 300);
    assert_int_equal(last_grads, 6000);
    free(a);
    free(b);
    unlink(out1);
    unlink(out2);
}

static void test_divergence(void **state)
{
    (void)state;
    char out[] = "/tmp/drift-cli-div-XXXXXX";
    close(mkstemp(out));
    result r = run((const char *[]){"sample", "--model", "logistic", "--data",
                                    pima(), "--sampler", "sgld", "--set",
                                    "h=1e6", "--batch", "10", "--iter",
                                    "100000", "--seed", "1", "--out", out,
                                    NULL});
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "chain 1, iteration "));
    assert_non_null(strstr(r.err, "w."));
    assert_non_null(strstr(r.err, "smaller step size"));
    result_free(&r);
    /* What was written is a whole CSV file: every row complete. */
    char *a = slurp(out);
    assert_non_null(a);
    assert_non_null(strstr(a, "lp__,grads__,w.1"));
    assert_true(a[strlen(a) - 1] == '\n');
    free(a);
    unlink(out);
}

static void test_listing(void **state)
{
    (void)state;
    result r = run((const char *[]){"samplers", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "sgld"));
    assert_non_null(strstr(r.out, "default 0.0001"));
    result_free(&r);
    r = run((const char *[]){"models", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "logistic"));
    result_free(&r);
}

/* The block `drift samplers` prints for sampler name (up to the next
 * blank line); NULL when absent.  Caller frees. */
static char *sampler_block(const char *out, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s  ", name);
    const char *p = strstr(out, key);
    if (!p)
        return NULL;
    const char *end = strstr(p + 1, "\n\n");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *b = malloc(n + 1);
    assert_non_null(b);
    memcpy(b, p, n);
    b[n] = '\0';
    return b;
}

/* Issue 4: every Langevin-family sampler is listed with its
 * hyperparameters (names as the papers have them) and columns, and runs
 * end to end from the command line. */
static void test_langevin(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *want[8];
    } s[] = {
        {"lmc", {"    h ", "full-data", NULL}},
        {"mala", {"    h ", "adapt_delta", "0.574", "accept_stat__",
                  "stepsize__", "full-data", NULL}},
        {"psgld", {"    h ", "    lambda ", "1e-05", "    alpha ", "0.99",
                   NULL}},
        {"sghmc", {"    h ", "    gamma ", "    sigma ", "default auto",
                   "sqrt(2 gamma)", "em|symplectic", "kinetic__", NULL}},
        {"sgnht", {"    h ", "    A ", "xi__", "kinetic__", NULL}},
        {"msgnht", {"    h ", "    A ", "xi__", "kinetic__", NULL}},
        {"ewsg", {"    h ", "    gamma ", "    sigma ", "    M ", "    x ",
                  "r_next_r|0|1|r_next_0", "index_accept__", NULL}},
    };
    result r = run((const char *[]){"samplers", NULL});
    assert_int_equal(r.status, 0);
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++) {
        char *b = sampler_block(r.out, s[k].name);
        if (!b)
            fail_msg("drift samplers does not list %s:\n%s", s[k].name, r.out);
        for (const char *const *w = s[k].want; *w; w++)
            if (!strstr(b, *w))
                fail_msg("%s's listing lacks '%s':\n%s", s[k].name, *w, b);
        free(b);
    }
    result_free(&r);

    /* End to end: the thermostat on the data-free double well with
     * injected gradient noise, and ewsg's refusal of it. */
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(tp);
    char model[4096], out[] = "/tmp/drift-cli-lgv-XXXXXX";
    snprintf(model, sizeof model, "%s/doublewell.so", tp);
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    r = run((const char *[]){"sample", "--model", model, "--sampler", "sgnht",
                             "--set", "A=0", "--set", "h=0.01",
                             "--grad-noise", "1", "--iter", "100", "--seed",
                             "3", "--out", out, "--quiet", NULL});
    assert_int_equal(r.status, 0);
    result_free(&r);
    char *csv = slurp(out);
    assert_non_null(csv);
    assert_non_null(strstr(csv, "lp__,grads__,xi__,kinetic__,theta"));
    assert_non_null(strstr(csv, "# grad_noise = 1"));
    free(csv);
    unlink(out);
    expect((const char *[]){"sample", "--model", model, "--sampler", "ewsg",
                            "--iter", "10", "--seed", "1", "--out", out,
                            "--quiet", NULL},
           2, "ewsg: the model has no data rows");
    expect((const char *[]){"sample", "--model", model, "--sampler", "ewsg",
                            "--set", "x=2", "--iter", "10", NULL},
           2, "r_next_r|0|1|r_next_0");
    expect((const char *[]){"sample", "--model", model, "--sampler", "psgld",
                            "--set", "alpha=1", "--iter", "10", NULL},
           2, "'alpha' of sampler psgld accepts [0, 1)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_bad_data),
        cmocka_unit_test(test_output),
        cmocka_unit_test(test_divergence),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_langevin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
