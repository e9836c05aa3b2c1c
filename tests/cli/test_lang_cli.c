/* test_lang_cli.c: the drift command with models in the language: drift
 * sample on a .drift file (positional), drift check with and without
 * data, drift diagnose on a .drift model and on a C plugin, and the exit
 * status 2 with file:line:col reports for bad models and data. */
#include "config.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char *ex(const char *rel)
{
    const char *src = getenv("srcdir");
    size_t n = strlen(src ? src : ".") + strlen(rel) + 16;
    char *p = malloc(n);
    snprintf(p, n, "%s/examples/%s", src ? src : ".", rel);
    return p;
}

static void expect(const char *const *args, int status, const char *stream,
                   const char *needle)
{
    th_cli r = th_cli_run(args);
    const char *text = !strcmp(stream, "out") ? r.out : r.err;
    if (r.status != status || (needle && !strstr(text, needle)))
        fail_msg("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s\n(wanted '%s' "
                 "in std%s)",
                 r.status, status, r.out, r.err, needle ? needle : "", stream);
    th_cli_free(&r);
}

static void test_sample(void **state)
{
    (void)state;
    char *m = ex("logistic/logistic.drift"), *d = ex("logistic/pima-train.csv");
    char out[] = "/tmp/drift-lcli-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    expect((const char *[]){"sample", m, "--data", d, "--sampler", "sgld",
                            "--iter", "50", "--seed", "3", "--out", out,
                            "--chains", "1", "--quiet", NULL},
           0, "err", NULL);
    char *csv = th_slurp(out);
    assert_non_null(strstr(csv, "# model = "));
    assert_non_null(strstr(csv, "lp__,grads__,treedepth__,divergent__,w.1,w.2,"
                                "w.3,w.4,w.5,w.6,w.7,w.8\n"));
    free(csv);
    unlink(out);
    /* Several data files and --data-set; --model works for files too. */
    char *nm = ex("bnn/bnn.drift"), *nd = ex("bnn/iris.csv");
    expect((const char *[]){"sample", "--model", nm, "--data", nd,
                            "--data-set", "H=4", "--data-set", "K=3",
                            "--sampler", "sgld", "--iter", "20", "--seed", "1",
                            "--chains", "1", "--out", out, "--quiet", NULL},
           0, "err", NULL);
    unlink(out);
    expect((const char *[]){"sample", m, "--data", d, "--sampler", "sgld",
                            "--model-set", "s=1", NULL},
           2, "err", "model options are for C model plugins");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--data-set", "K=1", NULL},
           2, "err", "data values are for .drift models");
    expect((const char *[]){"sample", "nosuch.drift", "--sampler", "sgld",
                            NULL},
           2, "err", "nosuch.drift: cannot open model file");
    free(m), free(d), free(nm), free(nd);
}

/* A step that overflows the density of a .drift model: the message says
 * where (chain, iteration, largest parameter) that the density is not
 * finite at this point, with the model's detail; it does not read as bad
 * data.  mala at an absurd step rejects instead. */
static void test_nonfinite_message(void **state)
{
    (void)state;
    char *m = ex("normal_gamma/normal_gamma.drift"),
         *d = ex("normal_gamma/normal_gamma.csv"),
         *j = ex("normal_gamma/normal_gamma.json");
    char out[] = "/tmp/drift-lcli-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_cli r = th_cli_run((const char *[]){"sample", m, "--data", d, "--data",
                                           j, "--sampler", "sgld", "--set",
                                           "h=1", "--iter", "1000", "--seed",
                                           "1", "--out", out, "--quiet",
                                           NULL});
    if (r.status != 1 || !strstr(r.err, "chain 1, iteration ") ||
        !strstr(r.err, "the log density is not finite at this point") ||
        !strstr(r.err, "largest parameter: ") ||
        !strstr(r.err, "normal_gamma.drift:15:9: normal: sigma is inf"))
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    th_cli_free(&r);
    expect((const char *[]){"sample", m, "--data", d, "--data", j,
                            "--sampler", "mala", "--set", "h=1e200",
                            "--iter", "100", "--seed", "1", "--out", out,
                            "--quiet", NULL},
           0, "err", NULL);
    unlink(out);
    free(m), free(d), free(j);
}

