/* test_variational.c: drift variational (ADVI) and drift optimize's
 * minibatch optimisers against closed forms and an independent Newton fit.
 *  - meanfield on a Gaussian posterior with diagonal covariance (exact
 *    for the family): the mean row within 0.3 posterior sd of the closed
 *    form (the optimiser's own noise: its spread over seeds is about 0.1
 *    sd at these settings) and each sd within 10% (the 20,000 draws' sd
 *    has MC error 0.5%; Stan's steps, normalised by a running mean of the
 *    squared gradient that includes the step's own, leave the smallest
 *    sd up to 8% too large over six seeds);
 *  - fullrank on a correlated Gaussian (linear regression with flat
 *    priors): the covariance (X'X)^-1 recovered, and meanfield on the same
 *    posterior giving what ADVI theory says it must: the mean exact and
 *    each sd the conditional sd 1/sqrt(P_ii) of the precision P, not the
 *    marginal one;
 *  - logistic regression with 10^5 rows generated here with a fixed
 *    seed, fitted by minibatches: the means within 0.45 posterior sd of
 *    the mode of a Newton fit computed here (at N = 10^5 the posterior
 *    mean and mode differ by far less; over seeds 11-18 the largest of
 *    64 errors was 0.38 sd), meanfield's sds within 20% of the
 *    conditional sds (its theory again) and fullrank's of the marginal
 *    ones; drift optimize's adam and sgd within 0.35 sd of the
 *    Newton mode (their averaged point's noise is about 1/sqrt(passes/2)
 *    sds: 0.1 at 200 passes);
 *  - Pareto k: above 0.7 for a Student-t posterior with 1 degree of
 *    freedom (a Gaussian cannot fit its tails), below 0.5 for the
 *    Gaussian;
 *  - the checks of the draws on posteriordb's eight schools
 *    (non-centred), against its reference (computed by Stan, not
 *    drift): every fit whose mean of mu is more than 0.5 reference sds
 *    off is warned of (fullrank stops there off centre with a Pareto k
 *    of 0.36-0.6, which k alone lets pass);
 *  - bad input: each option's bound, an improper posterior, and a
 *    diverging ELBO: a message and a non-zero exit. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

static char *tmp_out(void)
{
    char *p = strdup("/tmp/drift-vi-XXXXXX");
    assert_non_null(p);
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    return p;
}

/* Column c's mean and sd over rows from..n-1 of f. */
static void col_moments(const drift_stancsv *f, long c, size_t from,
                        double *mean, double *sd)
{
    double s = 0, ss = 0;
    size_t n = f->n_rows - from;
    for (size_t r = from; r < f->n_rows; r++) {
        double v = f->values[r * f->n_cols + (size_t)c];
        s += v;
        ss += v * v;
    }
    *mean = s / (double)n;
    *sd = sqrt((ss - s * s / (double)n) / (double)(n - 1));
}

static long col(const drift_stancsv *f, const char *name)
{
    long c = drift_stancsv_column(f, name);
    if (c < 0)
        fail_msg("no column %s", name);
    return c;
}

/* The "# Pareto k = " value of a variational file. */
static double pareto_k(const char *path)
{
    char *text = th_slurp(path);
    assert_non_null(text);
    const char *p = strstr(text, "# Pareto k = ");
    if (!p)
        fail_msg("no Pareto k in %s", path);
    double k = strtod(p + strlen("# Pareto k = "), NULL);
    free(text);
    return k;
}

/* Runs args (NULL-terminated), failing the test on a non-zero exit. */
static void run_ok(const char *const *args)
{
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("drift %s: exit %d\n%s", args[0], r.status, r.err);
    th_cli_free(&r);
}

/* ---- meanfield, diagonal Gaussian ------------------------------------ */

#define G_N 100
static const double g_sd[3] = {0.5, 2.0, 10.0};

