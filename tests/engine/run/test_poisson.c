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

#include "engine/run/oracle.h"
#include "engine/run/poisson.h"
#include "engine/run/rng.h"
#include "harness.h"

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
    assert_true(isinf(drift_poisson_linear_time(0, -2, 0.1)));
    /* E = 0: the first time the rate is positive (or none). */
    assert_true(drift_poisson_linear_time(1, -1, 0) == 0);
    assert_true(fabs(drift_poisson_linear_time(-1, 2, 0) - 0.5) < 1e-15);
    assert_true(isinf(drift_poisson_linear_time(-1, -2, 0)));
    /* Mass just below and above a dying rate's total. */
    assert_true(isfinite(drift_poisson_linear_time(2, -1, 2 - 1e-12)));
    assert_true(isinf(drift_poisson_linear_time(2, -1, 2 + 1e-9)));
    /* The services as samplers call them: the chain's own stream. */
    drift_chain c;
    memset(&c, 0, sizeof c);
    drift_rng_seed(&c.rng, 77, 1);
    lin l = {1.0, 0.5};
    double *y = malloc(NS * sizeof *y);
    for (size_t i = 0; i < NS; i++)
        y[i] = drift_services_table.poisson_linear(&c, 1.0, 0.5);
    cond cl = {lin_rate, &l, INFINITY};
    assert_true(th_ks(y, NS, cond_cdf, &cl) < ks_crit(NS));
    drift_rate_bound lb = {1.0, 0.5, 0, NULL, NULL, INFINITY};
    for (size_t i = 0; i < NS; i++)
        y[i] = drift_services_table.poisson_bound(&c, &lb, 0);
    assert_true(th_ks(y, NS, cond_cdf, &cl) < ks_crit(NS));
    free(y);
    /* Bad input: no arrival rather than a NaN time. */
    assert_true(isinf(drift_poisson_linear_time(NAN, 1, 1)));
    assert_true(isinf(drift_poisson_linear_time(1, 1, -1)));
}

typedef struct pw {
    const drift_rate_bound *b;
    double shift; /* evaluate at t + shift */
} pw;

/* The bound's rate written independently of poisson.c: the knot segment
 * (lo, hi] holding t, repeated times being jumps; 0 outside. */
static double pw_value(const drift_rate_bound *b, double t)
{
    if (t < b->t[0] || t > b->t[b->n_knots - 1])
        return 0;
    for (size_t k = 0; k + 1 < b->n_knots; k++) {
        double lo = b->t[k], hi = b->t[k + 1];
        if (hi > lo && t >= lo && t <= hi) {
            double w = (t - lo) / (hi - lo);
            double r = (1 - w) * b->r[k] + w * b->r[k + 1];
            return r > 0 ? r : 0;
        }
    }
    return 0;
}

/* Mass of the knots' rate over [shift, shift + t]: Simpson's rule on each
 * knot segment separately (so jumps fall on segment ends). */
static double pw_mass(const pw *p, double t)
{
    const drift_rate_bound *b = p->b;
    double from = p->shift, to = p->shift + t, m = 0;
    for (size_t k = 0; k + 1 < b->n_knots; k++) {
        double lo = b->t[k] > from ? b->t[k] : from;
        double hi = b->t[k + 1] < to ? b->t[k + 1] : to;
        if (!(hi > lo))
            continue;
        /* Evaluate strictly inside the segment: the segment's own line. */
        double a = b->t[k], c = b->t[k + 1];
        int n = 200;
        double h = (hi - lo) / n, s = 0;
        for (int i = 0; i <= n; i++) {
            double x = lo + i * h, w = (x - a) / (c - a);
            double r = (1 - w) * b->r[k] + w * b->r[k + 1];
            s += (i == 0 || i == n ? 1 : i % 2 ? 4 : 2) * (r > 0 ? r : 0);
        }
        m += s * h / 3;
    }
    return m;
}

typedef struct pw_cond {
    const pw *p;
    double total;
} pw_cond;

static double pw_cond_cdf(double t, void *arg)
{
    pw_cond *c = arg;
    return -expm1(-pw_mass(c->p, t)) / -expm1(-c->total);
}

/* Draws NS first arrivals after t0 from the knots bound b and checks the
 * count of "no arrival" against exp(-mass) and the finite ones (minus t0)
 * against their conditional law. */