/* Derived and generated quantities: Stan's names after the parameters,
 * derived values on every row of the draws file; with --generated-every
 * K the generated ones on every K-th draw of each phase, saved warmup
 * included, in a file of their own beside the draws file, with those
 * draws whole: no NaN in either (readers refuse or warn about them). */
static size_t count_rows(const char *csv, const char *want_columns,
                         size_t *warm)
{
    const char *hdr = strstr(csv, "\nlp__,");
    assert_non_null(hdr);
    hdr++;
    const char *eol = strchr(hdr, '\n');
    if (strncmp(eol - strlen(want_columns), want_columns,
                strlen(want_columns)))
        fail_msg("columns %.*s, expected ...%s", (int)(eol - hdr), hdr,
                 want_columns);
    size_t rows = 0;
    *warm = 0;
    for (const char *p = eol + 1; *p; p = strchr(p, '\n') + 1) {
        if (!strncmp(p, "# Adaptation terminated\n", 24))
            *warm = rows;
        if (*p != '#') {
            const char *end = strchr(p, '\n');
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(end - p), p);
            if (strstr(line, "nan"))
                fail_msg("a NaN in a draw row: %s", line);
            rows++;
        }
        if (!strchr(p, '\n')[1])
            break;
    }
    return rows;
}

static void test_generated_every(void **state)
{
    (void)state;
    char *d = th_write_text("x,y\n0.5,1.2\n-1,0.1\n2,3.3\n", ".csv");
    char *mod = th_write_text(
        "rows { x : real  y : real }\n"
        "param { a : real  b : real }\n"
        "derived { c = a + b }\n"
        "prior { a ~ normal(0, 5)  b ~ normal(0, 5) }\n"
        "datum { y ~ normal(a + b * x, 1) }\n"
        "generated { log_lik = normal_lpdf(y | a + b * x, 1)\n"
        "            y_rep = normal_rng(a + b * x, 1) }\n",
        ".drift");
    char out[] = "/tmp/drift-lcli-XXXXXX.csv";
    int fd = mkstemps(out, 4);
    close(fd);
    const char *gen_cols = ",log_lik.1,log_lik.2,log_lik.3,y_rep.1,y_rep.2,"
                           "y_rep.3";
    /* Every draw, saved warmup too: generated quantities on each row. */
    expect((const char *[]){"sample", mod, "--data", d, "--sampler", "mala",
                            "--iter", "30", "--warmup", "10", "--seed", "3",
                            "--chains", "1", "--save-warmup", "--out", out,
                            "--quiet", NULL},
           0, "err", NULL);
    char *csv = th_slurp(out);
    size_t warm;
    char cols[256];
    snprintf(cols, sizeof cols, ",a,b,c%s", gen_cols);
    assert_int_equal(count_rows(csv, cols, &warm), 40);
    assert_int_equal(warm, 10);
    free(csv);
    /* Every 3rd: the draws file without them, 30 + 10 rows; beside it
     * rows 1, 4, 7, ... of each phase with them (10 + 4). */
    expect((const char *[]){"sample", mod, "--data", d, "--sampler", "mala",
                            "--iter", "30", "--warmup", "10", "--seed", "3",
                            "--chains", "1", "--generated-every", "3",
                            "--save-warmup", "--out", out, "--quiet", NULL},
           0, "err", NULL);
    csv = th_slurp(out);
    assert_int_equal(count_rows(csv, ",a,b,c", &warm), 40);
    assert_int_equal(warm, 10);
    assert_non_null(strstr(csv, "_generated.csv with those draws"));
    free(csv);
    char gpath[64];
    snprintf(gpath, sizeof gpath, "%.*s_generated.csv",
             (int)(strlen(out) - 4), out);
    csv = th_slurp(gpath);
    assert_non_null(csv);
    assert_int_equal(count_rows(csv, cols, &warm), 14);
    assert_int_equal(warm, 4);
    /* The counts readers split rows by: thin 3, num_warmup 12 (ArviZ
     * takes 12 / 3 rows as warmup, the others ceil(12 / 3)). */
    assert_non_null(strstr(csv, "#     thin = 3\n"));
    assert_non_null(strstr(csv, "#     num_warmup = 12\n"));
    free(csv);
    unlink(gpath);
    unlink(out);
    expect((const char *[]){"sample", mod, "--data", d, "--sampler", "mala",
                            "--generated-every", "0", NULL},
           2, "err", "--generated-every 0: expected an integer in [1,");
    unlink(mod);
    unlink(d);
    free(mod);
    free(d);
}

