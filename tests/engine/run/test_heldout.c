/* test_heldout.c: held-out metrics (--test).  Against a closed form: the
 * normal-mean model's posterior predictive N(m, sigma^2 + v) gives the
 * limit of the mean test log predictive density and of the MSE, within
 * Monte Carlo error bounds derived from the draws' ESS.  Against an
 * independent computation from the very draws written: lpd, accuracy and
 * MSE recomputed here from the draws file for a binary (logistic on the
 * Pima test set), a categorical and a real outcome, at the end and at an
 * intermediate --eval-every point (over the draws so far only).  And the
 * refusals of test files that do not fit the model. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/data/table.h"
#include "engine/run/heldout.h"
#include "engine/run/rng.h"
#include "engine/stats/stancsv.h"
#include "harness.h"

static char *tmp_out(void)
{
    char tmpl[] = "/tmp/drift-heldout-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    close(fd);
    unlink(tmpl);
    size_t n = strlen(tmpl) + 5;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s.csv", tmpl);
    return p;
}

static drift_stancsv *read_metrics(const char *out)
{
    char mpath[4200];
    drift_heldout_path(out, mpath, sizeof mpath);
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(mpath, &f, &e))
        fail_msg("%s", e.msg);
    unlink(mpath);
    return f;
}

/* The metrics row whose draws column equals S (-1 if none). */
static long row_with_draws(const drift_stancsv *f, double S)
{
    long col = drift_stancsv_column(f, "draws");
    assert_true(col >= 0);
    for (size_t r = 0; r < f->n_rows; r++)
        if (f->values[r * f->n_cols + (size_t)col] == S)
            return (long)r;
    return -1;
}

static double metric(const drift_stancsv *f, long row, const char *name)
{
    long col = drift_stancsv_column(f, name);
    assert_true(col >= 0 && row >= 0);
    return f->values[(size_t)row * f->n_cols + (size_t)col];
}

/* |a - b| <= 1e-8 (1 + |b|): the metrics file holds 10 digits. */
static void same(double a, double b, const char *what)
{
    if (!(fabs(a - b) <= 1e-8 * (1 + fabs(b))))
        fail_msg("%s: drift %.12g, recomputed %.12g", what, a, b);
}

static double log_mean_exp(const double *l, size_t S)
{
    double mx = -INFINITY, s = 0;
    for (size_t i = 0; i < S; i++)
        mx = l[i] > mx ? l[i] : mx;
    for (size_t i = 0; i < S; i++)
        s += exp(l[i] - mx);
    return mx + log(s / (double)S);
}

/* ---- the normal mean: closed form ------------------------------------ */