static void check_knots(const drift_rate_bound *b, double t0, uint64_t seed)
{
    pw p = {b, t0};
    double end = b->t[b->n_knots - 1];
    double total = pw_mass(&p, end - t0);
    drift_rng r;
    drift_rng_seed(&r, seed, 1);
    double *x = malloc(NS * sizeof *x);
    size_t finite = 0;
    for (size_t i = 0; i < NS; i++) {
        double t = drift_poisson_bound_time(b, t0, drift_rng_exponential(&r));
        if (isfinite(t)) {
            assert_true(t >= t0 && t <= end);
            /* Never inside a stretch where the rate is zero. */
            assert_true(pw_value(b, t) > 0 ||
                        pw_value(b, t * (1 - 1e-12)) > 0 ||
                        pw_value(b, t * (1 + 1e-12)) > 0);
            x[finite++] = t - t0;
        }
    }
    double p_none = exp(-total);
    assert_true(fabs((double)(NS - finite) - p_none * NS) <=
                4.5 * sqrt(NS * p_none * (1 - p_none)) + 1e-9);
    assert_true(finite > 1000);
    pw_cond c = {&p, total};
    double D = th_ks(x, finite, pw_cond_cdf, &c);
    print_message("knots from t0=%g: %zu finite (mass %.4g), KS %.4g "
                  "(crit %.4g)\n",
                  t0, finite, total, D, ks_crit(finite));
    assert_true(D < ks_crit(finite));
    free(x);
}

static void test_piecewise(void **state)
{
    (void)state;
    /* Positive-part kinks inside segments, a stretch of zero rate. */
    double kt[] = {0, 1, 2, 3, 4.5};
    double kr[] = {0, 2, -1, 3, 0.5};
    drift_rate_bound b = {0, 0, 5, kt, kr, 4.5};
    check_knots(&b, 0, 99);
    check_knots(&b, 1.5, 98); /* starting later, inside the zero stretch */
    check_knots(&b, 2.7, 97);
    /* Steps: repeated knot times are jumps. */
    double st[] = {0, 1, 1, 2, 3, 3, 4};
    double sr[] = {0.5, 0.5, 2, 0, 0, 1, 1.5};
    drift_rate_bound s = {0, 0, 7, st, sr, 4};
    check_knots(&s, 0, 96);
    check_knots(&s, 1, 95);
    assert_true(fabs(drift_poisson_bound_rate(&s, 1.0) - 2.0) < 1e-15);
    assert_true(fabs(drift_poisson_bound_rate(&s, 0.999) - 0.5) < 1e-15);
    assert_true(fabs(drift_poisson_bound_rate(&s, 3.5) - 1.25) < 1e-15);
    assert_true(drift_poisson_bound_rate(&s, 4.01) == 0);
    assert_true(drift_poisson_bound_rate(&s, -0.01) == 0);
    /* A bound with no mass at all: never an arrival. */
    double zt[] = {0, 2}, zr[] = {-1, 0};
    drift_rate_bound z = {0, 0, 2, zt, zr, 2};
    assert_true(isinf(drift_poisson_bound_time(&z, 0, 1e-9)));
    /* A start past the last knot: none. */
    assert_true(isinf(drift_poisson_bound_time(&b, 5.0, 0.0)));
}

/* A linear bound started late and cut at t_max: rate max(0, t - 1) from
 * t0 = 0.5 to t_max = 3 has mass 2. */
static double late_rate(double t, const void *p)
{
    (void)p;
    t += 0.5;
    return t > 1 ? t - 1 : 0;
}

static void test_linear_window(void **state)
{
    (void)state;
    drift_rate_bound b = {-1.0, 1.0, 0, NULL, NULL, 3.0};
    drift_rng r;
    drift_rng_seed(&r, 31, 2);
    double *x = malloc(NS * sizeof *x);
    size_t finite = 0;
    for (size_t i = 0; i < NS; i++) {
        double t = drift_poisson_bound_time(&b, 0.5, drift_rng_exponential(&r));
        if (isfinite(t)) {
            assert_true(t >= 1.0 && t <= 3.0);
            x[finite++] = t - 0.5;
        }
    }
    double p_none = exp(-2.0);
    assert_true(fabs((double)(NS - finite) - p_none * NS) <=
                4.5 * sqrt(NS * p_none * (1 - p_none)));
    cond c = {late_rate, NULL, 2.0};
    assert_true(th_ks(x, finite, cond_cdf, &c) < ks_crit(finite));
    free(x);
    /* Outside the window the bound is zero. */
    assert_true(drift_poisson_bound_rate(&b, 3.5) == 0);
    assert_true(drift_poisson_bound_rate(&b, -0.5) == 0);
    assert_true(fabs(drift_poisson_bound_rate(&b, 2.0) - 1.0) < 1e-15);
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
        assert_int_equal(drift_poisson_thin_svc(&c, &b, sine_rate, NULL, &t, &at, &st), 0);
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
        drift_poisson_thin_svc(&c, &low, sine_rate, NULL, &t, NULL, &st2);
    }
    assert_true(st2.violations > 0);
    assert_int_equal(c.violations, st2.violations);
    /* A finite horizon with no event in it. */
    drift_rate_bound none = {0.0, 0.0, 0, NULL, NULL, 10.0};
    double t;
    assert_int_equal(drift_poisson_thin_svc(&c, &none, sine_rate, NULL, &t, NULL, NULL), 0);
    assert_true(isinf(t));
    free(x);
}

