/* transform.c: the structured types' unconstraining transforms (see
 * transform.h), written as Stan writes them: stick-breaking for the
 * simplex, cumulative exponentials for the ordered vectors, tanh'd
 * canonical partial correlations for correlation matrices and their
 * Cholesky factors, an exponentiated diagonal for covariance factors.
 * Each transform has its forward pass with tangents and a hand-written
 * reverse pass; all run once per evaluation (parameters are shared by
 * the rows), so plain loops serve, but for L L^T of a large covariance
 * or correlation matrix (BLAS).  Not for the elementwise bounds. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "transform.h"

#define LOG_2 0.69314718055994530942

static double inv_logit(double x)
{
    if (x >= 0)
        return 1 / (1 + exp(-x));
    double e = exp(x);
    return e / (1 + e);
}

static double log1p_exp(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

const char *drift_transform_name(drift_constraint con)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX: return "simplex";
    case DRIFT_CON_ORDERED: return "ordered";
    case DRIFT_CON_POSITIVE_ORDERED: return "positive_ordered";
    case DRIFT_CON_CHOL_CORR: return "cholesky_factor_corr";
    case DRIFT_CON_CHOL_COV: return "cholesky_factor_cov";
    case DRIFT_CON_COV: return "cov_matrix";
    case DRIFT_CON_CORR: return "corr_matrix";
    case DRIFT_CON_NONE: break;
    }
    return "none";
}

const char *drift_transform_what(drift_constraint con)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX: return "a simplex";
    case DRIFT_CON_ORDERED: return "an ordered vector";
    case DRIFT_CON_POSITIVE_ORDERED: return "a positive_ordered vector";
    case DRIFT_CON_CHOL_CORR:
        return "a cholesky_factor_corr (the Cholesky factor of a correlation "
               "matrix)";
    case DRIFT_CON_CHOL_COV: return "a cholesky_factor_cov";
    case DRIFT_CON_COV: return "a cov_matrix";
    case DRIFT_CON_CORR: return "a corr_matrix";
    case DRIFT_CON_NONE: break;
    }
    return "a value";
}

size_t drift_transform_free_size(drift_constraint con, size_t m, size_t n)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX: return m ? m - 1 : 0;
    case DRIFT_CON_ORDERED:
    case DRIFT_CON_POSITIVE_ORDERED: return m;
    case DRIFT_CON_CHOL_CORR:
    case DRIFT_CON_CORR: return m * (m ? m - 1 : 0) / 2;
    case DRIFT_CON_CHOL_COV: return n * (n + 1) / 2 + (m - n) * n;
    case DRIFT_CON_COV: return m * (m + 1) / 2;
    case DRIFT_CON_NONE: break;
    }
    return m * n;
}

size_t drift_transform_size(drift_constraint con, size_t m, size_t n)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX:
    case DRIFT_CON_ORDERED:
    case DRIFT_CON_POSITIVE_ORDERED: return m;
    default: return m * n;
    }
}

size_t drift_transform_work(drift_constraint con, size_t m, size_t n)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX:
    case DRIFT_CON_ORDERED:
    case DRIFT_CON_POSITIVE_ORDERED:
    case DRIFT_CON_CHOL_CORR: return 2 * m + 2;
    default: return 3 * m * n + 2 * m + 2;
    }
}

/* ---- simplex: Stan's stick-breaking ---------------------------------------- */

/* x_k = s_k z_k with z_k = logistic(u_k - log(K - 1 - k)) and s_k the
 * stick left, s_{k+1} = s_k - x_k; x_{K-1} = s_{K-1}.  The log-Jacobian
 * (of u -> x_0..x_{K-2}) is sum log(z_k (1 - z_k) s_k). */
