/* test_sghmc.c: sghmc (plugins/samplers/sghmc.c) on the correlated 2-D
 * Gaussian corrgauss, against the exact law of its recursion.
 *
 * With a random-access minibatch gradient, z = (theta - m, r) follows
 *     theta' - m = (theta - m) + h r,
 *     r'         = (1 - h gamma) r - h Q (theta - m) - h eps + sigma sqrt(h) xi,
 * eps the minibatch error (independent of theta for this target, covariance
 * (N^2/n) P Sc P), so its stationary covariance solves the 4 x 4 Lyapunov
 * equation S = A S A' + W, W = diag(0, h^2 Cov eps + sigma^2 h I): the
 * chain's law exactly, and kinetic__ = |r|^2 / 4 has mean tr S_rr / 4.
 * Tolerances are 4.5 batch-means standard errors. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lref.h"

enum { BATCH = 20 };

/* N = 40 rows, rho = 0.6, s1 = 1, s2 = 2, tau = 10: posterior precision
 * eigenvalues about 9 and 69. */
static void target(lref_target *t)
{
    lref_make(t, 40, 2, 0.6, 1, 2, 10, 12);
}

/* The recursion's stationary covariance S (4 x 4, theta then r); with
 * symplectic, theta moves with the new momentum: theta' - m = (theta - m)
 * + h r', so the theta rows are (I - h^2 Q, h D) and the noise w enters
 * theta' as h w. */
static void law(const lref_target *t, double h, double gamma, double sigma,
                int symplectic, double *S)
{
    double E[4], A[16] = {0}, W[16] = {0}, D = 1 - h * gamma;
    lref_gnoise(t, BATCH, E);
    for (int j = 0; j < 2; j++) {
        A[j * 4 + j] = 1;
        A[j * 4 + 2 + j] = symplectic ? h * D : h;
        A[(2 + j) * 4 + 2 + j] = D;
        for (int k = 0; k < 2; k++) {
            A[(2 + j) * 4 + k] = -h * t->Q[j * 2 + k];
            if (symplectic)
                A[j * 4 + k] -= h * h * t->Q[j * 2 + k];
        }
    }
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) {
            double c = h * h * E[j * 2 + k] + (j == k ? sigma * sigma * h : 0);
            W[(2 + j) * 4 + 2 + k] = c;
            if (symplectic) {
                W[j * 4 + 2 + k] = W[(2 + j) * 4 + k] = h * c;
                W[j * 4 + k] = h * h * c;
            }
        }
    lref_lyap(4, A, W, S);
}

static void run_and_check(double h, double gamma, int symplectic,
                          uint64_t iters, uint64_t thin, int against_posterior)
{
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double sigma = sqrt(2 * gamma), S[16];
    law(&t, h, gamma, sigma, symplectic, S);
    double Sth[4] = {S[0], S[1], S[4], S[5]};
    double kin = (S[10] + S[15]) / 4;
    char set[3][40];
    snprintf(set[0], sizeof set[0], "h=%.17g", h);
    snprintf(set[1], sizeof set[1], "gamma=%.17g", gamma);
    snprintf(set[2], sizeof set[2], "scheme=%s", symplectic ? "symplectic" : "em");
    char *sets[] = {set[0], set[1], set[2]};
    th_run r = {.sampler = "sghmc", .set = sets, .n_set = 3, .batch = BATCH,
                .access = DRIFT_ACCESS_RA, .iters = iters, .thin = thin,
                .warmup = (uint64_t)(40 / h), .seed = 51};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    lref_moments mo;
    /* Columns: lp__, grads__, kinetic__, theta.1, theta.2. */
    lref_compute(&d, 3, 2, &mo);
    char label[80];
    print_message("sghmc %s h=%g gamma=%g: law var %.5g %.5g (posterior "
                  "%.5g %.5g)\n",
                  set[2], h, gamma, Sth[0], Sth[3], t.Qinv[0], t.Qinv[3]);
    if (against_posterior) {
        double bias = 0;
        for (int k = 0; k < 4; k++)
            bias = fmax(bias, fabs(Sth[k] - t.Qinv[k]));
        print_message("closed-form bias %.3g\n", bias);
        assert_true(bias < 0.05 * t.Qinv[0]);
        snprintf(label, sizeof label, "sghmc h=%g (posterior)", h);
        lref_check(label, &mo, 2, t.m, t.Qinv, 0, bias);
    } else {
        snprintf(label, sizeof label, "sghmc h=%g (chain's exact law)", h);
        lref_check(label, &mo, 2, t.m, Sth, 0, 0);
    }
    double k_mean = th_mean(&d, 2, 0), k_se = lref_se(&d, 2);
    print_message("kinetic__ mean %.5g, law %.5g (%.2f se)\n", k_mean, kin,
                  fabs(k_mean - kin) / k_se);
    assert_true(fabs(k_mean - kin) < 4.5 * k_se);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* A large step (h q_max = 1.4): the minibatch heat and the discretisation
 * raise the variances well above the posterior's; the draws follow the
 * recursion's law. */
static void test_exact_law(void **state)
{
    (void)state;
    run_and_check(0.02, 5, 0, 400000, 2, 0);
}

/* The semi-implicit scheme at a step and friction (h q_max = 1.4 > gamma
 * = 1) where explicit Euler would diverge. */
static void test_symplectic_law(void **state)
{
    (void)state;
    run_and_check(0.02, 1, 1, 400000, 2, 0);
}

/* A small step: the posterior within error plus the closed-form bias. */
static void test_posterior(void **state)
{
    (void)state;
    run_and_check(5e-4, 5, 0, 1000000, 5, 1);
}

/* sigma = 0 with friction: no heat at all beyond the minibatch's, so the
 * law is the recursion's with sigma = 0 (and much colder); the NaN default
 * is replaced by sqrt(2 gamma) only when sigma is not set. */
static void test_sigma(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double S0[16], S1[16];
    law(&t, 0.02, 5, 0, 0, S0);
    law(&t, 0.02, 5, sqrt(10), 0, S1);
    char *sets[] = {"h=0.02", "gamma=5", "sigma=0"};
    th_run r = {.sampler = "sghmc", .set = sets, .n_set = 3, .batch = BATCH,
                .iters = 400000, .thin = 2, .warmup = 2000, .seed = 52};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    lref_moments mo;
    lref_compute(&d, 3, 2, &mo);
    double Sth[4] = {S0[0], S0[1], S0[4], S0[5]};
    print_message("sigma=0: law var %.4g (with the default sigma %.4g)\n",
                  S0[0], S1[0]);
    assert_true(S0[0] < 0.5 * S1[0]);
    lref_check("sghmc sigma=0 (exact law)", &mo, 2, t.m, Sth, 0, 0);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* grads__ counts the minibatch rows: b per step. */
static void test_cost(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    char *sets[] = {"h=1e-3"};
    th_run r = {.sampler = "sghmc", .set = sets, .n_set = 1, .batch = 7,
                .iters = 100, .seed = 1};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    assert_true(d.v[99 * d.cols + 1] == 700);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_law),
        cmocka_unit_test(test_symplectic_law),
        cmocka_unit_test(test_posterior),
        cmocka_unit_test(test_sigma),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
