/* test_sgld.c: SGLD against closed forms on the conjugate Gaussian model
 * (tests/models/gauss.c).  With a minibatch gradient the SGLD iterate is a
 * linear recursion,
 *     theta' - m = (1 - h a)(theta - m) - h eps + sqrt(2h) xi,
 * a the posterior precision, eps the minibatch noise of variance
 * (N^2 / n) s_y^2 / sigma^4 under random access (s_y^2 the data's
 * population variance), so its stationary mean is the posterior mean m and
 * its stationary variance is (h^2 Var eps + 2h) / (1 - (1 - h a)^2).
 * Tolerances are 4.5 Monte Carlo standard errors of an AR(1) chain. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/rng.h"
#include "harness.h"

enum { N = TH_GAUSS_N, D = TH_GAUSS_D };

typedef th_gauss truth;

/* y_i ~ N(centre, I), the gauss plugin's defaults (harness.h). */
static char *make_data(truth *t) { return th_gauss_data(t); }

static void run_and_check(double h, size_t batch, uint64_t iters,
                          int against_posterior)
{
    truth t;
    char *csv = make_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    char set[32];
    snprintf(set, sizeof set, "h=%.17g", h);
    char *sets[] = {set};
    th_run r = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = batch,
                .iters = iters, .seed = 77};
    /* Warm up for 10 relaxation times 1/(h a): the start's pull < e^-10. */
    r.warmup = (uint64_t)ceil(10 / (h * t.a));
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    assert_int_equal(d.n, iters);
    double rho = 1 - h * t.a;
    for (size_t j = 0; j < D; j++) {
        double var_eps = (double)N * N / (double)batch * t.s2y[j];
        double V = (h * h * var_eps + 2 * h) / (1 - rho * rho);
        double n = (double)d.n;
        double mean = th_mean(&d, 2 + j, 0), var = th_var(&d, 2 + j, 0);
        double se_mean = sqrt(V / n * (1 + rho) / (1 - rho));
        double se_var = sqrt(2 * V * V / n * (1 + rho * rho) / (1 - rho * rho));
        double target_var = against_posterior ? 1 / t.a : V;
        /* Against the exact posterior, the tolerance adds the closed-form
         * discretisation bias |V - 1/a|, stated rather than hidden. */
        double bias = against_posterior ? fabs(V - 1 / t.a) : 0;
        print_message("theta.%zu: mean %.6g (m %.6g, se %.2g), var %.6g "
                      "(target %.6g, stationary %.6g, se %.2g)\n",
                      j + 1, mean, t.m[j], se_mean, var, target_var, V,
                      se_var);
        assert_true(fabs(mean - t.m[j]) < 4.5 * se_mean);
        assert_true(fabs(var - target_var) < 4.5 * se_var + bias);
        if (against_posterior)
            assert_true(bias < 0.05 / t.a); /* the setting is honest */
    }
    th_draws_free(&d);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* A large step: the stationary law of the discretised chain exactly. */
static void test_stationary_law(void **state)
{
    (void)state;
    run_and_check(2e-3, 50, 200000, 0);
}

/* A small step: the posterior itself, within Monte Carlo error plus the
 * (small, computed) discretisation bias. */
static void test_posterior(void **state)
{
    (void)state;
    run_and_check(1e-5, 100, 1000000, 1);
}

static void test_reproducible(void **state)
{
    (void)state;
    truth t;
    char *csv = make_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    char *sets[] = {"h=0.001"};
    th_run r = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 5,
                .iters = 500, .seed = 3};
    th_draws a, b, c;
    assert_int_equal(th_sample(&tp, &r, &a, NULL), 0);
    assert_int_equal(th_sample(&tp, &r, &b, NULL), 0);
    r.seed = 4;
    assert_int_equal(th_sample(&tp, &r, &c, NULL), 0);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.v, b.v, a.n * a.cols * sizeof(double));
    assert_true(memcmp(a.v, c.v, a.n * a.cols * sizeof(double)) != 0);
    th_draws_free(&a);
    th_draws_free(&b);
    th_draws_free(&c);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stationary_law),
        cmocka_unit_test(test_posterior),
        cmocka_unit_test(test_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
