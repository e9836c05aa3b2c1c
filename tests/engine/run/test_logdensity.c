/* test_logdensity.c: the log density without the constraint Jacobians:
 * a language model's log_jacobian against the closed forms of each
 * transform (lower, upper and two-sided bounds, simplex,
 * cholesky_factor_corr, a Stan bound that depends on another parameter),
 * its gradient against finite differences, the density of the constrained
 * values that remains against closed-form log densities, and
 * drift_logdensity's refusal of a C model that does not report its
 * Jacobian. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"
#include "engine/run/logdensity.h"
#include "harness.h"
#include "langtest.h"

static double logistic(double u) { return 1 / (1 + exp(-u)); }

static double norm_lpdf(double x, double mu, double s)
{
    return -0.5 * log(2 * M_PI) - log(s) - 0.5 * (x - mu) * (x - mu) / (s * s);
}

/* log_jacobian's gradient against central differences of its value. */
static void check_jac_gradient(const drift_model *m, void *ws,
                               const double *theta)
{
    size_t d = m->dim;
    double *g = calloc(d, sizeof *g), *t = malloc(d * sizeof *t);
    drift_err e = {{0}};
    double lj;
    assert_int_equal(m->log_jacobian(m->self, ws, theta, &lj, g, &e), 0);
    for (size_t j = 0; j < d; j++) {
        double h = 1e-6, lp, lm;
        memcpy(t, theta, d * sizeof *t);
        t[j] += h;
        assert_int_equal(m->log_jacobian(m->self, ws, t, &lp, NULL, &e), 0);
        t[j] -= 2 * h;
        assert_int_equal(m->log_jacobian(m->self, ws, t, &lm, NULL, &e), 0);
        double fd = (lp - lm) / (2 * h);
        if (fabs(fd - g[j]) > 1e-6 * fmax(1, fabs(g[j])))
            fail_msg("d lj / d theta[%zu]: %.10g, differences %.10g", j, g[j],
                     fd);
    }
    free(g), free(t);
}

static const char *model_drift =
    "param { a : real<lower=1>  b : real<upper=2>\n"
    "        c : real<lower=-1, upper=3>  s : simplex[3]\n"
    "        L : cholesky_factor_corr[3] }\n"
    "prior { a ~ normal(1.5, 1)  b ~ normal(0, 2)  c ~ normal(1, 1) }\n";

static void test_drift_transforms(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm, model_drift, NULL, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->dim, 8);
    assert_non_null(m->log_jacobian);
    void *ws = m->workspace_new(m->self, 1);
    assert_non_null(ws);
    const double pts[3][8] = {
        {0.3, -0.4, 0.7, 0.2, -1.1, 0.5, -0.3, 0.8},
        {-1.2, 1.5, -2.0, -0.7, 0.9, -1.4, 1.1, -0.2},
        {0, 0, 0, 0, 0, 0, 0, 0}};
    for (int p = 0; p < 3; p++) {
        const double *u = pts[p];
        /* closed forms, from theta alone */
        double lj = u[0] + u[1];
        double sc = logistic(u[2]);
        lj += log(4.0) + log(sc) + log1p(-sc);
        double z1 = logistic(u[3] - log(2.0)), z2 = logistic(u[4]);
        double x1 = z1, x2 = (1 - x1) * z2;
        lj += log(z1) + log1p(-z1) + log(1 - x1) + log(z2) + log1p(-z2);
        double r10 = tanh(u[5]), r20 = tanh(u[6]), r21 = tanh(u[7]);
        lj += log1p(-r10 * r10) + log1p(-r20 * r20) + log1p(-r21 * r21) +
              0.5 * log1p(-r20 * r20);
        double got, lp;
        drift_err e = {{0}};
        assert_int_equal(m->log_jacobian(m->self, ws, u, &got, NULL, &e), 0);
        if (fabs(got - lj) > 1e-12 * fmax(1, fabs(lj)))
            fail_msg("point %d: log_jacobian %.15g, closed form %.15g", p, got,
                     lj);
        /* what is left is the density of the constrained values */
        double out[3 + 3 + 9];
        assert_int_equal(m->n_out, 15);
        m->constrain(m->self, u, out);
        assert_true(fabs(out[3] - x1) < 1e-14 && fabs(out[4] - x2) < 1e-14);
        /* L column-major: L.2.1, L.3.1, L.3.2 */
        assert_true(fabs(out[6 + 1] - r10) < 1e-14);
        assert_true(fabs(out[6 + 2] - r20) < 1e-14);
        assert_true(fabs(out[6 + 5] - r21 * sqrt(1 - r20 * r20)) < 1e-14);
        assert_int_equal(m->log_prior(m->self, ws, u, &lp, NULL, &e), 0);
        double want = norm_lpdf(out[0], 1.5, 1) + norm_lpdf(out[1], 0, 2) +
                      norm_lpdf(out[2], 1, 1);
        if (fabs(lp - got - want) > 1e-12 * fmax(1, fabs(want)))
            fail_msg("point %d: log_prior - lj %.15g, closed form %.15g", p,
                     lp - got, want);
        check_jac_gradient(m, ws, u);
    }
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