static void test_errors_exit_2(void **state)
{
    (void)state;
    char *bad = th_write_text("param { w : real }\n"
                              "prior { w ~ normal(0, sigam)\n"
                              "        w ~ nromal(0, 1) }\n",
                              ".drift");
    th_cli r = th_cli_run((const char *[]){"sample", bad, "--sampler", "sgld", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, ":2:23: error: unknown name 'sigam'\n"
                                  "    2 | prior { w ~ normal(0, sigam)\n"
                                  "      |                       ^~~~~\n"));
    assert_non_null(strstr(r.err, ":3:13: error: unknown distribution "
                                  "'nromal' (did you mean 'normal'?)\n"));
    assert_non_null(strstr(r.err, "2 errors, reported above"));
    th_cli_free(&r);
    /* The same through drift check, and a data error with its caret. */
    expect((const char *[]){"check", bad, NULL}, 2, "err",
           "unknown name 'sigam'");
    char *m = ex("logistic/logistic.drift");
    char *data = th_write_text("y,x.1\n1,0.5\n3,1\n", ".csv");
    expect((const char *[]){"check", m, "--data", data, NULL}, 2, "err",
           ":3:1: error: the outcome of bernoulli_logit must be 0 or 1, "
           "found 3 (column 'y', row 2)\n"
           "    3 | 3,1\n"
           "      | ^\n");
    unlink(bad);
    unlink(data);
    free(bad), free(data), free(m);
}

/* The transformed block is not written: the draws file's columns are
 * the parameters and the sampler's, and drift check evaluates as many
 * nodes per call as with the values given as data. */
