/* test_laplace.c: drift laplace against the closed form of a normal
 * model with flat priors.  With the Jacobian (the default, CmdStan's),
 * the approximation on (mu, log sigma) at the mode has mean (ybar,
 * log sigma-hat), sigma-hat^2 = S/(n-1), and independent coordinates
 * with sds sigma-hat/sqrt(n) and 1/sqrt(2(n-1)); without it the mode is
 * sigma^2 = S/n and log sigma's sd 1/sqrt(2n).  Means and sds of 20,000
 * draws are judged within 4 Monte Carlo standard errors; log_g__ is
 * -z'z/2 (mean -d/2, variance d/2: -1 and 1 here); a --mode file of drift optimize gives
 * the same approximation; no mode, a mode file of another model and a
 * mode file of several rows are refused. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

#define N 200
#define DRAWS 20000

static const char *model_text = "rows { y : real }\n"
                                "param { mu : real  sigma : real<lower=0> }\n"
                                "datum { y ~ normal(mu, sigma) }\n";

/* The data (fixed, from a closed-form generator: y_i = 1.5 + 2 sin(i)). */
static char *data_file(double *ybar, double *S)
{
    size_t cap = 32 * N + 8, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text + len, cap - len, "y\n");
    double s = 0, ss = 0;
    for (int i = 1; i <= N; i++) {
        double y = 1.5 + 2.0 * sin((double)i);
        s += y;
        len += (size_t)snprintf(text + len, cap - len, "%.17g\n", y);
    }
    *ybar = s / N;
    for (int i = 1; i <= N; i++) {
        double r = 1.5 + 2.0 * sin((double)i) - *ybar;
        ss += r * r;
    }
    *S = ss;
    char *path = th_write_text(text, ".csv");
    free(text);
    return path;
}

/* Mean and sd of column name (log of it when take_log) over f's rows. */
static void moments(const drift_stancsv *f, const char *name, int take_log,
                    double *mean, double *sd)
{
    long c = drift_stancsv_column(f, name);
    if (c < 0)
        fail_msg("no column %s", name);
    double s = 0, ss = 0;
    size_t n = f->n_rows;
    for (size_t r = 0; r < n; r++) {
        double v = f->values[r * f->n_cols + (size_t)c];
        if (take_log)
            v = log(v);
        s += v;
        ss += v * v;
    }
    *mean = s / (double)n;
    *sd = sqrt(ss / (double)n - *mean * *mean);
}

/* A mean within 4 MC errors of want (sd the target's sd), an sd within 4
 * MC errors of want_sd (the sd of a normal sample's sd: sd / sqrt(2n)). */
static void judge(const drift_stancsv *f, const char *name, int take_log,
                  double want, double want_sd)
{
    double m, s;
    moments(f, name, take_log, &m, &s);
    double n = (double)f->n_rows;
    if (fabs(m - want) > 4 * want_sd / sqrt(n))
        fail_msg("%s: mean %.6g, closed form %.6g (MC se %.3g)", name, m,
                 want, want_sd / sqrt(n));
    if (fabs(s - want_sd) > 4 * want_sd / sqrt(2 * n))
        fail_msg("%s: sd %.6g, closed form %.6g (MC se %.3g)", name, s,
                 want_sd, want_sd / sqrt(2 * n));
}

