/* test_cv.c: --gradient cv and the learned metric,
 * against closed forms.  On Bayesian ridge regression with badly scaled
 * predictors (tests/plugins/ridge.c; posterior N(m, A^-1) with A = X'X /
 * sigma^2 + I / tau^2):
 *  - the engine's mode is m, its curvature the empirical Fisher diagonal
 *    plus the prior's, every evaluation counted;
 *  - the control-variate estimate of grad U, and of U, is unbiased: its
 *    mean over minibatches is the closed-form gradient A theta - X'y /
 *    sigma^2 (and U), as the plain estimate's is, and its variance is the
 *    closed form of random access, (N^2/n) times the population variance
 *    of grad U_i(theta) - grad U_i(mode), far below the plain one's near
 *    the mode; the generalised-linear path (the mode's scalars kept) and
 *    the general one (each row's gradient recomputed) agree;
 *  - on the Gaussian location model the estimate is exact;
 *  - sgld preconditioned by the curvature at the mode samples N(m, S), S
 *    the stationary covariance of its linear recursion (discrete
 *    Lyapunov equation, the control variates' own noise included).
 * And sgld with the metric learned in warmup recovers a Gaussian whose
 * standard deviations differ 100-fold (tests/plugins/mvn.c), which the
 * unit metric at the same step size does not.  Tolerances: 4.5 Monte
 * Carlo standard errors. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/mode.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "lref.h"

enum { N = 2000, D = 2 };
static const double SIGMA = 1.0, TAU = 10.0;
static const double SCALE[D] = {1.0, 30.0}; /* predictors' scales */

typedef struct data {
    double X[N * D], y[N];
    double A[D * D], Ainv[D * D], m[D], b[D]; /* b = X'y / sigma^2 */
    char *csv;
} data;

/* Predictors of scales SCALE, the second correlated with the first by
 * rho. */
static void make_data_rho(data *t, double rho)
{
    drift_rng r;
    drift_rng_seed(&r, 4242, 0);
    const double w[D] = {0.5, -0.02};
    static double v[N * (D + 1)];
    memset(t->A, 0, sizeof t->A);
    memset(t->b, 0, sizeof t->b);
    for (size_t i = 0; i < N; i++) {
        double z = 0, u0 = drift_rng_normal(&r), u1 = drift_rng_normal(&r);
        double u[D] = {u0, rho * u0 + sqrt(1 - rho * rho) * u1};
        for (size_t j = 0; j < D; j++) {
            t->X[i * D + j] = SCALE[j] * u[j];
            z += t->X[i * D + j] * w[j];
        }
        t->y[i] = z + SIGMA * drift_rng_normal(&r);
        v[i * (D + 1)] = t->y[i];
        for (size_t j = 0; j < D; j++) {
            v[i * (D + 1) + 1 + j] = t->X[i * D + j];
            t->b[j] += t->X[i * D + j] * t->y[i] / (SIGMA * SIGMA);
            for (size_t k = 0; k < D; k++)
                t->A[j * D + k] +=
                    t->X[i * D + j] * t->X[i * D + k] / (SIGMA * SIGMA);
        }
    }
    for (size_t j = 0; j < D; j++)
        t->A[j * D + j] += 1 / (TAU * TAU);
    double det = t->A[0] * t->A[3] - t->A[1] * t->A[2];
    t->Ainv[0] = t->A[3] / det;
    t->Ainv[3] = t->A[0] / det;
    t->Ainv[1] = t->Ainv[2] = -t->A[1] / det;
    for (size_t j = 0; j < D; j++)
        t->m[j] = t->Ainv[j * D] * t->b[0] + t->Ainv[j * D + 1] * t->b[1];
    const char *names[D + 1] = {"y", "x.1", "x.2"};
    t->csv = th_write_csv(names, D + 1, v, N);
}

static void make_data(data *t) { make_data_rho(t, 0); }

