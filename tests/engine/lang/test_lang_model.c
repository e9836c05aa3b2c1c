/* test_lang_model.c: a language model as the engine holds it: every
 * allocation on the path from text and data to a drift_model failing in
 * turn (each reported, none crashing or leaking), workspaces failing, the
 * same model evaluated from two threads with their own workspaces, and
 * the model ABI's fields (names, outcome, GLM form) for a constrained
 * model. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/lang/lang_model.h"
#include "harness.h"
#include "langtest.h"

static const char *model =
    "data  { s : real<lower=0> }\n"
    "rows  { x : vector[D]  y : int  g : int }\n"
    "param { w : vector[D]  u : vector<lower=-3>[2]  tau : real<lower=0> }\n"
    "prior { w ~ normal(0, s)  u ~ normal(0, tau)  tau ~ gamma(2, 2) }\n"
    "datum { y ~ bernoulli_logit(dot(x, w) + u[g]) }\n";

static const char *const data[] = {
    "csv:y,g,x.1,x.2\n1,1,1,0.5\n0,2,1,-1.5\n1,2,1,2.5\n0,1,1,0.1\n",
    "json:{\"s\": 2.5}", NULL};

/* Every allocation of opening text's model failing in turn is reported
 * as out of memory, never a crash or a model. */
static void open_failures(const char *text, const char *const *d)
{
    drift_fail_alloc(0);
    lt_model lm;
    lt_open_ok(&lm, text, d, NULL, 0);
    uint64_t count = drift_fail_alloc(0);
    lt_close(&lm);
    assert_true(count > 20);
    for (uint64_t k = 1; k <= count; k++) {
        drift_fail_alloc(k);
        lt_open(&lm, text, d, NULL, 0);
        drift_fail_alloc(0);
        if (lm.rc == 0)
            fail_msg("allocation %llu of %llu failed but the model opened",
                     (unsigned long long)k, (unsigned long long)count);
        if (!strstr(lm.summary, "out of memory") &&
            !strstr(lm.report, "out of memory"))
            fail_msg("allocation %llu: no 'out of memory' in '%s' / '%s'",
                     (unsigned long long)k, lm.summary, lm.report);
        lt_close(&lm);
    }
}

static void test_allocation_failures(void **state)
{
    (void)state;
    /* User functions inlined and reductions over the rows too. */
    static const char *const fdata[] = {"csv:y,x\n1,2\n2,3\n3,7\n", NULL};
    open_failures("functions {\n"
                  "  lin(a : real, b : real, x : real) : real {\n"
                  "    t = b * x\n"
                  "    return a + t\n"
                  "  }\n"
                  "}\n"
                  "rows  { y : real  x : real }\n"
                  "param { a : real  b : real }\n"
                  "transformed { mx = mean(x)  sx = sd(log(x)) }\n"
                  "prior { a ~ normal(mx, sx) }\n"
                  "datum { y ~ normal(lin(a, b, x - mx), 1) }\n",
                  fdata);
    drift_fail_alloc(0);
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    uint64_t count = drift_fail_alloc(0);
    lt_close(&lm);
    assert_true(count > 20);
    for (uint64_t k = 1; k <= count; k++) {
        drift_fail_alloc(k);
        lt_open(&lm, model, data, NULL, 0);
        drift_fail_alloc(0);
        if (lm.rc == 0)
            fail_msg("allocation %llu of %llu failed but the model opened",
                     (unsigned long long)k, (unsigned long long)count);
        if (!strstr(lm.summary, "out of memory") &&
            !strstr(lm.report, "out of memory"))
            fail_msg("allocation %llu: no 'out of memory' in '%s' / '%s'",
                     (unsigned long long)k, lm.summary, lm.report);
        lt_close(&lm);
    }
    /* Workspaces: every allocation failing in turn gives NULL. */
    lt_open_ok(&lm, model, data, NULL, 0);
    drift_fail_alloc(0);
    void *ws = lm.m.workspace_new(lm.m.self, 64);
    uint64_t wcount = drift_fail_alloc(0);
    lm.m.workspace_free(lm.m.self, ws);
    for (uint64_t k = 1; k <= wcount; k++) {
        drift_fail_alloc(k);
        ws = lm.m.workspace_new(lm.m.self, 64);
        drift_fail_alloc(0);
        assert_null(ws);
    }
    lt_close(&lm);
}

typedef struct job {
    const drift_model *m;
    double ll;
    double grad[5];
    int rc;
} job;