/* A model without constraints reports lj = 0 and a zero gradient. */
static void test_unconstrained_zero(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm, "param { w : vector[2] }\nprior { w ~ normal(0, 1) }\n",
               NULL, NULL, 0);
    const drift_model *m = &lm.m;
    void *ws = m->workspace_new(m->self, 1);
    double th[2] = {0.4, -2}, g[2] = {7, 7}, lj = 7;
    drift_err e = {{0}};
    assert_int_equal(m->log_jacobian(m->self, ws, th, &lj, g, &e), 0);
    assert_true(lj == 0 && g[0] == 0 && g[1] == 0);
    assert_true(drift_logdensity_unconstrained(m));
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

/* Stan: a bound that depends on another parameter is drift's own
 * transform written into the prior; its log-Jacobian counts as one. */
static void test_stan_param_bound(void **state)
{
    (void)state;
    char *path = th_write_text(
        "parameters { real<lower=0> a; real<lower=0, upper=a> b;\n"
        "  real<lower=a> c; }\n"
        "model { a ~ exponential(1); b ~ normal(0, 1); c ~ normal(0, 2); }\n",
        ".stan");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    drift_lang_spec spec = {.path = path, .diag = f};
    drift_model m;
    drift_err e = {{0}};
    int rc = drift_lang_open(&spec, &m, &e);
    fclose(f);
    if (rc)
        fail_msg("did not open: %s\n%s", e.msg, buf);
    assert_int_equal(m.dim, 3);
    void *ws = m.workspace_new(m.self, 1);
    const double pts[2][3] = {{0.3, -0.6, 1.2}, {-0.8, 1.4, -0.5}};
    for (int p = 0; p < 2; p++) {
        const double *u = pts[p];
        double a = exp(u[0]), sb = logistic(u[1]), b = a * sb,
               c = a + exp(u[2]);
        double lj = u[0] + log(a) + log(sb) + log1p(-sb) + u[2];
        double got, lp;
        assert_int_equal(m.log_jacobian(m.self, ws, u, &got, NULL, &e), 0);
        if (fabs(got - lj) > 1e-12 * fmax(1, fabs(lj)))
            fail_msg("point %d: log_jacobian %.15g, closed form %.15g", p, got,
                     lj);
        assert_int_equal(m.log_prior(m.self, ws, u, &lp, NULL, &e), 0);
        double want = -a + norm_lpdf(b, 0, 1) + norm_lpdf(c, 0, 2);
        /* Stan's ~ may drop constants: compare differences of points */
        static double first_diff;
        if (p == 0)
            first_diff = lp - got - want;
        else if (fabs(lp - got - want - first_diff) > 1e-10)
            fail_msg("log_prior - lj differs from the closed form by %.15g "
                     "at one point and %.15g at another",
                     first_diff, lp - got - want);
        check_jac_gradient(&m, ws, u);
    }
    m.workspace_free(m.self, ws);
    m.free(m.self);
    unlink(path);
    free(path);
    free(buf);
}

/* ---- a C model that does not report its Jacobian ---------------------- */

static const char *const cnames[] = {"s"};

static void *c_ws_new(const void *self, size_t n)
{
    (void)self, (void)n;
    return malloc(1);
}
static void c_ws_free(const void *self, void *ws)
{
    (void)self;
    free(ws);
}
/* log prior -theta^2/2, one row with log term theta */
static int c_prior(const void *self, void *ws, const double *t, double *lp,
                   double *g, drift_err *e)
{
    (void)self, (void)ws, (void)e;
    *lp = -0.5 * t[0] * t[0];
    if (g)
        g[0] = -t[0];
    return 0;
}
static int c_lik(const void *self, void *ws, const double *t,
                 const drift_rows *b, double *rows, double *sum, double *gs,
                 double *gr, drift_err *e)
{
    (void)self, (void)ws, (void)e, (void)rows, (void)gr;
    if (sum)
        *sum = (double)b->n * t[0];
    if (gs)
        gs[0] = (double)b->n;
    return 0;
}
static void c_exp(const void *self, const double *t, double *o)
{
    (void)self;
    o[0] = exp(t[0]);
}
static void c_id(const void *self, const double *t, double *o)
{
    (void)self;
    o[0] = t[0];
}

