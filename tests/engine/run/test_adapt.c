/* test_adapt.c: warmup adaptation's arithmetic (src/engine/run/adapt.c)
 * against closed forms: Stan's window schedule as its manual documents it,
 * dual averaging against its closed-form iterates, Welford estimators and
 * their regularisation against two-pass formulas, the metric's products
 * and draws, and the diagonal metric from draws and gradients against its
 * closed form on a Gaussian. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/adapt.h"
#include "engine/run/rng.h"
#include "harness.h"

static void expect_schedule(uint64_t warmup, uint64_t init, uint64_t term,
                            uint64_t base, const uint64_t *ends, size_t n)
{
    drift_adapt_schedule s;
    drift_adapt_schedule_make(warmup, &s);
    print_message("warmup %llu: init %llu, term %llu, base %llu, %zu windows\n",
                  (unsigned long long)warmup,
                  (unsigned long long)s.init_buffer,
                  (unsigned long long)s.term_buffer,
                  (unsigned long long)s.base_window, s.n_windows);
    assert_int_equal(s.init_buffer, init);
    assert_int_equal(s.term_buffer, term);
    assert_int_equal(s.base_window, base);
    assert_int_equal(s.n_windows, n);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(s.window_end[k], ends[k]);
        assert_true(drift_adapt_window_ends(&s, ends[k]));
        assert_false(drift_adapt_window_ends(&s, ends[k] + 1));
    }
    /* Slow iterations run from init_buffer to the terminal buffer. */
    for (uint64_t it = 0; it < warmup + 5; it++)
        assert_int_equal(drift_adapt_in_window(&s, it),
                         n > 0 && it >= init && it < warmup - term);
    /* Stan: the last slow window ends where the terminal buffer starts. */
    if (n)
        assert_int_equal(ends[n - 1], warmup - term);
}

/* The schedules of Stan's manual (CmdStan guide, "Adaptation"): for the
 * default 1000 warmup iterations an initial buffer of 75, slow windows of
 * 25, 50, 100, 200 and 500 iterations (the last stretched to the
 * terminal buffer) and a terminal buffer of 50; 150 fits the defaults
 * exactly (one window of 25); below that 15% / 75% / 10%; below 20 no
 * metric adaptation. */
static void test_schedule(void **state)
{
    (void)state;
    const uint64_t e1000[] = {100, 150, 250, 450, 950};
    expect_schedule(1000, 75, 50, 25, e1000, 5);
    const uint64_t e150[] = {100};
    expect_schedule(150, 75, 50, 25, e150, 1);
    const uint64_t e20[] = {18};
    expect_schedule(20, 3, 2, 15, e20, 1);
    expect_schedule(0, 0, 0, 0, NULL, 0);
    expect_schedule(19, 19, 0, 0, NULL, 0);
    /* 100 is scaled: 15, 10, base 75, one window ending at 90. */
    const uint64_t e100[] = {90};
    expect_schedule(100, 15, 10, 75, e100, 1);
    /* 2000: windows of 25, 50, 100, 200, 400 end at 850; the next, 800,
     * would leave less than twice its length before 1950, so it stretches
     * to 1100 and ends at 1950. */
    const uint64_t e2000[] = {100, 150, 250, 450, 850, 1950};
    expect_schedule(2000, 75, 50, 25, e2000, 6);
}

/* With a constant acceptance statistic a, s_bar_t = (delta - a) t/(t+t0)
 * and x_t = mu - s_bar_t sqrt(t)/gamma; x_bar_T is the sum over t of
 * w_t x_t prod_{s>t} (1 - w_s), w_t = t^-kappa. */
