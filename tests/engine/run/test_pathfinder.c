/* test_pathfinder.c: Pathfinder (engine/run/pathfinder.c) and drift
 * pathfinder against independent references: a correlated Gaussian's
 * closed-form mean and covariance; a logistic regression's mode and
 * Laplace sds from a Newton fit computed here; PSIS's k-hat on
 * importance ratios of two Gaussians whose tail index is known; the CSV
 * CmdStan's pathfinder writes; drift sample --init pathfinder; and the
 * refusals (no mode, options out of bounds). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/pathfinder.h"
#include "engine/run/rng.h"
#include "engine/stats/stancsv.h"
#include "harness.h"

/* A fresh temporary output path (the file removed: drift writes it). */
static void tmp_out(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/drift-pathfinder-%s-XXXXXX", tag);
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
    unlink(buf);
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, ".csv");
}

static th_cli run_ok(const char *const *args)
{
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("drift %s: exit %d\n%s", args[0], r.status, r.err);
    return r;
}

/* Column name's mean and the covariance of columns a and b over f. */
static double col_mean(const drift_stancsv *f, const char *name)
{
    long c = drift_stancsv_column(f, name);
    if (c < 0)
        fail_msg("no column %s", name);
    double s = 0;
    for (size_t r = 0; r < f->n_rows; r++)
        s += f->values[r * f->n_cols + (size_t)c];
    return s / (double)f->n_rows;
}

static double col_cov(const drift_stancsv *f, const char *a, const char *b)
{
    long ca = drift_stancsv_column(f, a), cb = drift_stancsv_column(f, b);
    assert_true(ca >= 0 && cb >= 0);
    double ma = col_mean(f, a), mb = col_mean(f, b), s = 0;
    for (size_t r = 0; r < f->n_rows; r++)
        s += (f->values[r * f->n_cols + (size_t)ca] - ma) *
             (f->values[r * f->n_cols + (size_t)cb] - mb);
    return s / (double)(f->n_rows - 1);
}

static const char *gauss_model =
    "param { a : real  b : real }\n"
    "prior { a ~ normal(1, 1)  b ~ normal(a, 0.5) }\n";

/* The Gaussian a ~ N(1, 1), b | a ~ N(a, 0.5): mean (1, 1), var a 1,
 * var b 1.25, cov 1.  Four paths of 5000 draws resampled to n = 20000:
 * the resampled mean's variance is the importance estimate's, sigma^2
 * (1 + cv^2) / N over the pool of N = 20000 (cv^2 the weights' relative
 * variance, at most 1 for the near-exact approximations of a Gaussian),
 * plus resampling's sigma^2 / n, so se <= sigma sqrt(1/n + 2/N); a
 * covariance's se is sqrt((s_aa s_bb + s_ab^2)(1/n + 2/N)).  Judged
 * within 4 se.  And the chosen approximation is close: for a Gaussian
 * the exact approximation has lp__ - lp_approx__ = log Z = 0 (drift's
 * densities keep their constants), so -E[lp__ - lp_approx__] is the
 * KL divergence from it, which the best ELBO keeps under 0.05 (the first
 * iterate's approximation, the worst, is nats away). */