static double simplex_fwd(size_t K, const double *u, double *x,
                          const double *tu, double *tx, double *tlj)
{
    if (K == 0)
        return 0;
    double s = 1, ts = 0, lj = 0, t = 0;
    for (size_t k = 0; k + 1 < K; k++) {
        double a = u[k] - log((double)(K - 1 - k));
        double z = inv_logit(a);
        x[k] = s * z;
        lj += log(s) - log1p_exp(-a) - log1p_exp(a);
        if (tu) {
            double tz = z * (1 - z) * tu[k];
            tx[k] = ts * z + s * tz;
            t += (1 - 2 * z) * tu[k] + ts / s;
            ts -= tx[k];
        }
        s -= x[k];
    }
    x[K - 1] = s;
    if (tu) {
        tx[K - 1] = ts;
        *tlj = t;
    }
    return lj;
}

static void simplex_rev(size_t K, const double *u, const double *gx,
                        double glj, double *gu, double *work)
{
    if (K < 2)
        return;
    double *z = work, *s = work + K;
    s[0] = 1;
    for (size_t k = 0; k + 1 < K; k++) {
        z[k] = inv_logit(u[k] - log((double)(K - 1 - k)));
        s[k + 1] = s[k] * (1 - z[k]);
    }
    double gs = gx ? gx[K - 1] : 0; /* adjoint of s_{k+1} */
    for (size_t k = K - 1; k-- > 0;) {
        double gxk = (gx ? gx[k] : 0) - gs;
        double gz = gxk * s[k];
        gs = gs + gxk * z[k] + glj / s[k];
        gu[k] += gz * z[k] * (1 - z[k]) + glj * (1 - 2 * z[k]);
    }
}

static int simplex_inv(size_t K, const double *x, double *u, char *why,
                       size_t cap)
{
    double sum = 0;
    for (size_t k = 0; k < K; k++) {
        if (!(x[k] >= 0)) {
            snprintf(why, cap, "entry %zu is %g; a simplex has no negative "
                               "entries", k + 1, x[k]);
            return -1;
        }
        sum += x[k];
    }
    if (!(fabs(sum - 1) <= 1e-8)) {
        snprintf(why, cap, "the entries sum to %.10g; a simplex sums to 1",
                 sum);
        return -1;
    }
    double s = 1;
    for (size_t k = 0; k + 1 < K; k++) {
        double z = s > 0 ? x[k] / s : 0.5;
        if (u)
            u[k] = log(z) - log1p(-z) + log((double)(K - 1 - k));
        s -= x[k];
    }
    return 0;
}

/* ---- ordered, positive_ordered --------------------------------------------- */

static double ordered_fwd(int positive, size_t K, const double *u, double *x,
                          const double *tu, double *tx, double *tlj)
{
    double lj = 0, t = 0;
    for (size_t k = 0; k < K; k++) {
        if (k == 0 && !positive) {
            x[0] = u[0];
            if (tu)
                tx[0] = tu[0];
            continue;
        }
        double e = exp(u[k]);
        x[k] = (k ? x[k - 1] : 0) + e;
        lj += u[k];
        if (tu) {
            tx[k] = (k ? tx[k - 1] : 0) + e * tu[k];
            t += tu[k];
        }
    }
    if (tu)
        *tlj = t;
    return lj;
}

static void ordered_rev(int positive, size_t K, const double *u,
                        const double *gx, double glj, double *gu)
{
    double acc = 0;
    for (size_t k = K; k-- > 0;) {
        acc += gx ? gx[k] : 0;
        if (k == 0 && !positive)
            gu[0] += acc;
        else
            gu[k] += acc * exp(u[k]) + glj;
    }
}

static int ordered_inv(int positive, size_t K, const double *x, double *u,
                       char *why, size_t cap)
{
    for (size_t k = 0; k < K; k++) {
        if (!isfinite(x[k])) {
            snprintf(why, cap, "entry %zu is %g", k + 1, x[k]);
            return -1;
        }
        if (k == 0 && positive && !(x[0] > 0)) {
            snprintf(why, cap, "entry 1 is %g; a positive_ordered vector "
                               "has positive entries", x[0]);
            return -1;
        }
        if (k > 0 && !(x[k] > x[k - 1])) {
            snprintf(why, cap, "entry %zu (%g) is not above entry %zu (%g); "
                               "the entries must be strictly increasing",
                     k + 1, x[k], k, x[k - 1]);
            return -1;
        }
        if (u)
            u[k] = k == 0 ? (positive ? log(x[0]) : x[0])
                          : log(x[k] - x[k - 1]);
    }
    return 0;
}

