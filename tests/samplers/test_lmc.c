/* test_lmc.c: the full-data Langevin samplers (plugins/samplers/lmc.c) on
 * the correlated 2-D Gaussian corrgauss, against closed forms.
 *
 * lmc with the exact gradient is the linear recursion
 *     theta' - m = (I - h Q)(theta - m) + sqrt(2h) xi,
 * so its stationary law is N(m, S) with S = A S A' + 2h I, A = I - h Q
 * (solved by lref_lyap): the chain's law exactly, at any stable h, which
 * differs visibly from the posterior N(m, Q^-1) at a large step.
 * mala is exact: its draws have the posterior's moments at any step size.
 * Tolerances are 4.5 batch-means standard errors. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lref.h"

/* N = 100 rows, rho = 0.6, s1 = 1, s2 = 2, tau = 10: posterior precision
 * eigenvalues about 22 and 172. */
static void target(lref_target *t) { lref_make(t, 100, 2, 0.6, 1, 2, 10, 11); }

static void run(th_problem *tp, const char *sampler, char **set, size_t n_set,
                uint64_t warmup, uint64_t iters, uint64_t seed, th_draws *d)
{
    th_run r = {.sampler = sampler, .set = set, .n_set = n_set,
                .iters = iters, .warmup = warmup, .seed = seed};
    assert_int_equal(th_sample(tp, &r, d, NULL), DRIFT_OK);
    assert_int_equal(d->n, iters);
}