static void test_dual_averaging(void **state)
{
    (void)state;
    drift_dual_avg da;
    double h0 = 0.3, delta = 0.8, a = 0.55;
    drift_adapt_da_restart(&da, h0, delta);
    assert_true(fabs(da.mu - log(3.0)) < 1e-15);
    assert_true(da.gamma == 0.05 && da.t0 == 10 && da.kappa == 0.75);
    assert_true(da.s_bar == 0 && da.x_bar == 0 && da.counter == 0);
    enum { T = 60 };
    double x[T + 1];
    for (int t = 1; t <= T; t++) {
        double h = drift_adapt_da_update(&da, a);
        double sbar = (delta - a) * t / (t + 10.0);
        x[t] = log(3.0) - sbar * sqrt((double)t) / 0.05;
        assert_true(fabs(log(h) - x[t]) < 1e-12 * (1 + fabs(x[t])));
    }
    double xbar = 0;
    for (int t = 1; t <= T; t++) {
        double w = pow(t, -0.75), keep = 1;
        for (int s = t + 1; s <= T; s++)
            keep *= 1 - pow(s, -0.75);
        xbar += w * x[t] * keep;
    }
    print_message("x_bar after %d updates: %.12g (closed form %.12g)\n", T,
                  da.x_bar, xbar);
    assert_true(fabs(da.x_bar - xbar) < 1e-10);
    assert_true(fabs(drift_adapt_da_final(&da) - exp(xbar)) <
                1e-10 * exp(xbar));
    /* NaN counts as 0, values above 1 as 1. */
    drift_dual_avg d1, d2;
    drift_adapt_da_restart(&d1, 1, 0.6);
    drift_adapt_da_restart(&d2, 1, 0.6);
    assert_true(drift_adapt_da_update(&d1, NAN) ==
                drift_adapt_da_update(&d2, 0.0));
    assert_true(drift_adapt_da_update(&d1, 7.0) ==
                drift_adapt_da_update(&d2, 1.0));
}

/* Two-pass sample covariance of n points of dimension d. */
static void two_pass(const double *x, size_t n, size_t d, double *cov)
{
    double mean[8] = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            mean[k] += x[i * d + k] / (double)n;
    for (size_t j = 0; j < d; j++)
        for (size_t k = 0; k < d; k++) {
            double s = 0;
            for (size_t i = 0; i < n; i++)
                s += (x[i * d + j] - mean[j]) * (x[i * d + k] - mean[k]);
            cov[j * d + k] = s / (double)(n - 1);
        }
}

static void test_welford(void **state)
{
    (void)state;
    enum { N = 37, D = 3 };
    double x[N * D];
    drift_rng rng;
    drift_rng_seed(&rng, 5, 1);
    for (size_t i = 0; i < N; i++) {
        double z0 = drift_rng_normal(&rng), z1 = drift_rng_normal(&rng);
        x[i * D] = 1e3 + 2 * z0; /* a large mean: Welford's point */
        x[i * D + 1] = -z0 + 0.5 * z1;
        x[i * D + 2] = 0.01 * drift_rng_normal(&rng);
    }
    double cov[D * D];
    two_pass(x, N, D, cov);
    double shrink = N / (N + 5.0), ridge = 1e-3 * 5.0 / (N + 5.0);
    for (int dense = 0; dense <= 1; dense++) {
        double mem[2 * D + D * D] = {0};
        drift_adapt_welford w;
        drift_adapt_welford_init(&w, D, dense, mem);
        double out[D * D];
        drift_adapt_welford_add(&w, x);
        assert_int_equal(drift_adapt_welford_regularised(&w, out), -1);
        for (size_t i = 1; i < N; i++)
            drift_adapt_welford_add(&w, x + i * D);
        assert_int_equal(drift_adapt_welford_regularised(&w, out), 0);
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++) {
                if (!dense && j != k)
                    continue;
                double want = shrink * cov[j * D + k] + (j == k ? ridge : 0);
                double got = dense ? out[j * D + k] : out[j];
                assert_true(fabs(got - want) < 1e-12 * (fabs(want) + 1e-3));
            }
        drift_adapt_welford_restart(&w);
        assert_int_equal(w.n, 0);
    }
}

/* The metric set from a window: M^-1 the regularised estimate, L L' =
 * M^-1, products with M^-1 and L, and p = L'^-1 z (so L' p = z). */
