/* trajectory.h: statistics of a continuous trajectory written as linear
 * segments (drift's --emit segments files): x(t) = x0 + v (t - start) on
 * each segment, the segments of a chain one after another in time.  Time
 * averages are exact, not sums over segment starts.  Not for reading the
 * files (stancsv.c) or for draws (summary.c). */
#ifndef DRIFT_TRAJECTORY_H
#define DRIFT_TRAJECTORY_H

#include <stddef.h>

/* One coordinate's segments: n of them, segment i running from x0[i]
 * with slope v[i] for dur[i] >= 0 time units.  v may be NULL (the value
 * is constant on each segment: a step function). */
typedef struct drift_trajectory {
    const double *x0, *v, *dur;
    size_t n;
    size_t stride;      /* distance between consecutive segments' values in
                           x0, v and dur (1 for plain arrays) */
} drift_trajectory;

/* Exact time average and variance (1/T) int (x - mean)^2 dt of the
 * trajectories tr[0..m) pooled, and their total time T (all 0 when T is
 * 0). */
void drift_trajectory_moments(const drift_trajectory *tr, size_t m,
                              double *mean, double *var, double *T);

/* The time-weighted quantile p in [0, 1] of the pooled trajectories: the
 * q with a fraction p of their total time spent at or below q (found by
 * bisection to full precision).  NaN when the total time is 0 or a value
 * is not finite. */
double drift_trajectory_quantile(const drift_trajectory *tr, size_t m,
                                 double p);

/* The trajectory's values at k equally spaced times, the midpoints of k
 * equal pieces of its total time, into out[k]: a draws-like series for
 * effective sample sizes and R-hat. */
void drift_trajectory_grid(const drift_trajectory *tr, size_t k, double *out);

#endif
