/* test_optimize.c: drift optimize against closed-form modes: a normal
 * model with flat priors (mu the mean, sigma^2 = S/n without the Jacobian,
 * S/(n-1) with it, on the log scale), a conjugate normal mean, the lp__
 * and derived values written at the mode, CmdStan's optimize header, and
 * densities without a mode (exit 1 with a message, no hang). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

static const double ys[5] = {0.5, 1.5, 2.0, -0.3, 1.1};
static const char *ydata = "y\n0.5\n1.5\n2.0\n-0.3\n1.1\n";

/* Tolerances tight enough that the closed form is met to 1e-7. */
#define TIGHT "--tol-rel-grad", "1e-3", "--tol-rel-obj", "1", "--tol-obj", \
              "1e-20", "--tol-grad", "1e-12", "--tol-param", "1e-14"

static drift_stancsv *optimize(const char *const *args, char *out)
{
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("exit %d\n%s", r.status, r.err);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    assert_int_equal(f->n_rows, 1);
    return f;
}

static void rel(double got, double want, double tol, const char *what)
{
    if (fabs(got - want) > tol * fabs(want))
        fail_msg("%s: %.12g, closed form %.12g", what, got, want);
}

static void test_flat_normal(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y : real }\n"
                            "param { mu : real  sigma : real<lower=0> }\n"
                            "datum { y ~ normal(mu, sigma) }\n"
                            "derived { m2 = 2 * mu }\n",
                            ".drift");
    char *d = th_write_text(ydata, ".csv");
    char out[] = "/tmp/drift-opt-XXXXXX";
    close(mkstemp(out));
    double mean = 0, S = 0;
    for (int i = 0; i < 5; i++)
        mean += ys[i] / 5;
    for (int i = 0; i < 5; i++)
        S += (ys[i] - mean) * (ys[i] - mean);
    /* without the Jacobian (the default) */
    drift_stancsv *f = optimize(
        (const char *[]){"optimize", m, "--data", d, "--seed", "3", "--out",
                         out, TIGHT, NULL},
        out);
    rel(th_csv_value(f, "mu", 0), mean, 1e-7, "mu");
    double s0 = sqrt(S / 5);
    rel(th_csv_value(f, "sigma", 0), s0, 1e-7, "sigma (no Jacobian)");
    rel(th_csv_value(f, "m2", 0), 2 * mean, 1e-7, "m2");
    double lp = 0;
    for (int i = 0; i < 5; i++)
        lp += -0.5 * log(2 * M_PI) - log(s0) -
              0.5 * (ys[i] - mean) * (ys[i] - mean) / (s0 * s0);
    rel(th_csv_value(f, "lp__", 0), lp, 1e-9, "lp__");
    assert_string_equal(drift_stancsv_meta(f, "method"), "optimize");
    assert_string_equal(drift_stancsv_meta(f, "algorithm"), "lbfgs");
    assert_string_equal(drift_stancsv_meta(f, "jacobian"), "0");
    assert_string_equal(f->names[0], "lp__");
    drift_stancsv_free(f);
    /* with it: the mode of log sigma */
    f = optimize((const char *[]){"optimize", m, "--data", d, "--seed", "3",
                                  "--jacobian", "--out", out, TIGHT, NULL},
                 out);
    rel(th_csv_value(f, "mu", 0), mean, 1e-7, "mu (Jacobian)");
    rel(th_csv_value(f, "sigma", 0), sqrt(S / 4), 1e-7, "sigma (Jacobian)");
    assert_string_equal(drift_stancsv_meta(f, "jacobian"), "1");
    drift_stancsv_free(f);
    /* CmdStan's default tolerances */
    f = optimize((const char *[]){"optimize", m, "--data", d, "--seed", "5",
                                  "--out", out, NULL},
                 out);
    rel(th_csv_value(f, "mu", 0), mean, 1e-4, "mu (default tolerances)");
    rel(th_csv_value(f, "sigma", 0), s0, 1e-4, "sigma (default tolerances)");
    drift_stancsv_free(f);
    unlink(out), unlink(m), unlink(d);
    free(m), free(d);
}