static void test_meanfield_gaussian(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y1 : real  y2 : real  y3 : real }\n"
                            "param { x : vector[3] }\n"
                            "datum { y1 ~ normal(x[1], 0.5)\n"
                            "        y2 ~ normal(x[2], 2)\n"
                            "        y3 ~ normal(x[3], 10) }\n",
                            ".drift");
    /* y from a closed-form generator (no RNG needed): centres 1, -2, 0.5 */
    size_t cap = 100 * G_N + 32, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "y1,y2,y3\n");
    double ybar[3] = {0, 0, 0};
    for (int i = 1; i <= G_N; i++) {
        double y[3] = {1 + g_sd[0] * sin(1.3 * i), -2 + g_sd[1] * cos(0.7 * i),
                       0.5 + g_sd[2] * sin(2.1 * i + 0.4)};
        for (int j = 0; j < 3; j++)
            ybar[j] += y[j] / G_N;
        len += (size_t)snprintf(text + len, cap - len, "%.17g,%.17g,%.17g\n",
                                y[0], y[1], y[2]);
    }
    char *d = th_write_text(text, ".csv");
    free(text);
    char *out = tmp_out();
    const char *seeds[] = {"1", "2", "3"};
    for (size_t s = 0; s < 3; s++) {
        const char *args[] = {"variational", m, "--data", d, "--seed",
                              seeds[s], "--grad-samples", "50", "--eta",
                              "0.1", "--tol-rel-obj", "0.0002",
                              "--elbo-samples", "1000", "--output-samples",
                              "20000", "--quiet", "--out", out, NULL};
        run_ok(args);
        drift_stancsv *f = th_csv_read(out);
        assert_int_equal(f->n_rows, 20001);
        const char *names[3] = {"x.1", "x.2", "x.3"};
        for (int j = 0; j < 3; j++) {
            long c = col(f, names[j]);
            double post_sd = g_sd[j] / sqrt((double)G_N);
            double mean0 = f->values[(size_t)c], mean, sd;
            col_moments(f, c, 1, &mean, &sd);
            if (fabs(mean0 - ybar[j]) > 0.3 * post_sd)
                fail_msg("seed %s %s: mean %.6g, closed form %.6g (sd %.3g)",
                         seeds[s], names[j], mean0, ybar[j], post_sd);
            if (fabs(sd / post_sd - 1) > 0.1)
                fail_msg("seed %s %s: sd %.6g, closed form %.6g", seeds[s],
                         names[j], sd, post_sd);
            /* the draws are of the approximation whose mean is row 1 */
            if (fabs(mean - mean0) > 4 * sd / sqrt(20000.0))
                fail_msg("%s: the draws' mean %.6g is not the first row's "
                         "%.6g",
                         names[j], mean, mean0);
        }
        double k = pareto_k(out);
        if (!(k < 0.5))
            fail_msg("seed %s: Pareto k %.3g on a Gaussian posterior",
                     seeds[s], k);
        drift_stancsv_free(f);
    }
    unlink(out);
    unlink(m);
    unlink(d);
    free(out);
    free(m);
    free(d);
}

/* ---- fullrank and meanfield on a correlated Gaussian ------------------ */

#define R_N 40