static void test_gaussian(void **state)
{
    (void)state;
    char *m = th_write_text(gauss_model, ".drift");
    char out[256], one[256];
    tmp_out(out, sizeof out, "gauss");
    tmp_out(one, sizeof one, "gauss1");
    const char *args[] = {"pathfinder", m, "--seed", "11", "--num-draws",
                          "5000", "--num-psis-draws", "20000", "--out", out,
                          NULL};
    th_cli r = run_ok(args);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    assert_int_equal(f->n_rows, 20000);
    double inv = 1.0 / 20000 + 2.0 / 20000;
    const char *nm[2] = {"a", "b"};
    double mean[2] = {1, 1}, cov[2][2] = {{1, 1}, {1, 1.25}};
    for (int i = 0; i < 2; i++) {
        double got = col_mean(f, nm[i]), se = sqrt(cov[i][i] * inv);
        printf("%s: mean %.4f (%.2f se)\n", nm[i], got,
               (got - mean[i]) / se);
        if (fabs(got - mean[i]) > 4 * se)
            fail_msg("mean of %s %.5g, exact %g (se %.3g)", nm[i], got,
                     mean[i], se);
        for (int j = 0; j <= i; j++) {
            double c = col_cov(f, nm[i], nm[j]);
            double cse = sqrt((cov[i][i] * cov[j][j] + cov[i][j] * cov[i][j]) *
                              inv);
            if (fabs(c - cov[i][j]) > 4 * cse)
                fail_msg("cov(%s, %s) %.5g, exact %g (se %.3g)", nm[i],
                         nm[j], c, cov[i][j], cse);
        }
    }
    drift_stancsv_free(f);
    /* one path: the best approximation's KL from the target */
    const char *single[] = {"pathfinder", m, "--seed", "11", "--num-paths",
                            "1", "--num-draws", "4000", "--out", one, NULL};
    r = run_ok(single);
    th_cli_free(&r);
    f = th_csv_read(one);
    assert_int_equal(f->n_rows, 4000);
    double kl = col_mean(f, "lp_approx__") - col_mean(f, "lp__");
    printf("one path: E[lp_approx - lp] = %.5f\n", kl);
    if (!(kl < 0.05 && kl > -0.05))
        fail_msg("E[lp_approx - lp] = %.4g: the chosen approximation is not "
                 "the near-exact one (KL >= 0 up to MC error)",
                 kl);
    drift_stancsv_free(f);
    unlink(out);
    unlink(one);
    unlink(m);
    free(m);
}

/* Where the Gaussian is wrong PSIS corrects it: s ~ gamma(3, 1) on
 * log s is skewed (its density e^(3u - e^u)), so one Gaussian on u
 * overstates E[s] by 0.4-0.7 (every path's draws, not resampled); the
 * resampled draws meet the closed form E[s] = 3, Var s = 3 and
 * E[log s] = digamma(3) = 3/2 - Euler's gamma.  Pareto k is about 0.5-0.6
 * here, ESS of the weights about half the pool, so the resampled mean's
 * se is sqrt(3 (1/20000 + 2/20000)) = 0.02 and E[log s]'s 0.01: within
 * 0.1 and 0.04 (and Var s, whose se is about 0.1, within 0.35). */
static void test_psis_corrects(void **state)
{
    (void)state;
    char *m = th_write_text("param { s : real<lower=0> }\n"
                            "prior { s ~ gamma(3, 1) }\n",
                            ".drift");
    char out[256];
    tmp_out(out, sizeof out, "gamma");
    const double elog = 1.5 - 0.57721566490153286;
    for (int resample = 1; resample >= 0; resample--) {
        const char *args[] = {"pathfinder", m, "--seed", "6", "--num-draws",
                              "5000", "--num-psis-draws", "20000",
                              "--psis-resample", resample ? "1" : "0",
                              "--out", out, NULL};
        th_cli r = run_ok(args);
        th_cli_free(&r);
        drift_stancsv *f = th_csv_read(out);
        assert_int_equal(f->n_rows, 20000);
        double mean = col_mean(f, "s"), var = col_cov(f, "s", "s"), sl = 0;
        for (size_t i = 0; i < f->n_rows; i++)
            sl += log(th_csv_value(f, "s", i)) / (double)f->n_rows;
        printf("%s: E[s] %.4f, Var s %.4f, E[log s] %.4f\n",
               resample ? "PSIS" : "every path's draws", mean, var, sl);
        int right = fabs(mean - 3) < 0.1 && fabs(var - 3) < 0.35 &&
                    fabs(sl - elog) < 0.04;
        if (resample && !right)
            fail_msg("PSIS draws: E[s] %.4g (3), Var %.4g (3), E[log s] "
                     "%.4g (%.4g)",
                     mean, var, sl, elog);
        if (!resample && right)
            fail_msg("the Gaussians alone already match the closed form: "
                     "this case tests nothing");
        drift_stancsv_free(f);
    }
    unlink(out);
    unlink(m);
    free(m);
}

/* ---- logistic regression against Newton's mode ---- */

#define LR_N 400
#define LR_D 3

