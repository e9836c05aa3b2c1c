/* poisson.c: Poisson-event services for piecewise-deterministic samplers:
 * first arrivals for rates max(0, a + b t) and piecewise-linear rates, and
 * a thinning driver that counts proposals and bound violations.  Not for
 * the samplers' bounds themselves: each plugin builds its own. */
#include "config.h"

#include <math.h>

#include "chain.h"
#include "poisson.h"
#include "rng.h"

/* Time at which a + b s, integrated from 0, reaches E while the rate is
 * positive throughout (a >= 0, or the caller has shifted past the zero):
 * the positive root of a t + b t^2 / 2 = E, written to avoid
 * cancellation. */
static double positive_root(double a, double b, double E)
{
    double disc = a * a + 2.0 * b * E;
    if (disc < 0)
        return INFINITY;
    double den = a + sqrt(disc);
    if (den <= 0)
        return INFINITY;
    return 2.0 * E / den;
}

double drift_poisson_linear_time(double a, double b, double E)
{
    if (!(E >= 0) || isnan(a) || isnan(b))
        return INFINITY;
    if (E == 0)
        return a > 0 || b > 0 ? (a > 0 ? 0.0 : -a / b) : INFINITY;
    if (b == 0)
        return a > 0 ? E / a : INFINITY;
    if (b > 0) {
        if (a >= 0)
            return positive_root(a, b, E);
        /* Zero until t0 = -a/b, then b (t - t0). */
        double t0 = -a / b;
        return t0 + sqrt(2.0 * E / b);
    }
    /* b < 0: positive only on [0, a/|b|) when a > 0. */
    if (a <= 0)
        return INFINITY;
    double mass = a * a / (-2.0 * b);
    if (E > mass)
        return INFINITY;
    return positive_root(a, b, E);
}

double drift_poisson_linear_mass(double a, double b, double len)
{
    if (!(len > 0))
        return 0;
    double end = a + b * len;
    if (a >= 0 && end >= 0)
        return 0.5 * (a + end) * len;
    if (a <= 0 && end <= 0)
        return 0;
    /* One sign change at s0 = -a / b. */
    double s0 = -a / b;
    if (a > 0)
        return 0.5 * a * s0;
    return 0.5 * end * (len - s0);
}

double drift_poisson_bound_rate(const drift_rate_bound *bd, double t)
{
    if (bd->n_knots < 2) {
        if (t < 0 || t > bd->t_max)
            return 0;
        double r = bd->a + bd->b * t;
        return r > 0 ? r : 0;
    }
    /* Knots: the bound lives on [t[0], t[n-1]]; a repeated knot time is a
     * jump, and the value just after it is the one that holds. */
    if (t < bd->t[0] || t > bd->t[bd->n_knots - 1])
        return 0;
    size_t k = 0;
    while (k + 2 < bd->n_knots && bd->t[k + 1] <= t)
        k++;
    double dt = bd->t[k + 1] - bd->t[k];
    double w = dt > 0 ? (t - bd->t[k]) / dt : 0;
    double r = bd->r[k] + w * (bd->r[k + 1] - bd->r[k]);
    return r > 0 ? r : 0;
}

double drift_poisson_bound_time(const drift_rate_bound *bd, double t0,
                                double E)
{
    if (bd->n_knots < 2) {
        double t = t0 + drift_poisson_linear_time(bd->a + bd->b * t0, bd->b, E);
        return t <= bd->t_max ? t : INFINITY;
    }
    for (size_t k = 0; k + 1 < bd->n_knots; k++) {
        double lo = bd->t[k], hi = bd->t[k + 1];
        if (hi <= t0 || hi <= lo)
            continue;
        double slope = (bd->r[k + 1] - bd->r[k]) / (hi - lo);
        double start = lo > t0 ? lo : t0;
        double a = bd->r[k] + slope * (start - lo);
        double len = hi - start;
        double t = drift_poisson_linear_time(a, slope, E);
        if (t <= len)
            return start + t;
        E -= drift_poisson_linear_mass(a, slope, len);
        if (E < 0)
            E = 0;
    }
    return INFINITY;
}

double drift_poisson_linear_svc(drift_chain *c, double a, double b)
{
    return drift_poisson_linear_time(a, b, drift_rng_exponential(&c->rng));
}

double drift_poisson_bound_svc(drift_chain *c, const drift_rate_bound *bound,
                               double t0)
{
    return drift_poisson_bound_time(bound, t0,
                                    drift_rng_exponential(&c->rng));
}

int drift_poisson_thin_svc(drift_chain *c, const drift_rate_bound *bound,
                   drift_rate_fn rate, void *user, double *t_event,
                   double *rate_at, drift_thin_stats *stats)
{
    double t = 0;
    for (uint64_t tries = 0;; tries++) {
        if (tries == 100000000ull)
            return drift_chain_fail(c, DRIFT_ENUMERIC,
                                    "chain %u: thinning made 1e8 proposals "
                                    "without an event; the sampler's rate "
                                    "bound is far too loose or has no "
                                    "horizon",
                                    c->id);
        t = drift_poisson_bound_time(bound, t, drift_rng_exponential(&c->rng));
        if (isinf(t)) {
            *t_event = INFINITY;
            return DRIFT_OK;
        }
        /* The bound's value at t is read before the rate callback runs:
         * the callback may revise the bound for later times (adaptive
         * thinning), and the proposal was made from the bound as it was. */
        double lam = drift_poisson_bound_rate(bound, t);
        double r;
        int rc = rate(user, t, &r);
        if (rc)
            return rc;
        if (isnan(r))
            return drift_chain_fail(c, DRIFT_ENUMERIC,
                                    "chain %u, iteration %llu: the event rate "
                                    "at a thinning proposal is NaN; the "
                                    "gradient is not finite there",
                                    c->id, (unsigned long long)c->iter);
        c->proposals++;
        if (stats)
            stats->proposals++;
        if (r > lam) {
            c->violations++;
            if (stats)
                stats->violations++;
        }
        if (r > 0 && drift_rng_uniform(&c->rng) * lam < r) {
            *t_event = t;
            if (rate_at)
                *rate_at = r;
            return DRIFT_OK;
        }
    }
}