/* U(theta) and grad U(theta), in closed form. */
static double U_exact(const data *t, const double *th, double *g)
{
    double U = 0;
    for (size_t i = 0; i < N; i++) {
        double r = t->y[i] - t->X[i * D] * th[0] - t->X[i * D + 1] * th[1];
        U += 0.5 * r * r / (SIGMA * SIGMA) + log(SIGMA) + 0.91893853320467274;
    }
    for (size_t j = 0; j < D; j++)
        U += 0.5 * th[j] * th[j] / (TAU * TAU) + log(TAU) + 0.91893853320467274;
    for (size_t j = 0; g && j < D; j++)
        g[j] = t->A[j * D] * th[0] + t->A[j * D + 1] * th[1] - t->b[j];
    return U;
}

/* Per-row gradient of U_i at th (D values). */
static void row_grad(const data *t, size_t i, const double *th, double *g)
{
    const double *x = t->X + i * D;
    double r = (t->y[i] - x[0] * th[0] - x[1] * th[1]) / (SIGMA * SIGMA);
    for (size_t j = 0; j < D; j++)
        g[j] = -r * x[j];
}

/* Closed-form variance (per coordinate) of a random-access minibatch
 * estimate: (N^2 / n) times the population variance of a_i, a_i =
 * grad U_i(th) - grad U_i(centre) (centre NULL: grad U_i(th), the plain
 * estimate). */
static void ra_variance(const data *t, const double *th,
                        const double *centre, size_t n, double *var)
{
    double s[D] = {0}, ss[D] = {0}, a[D], a0[D];
    for (size_t i = 0; i < N; i++) {
        row_grad(t, i, th, a);
        if (centre) {
            row_grad(t, i, centre, a0);
            for (size_t j = 0; j < D; j++)
                a[j] -= a0[j];
        }
        for (size_t j = 0; j < D; j++) {
            s[j] += a[j];
            ss[j] += a[j] * a[j];
        }
    }
    for (size_t j = 0; j < D; j++) {
        double mu = s[j] / N;
        var[j] = (double)N * N / (double)n * (ss[j] / N - mu * mu);
    }
}

typedef struct fixture {
    data t;
    th_problem tp;
    th_chain ch;
    drift_run_shared run;
    double theta[D];
    int cv;
} fixture;

/* A chain of sgld over ridge (glm: its generalised linear form) with
 * --gradient cv (when cv) and its mode found, as the run-level setup
 * finds it. */
static void open_chain(fixture *f, int glm, int cv, size_t batch)
{
    char opt[32];
    snprintf(opt, sizeof opt, "glm=%d", glm);
    char *sets[] = {opt};
    th_open(&f->tp, "ridge", f->t.csv, sets, 1);
    f->cv = cv;
    char *hs[] = {"h=1e-3"};
    th_run r = {.sampler = "sgld", .set = hs, .n_set = 1, .batch = batch,
                .seed = 5,
                .gradient = cv ? DRIFT_GRADIENT_CV : DRIFT_GRADIENT_PLAIN};
    th_chain_open(&f->ch, &f->tp, &r, NULL, NULL, f->theta);
    memset(&f->run, 0, sizeof f->run);
    f->ch.c.run = &f->run;
    if (cv) {
        double start[D] = {0, 0};
        f->ch.c.phase = DRIFT_CHAIN_SETUP;
        assert_int_equal(drift_mode_setup(&f->ch.c, start), DRIFT_OK);
        f->ch.c.phase = DRIFT_CHAIN_STEPPING;
    }
}

static void close_chain(fixture *f)
{
    th_chain_close(&f->ch);
    drift_mode_release(&f->run.cv);
    th_close(&f->tp);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    make_data(&f->t);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->t.csv);
    free(f->t.csv);
    free(f);
    return 0;
}

static const drift_services *S = &drift_services_table;