/* mu ~ normal(1, 2), y ~ normal(mu, 1): mode (1/4 + sum y) / (1/4 + n). */
static void test_conjugate(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y : real }\nparam { mu : real }\n"
                            "prior { mu ~ normal(1, 2) }\n"
                            "datum { y ~ normal(mu, 1) }\n",
                            ".drift");
    char *d = th_write_text(ydata, ".csv");
    char *i = th_write_text("{\"mu\": -40}", ".json");
    char out[] = "/tmp/drift-opt-XXXXXX";
    close(mkstemp(out));
    double sy = 0;
    for (int k = 0; k < 5; k++)
        sy += ys[k];
    drift_stancsv *f = optimize(
        (const char *[]){"optimize", m, "--data", d, "--init", i, "--out",
                         out, TIGHT, NULL},
        out);
    rel(th_csv_value(f, "mu", 0), (0.25 + sy) / (0.25 + 5), 1e-8, "conjugate mode");
    drift_stancsv_free(f);
    unlink(out), unlink(m), unlink(d), unlink(i);
    free(m), free(d), free(i);
}

/* s ~ dirichlet(2, 3, 4): the mode of s is (a - 1) / (sum a - 3) without
 * the Jacobian, and with it (stick-breaking: independent logit-Beta
 * fractions, each at its Beta's mean) a / sum a. */
static void test_simplex(void **state)
{
    (void)state;
    char *m = th_write_text("data { a : vector[3] }\n"
                            "param { s : simplex[3] }\n"
                            "prior { s ~ dirichlet(a) }\n",
                            ".drift");
    char *d = th_write_text("{\"a\": [2, 3, 4]}", ".json");
    char out[] = "/tmp/drift-opt-XXXXXX";
    close(mkstemp(out));
    static const double want[2][3] = {{1.0 / 6, 2.0 / 6, 3.0 / 6},
                                      {2.0 / 9, 3.0 / 9, 4.0 / 9}};
    for (int jac = 0; jac < 2; jac++) {
        drift_stancsv *f =
            jac ? optimize((const char *[]){"optimize", m, "--data", d,
                                            "--seed", "2", "--jacobian",
                                            "--out", out, TIGHT, NULL},
                           out)
                : optimize((const char *[]){"optimize", m, "--data", d,
                                            "--seed", "2", "--out", out,
                                            TIGHT, NULL},
                           out);
        rel(th_csv_value(f, "s.1", 0), want[jac][0], 1e-7, "s.1");
        rel(th_csv_value(f, "s.2", 0), want[jac][1], 1e-7, "s.2");
        rel(th_csv_value(f, "s.3", 0), want[jac][2], 1e-7, "s.3");
        drift_stancsv_free(f);
    }
    unlink(out), unlink(m), unlink(d);
    free(m), free(d);
}

static void test_no_mode(void **state)
{
    (void)state;
    char out[] = "/tmp/drift-opt-XXXXXX";
    close(mkstemp(out));
    const char *texts[2] = {"param { mu : real }\nprior { target += mu }\n",
                            "param { s : real<lower=0> }\n"
                            "prior { target += -log(s) }\n"};
    for (int k = 0; k < 2; k++) {
        char *m = th_write_text(texts[k], ".drift");
        th_cli r = th_cli_run((const char *[]){"optimize", m, "--seed", "1",
                                               "--out", out, NULL});
        if (r.status != 1 || !strstr(r.err, "may have no mode"))
            fail_msg("model %d: exit %d, %s", k, r.status, r.err);
        th_cli_free(&r);
        unlink(m);
        free(m);
    }
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_normal),
        cmocka_unit_test(test_conjugate),
        cmocka_unit_test(test_simplex),
        cmocka_unit_test(test_no_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
