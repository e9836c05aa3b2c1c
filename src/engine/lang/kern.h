/* kern.h: the row kernels of linear predictors: x_r . w over the rows of
 * a dense block and the transposed sum g += sum_r s_r x_r, chosen once per
 * process by the CPU's vector unit (AVX-512F, AVX2, else SSE2), and their
 * sparse forms.  For the AD kernels' DOT nodes and the generalised-linear
 * full passes (ad.c).  Not for products of matrices (OpenBLAS) or any
 * other arithmetic.
 *
 * What holds, whichever vector unit runs them: a dense dot product sums
 * its k products in 8 partial sums (partial sum l takes the products of
 * the elements j = l mod 8, in increasing j, the last block zero-padded),
 * combined as ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7)); the
 * transposed sum adds to g_j the rows' terms two at a time, in row order,
 * g_j + (s_r x_rj + s_r+1 x_r+1,j) for r = 0, 2, 4, ... (the last row of
 * an odd count alone: the chain of dependent additions is half as long as
 * one row at a time, and the pairs do not depend on the unit).  Every
 * product and sum is one IEEE operation, none contracted into an FMA.  So
 * the results are bitwise the same on every x86-64 CPU (and in the C
 * reference of each unit, which tests/engine/lang/test_kern.c checks),
 * and depend on the values alone: not on alignment, on where a row lies
 * or on the thread. */
#ifndef DRIFT_KERN_H
#define DRIFT_KERN_H

#include <stddef.h>
#include <stdint.h>

/* z[r] = x_r . w for r < n, x_r = X + r * ldx (k elements each). */
void drift_kern_dot_rows(size_t n, size_t k, const double *X, size_t ldx,
                         const double *w, double *z);
/* The same, and cv[r] = C[r * ldc]: a column of the same rows (an
 * outcome) read while the row is in cache. */
void drift_kern_dot_rows_col(size_t n, size_t k, const double *X, size_t ldx,
                             const double *w, double *z, const double *C,
                             size_t ldc, double *cv);

/* g[j] += s[r * sl] * x_rj for r < n (in pairs of rows, as above),
 * j < k. */
void drift_kern_axpy_rows(size_t n, size_t k, const double *X, size_t ldx,
                          const double *s, size_t sl, double *g);

/* bernoulli_logit's arithmetic over the first n of a stretch of S rows
 * (S a multiple of 8, rows n .. S-1 padding), given e[k] = exp(-|z[k]|)
 * <= 1: g[k] = y[k] - logistic(z[k]), as 1 / (1 + e) for z >= 0 and
 * e / (1 + e) below; with l (l[k] = log1p(e[k])) lp[k] = y z - max(z, 0)
 * - l[k], without it lp[k] = y z - max(z, 0); lp[k] is NaN where y[k] is
 * neither 0 nor 1.  *sum = the sum of lp[k] over the n rows (8 partial
 * sums, lane k mod 8, combined as the dot products' are).  Without l,
 * pm1[j] (j < S / 8, pm1 of S elements) = P_j - 1 with P_j the product of
 * the 8 rows' 1 + e[k] (1 past row n) as ((f0 f1) (f2 f3)) ((f4 f5)
 * (f6 f7)), exact in [0, 255], for the sum of log(1 + e) as log1p of
 * them.  Returns 1 when some lp[k] is not finite. */
int drift_kern_logit(size_t n, size_t S, const double *z, const double *y,
                     const double *e, const double *l, double *lp, double *g,
                     double *pm1, double *sum);

/* Sparse rows in CSR form (row_ptr, idx, val), the rows rows[r] when rows
 * is not NULL, else first + r.  The dot product sums row i's products in
 * 4 partial sums (products j = l mod 4 of the row's non-zeros, counted
 * from the row's first; the last ones, fewer than 4, into partial sum 0),
 * combined as (p0 + p1) + (p2 + p3).  z[r * zl] = x_i . v_r with
 * v_r = v + r * vl. */
void drift_kern_sparse_dot_rows(size_t n, const size_t *rows, size_t first,
                                const uint64_t *row_ptr, const uint32_t *idx,
                                const double *val, const double *v,
                                size_t vl, double *z, size_t zl);

/* g_r[idx] += s[r * sl] * val over row i's non-zeros, g_r = g + r * gl
 * (gl 0: the batch's sum, row after row). */
void drift_kern_sparse_axpy_rows(size_t n, const size_t *rows, size_t first,
                                 const uint64_t *row_ptr, const uint32_t *idx,
                                 const double *val, const double *s,
                                 size_t sl, double *g, size_t gl);

/* ---- every unit, for tests and benchmarks ---- */

typedef struct drift_kern {
    void (*dot_rows)(size_t n, size_t k, const double *X, size_t ldx,
                     const double *w, double *z, const double *C, size_t ldc,
                     double *cv);
    void (*axpy_rows)(size_t n, size_t k, const double *X, size_t ldx,
                      const double *s, size_t sl, double *g);
    int (*logit)(size_t n, size_t S, const double *z, const double *y,
                 const double *e, const double *l, double *lp, double *g,
                 double *pm1, double *sum);
    const char *name;       /* "AVX-512F", "AVX2", "SSE2" */
} drift_kern;

/* The kernels of unit u (0 SSE2, 1 AVX2, 2 AVX-512F), or NULL where this
 * CPU lacks it; the functions above use the widest this CPU has. */
const drift_kern *drift_kern_get(int u);
const char *drift_kern_describe(void);

#endif
