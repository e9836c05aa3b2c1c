/* lapack.h: the few LAPACK routines drift calls, as OpenBLAS exports them
 * beside its BLAS (configure checks that they are there).  Not every
 * system with the symbols has a LAPACKE header, hence these declarations;
 * OpenBLAS's own take no hidden string lengths.  Column-major, as LAPACK
 * is: a row-major lower triangle is a column-major upper one. */
#ifndef DRIFT_LAPACK_H
#define DRIFT_LAPACK_H

#include <stdlib.h>

#include <cblas.h>

/* The Cholesky factor of a symmetric positive definite n x n matrix, in
 * place in the triangle uplo ("U" or "L") names; info > 0 when a leading
 * minor is not positive definite. */
void dpotrf_(const char *uplo, const blasint *n, double *a, const blasint *lda,
             blasint *info);

/* OpenBLAS's level-3 routines (dgemm, and the blocked LAPACK routines
 * built on them, dpotrf among them) reserve a work buffer of 128 MiB and a
 * little at their first call, and where the process's address-space
 * limit (ulimit -v) cannot hold it they retry for ever: the run hangs with
 * no word.  Whether such a buffer can be had now (reserved untouched, then
 * released), so that a caller can refuse, or take a way without level-3
 * BLAS, instead. */
#define DRIFT_BLAS_BUFFER_BYTES ((size_t)136 << 20)
static inline int drift_blas_buffer_fits(void)
{
    void *p = malloc(DRIFT_BLAS_BUFFER_BYTES);
    free(p);
    return p != NULL;
}

#endif