static void lr_data(double *X, int *y)
{
    static const double w[LR_D] = {0.5, -1.0, 0.8};
    drift_rng rng;
    drift_rng_seed(&rng, 20260, 0);
    for (int i = 0; i < LR_N; i++) {
        X[i * LR_D] = 1;
        for (int j = 1; j < LR_D; j++)
            X[i * LR_D + j] = drift_rng_normal(&rng);
        double eta = 0;
        for (int j = 0; j < LR_D; j++)
            eta += X[i * LR_D + j] * w[j];
        y[i] = drift_rng_uniform(&rng) < 1 / (1 + exp(-eta));
    }
}

/* The posterior mode of w ~ N(0, 2^2 I), y ~ bernoulli_logit(X w) by
 * Newton's method, and the Laplace sds sqrt(diag((-H)^-1)) there. */
static void lr_newton(const double *X, const int *y, double *w, double *sd)
{
    double P[LR_D][LR_D], g[LR_D];
    memset(w, 0, LR_D * sizeof *w);
    for (int it = 0; it < 50; it++) {
        for (int a = 0; a < LR_D; a++) {
            g[a] = -w[a] / 4;
            for (int b = 0; b < LR_D; b++)
                P[a][b] = a == b ? 0.25 : 0;
        }
        for (int i = 0; i < LR_N; i++) {
            const double *x = X + i * LR_D;
            double eta = 0;
            for (int j = 0; j < LR_D; j++)
                eta += x[j] * w[j];
            double p = 1 / (1 + exp(-eta));
            for (int a = 0; a < LR_D; a++) {
                g[a] += x[a] * (y[i] - p);
                for (int b = 0; b < LR_D; b++)
                    P[a][b] += p * (1 - p) * x[a] * x[b];
            }
        }
        /* solve P step = g by Gauss-Jordan on [P | g | I] */
        double A[LR_D][2 * LR_D + 1];
        for (int a = 0; a < LR_D; a++) {
            for (int b = 0; b < LR_D; b++) {
                A[a][b] = P[a][b];
                A[a][LR_D + 1 + b] = a == b;
            }
            A[a][LR_D] = g[a];
        }
        for (int c = 0; c < LR_D; c++) {
            double piv = A[c][c];
            for (int b = 0; b < 2 * LR_D + 1; b++)
                A[c][b] /= piv;
            for (int a = 0; a < LR_D; a++)
                if (a != c) {
                    double t = A[a][c];
                    for (int b = 0; b < 2 * LR_D + 1; b++)
                        A[a][b] -= t * A[c][b];
                }
        }
        for (int a = 0; a < LR_D; a++) {
            w[a] += A[a][LR_D];
            sd[a] = sqrt(A[a][LR_D + 1 + a]);
        }
    }
}

/* Pathfinder's means within 0.25 posterior sds of the mode: the mean and
 * the mode of this posterior (400 rows, 3 coefficients) differ by about
 * a tenth of an sd (skewness of order 1/sqrt(N)), and the resampled
 * mean's MC error is about sd sqrt(1/1000 + 2/4000) = 0.04 sd; its sds
 * within 15 % of the Laplace sds (the posterior is near Gaussian: the
 * Laplace sd is within a few % of the true one; a sample sd's MC error
 * is under 3 %). */
