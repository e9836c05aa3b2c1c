/* test_psgld.c: sgld and psgld (plugins/samplers/sgld.c, psgld.c) on the
 * correlated 2-D Gaussian corrgauss.
 *
 * sgld with a random-access minibatch gradient is the linear recursion
 *     theta' - m = (I - h Q)(theta - m) - h eps + sqrt(2h) xi,
 * eps the minibatch error, independent of theta for this target, with
 * covariance (N^2/n) P Sc P (lref_gnoise), so its stationary covariance
 * solves S = A S A' + h^2 Cov eps + 2h I exactly (lref_lyap).
 * psgld's preconditioner G = 1/(lambda + sqrt(V)) settles near
 * G_k = N / sqrt((Q S Q)_kk + Cov eps_kk): V averages the squared mean
 * per-datum gradient, whose second moment is that over N^2 when theta has
 * covariance S; the same recursion with that fixed G,
 *     theta' - m = (I - h G Q)(theta - m) - h G eps + sqrt(2 h G) xi,
 * is psgld's reference.  Tolerances are 4.5 batch-means standard
 * errors. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lref.h"

enum { N_ROWS = 40, BATCH = 20 };

/* rho = 0.6, s1 = 1, s2 = 2, tau = 10: posterior precision eigenvalues
 * about 9 and 69. */
static void target(lref_target *t)
{
    lref_make(t, N_ROWS, 2, 0.6, 1, 2, 10, 12);
}

/* Stationary covariance of theta' - m = (I - h G Q)(theta - m) - h G eps
 * + sqrt(2 h G) xi for a fixed diagonal G. */
static void linear_law(const lref_target *t, double h, size_t batch,
                       const double *G, double *S)
{
    double E[4], A[4], W[4];
    lref_gnoise(t, batch, E);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) {
            A[j * 2 + k] = (j == k) - h * G[j] * t->Q[j * 2 + k];
            W[j * 2 + k] = h * h * G[j] * G[k] * E[j * 2 + k] +
                           (j == k ? 2 * h * G[j] : 0);
        }
    lref_lyap(2, A, W, S);
}

static void sample(const lref_target *t, th_problem *tp, const char *sampler,
                   double h, uint64_t warmup, uint64_t iters, uint64_t thin,
                   th_draws *d)
{
    char set[32];
    snprintf(set, sizeof set, "h=%.17g", h);
    char *sets[] = {set};
    th_run r = {.sampler = sampler, .set = sets, .n_set = 1, .batch = BATCH,
                .access = DRIFT_ACCESS_RA, .iters = iters, .warmup = warmup,
                .thin = thin, .seed = 31};
    (void)t;
    assert_int_equal(th_sample(tp, &r, d, NULL), DRIFT_OK);
    assert_int_equal(d->n, iters / thin);
}

/* sgld at a large step: the minibatch noise inflates the variances by
 * 30-90%, and the draws follow the recursion's exact law. */