static void *evaluate(void *arg)
{
    job *j = arg;
    const drift_model *m = j->m;
    void *ws = m->workspace_new(m->self, 4);
    double theta[5] = {0.2, -0.4, 0.1, 0.3, -0.2};
    drift_rows all = {NULL, 0, 4};
    drift_err e;
    j->rc = 0;
    for (int rep = 0; rep < 2000 && !j->rc; rep++)
        j->rc = m->log_lik(m->self, ws, theta, &all, NULL, &j->ll, j->grad,
                           NULL, &e);
    m->workspace_free(m->self, ws);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    assert_int_equal(lm.m.dim, 5);
    job a = {&lm.m, 0, {0}, 0}, b = {&lm.m, 0, {0}, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, evaluate, &a);
    pthread_create(&tb, NULL, evaluate, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    assert_true(a.ll == b.ll);
    for (int k = 0; k < 5; k++)
        assert_true(a.grad[k] == b.grad[k]);
    lt_close(&lm);
}

static void test_abi_fields(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->abi_version, DRIFT_MODEL_ABI_VERSION);
    assert_int_equal(m->n_rows, 4);
    assert_int_equal(m->n_out, 5);
    static const char *const names[] = {"w.1", "w.2", "u.1", "u.2", "tau"};
    for (int k = 0; k < 5; k++)
        assert_string_equal(m->out_names[k], names[k]);
    /* u is constrained (lower = -3): the gradient in the unconstrained
     * u is not a fixed vector times a scalar. */
    assert_false(m->flags & DRIFT_MODEL_GLM);
    assert_int_equal(m->outcome, DRIFT_OUTCOME_BINARY);
    assert_non_null(m->predict);
    double theta[5] = {0.1, 0.2, 0, 0, 0}, out[5];
    m->constrain(m->self, theta, out);
    assert_true(fabs(out[2] - (-3 + 1)) < 1e-15);
    assert_true(fabs(out[4] - 1) < 1e-15);
    lt_check_derivatives(m, 5, 2, 0.7);
    lt_close(&lm);
    /* With u unconstrained the model is in generalised linear form: the
     * gradient of a row is s_i times (x_i, onehot(g_i)). */
    lt_open_ok(&lm,
               "rows  { x : vector[D]  y : int  g : int }\n"
               "param { w : vector[D]  u : vector[2] }\n"
               "prior { w ~ normal(0, 1)  u ~ normal(0, 1) }\n"
               "datum { y ~ bernoulli_logit(dot(x, w) + u[g]) }\n",
               data, NULL, 0);
    assert_true(lm.m.flags & DRIFT_MODEL_GLM);
    lt_check_derivatives(&lm.m, 6, 2, 0.7);
    lt_close(&lm);
}

/* derived (Stan's transformed parameters) and generated quantities:
 * Stan's names (derived first, per-row values with the row index first
 * and fastest), derived values usable in prior and datum and written for
 * every draw, generated only when asked for, the pointwise log-likelihood
 * equal to the model's per-row terms, and draws that depend on the seed
 * only. */