static void test_logistic(void **state)
{
    (void)state;
    double X[LR_N * LR_D], w[LR_D], sd[LR_D], vals[LR_N * (LR_D + 1)];
    int y[LR_N];
    lr_data(X, y);
    lr_newton(X, y, w, sd);
    for (int i = 0; i < LR_N; i++) {
        for (int j = 0; j < LR_D; j++)
            vals[i * (LR_D + 1) + j] = X[i * LR_D + j];
        vals[i * (LR_D + 1) + LR_D] = y[i];
    }
    const char *names[] = {"x.1", "x.2", "x.3", "y"};
    char *d = th_write_csv(names, LR_D + 1, vals, LR_N);
    char *m = th_write_text("rows { x : vector[3]  y : int }\n"
                            "param { w : vector[3] }\n"
                            "prior { w ~ normal(0, 2) }\n"
                            "datum { y ~ bernoulli_logit(dot(x, w)) }\n",
                            ".drift");
    char out[256];
    tmp_out(out, sizeof out, "logistic");
    const char *args[] = {"pathfinder", m, "--data", d, "--seed", "3",
                          "--out", out, NULL};
    th_cli r = run_ok(args);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    assert_int_equal(f->n_rows, 1000);
    for (int j = 0; j < LR_D; j++) {
        char name[8];
        snprintf(name, sizeof name, "w.%d", j + 1);
        double mu = col_mean(f, name), s = sqrt(col_cov(f, name, name));
        printf("%s: mean %.4f, mode %.4f (%.3f sd); sd %.4f, Laplace %.4f\n",
               name, mu, w[j], (mu - w[j]) / sd[j], s, sd[j]);
        if (fabs(mu - w[j]) > 0.25 * sd[j])
            fail_msg("%s: mean %.5g, Newton's mode %.5g (sd %.4g)", name, mu,
                     w[j], sd[j]);
        if (fabs(s / sd[j] - 1) > 0.15)
            fail_msg("%s: sd %.5g, Laplace sd %.5g", name, s, sd[j]);
    }
    drift_stancsv_free(f);
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

/* ---- PSIS ---- */

typedef struct ranked {
    double raw, lw;
} ranked;

static int by_raw(const void *a, const void *b)
{
    double x = ((const ranked *)a)->raw, y = ((const ranked *)b)->raw;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Ratios p/q of target N(0, s^2) to proposal N(0, 1) at draws of the
 * proposal: w = exp(x^2 (1 - 1/s^2) / 2) has P(w > t) ~ t^(-1/k) with
 * k = 1 - 1/s^2 (s^2 = 1.25, 2, 10/3: k = 0.2, 0.5, 0.7).  With 20000
 * draws (a tail of 3 sqrt(n) = 425) k-hat's sd is 0.06-0.08 and the
 * Gaussian tail's slowly varying factor bends it down by up to 0.05 at
 * k = 0.7 (30 replicates each; ArviZ's psislw gives the same k-hat to
 * 6 digits on the same ratios); the mean of 10 replicates (sd 0.025)
 * within 0.12 of k.  The smoothed weights sum to 1 and keep the raw
 * ratios' order. */
static void test_psis_khat(void **state)
{
    (void)state;
    enum { N = 20000, REPS = 10 };
    static double lw[N], raw[N];
    static ranked pair[N];
    const double s2[] = {1.25, 2.0, 10.0 / 3};
    for (int c = 0; c < 3; c++) {
        double k = 1 - 1 / s2[c], mean = 0;
        for (int rep = 0; rep < REPS; rep++) {
            drift_rng rng;
            drift_rng_seed(&rng, 77, (uint64_t)(c * REPS + rep));
            for (int i = 0; i < N; i++) {
                double x = drift_rng_normal(&rng);
                raw[i] = lw[i] =
                    -0.5 * log(s2[c]) + 0.5 * x * x * (1 - 1 / s2[c]);
            }
            double kh;
            assert_int_equal(drift_psis_smooth(lw, N, &kh), DRIFT_OK);
            mean += kh / REPS;
            double sum = 0;
            for (int i = 0; i < N; i++)
                sum += exp(lw[i]);
            assert_true(fabs(sum - 1) < 1e-9);
            for (int i = 0; i < N; i++)
                pair[i] = (ranked){raw[i], lw[i]};
            qsort(pair, N, sizeof *pair, by_raw);
            for (int i = 1; i < N; i++)
                assert_true(pair[i].lw >= pair[i - 1].lw - 1e-12);
        }
        printf("s^2 = %.4g: mean k-hat %.4f (tail index %.4f)\n", s2[c],
               mean, k);
        if (fabs(mean - k) > 0.12)
            fail_msg("s^2 = %g: mean k-hat %.3f, tail index %.3f", s2[c],
                     mean, k);
    }
    /* Ratios equal up to rounding (an exact approximation's): no fit of
     * the noise, k-hat -inf, the weights equal. */
    for (int i = 0; i < 100; i++)
        lw[i] = 3 + 1e-13 * sin((double)i);
    double kh;
    assert_int_equal(drift_psis_smooth(lw, 100, &kh), DRIFT_OK);
    assert_true(kh == -INFINITY);
    for (int i = 0; i < 100; i++)
        assert_true(fabs(lw[i] + log(100.0)) < 1e-12);
    /* No finite ratio: refused. */
    for (int i = 0; i < 10; i++)
        lw[i] = -INFINITY;
    assert_int_equal(drift_psis_smooth(lw, 10, &kh), DRIFT_ENUMERIC);
}

/* ---- the CSV file ---- */

static const char *gq_model =
    "rows { x : real  y : real }\n"
    "param { a : real  s : real<lower=0> }\n"
    "derived { c = a + s }\n"
    "prior { a ~ normal(0, 5)  s ~ normal(0, 2) }\n"
    "datum { y ~ normal(a * x, s) }\n"
    "generated { y_rep = normal_rng(a, s) }\n";

static const char *meta(const drift_stancsv *f, const char *key)
{
    for (size_t k = 0; k < f->n_meta; k++)
        if (!strcmp(f->meta_keys[k], key))
            return f->meta_values[k];
    fail_msg("no '%s = ...' in the header", key);
    return NULL;
}

/* CmdStan's pathfinder CSV: method = pathfinder and its options by
 * CmdStan's names; columns lp_approx__, lp__, the parameters, derived
 * and generated quantities; num_psis_draws rows from several paths,
 * num_draws from one, every path's without resampling, NaN lp__ without
 * calculate_lp; each path's own file with save_single_paths. */
static void test_csv(void **state)
{
    (void)state;
    char *m = th_write_text(gq_model, ".drift");
    char *d = th_write_text("x,y\n0.5,1.2\n-1,0.1\n2,3.3\n0.3,0.8\n1,1\n",
                            ".csv");
    char out[256];
    tmp_out(out, sizeof out, "csv");
    const char *args[] = {"pathfinder", m, "--data", d, "--seed", "2",
                          "--num-psis-draws", "300", "--out", out, NULL};
    th_cli r = run_ok(args);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    static const char *cols[] = {"lp_approx__", "lp__", "a", "s", "c",
                                 "y_rep"};
    assert_int_equal(f->n_cols, 6);
    for (size_t k = 0; k < 6; k++)
        assert_string_equal(f->names[k], cols[k]);
    assert_int_equal(f->n_rows, 300);
    assert_string_equal(meta(f, "method"), "pathfinder");
    assert_string_equal(meta(f, "num_paths"), "4");
    assert_string_equal(meta(f, "num_psis_draws"), "300");
    assert_string_equal(meta(f, "num_draws"), "1000");
    assert_string_equal(meta(f, "num_elbo_draws"), "25");
    assert_string_equal(meta(f, "history_size"), "5");
    assert_string_equal(meta(f, "psis_resample"), "1");
    assert_string_equal(meta(f, "calculate_lp"), "1");
    assert_string_equal(meta(f, "max_lbfgs_iters"), "1000");
    double k = atof(meta(f, "pareto_k"));
    assert_true(isfinite(k));
    for (size_t i = 0; i < f->n_rows; i++) {
        assert_true(isfinite(th_csv_value(f, "lp__", i)));
        assert_true(isfinite(th_csv_value(f, "lp_approx__", i)));
        assert_true(th_csv_value(f, "s", i) > 0);
        assert_true(fabs(th_csv_value(f, "c", i) - th_csv_value(f, "a", i) -
                         th_csv_value(f, "s", i)) < 1e-9);
    }
    drift_stancsv_free(f);
    /* one path: num_draws rows, no PSIS */
    const char *one[] = {"pathfinder", m, "--data", d, "--seed", "2",
                         "--num-paths", "1", "--num-draws", "123", "--out",
                         out, NULL};
    r = run_ok(one);
    th_cli_free(&r);
    f = th_csv_read(out);
    assert_int_equal(f->n_rows, 123);
    for (size_t q = 0; q < f->n_meta; q++)
        assert_string_not_equal(f->meta_keys[q], "pareto_k");
    drift_stancsv_free(f);
    /* no resampling: every path's draws; no lp: NaN and no resampling
     * (CmdStanPy's num_single_draws is num_draws) */
    const char *all[] = {"pathfinder", m, "--data", d, "--seed", "2",
                         "--psis-resample", "0", "--num-single-draws", "50",
                         "--out", out, NULL};
    r = run_ok(all);
    th_cli_free(&r);
    f = th_csv_read(out);
    assert_int_equal(f->n_rows, 200);
    drift_stancsv_free(f);
    const char *nolp[] = {"pathfinder", m, "--data", d, "--seed", "2",
                          "--calculate-lp", "false", "--num-draws", "50",
                          "--save-single-paths", "1", "--out", out, NULL};
    r = run_ok(nolp);
    th_cli_free(&r);
    f = th_csv_read(out);
    assert_int_equal(f->n_rows, 200);
    for (size_t i = 0; i < f->n_rows; i++)
        assert_true(isnan(th_csv_value(f, "lp__", i)));
    drift_stancsv_free(f);
    for (int q = 1; q <= 4; q++) {
        char path[300];
        snprintf(path, sizeof path, "%.*s_path_%d.csv",
                 (int)(strlen(out) - 4), out, q);
        f = th_csv_read(path);
        assert_int_equal(f->n_rows, 50);
        assert_string_equal(meta(f, "num_paths"), "1");
        drift_stancsv_free(f);
        unlink(path);
    }
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

/* ---- refusals ---- */

/* No mode: a density that grows without bound or is flat along the
 * path; refused with a message, exit 1, no hang. */
static void test_no_mode(void **state)
{
    (void)state;
    const char *models[] = {
        "param { mu : real }\nprior { target += mu }\n",
        "param { mu : real }\nprior { target += square(mu) }\n",
        "param { s : real<lower=0> }\nprior { target += -3 * log(s) }\n",
    };
    char out[256];
    tmp_out(out, sizeof out, "nomode");
    for (size_t k = 0; k < 3; k++) {
        char *m = th_write_text(models[k], ".drift");
        const char *args[] = {"pathfinder", m, "--seed", "1", "--out", out,
                              NULL};
        th_cli r = th_cli_run(args);
        if (r.status != 1 || !strstr(r.err, "every path failed"))
            fail_msg("%s: exit %d: %s", models[k], r.status, r.err);
        th_cli_free(&r);
        assert_int_equal(access(out, F_OK), -1);
        unlink(m);
        free(m);
    }
}

/* Every option's bounds, each refused naming the option (exit 2). */
static void test_bad_options(void **state)
{
    (void)state;
    char *m = th_write_text(gauss_model, ".drift");
    static const char *bad[][2] = {
        {"--init-alpha", "0"},       {"--tol-obj", "-1"},
        {"--tol-rel-obj", "nan"},    {"--tol-grad", "0"},
        {"--tol-rel-grad", "x"},     {"--tol-param", "inf"},
        {"--history-size", "0"},     {"--history-size", "1001"},
        {"--num-psis-draws", "0"},   {"--num-paths", "0"},
        {"--num-paths", "10001"},    {"--max-lbfgs-iters", "0"},
        {"--num-draws", "0"},        {"--num-single-draws", "-3"},
        {"--num-elbo-draws", "0"},   {"--save-single-paths", "2"},
        {"--psis-resample", "yes"},  {"--calculate-lp", "-1"},
        {"--seed", "-1"},            {"--init", "-2"},
    };
    char out[256];
    tmp_out(out, sizeof out, "bad");
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *args[] = {"pathfinder", m, bad[k][0], bad[k][1], "--out",
                              out, NULL};
        th_cli r = th_cli_run(args);
        if (r.status != 2 || !strstr(r.err, bad[k][0]))
            fail_msg("%s %s: exit %d: %s", bad[k][0], bad[k][1], r.status,
                     r.err);
        th_cli_free(&r);
    }
    /* the two names of one option, given different values */
    const char *both[] = {"pathfinder", m, "--num-draws", "10",
                          "--num-single-draws", "20", "--out", out, NULL};
    th_cli r = th_cli_run(both);
    assert_int_equal(r.status, 2);
    th_cli_free(&r);
    assert_int_equal(access(out, F_OK), -1);
    unlink(m);
    free(m);
}

/* ---- drift sample --init pathfinder ---- */

/* fixed_param's draws are its initial point: with --init pathfinder each
 * chain's is finite, the chains' differ, and chain k's is the same in a
 * run of 4 chains and in a run of chain k alone (--chain-id): it depends
 * on the seed and the chain id alone.  NUTS from there gets the
 * Gaussian's means (within 4 MC errors of 4 x 1000 draws, ESS taken as
 * 1000 at least). */
static void test_init_pathfinder(void **state)
{
    (void)state;
    char *m = th_write_text(gauss_model, ".drift");
    char out[256], alone[256];
    tmp_out(out, sizeof out, "init");
    tmp_out(alone, sizeof alone, "init3");
    const char *fp[] = {"sample", m, "--sampler", "fixed_param", "--init",
                        "pathfinder", "--chains", "4", "--iter", "2",
                        "--seed", "8", "--quiet", "--out", out, NULL};
    th_cli r = run_ok(fp);
    th_cli_free(&r);
    double a[4], b[4];
    char path[300];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%.*s_%d.csv", (int)(strlen(out) - 4),
                 out, k + 1);
        drift_stancsv *f = th_csv_read(path);
        a[k] = th_csv_value(f, "a", 0);
        b[k] = th_csv_value(f, "b", 0);
        assert_true(isfinite(a[k]) && isfinite(b[k]));
        /* a draw of (an approximation of) the posterior: within 5 sds */
        assert_true(fabs(a[k] - 1) < 5 && fabs(b[k] - 1) < 5 * sqrt(1.25));
        for (int j = 0; j < k; j++)
            assert_true(a[j] != a[k] || b[j] != b[k]);
        drift_stancsv_free(f);
        unlink(path);
    }
    const char *three[] = {"sample", m, "--sampler", "fixed_param", "--init",
                           "pathfinder", "--chains", "1", "--chain-id", "3",
                           "--iter", "2", "--seed", "8", "--quiet", "--out",
                           alone, NULL};
    r = run_ok(three);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(alone);
    assert_true(th_csv_value(f, "a", 0) == a[2]);
    assert_true(th_csv_value(f, "b", 0) == b[2]);
    drift_stancsv_free(f);
    unlink(alone);
    /* NUTS from Pathfinder's draws */
    const char *nuts[] = {"sample", m, "--init", "pathfinder", "--seed", "8",
                          "--quiet", "--out", out, NULL};
    r = run_ok(nuts);
    th_cli_free(&r);
    double sa = 0, sb = 0;
    size_t n = 0;
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%.*s_%d.csv", (int)(strlen(out) - 4),
                 out, k + 1);
        f = th_csv_read(path);
        char *text = th_slurp(path);
        assert_non_null(strstr(text, "# init = pathfinder\n"));
        free(text);
        for (size_t i = 0; i < f->n_rows; i++, n++) {
            sa += th_csv_value(f, "a", i);
            sb += th_csv_value(f, "b", i);
        }
        drift_stancsv_free(f);
        unlink(path);
    }
    if (fabs(sa / n - 1) > 4 / sqrt(1000.0) ||
        fabs(sb / n - 1) > 4 * sqrt(1.25 / 1000))
        fail_msg("NUTS from --init pathfinder: means (%.4g, %.4g), exact "
                 "(1, 1)",
                 sa / n, sb / n);
    unlink(m);
    free(m);
}

