/* test_stan.c: the Stan front end.  Each Stan program in tests/stan has
 * a hand-written .drift twin; both are opened over the same CmdStan JSON
 * data and must give the same log density and gradient at random points
 * (to 1e-10), and the same per-row terms where the Stan program's rows
 * are found.  A conjugate normal-mean model, sampled from its .stan file
 * by the drift command, is checked against its closed-form posterior, and
 * constructs the front end refuses are checked to be refused with a
 * located message.  drift translate writes every program here (twin or
 * not) as .drift text that gives the same densities again, and the printer's
 * parentheses and numbers read back to the same tree. */
#include "config.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"
#include "engine/run/rng.h"
#include "parser/parse.h"
#include "parser/print.h"
#include "harness.h"
#include "langtest.h"

static char *src_path(const char *rel)
{
    const char *src = getenv("srcdir");
    size_t n = strlen(src ? src : ".") + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", src ? src : ".", rel);
    return p;
}

typedef struct opened {
    drift_model m;
    int rc;
    char *report;
} opened;

static void open_model(opened *o, const char *model, const char *data)
{
    memset(o, 0, sizeof *o);
    const char *files[2] = {data, NULL};
    size_t len = 0;
    FILE *f = open_memstream(&o->report, &len);
    assert_non_null(f);
    drift_lang_spec spec = {.path = model, .data = files, .diag = f};
    drift_err e = {{0}};
    o->rc = drift_lang_open(&spec, &o->m, &e);
    fclose(f);
    if (o->rc)
        fail_msg("%s did not open: %s\n%s", model, e.msg, o->report);
}

static void close_model(opened *o)
{
    if (o->rc == 0 && o->m.free)
        o->m.free(o->m.self);
    free(o->report);
}

/* log density and gradient over every row. */
static double density(const drift_model *m, void *ws, const double *theta,
                      double *grad, double *rows)
{
    drift_err e = {{0}};
    double lp, ll = 0;
    double *g = calloc(m->dim, sizeof *g);
    assert_int_equal(m->log_prior(m->self, ws, theta, &lp, grad, &e), 0);
    if (m->n_rows) {
        drift_rows all = {NULL, 0, m->n_rows};
        assert_int_equal(m->log_lik(m->self, ws, theta, &all, rows, &ll, g,
                                    NULL, &e),
                         0);
        for (size_t j = 0; j < m->dim; j++)
            grad[j] += g[j];
    }
    free(g);
    return lp + ll;
}

/* The programs being compared, for messages. */
static const char *compared_stan, *compared;

static void close_rel(double a, double b, const char *what, size_t j)
{
    double err = fabs(a - b) / fmax(1.0, fabs(b));
    if (!(err < 1e-10))
        fail_msg("%s vs %s: %s %zu: %.15g (Stan) vs %.15g (drift): relative "
                 "error %.3g",
                 compared_stan, compared, what, j, a, b, err);
}

/* The Stan program stan and the drift program drift agree over data;
 * rows: whether the Stan program must have per-row terms. */
static void compare_files(const char *stan, const char *drift,
                          const char *data, int rows)
{
    opened a, b;
    compared_stan = stan;
    compared = drift;
    open_model(&a, stan, data);
    open_model(&b, drift, data);
    assert_int_equal(a.m.dim, b.m.dim);
    assert_int_equal(a.m.n_rows, b.m.n_rows);
    if (rows)
        assert_true(a.m.n_rows > 1);
    size_t d = a.m.dim, cap = a.m.n_rows ? a.m.n_rows : 1;
    void *wa = a.m.workspace_new(a.m.self, cap);
    void *wb = b.m.workspace_new(b.m.self, cap);
    double *th = calloc(d, sizeof *th), *ga = calloc(d, sizeof *ga);
    double *gb = calloc(d, sizeof *gb);
    double *ra = calloc(cap, sizeof *ra), *rb = calloc(cap, sizeof *rb);
    assert_true(wa && wb && th && ga && gb && ra && rb);
    drift_rng r;
    drift_rng_seed(&r, 11, 1);
    for (int t = 0; t < 5; t++) {
        for (size_t j = 0; j < d; j++)
            th[j] = drift_rng_normal(&r);
        double la = density(&a.m, wa, th, ga, ra);
        double lb = density(&b.m, wb, th, gb, rb);
        close_rel(la, lb, "log density, point", (size_t)t);
        for (size_t j = 0; j < d; j++)
            close_rel(ga[j], gb[j], "gradient coordinate", j);
        for (size_t i = 0; i < a.m.n_rows; i++)
            close_rel(ra[i], rb[i], "row term", i);
    }
    a.m.workspace_free(a.m.self, wa);
    b.m.workspace_free(b.m.self, wb);
    /* The lowered program's own derivatives are right too. */
    lt_check_derivatives(&a.m, 5, 3, 1.0);
    free(th);
    free(ga);
    free(gb);
    free(ra);
    free(rb);
    close_model(&a);
    close_model(&b);
}