static void test_normal(void **state)
{
    (void)state;
    double ybar, S;
    char *d = data_file(&ybar, &S);
    char *m = th_write_text(model_text, ".drift");
    char out[] = "/tmp/drift-laplace-XXXXXX";
    close(mkstemp(out));
    for (int jac = 1; jac >= 0; jac--) {
        const char *args[] = {"laplace", m, "--data", d, "--seed", "5",
                              "--draws", "20000", "--out", out,
                              jac ? "--jacobian" : "--no-jacobian", NULL};
        th_cli r = th_cli_run(args);
        if (r.status)
            fail_msg("exit %d\n%s", r.status, r.err);
        th_cli_free(&r);
        drift_stancsv *f = th_csv_read(out);
        assert_int_equal(f->n_rows, DRAWS);
        double s2 = S / (jac ? N - 1 : N);
        judge(f, "mu", 0, ybar, sqrt(s2 / N));
        judge(f, "sigma", 1, 0.5 * log(s2),
              1.0 / sqrt(2.0 * (jac ? N - 1 : N)));
        /* log_g__ = -z'z/2, z'z ~ chi-square(2): mean -1, sd 1. */
        double gm, gs;
        moments(f, "log_g__", 0, &gm, &gs);
        if (fabs(gm + 1.0) > 4.0 / sqrt((double)DRAWS) ||
            fabs(gs - 1.0) > 0.05)
            fail_msg("log_g__: mean %.5g (-1), sd %.5g (1)", gm, gs);
        long lp = drift_stancsv_column(f, "log_p__");
        assert_true(lp >= 0);
        for (size_t k = 0; k < f->n_rows; k++)
            assert_true(isfinite(f->values[k * f->n_cols + (size_t)lp]));
        drift_stancsv_free(f);
    }
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

/* A mode given as drift optimize's file: the same approximation (both
 * modes meet the closed form, so the draws agree to the optimizer's
 * tolerance). */
static void test_mode_file(void **state)
{
    (void)state;
    double ybar, S;
    char *d = data_file(&ybar, &S);
    char *m = th_write_text(model_text, ".drift");
    char mode[] = "/tmp/drift-laplace-mode-XXXXXX",
         a[] = "/tmp/drift-laplace-a-XXXXXX";
    close(mkstemp(mode));
    close(mkstemp(a));
    const char *opt[] = {"optimize", m, "--data", d, "--jacobian", "--seed",
                         "2", "--tol-rel-grad", "1e-3", "--out", mode, NULL};
    th_cli r = th_cli_run(opt);
    if (r.status)
        fail_msg("optimize: exit %d\n%s", r.status, r.err);
    th_cli_free(&r);
    const char *lap[] = {"laplace", m, "--data", d, "--mode", mode, "--seed",
                         "5", "--draws", "20000", "--out", a, NULL};
    r = th_cli_run(lap);
    if (r.status)
        fail_msg("laplace --mode: exit %d\n%s", r.status, r.err);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(a);
    double s2 = S / (N - 1);
    judge(f, "mu", 0, ybar, sqrt(s2 / N));
    judge(f, "sigma", 1, 0.5 * log(s2), 1.0 / sqrt(2.0 * (N - 1)));
    drift_stancsv_free(f);
    /* A mode file of another model: refused naming the missing column. */
    char *other = th_write_text("lp__,alpha\n0,1\n", ".csv");
    const char *bad[] = {"laplace", m, "--data", d, "--mode", other, "--out",
                         a, NULL};
    r = th_cli_run(bad);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "mu"))
        fail_msg("another model's mode file: %s", r.err);
    th_cli_free(&r);
    /* Several rows are not a mode. */
    char *rows = th_write_text("lp__,mu,sigma\n0,1,1\n0,2,1\n", ".csv");
    const char *two[] = {"laplace", m, "--data", d, "--mode", rows, "--out",
                         a, NULL};
    r = th_cli_run(two);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "2 rows"))
        fail_msg("a mode file of two rows: %s", r.err);
    th_cli_free(&r);
    unlink(other);
    unlink(rows);
    unlink(mode);
    unlink(a);
    unlink(m);
    unlink(d);
    free(other);
    free(rows);
    free(m);
    free(d);
}

/* A correlated Gaussian, where the approximation is exact: a ~ N(0, 1),
 * b | a ~ N(a, 0.5), so var a = 1, var b = 1.25, cov = 1 (a draw solved
 * with the precision's factor the wrong way round has another
 * covariance). */