static void test_metric(void **state)
{
    (void)state;
    enum { D = 3, N = 50 };
    double x[N * D];
    drift_rng rng;
    drift_rng_seed(&rng, 7, 1);
    for (size_t i = 0; i < N; i++) {
        double z0 = drift_rng_normal(&rng), z1 = drift_rng_normal(&rng);
        x[i * D] = 3 * z0;
        x[i * D + 1] = z0 + z1;
        x[i * D + 2] = 0.1 * drift_rng_normal(&rng);
    }
    double cov[D * D];
    two_pass(x, N, D, cov);
    double shrink = N / (N + 5.0), ridge = 1e-3 * 5.0 / (N + 5.0);
    drift_metric_kind kinds[] = {DRIFT_METRIC_DIAG, DRIFT_METRIC_DENSE};
    for (int q = 0; q < 2; q++) {
        int dense = kinds[q] == DRIFT_METRIC_DENSE;
        size_t n = drift_adapt_metric_doubles(kinds[q], D);
        double *mem = calloc(n, sizeof(double));
        drift_adapt_metric m;
        drift_adapt_metric_init(&m, kinds[q], D, mem);
        double v[D] = {1, -2, 0.5}, out[D], p[D];
        drift_adapt_metric_inv_mul(&m, v, out); /* identity at first */
        for (size_t k = 0; k < D; k++)
            assert_true(out[k] == v[k]);
        drift_adapt_welford_add(&m.est, x);
        assert_int_equal(drift_adapt_metric_update(&m, 0), 1); /* too few */
        for (size_t i = 0; i < N; i++)
            drift_adapt_welford_add(&m.est, x + i * D);
        /* The same points again after the failed update restarted it. */
        assert_int_equal(m.est.n, N);
        assert_int_equal(drift_adapt_metric_update(&m, 0), 0);
        assert_int_equal(m.est.n, 0);
        double want[D * D];
        for (size_t j = 0; j < D; j++)
            for (size_t k = 0; k < D; k++)
                want[j * D + k] = dense || j == k
                                      ? shrink * cov[j * D + k] +
                                            (j == k ? ridge : 0)
                                      : 0;
        drift_adapt_metric_inv_mul(&m, v, out);
        for (size_t j = 0; j < D; j++) {
            double s = 0;
            for (size_t k = 0; k < D; k++)
                s += want[j * D + k] * v[k];
            assert_true(fabs(out[j] - s) < 1e-12 * (fabs(s) + 1));
        }
        /* L from its columns L e_c; then L L' = M^-1. */
        double L[D * D];
        for (size_t c = 0; c < D; c++) {
            double e[D] = {0}, col[D];
            e[c] = 1;
            drift_adapt_metric_inv_sqrt_mul(&m, e, col);
            for (size_t r = 0; r < D; r++)
                L[r * D + c] = col[r];
        }
        for (size_t i = 0; i < D; i++)
            for (size_t j = 0; j < D; j++) {
                double s = 0;
                for (size_t k = 0; k < D; k++)
                    s += L[i * D + k] * L[j * D + k];
                assert_true(fabs(s - want[i * D + j]) <
                            1e-12 * (fabs(want[i * D + j]) + 1));
            }
        /* p = L'^-1 z: L' p = z, in place too. */
        double z[D] = {0.3, -1.2, 2.0};
        drift_adapt_metric_from_normal(&m, z, p);
        for (size_t i = 0; i < D; i++) {
            double s = 0;
            for (size_t k = 0; k < D; k++)
                s += L[k * D + i] * p[k];
            assert_true(fabs(s - z[i]) < 1e-12 * (fabs(z[i]) + 1));
        }
        memcpy(out, z, sizeof z);
        drift_adapt_metric_from_normal(&m, out, out);
        for (size_t i = 0; i < D; i++)
            assert_true(out[i] == p[i]);
        free(mem);
    }
}

/* A diagonal metric from draws and gradients, against the closed form:
 * for U(x) = sum_k (x_k - mu_k)^2 / (2 sigma_k^2), grad_k U = (x_k - mu_k)
 * / sigma_k^2, so sqrt(var x_k / var grad_k) = sigma_k^2 exactly, here
 * from points that are nothing like draws of the target (a narrow,
 * off-centre cloud).  A coordinate whose gradients do not vary (a flat
 * direction) takes the draws' regularised variance; a window without
 * gradients, or the last window of warmup, gives Stan's estimate.  And
 * the start from the initial point's gradient, 1/|grad U|, bounded. */