static void test_derived_generated(void **state)
{
    (void)state;
    const char *text =
        "data  { s : real<lower=0> }\n"
        "rows  { x : vector[2]  y : real }\n"
        "param { w : vector[2]  sig : real<lower=0> }\n"
        "derived { w2 = 2 * w  scale = sig * s }\n"
        "prior { w2 ~ normal(0, 5)  sig ~ gamma(2, 2) }\n"
        "datum { y ~ normal(dot(x, w), scale) }\n"
        "generated { log_lik = normal_lpdf(y | dot(x, w), scale)\n"
        "            y_rep = normal_rng(dot(x, w), scale)\n"
        "            pair = x * scale  total = sum(w2) }\n";
    const char *d[] = {
        "csv:x.1,x.2,y\n1,0.5,0.3\n1,-1.5,-1\n1,2.5,2.2\n",
        "json:{\"s\": 1.5}", NULL};
    lt_model lm;
    lt_open_ok(&lm, text, d, NULL, 0);
    const drift_model *m = &lm.m;
    /* w2 (2), scale, log_lik (3), y_rep (3), pair (3 x 2), total */
    assert_int_equal(m->n_gen, 2 + 1 + 3 + 3 + 6 + 1);
    assert_int_equal(m->n_gen_derived, 3);
    static const char *const names[] = {
        "w2.1", "w2.2", "scale", "log_lik.1", "log_lik.2", "log_lik.3",
        "y_rep.1", "y_rep.2", "y_rep.3", "pair.1.1", "pair.2.1", "pair.3.1",
        "pair.1.2", "pair.2.2", "pair.3.2", "total"};
    for (size_t k = 0; k < 16; k++)
        assert_string_equal(m->gen_names[k], names[k]);
    lt_check_derivatives(m, 12, 3, 0.6);
    void *ws = m->workspace_new(m->self, 2); /* rows in two chunks */
    double theta[3] = {0.4, -0.3, 0.2}, out[16], out2[16], ll[3];
    for (int k = 0; k < 16; k++)
        out[k] = -99;
    drift_err e;
    if (m->generate(m->self, ws, theta, 5, 0, out, &e))
        fail_msg("%s", e.msg);
    double sig = exp(0.2);
    assert_true(fabs(out[0] - 0.8) < 1e-15 && fabs(out[1] + 0.6) < 1e-15);
    assert_true(fabs(out[2] - 1.5 * sig) < 1e-14);
    assert_true(out[3] == -99 && out[15] == -99); /* not asked for */
    assert_int_equal(m->generate(m->self, ws, theta, 5, 1, out, &e), 0);
    drift_rows all = {NULL, 0, 3};
    void *ws3 = m->workspace_new(m->self, 3);
    assert_int_equal(m->log_lik(m->self, ws3, theta, &all, ll, NULL, NULL,
                                NULL, &e),
                     0);
    m->workspace_free(m->self, ws3);
    for (int i = 0; i < 3; i++)
        assert_true(fabs(out[3 + i] - ll[i]) < 1e-14);
    const double x2[3] = {0.5, -1.5, 2.5};
    for (int i = 0; i < 3; i++) {
        assert_true(fabs(out[9 + i] - 1.5 * sig) < 1e-14);
        assert_true(fabs(out[12 + i] - x2[i] * 1.5 * sig) < 1e-14);
    }
    assert_true(fabs(out[15] - 0.2) < 1e-14);
    assert_int_equal(m->generate(m->self, ws, theta, 5, 1, out2, &e), 0);
    assert_true(!memcmp(out, out2, sizeof out));
    assert_int_equal(m->generate(m->self, ws, theta, 6, 1, out2, &e), 0);
    assert_true(out2[6] != out[6] && out2[3] == out[3]);
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

/* Compares two models' log prior, per-row terms and gradients (summed
 * and per row) at `trials` random points: to 1e-10 relative. */
static void same_density(const drift_model *a, const drift_model *b,
                         int trials)
{
    assert_int_equal(a->dim, b->dim);
    assert_int_equal(a->n_rows, b->n_rows);
    size_t d = a->dim, N = a->n_rows;
    void *wa = a->workspace_new(a->self, N), *wb = b->workspace_new(b->self, N);
    double *th = malloc(d * sizeof *th), *ga = malloc(d * sizeof *ga),
           *gb = malloc(d * sizeof *gb), *ra = malloc(N * d * sizeof *ra),
           *rb = malloc(N * d * sizeof *rb), *la = malloc(N * sizeof *la),
           *lb = malloc(N * sizeof *lb);
    drift_err e;
    drift_rows all = {NULL, 0, N};
    uint64_t st = 77;
    for (int t = 0; t < trials; t++) {
        for (size_t j = 0; j < d; j++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            th[j] = ((double)(st >> 11) / 9007199254740992.0 - 0.5) * 2;
        }
        double lpa, lpb;
        assert_int_equal(a->log_prior(a->self, wa, th, &lpa, ga, &e), 0);
        assert_int_equal(b->log_prior(b->self, wb, th, &lpb, gb, &e), 0);
        assert_true(fabs(lpa - lpb) <= 1e-10 * fmax(1, fabs(lpb)));
        for (size_t j = 0; j < d; j++)
            assert_true(fabs(ga[j] - gb[j]) <= 1e-10 * fmax(1, fabs(gb[j])));
        assert_int_equal(a->log_lik(a->self, wa, th, &all, la, NULL, ga, ra,
                                    &e),
                         0);
        assert_int_equal(b->log_lik(b->self, wb, th, &all, lb, NULL, gb, rb,
                                    &e),
                         0);
        for (size_t i = 0; i < N; i++)
            assert_true(fabs(la[i] - lb[i]) <= 1e-10 * fmax(1, fabs(lb[i])));
        for (size_t j = 0; j < d; j++)
            assert_true(fabs(ga[j] - gb[j]) <= 1e-10 * fmax(1, fabs(gb[j])));
        for (size_t k = 0; k < N * d; k++)
            assert_true(fabs(ra[k] - rb[k]) <= 1e-10 * fmax(1, fabs(rb[k])));
    }
    a->workspace_free(a->self, wa);
    b->workspace_free(b->self, wb);
    free(th), free(ga), free(gb), free(ra), free(rb), free(la), free(lb);
}

/* User functions are inlined: the log density and its gradients equal
 * those of the same model written out by hand, with int, real, vector,
 * matrix and array arguments, locals, nested calls, and user densities
 * after '~' and as name_lpdf(y | ...). */
static void test_user_functions(void **state)
{
    (void)state;
    const char *fun =
        "functions {\n"
        "  lin(a : real, b : vector, x : vector) : real = a + dot(x, b)\n"
        "  shrink(v : vector, s : real) : vector {\n"
        "    t = s * s + 1\n"
        "    return v / t\n"
        "  }\n"
        "  t3_lpdf(y : real, mu : real, s : real) : real {\n"
        "    z = (y - mu) / s\n"
        "    return -2 * log1p(z * z / 3) - log(s)\n"
        "  }\n"
        "  cnt_lpmf(k : int, l : real) : real = poisson_lpmf(k | l)\n"
        "  frob(M : matrix) : real = sum(M .* M)\n"
        "  second(z : array[] real) : real = z[2]\n"
        "}\n"
        "data  { zs : array[3] real }\n"
        "rows  { x : vector[2]  y : real  k : int }\n"
        "param { a : real  b : vector[2]  s : real<lower=0>  M : matrix[2, 2] }\n"
        "prior { a ~ normal(0, second(zs))  b ~ normal(0, 1)\n"
        "        target += -0.5 * frob(M)  s ~ gamma(2, 2) }\n"
        "datum { y ~ t3(lin(a, b, x), s)  k ~ cnt(exp(0.1 * a))\n"
        "        target += 0.01 * sum(shrink(b + M * x, s))\n"
        "        target += t3_lpdf(y | 0, exp(lin(1, b, x)) * s) }\n";
    const char *twin =
        "data  { zs : array[3] real }\n"
        "rows  { x : vector[2]  y : real  k : int }\n"
        "param { a : real  b : vector[2]  s : real<lower=0>  M : matrix[2, 2] }\n"
        "prior { a ~ normal(0, zs[2])  b ~ normal(0, 1)\n"
        "        target += -0.5 * sum(M .* M)  s ~ gamma(2, 2) }\n"
        "datum { z = (y - (a + dot(x, b))) / s\n"
        "        target += -2 * log1p(z * z / 3) - log(s)\n"
        "        k ~ poisson(exp(0.1 * a))\n"
        "        target += 0.01 * sum((b + M * x) / (s * s + 1))\n"
        "        z2 = y / (exp(1 + dot(x, b)) * s)\n"
        "        target += -2 * log1p(z2 * z2 / 3) - log(exp(1 + dot(x, b)) * s) }\n";
    const char *d[] = {"csv:x.1,x.2,y,k\n1,0.5,0.3,2\n1,-1.5,-1,0\n"
                       "0.2,2.5,2.2,5\n-1,0.3,0.1,1\n",
                       "json:{\"zs\": [1, 2.5, 3]}", NULL};
    lt_model lf, lh;
    lt_open_ok(&lf, fun, d, NULL, 0);
    lt_open_ok(&lh, twin, d, NULL, 0);
    same_density(&lf.m, &lh.m, 5);
    lt_check_derivatives(&lf.m, 9, 2, 0.5);
    lt_close(&lf);
    lt_close(&lh);
}

/* The transformed block: values of the data alone, the same model as
 * with those values given as data, and not written to the output. */
static void test_transformed(void **state)
{
    (void)state;
    const char *tr =
        "data  { xs : vector[4] }\n"
        "rows  { y : real }\n"
        "param { a : real  s : real<lower=0> }\n"
        "transformed { m = mean(xs)  sd2 = 2 * sd(xs)  c = (xs - m) / sd2 }\n"
        "derived { w = a * sd2 }\n"
        "prior { a ~ normal(m, sd2)  s ~ gamma(2, 2)\n"
        "        target += -0.5 * dot(c, c) * a * a }\n"
        "datum { y ~ normal(w + m, s) }\n";
    const char *twin =
        "data  { xs : vector[4]  m : real  sd2 : real }\n"
        "rows  { y : real }\n"
        "param { a : real  s : real<lower=0> }\n"
        "derived { w = a * sd2 }\n"
        "prior { a ~ normal(m, sd2)  s ~ gamma(2, 2)\n"
        "        target += -0.5 * dot((xs - m) / sd2, (xs - m) / sd2) * a * a }\n"
        "datum { y ~ normal(w + m, s) }\n";
    /* xs = 1, 2, 4, 9: mean 4, sd (n - 1) sqrt(38/3). */
    char dt[200];
    snprintf(dt, sizeof dt,
             "json:{\"xs\": [1, 2, 4, 9], \"m\": 4, \"sd2\": %.17g}",
             2 * sqrt(38.0 / 3));
    const char *d1[] = {"csv:y\n0.3\n-1\n2.2\n", "json:{\"xs\": [1, 2, 4, 9]}",
                        NULL};
    const char *d2[] = {"csv:y\n0.3\n-1\n2.2\n", dt, NULL};
    lt_model lf, lh;
    lt_open_ok(&lf, tr, d1, NULL, 0);
    lt_open_ok(&lh, twin, d2, NULL, 0);
    same_density(&lf.m, &lh.m, 4);
    assert_int_equal(lf.m.n_gen, 1);
    assert_string_equal(lf.m.gen_names[0], "w");
    lt_close(&lf);
    lt_close(&lh);
}

/* Reductions over the rows in the transformed block: computed once from
 * every row (x = 2, 3, 7, 1.5: mean 3.375, sd 2.4958298553119898, as
 * numpy's mean and std(ddof=1)), the model the same as with those values
 * given as data, a per-row value (xc) the same as written in datum; a
 * model of held-out rows opened with the training model keeps the
 * training values. */
static void test_transformed_over_rows(void **state)
{
    (void)state;
    const char *tr =
        "rows  { y : real  x : real }\n"
        "param { a : real  b : real  s : real<lower=0> }\n"
        "transformed { mx = mean(x)  sx = sd(x)  xc = (x - mx) / sx }\n"
        "prior { a ~ normal(0, 1)  b ~ normal(0, 1)  s ~ gamma(2, 2) }\n"
        "datum { y ~ normal(a + b * xc, s) }\n";
    const char *twin =
        "data  { mx : real  sx : real }\n"
        "rows  { y : real  x : real }\n"
        "param { a : real  b : real  s : real<lower=0> }\n"
        "prior { a ~ normal(0, 1)  b ~ normal(0, 1)  s ~ gamma(2, 2) }\n"
        "datum { y ~ normal(a + b * (x - mx) / sx, s) }\n";
    const char *rows = "csv:y,x\n1,2\n2,3\n3,7\n2,1.5\n";
    const char *test = "y,x\n0.5,20\n-1,30\n";
    const char *vals = "json:{\"mx\": 3.375, \"sx\": 2.4958298553119898}";
    const char *d1[] = {rows, NULL}, *d2[] = {rows, vals, NULL};
    lt_model lf, lh;
    lt_open_ok(&lf, tr, d1, NULL, 0);
    lt_open_ok(&lh, twin, d2, NULL, 0);
    same_density(&lf.m, &lh.m, 4);
    lt_close(&lh);
    /* The held-out rows, with the training rows' mean and sd. */
    char *tpath = th_write_text(test, ".csv");
    const char *tfiles[] = {tpath, NULL};
    drift_lang_spec spec = {.path = lf.paths[0], .data = tfiles,
                            .reductions_from = &lf.m};
    drift_model ht;
    drift_err e = {{0}};
    if (drift_lang_open(&spec, &ht, &e))
        fail_msg("%s", e.msg);
    char tcsv[64];
    snprintf(tcsv, sizeof tcsv, "csv:%s", test);
    const char *d3[] = {tcsv, vals, NULL};
    lt_open_ok(&lh, twin, d3, NULL, 0);
    same_density(&ht, &lh.m, 3);
    ht.free(ht.self);
    lt_close(&lh);
    unlink(tpath);
    free(tpath);
    lt_close(&lf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_abi_fields),
        cmocka_unit_test(test_derived_generated),
        cmocka_unit_test(test_user_functions),
        cmocka_unit_test(test_transformed),
        cmocka_unit_test(test_transformed_over_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
