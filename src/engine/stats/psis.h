/* psis.h: Pareto smoothed importance sampling (Vehtari, Simpson, Gelman,
 * Yao and Gabry): the Pareto k diagnostic of importance ratios, the shape
 * of a generalised Pareto distribution fitted to the largest ratios, as
 * the loo package and Stan's variational method compute it, and the
 * ratios smoothed by that fit (Pathfinder's resampling). */
#ifndef DRIFT_PSIS_H
#define DRIFT_PSIS_H

#include <stddef.h>

#include "base/util.h"

/* k-hat of the ratios exp(log_ratio[0..n)) (independent draws, relative
 * efficiency 1): the M = ceil(min(n / 5, 3 sqrt(n))) largest are fitted
 * above the next one by Zhang and Stephens' (2009) empirical Bayes
 * estimate with loo's weakly informative prior towards 0.5.  Into *k;
 * -inf when the largest ratios are equal to within 1e-6 (an exact
 * approximation), +inf when the tail is otherwise flat or a ratio is NaN
 * or +inf (-inf is a weight of 0); n below 10 is
 * refused (DRIFT_EINVAL), as is running out of memory. */
int drift_psis_khat(const double *log_ratio, size_t n, double *k,
                    drift_err *e);

/* The generalised Pareto fit itself, on the exceedances x[0..n)
 * (positive, sorted ascending): the shape k (with the prior) and the
 * scale sigma. */
void drift_psis_gpdfit(const double *x, size_t n, double *k, double *sigma);

/* Pareto smoothing of n log importance ratios in place (Vehtari, Simpson,
 * Gelman, Yao & Gabry 2024): the largest min(n/5, 3 sqrt(n)) replaced by
 * the expected order statistics of a generalised Pareto fitted to them
 * (Zhang & Stephens 2009, with the weakly informative prior of the
 * paper), truncated at the largest raw ratio, then normalised (log-sum-
 * exp 0).  *khat gets the fitted shape (INFINITY when the tail is shorter
 * than 5 or not finite; -INFINITY when the tail's ratios are equal to
 * within 1e-6: no smoothing either way).  -inf ratios are zero weights.
 * Returns DRIFT_OK, DRIFT_ENOMEM, or DRIFT_ENUMERIC when no ratio is
 * finite. */
int drift_psis_smooth(double *lw, size_t n, double *khat);

/* Pareto k above which importance resampling is unreliable (the paper's
 * 0.7). */
#define DRIFT_PSIS_K_WARN 0.7

/* Means of draws from an approximation q of a density p, streamed one
 * draw at a time: the plain means (q's own) beside the means and sds
 * weighted by the ratios p/q, self-normalised.  Where the ratios are
 * reliable (k-hat at most 0.7) the weighted ones estimate p's, so a plain
 * mean far from the weighted one, in p's sds, says q sits off p's centre
 * even when its ratios' tail is light (Yao, Vehtari, Simpson and Gelman
 * 2018, "Yes, but did it work?"). */
typedef struct drift_is_means {
    size_t p, n;                /* coordinates, draws added */
    double top;                 /* largest finite log ratio so far */
    double sw, sw2;             /* sums of exp(lr - top), of its square */
    double *mean, *m2;          /* plain means and sums of squared
                                   deviations (Welford) */
    double *x0;                 /* the first draw: the weighted sums are of
                                   x - x0, against cancellation */
    double *swx, *swxx;         /* sums of exp(lr - top) (x - x0), and of
                                   its product with x - x0 */
} drift_is_means;

/* For p coordinates: DRIFT_OK or DRIFT_ENOMEM. */
int drift_is_means_init(drift_is_means *a, size_t p, drift_err *e);
/* A draw x[0..p) with log ratio log p - log q (not finite: weight 0). */
void drift_is_means_add(drift_is_means *a, double log_ratio,
                        const double *x);
/* The largest |plain - weighted mean| / weighted sd over the coordinates
 * whose draws vary: into *j its coordinate and *shift its signed size
 * (weighted minus plain); into *noise the sd such a shift has when q has
 * p's centre but the weights are noisy, sqrt(1 / ESS - 1 / n) plain sds
 * with ESS = (sum w)^2 / sum w^2.  0 when there is none (no weight, or
 * no coordinate varies), else 1. */
int drift_is_means_shift(const drift_is_means *a, size_t *j, double *shift,
                         double *noise);
void drift_is_means_free(drift_is_means *a);

/* A shift is reported when it is larger than this many of p's sds and
 * than DRIFT_IS_SHIFT_NOISE times its noise (the largest of many
 * coordinates' shifts stays under 5 noise sds unless q is off). */
#define DRIFT_IS_SHIFT_WARN 0.5
#define DRIFT_IS_SHIFT_NOISE 5.0

#endif