static void test_mode_and_curvature(void **state)
{
    fixture *f = *state;
    open_chain(f, 1, 1, 20);
    const drift_cv *cv = &f->run.cv;
    double mode[D], curv[D];
    assert_int_equal(S->gradient(&f->ch.c), DRIFT_GRADIENT_CV);
    assert_int_equal(S->mode(&f->ch.c, mode, curv), DRIFT_OK);
    assert_true(cv->converged);
    for (size_t j = 0; j < D; j++) {
        double sd = sqrt(f->t.Ainv[j * D + j]);
        print_message("mode[%zu] %.10g, closed form %.10g (%.2g sd)\n", j,
                      mode[j], f->t.m[j], (mode[j] - f->t.m[j]) / sd);
        /* The search stops at a squared Newton decrement of 1e-3: within
         * 0.032 posterior sd in A's norm. */
        assert_true(fabs(mode[j] - f->t.m[j]) < 0.05 * sd);
        /* Empirical Fisher information at the mode plus the prior's
         * 1 / tau^2, summed here. */
        double fisher = 0, g[D];
        for (size_t i = 0; i < N; i++) {
            row_grad(&f->t, i, mode, g);
            fisher += g[j] * g[j];
        }
        double want = fisher + 1 / (TAU * TAU);
        print_message("curvature[%zu] %.10g, empirical Fisher + prior "
                      "%.10g, Hessian %.10g\n",
                      j, curv[j], want, f->t.A[j * D + j]);
        assert_true(fabs(curv[j] - want) < 1e-6 * want);
        /* ... which estimates the Hessian's diagonal: r_i^2 / sigma^2 is
         * chi-square(1), so the relative error is about sqrt(2 / N) times
         * the predictors' kurtosis factor sqrt(3): 4.5 of those. */
        assert_true(fabs(curv[j] / f->t.A[j * D + j] - 1) <
                    4.5 * sqrt(6.0 / N));
    }
    /* Every evaluation of the search is counted, and it cost at least one
     * pass of its search and the pass of its store. */
    assert_int_equal(S->grads(&f->ch.c), cv->grads);
    assert_true(cv->grads >= 2 * N);
    /* The generalised linear model keeps its scalars at the mode. */
    assert_non_null(cv->s);
    close_chain(f);
}

/* M minibatch estimates at th: means and variances of grad and of U. */
static void estimates(fixture *f, const double *th, size_t n, int M,
                      double *mean, double *var, double *Umean, double *Use)
{
    double s[D] = {0}, ss[D] = {0}, su = 0, ssu = 0, g[D], U;
    for (int k = 0; k < M; k++) {
        assert_int_equal(S->grad_batch(&f->ch.c, th, n, g, &U, NULL), 0);
        for (size_t j = 0; j < D; j++) {
            s[j] += g[j];
            ss[j] += g[j] * g[j];
        }
        su += U;
        ssu += U * U;
    }
    for (size_t j = 0; j < D; j++) {
        mean[j] = s[j] / M;
        var[j] = ss[j] / M - mean[j] * mean[j];
    }
    *Umean = su / M;
    *Use = sqrt((ssu / M - *Umean * *Umean) / M);
}

/* Unbiased (mean within 4.5 standard errors of the closed form) with the
 * closed-form variance (within 10%: the sample variance of M = 20000
 * estimates, near-Gaussian sums of 20 rows, has a relative standard
 * error of about 1%). */
static void check_estimator(fixture *f, const double *th, const char *what,
                            double *var_out)
{
    enum { M = 20000 };
    size_t n = 20;
    double mean[D], var[D], exact[D], want[D], Um, Use;
    double Ux = U_exact(&f->t, th, exact);
    estimates(f, th, n, M, mean, var, &Um, &Use);
    ra_variance(&f->t, th, f->cv ? f->run.cv.mode : NULL, n, want);
    for (size_t j = 0; j < D; j++) {
        double se = sqrt(var[j] / M);
        print_message("%s: grad[%zu] mean %.10g, exact %.10g (%.2f se); "
                      "variance %.6g, closed form %.6g\n",
                      what, j, mean[j], exact[j], (mean[j] - exact[j]) / se,
                      var[j], want[j]);
        assert_true(fabs(mean[j] - exact[j]) < 4.5 * se);
        assert_true(fabs(var[j] / want[j] - 1) < 0.1);
        var_out[j] = var[j];
    }
    print_message("%s: U mean %.10g, exact %.10g (%.2f se)\n", what, Um, Ux,
                  (Um - Ux) / Use);
    assert_true(fabs(Um - Ux) < 4.5 * Use);
}