static void test_metric_grad(void **state)
{
    (void)state;
    enum { D = 4, N = 30 };
    const double mu[D] = {1.0, -3.0, 0.0, 2.0};
    const double sigma[D] = {1e-3, 1.0, 250.0, 1.0};
    drift_rng rng;
    drift_rng_seed(&rng, 11, 1);
    double x[N * D], g[N * D];
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < D; k++) {
            x[i * D + k] = 5.0 + 0.01 * drift_rng_normal(&rng);
            /* Coordinate 3 is flat: U does not depend on it. */
            g[i * D + k] = k == 3 ? 0.0
                                  : (x[i * D + k] - mu[k]) /
                                        (sigma[k] * sigma[k]);
        }
    size_t n = drift_adapt_metric_doubles(DRIFT_METRIC_DIAG, D);
    double *mem = calloc(n, sizeof(double));
    assert_non_null(mem);
    drift_adapt_metric m;
    drift_adapt_metric_init(&m, DRIFT_METRIC_DIAG, D, mem);
    for (size_t i = 0; i < N; i++)
        drift_adapt_metric_observe(&m, x + i * D, g + i * D);
    assert_int_equal(m.grad.n, N);
    assert_int_equal(drift_adapt_metric_update(&m, 0), 0);
    assert_int_equal(m.grad.n, 0);
    double cov[D * D], v[D] = {1, 1, 1, 1}, out[D];
    two_pass(x, N, D, cov);
    double shrink = N / (N + 5.0), ridge = 1e-3 * 5.0 / (N + 5.0);
    drift_adapt_metric_inv_mul(&m, v, out);
    for (size_t k = 0; k < D; k++) {
        double want = k == 3 ? shrink * cov[k * D + k] + ridge
                             : sigma[k] * sigma[k];
        print_message("coordinate %zu: M^-1 %.10g, want %.10g\n", k,
                      out[k], want);
        assert_true(fabs(out[k] - want) < 1e-9 * want);
        double f[D];
        drift_adapt_metric_inv_sqrt_mul(&m, v, f);
        assert_true(fabs(f[k] * f[k] - out[k]) < 1e-12 * out[k]);
    }
    /* The start from one gradient: 1/|g| within [1e-10, 1e10]; a zero or
     * NaN entry keeps the value it had. */
    double g0[D] = {-4.0, 1e-14, 0.0, NAN};
    double before[D];
    drift_adapt_metric_inv_mul(&m, v, before);
    drift_adapt_metric_start_grad(&m, g0);
    drift_adapt_metric_inv_mul(&m, v, out);
    assert_true(out[0] == 0.25 && out[1] == 1e10);
    assert_true(out[2] == before[2] && out[3] == before[3]);
    double f0[D];
    drift_adapt_metric_inv_sqrt_mul(&m, v, f0);
    assert_true(f0[0] == 0.5 && f0[1] == 1e5);
    /* The last window takes the variance even with gradients. */
    for (size_t i = 0; i < N; i++)
        drift_adapt_metric_observe(&m, x + i * D, g + i * D);
    assert_int_equal(drift_adapt_metric_update(&m, 1), 0);
    assert_int_equal(m.grad.n, 0);
    drift_adapt_metric_inv_mul(&m, v, out);
    for (size_t k = 0; k < D; k++)
        assert_true(fabs(out[k] - (shrink * cov[k * D + k] + ridge)) <
                    1e-12 * out[k]);
    /* The next window has points only: Stan's estimate. */
    for (size_t i = 0; i < N; i++)
        drift_adapt_metric_observe(&m, x + i * D, NULL);
    assert_int_equal(drift_adapt_metric_update(&m, 0), 0);
    drift_adapt_metric_inv_mul(&m, v, out);
    for (size_t k = 0; k < D; k++)
        assert_true(fabs(out[k] - (shrink * cov[k * D + k] + ridge)) <
                    1e-12 * out[k]);
    free(mem);
}

