/* test_examples.c: every example model of examples/ (the models of
 * DESIGN.md, in the language) opened with its data, through the
 * derivative battery of langtest.c, and sampled with SGLD.  Where the
 * posterior has a closed form (Gaussian with per-datum centres, ridge
 * regression, Normal-Gamma) or a one-dimensional integral (the double
 * well, R's integrate), the SGLD means must agree within 4.5 Monte Carlo
 * standard errors (from the chains' effective sample sizes); SGLD's
 * stationary mean is exact for the Gaussian targets (its gradient is
 * linear) and its step-size bias is far below the Monte Carlo error
 * elsewhere (argued at each test).  Also: SGLD on the logistic .drift
 * model and on the logistic C plugin, same data and seed, agree in their
 * posterior summaries; the sparse example's draws agree with the plugin's
 * sparse path to rounding. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/data/table.h"
#include "harness.h"
#include "langtest.h"

static char *path(const char *rel)
{
    const char *src = getenv("srcdir");
    size_t n = strlen(src ? src : ".") + strlen(rel) + 16;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/examples/%s", src ? src : ".", rel);
    return p;
}

/* Opens an example with its data files (relative to examples/). */
static void open_example(th_problem *tp, const char *model,
                         const char *const *data, char *const *sets,
                         size_t n_sets)
{
    char *mp = path(model);
    char *dp[8];
    size_t n = 0;
    for (; data && data[n]; n++)
        dp[n] = path(data[n]);
    dp[n] = NULL;
    tp->reg = th_registry();
    drift_problem_spec spec = {.model = mp,
                               .data = (const char *const *)dp,
                               .data_set = sets,
                               .n_data_set = n_sets};
    drift_err e = {{0}};
    if (drift_problem_open(&tp->p, tp->reg, &spec, &e))
        fail_msg("opening %s: %s", model, e.msg);
    free(mp);
    for (size_t k = 0; k < n; k++)
        free(dp[k]);
}

static void sgld(th_problem *tp, double h, size_t batch, uint64_t iters,
                 uint64_t seed, th_draws *out)
{
    char set[64];
    snprintf(set, sizeof set, "h=%.17g", h);
    char *sets[] = {set};
    th_run r;
    memset(&r, 0, sizeof r);
    r.sampler = "sgld";
    r.set = sets;
    r.n_set = 1;
    r.batch = batch;
    r.iters = iters;
    r.seed = seed;
    assert_int_equal(th_sample(tp, &r, out, NULL), DRIFT_OK);
}

/* |mean of column - want| within 4.5 Monte Carlo standard errors. */
static void mean_near(const th_draws *d, size_t col, size_t from,
                      double want, const char *what)
{
    double m = th_mean(d, col, from), sd = sqrt(th_var(d, col, from));
    double ess = th_ess(d, col, from), mcse = sd / sqrt(ess);
    if (!(fabs(m - want) < 4.5 * mcse))
        fail_msg("%s: mean %.6g, expected %.6g (MCSE %.3g, ESS %.0f)", what,
                 m, want, mcse, ess);
}

static drift_table *read_csv(const char *rel)
{
    char *p = path(rel);
    drift_table *t;
    drift_err e;
    if (drift_table_read_csv(p, &t, &e))
        fail_msg("%s", e.msg);
    free(p);
    return t;
}

static void battery(th_problem *tp, uint64_t seed)
{
    lt_check_derivatives(&tp->p.model, seed, 1, 0.5);
}

static void test_gaussian(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"gaussian/gaussian.csv", NULL};
    open_example(&tp, "gaussian/gaussian.drift", data, NULL, 0);
    battery(&tp, 1);
    /* Posterior N(mean of the c_i, I / N). */
    drift_table *t = read_csv("gaussian/gaussian.csv");
    double cbar[2] = {0, 0};
    size_t N = t->view.n_rows;
    for (size_t i = 0; i < N; i++)
        for (int j = 0; j < 2; j++)
            cbar[j] += t->values[i * 2 + j] / (double)N;
    drift_table_free(t);
    th_draws d;
    sgld(&tp, 1e-3, 10, 20000, 11, &d);
    mean_near(&d, 2, 1000, cbar[0], "theta.1");
    mean_near(&d, 3, 1000, cbar[1], "theta.2");
    th_draws_free(&d);
    th_close(&tp);
}

