/* ksd.h: the kernel Stein discrepancy (KSD) of a set of draws against the
 * target whose score (gradient of the log density) is known at each draw,
 * with the inverse multiquadric (IMQ) kernel of Gorham and Mackey (2017),
 * "Measuring sample quality with kernels", ICML:
 *
 *     k(x, y) = (c^2 + |x - y|^2)^beta,     c > 0, -1 < beta < 0,
 *
 * and the Stein kernel built from it and the score s = grad log p,
 *
 *     k0(x, y) = s(x).s(y) k + s(x).grad_y k + s(y).grad_x k
 *                + sum_k d^2 k / dx_k dy_k.
 *
 * KSD^2 of draws x_1..x_n is (1/n^2) sum_{i,j} k0(x_i, x_j) (the
 * V-statistic: the discrepancy of the empirical measure, which is what
 * Gorham and Mackey's convergence results are about).  It is 0 only when
 * the draws are the target; for n independent exact draws it is of order
 * 1/n (E KSD^2 = E k0(x, x) / n, which is 2d/n for N(mu, I), c = 1,
 * beta = -1/2).  KSD^2 is a sum over coordinates of non-negative parts
 * (the squared norms of the Stein witness's components), so a large part
 * points at the coordinate at fault.  Not for reading files, nor for
 * computing scores (the caller has them).
 *
 * Pure functions: no I/O, no state; the only allocation is none. */
#ifndef DRIFT_KSD_H
#define DRIFT_KSD_H

#include <stddef.h>

#include <drift/common.h>

/* What drift_ksd_imq computes. */
typedef struct drift_ksd {
    double ksd;     /* sqrt(KSD^2), the V-statistic */
    double ksd2;    /* KSD^2, the V-statistic (>= 0 up to rounding) */
    double ksd2_u;  /* the U-statistic (1/(n(n-1))) sum_{i != j} k0:
                       unbiased for the population KSD^2 of independent
                       draws, also when each score carries independent
                       zero-mean noise (a minibatch estimate); may be
                       negative.  NaN for n < 2 */
} drift_ksd;

/* The IMQ kernel Stein discrepancy of the n draws x (row-major, n x d,
 * row i at x + i * ldx) with scores s (row i at s + i * lds: the gradient
 * of the log density at x_i, on the same coordinates), kernel parameters
 * c > 0 and -1 < beta < 0 (Gorham and Mackey's choice: c = 1,
 * beta = -1/2).  When part != NULL it gets d values: coordinate k's part
 * of KSD^2 (V-statistic; the parts sum to ksd2).
 *
 * Cost: n (n - 1) / 2 pairs of O(d) work each (three inner products;
 * twice that with part), no memory beyond the arguments.
 *
 * Returns DRIFT_OK, or DRIFT_EINVAL (n or d zero, c or beta outside their
 * range, ldx or lds below d) or DRIFT_ENUMERIC (a non-finite draw or
 * score, named by its row and coordinate, 1-based) with a message in e;
 * *out is then all NaN. */
int drift_ksd_imq(const double *x, size_t ldx, const double *s, size_t lds,
                  size_t n, size_t d, double c, double beta, drift_ksd *out,
                  double *part, drift_err *e);

#endif