static void test_transformed_not_written(void **state)
{
    (void)state;
    char *mod = th_write_text(
        "data  { xs : vector[4] }\n"
        "rows  { y : real }\n"
        "param { a : real  s : real<lower=0> }\n"
        "transformed { m = mean(xs)  sd2 = 2 * sd(xs)\n"
        "              c = (xs - m) / sd2  q = sum(exp(c)) }\n"
        "prior { a ~ normal(m, sd2)  s ~ gamma(2, 2) }\n"
        "datum { y ~ normal(a + q, s) }\n",
        ".drift");
    char *twin = th_write_text(
        "data  { xs : vector[4]  m : real  sd2 : real  q : real }\n"
        "rows  { y : real }\n"
        "param { a : real  s : real<lower=0> }\n"
        "prior { a ~ normal(m, sd2)  s ~ gamma(2, 2) }\n"
        "datum { y ~ normal(a + q, s) }\n",
        ".drift");
    char *rows = th_write_text("y\n0.3\n-1\n2.2\n", ".csv");
    char *vals = th_write_text("{\"xs\": [1, 2, 4, 9], \"m\": 4, \"sd2\": 7, "
                               "\"q\": 3}",
                               ".json");
    char out[] = "/tmp/drift-lcli-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    expect((const char *[]){"sample", mod, "--data", rows, "--data", vals,
                            "--iter", "20", "--seed", "2", "--chains", "1",
                            "--out", out, "--quiet", NULL},
           0, "err", NULL);
    char *csv = th_slurp(out);
    assert_non_null(strstr(csv, "\nlp__,grads__,accept_stat__,stepsize__,"
                                "treedepth__,n_leapfrog__,divergent__,"
                                "energy__,a,s\n"));
    free(csv);
    th_cli a = th_cli_run((const char *[]){"check", mod, "--data", rows,
                                           "--data", vals, NULL});
    th_cli b = th_cli_run((const char *[]){"check", twin, "--data", rows,
                                           "--data", vals, NULL});
    assert_int_equal(a.status, 0);
    assert_int_equal(b.status, 0);
    const char *ga = strstr(a.out, "(prior "), *gb = strstr(b.out, "(prior ");
    assert_non_null(ga);
    assert_non_null(gb);
    assert_memory_equal(ga, gb, strcspn(gb, "\n"));
    assert_null(strstr(a.out, "derived:"));
    assert_non_null(strstr(a.out, "transformed (not written): m, sd2, c, q\n"));
    th_cli_free(&a);
    th_cli_free(&b);
    unlink(out);
    unlink(mod), unlink(twin), unlink(rows), unlink(vals);
    free(mod), free(twin), free(rows), free(vals);
}

/* A recursive function is refused, exit status 2, with its place. */
static void test_recursion_refused(void **state)
{
    (void)state;
    char *mod = th_write_text("functions {\n"
                              "  f(n : real) : real = n * f(n - 1)\n"
                              "}\n"
                              "param { a : real }\n"
                              "prior { a ~ normal(f(3), 1) }\n",
                              ".drift");
    expect((const char *[]){"check", mod, NULL}, 2, "err",
           ":2:28: error: 'f' calls itself: recursive functions are not "
           "supported (drift inlines every call)\n"
           "    2 |   f(n : real) : real = n * f(n - 1)\n"
           "      |                            ^~~~~~~~\n");
    unlink(mod);
    free(mod);
}

/* An N declared in the data is the data's, shadowing the number of
 * rows, which N__ still names; a JSON "N" is then that datum and not
 * checked against the rows.  Without such a declaration a JSON "N" must
 * equal the number of rows, as before. */
static void test_own_n(void **state)
{
    (void)state;
    char *m = th_write_text("data  { N : real }\n"
                            "rows  { y : real }\n"
                            "param { mu : real }\n"
                            "prior { mu ~ normal(N, 1) }\n"
                            "datum { y ~ normal(mu, 1) }\n"
                            "generated { n = N__  m = N }\n",
                            ".drift");
    char *rows = th_write_text("y\n1\n2\n3\n", ".csv");
    char *j = th_write_text("{\"N\": 5.5}", ".json");
    char out[] = "/tmp/drift-lcli-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_cli r = th_cli_run((const char *[]){"sample", m, "--data", rows,
                                           "--data", j, "--chains", "1",
                                           "--warmup", "50", "--iter", "5",
                                           "--seed", "1", "--out", out,
                                           "--quiet", NULL});
    if (r.status != 0)
        fail_msg("exit %d\nstderr:\n%s", r.status, r.err);
    th_cli_free(&r);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[1024];
    int draws = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "lp__", 4))
            continue;
        /* the last two columns: n (the rows) and m (the datum N) */
        char *c2 = strrchr(line, ',');
        assert_non_null(c2);
        *c2 = '\0';
        char *c1 = strrchr(line, ',');
        assert_non_null(c1);
        assert_true(strtod(c1 + 1, NULL) == 3.0);
        assert_true(strtod(c2 + 1, NULL) == 5.5);
        draws++;
    }
    fclose(f);
    assert_int_equal(draws, 5);
    /* N as a parameter stays refused; N__ cannot be declared */
    char *p = th_write_text("param { N : real }\nprior { N ~ normal(0, 1) }\n",
                            ".drift");
    expect((const char *[]){"check", p, NULL}, 2, "err",
           ":1:9: error: 'N' is the number of rows and cannot be declared "
           "here");
    char *p2 = th_write_text("data { N__ : int }\nparam { a : real }\n"
                             "prior { a ~ normal(0, 1) }\n", ".drift");
    expect((const char *[]){"check", p2, NULL}, 2, "err",
           ":1:8: error: 'N__' is the number of rows and cannot be declared");
    /* without its own N, a JSON N must be the number of rows */
    char *m2 = th_write_text("rows  { y : real }\nparam { mu : real }\n"
                             "datum { y ~ normal(mu, 1) }\n", ".drift");
    char *j2 = th_write_text("{\"N\": 4}", ".json");
    expect((const char *[]){"check", m2, "--data", rows, "--data", j2, NULL},
           2, "err", "'N' is 4, but");
    unlink(out);
    unlink(m), unlink(rows), unlink(j), unlink(p), unlink(p2), unlink(m2),
        unlink(j2);
    free(m), free(rows), free(j), free(p), free(p2), free(m2), free(j2);
}