/* Solves the d x d system A x = b (Gaussian elimination, pivoting). */
static void solve(size_t d, double *A, double *b)
{
    for (size_t c = 0; c < d; c++) {
        size_t p = c;
        for (size_t r = c + 1; r < d; r++)
            if (fabs(A[r * d + c]) > fabs(A[p * d + c]))
                p = r;
        for (size_t k = 0; k < d; k++) {
            double t = A[c * d + k];
            A[c * d + k] = A[p * d + k];
            A[p * d + k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (size_t r = c + 1; r < d; r++) {
            double f = A[r * d + c] / A[c * d + c];
            for (size_t k = c; k < d; k++)
                A[r * d + k] -= f * A[c * d + k];
            b[r] -= f * b[c];
        }
    }
    for (size_t c = d; c-- > 0;) {
        for (size_t k = c + 1; k < d; k++)
            b[c] -= A[c * d + k] * b[k];
        b[c] /= A[c * d + c];
    }
}

static void test_ridge(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"ridge/ridge.csv", "ridge/ridge.json", NULL};
    open_example(&tp, "ridge/ridge.drift", data, NULL, 0);
    assert_true(tp.p.model.flags & DRIFT_MODEL_GLM);
    assert_int_equal(tp.p.model.outcome, DRIFT_OUTCOME_REAL);
    battery(&tp, 2);
    /* Posterior mean (X'X + I)^-1 X'y (prior and noise variance equal). */
    drift_table *t = read_csv("ridge/ridge.csv");
    enum { D = 5 };
    double A[D * D] = {0}, b[D] = {0};
    size_t N = t->view.n_rows, C = t->view.n_cols;
    for (size_t i = 0; i < N; i++) {
        const double *row = t->values + i * C;
        for (size_t j = 0; j < D; j++) {
            b[j] += row[j] * row[D];
            for (size_t k = 0; k < D; k++)
                A[j * D + k] += row[j] * row[k];
        }
    }
    for (size_t j = 0; j < D; j++)
        A[j * D + j] += 1;
    solve(D, A, b);
    drift_table_free(t);
    th_draws d;
    sgld(&tp, 1e-4, 20, 30000, 12, &d);
    for (size_t j = 0; j < D; j++) {
        char what[16];
        snprintf(what, sizeof what, "w.%zu", j + 1);
        mean_near(&d, 2 + j, 2000, b[j], what);
    }
    th_draws_free(&d);
    th_close(&tp);
}

static void test_normal_gamma(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"normal_gamma/normal_gamma.csv",
                          "normal_gamma/normal_gamma.json", NULL};
    open_example(&tp, "normal_gamma/normal_gamma.drift", data, NULL, 0);
    battery(&tp, 3);
    /* Conjugate posterior (mu0 = 0, kappa0 = 0.1, a0 = 2, b0 = 1):
     * E[mu] = mu_n, E[tau] = a_n / b_n. */
    drift_table *t = read_csv("normal_gamma/normal_gamma.csv");
    size_t n = t->view.n_rows;
    double ybar = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        ybar += t->values[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (t->values[i] - ybar) * (t->values[i] - ybar);
    drift_table_free(t);
    double k0 = 0.1, mu0 = 0, a0 = 2, b0 = 1, kn = k0 + (double)n;
    double mun = (k0 * mu0 + (double)n * ybar) / kn;
    double an = a0 + (double)n / 2;
    double bn = b0 + 0.5 * ss + k0 * (double)n * (ybar - mu0) * (ybar - mu0) /
                                    (2 * kn);
    /* Full-batch steps h = 5e-4: the unconstrained posterior has
     * precisions about 160 (mu) and 50 (log tau), so the step inflates
     * var(log tau) by about h 50 / 2 = 1.3%, biasing E[tau] by about
     * 3e-4, far below its Monte Carlo error (about 0.01). */
    th_draws d;
    sgld(&tp, 5e-4, n, 40000, 13, &d);
    mean_near(&d, 2, 2000, mun, "mu");
    mean_near(&d, 3, 2000, an / bn, "tau");
    th_draws_free(&d);
    th_close(&tp);
}

static void test_double_well(void **state)
{
    (void)state;
    th_problem tp;
    open_example(&tp, "double_well/double_well.drift", NULL, NULL, 0);
    assert_int_equal(tp.p.model.n_rows, 0);
    battery(&tp, 4);
    /* The potential as written in the model. */
    void *ws = tp.p.model.workspace_new(tp.p.model.self, 1);
    for (double t = -5; t <= 5; t += 0.7) {
        double lp;
        drift_err e;
        assert_int_equal(tp.p.model.log_prior(tp.p.model.self, ws, &t, &lp,
                                              NULL, &e),
                         0);
        double U = (t + 4) * (t + 1) * (t - 1) * (t - 3) / 14 + 0.5;
        assert_true(fabs(lp + U) < 1e-12 * (1 + fabs(U)));
    }
    tp.p.model.workspace_free(tp.p.model.self, ws);
    /* E[t] = -2.14795529919776 (R: integrate() of t exp(-U) and exp(-U)
     * over the real line).  Step h = 0.005 against well curvatures of
     * order 1-3: a bias of a few 1e-3, against a Monte Carlo error of
     * order 0.2 (the chain crosses the barrier rarely). */
    th_draws d;
    sgld(&tp, 0.005, 1, 200000, 14, &d);
    mean_near(&d, 2, 5000, -2.14795529919776, "t");
    th_draws_free(&d);
    th_close(&tp);
}

static void test_mixture(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"mixture/mixture.csv", NULL};
    open_example(&tp, "mixture/mixture.drift", data, NULL, 0);
    assert_false(tp.p.model.flags & DRIFT_MODEL_GLM);
    battery(&tp, 5);
    th_draws d;
    sgld(&tp, 0.05, 10, 5000, 15, &d);
    for (size_t i = 0; i < d.n; i++)
        assert_true(isfinite(d.v[i * d.cols + 2]));
    th_draws_free(&d);
    th_close(&tp);
}