static void test_unbiased(void **state)
{
    fixture *f = *state;
    double th[D], vcv[D], vplain[D];
    for (size_t j = 0; j < D; j++)
        th[j] = f->t.m[j] + (j ? -1.5 : 2.0) * sqrt(f->t.Ainv[j * D + j]);
    open_chain(f, 1, 1, 20);
    check_estimator(f, th, "cv (glm)", vcv);
    close_chain(f);
    open_chain(f, 0, 1, 20);
    check_estimator(f, th, "cv (general)", vcv);
    close_chain(f);
    open_chain(f, 1, 0, 20);
    check_estimator(f, th, "plain", vplain);
    close_chain(f);
}

/* Near the mode the control variates leave almost no noise. */
static void test_variance_near_mode(void **state)
{
    fixture *f = *state;
    double th[D], vcv[D], vplain[D], want_cv[D], want_plain[D];
    for (size_t j = 0; j < D; j++)
        th[j] = f->t.m[j] + 0.1 * sqrt(f->t.Ainv[j * D + j]);
    open_chain(f, 1, 1, 20);
    check_estimator(f, th, "cv near the mode", vcv);
    ra_variance(&f->t, th, f->run.cv.mode, 20, want_cv);
    close_chain(f);
    open_chain(f, 1, 0, 20);
    check_estimator(f, th, "plain near the mode", vplain);
    ra_variance(&f->t, th, NULL, 20, want_plain);
    close_chain(f);
    for (size_t j = 0; j < D; j++) {
        print_message("variance ratio cv / plain [%zu]: %.3g (closed form "
                      "%.3g)\n",
                      j, vcv[j] / vplain[j], want_cv[j] / want_plain[j]);
        assert_true(want_cv[j] < 1e-3 * want_plain[j]);
        assert_true(vcv[j] < 1e-3 * vplain[j]);
    }
}

/* The two paths compute the same estimate from the same rows, and count
 * what they evaluate: n a minibatch with the scalars kept, 2n without. */
static void test_glm_equals_general(void **state)
{
    fixture *f = *state;
    fixture *h = calloc(1, sizeof *h);
    h->t = f->t;
    open_chain(f, 1, 1, 20);
    open_chain(h, 0, 1, 20);
    double th[D] = {f->t.m[0] + 0.01, f->t.m[1] - 0.001};
    for (int k = 0; k < 200; k++) {
        double g1[D], g2[D], U1, U2;
        uint64_t c1 = S->grads(&f->ch.c), c2 = S->grads(&h->ch.c);
        assert_int_equal(S->grad_batch(&f->ch.c, th, 20, g1, &U1, NULL), 0);
        assert_int_equal(S->grad_batch(&h->ch.c, th, 20, g2, &U2, NULL), 0);
        assert_int_equal(S->grads(&f->ch.c) - c1, 20);
        assert_int_equal(S->grads(&h->ch.c) - c2, 40);
        /* Equal but for rounding in sums of terms as large as the
         * likelihood's gradient at the mode. */
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(g1[j] - g2[j]) <=
                        1e-9 * (fabs(g1[j]) + fabs(f->run.cv.lik_grad[j])));
        assert_true(fabs(U1 - U2) <= 1e-9 * fabs(U1));
    }
    close_chain(h);
    close_chain(f);
    free(h);
}

/* The Gaussian location model: grad U_i(theta) - grad U_i(mode) is the
 * same for every row, so the estimate has no noise at all. */