/* The Stan program and its .drift twin agree; rows: whether the Stan
 * program must have per-row terms. */
static void compare(const char *name, int rows)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tests/stan/%s.stan", name);
    char *stan = src_path(rel);
    snprintf(rel, sizeof rel, "tests/stan/%s.drift", name);
    char *drift = src_path(rel);
    snprintf(rel, sizeof rel, "tests/stan/%s.json", name);
    char *data = src_path(rel);
    compare_files(stan, drift, data, rows);
    free(stan);
    free(drift);
    free(data);
}

static void test_linreg(void **state)
{
    (void)state;
    compare("linreg", 1);
    compare("linreg_local", 1);
    compare("arrays", 1);
}

/* log_sum_exp and log_mix over a whole vector of the data: one value
 * from every entry, so the program is lowered whole (the twin's written
 * out forms), not read as one term per entry. */
static void test_reductions_couple(void **state)
{
    (void)state;
    compare("reduce", 0);
}

/* A while loop the data decide, unrolled pass by pass (the program
 * lowered whole), against the vectorised twin. */
static void test_while(void **state)
{
    (void)state;
    compare("while", 0);
}

static void test_logistic(void **state)
{
    (void)state;
    compare("logistic", 1);
}

static void test_poisson(void **state)
{
    (void)state;
    compare("poisson", 1);
}

/* Predictors centred and scaled over all the rows in transformed data
 * (mean(x), sd(x)) and a prior scaled by sd(y): the rows are kept, the
 * reductions computed once (drift's transformed block), against the
 * twin given numpy's values. */
static void test_centred(void **state)
{
    (void)state;
    compare("centre", 1);
}

/* if/else per row, a user density and a user function, inlined. */
static void test_zip(void **state)
{
    (void)state;
    compare("zip", 1);
}

/* bernoulli_logit_glm and normal_id_glm, and a design matrix built as
 * [a', b']' in transformed data. */
static void test_glm(void **state)
{
    (void)state;
    compare("glm", 1);
    compare("quad", 1);
}

/* Truncation whose normalising term depends on parameters, per row: a
 * normal on [0, 10] and a zero-truncated Poisson, against the closed
 * forms log(Phi((10 - mu) / sigma) - Phi(-mu / sigma)) and
 * log(1 - exp(-lambda)) written out in the twin. */
static void test_truncation(void **state)
{
    (void)state;
    compare("trunc", 1);
}

/* Varying intercepts: a[g[n]] with g an int of the rows. */
static void test_hier(void **state)
{
    (void)state;
    compare("hier", 1);
    /* a network: append_col of the design, a row stacked on a matrix */
    compare("nnet", 1);
}

static void test_eight_schools(void **state)
{
    (void)state;
    compare("eight_schools", 0);
    compare("eight_schools_loop", 0);
    /* a transpose times a vector: a dot product, over the whole data */
    compare("dotself", 0);
    /* loops from 2 with lags: segments of the vectors */
    compare("ar1", 0);
    /* the whole of a container inside a loop is the whole container */
    compare("wholeuse", 0);
    compare("lpdfinloop", 0);
}

/* Loops unrolled with the data's sizes: AR(K) (a loop over the lags
 * nested in one over time, the mean accumulating), ARMA(1, 1) (a
 * recursion element by element from an element set before the loop),
 * GARCH(1, 1). */