/* ---- cholesky_factor_corr ------------------------------------------------------ */

/* Free values w = tanh(u) fill the strict lower triangle row by row;
 * row i is w_ij sqrt(1 - s_j) with s_j the squares so far, its diagonal
 * sqrt(1 - s_i), so every row has unit length.  The log-Jacobian of u ->
 * the strict lower triangle is sum log(1 - w^2) + sum 0.5 log(1 - s_j). */
static double cholcorr_fwd(size_t K, const double *u, double *x,
                           const double *tu, double *tx, double *tlj)
{
    memset(x, 0, K * K * sizeof *x);
    if (tu)
        memset(tx, 0, K * K * sizeof *tx);
    if (K == 0) {
        if (tu)
            *tlj = 0;
        return 0;
    }
    x[0] = 1;
    double lj = 0, t = 0;
    size_t q = 0;
    for (size_t i = 1; i < K; i++) {
        double s = 0, ts = 0;
        for (size_t j = 0; j < i; j++, q++) {
            double w = tanh(u[q]);
            double r = sqrt(1 - s);
            double v = w * r;
            x[i * K + j] = v;
            lj += log1p(-w * w) + log(r);
            if (tu) {
                double tw = (1 - w * w) * tu[q];
                double tr = -ts / (2 * r);
                double tv = tw * r + w * tr;
                tx[i * K + j] = tv;
                t += -2 * w * tu[q] + tr / r;
                ts += 2 * v * tv;
            }
            s += v * v;
        }
        x[i * K + i] = sqrt(1 - s);
        if (tu)
            tx[i * K + i] = -ts / (2 * x[i * K + i]);
    }
    if (tu)
        *tlj = t;
    return lj;
}

static void cholcorr_rev(size_t K, const double *u, const double *gx,
                         double glj, double *gu, double *work)
{
    double *r = work, *w = work + K;
    size_t q0 = 0;
    for (size_t i = 1; i < K; i++) {
        double s = 0;
        for (size_t j = 0; j < i; j++) {
            w[j] = tanh(u[q0 + j]);
            r[j] = sqrt(1 - s);
            double v = w[j] * r[j];
            s += v * v;
        }
        double d = sqrt(1 - s);
        double gs = gx ? -gx[i * K + i] / (2 * d) : 0; /* adjoint of s */
        for (size_t j = i; j-- > 0;) {
            double v = w[j] * r[j];
            double gv = (gx ? gx[i * K + j] : 0) + 2 * v * gs;
            double gw = gv * r[j];
            double gr = gv * w[j] + glj / r[j];
            if (j > 0)
                gs += -gr / (2 * r[j]);
            gu[q0 + j] += gw * (1 - w[j] * w[j]) - 2 * w[j] * glj;
        }
        q0 += i;
    }
}

/* Checks that L is a Cholesky factor of a correlation matrix and writes
 * its free values. */