static void test_gauss_exact(void **state)
{
    (void)state;
    enum { NG = 300, DG = 2 };
    static double v[NG * DG];
    drift_rng r;
    drift_rng_seed(&r, 99, 0);
    double sum[DG] = {0};
    for (size_t i = 0; i < NG * DG; i++) {
        v[i] = 1 + drift_rng_normal(&r);
        sum[i % DG] += v[i];
    }
    const char *names[DG] = {"y.1", "y.2"};
    char *csv = th_write_csv(names, DG, v, NG);
    fixture *f = calloc(1, sizeof *f);
    th_open(&f->tp, "gauss", csv, NULL, 0);
    char *hs[] = {"h=1e-3"};
    th_run run = {.sampler = "sgld", .set = hs, .n_set = 1, .batch = 5,
                  .seed = 3, .gradient = DRIFT_GRADIENT_CV};
    th_chain_open(&f->ch, &f->tp, &run, NULL, NULL, f->theta);
    f->ch.c.run = &f->run;
    double start[DG] = {0, 0};
    f->ch.c.phase = DRIFT_CHAIN_SETUP;
    assert_int_equal(drift_mode_setup(&f->ch.c, start), DRIFT_OK);
    f->ch.c.phase = DRIFT_CHAIN_STEPPING;
    /* Posterior precision 1/tau^2 + N (sigma 1, tau 10, mu0 0). */
    double a = 0.01 + NG;
    double th[DG] = {3.0, -1.0};
    for (int k = 0; k < 100; k++) {
        double g[DG];
        assert_int_equal(S->grad_batch(&f->ch.c, th, 5, g, NULL, NULL), 0);
        for (size_t j = 0; j < DG; j++) {
            double exact = a * th[j] - sum[j];
            assert_true(fabs(g[j] - exact) < 1e-9 * (fabs(exact) + sum[j]));
        }
    }
    th_chain_close(&f->ch);
    drift_mode_release(&f->run.cv);
    th_close(&f->tp);
    free(f);
    unlink(csv);
    free(csv);
}

/* Stationary covariance of sgld's recursion with preconditioner P on the
 * ridge posterior under cv, theta' - m = B (theta - m) - h P eps +
 * sqrt(2h) P^(1/2) xi, B = I - h P A: eps has covariance (N^2/n) Cov_i(M_i
 * delta), M_i = x_i x_i' / sigma^2, delta = theta - mode, whose mean over
 * the stationary law is (N^2/n) ((1/N) sum_i M_i S M_i - Mbar S Mbar); S
 * solves the Lyapunov equation with that noise added, by fixed point. */
static void cv_stationary(const data *t, const double *P, double h,
                          size_t n, double *Sst)
{
    double B[4], W[4], Mbar[4] = {0};
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < D; k++)
            B[j * D + k] = (j == k) - h * (P[j * D] * t->A[k] +
                                           P[j * D + 1] * t->A[D + k]);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                Mbar[j * D + k] += t->X[i * D + j] * t->X[i * D + k] /
                                   (SIGMA * SIGMA) / N;
    memset(Sst, 0, 4 * sizeof *Sst);
    for (int it = 0; it < 20; it++) {
        double Q[4] = {0}, MS[4], T[4];
        for (size_t i = 0; i < N; i++) {
            const double *x = t->X + i * D;
            double Mi[4] = {x[0] * x[0], x[0] * x[1], x[1] * x[0],
                            x[1] * x[1]};
            for (size_t q = 0; q < 4; q++)
                Mi[q] /= SIGMA * SIGMA;
            for (size_t j = 0; j < D; j++)
                for (size_t k = 0; k < D; k++)
                    MS[j * D + k] = Mi[j * D] * Sst[k] +
                                    Mi[j * D + 1] * Sst[D + k];
            for (size_t j = 0; j < D; j++)
                for (size_t k = 0; k < D; k++)
                    Q[j * D + k] += (MS[j * D] * Mi[k] +
                                     MS[j * D + 1] * Mi[D + k]) / N;
        }
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                MS[j * D + k] = Mbar[j * D] * Sst[k] +
                                Mbar[j * D + 1] * Sst[D + k];
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                T[j * D + k] = MS[j * D] * Mbar[k] +
                               MS[j * D + 1] * Mbar[D + k];
        /* W = 2h P + h^2 P q P */
        double q[4], PQ[4];
        for (size_t j = 0; j < 4; j++)
            q[j] = (double)N * N / (double)n * (Q[j] - T[j]);
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                PQ[j * D + k] = P[j * D] * q[k] + P[j * D + 1] * q[D + k];
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                W[j * D + k] = h * h * (PQ[j * D] * P[k] +
                                        PQ[j * D + 1] * P[D + k]) +
                               2 * h * P[j * D + k];
        lref_lyap(D, B, W, Sst);
    }
}

