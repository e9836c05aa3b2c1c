/* poisson.h: first-arrival times of inhomogeneous Poisson processes with
 * linear and piecewise-linear rates, by inversion of the integrated rate,
 * and thinning against such bounds.  The pure functions here take the
 * Exp(1) variate explicitly so that they can be tested exactly. */
#ifndef DRIFT_POISSON_H
#define DRIFT_POISSON_H

#include <drift/sampler.h>

/* Time t >= 0 at which the integral of max(0, a + b s) over [0, t] reaches
 * E (E >= 0); INFINITY when it never does. */
double drift_poisson_linear_time(double a, double b, double E);

/* Integral of max(0, a + b s) over [0, len]. */
double drift_poisson_linear_mass(double a, double b, double len);

/* Time t >= t0 at which the integral of the bound's rate over [t0, t]
 * reaches E; INFINITY when it does not before the bound's end (t_max for
 * a line, the last knot otherwise). */
double drift_poisson_bound_time(const drift_rate_bound *bound, double t0,
                                double E);

/* The bound's rate at time t (0 outside the bound's support; at a jump,
 * the value after it). */
double drift_poisson_bound_rate(const drift_rate_bound *bound, double t);

/* The services on a chain (the services table points at these): draws
 * from the chain's stream, and the thinning loop with its counters. */
double drift_poisson_linear_svc(drift_chain *c, double a, double b);
double drift_poisson_bound_svc(drift_chain *c, const drift_rate_bound *bound,
                               double t0);
int drift_poisson_thin_svc(drift_chain *c, const drift_rate_bound *bound,
                   drift_rate_fn rate, void *user, double *t_event,
                   double *rate_at, drift_thin_stats *stats);

#endif