static void test_c_model_refused(void **state)
{
    (void)state;
    drift_model m;
    memset(&m, 0, sizeof m);
    m.abi_version = DRIFT_MODEL_ABI_VERSION;
    m.struct_size = sizeof m;
    m.dim = m.n_out = 1;
    m.n_rows = 3;
    m.out_names = cnames;
    m.workspace_new = c_ws_new;
    m.workspace_free = c_ws_free;
    m.log_prior = c_prior;
    m.log_lik = c_lik;
    m.constrain = c_exp;
    drift_logdensity *ld;
    drift_err e = {{0}};
    assert_int_equal(drift_logdensity_new(&ld, &m, 0, "drift log-prob", &e),
                     DRIFT_EINVAL);
    assert_non_null(strstr(e.msg, "does not report"));
    assert_non_null(strstr(e.msg, "--jacobian"));
    assert_null(ld);
    /* with the Jacobian asked for, it evaluates: -t^2/2 + 3 t */
    assert_int_equal(drift_logdensity_new(&ld, &m, 1, "x", &e), 0);
    double th = 0.5, lp, g;
    assert_int_equal(drift_logdensity_eval(ld, &th, &lp, &g, &e), 0);
    assert_true(fabs(lp - (-0.125 + 1.5)) < 1e-15 && fabs(g - 2.5) < 1e-15);
    drift_logdensity_free(ld);
    /* unconstrained (constrain the identity): lj = 0, no refusal */
    m.constrain = c_id;
    assert_int_equal(drift_logdensity_new(&ld, &m, 0, "x", &e), 0);
    assert_int_equal(drift_logdensity_eval(ld, &th, &lp, &g, &e), 0);
    assert_true(fabs(lp - 1.375) < 1e-15 && fabs(g - 2.5) < 1e-15);
    drift_logdensity_free(ld);
}

/* Without the Jacobian, drift_logdensity subtracts exactly lj. */
static void test_eval_without_jacobian(void **state)
{
    (void)state;
    lt_model lm;
    static const char *const data[] = {"csv:y\n0.5\n1.5\n2.0\n", NULL};
    lt_open_ok(&lm,
               "rows { y : real }\nparam { sigma : real<lower=0> }\n"
               "prior { sigma ~ exponential(1) }\n"
               "datum { y ~ normal(0, sigma) }\n",
               data, NULL, 0);
    const drift_model *m = &lm.m;
    drift_logdensity *lj1, *lj0;
    drift_err e = {{0}};
    assert_int_equal(drift_logdensity_new(&lj1, m, 1, "x", &e), 0);
    assert_int_equal(drift_logdensity_new(&lj0, m, 0, "x", &e), 0);
    double u = 0.3, s = exp(u), a, b, ga, gb;
    assert_int_equal(drift_logdensity_eval(lj1, &u, &a, &ga, &e), 0);
    assert_int_equal(drift_logdensity_eval(lj0, &u, &b, &gb, &e), 0);
    double want0 = -s + norm_lpdf(0.5, 0, s) + norm_lpdf(1.5, 0, s) +
                   norm_lpdf(2.0, 0, s);
    assert_true(fabs(b - want0) < 1e-12);
    assert_true(fabs(a - (want0 + u)) < 1e-12);
    /* d/du of want0: (-1 - 3/s + sum y^2 / s^3) s */
    double dg = (-1 - 3 / s + (0.25 + 2.25 + 4.0) / (s * s * s)) * s;
    assert_true(fabs(gb - dg) < 1e-10);
    assert_true(fabs(ga - (dg + 1)) < 1e-10);
    drift_logdensity_free(lj1);
    drift_logdensity_free(lj0);
    lt_close(&lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drift_transforms),
        cmocka_unit_test(test_unconstrained_zero),
        cmocka_unit_test(test_stan_param_bound),
        cmocka_unit_test(test_c_model_refused),
        cmocka_unit_test(test_eval_without_jacobian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