static void test_sgld_mode_metric(void **state)
{
    fixture *f = *state;
    th_problem tp;
    char *sets[] = {"glm=1"};
    th_open(&tp, "ridge", f->t.csv, sets, 1);
    const double h = 0.1;
    const size_t n = 200;
    char *ss[] = {"h=0.1", "precond=mode"};
    th_run r = {.sampler = "sgld", .set = ss, .n_set = 2, .batch = n,
                .iters = 40000, .warmup = 200, .seed = 21,
                .init_mode = DRIFT_INIT_MODE,
                .gradient = DRIFT_GRADIENT_CV};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    /* P: the curvature at the mode, the empirical Fisher diagonal plus
     * the prior's, here at m (the engine's mode is within 0.05 sd of it;
     * S depends smoothly on P). */
    double P[4] = {0}, Sst[4];
    for (size_t j = 0; j < D; j++) {
        double fisher = 0, g[D];
        for (size_t i = 0; i < N; i++) {
            row_grad(&f->t, i, f->t.m, g);
            fisher += g[j] * g[j];
        }
        P[j * D + j] = 1 / (fisher + 1 / (TAU * TAU));
    }
    cv_stationary(&f->t, P, h, n, Sst);
    lref_moments mo;
    lref_compute(&d, 2, D, &mo);
    lref_check("sgld, cv, precond=mode", &mo, D, f->t.m, Sst, 0, 0);
    th_draws_free(&d);
    th_close(&tp);
}

/* precond=dense on predictors correlated by 0.99 (posterior correlation
 * about -0.99): P is the inverse of the empirical Fisher matrix at the
 * mode plus the prior's 1/tau^2, computed here at m; the draws follow the
 * Lyapunov law of the recursion with that P.  The diagonal metric would
 * need about 1 / (1 - 0.99) = 100 times as many steps. */
static void test_sgld_dense_metric(void **state)
{
    (void)state;
    data *t = calloc(1, sizeof *t);
    make_data_rho(t, 0.99);
    th_problem tp;
    char *sets[] = {"glm=1"};
    th_open(&tp, "ridge", t->csv, sets, 1);
    const double h = 0.1;
    const size_t n = 200;
    char *ss[] = {"h=0.1", "precond=dense"};
    th_run r = {.sampler = "sgld", .set = ss, .n_set = 2, .batch = n,
                .iters = 40000, .warmup = 200, .seed = 22,
                .init_mode = DRIFT_INIT_MODE,
                .gradient = DRIFT_GRADIENT_CV};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    double F[4] = {0}, P[4], Sst[4], g[D];
    for (size_t i = 0; i < N; i++) {
        row_grad(t, i, t->m, g);
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                F[j * D + k] += g[j] * g[k];
    }
    F[0] += 1 / (TAU * TAU);
    F[3] += 1 / (TAU * TAU);
    double det = F[0] * F[3] - F[1] * F[2];
    P[0] = F[3] / det;
    P[3] = F[0] / det;
    P[1] = P[2] = -F[1] / det;
    cv_stationary(t, P, h, n, Sst);
    print_message("posterior correlation %.4f\n",
                  t->Ainv[1] / sqrt(t->Ainv[0] * t->Ainv[3]));
    lref_moments mo;
    lref_compute(&d, 2, D, &mo);
    lref_check("sgld, cv, precond=dense", &mo, D, t->m, Sst, 0, 0);
    th_draws_free(&d);
    th_close(&tp);
    unlink(t->csv);
    free(t->csv);
    free(t);
}