static void test_check(void **state)
{
    (void)state;
    char *m = ex("normal_gamma/normal_gamma.drift");
    char *d1 = ex("normal_gamma/normal_gamma.csv");
    char *d2 = ex("normal_gamma/normal_gamma.json");
    expect((const char *[]){"check", m, NULL}, 0, "out",
           "  tau          real<lower=0>   (sampled as log(x - lower))\n");
    expect((const char *[]){"check", m, "--data", d1, "--data", d2, NULL}, 0,
           "out", "rows: N = 100 from ");
    expect((const char *[]){"check", m, "--data", d1, NULL}, 2, "err",
           "'mu0 : real' is declared in the data block but no data source "
           "gives it");
    char *lm = ex("logistic/logistic.drift"), *ld = ex("logistic/pima-train.csv");
    expect((const char *[]){"check", lm, "--data", ld, NULL}, 0, "out",
           "generalised linear form: yes");
    expect((const char *[]){"check", "--help", NULL}, 0, "out",
           "usage: drift check");
    expect((const char *[]){"check", "model.txt", NULL}, 2, "err",
           "must end in .drift, or .stan for a Stan program");
    free(m), free(d1), free(d2), free(lm), free(ld);
}

static void test_diagnose(void **state)
{
    (void)state;
    char *m = ex("logistic/logistic.drift"), *d = ex("logistic/pima-train.csv");
    expect((const char *[]){"diagnose", m, "--data", d, "--seed", "5", NULL},
           0, "out", "all errors within 1e-06");
    expect((const char *[]){"diagnose", "--model", "logistic", "--data", d,
                            "--seed", "5", NULL},
           0, "out", "per-row gradients of the log likelihood terms (100 "
                     "of 200 rows;");
    /* A coarse step against a strict tolerance must fail, and say so. */
    expect((const char *[]){"diagnose", m, "--data", d, "--seed", "5",
                            "--epsilon", "0.5", "--error", "1e-8", NULL},
           1, "out", "exceeds the tolerance");
    char *dw = ex("double_well/double_well.drift");
    expect((const char *[]){"diagnose", dw, "--seed", "2", NULL}, 0, "out",
           "  t  ");
    expect((const char *[]){"diagnose", m, "--epsilon", "0", NULL}, 2, "err",
           "--epsilon 0: expected a number in (0, 1]");
    free(m), free(d), free(dw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_nonfinite_message),
        cmocka_unit_test(test_generated_every),
        cmocka_unit_test(test_errors_exit_2),
        cmocka_unit_test(test_own_n),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_transformed_not_written),
        cmocka_unit_test(test_recursion_refused),
        cmocka_unit_test(test_diagnose),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