static int cholcorr_inv(size_t K, const double *L, double *u, char *why,
                        size_t cap)
{
    size_t q = 0;
    for (size_t i = 0; i < K; i++) {
        double s = 0;
        for (size_t j = 0; j < K; j++) {
            double v = L[i * K + j];
            if (!isfinite(v)) {
                snprintf(why, cap, "entry [%zu, %zu] is %g", i + 1, j + 1, v);
                return -1;
            }
            if (j > i && v != 0) {
                snprintf(why, cap, "entry [%zu, %zu] is %g; a Cholesky factor "
                                   "is lower triangular", i + 1, j + 1, v);
                return -1;
            }
        }
        if (!(L[i * K + i] > 0)) {
            snprintf(why, cap, "diagonal entry [%zu, %zu] is %g; it must be "
                               "positive", i + 1, i + 1, L[i * K + i]);
            return -1;
        }
        for (size_t j = 0; j <= i; j++)
            s += L[i * K + j] * L[i * K + j];
        if (!(fabs(s - 1) <= 1e-8)) {
            snprintf(why, cap, "row %zu has squared length %.10g; the rows "
                               "of a correlation matrix's Cholesky factor "
                               "have length 1", i + 1, s);
            return -1;
        }
        s = 0;
        for (size_t j = 0; j < i; j++, q++) {
            double r = sqrt(fmax(1 - s, 0));
            double w = r > 0 ? L[i * K + j] / r : 0;
            if (!(fabs(w) < 1)) {
                snprintf(why, cap, "row %zu is degenerate (a partial "
                                   "correlation of 1)", i + 1);
                return -1;
            }
            if (u)
                u[q] = atanh(w);
            s += L[i * K + j] * L[i * K + j];
        }
    }
    return 0;
}

/* ---- cholesky_factor_cov[M, N] -------------------------------------------------- */

/* Row by row, the first min(i, N) entries free, the diagonal (rows below
 * N only) exp of a free value; the log-Jacobian is the sum of the free
 * values on the diagonal. */
static double cholcov_fwd(size_t M, size_t N, const double *u, double *x,
                          const double *tu, double *tx, double *tlj)
{
    memset(x, 0, M * N * sizeof *x);
    if (tu)
        memset(tx, 0, M * N * sizeof *tx);
    double lj = 0, t = 0;
    size_t q = 0;
    for (size_t i = 0; i < M; i++) {
        size_t nf = i < N ? i : N;
        for (size_t j = 0; j < nf; j++, q++) {
            x[i * N + j] = u[q];
            if (tu)
                tx[i * N + j] = tu[q];
        }
        if (i < N) {
            double e = exp(u[q]);
            x[i * N + i] = e;
            lj += u[q];
            if (tu) {
                tx[i * N + i] = e * tu[q];
                t += tu[q];
            }
            q++;
        }
    }
    if (tu)
        *tlj = t;
    return lj;
}

static void cholcov_rev(size_t M, size_t N, const double *u,
                        const double *gx, double glj, double *gu)
{
    size_t q = 0;
    for (size_t i = 0; i < M; i++) {
        size_t nf = i < N ? i : N;
        for (size_t j = 0; j < nf; j++, q++)
            gu[q] += gx ? gx[i * N + j] : 0;
        if (i < N) {
            gu[q] += (gx ? gx[i * N + i] * exp(u[q]) : 0) + glj;
            q++;
        }
    }
}

static int cholcov_inv(size_t M, size_t N, const double *x, double *u,
                       char *why, size_t cap)
{
    size_t q = 0;
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++) {
            double v = x[i * N + j];
            if (!isfinite(v)) {
                snprintf(why, cap, "entry [%zu, %zu] is %g", i + 1, j + 1, v);
                return -1;
            }
            if (j > i && v != 0) {
                snprintf(why, cap, "entry [%zu, %zu] is %g; a Cholesky factor "
                                   "is lower triangular", i + 1, j + 1, v);
                return -1;
            }
        }
        size_t nf = i < N ? i : N;
        for (size_t j = 0; j < nf; j++, q++)
            if (u)
                u[q] = x[i * N + j];
        if (i < N) {
            if (!(x[i * N + i] > 0)) {
                snprintf(why, cap, "diagonal entry [%zu, %zu] is %g; it must "
                                   "be positive", i + 1, i + 1, x[i * N + i]);
                return -1;
            }
            if (u)
                u[q] = log(x[i * N + i]);
            q++;
        }
    }
    return 0;
}

/* ---- cov_matrix, corr_matrix: L L^T ---------------------------------------------- */

