/* test_sbps.c: the stochastic bouncy particle sampler and its
 * preconditioned variant on Bayesian logistic regression (d = 5, N = 500,
 * tests/data/logit5.csv).  The reference posterior mean is independent of
 * drift: R, self-normalised importance sampling with 4e6 multivariate-t
 * draws around the mode (tests/data/logit5.R; Monte Carlo error of each
 * mean <= 7.2e-5, negligible here).  SBPS is approximate, so the test
 * says how far it may be: within 4.5 Monte Carlo standard errors (ESS of
 * the discretised draws, Geyer) of the reference at k = 3, with the
 * violation rate reported and below 5%.  Also: k controls the bias (k = 0
 * violates the bound far more often), the columns count what the engine
 * counts, the finite-population correction is left out under random access
 * (draws with replacement), runs are reproducible, and unusable settings
 * are refused. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { D = 5, NCOL = 3 };

/* tests/data/logit5.R: posterior mean of w.1 .. w.5. */
static const double ref_mean[D] = {0.329424, -1.190888, -0.707214, -0.378465,
                                   -0.492469};
static const double ref_sd[D] = {0.112381, 0.130728, 0.118859, 0.108467,
                                 0.114418};

static char *data_path(void)
{
    const char *src = getenv("srcdir");
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/logit5.csv", src ? src : ".");
    return path;
}

typedef struct outcome {
    double viol_rate, accept_rate, passes;
} outcome;

static outcome run_check(const char *sampler, char **set, size_t n_set,
                         uint64_t iters, uint64_t seed, int check_mean)
{
    th_problem tp;
    th_open(&tp, "logistic", data_path(), NULL, 0);
    th_traj tr;
    th_run r = {.sampler = sampler, .set = set, .n_set = n_set,
                .iters = iters, .warmup = 1000, .thin_time = 0.05,
                .seed = seed, .traj = &tr};
    th_draws dr;
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, &dr, &res), DRIFT_OK);
    const double *last = dr.v + (dr.n - 1) * dr.cols;
    outcome o = {(double)res.violations / (double)res.proposals,
                 last[2] / last[3], (double)res.grads / 500.0};
    print_message("%s %s: %llu segments, time %.0f, %zu draws, %.0f data "
                  "passes; %llu proposals, %.0f bounces (acceptance %.3f), "
                  "%llu violations (rate %.4f)\n",
                  sampler, n_set ? set[0] : "", (unsigned long long)res.iterations,
                  tr.time, dr.n, o.passes, (unsigned long long)res.proposals,
                  last[2], o.accept_rate, (unsigned long long)res.violations,
                  o.viol_rate);
    /* The columns are the engine's counts (draws carry the counts at the
     * end of their segment's step, the last one at most the total). */
    assert_true(last[3] <= (double)res.proposals);
    assert_true(last[4] <= (double)res.violations);
    assert_true(last[2] <= last[3]);
    assert_true(res.proposals - last[3] < 1000);
    if (check_mean) {
        for (size_t k = 0; k < D; k++) {
            size_t col = 2 + NCOL + k;
            double m = th_mean(&dr, col, 0), sd = sqrt(th_var(&dr, col, 0));
            double se = sd / sqrt(th_ess(&dr, col, 0));
            print_message("  w.%zu: mean %.4f traj %.4f (reference %.4f, se "
                          "%.4f, %.2f se); sd %.4f (reference %.4f)\n",
                          k + 1, m, tr.mean[k], ref_mean[k], se,
                          (m - ref_mean[k]) / se, sd, ref_sd[k]);
            assert_true(fabs(m - ref_mean[k]) < 4.5 * se);
            assert_true(fabs(tr.mean[k] - ref_mean[k]) < 4.5 * se);
            /* The spread: within 15% (a loose check of the bias in the
             * second moment, which k = 3 keeps small). */
            assert_true(fabs(sd / ref_sd[k] - 1) < 0.15);
        }
    }
    th_draws_free(&dr);
    th_close(&tp);
    return o;
}

static void test_sbps_logistic(void **state)
{
    (void)state;
    char *set[] = {"k=3"};
    outcome o = run_check("sbps", set, 1, 25000, 101, 1);
    assert_true(o.viol_rate < 0.05);
}

/* The reference: a long run of drift's exact sampler, mala (step
 * adapted in warmup).  mala agrees with R's reference, and sbps at k = 3
 * agrees with mala, each within 4.5 combined Monte Carlo standard errors
 * (ESS-based). */
