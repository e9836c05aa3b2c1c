/* rand.h: random draws for the generated block's _rng functions: a
 * xoshiro256** stream seeded from one 64-bit number (so that a draw's
 * generated quantities depend only on the seed the engine passes), and
 * exact samplers for the language's distributions.  Not for samplers'
 * randomness (the engine's run/rng.c serves those; the language's back
 * end sits below it). */
#ifndef DRIFT_RAND_H
#define DRIFT_RAND_H

#include <stddef.h>
#include <stdint.h>

#include "parser/builtins.h"

typedef struct drift_rand {
    uint64_t s[4];
} drift_rand;

/* Seeds the stream from seed (splitmix64), any value allowed. */
void drift_rand_seed(drift_rand *r, uint64_t seed);

/* Uniform on (0, 1), never 0 or 1. */
double drift_rand_uniform(drift_rand *r);
double drift_rand_normal(drift_rand *r);
/* Gamma(shape a, rate 1), a > 0. */
double drift_rand_gamma(drift_rand *r, double a);
double drift_rand_beta(drift_rand *r, double a, double b);
/* Exact binomial and Poisson counts. */
double drift_rand_binomial(drift_rand *r, double n, double p);
double drift_rand_poisson(drift_rand *r, double lambda);

/* The log of a Gamma(a, 1) draw (-inf where even the log underflows);
 * NaN unless a > 0. */
double drift_rand_log_gamma(drift_rand *r, double a);

/* One draw of an elementwise distribution with arguments a[0..n_args)
 * (Stan's order, after the outcome).  NaN when an argument is not finite
 * or lies outside its domain; +-inf when the draw cannot be represented:
 * past a double's range, or a count whose Poisson rate (for the negative
 * binomials, the gamma draw behind it) is 2^30 or more, where Stan's
 * _rng functions stop too. */
double drift_rand_dist(drift_rand *r, drift_dist_id id, const double *a);

/* Why a draw of drift_rand_dist was +-inf, in words that follow the
 * function's name: "the rate ... must be less than ...". */
void drift_rand_range_explain(drift_dist_id id, const double *a, char *buf,
                              size_t cap);

/* A category 1..K with probabilities p (summing to 1; NaN when they do
 * not, within 1e-8, or one is negative). */
double drift_rand_categorical(drift_rand *r, const double *p, size_t K);

/* A draw of ordered_logistic (probit 0) or ordered_probit (probit 1):
 * a category 1..K1 + 1 given eta and the cutpoints c[0..K1), by
 * inversion of P(Y > k) = F(eta - c[k-1]).  NaN when eta is not finite
 * or the cutpoints are not increasing. */
double drift_rand_ordered(drift_rand *r, int probit, double eta,
                          const double *c, size_t K1);

/* The Cholesky factor L (K x K, row-major) of a correlation matrix drawn
 * from LKJ(eta): canonical partial correlations (r + 1) / 2 ~
 * Beta(eta + (K - 2 - j) / 2, same), j the number of variables
 * conditioned on.  -1 unless eta is positive and finite. */
int drift_rand_lkj_cholesky(drift_rand *r, size_t K, double eta, double *L);

#endif