/* Below this size L L^T and its reverse run as plain loops: a BLAS call's
 * overhead outweighs the arithmetic (at K = 8 the loops take 0.05 and
 * 0.1 us against 0.17 us for dsyrk or dtrmm; from about K = 32 BLAS is
 * as fast forward and, reading columns in cache-sized panels, 2.5x faster
 * in reverse, 23x at K = 64). */
#define LLT_BLAS_MIN 32

/* The upper triangle of the K x K x set from its lower one. */
static void mirror_lower(size_t K, double *x)
{
    for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < i; j++)
            x[j * K + i] = x[i * K + j];
}

/* x = L L^T (K x K, L lower triangular, zeros above); tx = tL L^T +
 * L tL^T from tL (zeros above too). */
static void llt(size_t K, const double *L, const double *tL, double *x,
                double *tx)
{
    if (K >= LLT_BLAS_MIN) {
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)K, (int)K,
                    1.0, L, (int)K, 0.0, x, (int)K);
        mirror_lower(K, x);
        if (tL) {
            cblas_dsyr2k(CblasRowMajor, CblasLower, CblasNoTrans, (int)K,
                         (int)K, 1.0, tL, (int)K, L, (int)K, 0.0, tx, (int)K);
            mirror_lower(K, tx);
        }
        return;
    }
    for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j <= i; j++) {
            double s = 0, t = 0;
            for (size_t k = 0; k <= j; k++) {
                s += L[i * K + k] * L[j * K + k];
                if (tL)
                    t += tL[i * K + k] * L[j * K + k] +
                         L[i * K + k] * tL[j * K + k];
            }
            x[i * K + j] = x[j * K + i] = s;
            if (tL)
                tx[i * K + j] = tx[j * K + i] = t;
        }
}

/* gL (lower triangle, overwritten) = (gx + gx^T) L, the reverse of
 * x = L L^T. */
static void llt_rev(size_t K, const double *L, const double *gx, double *gL)
{
    if (K >= LLT_BLAS_MIN) {
        for (size_t i = 0; i < K; i++)
            for (size_t j = 0; j < K; j++)
                gL[i * K + j] = gx[i * K + j] + gx[j * K + i];
        cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans,
                    CblasNonUnit, (int)K, (int)K, 1.0, L, (int)K, gL, (int)K);
        for (size_t i = 0; i < K; i++)
            memset(gL + i * K + i + 1, 0, (K - i - 1) * sizeof *gL);
        return;
    }
    for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < K; j++) {
            double s = 0;
            if (j <= i)
                for (size_t k = j; k < K; k++)
                    s += (gx[i * K + k] + gx[k * K + i]) * L[k * K + j];
            gL[i * K + j] = s;
        }
}

int drift_cholesky_small(size_t K, const double *x, double *L)
{
    memset(L, 0, K * K * sizeof *L);
    for (size_t j = 0; j < K; j++) {
        double s = x[j * K + j];
        for (size_t k = 0; k < j; k++)
            s -= L[j * K + k] * L[j * K + k];
        if (!(s > 0))
            return -1;
        double d = sqrt(s);
        L[j * K + j] = d;
        for (size_t i = j + 1; i < K; i++) {
            double t = x[i * K + j];
            for (size_t k = 0; k < j; k++)
                t -= L[i * K + k] * L[j * K + k];
            L[i * K + j] = t / d;
        }
    }
    return 0;
}

static int symmetric_check(size_t K, const double *x, char *why, size_t cap)
{
    for (size_t i = 0; i < K; i++)
        for (size_t j = 0; j < K; j++) {
            double a = x[i * K + j], b = x[j * K + i];
            if (!isfinite(a)) {
                snprintf(why, cap, "entry [%zu, %zu] is %g", i + 1, j + 1, a);
                return -1;
            }
            if (!(fabs(a - b) <= 1e-8 * fmax(1, fabs(a)))) {
                snprintf(why, cap, "entries [%zu, %zu] = %g and [%zu, %zu] = "
                                   "%g differ; the matrix must be symmetric",
                         i + 1, j + 1, a, j + 1, i + 1, b);
                return -1;
            }
        }
    return 0;
}

