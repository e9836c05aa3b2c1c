/* cdf.h: the logs of the cumulative distribution functions of the
 * language's continuous distributions (name_lcdf, name_lccdf; name_cdf
 * is the exponential of name_lcdf) with their partial derivatives in
 * every argument, over a block of rows at once, and the special functions
 * they need: log Phi, the regularised incomplete gamma and beta functions
 * on the log scale with their derivatives in the shapes.  Accurate in the
 * tails (log Phi(-40) is finite to full precision): about 1e-13 relative
 * for moderate shapes and 1e-15 for a gamma shape of 1e6; Student's t
 * past nu = 4e5 is Abramowitz and Stegun's normal approximation 26.7.8
 * (1e-11 relative at 1e6); the incomplete beta function loses about
 * 1e-16 times its larger shape.  Not for densities (dist.c) or the graph
 * (ad.c). */
#ifndef DRIFT_CDF_H
#define DRIFT_CDF_H

#include <stddef.h>

#include "parser/builtins.h"

/* Which tail: the cdf P(Y <= y) or its complement P(Y > y). */
typedef enum drift_cdf_tail {
    DRIFT_CDF_LOWER = 1,
    DRIFT_CDF_UPPER = 2
} drift_cdf_tail;

/* log P(a, x) and log Q(a, x) = log(1 - P(a, x)), P the regularised lower
 * incomplete gamma function, a > 0, x >= 0; d (each may be NULL) gets
 * {d/da, d/dx} of each.  Returns 0, or -1 for arguments outside the
 * domain (all outputs NaN). */
int drift_cdf_log_inc_gamma(double a, double x, double *lp, double dp[2],
                            double *lq, double dq[2]);

/* log I_x(a, b) and log(1 - I_x(a, b)), I the regularised incomplete
 * beta function, with x and y = 1 - x given separately (so that either
 * may be tiny without cancellation); d gets {d/da, d/db, d/dx} of each,
 * x and y moving together (dy = -dx).  Returns 0, or -1 outside the
 * domain. */
int drift_cdf_log_inc_beta(double a, double b, double x, double y,
                           double *lo, double dlo[3], double *up,
                           double dup[3]);

/* One element (a distribution for which drift_dist_has_cdf holds): a[0] the outcome, a[1..] the arguments, as
 * drift_dist_lpdf.  Returns log P(Y <= y) (tail LOWER) or log P(Y > y)
 * (UPPER), and d (may be NULL) gets its partials in each input.  An
 * outcome outside the support gives log 0 or log 1 (partials 0); an
 * argument outside its domain, NaN. */
double drift_cdf_log(drift_dist_id id, drift_cdf_tail tail, const double *a,
                     double *d);

/* A block of rows as drift_dist_rows, for the log cdf (tail LOWER) or the
 * log complementary cdf (UPPER): out[r] the sum over the row's elements.
 * Returns 0, or -1 with *bad_row, *bad_elem the first element whose value
 * is not finite. */
int drift_cdf_rows(drift_dist_id id, drift_cdf_tail tail, size_t rows,
                   size_t m, int n_in, const double *const *in,
                   const size_t *ld, const size_t *st, double *out,
                   double *const *part, size_t *bad_row, size_t *bad_elem);

#endif