static void test_sgld_exact_law(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double h = 4e-3, one[2] = {1, 1}, S[4];
    linear_law(&t, h, BATCH, one, S);
    th_draws d;
    sample(&t, &tp, "sgld", h, 2000, 400000, 2, &d);
    lref_moments mo;
    lref_compute(&d, 2, 2, &mo);
    print_message("sgld h=%g: posterior var %.5g %.5g, chain's %.5g %.5g\n",
                  h, t.Qinv[0], t.Qinv[3], S[0], S[3]);
    lref_check("sgld large step (exact law)", &mo, 2, t.m, S, 0, 0);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* sgld at a small step: the posterior within error plus the closed-form
 * bias. */
static void test_sgld_posterior(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double h = 1e-4, one[2] = {1, 1}, S[4], bias = 0;
    linear_law(&t, h, BATCH, one, S);
    for (int k = 0; k < 4; k++)
        bias = fmax(bias, fabs(S[k] - t.Qinv[k]));
    print_message("sgld h=%g: closed-form bias %.3g\n", h, bias);
    assert_true(bias < 0.05 * t.Qinv[0]);
    th_draws d;
    sample(&t, &tp, "sgld", h, 20000, 1000000, 5, &d);
    lref_moments mo;
    lref_compute(&d, 2, 2, &mo);
    lref_check("sgld small step (posterior)", &mo, 2, t.m, t.Qinv, 0, bias);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* psgld's preconditioner settled at the posterior-like law S of its own
 * recursion: G_k = N / sqrt((Q S Q)_kk + Cov eps_kk), iterated to a fixed
 * point with S = linear_law(G). */
static void settled(const lref_target *t, size_t batch, double h, double *G,
                    double *S)
{
    double E[4];
    lref_gnoise(t, batch, E);
    memcpy(S, t->Qinv, 4 * sizeof *S);
    for (int it = 0; it < 20; it++) {
        for (int k = 0; k < 2; k++) {
            double qsq = 0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    qsq += t->Q[k * 2 + a] * S[a * 2 + b] * t->Q[b * 2 + k];
            G[k] = (double)t->N / sqrt(qsq + E[k * 3]);
        }
        linear_law(t, h, batch, G, S);
    }
}

/* psgld: the recursion's law with the settled preconditioner.  psgld
 * leaves out the correction Gamma = sum_j dG_ij/dtheta_j (as Li et al.
 * do), and G depends on theta through the running average V; without
 * Gamma the small-step law is about exp(-U)/det G(theta), whose variances
 * exceed the recursion's by a relative c_k = (QSQ)_kk / ((QSQ)_kk +
 * Cov eps_kk), about n/N.  With N = 200 rows and batches of 4 that is 2-3%,
 * the allowance stated below. */
static void test_psgld_law(void **state)
{
    (void)state;
    lref_target t;
    lref_make(&t, 200, 2, 0.6, 1, 2, 10, 13);
    th_problem tp;
    lref_open(&tp, &t);
    double G[2], S[4], E[4], h = 5e-5, allow = 0, cmax = 0;
    settled(&t, 4, h, G, S);
    lref_gnoise(&t, 4, E);
    for (int k = 0; k < 2; k++) {
        double qsq = (double)t.N * (double)t.N / (G[k] * G[k]) - E[k * 3];
        double c = qsq / (qsq + E[k * 3]);
        allow = fmax(allow, c * S[k * 3]);
        cmax = fmax(cmax, c);
    }
    print_message("psgld h=%g: settled G %.4g %.4g, law var %.5g %.5g "
                  "(posterior %.5g %.5g), Gamma allowance %.3g\n",
                  h, G[0], G[1], S[0], S[3], t.Qinv[0], t.Qinv[3], allow);
    assert_true(cmax < 0.05);
    th_draws d;
    char *sets[] = {"h=5e-5"};
    th_run r = {.sampler = "psgld", .set = sets, .n_set = 1, .batch = 4,
                .access = DRIFT_ACCESS_RA, .iters = 1000000, .warmup = 5000,
                .thin = 5, .seed = 41};
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    lref_moments mo;
    lref_compute(&d, 2, 2, &mo);
    lref_check("psgld (recursion's law)", &mo, 2, t.m, S, 0, allow);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* Lag-1 autocorrelation of theta.1 under the recursion with fixed G:
 * (A S)_11 / S_11. */
static double lag1_law(const lref_target *t, double h, const double *G)
{
    double S[4];
    linear_law(t, h, BATCH, G, S);
    double A11 = 1 - h * G[0] * t->Q[0], A12 = -h * G[0] * t->Q[1];
    return (A11 * S[0] + A12 * S[2]) / S[0];
}

/* The preconditioner is what moves psgld: at the same h its lag-1
 * autocorrelation is that of the recursion with the settled G, several
 * times further from 1 than sgld's.  The measured 1 - rho has a relative
 * standard error of about sqrt(2 / (n (1 - rho))) < 15% here, so a factor
 * of 1.5 either way is a loose, not a tuned, bound. */
static void test_psgld_preconditions(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double h = 3e-5, G[2], S[4], one[2] = {1, 1};
    settled(&t, BATCH, h, G, S);
    const char *names[2] = {"sgld", "psgld"};
    double want[2] = {lag1_law(&t, h, one), lag1_law(&t, h, G)};
    for (int s = 0; s < 2; s++) {
        th_draws d;
        sample(&t, &tp, names[s], h, 20000, 400000, 1, &d);
        double m = th_mean(&d, 2, 0), num = 0, den = 0;
        for (size_t i = 0; i + 1 < d.n; i++) {
            num += (d.v[i * d.cols + 2] - m) * (d.v[(i + 1) * d.cols + 2] - m);
            den += (d.v[i * d.cols + 2] - m) * (d.v[i * d.cols + 2] - m);
        }
        double got = num / den;
        print_message("%s h=%g: 1 - lag-1 autocorrelation of theta.1 %.3g "
                      "(recursion's %.3g)\n",
                      names[s], h, 1 - got, 1 - want[s]);
        assert_true((1 - got) < 1.5 * (1 - want[s]) &&
                    (1 - got) > (1 - want[s]) / 1.5);
        th_draws_free(&d);
    }
    assert_true(1 - want[1] > 2.5 * (1 - want[0]));
    th_close(&tp);
    lref_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgld_exact_law),
        cmocka_unit_test(test_sgld_posterior),
        cmocka_unit_test(test_psgld_law),
        cmocka_unit_test(test_psgld_preconditions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