static double cov_fwd(size_t K, const double *u, double *x, const double *tu,
                      double *tx, double *tlj, double *work)
{
    double *L = work, *tL = work + K * K;
    double t = 0;
    cholcov_fwd(K, K, u, L, tu, tu ? tL : NULL, tu ? &t : NULL);
    llt(K, L, tu ? tL : NULL, x, tx);
    double lj = (double)K * LOG_2;
    size_t q = 0;
    t = 0;
    for (size_t k = 0; k < K; k++) {
        q += k;     /* the diagonal's free value follows row k's k others */
        lj += (double)(K - k + 1) * u[q];
        if (tu)
            t += (double)(K - k + 1) * tu[q];
        q++;
    }
    if (tu)
        *tlj = t;
    return lj;
}

static void cov_rev(size_t K, const double *u, const double *gx, double glj,
                    double *gu, double *work)
{
    double *L = work, *gL = work + K * K;
    cholcov_fwd(K, K, u, L, NULL, NULL, NULL);
    if (gx) {
        llt_rev(K, L, gx, gL);
        cholcov_rev(K, K, u, gL, 0, gu);
    }
    size_t q = 0;
    for (size_t k = 0; k < K; k++) {
        q += k;
        gu[q] += glj * (double)(K - k + 1);
        q++;
    }
}

static int cov_inv(size_t K, const double *x, double *u, char *why,
                   size_t cap, double *work)
{
    if (symmetric_check(K, x, why, cap))
        return -1;
    double *L = work;
    if (drift_cholesky_small(K, x, L)) {
        snprintf(why, cap, "the matrix is not positive definite");
        return -1;
    }
    return cholcov_inv(K, K, L, u, why, cap);
}

/* corr_matrix: L from cholesky_factor_corr's transform, x = L L^T; the
 * log-Jacobian adds log |d(x's strict lower triangle) / d(L's)| =
 * sum_k (K - 1 - k) log L_kk (0-based k). */
static double corr_fwd(size_t K, const double *u, double *x, const double *tu,
                       double *tx, double *tlj, double *work)
{
    double *L = work, *tL = work + K * K;
    double t = 0;
    double lj = cholcorr_fwd(K, u, L, tu, tu ? tL : NULL, &t);
    llt(K, L, tu ? tL : NULL, x, tx);
    for (size_t k = 1; k < K; k++) {
        double d = L[k * K + k];
        lj += (double)(K - 1 - k) * log(d);
        if (tu)
            t += (double)(K - 1 - k) * tL[k * K + k] / d;
    }
    for (size_t k = 0; k < K; k++)
        x[k * K + k] = 1; /* exactly, whatever rounding L L^T did */
    if (tu) {
        for (size_t k = 0; k < K; k++)
            tx[k * K + k] = 0;
        *tlj = t;
    }
    return lj;
}

static void corr_rev(size_t K, const double *u, const double *gx, double glj,
                     double *gu, double *work)
{
    double *L = work, *gL = work + K * K, *w2 = work + 2 * K * K;
    cholcorr_fwd(K, u, L, NULL, NULL, NULL);
    if (gx)
        llt_rev(K, L, gx, gL);
    else
        memset(gL, 0, K * K * sizeof *gL);
    /* The diagonal of x is fixed at 1: no adjoint flows through it. */
    if (gx)
        for (size_t k = 0; k < K; k++) {
            double g = gx[k * K + k];
            for (size_t j = 0; j <= k; j++)
                gL[k * K + j] -= 2 * g * L[k * K + j];
        }
    for (size_t k = 1; k < K; k++)
        gL[k * K + k] += glj * (double)(K - 1 - k) / L[k * K + k];
    cholcorr_rev(K, u, gL, glj, gu, w2);
}