static void test_unrolled(void **state)
{
    (void)state;
    compare("ark", 0);
    compare("arma", 0);
    /* GARCH(1, 1): the recursion's elements named in the prior, and a
     * bound that depends on a parameter */
    compare("garch", 0);
    /* an HMM's forward algorithm: loops three deep over a table */
    compare("hmm", 0);
}

/* An N of the data's own (seeds' trials), shadowing drift's N. */
static void test_own_n(void **state)
{
    (void)state;
    compare("own_n", 1);
}

/* Slices: segments, a matrix's row and column. */
static void test_slices(void **state)
{
    (void)state;
    compare("slices", 0);
    /* a matrix built column by column in transformed data (brms'
     * centred design) */
    compare("centred", 0);
}

/* Mean of a named column of a Stan CSV file's draws. */
static double column_mean(const char *path, const char *col, size_t *n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    int k = -1;
    double s = 0;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (k < 0) {
            int c = 0;
            for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), c++)
                if (!strcmp(t, col))
                    k = c;
            assert_true(k >= 0);
            continue;
        }
        int c = 0;
        for (char *t = strtok(line, ",\n"); t; t = strtok(NULL, ",\n"), c++)
            if (c == k) {
                s += atof(t);
                (*n)++;
            }
    }
    fclose(f);
    return s / (double)*n;
}

/* y_i ~ normal(mu, 1), mu ~ normal(0, 10): mu | y is normal with
 * precision N + 1/100 and mean sum(y) / (N + 1/100). */
static void test_conjugate_closed_form(void **state)
{
    (void)state;
    const char *model = "data { int<lower=0> N; vector[N] y; }\n"
                        "parameters { real mu; }\n"
                        "model {\n"
                        "  mu ~ normal(0, 10);\n"
                        "  for (n in 1:N) y[n] ~ normal(mu, 1);\n"
                        "}\n";
    char json[4096];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"N\": 50, \"y\": [");
    drift_rng r;
    drift_rng_seed(&r, 3, 0);
    double sum = 0;
    for (int i = 0; i < 50; i++) {
        double y = 1.5 + drift_rng_normal(&r);
        sum += y;
        used += (size_t)snprintf(json + used, sizeof json - used, "%s%.6f",
                                 i ? ", " : "", y);
    }
    snprintf(json + used, sizeof json - used, "]}\n");
    /* The sum of the values as written. */
    sum = 0;
    for (const char *p = strchr(json, '[') + 1; *p && *p != ']';) {
        char *end;
        sum += strtod(p, &end);
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    char *m = th_write_text(model, ".stan");
    char *d = th_write_text(json, ".json");
    char out[] = "/tmp/drift-stan-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_cli c = th_cli_run((const char *[]){"sample", m, "--data", d, "--seed",
                                           "1", "--out", out, "--chains", "1",
                                           "--quiet", NULL});
    if (c.status)
        fail_msg("drift sample failed (%d):\n%s", c.status, c.err);
    th_cli_free(&c);
    size_t n;
    double mean = column_mean(out, "mu", &n);
    double prec = 50 + 0.01, want = sum / prec, sd = 1 / sqrt(prec);
    assert_int_equal(n, 1000);
    /* NUTS on a Gaussian: an effective sample size of several hundred at
     * least; 4 standard errors of 1000 independent draws, doubled. */
    double tol = 8 * sd / sqrt(1000.0);
    if (!(fabs(mean - want) < tol))
        fail_msg("posterior mean %.5f, closed form %.5f (tolerance %.5f)",
                 mean, want, tol);
    /* A minibatch sampler accepts the program: it has per-row terms. */
    c = th_cli_run((const char *[]){"sample", m, "--data", d, "--sampler",
                                    "sgld", "--seed", "1", "--out", out,
                                    "--chains", "1", "--quiet", NULL});
    if (c.status)
        fail_msg("drift sample --sampler sgld failed (%d):\n%s", c.status,
                 c.err);
    th_cli_free(&c);
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

/* A program the front end refuses: exit status 2 and a located error. */
static void refused(const char *text, const char *needle)
{
    char *m = th_write_text(text, ".stan");
    th_cli c = th_cli_run((const char *[]){"check", m, NULL});
    if (c.status != 2 || !strstr(c.err, needle) || !strstr(c.err, " | "))
        fail_msg("exit %d (want 2)\nstderr:\n%s\n(wanted '%s')", c.status,
                 c.err, needle);
    th_cli_free(&c);
    unlink(m);
    free(m);
}