/* mvn: N(1, diag(0.1^2, 10^2)), no data.  With the unit metric a step
 * stable on the narrow coordinate (h = 1e-3 = 0.1 sd_1^2) needs 10^5
 * steps to cross the wide one; the metric learned in warmup makes both
 * relax in about 10.  Its stationary variance is 2 sd^2 / (2 - a), a = h
 * P_j / sd_j^2 about 0.1 (P_j / sd_j^2 near 1 / sd_1^2 once learned) and
 * below 0.2, which the allowance on the variance covers. */
static void test_warmup_metric(void **state)
{
    (void)state;
    th_problem tp;
    char *mset[] = {"dim=2", "sd=0.1", "ratio=100", "mean=1"};
    th_open(&tp, "mvn", NULL, mset, 4);
    const double sd[2] = {0.1, 10};
    for (int unit = 0; unit <= 1; unit++) {
        char *ss[] = {"h=1e-3", unit ? "precond=unit" : "precond=warmup"};
        th_run r = {.sampler = "sgld", .set = ss, .n_set = 2,
                    .iters = 40000, .warmup = 1000, .seed = 8};
        th_draws d;
        assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
        lref_moments mo;
        lref_compute(&d, 2, 2, &mo);
        for (size_t j = 0; j < 2; j++) {
            double v = mo.cov[j * 2 + j], s2 = sd[j] * sd[j];
            print_message("precond=%s: mean[%zu] %.5g (se %.2g), var %.5g "
                          "(se %.2g), sd^2 %.5g\n",
                          unit ? "unit" : "warmup", j, mo.mean[j],
                          mo.se_mean[j], v, mo.se_cov[j * 2 + j], s2);
            if (unit)
                continue;
            assert_true(fabs(mo.mean[j] - 1) < 4.5 * mo.se_mean[j]);
            double lo = s2, hi = s2 * 2 / (2 - 0.2);
            assert_true(v > lo - 4.5 * mo.se_cov[j * 2 + j]);
            assert_true(v < hi + 4.5 * mo.se_cov[j * 2 + j]);
        }
        /* The unit metric's wide coordinate has not crossed its range. */
        if (unit)
            assert_true(mo.cov[3] < 0.25 * sd[1] * sd[1]);
        th_draws_free(&d);
    }
    th_close(&tp);
}

/* What the engine refuses: cv for a full-data sampler, for one that
 * builds its own estimates, for a model without rows. */
static void test_refusals(void **state)
{
    fixture *f = *state;
    th_problem tp;
    char *sets[] = {"glm=1"};
    th_open(&tp, "ridge", f->t.csv, sets, 1);
    const char *who[] = {"nuts", "agld", "ewsg", "sbps"};
    for (size_t k = 0; k < 4; k++) {
        th_run r = {.sampler = who[k], .iters = 10, .seed = 1,
                    .gradient = DRIFT_GRADIENT_CV};
        assert_int_equal(th_sample(&tp, &r, NULL, NULL), DRIFT_EINVAL);
    }
    th_close(&tp);
    char *mset[] = {"dim=2"};
    th_open(&tp, "mvn", NULL, mset, 1);
    th_run r = {.sampler = "sgld", .iters = 10, .seed = 1,
                .gradient = DRIFT_GRADIENT_CV};
    assert_int_equal(th_sample(&tp, &r, NULL, NULL), DRIFT_EINVAL);
    /* precond=mode without cv: the chain fails in init. */
    char *ss[] = {"precond=mode"};
    th_run r2 = {.sampler = "sgld", .set = ss, .n_set = 1, .iters = 10,
                 .seed = 1};
    assert_int_equal(th_sample(&tp, &r2, NULL, NULL), DRIFT_EINVAL);
    th_close(&tp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_and_curvature),
        cmocka_unit_test(test_unbiased),
        cmocka_unit_test(test_variance_near_mode),
        cmocka_unit_test(test_glm_equals_general),
        cmocka_unit_test(test_gauss_exact),
        cmocka_unit_test(test_sgld_mode_metric),
        cmocka_unit_test(test_sgld_dense_metric),
        cmocka_unit_test(test_warmup_metric),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
