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
 * +inf when the tail is flat or a ratio is NaN or +inf (-inf is a
 * weight of 0); n below 10 is
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

#endif