/* A conditional reject in the model block: the log density is -inf
 * where the condition holds (the draw is rejected, as Stan does), the
 * density itself elsewhere. */
static void test_reject(void **state)
{
    (void)state;
    char *m = th_write_text("parameters { real theta; }\n"
                            "model {\n  theta ~ normal(1, 1);\n"
                            "  if (theta < 0) reject(\"theta < 0: \", theta);"
                            "\n}\n",
                            ".stan");
    opened o;
    open_model(&o, m, NULL);
    void *ws = o.m.workspace_new(o.m.self, 1);
    drift_err e = {{0}};
    double lp, g[1], pos[1] = {0.5}, neg[1] = {-0.5};
    assert_int_equal(o.m.log_prior(o.m.self, ws, pos, &lp, g, &e), 0);
    assert_true(fabs(lp - (-0.125 - 0.5 * log(2 * M_PI))) < 1e-14);
    int rc = o.m.log_prior(o.m.self, ws, neg, &lp, g, &e);
    assert_true(rc != 0 && strstr(e.msg, "rejected: theta < 0: "));
    o.m.workspace_free(o.m.self, ws);
    close_model(&o);
    unlink(m);
    free(m);
}

/* print at the top of transformed parameters and generated quantities
 * is evaluated: one line per kept draw, with the draw's values (the
 * draws file holds the same mu). */
static void test_print(void **state)
{
    (void)state;
    char *m = th_write_text(
        "data { int N; vector[N] y; }\nparameters { real mu; }\n"
        "model { y ~ normal(mu, 1); }\n"
        "generated quantities { real g = mu + 1; print(\"mu=\", mu); }\n",
        ".stan");
    char *d = th_write_text("{\"N\": 3, \"y\": [0.1, 0.5, -0.2]}", ".json");
    char out[512];
    snprintf(out, sizeof out, "%s.csv", m);
    th_cli c = th_cli_run((const char *[]){"sample", m, "--data", d,
                                           "--chains", "1", "--iter", "20",
                                           "--warmup", "20", "--seed", "4",
                                           "--out", out, NULL});
    if (c.status != 0)
        fail_msg("exit %d\n%s", c.status, c.err);
    size_t lines = 0;
    const char *q = c.err;
    double first = NAN;
    for (; (q = strstr(q, "mu=")); q++)
        if (lines++ == 0)
            first = strtod(q + 3, NULL);
    assert_int_equal(lines, 20);
    char *csv = th_slurp(out);
    assert_non_null(csv);
    /* the first draw's row: lp__ and the sampler's columns, then mu */
    char *hdr = strstr(csv, "lp__");
    assert_non_null(hdr);
    char *line = strchr(hdr, '\n') + 1;
    while (*line == '#')
        line = strchr(line, '\n') + 1;
    size_t col = 0;
    for (char *f = hdr; f && strncmp(f, "mu,", 3); f = strchr(f, ',') + 1)
        col++;
    char *f = line;
    for (size_t k = 0; k < col; k++)
        f = strchr(f, ',') + 1;
    assert_true(fabs(strtod(f, NULL) - first) < 1e-6 * fmax(1, fabs(first)));
    free(csv);
    th_cli_free(&c);
    unlink(out);
    unlink(d);
    unlink(m);
    free(d);
    free(m);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("data { int N; vector[N] y; }\nparameters { real mu; }\n"
            "model {\n  int k = 0;\n  while (k < mu) { k = k + 1; }\n"
            "  y ~ normal(mu, 1);\n}\n",
            ":5:3: error: a while loop whose condition the data do not "
            "decide");
    refused("functions {\n  real f(real x) { return f(x - 1); }\n}\n"
            "parameters { real mu; }\nmodel { mu ~ normal(f(1), 1); }\n",
            "error: 'f' calls itself: recursive functions are not supported");
    refused("data { int N; array[N] vector[2] x; }\nparameters { real mu; }\n"
            "model { x[:, 1] ~ normal(mu, 1); }\n",
            ":3:9: error: slices (a[i:j], a[:]) are supported of vectors, "
            "arrays of reals, and of one row or column of a matrix");
    refused("data { int N; vector[N] y; }\nparameters { real mu; }\n"
            "model { y ~ normal(mu, 1) T[0, ]; }\n",
            ":3:27: error: truncation T[,] whose normalising term depends "
            "on parameters is supported for one element");
    refused("parameters { real mu; }\nmodel { mu ~ normal(0, 1) }\n",
            ":2:27: error: expected ';'");
    refused("data { int N; vector[N] y; }\nparameters { real mu; }\n"
            "model { for (n in 1:N) for (k in 1:N) y[n] ~ normal(mu, k); }\n",
            ":3:24: error: a nested loop whose bounds are not known");
    refused("data { int N; vector[N] y; }\nparameters { real a; }\n"
            "model {\n  real acc = 0;\n  for (n in 1:N) {\n"
            "    acc += y[n];\n    target += -square(acc - a);\n  }\n}\n",
            ":6:5: error: 'acc' accumulates across the loop's iterations");
    refused("parameters { real s; }\nmodel { s ~ normal(0, 1) T[0, ]; }\n",
            ":2:26: error: the truncation's bounds must be those declared "
            "for 's'");
    refused("#include \"other.stan\"\nparameters { real mu; }\n"
            "model { mu ~ normal(0, 1); }\n",
            ":1:1: error: #include is not supported");
    refused("data { int N; N = 3; }\nparameters { real mu; }\n"
            "model { mu ~ normal(0, 1); }\n",
            ":1:15: error: the data block holds declarations only");
    refused("parameters { real mu; }\n"
            "model { array[2] int k = {1, 2}; mu ~ normal(k[1], 1); }\n",
            ":2:26: error: an array expression {...} of ints is not "
            "supported");
    /* unrolled, c doubles in each iteration: refused, not built */
    refused("parameters { real a; }\nmodel {\n  real c = a;\n"
            "  for (i in 1:30)\n    if (a > i) c = c + 1;\n"
            "  target += -square(c);\n}\n",
            ":5:16: error: the value of 'c' grows past 250000 terms");
    refused("parameters { complex z; }\nmodel { }\n",
            ":1:14: error: the Stan type 'complex' is not supported");
}