static void test_normal_closed_form(void **state)
{
    (void)state;
    const size_t N = 50, NT = 40;
    double y[50], yt[40];
    drift_rng r;
    drift_rng_seed(&r, 2024, 0);
    for (size_t i = 0; i < N; i++)
        y[i] = 1.0 + drift_rng_normal(&r);
    for (size_t i = 0; i < NT; i++)
        yt[i] = 1.0 + drift_rng_normal(&r);
    const char *names[] = {"y"};
    char *train = th_write_csv(names, 1, y, N);
    char *test = th_write_csv(names, 1, yt, NT);
    th_problem tp;
    th_open(&tp, "normmean", train, NULL, 0);

    /* Full-gradient Langevin (batch = N, cyclic access): its stationary
     * law is exactly N(m, v / (1 - h/(2v))) for this Gaussian target. */
    const double h = 0.002, sigma = 1, tau = 10;
    char *set[] = {"h=0.002"};
    char *out = tmp_out();
    th_run run = {.sampler = "sgld", .set = set, .n_set = 1, .batch = N,
                  .access = DRIFT_ACCESS_CA, .iters = 20000, .warmup = 200,
                  .seed = 11, .out_path = out, .test_path = test,
                  .eval_every = 100};
    th_draws d;
    assert_int_equal(th_sample(&tp, &run, &d, NULL), DRIFT_OK);
    drift_stancsv *mf = read_metrics(out);
    unlink(out);
    size_t S = d.n; /* no warmup rows saved: every row counts */
    assert_int_equal(S, 20000);

    /* Exact recomputation from the draws, at the end and at 1000 passes
     * (800 draws after the 200 warmup iterations). */
    double *l = malloc(S * sizeof *l);
    assert_non_null(l);
    size_t checks[2] = {800, S};
    for (int c = 0; c < 2; c++) {
        size_t n = checks[c];
        double lpd = 0, mse = 0, tbar = 0;
        for (size_t s = 0; s < n; s++)
            tbar += d.v[s * d.cols + 2] / (double)n;
        for (size_t j = 0; j < NT; j++) {
            for (size_t s = 0; s < n; s++) {
                double r0 = yt[j] - d.v[s * d.cols + 2];
                l[s] = -0.5 * r0 * r0 - 0.5 * log(2 * M_PI);
            }
            lpd += log_mean_exp(l, n) / (double)NT;
            mse += (tbar - yt[j]) * (tbar - yt[j]) / (double)NT;
        }
        long row = row_with_draws(mf, (double)n);
        assert_true(row >= 0);
        same(metric(mf, row, "lpd"), lpd, "lpd");
        same(metric(mf, row, "mse"), mse, "mse");
    }
    /* The last row is the end of the run: 20200 passes. */
    same(metric(mf, (long)mf->n_rows - 1, "passes"), 20200, "passes");
    assert_int_equal(row_with_draws(mf, (double)S), (long)mf->n_rows - 1);

    /* Closed form. */
    double sy = 0;
    for (size_t i = 0; i < N; i++)
        sy += y[i];
    double v = 1 / (1 / (tau * tau) + (double)N / (sigma * sigma));
    double m = v * sy / (sigma * sigma);
    double v_ula = v / (1 - h / (2 * v));
    double lpd_cf = 0, mse_cf = 0, bias_dir = 0, F[40];
    for (size_t j = 0; j < NT; j++) {
        double s2 = sigma * sigma + v_ula, r0 = yt[j] - m;
        F[j] = exp(-0.5 * r0 * r0 / s2) / sqrt(2 * M_PI * s2);
        lpd_cf += log(F[j]) / (double)NT;
        mse_cf += r0 * r0 / (double)NT;
        bias_dir += (m - yt[j]) / (double)NT;
    }
    /* Monte Carlo error of lpd: to first order it is the mean over draws
     * of g(theta) = mean_j p(y_j | theta) / F_j minus 1; its standard
     * error from the variance and ESS of g along the chain. */
    th_draws g = {0};
    g.n = g.cap = S;
    g.cols = 2;
    g.v = malloc(2 * S * sizeof *g.v);
    assert_non_null(g.v);
    for (size_t s = 0; s < S; s++) {
        double th = d.v[s * d.cols + 2], acc = 0;
        for (size_t j = 0; j < NT; j++) {
            double r0 = yt[j] - th;
            acc += exp(-0.5 * r0 * r0) / sqrt(2 * M_PI) / F[j] / (double)NT;
        }
        g.v[2 * s] = acc;
        g.v[2 * s + 1] = th;
    }
    double se_g = sqrt(th_var(&g, 0, 0) / th_ess(&g, 0, 0));
    double se_t = sqrt(th_var(&g, 1, 0) / th_ess(&g, 1, 0));
    double lpd = metric(mf, (long)mf->n_rows - 1, "lpd");
    double mse = metric(mf, (long)mf->n_rows - 1, "mse");
    double tbar = th_mean(&g, 1, 0);
    if (fabs(tbar - m) > 4.5 * se_t)
        fail_msg("posterior mean %.6g, closed form %.6g (se %.3g)", tbar, m,
                 se_t);
    if (fabs(lpd - lpd_cf) > 4.5 * se_g)
        fail_msg("lpd %.8g, closed form %.8g (se %.3g)", lpd, lpd_cf, se_g);
    double tol_mse = 2 * 4.5 * se_t * fabs(bias_dir) + pow(4.5 * se_t, 2);
    if (fabs(mse - mse_cf) > tol_mse)
        fail_msg("mse %.8g, closed form %.8g (tolerance %.3g)", mse, mse_cf,
                 tol_mse);
    print_message("lpd %.6f closed form %.6f (4.5 se %.2g); mse %.6f closed "
                  "form %.6f (tolerance %.2g)\n",
                  lpd, lpd_cf, 4.5 * se_g, mse, mse_cf, tol_mse);
    /* The bound is not vacuous: the predictive density's width matters. */
    assert_true(4.5 * se_g < 0.01);

    free(g.v);
    free(l);
    drift_stancsv_free(mf);
    th_draws_free(&d);
    th_close(&tp);
    unlink(train);
    unlink(test);
    free(train);
    free(test);
    free(out);
}

/* ---- logistic regression on the Pima test set ----------------------- */

