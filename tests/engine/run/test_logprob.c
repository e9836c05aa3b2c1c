/* test_logprob.c: drift log-prob against closed forms: the log density
 * and its gradient on the unconstrained scale at a JSON point and at every
 * draw of a Stan CSV file (columns found by name, warmup rows skipped),
 * with and without the constraint Jacobian; the columns' names; a draws
 * file of another model refused naming the missing column. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *model_text =
    "rows { y : real }\n"
    "param { mu : real  sigma : real<lower=0> }\n"
    "prior { mu ~ normal(0, 10)  sigma ~ exponential(1) }\n"
    "datum { y ~ normal(mu, sigma) }\n";

static const double ys[3] = {0.5, 1.5, 2.0};

/* Closed form at (mu, sigma): lp without the Jacobian, and the gradient
 * in (mu, log sigma). */
static void closed_form(double mu, double s, int jac, double *lp, double *g)
{
    double l = -0.5 * log(2 * M_PI) - log(10.0) - 0.5 * mu * mu / 100 - s;
    double dmu = -mu / 100, ds = -1, ss = 0;
    for (int i = 0; i < 3; i++) {
        double r = ys[i] - mu;
        l += -0.5 * log(2 * M_PI) - log(s) - 0.5 * r * r / (s * s);
        dmu += r / (s * s);
        ss += r * r;
    }
    ds += -3 / s + ss / (s * s * s);
    *lp = l + (jac ? log(s) : 0);
    g[0] = dmu;
    g[1] = ds * s + (jac ? 1 : 0);
}

/* The rows of values after the column row of a log-prob output. */
static size_t read_rows(const char *text, const char *header, double *v,
                        size_t max_rows)
{
    const char *p = strstr(text, header);
    if (!p)
        fail_msg("no column row '%s' in:\n%s", header, text);
    p = strchr(p, '\n') + 1;
    size_t n = 0;
    while (*p && n < max_rows) {
        if (sscanf(p, "%lf,%lf,%lf", &v[3 * n], &v[3 * n + 1],
                   &v[3 * n + 2]) != 3)
            fail_msg("bad row: %s", p);
        n++;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    return n;
}

static void near(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-12 * fmax(1, fabs(want)))
        fail_msg("%s: %.17g, closed form %.17g", what, got, want);
}

static void test_point(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n2.0\n", ".csv");
    char *p = th_write_text("{\"mu\": 1.2, \"sigma\": 0.8}", ".json");
    for (int jac = 0; jac < 2; jac++) {
        th_cli r = th_cli_run((const char *[]){
            "log-prob", m, "--data", d, "--point", p,
            jac ? "--jacobian" : "--no-jacobian", NULL});
        if (r.status)
            fail_msg("exit %d: %s", r.status, r.err);
        double v[3], lp, g[2];
        assert_int_equal(read_rows(r.out, "lp__,g_mu,g_sigma\n", v, 1), 1);
        closed_form(1.2, 0.8, jac, &lp, g);
        near(v[0], lp, "lp__");
        near(v[1], g[0], "g_mu");
        near(v[2], g[1], "g_sigma");
        th_cli_free(&r);
    }
    /* the Jacobian is the default, as CmdStan's */
    th_cli r = th_cli_run(
        (const char *[]){"log-prob", m, "--data", d, "--point", p, NULL});
    double v[3], lp, g[2];
    assert_int_equal(read_rows(r.out, "lp__,g_mu,g_sigma\n", v, 1), 1);
    closed_form(1.2, 0.8, 1, &lp, g);
    near(v[0], lp, "default lp__");
    th_cli_free(&r);
    unlink(m), unlink(d), unlink(p);
    free(m), free(d), free(p);
}