static void test_sbps_against_mala(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "logistic", data_path(), NULL, 0);
    th_run rm = {.sampler = "mala", .iters = 40000, .warmup = 2000,
                 .seed = 7};
    th_draws dm, ds;
    assert_int_equal(th_sample(&tp, &rm, &dm, NULL), DRIFT_OK);
    char *set[] = {"k=3"};
    th_run rs = {.sampler = "sbps", .set = set, .n_set = 1, .iters = 25000,
                 .warmup = 1000, .thin_time = 0.05, .seed = 103};
    assert_int_equal(th_sample(&tp, &rs, &ds, NULL), DRIFT_OK);
    const size_t mala_cols = 2, sbps_cols = NCOL;
    for (size_t k = 0; k < D; k++) {
        size_t cm = 2 + mala_cols + k, cs = 2 + sbps_cols + k;
        double mm = th_mean(&dm, cm, 0), ms = th_mean(&ds, cs, 0);
        double sem = sqrt(th_var(&dm, cm, 0) / th_ess(&dm, cm, 0));
        double ses = sqrt(th_var(&ds, cs, 0) / th_ess(&ds, cs, 0));
        print_message("  w.%zu: mala %.4f (se %.4f), sbps %.4f (se %.4f), "
                      "R %.4f\n",
                      k + 1, mm, sem, ms, ses, ref_mean[k]);
        assert_true(fabs(mm - ref_mean[k]) < 4.5 * sem);
        assert_true(fabs(ms - mm) < 4.5 * sqrt(sem * sem + ses * ses));
    }
    th_draws_free(&dm);
    th_draws_free(&ds);
    th_close(&tp);
}

static void test_psbps_logistic(void **state)
{
    (void)state;
    char *set[] = {"k=3"};
    outcome o = run_check("psbps", set, 1, 25000, 102, 1);
    assert_true(o.viol_rate < 0.05);
}

/* k is the knob of the bias: without the band's margin (k = 0) the
 * predicted mean alone is the bound and the rate exceeds it far more
 * often. */
static void test_k_controls_violations(void **state)
{
    (void)state;
    char *k0[] = {"k=0"}, *k3[] = {"k=3"};
    outcome a = run_check("sbps", k0, 1, 5000, 7, 0);
    outcome b = run_check("sbps", k3, 1, 5000, 7, 0);
    assert_true(a.viol_rate > 5 * b.viol_rate);
    assert_true(a.viol_rate > 0.05);
}

static void test_reproducible(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "logistic", data_path(), NULL, 0);
    th_run r = {.sampler = "sbps", .iters = 300, .thin_time = 0.1, .seed = 3};
    th_draws a, b;
    assert_int_equal(th_sample(&tp, &r, &a, NULL), 0);
    assert_int_equal(th_sample(&tp, &r, &b, NULL), 0);
    assert_int_equal(a.n, b.n);
    assert_true(a.n > 10);
    for (size_t i = 0; i < a.n * a.cols; i++)
        if (!isnan(a.v[i]))
            assert_true(a.v[i] == b.v[i]);
    th_draws_free(&a);
    th_draws_free(&b);
    th_close(&tp);
}

/* The finite-population correction 1 - n/N applies only to minibatches
 * drawn without replacement.  With --batch N under the default random
 * access (N draws with replacement) the observations are still noisy; were
 * the correction applied, their noise would be taken as zero, the band
 * would hug a line through noisy points and the bound would be violated
 * often.  Without it, k = 3 keeps violations as rare as in the main test. */
static void test_full_batch_random_access(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "logistic", data_path(), NULL, 0);
    char *set[] = {"k=3"};
    th_run r = {.sampler = "sbps", .set = set, .n_set = 1, .iters = 3000,
                .seed = 7, .batch = 500, .access = DRIFT_ACCESS_RA};
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, NULL, &res), DRIFT_OK);
    double rate = (double)res.violations / (double)res.proposals;
    print_message("sbps --batch 500 --access ra, k = 3: %llu proposals, "
                  "%llu violations (rate %.4f)\n",
                  (unsigned long long)res.proposals,
                  (unsigned long long)res.violations, rate);
    assert_true(res.proposals > 1000);
    assert_true(rate < 0.05);
    th_close(&tp);
}

static void test_refusals(void **state)
{
    (void)state;
    drift_chain_result res;
    /* A data-free target has no minibatches. */
    th_problem tp;
    th_open(&tp, "mvn", NULL, NULL, 0);
    th_run r = {.sampler = "sbps", .iters = 10, .seed = 1};
    assert_int_not_equal(th_sample(&tp, &r, NULL, &res), DRIFT_OK);
    assert_non_null(strstr(res.message, "no data rows"));
    th_close(&tp);
    /* One row gives no sample variance. */
    th_open(&tp, "logistic", data_path(), NULL, 0);
    th_run r1 = {.sampler = "psbps", .iters = 10, .seed = 1, .batch = 1};
    assert_int_not_equal(th_sample(&tp, &r1, NULL, &res), DRIFT_OK);
    assert_non_null(strstr(res.message, "at least 2"));
    /* --batch N under reshuffling: exact observations (c^2 = 0 up to its
     * floor), still a working sampler. */
    th_run rN = {.sampler = "sbps", .iters = 200, .seed = 1, .batch = 500,
                 .access = DRIFT_ACCESS_RR};
    assert_int_equal(th_sample(&tp, &rN, NULL, &res), DRIFT_OK);
    th_close(&tp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbps_logistic),
        cmocka_unit_test(test_sbps_against_mala),
        cmocka_unit_test(test_psbps_logistic),
        cmocka_unit_test(test_k_controls_violations),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_full_batch_random_access),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