/* A diagonal metric set as a whole (the set_diag service's arithmetic):
 * each entry bounded to [1e-20, 1e20] with its factor the square root; an
 * entry that is not a positive number keeps the value it had; a metric
 * of another kind is left alone. */
static void test_metric_set_diag(void **state)
{
    (void)state;
    enum { D = 5 };
    double mem[64] = {0};
    drift_adapt_metric m;
    assert_true(drift_adapt_metric_doubles(DRIFT_METRIC_DIAG, D) <= 64);
    drift_adapt_metric_init(&m, DRIFT_METRIC_DIAG, D, mem);
    double inv[D] = {4.0, 1e-30, 1e30, -2.0, NAN};
    drift_adapt_metric_set_diag(&m, inv);
    double want[D] = {4.0, 1e-20, 1e20, 1.0, 1.0};
    for (size_t k = 0; k < D; k++) {
        assert_true(m.inv[k] == want[k]);
        assert_true(fabs(m.factor[k] - sqrt(want[k])) <=
                    1e-15 * sqrt(want[k]));
    }
    double inv2[D] = {INFINITY, 0.0, 9.0, 0.25, 1.0};
    drift_adapt_metric_set_diag(&m, inv2);
    double want2[D] = {4.0, 1e-20, 9.0, 0.25, 1.0};
    for (size_t k = 0; k < D; k++)
        assert_true(m.inv[k] == want2[k]);
    /* A dense metric is not touched. */
    double mem2[128] = {0};
    drift_adapt_metric md;
    assert_true(drift_adapt_metric_doubles(DRIFT_METRIC_DENSE, 2) <= 128);
    drift_adapt_metric_init(&md, DRIFT_METRIC_DENSE, 2, mem2);
    double two[2] = {5.0, 7.0};
    drift_adapt_metric_set_diag(&md, two);
    assert_true(md.inv[0] == 1.0 && md.inv[1] == 0.0 && md.inv[3] == 1.0);
}

/* The metric service draws p ~ N(0, M): over many draws, the covariance of
 * M^-1 p is M^-1 M M^-1 = M^-1 (4.5 standard errors of a normal sample
 * covariance, sqrt((S_ii S_jj + S_ij^2) / n)). */
static void test_metric_draws(void **state)
{
    (void)state;
    enum { D = 2, N = 200000 };
    double mem[64] = {0};
    drift_adapt_metric m;
    drift_adapt_metric_init(&m, DRIFT_METRIC_DENSE, D, mem);
    double pts[4][D] = {{2, 1}, {-2, -1}, {1, -1}, {-1, 1}};
    for (int k = 0; k < 4; k++)
        drift_adapt_welford_add(&m.est, pts[k]);
    assert_int_equal(drift_adapt_metric_update(&m, 0), 0);
    const double *S = m.inv;
    drift_rng rng;
    drift_rng_seed(&rng, 11, 1);
    double acc[3] = {0};
    for (size_t i = 0; i < N; i++) {
        double z[D], p[D], q[D];
        drift_rng_normal_fill(&rng, D, z);
        drift_adapt_metric_from_normal(&m, z, p);
        drift_adapt_metric_inv_mul(&m, p, q);
        acc[0] += q[0] * q[0];
        acc[1] += q[0] * q[1];
        acc[2] += q[1] * q[1];
    }
    double got[3] = {acc[0] / N, acc[1] / N, acc[2] / N};
    double want[3] = {S[0], S[1], S[3]};
    double se[3] = {sqrt(2 * S[0] * S[0] / N),
                    sqrt((S[0] * S[3] + S[1] * S[1]) / N),
                    sqrt(2 * S[3] * S[3] / N)};
    for (int k = 0; k < 3; k++) {
        print_message("cov of M^-1 p [%d]: %.5g, M^-1 %.5g (%.2f se)\n", k,
                      got[k], want[k], fabs(got[k] - want[k]) / se[k]);
        assert_true(fabs(got[k] - want[k]) < 4.5 * se[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_dual_averaging),
        cmocka_unit_test(test_welford),
        cmocka_unit_test(test_metric),
        cmocka_unit_test(test_metric_draws),
        cmocka_unit_test(test_metric_grad),
        cmocka_unit_test(test_metric_set_diag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
