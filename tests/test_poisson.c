/* test_poisson.c: Poisson-event services against their exact arrival-time
 * distributions (Kolmogorov-Smirnov at alpha = 0.001, fixed seeds),
 * including rates that start negative, rates that die out (no arrival with
 * probability exp(-total mass)), and thinning with bound violations.  The
 * reference integrated rates are computed here independently (closed forms
 * or Simpson's rule), not with the code under test. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oracle.h"
#include "poisson.h"
#include "rng.h"

enum { NS = 100000 };

static double ks_crit(size_t n) { return 1.9495 / sqrt((double)n); }

typedef struct lin {
    double a, b;
} lin;

/* Integral of max(0, a + b s) over [0, t] by Simpson's rule on a fine
 * grid (independent of poisson.c's closed forms). */
static double simpson_mass(double (*rate)(double, const void *),
                           const void *p, double t)
{
    int n = 400;
    double h = t / n, s = rate(0, p) + rate(t, p);
    for (int i = 1; i < n; i++)
        s += (i % 2 ? 4 : 2) * rate(i * h, p);
    return s * h / 3;
}

static double lin_rate(double t, const void *p)
{
    const lin *l = p;
    double r = l->a + l->b * t;
    return r > 0 ? r : 0;
}

typedef struct cond {
    double (*rate)(double, const void *);
    const void *p;
    double total; /* mass over the whole support */
} cond;

/* CDF of the arrival time given that it is finite. */
static double cond_cdf(double t, void *arg)
{
    cond *c = arg;
    double m = simpson_mass(c->rate, c->p, t);
    return -expm1(-m) / -expm1(-c->total);
}

static void check_linear(double a, double b, double total)
{
    drift_rng r;
    drift_rng_seed(&r, 1234, 7);
    lin l = {a, b};
    double *x = malloc(NS * sizeof *x);
    size_t finite = 0;
    for (size_t i = 0; i < NS; i++) {
        double t = drift_poisson_linear_time(a, b, drift_rng_exponential(&r));
        assert_true(t >= 0);
        if (isfinite(t))
            x[finite++] = t;
    }
    double p_none = exp(-total);
    double expect = p_none * NS, sd = sqrt(NS * p_none * (1 - p_none));
    assert_true(fabs((double)(NS - finite) - expect) <= 4.5 * sd + 1e-9);
    if (finite > 1000) {
        cond c = {lin_rate, &l, total};
        /* Simpson on [0, t] is exact enough for KS at this n. */
        double D = th_ks(x, finite, cond_cdf, &c);
        print_message("a=%g b=%g: %zu finite, KS %.4g (crit %.4g)\n", a, b,
                      finite, D, ks_crit(finite));
        assert_true(D < ks_crit(finite));
    }
    free(x);
}

static void test_linear(void **state)
{
    (void)state;
    check_linear(1.0, 0.5, INFINITY);   /* increasing */
    check_linear(0.0, 2.0, INFINITY);   /* from zero */
    check_linear(-1.0, 2.0, INFINITY);  /* zero until t = 0.5 */
    check_linear(3.0, 0.0, INFINITY);   /* constant */
    check_linear(2.0, -1.0, 2.0);       /* dies at t = 2: mass 2 */
    check_linear(0.5, -4.0, 0.03125);   /* mostly no arrival */
    /* Never positive: no arrival, ever. */
    assert_true(isinf(drift_poisson_linear_time(0, 0, 1.0)));
    assert_true(isinf(drift_poisson_linear_time(-1, -1, 0.1)));
    assert_true(isinf(drift_poisson_linear_time(-1, 0, 0.1)));
}

typedef struct pw {
    const drift_rate_bound *b;
} pw;