/* A model whose terms couple the rows is lowered whole, with a warning
 * naming the construct. */
static void test_coupled_rows_warn(void **state)
{
    (void)state;
    char *m = th_write_text("data { int N; vector[N] y; }\n"
                            "parameters { real mu; }\n"
                            "model { mu ~ normal(prod(y), 1); }\n",
                            ".stan");
    th_cli c = th_cli_run((const char *[]){"check", m, NULL});
    if (c.status != 0 || !strstr(c.err, ":3:21: warning: no rows") ||
        !strstr(c.err, "'prod' over the rows couples them"))
        fail_msg("exit %d\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
}

/* A truncation with constant arguments: its normaliser is a constant,
 * left out with a warning; the density is the untruncated one's. */
static void test_truncation_constant(void **state)
{
    (void)state;
    char *m = th_write_text("parameters { real<lower=0> s; }\n"
                            "model { s ~ normal(0, 1) T[0, ]; }\n",
                            ".stan");
    th_cli c = th_cli_run((const char *[]){"check", m, NULL});
    if (c.status != 0 ||
        !strstr(c.err, ":2:26: warning: the truncation's normalising term "
                       "is a constant here"))
        fail_msg("exit %d\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
}

/* drift check reports the decomposition it found. */
static void test_check_reports_rows(void **state)
{
    (void)state;
    char *m = src_path("tests/stan/logistic.stan");
    char *d = src_path("tests/stan/logistic.json");
    th_cli c = th_cli_run((const char *[]){"check", m, "--data", d, NULL});
    if (c.status != 0 ||
        !strstr(c.out, "Stan program: the rows are the N entries of X, y; 1 "
                       "model term per row, 2 in the prior\n") ||
        !strstr(c.out, "  X            vector[K=3]   (one per row)\n"))
        fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", c.status, c.out, c.err);
    th_cli_free(&c);
    free(m);
    free(d);
}

/* A generated quantity drift cannot write is left out with a warning
 * naming it; the model still runs.  A pointwise log_lik whose loop is
 * not one vectorised value is written element by element (the data give
 * its size). */
static void test_generated_skipped_warn(void **state)
{
    (void)state;
    char *m = th_write_text(
        "data { int<lower=0> J; array[J] real y; }\n"
        "parameters { vector[J] theta; }\n"
        "model { theta ~ std_normal(); y ~ normal(theta, 1); }\n"
        "generated quantities {\n  vector[J] log_lik;\n  real t = theta[1];\n"
        "  for (j in 1:J) log_lik[j] = normal_lpdf(y[j] | theta[j], 1);\n"
        "  real lt = {1, 2}[1];\n}\n",
        ".stan");
    char *d = th_write_text("{\"J\": 3, \"y\": [1, 2, 3]}", ".json");
    th_cli c = th_cli_run((const char *[]){"check", m, "--data", d, NULL});
    unlink(d);
    free(d);
    if (c.status != 0 ||
        !strstr(c.err, ":8:13: warning: generated quantity 'lt' is not "
                       "written: an array expression {...} of ints") ||
        !strstr(c.out, "generated: log_lik, t\n"))
        fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", c.status, c.out, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
}

/* A program lowered whole (a parameter with one value per row, as in
 * eight schools) has no rows: a minibatch sampler is refused, naming
 * the statement that couples them and what to use; nuts runs it. */
static void test_whole_refuses_minibatch(void **state)
{
    (void)state;
    char *m = src_path("tests/stan/eight_schools.stan");
    char *d = src_path("tests/stan/eight_schools.json");
    char out[] = "/tmp/drift-stan-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    const char *samplers[] = {"sgld", "sghmc", "sbps"};
    for (size_t k = 0; k < 3; k++) {
        th_cli c = th_cli_run((const char *[]){"sample", m, "--data", d,
                                               "--sampler", samplers[k],
                                               "--out", out, "--quiet",
                                               NULL});
        if (c.status != 2 || !strstr(c.err, "subsamples rows, but") ||
            !strstr(c.err, "'theta_tilde' has one value per row") ||
            !strstr(c.err, "use a full-gradient sampler (nuts"))
            fail_msg("%s: exit %d\n%s", samplers[k], c.status, c.err);
        th_cli_free(&c);
        assert_int_not_equal(access(out, F_OK), 0);
    }
    th_cli c = th_cli_run((const char *[]){"sample", m, "--data", d,
                                           "--chains", "1", "--out", out,
                                           "--quiet", NULL});
    if (c.status != 0)
        fail_msg("nuts: exit %d\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(out);
    free(m);
    free(d);
}

/* drift translate writes every Stan program of tests/stan as a .drift
 * program that reads back to the same log density, gradient and per-row
 * terms over the program's data. */
static void test_translate_round_trip(void **state)
{
    (void)state;
    char *pattern = src_path("tests/stan/*.stan");
    glob_t g;
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 18);
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *stan = g.gl_pathv[k];
        size_t n = strlen(stan);
        char *data = malloc(n + 1);
        memcpy(data, stan, n - 5);
        strcpy(data + n - 5, ".json");
        char out[] = "/tmp/drift-translate-XXXXXX.drift";
        int fd = mkstemps(out, 6);
        assert_true(fd >= 0);
        close(fd);
        th_cli c = th_cli_run((const char *[]){"translate", stan, "--data",
                                               data, "--out", out, NULL});
        if (c.status)
            fail_msg("drift translate %s failed (%d):\n%s", stan, c.status,
                     c.err);
        th_cli_free(&c);
        compare_files(stan, out, data, 0);
        unlink(out);
        free(data);
    }
    globfree(&g);
    free(pattern);
}

/* Two trees are the same: kinds, operators, numbers (to the bit, and
 * their int or real type), names and arguments. */
static int same_expr(const drift_expr *a, const drift_expr *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case DRIFT_E_NUM:
        return memcmp(&a->num, &b->num, sizeof a->num) == 0 &&
               a->is_int == b->is_int;
    case DRIFT_E_NAME: return !strcmp(a->name, b->name);
    case DRIFT_E_CALL:
        if (strcmp(a->name, b->name) || a->bar != b->bar)
            return 0;
        break;
    case DRIFT_E_BINOP:
        if (a->op != b->op)
            return 0;
        break;
    default: break;
    }
    if (!same_expr(a->a, b->a) || !same_expr(a->b, b->b) ||
        a->n_args != b->n_args)
        return 0;
    for (const drift_expr *x = a->args, *y = b->args; x || y;
         x = x->next, y = y->next)
        if (!same_expr(x, y))
            return 0;
    return 1;
}

