/* transform.h: Stan's unconstraining transforms of the structured types
 * (simplex, ordered, positive_ordered, cholesky_factor_corr,
 * cholesky_factor_cov, cov_matrix, corr_matrix): from free values u to
 * the constrained x with the log-Jacobian, its tangent (forward mode),
 * its reverse-mode gradient, the inverse for initial values, and the
 * check data declared with these types must pass.  One element at a time
 * (an array of simplexes is a loop of the caller's); matrices row-major.
 * Not for the elementwise bounds <lower, upper> (ad.c has those). */
#ifndef DRIFT_TRANSFORM_H
#define DRIFT_TRANSFORM_H

#include <stddef.h>

#include "parser/ast.h"

/* Sizes of one element of a type with constraint con and shape m x n
 * (vectors: m = K, n = 1; cholesky_factor_cov[M, N]: m = M, n = N; the
 * square ones: m = n = K): free values, constrained values, and the
 * doubles of scratch space forward, reverse and inverse need. */
size_t drift_transform_free_size(drift_constraint con, size_t m, size_t n);
size_t drift_transform_size(drift_constraint con, size_t m, size_t n);
size_t drift_transform_work(drift_constraint con, size_t m, size_t n);

/* x (drift_transform_size values) from u; returns the log-Jacobian
 * log |dx/du| (over the free coordinates of x: the first K - 1 entries of
 * a simplex, the lower triangle of a symmetric matrix, the strict lower
 * triangle of a correlation matrix or its Cholesky factor).  With tu !=
 * NULL, also tx = J tu and *tlj = d lj . tu.  work: drift_transform_work
 * doubles. */
double drift_transform_forward(drift_constraint con, size_t m, size_t n,
                               const double *u, double *x, const double *tu,
                               double *tx, double *tlj, double *work);

/* gu += J^T gx + glj * grad(lj), at u (x its image).  gx may be NULL
 * (only the Jacobian's gradient). */
void drift_transform_reverse(drift_constraint con, size_t m, size_t n,
                             const double *u, const double *x,
                             const double *gx, double glj, double *gu,
                             double *work);

/* u from x (u may be NULL: a check only).  Returns 0, or -1 with a
 * sentence in why saying which condition x breaks ("the entries sum to
 * 0.9, not 1"). */
int drift_transform_inverse(drift_constraint con, size_t m, size_t n,
                            const double *x, double *u, char *why,
                            size_t cap, double *work);

/* How the type is written: "simplex", "cholesky_factor_corr", ... */
const char *drift_transform_name(drift_constraint con);

/* What it is, for messages: "a simplex", "an ordered vector", ... */
const char *drift_transform_what(drift_constraint con);

/* The Cholesky factor of a symmetric K x K x into L (lower, zeros
 * above) by plain loops, row by row of each column (the fastest below
 * K = 32, where a LAPACK call's overhead dominates); -1 when x is not
 * positive definite (NaN fails the same test). */
int drift_cholesky_small(size_t K, const double *x, double *L);

#endif