static void test_correlated(void **state)
{
    (void)state;
    char *m = th_write_text("param { a : real  b : real }\n"
                            "prior { a ~ normal(0, 1)  b ~ normal(a, 0.5) }\n",
                            ".drift");
    char out[] = "/tmp/drift-laplace-XXXXXX";
    close(mkstemp(out));
    const char *args[] = {"laplace", m, "--seed", "9", "--draws", "20000",
                          "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("exit %d\n%s", r.status, r.err);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    long ca = drift_stancsv_column(f, "a"), cb = drift_stancsv_column(f, "b");
    assert_true(ca >= 0 && cb >= 0);
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, n = (double)f->n_rows;
    for (size_t k = 0; k < f->n_rows; k++) {
        double x = f->values[k * f->n_cols + (size_t)ca],
               y = f->values[k * f->n_cols + (size_t)cb];
        sa += x;
        sb += y;
        saa += x * x;
        sbb += y * y;
        sab += x * y;
    }
    double va = saa / n - (sa / n) * (sa / n),
           vb = sbb / n - (sb / n) * (sb / n),
           cab = sab / n - (sa / n) * (sb / n);
    /* Sample (co)variances of 20,000 draws: relative se about 1-1.5 %. */
    if (fabs(va - 1.0) > 0.05 || fabs(vb - 1.25) > 0.06 ||
        fabs(cab - 1.0) > 0.05)
        fail_msg("covariance (%.4g, %.4g, %.4g), exact (1, 1.25, 1)", va, vb,
                 cab);
    drift_stancsv_free(f);
    unlink(out);
    unlink(m);
    free(m);
}

/* A density without a mode (a flat direction): refused, no hang. */
static void test_no_mode(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y : real }\n"
                            "param { mu : real  nu : real }\n"
                            "datum { y ~ normal(mu, 1) }\n",
                            ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n", ".csv");
    char out[] = "/tmp/drift-laplace-XXXXXX";
    close(mkstemp(out));
    const char *args[] = {"laplace", m, "--data", d, "--out", out, NULL};
    th_cli r = th_cli_run(args);
    assert_int_equal(r.status, 1);
    if (!strstr(r.err, "not negative definite") &&
        !strstr(r.err, "did not converge") && !strstr(r.err, "no mode"))
        fail_msg("no mode: %s", r.err);
    th_cli_free(&r);
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

/* drift laplace at --mode m of x ~ normal(0, 1): its stderr and the
 * shift in the file's closing comments. */
static th_cli laplace_at(double mode, double *shift, double *k)
{
    char *m = th_write_text("param { x : real }\n"
                            "prior { x ~ normal(0, 1) }\n",
                            ".drift");
    char text[64];
    snprintf(text, sizeof text, "lp__,x\n0,%.17g\n", mode);
    char *mf = th_write_text(text, ".csv");
    char out[] = "/tmp/drift-laplace-XXXXXX";
    close(mkstemp(out));
    const char *args[] = {"laplace", m, "--mode", mf, "--seed", "5",
                          "--draws", "4000", "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("laplace at %g: exit %d\n%s", mode, r.status, r.err);
    *shift = NAN;
    *k = NAN;
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "# importance-weighted mean shift = %lf", shift);
        sscanf(line, "# Pareto k = %lf", k);
    }
    fclose(f);
    unlink(out);
    unlink(mf);
    unlink(m);
    free(mf);
    free(m);
    return r;
}

static void test_checks(void **state)
{
    (void)state;
    double shift, k;
    th_cli r = laplace_at(0, &shift, &k);
    if (strstr(r.err, "warning") || !(fabs(shift) < 1e-9) || !(k <= 0.5))
        fail_msg("exact approximation: shift %g, k %g\n%s", shift, k,
                 r.err);
    th_cli_free(&r);
    r = laplace_at(0.3, &shift, &k);
    if (strstr(r.err, "warning") || !(k < 0.7))
        fail_msg("mode 0.3: shift %g, k %g\n%s", shift, k, r.err);
    th_cli_free(&r);
    /* MC error of the shift: the plain mean's 1/sqrt(4000) and the
     * weighted one's about 1/sqrt(ESS), ESS = 4000 exp(-0.64). */
    r = laplace_at(0.8, &shift, &k);
    double se = sqrt(1.0 / 4000 + exp(0.64) / 4000);
    if (!strstr(r.err, "moves the mean of x") || !(k < 0.7) ||
        !(fabs(shift + 0.8) < 5 * se))
        fail_msg("mode 0.8: shift %g (closed form -0.8, se %.2g), k %g\n%s",
                 shift, se, k, r.err);
    th_cli_free(&r);
    r = laplace_at(4, &shift, &k);
    if (!strstr(r.err, "Pareto k") || !strstr(r.err, "> 0.7") || !(k > 0.7))
        fail_msg("mode 4: k %g\n%s", k, r.err);
    th_cli_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal),
        cmocka_unit_test(test_mode_file),
        cmocka_unit_test(test_correlated),
        cmocka_unit_test(test_no_mode),
        cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