static void lmc_at(double h, uint64_t iters, int against_posterior)
{
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    char set[32];
    snprintf(set, sizeof set, "h=%.17g", h);
    char *sets[] = {set};
    th_draws d;
    /* 20 relaxation times 1/(h q_min) of warmup. */
    run(&tp, "lmc", sets, 1, (uint64_t)(20 / (h * 20)), iters, 5, &d);
    double A[4], W[4] = {2 * h, 0, 0, 2 * h}, S[4];
    for (int k = 0; k < 4; k++)
        A[k] = (k == 0 || k == 3) - h * t.Q[k];
    lref_lyap(2, A, W, S);
    print_message("lmc h=%g: posterior var %.5g %.5g, chain's %.5g %.5g\n", h,
                  t.Qinv[0], t.Qinv[3], S[0], S[3]);
    lref_moments mo;
    lref_compute(&d, 2, 2, &mo);
    char label[64];
    if (against_posterior) {
        /* The tolerance adds the closed-form discretisation bias, stated
         * rather than hidden, and the setting must make it small. */
        double bias = 0;
        for (int k = 0; k < 4; k++)
            bias = fmax(bias, fabs(S[k] - t.Qinv[k]));
        print_message("lmc h=%g: closed-form bias %.3g\n", h, bias);
        assert_true(bias < 0.05 * t.Qinv[0]);
        snprintf(label, sizeof label, "lmc h=%g (posterior)", h);
        lref_check(label, &mo, 2, t.m, t.Qinv, 0, bias);
    } else {
        snprintf(label, sizeof label, "lmc h=%g (chain's exact law)", h);
        lref_check(label, &mo, 2, t.m, S, 0, 0);
    }
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* A large step (h times the largest precision eigenvalue about 1): the
 * stationary variances are 30-100% above the posterior's, and the draws
 * must show the chain's law. */
static void test_lmc_large_step(void **state)
{
    (void)state;
    lmc_at(6e-3, 200000, 0);
}

/* A small step: the posterior, within Monte Carlo error plus the
 * closed-form bias (about 1% of the variances). */
static void test_lmc_small_step(void **state)
{
    (void)state;
    lmc_at(2e-4, 400000, 1);
}

/* mala at a fixed large step (no warmup, so no adaptation): exactly the
 * posterior's moments although lmc at this step is far off. */
static void test_mala_invariant(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    char *sets[] = {"h=0.012"};
    th_draws d;
    run(&tp, "mala", sets, 1, 0, 200000, 9, &d);
    /* Columns: lp__, grads__, accept_stat__, stepsize__, theta.1, theta.2.
     * Started at 0, about 25 sd from the mode: drop the first 2000. */
    th_draws tail = d;
    tail.v += 2000 * d.cols;
    tail.n -= 2000;
    lref_moments mo;
    lref_compute(&tail, 4, 2, &mo);
    lref_check("mala h=0.012", &mo, 2, t.m, t.Qinv, 0, 0);
    double acc = th_mean(&d, 2, 0);
    print_message("mala h=0.012: acceptance %.3f\n", acc);
    assert_true(acc > 0.05 && acc < 0.95); /* a real test of the MH step */
    for (size_t i = 0; i < d.n; i++)        /* no adaptation without warmup */
        assert_true(d.v[i * d.cols + 3] == 0.012);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* Dual averaging during warmup from a poor initial step (1000 times too
 * small): after warmup the step is fixed, the acceptance rate is near the
 * 0.574 target (dual averaging hits it on average over warmup; the
 * averaged final step lands within a few hundredths, so 0.1 is a coarse
 * bound, not a Monte Carlo one) and the moments are the posterior's. */
static void test_mala_adapts(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    char *sets[] = {"h=1e-6"};
    th_draws d;
    run(&tp, "mala", sets, 1, 3000, 100000, 21, &d);
    double acc = th_mean(&d, 2, 0), step = d.v[3];
    print_message("mala adapted: step %g, acceptance %.3f\n", step, acc);
    assert_true(fabs(acc - 0.574) < 0.1);
    assert_true(step > 1e-4);
    for (size_t i = 0; i < d.n; i++)
        assert_true(d.v[i * d.cols + 3] == step);
    lref_moments mo;
    lref_compute(&d, 4, 2, &mo);
    lref_check("mala adapted", &mo, 2, t.m, t.Qinv, 0, 0);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* mala where the density is zero on three quarters of the plane
 * (halfgauss: U = +inf unless both coordinates are >= 0, two half-normals
 * of scales 1 and 10): every proposal outside is a value the oracle
 * returns (DRIFT_ENONFINITE), which mala rejects, and the draws have the
 * half-normals' moments, s sqrt(2/pi) and s^2 (1 - 2/pi), with the
 * diagonal metric learning the scales (the adaptation block's variances
 * are the half-normals' within 35%, a window's estimate). */
static void test_mala_half_space(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    char out[] = "/tmp/drift-half-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_run r = {.sampler = "mala", .iters = 200000, .warmup = 2000,
                .seed = 17, .out_path = out};
    th_draws d;
    drift_chain_result res;
    if (th_sample(&tp, &r, &d, &res))
        fail_msg("mala on halfgauss: %s", res.message);
    double c = 2 / M_PI, m[2] = {sqrt(c), 10 * sqrt(c)},
           S[4] = {1 - c, 0, 0, 100 * (1 - c)};
    lref_moments mo;
    lref_compute(&d, 4, 2, &mo);
    lref_check("mala on a half space", &mo, 2, m, S, 0, 0);
    size_t rejected = 0;
    for (size_t i = 0; i < d.n; i++) {
        rejected += d.v[i * d.cols + 2] == 0;
        assert_true(d.v[i * d.cols + 4] >= 0 && d.v[i * d.cols + 5] >= 0);
    }
    print_message("mala on a half space: %zu of %zu proposals had no "
                  "finite density, acceptance %.3f\n",
                  rejected, d.n, th_mean(&d, 2, 0));
    assert_true(rejected > d.n / 100);
    char *csv = th_slurp(out);
    char *blk = strstr(csv, "# Diagonal elements of inverse mass matrix:\n# ");
    assert_non_null(blk);
    double v1, v2;
    assert_int_equal(sscanf(blk + 46, "%lf, %lf", &v1, &v2), 2);
    print_message("adapted M^-1: %g %g (variances %g %g)\n", v1, v2, S[0],
                  S[3]);
    assert_true(fabs(v1 / S[0] - 1) < 0.35 && fabs(v2 / S[3] - 1) < 0.35);
    free(csv);
    unlink(out);
    th_draws_free(&d);
    th_close(&tp);
}

/* grads__ counts one data pass per step (per proposal, plus the initial
 * point). */
static void test_cost(void **state)
{
    (void)state;
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    char *sets[] = {"h=1e-4"};
    th_draws d;
    run(&tp, "lmc", sets, 1, 0, 50, 1, &d);
    assert_true(d.v[49 * d.cols + 1] == 51.0 * 100);
    th_draws_free(&d);
    run(&tp, "mala", sets, 1, 0, 50, 1, &d);
    assert_true(d.v[49 * d.cols + 1] == 51.0 * 100);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lmc_large_step),
        cmocka_unit_test(test_lmc_small_step),
        cmocka_unit_test(test_mala_invariant),
        cmocka_unit_test(test_mala_adapts),
        cmocka_unit_test(test_mala_half_space),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