static void test_bnn(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"bnn/iris.csv", NULL};
    char h[] = "H=8", k[] = "K=3";
    char *sets[] = {h, k};
    open_example(&tp, "bnn/bnn.drift", data, sets, 2);
    const drift_model *m = &tp.p.model;
    assert_int_equal(m->dim, 8 * 4 + 8 + 3 * 8 + 3);
    assert_int_equal(m->outcome, DRIFT_OUTCOME_CATEGORICAL);
    assert_int_equal(m->n_classes, 3);
    battery(&tp, 6);
    th_draws d;
    sgld(&tp, 1e-4, 15, 6000, 16, &d);
    /* The last draw predicts the training classes far better than chance
     * (1/3): the pipeline learns. */
    double *theta = malloc(m->dim * sizeof *theta);
    drift_err e;
    assert_int_equal(m->unconstrain(m->self, d.v + (d.n - 1) * d.cols + 2,
                                    theta, &e),
                     0);
    size_t N = m->n_rows;
    void *ws = m->workspace_new(m->self, N);
    double *pred = malloc(N * 3 * sizeof *pred), *y = malloc(N * sizeof *y);
    drift_rows all = {NULL, 0, N};
    assert_int_equal(m->predict(m->self, ws, theta, &all, pred, y, &e), 0);
    size_t right = 0;
    for (size_t i = 0; i < N; i++) {
        size_t best = 0;
        assert_true(fabs(pred[i * 3] + pred[i * 3 + 1] + pred[i * 3 + 2] - 1) <
                    1e-12);
        for (size_t j = 1; j < 3; j++)
            if (pred[i * 3 + j] > pred[i * 3 + best])
                best = j;
        right += best + 1 == (size_t)y[i];
    }
    assert_true(right > 0.8 * (double)N);
    m->workspace_free(m->self, ws);
    free(pred);
    free(y);
    free(theta);
    th_draws_free(&d);
    th_close(&tp);
}

static void test_mf(void **state)
{
    (void)state;
    th_problem tp;
    const char *data[] = {"mf/ratings.csv", "mf/mf.json", NULL};
    open_example(&tp, "mf/mf.drift", data, NULL, 0);
    const drift_model *m = &tp.p.model;
    assert_int_equal(m->dim, (20 + 15) * 2);
    /* Output column-major as Stan writes it; theta row-major. */
    assert_string_equal(m->out_names[3], "U.4.1");
    assert_string_equal(m->out_names[20], "U.1.2");
    assert_string_equal(m->theta_names[3], "U.2.2");
    battery(&tp, 7);
    th_draws d;
    sgld(&tp, 1e-4, 30, 5000, 17, &d);
    /* The fitted ratings explain much of the variance (the data's sd is
     * about 1.4, the noise sd 0.5). */
    double *theta = malloc(m->dim * sizeof *theta);
    drift_err e;
    assert_int_equal(m->unconstrain(m->self, d.v + (d.n - 1) * d.cols + 2,
                                    theta, &e),
                     0);
    size_t N = m->n_rows;
    void *ws = m->workspace_new(m->self, N);
    double *pred = malloc(N * sizeof *pred), *y = malloc(N * sizeof *y);
    drift_rows all = {NULL, 0, N};
    assert_int_equal(m->predict(m->self, ws, theta, &all, pred, y, &e), 0);
    double sse = 0, ybar = 0, sst = 0;
    for (size_t i = 0; i < N; i++)
        ybar += y[i] / (double)N;
    for (size_t i = 0; i < N; i++) {
        sse += (pred[i] - y[i]) * (pred[i] - y[i]);
        sst += (y[i] - ybar) * (y[i] - ybar);
    }
    assert_true(sse < 0.5 * sst);
    m->workspace_free(m->self, ws);
    free(pred);
    free(y);
    free(theta);
    th_draws_free(&d);
    th_close(&tp);
}