static void test_correlated(void **state)
{
    (void)state;
    /* y_i = a + b t_i + e_i, e ~ N(0, 1), flat priors: the posterior of
     * (a, b) is N(OLS, (X'X)^-1), t in [1, 3] so corr(a, b) ~ -0.97. */
    char *m = th_write_text("rows { t : real  y : real }\n"
                            "param { a : real  b : real }\n"
                            "datum { y ~ normal(a + b * t, 1) }\n",
                            ".drift");
    size_t cap = 64 * R_N + 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "t,y\n");
    double s1 = 0, st = 0, stt = 0, sy = 0, sty = 0;
    for (int i = 0; i < R_N; i++) {
        double t = 1 + 2.0 * i / (R_N - 1);
        double y = 0.5 + 1.5 * t + sin(3.7 * i);
        s1 += 1;
        st += t;
        stt += t * t;
        sy += y;
        sty += t * y;
        len += (size_t)snprintf(text + len, cap - len, "%.17g,%.17g\n", t, y);
    }
    char *d = th_write_text(text, ".csv");
    free(text);
    /* P = X'X = [[s1, st], [st, stt]], covariance its inverse */
    double det = s1 * stt - st * st;
    double va = stt / det, vb = s1 / det, cab = -st / det;
    double bhat = (s1 * sty - st * sy) / det, ahat = (sy - bhat * st) / s1;
    double corr = cab / sqrt(va * vb);
    char *out = tmp_out();
    const char *fr[] = {"variational", m, "--data", d, "--seed", "4",
                        "--algorithm", "fullrank", "--grad-samples", "50",
                        "--eta", "0.1", "--tol-rel-obj", "0.0005",
                        "--elbo-samples", "10000", "--output-samples",
                        "20000", "--quiet", "--out", out, NULL};
    run_ok(fr);
    drift_stancsv *f = th_csv_read(out);
    long ca = col(f, "a"), cb = col(f, "b");
    double ma, sa, mb, sb, sab = 0;
    col_moments(f, ca, 1, &ma, &sa);
    col_moments(f, cb, 1, &mb, &sb);
    for (size_t r = 1; r < f->n_rows; r++)
        sab += (f->values[r * f->n_cols + (size_t)ca] - ma) *
               (f->values[r * f->n_cols + (size_t)cb] - mb);
    double rho = sab / (double)(f->n_rows - 2) / (sa * sb);
    if (fabs(f->values[(size_t)ca] - ahat) > 0.3 * sqrt(va) ||
        fabs(f->values[(size_t)cb] - bhat) > 0.3 * sqrt(vb))
        fail_msg("fullrank mean (%.5g, %.5g), closed form (%.5g, %.5g)",
                 f->values[(size_t)ca], f->values[(size_t)cb], ahat, bhat);
    if (fabs(sa / sqrt(va) - 1) > 0.05 || fabs(sb / sqrt(vb) - 1) > 0.05)
        fail_msg("fullrank sds (%.5g, %.5g), closed form (%.5g, %.5g)", sa,
                 sb, sqrt(va), sqrt(vb));
    if (fabs(rho - corr) > 0.01)
        fail_msg("fullrank correlation %.5g, closed form %.5g", rho, corr);
    drift_stancsv_free(f);
    /* meanfield: the KL(q||p) optimum over diagonal Gaussians has the
     * exact mean and sds 1/sqrt(P_ii), here sqrt(va (1 - corr^2)). */
    const char *mf[] = {"variational", m, "--data", d, "--seed", "4",
                        "--grad-samples", "50", "--eta", "0.1",
                        "--tol-rel-obj", "0.0005", "--elbo-samples", "10000",
                        "--output-samples", "20000", "--quiet", "--out", out,
                        NULL};
    run_ok(mf);
    f = th_csv_read(out);
    col_moments(f, ca, 1, &ma, &sa);
    col_moments(f, cb, 1, &mb, &sb);
    if (fabs(f->values[(size_t)ca] - ahat) > 0.3 * sqrt(va) ||
        fabs(f->values[(size_t)cb] - bhat) > 0.3 * sqrt(vb))
        fail_msg("meanfield mean (%.5g, %.5g), closed form (%.5g, %.5g)",
                 f->values[(size_t)ca], f->values[(size_t)cb], ahat, bhat);
    if (fabs(sa / sqrt(1 / s1) - 1) > 0.05 ||
        fabs(sb / sqrt(1 / stt) - 1) > 0.05)
        fail_msg("meanfield sds (%.5g, %.5g), ADVI theory (%.5g, %.5g)", sa,
                 sb, sqrt(1 / s1), sqrt(1 / stt));
    drift_stancsv_free(f);
    unlink(out);
    unlink(m);
    unlink(d);
    free(out);
    free(m);
    free(d);
}

/* ---- logistic regression, 10^5 rows ----------------------------------- */

#define L_N 100000
#define L_D 4

