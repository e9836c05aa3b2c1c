/* lapack.h: the few LAPACK routines drift calls, as OpenBLAS exports them
 * beside its BLAS (configure checks that they are there).  Not every
 * system with the symbols has a LAPACKE header, hence these declarations;
 * OpenBLAS's own take no hidden string lengths.  Column-major, as LAPACK
 * is: a row-major lower triangle is a column-major upper one. */
#ifndef DRIFT_LAPACK_H
#define DRIFT_LAPACK_H

#include <cblas.h>

/* The Cholesky factor of a symmetric positive definite n x n matrix, in
 * place in the triangle uplo ("U" or "L") names; info > 0 when a leading
 * minor is not positive definite. */
void dpotrf_(const char *uplo, const blasint *n, double *a, const blasint *lda,
             blasint *info);

#endif
