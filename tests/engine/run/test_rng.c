/* test_rng.c: the per-chain random streams: reproducible per (seed,
 * stream), distinct across streams, and distributed as claimed (chi-square
 * for uniforms and bounded integers, Kolmogorov-Smirnov for normals and
 * exponentials, at fixed seeds and alpha = 0.001). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/run/rng.h"
#include "harness.h"

static void test_reproducible(void **state)
{
    (void)state;
    drift_rng a, b, c;
    drift_rng_seed(&a, 42, 3);
    drift_rng_seed(&b, 42, 3);
    drift_rng_seed(&c, 42, 4);
    int same_c = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = drift_rng_u64(&a);
        assert_int_equal(x, drift_rng_u64(&b));
        if (x != drift_rng_u64(&c))
            same_c = 0;
    }
    assert_false(same_c);
    drift_rng d;
    drift_rng_seed(&d, 43, 3);
    drift_rng_seed(&a, 42, 3);
    assert_true(drift_rng_u64(&a) != drift_rng_u64(&d));
}

/* A far stream is the state its jumps lead to, computed in a time that
 * grows with the logarithm of the stream number (it grew with the number:
 * minutes for --chain-id 10^8). */
static void test_far_streams(void **state)
{
    (void)state;
    drift_rng a;
    drift_rng_seed(&a, 77, 0);
    for (uint64_t n = 1; n <= 1100; n++) {
        drift_rng_jump(&a);
        if (n % 97 && n != 256 && n != 257 && n != 1024 && n != 1100)
            continue;
        drift_rng b;
        drift_rng_seed(&b, 77, n);
        for (int k = 0; k < 4; k++)
            assert_true(a.s[k] == b.s[k]);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    drift_rng far;
    drift_rng_seed(&far, 77, (uint64_t)1 << 62);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) +
               1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_true(s < 5.0);
    /* Not the start, and not a stream nearby. */
    assert_true(far.s[0] != a.s[0] || far.s[1] != a.s[1]);
}

static void test_uniform_chi2(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 7, 1);
    enum { BINS = 100, N = 1000000 };
    long counts[BINS] = {0};
    for (int i = 0; i < N; i++) {
        double u = drift_rng_uniform(&r);
        assert_true(u >= 0 && u < 1);
        counts[(int)(u * BINS)]++;
    }
    double chi2 = 0, expect = (double)N / BINS;
    for (int k = 0; k < BINS; k++)
        chi2 += (counts[k] - expect) * (counts[k] - expect) / expect;
    /* chi-square with 99 d.o.f.: upper 0.001 quantile is 148.23 (R:
     * qchisq(0.999, 99)). */
    assert_true(chi2 < 148.23);
}

static void test_below_chi2(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 11, 2);
    enum { K = 7, N = 700000 };
    long counts[K] = {0};
    for (int i = 0; i < N; i++) {
        uint64_t x = drift_rng_below(&r, K);
        assert_true(x < K);
        counts[x]++;
    }
    double chi2 = 0, expect = (double)N / K;
    for (int k = 0; k < K; k++)
        chi2 += (counts[k] - expect) * (counts[k] - expect) / expect;
    /* qchisq(0.999, 6) = 22.458 */
    assert_true(chi2 < 22.458);
}

static double cdf_norm(double x, void *a)
{
    (void)a;
    return th_pnorm(x);
}

static double cdf_exp(double x, void *a)
{
    (void)a;
    return x <= 0 ? 0 : -expm1(-x);
}

/* Critical value of the one-sample KS statistic at alpha = 0.001:
 * sqrt(-log(0.0005)/2) / sqrt(n) = 1.9495 / sqrt(n). */
static double ks_crit(size_t n) { return 1.9495 / sqrt((double)n); }

static void test_normal_ks(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 123, 1);
    size_t n = 200000;
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    drift_rng_normal_fill(&r, n, x);
    double m = 0, v = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    v /= (double)(n - 1);
    assert_true(fabs(m) < 4 / sqrt((double)n));
    assert_true(fabs(v - 1) < 4 * sqrt(2.0 / (double)n));
    assert_true(th_ks(x, n, cdf_norm, NULL) < ks_crit(n));
    /* The tails, where the ziggurat switches to its tail algorithm. */
    size_t beyond = 0;
    for (size_t i = 0; i < n; i++)
        beyond += fabs(x[i]) > 3.442619855899;
    double p = 2 * th_pnorm(-3.442619855899), expect = p * (double)n;
    assert_true(fabs((double)beyond - expect) < 4 * sqrt(expect));
    free(x);
}

static void test_exponential_ks(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 99, 5);
    size_t n = 200000;
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = drift_rng_exponential(&r);
    assert_true(th_ks(x, n, cdf_exp, NULL) < ks_crit(n));
    free(x);
}

static void test_shuffle_is_permutation(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    size_t a[1000];
    for (size_t i = 0; i < 1000; i++)
        a[i] = i;
    drift_rng_shuffle(&r, a, 1000);
    unsigned char seen[1000] = {0};
    size_t fixed = 0;
    for (size_t i = 0; i < 1000; i++) {
        assert_true(a[i] < 1000);
        assert_false(seen[a[i]]);
        seen[a[i]] = 1;
        fixed += a[i] == i;
    }
    /* A uniform permutation has Poisson(1) fixed points. */
    assert_true(fixed < 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_far_streams),
        cmocka_unit_test(test_uniform_chi2),
        cmocka_unit_test(test_below_chi2),
        cmocka_unit_test(test_normal_ks),
        cmocka_unit_test(test_exponential_ks),
        cmocka_unit_test(test_shuffle_is_permutation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
