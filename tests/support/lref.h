/* lref.h: reference values for the Langevin-family tests, all
 * computed independently of the samplers: the closed-form posterior of the
 * corrgauss test model over data drawn here, the covariance of the
 * minibatch gradient noise under random access, stationary covariances of
 * linear (AR) chains by the discrete Lyapunov equation, and moment checks
 * whose tolerances come from batch-means Monte Carlo standard errors.
 * Not for production code. */
#ifndef DRIFT_TEST_LREF_H
#define DRIFT_TEST_LREF_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"

/* Data and closed forms of corrgauss (tests/plugins/corrgauss.c):
 * per-datum precision P = S^-1, S = [s1^2, rho s1 s2; rho s1 s2, s2^2],
 * prior N(0, tau^2 I) (tau = 0: flat), posterior N(m, Q^-1) with
 * Q = N P + I/tau^2, m = Q^-1 P sum_i c_i.  Sc is the population
 * covariance of the centres (divisor N) and gnoise the covariance of the
 * minibatch error of grad U under random access with batch n:
 * (N^2/n) P Sc P.  D is 1 or 2; matrices are D x D row-major. */
typedef struct lref_target {
    size_t N, D;
    double rho, s1, s2, tau;
    double P[4], Q[4], Qinv[4], m[2], Sc[4];
    char *csv;                  /* the data file (owned; unlinked by free) */
    char set[4][48];            /* "rho=..", "s1=..", "s2=..", "tau=.." */
    char *set_ptr[4];           /* --model-set strings for th_open */
} lref_target;

/* Draws N centres c_i = mu + chol(S) z_i, z_i ~ N(0, I), with drift's RNG
 * under `seed` (mu = (1, -2)), writes them to a CSV and fills the closed
 * forms. */
void lref_make(lref_target *t, size_t N, size_t D, double rho, double s1,
               double s2, double tau, uint64_t seed);
void lref_free(lref_target *t);
/* Opens corrgauss over t's data. */
void lref_open(th_problem *tp, lref_target *t);
/* Covariance (D x D) of the random-access minibatch error of grad U. */
void lref_gnoise(const lref_target *t, size_t batch, double *G);

/* Stationary covariance S of z' = A z + w, Cov w = W (n x n, row-major),
 * the solution of S = A S A' + W (Smith's doubling; needs spectral radius
 * of A below 1). */
void lref_lyap(size_t n, const double *A, const double *W, double *S);

/* Sample means and covariances of the D output columns starting at col0,
 * with Monte Carlo standard errors from batch means (40 batches, each
 * much longer than the chains' autocorrelation in these tests). */
typedef struct lref_moments {
    double mean[2], cov[4], se_mean[2], se_cov[4];
} lref_moments;
void lref_compute(const th_draws *d, size_t col0, size_t D, lref_moments *mo);
/* Batch-means standard error of the mean of column col. */
double lref_se(const th_draws *d, size_t col);

/* Asserts |mean - m| < 4.5 se + allow_mean and |cov - S| < 4.5 se +
 * allow_cov entrywise (allow_*: a stated bias allowance, 0 for an exact
 * reference), printing every comparison under `label`. */
void lref_check(const char *label, const lref_moments *mo, size_t D,
                const double *m, const double *S, double allow_mean,
                double allow_cov);

#endif