static double pw_rate(double t, const void *p)
{
    /* Interpolation written independently of poisson.c. */
    const drift_rate_bound *b = ((const pw *)p)->b;
    if (t > b->t[b->n_knots - 1])
        return 0;
    for (size_t k = 0; k + 1 < b->n_knots; k++)
        if (t <= b->t[k + 1]) {
            double w = (t - b->t[k]) / (b->t[k + 1] - b->t[k]);
            double r = (1 - w) * b->r[k] + w * b->r[k + 1];
            return r > 0 ? r : 0;
        }
    return 0;
}

static void test_piecewise(void **state)
{
    (void)state;
    double kt[] = {0, 1, 2, 3, 4.5};
    double kr[] = {0, 2, -1, 3, 0.5};
    drift_rate_bound b = {0, 0, 5, kt, kr, 4.5};
    pw p = {&b};
    double total = simpson_mass(pw_rate, &p, 4.5);
    drift_rng r;
    drift_rng_seed(&r, 99, 1);
    double *x = malloc(NS * sizeof *x);
    size_t finite = 0;
    for (size_t i = 0; i < NS; i++) {
        double t = drift_poisson_bound_time(&b, 0, drift_rng_exponential(&r));
        if (isfinite(t)) {
            assert_true(t >= 0 && t <= 4.5);
            x[finite++] = t;
        }
    }
    double p_none = exp(-total);
    assert_true(fabs((double)(NS - finite) - p_none * NS) <
                4.5 * sqrt(NS * p_none * (1 - p_none)));
    cond c = {pw_rate, &p, total};
    assert_true(th_ks(x, finite, cond_cdf, &c) < ks_crit(finite));
    /* Starting later: the arrival after t0 = 1.5. */
    finite = 0;
    for (size_t i = 0; i < NS; i++) {
        double t = drift_poisson_bound_time(&b, 1.5, drift_rng_exponential(&r));
        if (isfinite(t)) {
            assert_true(t >= 1.5);
            x[finite++] = t - 1.5;
        }
    }
    assert_true(finite > 1000);
    free(x);
}

/* The true rate for thinning: 1 + sin(t), bounded by 2. */
static int sine_rate(void *user, double t, double *rate)
{
    (void)user;
    *rate = 1 + sin(t);
    return 0;
}

static double sine_cdf(double t, void *arg)
{
    (void)arg;
    return -expm1(-(t + 1 - cos(t)));
}

static void test_thinning(void **state)
{
    (void)state;
    drift_chain c;
    memset(&c, 0, sizeof c);
    drift_rng_seed(&c.rng, 5, 1);
    drift_rate_bound b = {2.0, 0.0, 0, NULL, NULL, INFINITY};
    double *x = malloc(NS * sizeof *x);
    drift_thin_stats st = {0, 0};
    for (size_t i = 0; i < NS; i++) {
        double t, at;
        assert_int_equal(drift_thin_svc(&c, &b, sine_rate, NULL, &t, &at, &st), 0);
        assert_true(fabs(at - (1 + sin(t))) < 1e-15);
        x[i] = t;
    }
    assert_int_equal(st.violations, 0);
    assert_true(st.proposals > NS);
    assert_int_equal(c.proposals, st.proposals);
    assert_true(th_ks(x, NS, sine_cdf, NULL) < ks_crit(NS));
    /* A bound that is too low some of the time: violations counted. */
    drift_rate_bound low = {1.5, 0.0, 0, NULL, NULL, INFINITY};
    drift_thin_stats st2 = {0, 0};
    for (size_t i = 0; i < 1000; i++) {
        double t;
        drift_thin_svc(&c, &low, sine_rate, NULL, &t, NULL, &st2);
    }
    assert_true(st2.violations > 0);
    assert_int_equal(c.violations, st2.violations);
    /* A finite horizon with no event in it. */
    drift_rate_bound none = {0.0, 0.0, 0, NULL, NULL, 10.0};
    double t;
    assert_int_equal(drift_thin_svc(&c, &none, sine_rate, NULL, &t, NULL, NULL), 0);
    assert_true(isinf(t));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_piecewise),
        cmocka_unit_test(test_thinning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