/* splitmix64 and Box-Muller: the data's own generator */
static uint64_t sm_state;
static double unif(void)
{
    uint64_t z = (sm_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/* Solves the d x d system A x = b in place (Gaussian elimination with
 * partial pivoting; A is destroyed). */
static void solve(double *A, double *b, int d)
{
    for (int k = 0; k < d; k++) {
        int p = k;
        for (int i = k + 1; i < d; i++)
            if (fabs(A[i * d + k]) > fabs(A[p * d + k]))
                p = i;
        for (int j = 0; j < d; j++) {
            double t = A[k * d + j];
            A[k * d + j] = A[p * d + j];
            A[p * d + j] = t;
        }
        double t = b[k];
        b[k] = b[p];
        b[p] = t;
        for (int i = k + 1; i < d; i++) {
            double c = A[i * d + k] / A[k * d + k];
            for (int j = k; j < d; j++)
                A[i * d + j] -= c * A[k * d + j];
            b[i] -= c * b[k];
        }
    }
    for (int k = d - 1; k >= 0; k--) {
        for (int j = k + 1; j < d; j++)
            b[k] -= A[k * d + j] * b[j];
        b[k] /= A[k * d + k];
    }
}

typedef struct logit_fit {
    char *model, *data;
    double mode[L_D], sd[L_D], cond_sd[L_D];
} logit_fit;

static logit_fit lf;

/* The data (x.1 = 1, x.2..x.4 ~ N(0, 1), y ~ Bernoulli(logistic(x.w)))
 * and the Newton fit of the posterior with the model's prior N(0, 10). */
static int logit_setup(void **state)
{
    (void)state;
    static const double w[L_D] = {-0.5, 1.0, -0.7, 0.3};
    double *X = malloc(sizeof(double) * L_N * L_D);
    int *y = malloc(sizeof(int) * L_N);
    char *text = malloc((size_t)L_N * 64 + 64);
    if (!X || !y || !text)
        return -1;
    sm_state = 20240601;
    size_t len = (size_t)sprintf(text, "x.1,x.2,x.3,x.4,y\n");
    for (int i = 0; i < L_N; i++) {
        double eta = 0;
        X[i * L_D] = 1;
        for (int j = 1; j < L_D; j++)
            X[i * L_D + j] = round(gauss() * 1e6) / 1e6;
        for (int j = 0; j < L_D; j++)
            eta += X[i * L_D + j] * w[j];
        y[i] = unif() < 1 / (1 + exp(-eta));
        len += (size_t)sprintf(text + len, "1,%.6f,%.6f,%.6f,%d\n",
                               X[i * L_D + 1], X[i * L_D + 2], X[i * L_D + 3],
                               y[i]);
    }
    lf.data = th_write_text(text, ".csv");
    lf.model = th_write_text("rows { x : vector[D]  y : int }\n"
                             "param { w : vector[D] }\n"
                             "prior { w ~ normal(0, sqrt(10)) }\n"
                             "datum { y ~ bernoulli_logit(dot(x, w)) }\n",
                             ".drift");
    free(text);
    double b[L_D] = {0}, H[L_D * L_D], g[L_D];
    for (int it = 0; it < 50; it++) {
        for (int j = 0; j < L_D; j++) {
            g[j] = -b[j] / 10;
            for (int k = 0; k < L_D; k++)
                H[j * L_D + k] = j == k ? 1.0 / 10 : 0;
        }
        for (int i = 0; i < L_N; i++) {
            double eta = 0;
            for (int j = 0; j < L_D; j++)
                eta += X[i * L_D + j] * b[j];
            double p = 1 / (1 + exp(-eta));
            for (int j = 0; j < L_D; j++) {
                g[j] += X[i * L_D + j] * (y[i] - p);
                for (int k = 0; k < L_D; k++)
                    H[j * L_D + k] += p * (1 - p) * X[i * L_D + j] *
                                      X[i * L_D + k];
            }
        }
        double step[L_D];
        memcpy(step, g, sizeof g);
        double A[L_D * L_D];
        memcpy(A, H, sizeof H);
        solve(A, step, L_D);
        for (int j = 0; j < L_D; j++)
            b[j] += step[j];
    }
    memcpy(lf.mode, b, sizeof b);
    /* marginal sds: the diagonal of H^-1; conditional: 1/sqrt(H_jj) */
    for (int j = 0; j < L_D; j++) {
        double A[L_D * L_D], e[L_D] = {0};
        memcpy(A, H, sizeof H);
        e[j] = 1;
        solve(A, e, L_D);
        lf.sd[j] = sqrt(e[j]);
        lf.cond_sd[j] = 1 / sqrt(H[j * L_D + j]);
    }
    free(X);
    free(y);
    return 0;
}

static int logit_teardown(void **state)
{
    (void)state;
    unlink(lf.model);
    unlink(lf.data);
    free(lf.model);
    free(lf.data);
    return 0;
}

static void logistic_vi(const char *algo)
{
    int full = !strcmp(algo, "fullrank");
    char *out = tmp_out();
    const char *args[] = {"variational", lf.model, "--data", lf.data,
                          "--algorithm", algo, "--seed", "11", "--quiet",
                          "--out", out, NULL};
    run_ok(args);
    drift_stancsv *f = th_csv_read(out);
    assert_int_equal(f->n_rows, 1001);
    for (int j = 0; j < L_D; j++) {
        char name[16];
        snprintf(name, sizeof name, "w.%d", j + 1);
        long c = col(f, name);
        double mean0 = f->values[(size_t)c], mean, sd;
        col_moments(f, c, 1, &mean, &sd);
        if (fabs(mean0 - lf.mode[j]) > 0.45 * lf.sd[j])
            fail_msg("%s %s: mean %.6g, Newton %.6g (posterior sd %.3g)",
                     algo, name, mean0, lf.mode[j], lf.sd[j]);
        /* 1000 draws: the sd's MC error is 2.2%; the fit's scale adds
         * more (0.87 to 1.15 of the reference over seeds 11-18).
         * Meanfield's sd is the conditional one, fullrank's the marginal
         * (the two differ by under 4% here: the columns are independent). */
        double want = full ? lf.sd[j] : lf.cond_sd[j];
        if (fabs(sd / want - 1) > 0.2)
            fail_msg("%s %s: sd %.4g, ADVI theory %.4g (marginal %.4g, "
                     "conditional %.4g)",
                     algo, name, sd, want, lf.sd[j], lf.cond_sd[j]);
    }
    drift_stancsv_free(f);
    char *text = th_slurp(out);
    assert_non_null(strstr(text, "#     batch = 1000\n"));
    free(text);
    unlink(out);
    free(out);
}

static void test_logistic_vi(void **state)
{
    (void)state;
    logistic_vi("meanfield");
}

static void test_logistic_vi_fullrank(void **state)
{
    (void)state;
    logistic_vi("fullrank");
}

static void opt_check(const char *algo)
{
    char *out = tmp_out();
    const char *args[] = {"optimize", lf.model, "--data", lf.data,
                          "--algorithm", algo, "--passes", "200",
                          "--seed", "12", "--out", out, NULL};
    run_ok(args);
    drift_stancsv *f = th_csv_read(out);
    assert_int_equal(f->n_rows, 1);
    for (int j = 0; j < L_D; j++) {
        char name[16];
        snprintf(name, sizeof name, "w.%d", j + 1);
        double v = f->values[(size_t)col(f, name)];
        if (fabs(v - lf.mode[j]) > 0.35 * lf.sd[j])
            fail_msg("%s %s: %.6g, Newton %.6g (posterior sd %.3g)", algo,
                     name, v, lf.mode[j], lf.sd[j]);
    }
    drift_stancsv_free(f);
    unlink(out);
    free(out);
}

static void test_logistic_adam(void **state)
{
    (void)state;
    opt_check("adam");
}

static void test_logistic_sgd(void **state)
{
    (void)state;
    opt_check("sgd");
}

/* ---- Pareto k ------------------------------------------------------- */

static void test_pareto_k_student(void **state)
{
    (void)state;
    /* A Cauchy posterior (the constant keeps the ELBO away from 0, where
     * Stan's relative change is meaningless). */
    char *m = th_write_text("param { x : real }\n"
                            "prior { x ~ student_t(1, 0, 1)\n"
                            "        target += -100 }\n",
                            ".drift");
    char *out = tmp_out();
    const char *args[] = {"variational", m, "--seed", "3", "--quiet",
                          "--output-samples", "2000", "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("exit %d\n%s", r.status, r.err);
    double k = pareto_k(out);
    if (!(k > 0.7))
        fail_msg("Pareto k %.3g on a Cauchy posterior", k);
    if (!strstr(r.err, "Pareto k") || !strstr(r.err, "> 0.7"))
        fail_msg("no warning of k > 0.7: %s", r.err);
    th_cli_free(&r);
    unlink(out);
    unlink(m);
    free(out);
    free(m);
}

/* ---- off centre: warned ----------------------------------------------- */

static void test_off_centre_warned(void **state)
{
    (void)state;
    const char *src = getenv("srcdir") ? getenv("srcdir") : ".";
    char dir[4096], model[4200], rows[4200], data[4200], ref[4200];
    snprintf(dir, sizeof dir,
             "%s/tests/posteriordb/eight_schools-eight_schools_noncentered",
             src);
    snprintf(model, sizeof model, "%s/model.drift", dir);
    snprintf(rows, sizeof rows, "%s/rows.csv", dir);
    snprintf(data, sizeof data, "%s/data.json", dir);
    snprintf(ref, sizeof ref, "%s/reference.csv", dir);
    char *text = th_slurp(ref);
    assert_non_null(text);
    const char *p = strstr(text, "\nmu,");
    assert_non_null(p);
    char *end;
    double ref_mean = strtod(p + 4, &end);
    double ref_sd = strtod(end + 1, NULL);
    free(text);
    static const struct {
        const char *algo, *seed;
    } fits[] = {{"fullrank", "1"}, {"fullrank", "2"}, {"fullrank", "3"},
                {"meanfield", "1"}, {"meanfield", "2"}};
    int off = 0;
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        char *out = tmp_out();
        const char *args[] = {"variational", model, "--data", rows,
                              "--data", data, "--algorithm", fits[i].algo,
                              "--seed", fits[i].seed, "--quiet", "--out",
                              out, NULL};
        th_cli r = th_cli_run(args);
        if (r.status)
            fail_msg("%s seed %s: exit %d\n%s", fits[i].algo, fits[i].seed,
                     r.status, r.err);
        drift_stancsv *f = th_csv_read(out);
        double m, sd;
        col_moments(f, col(f, "mu"), 1, &m, &sd);
        drift_stancsv_free(f);
        double err = fabs(m - ref_mean) / ref_sd;
        if (err > 0.5) {
            off++;
            if (!strstr(r.err, "warning"))
                fail_msg("%s seed %s: mean of mu %.3g reference sds off, "
                         "no warning:\n%s",
                         fits[i].algo, fits[i].seed, err, r.err);
        }
        th_cli_free(&r);
        unlink(out);
        free(out);
    }
    /* The case exists to hold the warning to the fits that are off; if
     * ADVI stops finding it off, this test needs another case. */
    if (!off)
        fail_msg("no fit was off: the test no longer checks the warning");
}

/* ---- bad input -------------------------------------------------------- */

static void refused(const char *opt, const char *value, const char *needle)
{
    char *m = th_write_text("param { x : real }\nprior { x ~ normal(0, 1) }\n",
                            ".drift");
    char *out = tmp_out();
    const char *args[] = {"variational", m, opt, value, "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status != 2 || !strstr(r.err, needle))
        fail_msg("%s %s: exit %d, %s", opt, value, r.status, r.err);
    th_cli_free(&r);
    unlink(out);
    unlink(m);
    free(out);
    free(m);
}

static void test_bounds(void **state)
{
    (void)state;
    refused("--iter", "0", "--iter");
    refused("--grad-samples", "0", "--grad-samples");
    refused("--elbo-samples", "-3", "--elbo-samples");
    refused("--eta", "0", "--eta");
    refused("--eta", "nan", "--eta");
    refused("--adapt-engaged", "2", "--adapt-engaged");
    refused("--adapt-iter", "0", "--adapt-iter");
    refused("--tol-rel-obj", "-1", "--tol-rel-obj");
    refused("--eval-elbo", "0", "--eval-elbo");
    refused("--output-samples", "0", "--output-samples");
    refused("--batch", "0", "--batch");
    refused("--algorithm", "lowrank", "--algorithm");
    refused("--warm-start", "yes", "--warm-start");
    /* more rows per gradient than the data has */
    char *m = th_write_text("rows { y : real }\nparam { x : real }\n"
                            "datum { y ~ normal(x, 1) }\n",
                            ".drift");
    char *d = th_write_text("y\n1\n2\n3\n", ".csv");
    char *out = tmp_out();
    const char *args[] = {"variational", m, "--data", d, "--batch", "10",
                          "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status != 2 || !strstr(r.err, "batch"))
        fail_msg("--batch 10 of 3 rows: exit %d, %s", r.status, r.err);
    th_cli_free(&r);
    const char *o1[] = {"optimize", m, "--data", d, "--algorithm", "sgd",
                        "--step-gamma", "0.4", "--out", out, NULL};
    r = th_cli_run(o1);
    if (r.status != 2 || !strstr(r.err, "--step-gamma"))
        fail_msg("--step-gamma 0.4: exit %d, %s", r.status, r.err);
    th_cli_free(&r);
    const char *o2[] = {"optimize", m, "--data", d, "--algorithm", "adam",
                        "--batch", "10", "--out", out, NULL};
    r = th_cli_run(o2);
    if (r.status != 2 || !strstr(r.err, "batch"))
        fail_msg("optimize --batch 10 of 3 rows: exit %d, %s", r.status,
                 r.err);
    th_cli_free(&r);
    unlink(out);
    unlink(m);
    unlink(d);
    free(out);
    free(m);
    free(d);
}

static void test_improper(void **state)
{
    (void)state;
    /* No prior and no data: a flat, improper posterior. */
    char *m = th_write_text("param { x : real }\n"
                            "prior { target += 0 * x }\n",
                            ".drift");
    char *out = tmp_out();
    const char *args[] = {"variational", m, "--seed", "1", "--quiet",
                          "--out", out, NULL};
    th_cli r = th_cli_run(args);
    if (r.status == 0 || !strstr(r.err, "improper"))
        fail_msg("a flat posterior: exit %d, %s", r.status, r.err);
    th_cli_free(&r);
    /* eta far too large for a narrow posterior, adaptation off: the ELBO
     * diverges, and the message says what to try. */
    char *n = th_write_text("param { x : vector[2] }\n"
                            "prior { x ~ normal(0, 1e-3) }\n",
                            ".drift");
    const char *big[] = {"variational", n, "--seed", "1", "--quiet", "--eta",
                         "1e6", "--out", out, NULL};
    r = th_cli_run(big);
    if (r.status == 0 || !strstr(r.err, "--eta"))
        fail_msg("eta 1e6: exit %d, %s", r.status, r.err);
    th_cli_free(&r);
    unlink(out);
    unlink(m);
    unlink(n);
    free(out);
    free(m);
    free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meanfield_gaussian),
        cmocka_unit_test(test_correlated),
        cmocka_unit_test(test_pareto_k_student),
        cmocka_unit_test(test_off_centre_warned),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_improper),
        cmocka_unit_test(test_logistic_vi),
        cmocka_unit_test(test_logistic_vi_fullrank),
        cmocka_unit_test(test_logistic_adam),
        cmocka_unit_test(test_logistic_sgd),
    };
    /* the regression's data and Newton fit, made once */
    return cmocka_run_group_tests(tests, logit_setup, logit_teardown);
}