static void test_draws(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n2.0\n", ".csv");
    /* CmdStan-style: columns in another order, extra ones, warmup rows
     * saved before "# Adaptation terminated" */
    char *f = th_write_text("# model = other\n# save_warmup = 1\n"
                            "lp__,accept_stat__,sigma,extra,mu\n"
                            "0,0,5,9,9\n"
                            "# Adaptation terminated\n"
                            "0,0,0.8,1,1.2\n0,0,1.7,1,-0.4\n"
                            "0,0,0.3,1,2.5\n",
                            ".csv");
    th_cli r = th_cli_run((const char *[]){"log-prob", m, "--data", d,
                                           "--draws", f, "--no-jacobian",
                                           NULL});
    if (r.status)
        fail_msg("exit %d: %s", r.status, r.err);
    double v[12];
    assert_int_equal(read_rows(r.out, "lp__,g_mu,g_sigma\n", v, 4), 3);
    const double pts[3][2] = {{1.2, 0.8}, {-0.4, 1.7}, {2.5, 0.3}};
    for (int k = 0; k < 3; k++) {
        double lp, g[2];
        closed_form(pts[k][0], pts[k][1], 0, &lp, g);
        near(v[3 * k], lp, "lp__ of a draw");
        near(v[3 * k + 1], g[0], "g_mu of a draw");
        near(v[3 * k + 2], g[1], "g_sigma of a draw");
    }
    th_cli_free(&r);
    /* a draws file of another model */
    char *o = th_write_text("lp__,nu\n0,1\n", ".csv");
    r = th_cli_run((const char *[]){"log-prob", m, "--data", d, "--draws", o,
                                    NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no column 'mu'"));
    th_cli_free(&r);
    /* neither or both inputs */
    r = th_cli_run((const char *[]){"log-prob", m, "--data", d, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--draws"));
    th_cli_free(&r);
    unlink(m), unlink(d), unlink(f), unlink(o);
    free(m), free(d), free(f), free(o);
}

/* The gradient's columns name the unconstrained coordinates: a simplex of
 * 3 has 2. */
static void test_names(void **state)
{
    (void)state;
    char *m = th_write_text("data { a : vector[3] }\n"
                            "param { s : simplex[3] }\n"
                            "prior { s ~ dirichlet(a) }\n",
                            ".drift");
    char *d = th_write_text("{\"a\": [2, 3, 4]}", ".json");
    char *p = th_write_text("{\"s\": [0.2, 0.3, 0.5]}", ".json");
    th_cli r = th_cli_run((const char *[]){"log-prob", m, "--data", d,
                                           "--point", p, "--no-jacobian",
                                           NULL});
    if (r.status)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "lp__,g_s.1,g_s.2\n"));
    /* Dirichlet(2, 3, 4) at (0.2, 0.3, 0.5): log Gamma(9) - log Gamma(2)
     * - log Gamma(3) - log Gamma(4) + log 0.2 + 2 log 0.3 + 3 log 0.5 */
    double want = lgamma(9) - lgamma(2) - lgamma(3) - lgamma(4) + log(0.2) +
                  2 * log(0.3) + 3 * log(0.5);
    double lp;
    const char *row = strstr(r.out, "g_s.2\n") + 6;
    assert_int_equal(sscanf(row, "%lf", &lp), 1);
    near(lp, want, "Dirichlet lp__");
    th_cli_free(&r);
    unlink(m), unlink(p), unlink(d);
    free(m), free(p), free(d);
}

/* rstan 2.21's log_prob and grad_log_prob (adjust_transform TRUE and
 * FALSE) of the same model written with target += ..._lpdf, at
 * mu = 1.2, sigma = 0.8, s = (0.2, 0.3, 0.5), y as above: figures
 * computed once with Debian's rstan and fixed here. */
static void test_rstan_reference(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y : real }\ndata { a : vector[3] }\n"
                            "param { mu : real  sigma : real<lower=0>  "
                            "s : simplex[3] }\n"
                            "prior { mu ~ normal(0, 10)  sigma ~ "
                            "exponential(1)  s ~ dirichlet(a) }\n"
                            "datum { y ~ normal(mu, sigma) }\n",
                            ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n2.0\n-0.3\n1.1\n", ".csv");
    char *a = th_write_text("{\"a\": [2, 3, 4]}", ".json");
    char *p = th_write_text(
        "{\"mu\": 1.2, \"sigma\": 0.8, \"s\": [0.2, 0.3, 0.5]}", ".json");
    static const double want[2][5] = {
        {-8.20357734545959, -1.887, -0.3625, -0.2, 0.125},
        {-11.9332787940938, -1.887, 0.6375, 0.2, 0.375}};
    for (int jac = 0; jac < 2; jac++) {
        th_cli r = th_cli_run((const char *[]){
            "log-prob", m, "--data", d, "--data", a, "--point", p,
            jac ? "--jacobian" : "--no-jacobian", NULL});
        if (r.status)
            fail_msg("exit %d: %s", r.status, r.err);
        const char *row = strstr(r.out, "lp__,g_mu,g_sigma,g_s.1,g_s.2\n");
        assert_non_null(row);
        double v[5];
        assert_int_equal(sscanf(strchr(row, '\n') + 1, "%lf,%lf,%lf,%lf,%lf",
                                &v[0], &v[1], &v[2], &v[3], &v[4]),
                         5);
        for (int k = 0; k < 5; k++)
            if (fabs(v[k] - want[jac][k]) > 1e-12 * fmax(1, fabs(want[jac][k])))
                fail_msg("jacobian %d, column %d: %.15g, rstan %.15g", jac, k,
                         v[k], want[jac][k]);
        th_cli_free(&r);
    }
    unlink(m), unlink(d), unlink(a), unlink(p);
    free(m), free(d), free(a), free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_point),
        cmocka_unit_test(test_rstan_reference),
        cmocka_unit_test(test_draws),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
