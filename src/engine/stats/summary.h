/* summary.h: posterior summaries of draws from one or more chains: mean,
 * Monte Carlo standard error, sd, quantiles, bulk and tail effective sample
 * sizes and rank-normalised split R-hat, as defined by Vehtari, Gelman,
 * Simpson, Carpenter and Buerkner (2021) and computed by R's posterior
 * package (version 1.4), whose values these agree with to rounding.
 * Not for reading files (stancsv.c) or printing tables (the CLI).
 *
 * Draws of one quantity are passed as C chains of n draws each, chain c's
 * draws at x[c*n .. c*n+n).  Functions return NaN where posterior returns
 * NA: a non-finite draw, a constant quantity (max - min below DBL_EPSILON),
 * or too few draws (ESS needs n >= 3 per split chain, R-hat n >= 2). */
#ifndef DRIFT_SUMMARY_H
#define DRIFT_SUMMARY_H

#include <stddef.h>

#include <drift/common.h>

/* One row of a summary table. */
typedef struct drift_summary_stats {
    double mean;
    double mcse;      /* of the mean: sd / sqrt(ess_mean), ess_mean being
                         the split-chain ESS of the draws themselves (not
                         rank-normalised), as posterior::mcse_mean */
    double sd;        /* over all draws, n-1 denominator */
    double q5, q50, q95; /* R's quantile type 7 over all draws, as
                            posterior::quantile2 */
    double ess_bulk;  /* posterior::ess_bulk */
    double ess_tail;  /* posterior::ess_tail */
    double rhat;      /* posterior::rhat */
} drift_summary_stats;

/* Every statistic above for x (C chains of n draws).  Returns DRIFT_OK,
 * or DRIFT_ENOMEM / DRIFT_EINVAL (n or C zero) with a message in e. */
int drift_summary_compute(const double *x, size_t n, size_t C,
                          drift_summary_stats *out, drift_err *e);

/* The single statistics, for tests and callers that need one.  Each
 * returns NaN on an allocation failure as well as where posterior gives
 * NA. */
double drift_summary_ess_bulk(const double *x, size_t n, size_t C);
double drift_summary_ess_tail(const double *x, size_t n, size_t C);
/* ESS of the indicator x <= quantile(x, p) (posterior::ess_quantile). */
double drift_summary_ess_quantile(const double *x, size_t n, size_t C,
                                  double p);
double drift_summary_rhat(const double *x, size_t n, size_t C);
/* posterior::ess_basic / rhat_basic: on the draws themselves, split into
 * halves when split != 0. */
double drift_summary_ess_basic(const double *x, size_t n, size_t C,
                               int split);
double drift_summary_rhat_basic(const double *x, size_t n, size_t C,
                                int split);
double drift_summary_mcse_mean(const double *x, size_t n, size_t C);

/* Quantile p of the m values v by R's definition 7 (linear interpolation
 * between order statistics, h = (m-1) p); v need not be sorted.  NaN when
 * m == 0 or a value is NaN. */
double drift_summary_quantile(const double *v, size_t m, double p);

/* Quantiles p[0..k) (each in [0, 1]) of the m values v, as
 * drift_summary_quantile but sorting once, into out[k] (all NaN when m is
 * 0 or a value is NaN).  Returns DRIFT_OK or DRIFT_ENOMEM. */
int drift_summary_quantiles(const double *v, size_t m, const double *p,
                            size_t k, double *out);

/* The standard normal quantile function, accurate to a few ulp on
 * (0, 1); -inf at 0, +inf at 1. */
double drift_summary_qnorm(double p);

#endif