/* SGLD on the logistic-regression .drift model and on the C plugin, on
 * the same data with the same seed: every posterior mean and sd agrees
 * within 4.5 Monte Carlo standard errors of the difference. */
static void test_logistic_vs_plugin(void **state)
{
    (void)state;
    th_problem a, b;
    const char *data[] = {"logistic/pima-train.csv", NULL};
    open_example(&a, "logistic/logistic.drift", data, NULL, 0);
    assert_true(a.p.model.flags & DRIFT_MODEL_GLM);
    assert_int_equal(a.p.model.outcome, DRIFT_OUTCOME_BINARY);
    battery(&a, 8);
    char *csv = path("logistic/pima-train.csv");
    th_open(&b, "logistic", csv, NULL, 0);
    free(csv);
    assert_int_equal(a.p.model.dim, b.p.model.dim);
    th_draws da, db;
    sgld(&a, 2e-3, 32, 20000, 18, &da);
    sgld(&b, 2e-3, 32, 20000, 18, &db);
    for (size_t j = 0; j < a.p.model.dim; j++) {
        size_t col = 2 + j;
        double ma = th_mean(&da, col, 1000), mb = th_mean(&db, col, 1000);
        double va = th_var(&da, col, 1000), vb = th_var(&db, col, 1000);
        double ea = th_ess(&da, col, 1000), eb = th_ess(&db, col, 1000);
        double se = sqrt(va / ea + vb / eb);
        if (!(fabs(ma - mb) < 4.5 * se))
            fail_msg("w.%zu: mean %.6g (.drift) vs %.6g (plugin), SE %.3g",
                     j + 1, ma, mb, se);
        /* The sd's standard error is about sd / sqrt(2 ESS). */
        double sa = sqrt(va), sb = sqrt(vb);
        double sse = sqrt(va / (2 * ea) + vb / (2 * eb));
        if (!(fabs(sa - sb) < 4.5 * sse))
            fail_msg("w.%zu: sd %.6g (.drift) vs %.6g (plugin), SE %.3g",
                     j + 1, sa, sb, sse);
    }
    th_draws_free(&da);
    th_draws_free(&db);
    th_close(&a);
    th_close(&b);
}

/* The sparse example: sparse rows from a LIBSVM file through
 * the derivative battery, then SGLD on the .drift model and on the C
 * plugin's sparse path, same file and seed: the same model computed two
 * ways, so the draws agree to rounding (compared at 1e-9: the chains see
 * gradients equal to about 1e-15 and SGLD does not amplify that). */
static void test_sparse_vs_plugin(void **state)
{
    (void)state;
    th_problem a, b;
    const char *data[] = {"sparse/train.libsvm", NULL};
    open_example(&a, "sparse/sparse_logistic.drift", data, NULL, 0);
    assert_true(a.p.model.flags & DRIFT_MODEL_GLM);
    assert_int_equal(a.p.model.outcome, DRIFT_OUTCOME_BINARY);
    assert_int_equal(a.p.model.dim, 200);
    assert_int_equal(a.p.model.n_rows, 1000);
    battery(&a, 9);
    char *svm = path("sparse/train.libsvm");
    th_open(&b, "logistic", svm, NULL, 0);
    free(svm);
    th_draws da, db;
    sgld(&a, 1e-3, 50, 3000, 21, &da);
    sgld(&b, 1e-3, 50, 3000, 21, &db);
    assert_int_equal(da.n, db.n);
    for (size_t k = 0; k < da.n * da.cols; k++)
        if (!(fabs(da.v[k] - db.v[k]) <= 1e-9 * fmax(1, fabs(db.v[k]))))
            fail_msg("draw %zu, column %zu: %.17g (.drift) vs %.17g (plugin)",
                     k / da.cols, k % da.cols, da.v[k], db.v[k]);
    th_draws_free(&da);
    th_draws_free(&db);
    th_close(&a);
    th_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_ridge),
        cmocka_unit_test(test_normal_gamma),
        cmocka_unit_test(test_double_well),
        cmocka_unit_test(test_mixture),
        cmocka_unit_test(test_bnn),
        cmocka_unit_test(test_mf),
        cmocka_unit_test(test_logistic_vs_plugin),
        cmocka_unit_test(test_sparse_vs_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