static drift_program *parse_text(const char *text, drift_source **src)
{
    drift_err e = {{0}};
    assert_int_equal(drift_source_new("t.drift", text, strlen(text), src, &e),
                     0);
    drift_diag diag;
    drift_diag_init(&diag, stderr);
    drift_program *p = drift_parse(*src, &diag);
    assert_non_null(p);
    if (diag.n_errors)
        fail_msg("does not parse:\n%s", text);
    return p;
}

/* The printer parenthesises exactly where the grammar would group
 * otherwise: a program of such expressions, printed and parsed again,
 * is the same tree, and its text is the same when printed again. */
static void test_print_precedence(void **state)
{
    (void)state;
    const char *text =
        "data { x : real<lower=-(1 + 2), upper=3 * 4> "
        "v : array[2] vector<lower=0>[3 + 1]  m : cov_matrix[3] }\n"
        "param { a : real  b : real }\n"
        "prior {\n"
        "  target += -a ^ 2 + (-a) ^ 2 - (a - b) - a - b\n"
        "  target += 2 ^ 3 ^ a + (2 ^ 3) ^ a + a / (b * a) + a / b * a\n"
        "  target += a ^ -b + -(-a) + - -b + (a .* b) ./ (a ./ b)\n"
        "  target += (a < b) == (b < a) ? 1.5e-300 : 0.1 + 1e300\n"
        "  target += (a > 0 ? a : b) + (a > 0 ? (b > 0 ? 1 : 2) : 3)\n"
        "  target += !(a > 0 && b > 0) || a > 0 && (b > 0 || a < 1)\n"
        "  target += -0.0 + 0.30000000000000004 + 1 / 3 + 1.0 / 3.0\n"
        "  target += !(a > 1) * 3 + normal_lpdf(a | -b, exp(b) ^ 2)\n"
        "  c = (a + b)[1]\n"
        "  a ~ normal(0, 1)\n"
        "  v[1][2] ~ normal(a, 1)\n"
        "}\n";
    drift_source *s1, *s2;
    drift_program *p1 = parse_text(text, &s1);
    char *out1 = NULL, *out2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *f = open_memstream(&out1, &n1);
    char why[256];
    assert_int_equal(drift_program_print(p1, f, why, sizeof why), 0);
    fclose(f);
    drift_program *p2 = parse_text(out1, &s2);
    f = open_memstream(&out2, &n2);
    assert_int_equal(drift_program_print(p2, f, why, sizeof why), 0);
    fclose(f);
    assert_string_equal(out1, out2);
    const drift_block *b1 = p1->blocks, *b2 = p2->blocks;
    for (; b1 && b2; b1 = b1->next, b2 = b2->next) {
        assert_int_equal(b1->kind, b2->kind);
        const drift_decl *d1 = b1->decls, *d2 = b2->decls;
        for (; d1 && d2; d1 = d1->next, d2 = d2->next) {
            assert_string_equal(d1->name, d2->name);
            assert_true(same_expr(d1->type->lower, d2->type->lower));
            assert_true(same_expr(d1->type->upper, d2->type->upper));
            assert_true(same_expr(d1->type->size[0], d2->type->size[0]));
            assert_int_equal(d1->type->con, d2->type->con);
            assert_int_equal(d1->type->n_arr, d2->type->n_arr);
        }
        assert_true(!d1 && !d2);
        const drift_stmt *t1 = b1->stmts, *t2 = b2->stmts;
        for (; t1 && t2; t1 = t1->next, t2 = t2->next) {
            assert_int_equal(t1->kind, t2->kind);
            if (!same_expr(t1->value, t2->value) ||
                !same_expr(t1->lhs, t2->lhs) ||
                !same_expr(t1->args, t2->args))
                fail_msg("line %d reads back as another tree:\n%s",
                         t1->loc.first_line, out1);
        }
        assert_true(!t1 && !t2);
    }
    assert_true(!b1 && !b2);
    free(out1);
    free(out2);
    drift_program_free(p1);
    drift_program_free(p2);
    drift_source_free(s1);
    drift_source_free(s2);
}