/* A minibatch sampler starts from Pathfinder's draws too. */
static void test_init_pathfinder_sgld(void **state)
{
    (void)state;
    th_gauss g;
    char *d = th_gauss_data(&g);
    char *m = th_write_text("rows { y : vector[2] }\n"
                            "param { mu : vector[2] }\n"
                            "prior { mu ~ normal(0, 10) }\n"
                            "datum { y ~ normal(mu, 1) }\n",
                            ".drift");
    char out[256];
    tmp_out(out, sizeof out, "sgld");
    const char *args[] = {"sample", m, "--data", d, "--sampler", "sgld",
                          "--init", "pathfinder", "--chains", "1", "--seed",
                          "4", "--quiet", "--out", out, NULL};
    th_cli r = run_ok(args);
    th_cli_free(&r);
    drift_stancsv *f = th_csv_read(out);
    assert_true(f->n_rows > 100);
    for (int j = 0; j < 2; j++) {
        char name[8];
        snprintf(name, sizeof name, "mu.%d", j + 1);
        double mu = col_mean(f, name);
        /* posterior sd 1/sqrt(200): the chain's mean within 5 sds */
        if (fabs(mu - g.m[j]) > 5 / sqrt(g.a))
            fail_msg("%s: mean %.4g, exact %.4g", name, mu, g.m[j]);
    }
    drift_stancsv_free(f);
    unlink(out);
    unlink(m);
    unlink(d);
    free(m);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_logistic),
        cmocka_unit_test(test_psis_khat),
        cmocka_unit_test(test_psis_corrects),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_no_mode),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_init_pathfinder),
        cmocka_unit_test(test_init_pathfinder_sgld),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
