/* psis.h: the Pareto k diagnostic of importance ratios (Vehtari, Simpson,
 * Gelman, Yao and Gabry, "Pareto smoothed importance sampling"): the
 * shape of a generalised Pareto distribution fitted to the largest
 * ratios, as the loo package and Stan's variational method compute it.
 * Not for smoothing the weights themselves. */
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

#endif