/* The CLI: a translation drift check accepts; a program the front end
 * refuses, or a file that is not a Stan program, exits 2 with a located
 * message and writes nothing. */
static void test_translate_cli(void **state)
{
    (void)state;
    char *m = src_path("tests/stan/logistic.stan");
    th_cli c = th_cli_run((const char *[]){"translate", m, NULL});
    if (c.status != 0 || !strstr(c.out, "rows {") ||
        !strstr(c.out, "datum {"))
        fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", c.status, c.out,
                 c.err);
    char *t = th_write_text(c.out, ".drift");
    th_cli_free(&c);
    char *d = src_path("tests/stan/logistic.json");
    c = th_cli_run((const char *[]){"check", t, "--data", d, NULL});
    free(d);
    if (c.status != 0 || !strstr(c.out, "beta"))
        fail_msg("drift check of the translation: exit %d\n%s", c.status,
                 c.err);
    th_cli_free(&c);
    unlink(t);
    free(t);
    free(m);

    char out[] = "/tmp/drift-translate-XXXXXX";
    int fd = mkdtemp(out) ? 0 : -1;
    assert_int_equal(fd, 0);
    char path[64];
    snprintf(path, sizeof path, "%s/m.drift", out);
    m = th_write_text("data { int N; vector[N] y; }\nparameters { real mu; "
                      "}\nmodel {\n  int k = 0;\n  while (k < mu) { k = k + "
                      "1; }\n  y ~ normal(mu, 1);\n}\n",
                      ".stan");
    c = th_cli_run((const char *[]){"translate", m, "--out", path, NULL});
    if (c.status != 2 ||
        !strstr(c.err, ":5:3: error: a while loop whose condition the data "
                       "do not decide") ||
        !strstr(c.err, " | ") || access(path, F_OK) == 0)
        fail_msg("exit %d (want 2)\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
    /* drift's own language in a .stan file: the Stan grammar's message */
    m = th_write_text("param { a : real }\nprior { a ~ normal(0, 1) }\n",
                      ".stan");
    c = th_cli_run((const char *[]){"translate", m, NULL});
    if (c.status != 2 || !strstr(c.err, ":1:1: error:") || c.out[0])
        fail_msg("exit %d (want 2)\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
    /* a Stan name that is a keyword of drift's language: renaming data
     * would part them from their data file, so it is refused */
    m = th_write_text("data { int N; vector[N] y; }\nparameters { real "
                      "prior; }\nmodel { y ~ normal(prior, 1); }\n",
                      ".stan");
    c = th_cli_run((const char *[]){"translate", m, NULL});
    if (c.status != 2 ||
        !strstr(c.err, ":2:19: the name 'prior' cannot be written in "
                       "drift's language (it is a keyword there)") ||
        c.out[0])
        fail_msg("exit %d (want 2)\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    unlink(m);
    free(m);
    /* not a .stan file */
    m = src_path("tests/stan/logistic.drift");
    c = th_cli_run((const char *[]){"translate", m, NULL});
    if (c.status != 2 || !strstr(c.err, "is not a Stan program"))
        fail_msg("exit %d (want 2)\nstderr:\n%s", c.status, c.err);
    th_cli_free(&c);
    free(m);
    rmdir(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linreg),
        cmocka_unit_test(test_reductions_couple),
        cmocka_unit_test(test_while),
        cmocka_unit_test(test_logistic),
        cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_eight_schools),
        cmocka_unit_test(test_unrolled),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_own_n),
        cmocka_unit_test(test_zip),
        cmocka_unit_test(test_centred),
        cmocka_unit_test(test_glm),
        cmocka_unit_test(test_hier),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_whole_refuses_minibatch),
        cmocka_unit_test(test_conjugate_closed_form),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_coupled_rows_warn),
        cmocka_unit_test(test_generated_skipped_warn),
        cmocka_unit_test(test_check_reports_rows),
        cmocka_unit_test(test_truncation_constant),
        cmocka_unit_test(test_translate_round_trip),
        cmocka_unit_test(test_print_precedence),
        cmocka_unit_test(test_reject),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_translate_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