static void test_logistic_exact(void **state)
{
    (void)state;
    const char *src = getenv("srcdir");
    char train[4096], test[4096];
    snprintf(train, sizeof train, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    snprintf(test, sizeof test, "%s/examples/logistic/pima-test.csv",
             src ? src : ".");
    th_problem tp;
    th_open(&tp, "logistic", train, NULL, 0);
    char *set[] = {"h=0.0005"};
    char *out = tmp_out();
    th_run run = {.sampler = "sgld", .set = set, .n_set = 1, .batch = 20,
                  .iters = 1500, .warmup = 500, .thin = 3, .seed = 5,
                  .out_path = out, .test_path = test, .eval_every = 50};
    th_draws d;
    assert_int_equal(th_sample(&tp, &run, &d, NULL), DRIFT_OK);
    drift_stancsv *mf = read_metrics(out);
    unlink(out);
    assert_int_equal(d.n, 500); /* 1500 / thin 3 */
    drift_table *t;
    drift_err e = {{0}};
    assert_int_equal(drift_table_read_csv(test, &t, &e), DRIFT_OK);
    size_t NT = t->view.n_rows, D = 8;
    double *l = malloc(d.n * sizeof *l);
    assert_non_null(l);
    /* At 200 passes (iteration 2000 = the end) and 100 passes (iteration
     * 1000: 500 after warmup, 167 kept draws). */
    size_t checks[2] = {167, d.n};
    for (int c = 0; c < 2; c++) {
        size_t S = checks[c];
        double lpd = 0, acc = 0;
        for (size_t j = 0; j < NT; j++) {
            const double *row = t->view.values + j * t->view.row_stride;
            double yv = row[0], pbar = 0;
            for (size_t s = 0; s < S; s++) {
                const double *w = d.v + s * d.cols + 2;
                double z = 0;
                for (size_t k = 0; k < D; k++)
                    z += row[1 + k] * w[k];
                double p = 1 / (1 + exp(-z));
                pbar += p / (double)S;
                l[s] = yv ? log(p) : log1p(-p);
            }
            lpd += log_mean_exp(l, S) / (double)NT;
            acc += ((pbar > 0.5) == (yv != 0)) / (double)NT;
        }
        long row = row_with_draws(mf, (double)S);
        if (row < 0)
            fail_msg("no metrics row over %zu draws", S);
        same(metric(mf, row, "lpd"), lpd, "lpd");
        same(metric(mf, row, "accuracy"), acc, "accuracy");
        if (c == 0)
            same(metric(mf, row, "passes"), 100, "passes");
    }
    /* Every 50 passes from 50 to 200: 4 rows; none repeated at the end. */
    assert_int_equal(mf->n_rows, 4);
    /* Rows before any draw (warmup) carry NaN, not numbers. */
    assert_true(isnan(metric(mf, 0, "lpd")));
    free(l);
    drift_table_free(t);
    drift_stancsv_free(mf);
    th_draws_free(&d);
    th_close(&tp);
    free(out);
}

/* ---- a categorical outcome ------------------------------------------ */

static void test_categorical_exact(void **state)
{
    (void)state;
    double y[60], yt[30];
    for (size_t i = 0; i < 60; i++)
        y[i] = i % 10 < 5 ? 2 : i % 10 < 8 ? 1 : 3;
    for (size_t i = 0; i < 30; i++)
        yt[i] = i % 3 + 1;
    const char *names[] = {"y"};
    char *train = th_write_csv(names, 1, y, 60);
    char *test = th_write_csv(names, 1, yt, 30);
    th_problem tp;
    th_open(&tp, "catmodel", train, NULL, 0);
    char *set[] = {"h=0.01"};
    char *out = tmp_out();
    th_run run = {.sampler = "sgld", .set = set, .n_set = 1, .batch = 10,
                  .iters = 600, .warmup = 100, .seed = 3, .out_path = out,
                  .test_path = test};
    th_draws d;
    assert_int_equal(th_sample(&tp, &run, &d, NULL), DRIFT_OK);
    drift_stancsv *mf = read_metrics(out);
    unlink(out);
    size_t S = d.n, K = 3;
    double pbar[3] = {0}, lpd = 0, acc = 0, *l = malloc(S * sizeof *l);
    assert_non_null(l);
    for (size_t s = 0; s < S; s++) {
        const double *b = d.v + s * d.cols + 2;
        double z = log(exp(b[0]) + exp(b[1]) + exp(b[2]));
        for (size_t k = 0; k < K; k++)
            pbar[k] += exp(b[k] - z) / (double)S;
    }
    size_t best = 0;
    for (size_t k = 1; k < K; k++)
        if (pbar[k] > pbar[best])
            best = k;
    assert_int_equal(best, 1); /* class 2 is the most frequent */
    for (size_t j = 0; j < 30; j++) {
        size_t c = (size_t)yt[j] - 1;
        for (size_t s = 0; s < S; s++) {
            const double *b = d.v + s * d.cols + 2;
            l[s] = b[c] - log(exp(b[0]) + exp(b[1]) + exp(b[2]));
        }
        lpd += log_mean_exp(l, S) / 30;
        acc += (c == best) / 30.0;
    }
    /* Without --eval-every: one row, at the end. */
    assert_int_equal(mf->n_rows, 1);
    same(metric(mf, 0, "lpd"), lpd, "lpd");
    same(metric(mf, 0, "accuracy"), acc, "accuracy");
    free(l);
    drift_stancsv_free(mf);
    th_draws_free(&d);
    th_close(&tp);
    unlink(train);
    unlink(test);
    free(train);
    free(test);
    free(out);
}

/* ---- test files that do not fit ------------------------------------- */

static void test_refusals(void **state)
{
    (void)state;
    const char *n2[] = {"y.1", "y.2"}, *n3[] = {"y.1", "y.2", "y.3"};
    const char *nz[] = {"z"};
    double v[6] = {1, 2, 3, 4, 5, 6};
    char *train = th_write_csv(n2, 2, v, 3);
    char *test3 = th_write_csv(n3, 3, v, 2);
    char *testz = th_write_csv(nz, 1, v, 6);
    th_problem tp;
    th_open(&tp, "gauss", train, NULL, 0);
    drift_heldout_set ts;
    drift_err e = {{0}};
    assert_int_not_equal(drift_heldout_set_open(&ts, &tp.p, test3, &e),
                         DRIFT_OK);
    assert_non_null(strstr(e.msg, test3));
    assert_non_null(strstr(e.msg, "has 3 parameters, over the training "
                                  "data 2"));
    drift_heldout_set_close(&ts);
    assert_int_not_equal(drift_heldout_set_open(&ts, &tp.p, testz, &e),
                         DRIFT_OK);
    assert_non_null(strstr(e.msg, "--test"));
    assert_non_null(strstr(e.msg, "needs columns y.1"));
    drift_heldout_set_close(&ts);
    assert_int_not_equal(
        drift_heldout_set_open(&ts, &tp.p, "/nonexistent/t.csv", &e),
        DRIFT_OK);
    assert_non_null(strstr(e.msg, "/nonexistent/t.csv: cannot open"));
    drift_heldout_set_close(&ts);
    th_close(&tp);
    const char *p[] = {train, test3, testz};
    for (int k = 0; k < 3; k++) {
        unlink(p[k]);
        free((char *)p[k]);
    }
}

/* Allocation failures while setting up an evaluator or opening a test
 * set are reported, never a crash (the sanitizer build checks leaks). */
static void test_allocation_failures(void **state)
{
    (void)state;
    double y[5] = {1, 2, 3, 4, 5};
    const char *names[] = {"y"};
    char *train = th_write_csv(names, 1, y, 5);
    char *out = tmp_out();
    th_problem tp;
    th_open(&tp, "normmean", train, NULL, 0);
    drift_heldout_set ts;
    drift_err e = {{0}};
    drift_fail_alloc(0);
    assert_int_equal(drift_heldout_set_open(&ts, &tp.p, train, &e), DRIFT_OK);
    uint64_t total = drift_fail_alloc(0);
    drift_heldout_set_close(&ts);
    for (uint64_t k = 1; k <= total; k++) {
        drift_fail_alloc(k);
        int rc = drift_heldout_set_open(&ts, &tp.p, train, &e);
        drift_fail_alloc(0);
        assert_int_not_equal(rc, DRIFT_OK);
        drift_heldout_set_close(&ts);
    }
    assert_int_equal(drift_heldout_set_open(&ts, &tp.p, train, &e), DRIFT_OK);
    drift_heldout *h;
    drift_fail_alloc(0);
    assert_int_equal(drift_heldout_new(&h, &ts.model, train, out, 1, &e),
                     DRIFT_OK);
    total = drift_fail_alloc(0);
    drift_heldout_close(h, 0, &e);
    for (uint64_t k = 1; k <= total; k++) {
        drift_fail_alloc(k);
        int rc = drift_heldout_new(&h, &ts.model, train, out, 1, &e);
        drift_fail_alloc(0);
        assert_int_equal(rc, DRIFT_ENOMEM);
        assert_null(h);
    }
    assert_int_not_equal(access(out, F_OK), 0); /* nothing left behind */
    drift_heldout_set_close(&ts);
    th_close(&tp);
    unlink(train);
    free(train);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_closed_form),
        cmocka_unit_test(test_logistic_exact),
        cmocka_unit_test(test_categorical_exact),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
