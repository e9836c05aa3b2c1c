/* dist.h: the log densities of the model language's distributions and
 * their partial derivatives in every argument, evaluated over a block of
 * rows at once, and the special functions they need.  Densities are
 * normalised (constants included), so per-row terms are proper
 * log-likelihoods.  Not for the graph (ad.c) or the language (builtins.h
 * names the distributions). */
#ifndef DRIFT_DIST_H
#define DRIFT_DIST_H

#include <stddef.h>

#include "parser/builtins.h"

/* digamma (psi), the derivative of log Gamma; accurate to about 1e-15
 * relative for x > 0 and on the negative axis away from the poles. */
double drift_digamma(double x);

/* log Gamma, thread-safe. */
double drift_lgamma(double x);

/* log(1 + exp(x)) without overflow, and the logistic function. */
double drift_log1p_exp(double x);
double drift_inv_logit(double x);

/* log Phi(z), the standard normal cdf, accurate far into either tail;
 * *dz (may be NULL) gets its derivative phi(z) / Phi(z). */
double drift_log_Phi(double z, double *dz);

/* One element: a[0] the outcome, a[1..] the arguments; d (n_args + 1
 * partials; may be NULL) gets the partial derivative of the log density
 * in each.  Returns the log density, or NaN when an argument lies outside
 * its domain (a scale <= 0, a probability outside [0, 1], an outcome
 * outside the support). */
double drift_dist_lpdf(drift_dist_id id, const double *a, double *d);

/* A block of `rows` rows of m elements each.  Input k (0 the outcome)
 * of element j of row r is in[k][r * ld[k] + j * st[k]] (ld 0: shared by
 * the rows; st 0: one value broadcast over the elements).  out[r] gets the
 * sum over the elements of row r; when part != NULL, part[k] (when not
 * NULL) gets the partials row-major, part[k][r * m + j].  Returns 0, or
 * -1 when some row's sum is not finite: *bad_row and *bad_elem then name
 * the first such element (its value is NaN or infinite). */
int drift_dist_rows(drift_dist_id id, size_t rows, size_t m, int n_in,
                    const double *const *in, const size_t *ld,
                    const size_t *st, double *out, double *const *part,
                    size_t *bad_row, size_t *bad_elem);

/* bernoulli_logit(y | z) over a block of rows of one element each (the
 * hot case of drift_dist_rows, the same values): out[r] the log density of
 * y[r * ldy] given z[r * ldz], dz[r] (when not NULL) its partial in z,
 * y - logistic(z).  Returns 0, or -1 with *bad_row the first row whose
 * value is not finite (an outcome neither 0 nor 1, or z not finite). */
int drift_dist_bernoulli_logit_rows(size_t rows, const double *y, size_t ldy,
                                    const double *z, size_t ldz, double *out,
                                    double *dz, size_t *bad_row);

/* categorical_logit over a block of rows: outcome y[r * ldy] in 1..K,
 * log-odds eta[r * lde + j], j < K.  out[r] = eta[y] - log_sum_exp(eta);
 * when soft != NULL it gets the softmax of each row (rows x K), from which
 * the partial in eta is onehot(y) - softmax.  Returns 0, or -1 with
 * *bad_row the first row whose outcome is not an int in 1..K or whose
 * log-odds are not finite. */
int drift_dist_catlogit(size_t rows, size_t K, const double *y, size_t ldy,
                        const double *eta, size_t lde, double *out,
                        double *soft, size_t *bad_row);

/* ordered_logistic (probit 0) or ordered_probit (probit 1): the log
 * probability of category y in 1..K, K = K1 + 1, given eta and the
 * cutpoints c[0..K1): log(F(eta - c[y-2]) - F(eta - c[y-1])), F the
 * logistic function or Phi, c[-1] = -inf and c[K-1] = +inf.  d (may be
 * NULL) gets the partials in eta, in c[y-2] and in c[y-1] (0 where
 * that cutpoint does not exist).  Returns NaN for an outcome that is not
 * an int in 1..K or cutpoints not strictly increasing around it. */
double drift_dist_ordered(int probit, double y, double eta, const double *c,
                          size_t K1, double d[3]);

/* Why an element's log density is not finite, for messages: writes a
 * sentence such as "sigma must be positive, got -1" into buf. */
void drift_dist_explain(drift_dist_id id, const double *a, char *buf,
                        size_t cap);

#endif