/* Thinning against a step bound with a horizon: rate 1 + 0.5 sin(3t) on
 * [0, 5] under the steps 1.6 on [0, 2], 1.5 on [2, 5]; the mass over the
 * horizon is 5 + (1 - cos 15)/6, and no event falls with exp(-mass). */
static int wave_rate(void *user, double t, double *rate)
{
    (void)user;
    *rate = 1 + 0.5 * sin(3 * t);
    return 0;
}

static double wave_mass(double t) { return t + (1 - cos(3 * t)) / 6; }

static double wave_cond_cdf(double t, void *arg)
{
    (void)arg;
    return -expm1(-wave_mass(t)) / -expm1(-wave_mass(5.0));
}

static void test_thinning_knots(void **state)
{
    (void)state;
    drift_chain c;
    memset(&c, 0, sizeof c);
    drift_rng_seed(&c.rng, 6, 1);
    double kt[] = {0, 2, 2, 5}, kr[] = {1.6, 1.6, 1.5, 1.5};
    drift_rate_bound b = {0, 0, 4, kt, kr, 5};
    double *x = malloc(NS * sizeof *x);
    size_t finite = 0;
    drift_thin_stats st = {0, 0};
    for (size_t i = 0; i < NS; i++) {
        double t;
        assert_int_equal(drift_poisson_thin_svc(&c, &b, wave_rate, NULL, &t, NULL, &st), 0);
        if (isfinite(t)) {
            assert_true(t > 0 && t <= 5);
            x[finite++] = t;
        }
    }
    assert_int_equal(st.violations, 0);
    double p_none = exp(-wave_mass(5.0));
    assert_true(fabs((double)(NS - finite) - p_none * NS) <=
                4.5 * sqrt(NS * p_none * (1 - p_none)));
    assert_true(th_ks(x, finite, wave_cond_cdf, NULL) < ks_crit(finite));
    free(x);
}

/* Adaptive thinning: the callback halves a constant bound after every
 * proposal, never below the rate's maximum 2.  The arrivals must still
 * follow the rate 1 + sin(t) exactly. */
static int halving_rate(void *user, double t, double *rate)
{
    drift_rate_bound *b = user;
    *rate = 1 + sin(t);
    b->a = b->a / 2 > 2 ? b->a / 2 : 2;
    return 0;
}

static void test_thinning_adaptive(void **state)
{
    (void)state;
    drift_chain c;
    memset(&c, 0, sizeof c);
    drift_rng_seed(&c.rng, 8, 1);
    double *x = malloc(NS * sizeof *x);
    drift_thin_stats st = {0, 0};
    for (size_t i = 0; i < NS; i++) {
        drift_rate_bound b = {16.0, 0.0, 0, NULL, NULL, INFINITY};
        double t;
        assert_int_equal(drift_poisson_thin_svc(&c, &b, halving_rate, &b, &t, NULL, &st), 0);
        x[i] = t;
    }
    assert_int_equal(st.violations, 0);
    double D = th_ks(x, NS, sine_cdf, NULL);
    print_message("adaptive thinning: %llu proposals, KS %.4g (crit %.4g)\n",
                  (unsigned long long)st.proposals, D, ks_crit(NS));
    assert_true(D < ks_crit(NS));
    /* The revisions mattered: far fewer proposals than a fixed bound of 16
     * would make (16 per unit of the sine rate's mass ~ 8 per event). */
    assert_true(st.proposals < 4 * (uint64_t)NS);
    free(x);
}

static int nan_rate(void *user, double t, double *rate)
{
    (void)user;
    (void)t;
    *rate = NAN;
    return 0;
}

static int failing_rate(void *user, double t, double *rate)
{
    (void)user;
    (void)t;
    *rate = 0;
    return DRIFT_EDATA;
}

static void test_thinning_errors(void **state)
{
    (void)state;
    drift_chain c;
    memset(&c, 0, sizeof c);
    drift_rng_seed(&c.rng, 9, 1);
    drift_rate_bound b = {2.0, 0.0, 0, NULL, NULL, INFINITY};
    double t;
    assert_int_equal(drift_poisson_thin_svc(&c, &b, nan_rate, NULL, &t, NULL, NULL),
                     DRIFT_ENUMERIC);
    assert_non_null(strstr(c.message, "NaN"));
    /* A callback's own failure is passed through unchanged. */
    memset(&c, 0, sizeof c);
    assert_int_equal(drift_poisson_thin_svc(&c, &b, failing_rate, NULL, &t, NULL, NULL),
                     DRIFT_EDATA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_piecewise),
        cmocka_unit_test(test_linear_window),
        cmocka_unit_test(test_thinning),
        cmocka_unit_test(test_thinning_knots),
        cmocka_unit_test(test_thinning_adaptive),
        cmocka_unit_test(test_thinning_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