static int corr_inv(size_t K, const double *x, double *u, char *why,
                    size_t cap, double *work)
{
    if (symmetric_check(K, x, why, cap))
        return -1;
    for (size_t k = 0; k < K; k++)
        if (!(fabs(x[k * K + k] - 1) <= 1e-8)) {
            snprintf(why, cap, "diagonal entry [%zu, %zu] is %g; a "
                               "correlation matrix has ones there",
                     k + 1, k + 1, x[k * K + k]);
            return -1;
        }
    double *L = work;
    if (drift_cholesky_small(K, x, L)) {
        snprintf(why, cap, "the matrix is not positive definite");
        return -1;
    }
    /* Rows of L have length 1 up to rounding: renormalise. */
    for (size_t i = 0; i < K; i++) {
        double s = 0;
        for (size_t j = 0; j <= i; j++)
            s += L[i * K + j] * L[i * K + j];
        s = sqrt(s);
        for (size_t j = 0; j <= i; j++)
            L[i * K + j] /= s;
    }
    return cholcorr_inv(K, L, u, why, cap);
}

/* ---- dispatch --------------------------------------------------------------------- */

double drift_transform_forward(drift_constraint con, size_t m, size_t n,
                               const double *u, double *x, const double *tu,
                               double *tx, double *tlj, double *work)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX: return simplex_fwd(m, u, x, tu, tx, tlj);
    case DRIFT_CON_ORDERED: return ordered_fwd(0, m, u, x, tu, tx, tlj);
    case DRIFT_CON_POSITIVE_ORDERED:
        return ordered_fwd(1, m, u, x, tu, tx, tlj);
    case DRIFT_CON_CHOL_CORR: return cholcorr_fwd(m, u, x, tu, tx, tlj);
    case DRIFT_CON_CHOL_COV: return cholcov_fwd(m, n, u, x, tu, tx, tlj);
    case DRIFT_CON_COV: return cov_fwd(m, u, x, tu, tx, tlj, work);
    case DRIFT_CON_CORR: return corr_fwd(m, u, x, tu, tx, tlj, work);
    case DRIFT_CON_NONE: break;
    }
    return NAN;
}

void drift_transform_reverse(drift_constraint con, size_t m, size_t n,
                             const double *u, const double *x,
                             const double *gx, double glj, double *gu,
                             double *work)
{
    (void)x;
    switch (con) {
    case DRIFT_CON_SIMPLEX: simplex_rev(m, u, gx, glj, gu, work); return;
    case DRIFT_CON_ORDERED: ordered_rev(0, m, u, gx, glj, gu); return;
    case DRIFT_CON_POSITIVE_ORDERED: ordered_rev(1, m, u, gx, glj, gu); return;
    case DRIFT_CON_CHOL_CORR: cholcorr_rev(m, u, gx, glj, gu, work); return;
    case DRIFT_CON_CHOL_COV: cholcov_rev(m, n, u, gx, glj, gu); return;
    case DRIFT_CON_COV: cov_rev(m, u, gx, glj, gu, work); return;
    case DRIFT_CON_CORR: corr_rev(m, u, gx, glj, gu, work); return;
    case DRIFT_CON_NONE: return;
    }
}

int drift_transform_inverse(drift_constraint con, size_t m, size_t n,
                            const double *x, double *u, char *why,
                            size_t cap, double *work)
{
    switch (con) {
    case DRIFT_CON_SIMPLEX: return simplex_inv(m, x, u, why, cap);
    case DRIFT_CON_ORDERED: return ordered_inv(0, m, x, u, why, cap);
    case DRIFT_CON_POSITIVE_ORDERED: return ordered_inv(1, m, x, u, why, cap);
    case DRIFT_CON_CHOL_CORR: return cholcorr_inv(m, x, u, why, cap);
    case DRIFT_CON_CHOL_COV: return cholcov_inv(m, n, x, u, why, cap);
    case DRIFT_CON_COV: return cov_inv(m, x, u, why, cap, work);
    case DRIFT_CON_CORR: return corr_inv(m, x, u, why, cap, work);
    case DRIFT_CON_NONE: break;
    }
    return 0;
}
