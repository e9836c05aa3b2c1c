/* logistic.c: Bayesian logistic regression written directly against
 * drift/model.h: y_i ~ bernoulli(logistic(x_i . w)), w ~ N(0, s^2 I).
 * Rows come from the engine's loader: dense columns y, x.1 ... x.D (a full
 * pass reads each row once: its dot product, terms and gradient while the
 * row is in cache), or a label column y and a sparse row
 * variable x (LIBSVM files, sparse row stores), where a minibatch costs
 * O(non-zeros) plus O(D) for the dense gradient it returns.  Not a
 * template for models with constraints (it has none) or data-block
 * values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <drift/model.h>

#if defined(DRIFT_PLUGIN_WITH_SLEEF) && defined(__x86_64__) &&                \
    defined(__GNUC__) && !defined(__clang__)
/* exp over a block from SLEEF's vector functions (1 ulp, no FMA), as the
 * engine's vector math does (the build defines DRIFT_PLUGIN_WITH_SLEEF
 * where it found SLEEF; a build without it uses libm's exp, one row at a
 * time); sleef.h declares each unit's functions only
 * where the compiler targets it, so all are declared here and each is
 * called only from a loop compiled for its unit, on a CPU that has it. */
#define LOGISTIC_SLEEF 1
#include <x86intrin.h>
#pragma GCC push_options
#pragma GCC target("sse2,sse4.1,avx,avx2,fma,avx512f")
#include <sleef.h>

DRIFT_PLUGIN_LICENSE("MIT");
#pragma GCC pop_options
#else
#define LOGISTIC_SLEEF 0
#endif

/* log(sqrt(2 pi)) */
#define LOG_SQRT_2PI 0.91893853320467274178

typedef struct logistic {
    size_t N, D;
    const double *X;    /* row i at X + i * ldx (a view or owned copy) */
    size_t ldx;
    size_t xlen;        /* doubles readable from X on */
    const double *y;    /* y of row i at y[i * ldy] */
    size_t ldy;
    double *owned;      /* non-NULL when X had to be copied */
    double *owned_y;
    double s;           /* prior standard deviation */
    char **names;       /* "w.1" ... */
    const drift_sparse *sp; /* sparse rows (then X is NULL) */
    int lazy_check;     /* labels checked as rows are used, not up front */
    const char *source; /* the data file, for messages */
} logistic;

typedef struct workspace {
    size_t cap;
    double *Xb, *yb, *z, *r;
} workspace;

static double inv_logit(double z)
{
    if (z >= 0)
        return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

/* A row's log-likelihood y z - log(1 + e^z) and gradient scalar
 * y - logistic(z), from one exp: e = exp(-|z|) <= 1 serves both. */
static void row_terms(double z, double y, double *l, double *r)
{
    double e = exp(-fabs(z));
    *l = y * z - ((z > 0 ? z : 0) + log1p(e));
    *r = y - (z >= 0 ? 1 : e) / (1 + e);
}

static void logistic_free(void *self)
{
    logistic *m = self;
    if (!m)
        return;
    if (m->names)
        for (size_t k = 0; k < m->D; k++)
            free(m->names[k]);
    free(m->names);
    free(m->owned);
    free(m->owned_y);
    free(m);
}

static void *ws_new(const void *self, size_t max_batch)
{
    const logistic *m = self;
    workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cap = max_batch ? max_batch : 1;
    /* Sparse rows are never gathered into a dense matrix. */
    w->Xb = m->sp ? NULL : malloc(w->cap * m->D * sizeof(double));
    w->yb = malloc(w->cap * sizeof(double));
    w->z = malloc(w->cap * sizeof(double));
    w->r = malloc(w->cap * sizeof(double));
    if ((!m->sp && !w->Xb) || !w->yb || !w->z || !w->r) {
        free(w->Xb);
        free(w->yb);
        free(w->z);
        free(w->r);
        free(w);
        return NULL;
    }
    return w;
}

static void ws_free(const void *self, void *ws)
{
    (void)self;
    workspace *w = ws;
    if (!w)
        return;
    free(w->Xb);
    free(w->yb);
    free(w->z);
    free(w->r);
    free(w);
}

static int log_prior(const void *self, void *ws, const double *w,
                     double *lp, double *grad, drift_err *e)
{
    (void)ws;
    (void)e;
    const logistic *m = self;
    double inv_s2 = 1.0 / (m->s * m->s), ss = 0;
    for (size_t k = 0; k < m->D; k++)
        ss += w[k] * w[k];
    *lp = -0.5 * ss * inv_s2 - (double)m->D * (log(m->s) + LOG_SQRT_2PI);
    if (grad)
        for (size_t k = 0; k < m->D; k++)
            grad[k] = -w[k] * inv_s2;
    return DRIFT_OK;
}

/* The rows of b as a matrix: a strided view for a range, else gathered
 * into the workspace. */
static void rows_matrix(const logistic *m, workspace *ws, const drift_rows *b,
                        const double **X, size_t *ld, const double **y,
                        size_t *ldy)
{
    if (!b->rows) {
        *X = m->X + b->first * m->ldx;
        *ld = m->ldx;
        *y = m->y + b->first * m->ldy;
        *ldy = m->ldy;
        return;
    }
    for (size_t k = 0; k < b->n; k++) {
        size_t i = b->rows[k];
        memcpy(ws->Xb + k * m->D, m->X + i * m->ldx, m->D * sizeof(double));
        ws->yb[k] = m->y[i * m->ldy];
    }
    *X = ws->Xb;
    *ld = m->D;
    *y = ws->yb;
    *ldy = 1;
}

/* The error for a row whose label is not 0/1, found during evaluation
 * (data too large to check in a separate pass). */
static int bad_label(const logistic *m, const workspace *ws,
                     const drift_rows *b, const double *y, size_t ldy,
                     drift_err *e)
{
    (void)ws;
    for (size_t k = 0; k < b->n; k++)
        if (y[k * ldy] != 0.0 && y[k * ldy] != 1.0) {
            snprintf(e->msg, sizeof e->msg,
                     "%s: row %zu: label %g: logistic regression needs 0/1 "
                     "labels",
                     m->source, drift_rows_at(b, k) + 1, y[k * ldy]);
            break;
        }
    return DRIFT_EDATA;
}

/* x_i . v for a sparse row, in four partial sums: four chains of
 * dependent additions in flight instead of one. */
static double sparse_dot(const drift_sparse *sp, size_t i, const double *v)
{
    const double *val = sp->val;
    const uint32_t *idx = sp->idx;
    double z0 = 0, z1 = 0, z2 = 0, z3 = 0;
    uint64_t k = sp->row_ptr[i], end = sp->row_ptr[i + 1];
    for (; k + 4 <= end; k += 4) {
        z0 += val[k] * v[idx[k]];
        z1 += val[k + 1] * v[idx[k + 1]];
        z2 += val[k + 2] * v[idx[k + 2]];
        z3 += val[k + 3] * v[idx[k + 3]];
    }
    for (; k < end; k++)
        z0 += val[k] * v[idx[k]];
    return (z0 + z1) + (z2 + z3);
}

/* ---- dense rows: the dot product and the gradient's sum, fused -------- */

/* Rows of a block of a full pass: their dot products, then their terms,
 * then their gradient's sums (a multiple of 8).  256 dense rows of
 * Covertype's width are 110 KB, still in the second-level cache when the
 * sums read them again; blocks of 32 left a pass 1.3x slower (the
 * terms' fixed cost a block, and shorter streams of loads). */
#define BLOCK 256

/* y[k] = f(x[k]) for k < n, n a multiple of 8 (BLOCK is one), f exp or
 * log1p. */
typedef void (*vec_fn)(size_t n, const double *x, double *y);

typedef struct vec_math {
    vec_fn exp, log1p;
} vec_math;

static void exp_libm(size_t n, const double *x, double *y)
{
    for (size_t k = 0; k < n; k++)
        y[k] = exp(x[k]);
}

static void log1p_libm(size_t n, const double *x, double *y)
{
    for (size_t k = 0; k < n; k++)
        y[k] = log1p(x[k]);
}

#if LOGISTIC_SLEEF
/* One SLEEF function over a block, for each vector unit. */
#define VEC_SSE2(name, fn)                                                    \
    static void name(size_t n, const double *x, double *y)                    \
    {                                                                         \
        for (size_t k = 0; k < n; k += 2)                                     \
            _mm_storeu_pd(y + k, fn(_mm_loadu_pd(x + k)));                    \
    }
#define VEC_AVX(name, fn)                                                     \
    __attribute__((target("avx"))) static void name(size_t n,                 \
                                                    const double *x,          \
                                                    double *y)                \
    {                                                                         \
        for (size_t k = 0; k < n; k += 4)                                     \
            _mm256_storeu_pd(y + k, fn(_mm256_loadu_pd(x + k)));              \
    }
#define VEC_AVX512(name, fn)                                                  \
    __attribute__((target("avx512f"))) static void name(size_t n,             \
                                                        const double *x,      \
                                                        double *y)            \
    {                                                                         \
        for (size_t k = 0; k < n; k += 8)                                     \
            _mm512_storeu_pd(y + k, fn(_mm512_loadu_pd(x + k)));              \
    }
VEC_SSE2(exp_sse2, Sleef_cinz_expd2_u10sse2)
VEC_SSE2(log1p_sse2, Sleef_cinz_log1pd2_u10sse2)
VEC_AVX(exp_avx, Sleef_cinz_expd4_u10avx)
VEC_AVX(log1p_avx, Sleef_cinz_log1pd4_u10avx)
VEC_AVX512(exp_avx512, Sleef_cinz_expd8_u10avx512fnofma)
VEC_AVX512(log1p_avx512, Sleef_cinz_log1pd8_u10avx512fnofma)
#endif

/* The vector math for this CPU, chosen once: SLEEF's 1-ulp functions for
 * its widest unit, or the C library's where the build found no SLEEF. */
static const vec_math *vec_math_here(void)
{
    static const vec_math libm = {exp_libm, log1p_libm};
#if LOGISTIC_SLEEF
    static const vec_math sse2 = {exp_sse2, log1p_sse2};
    static const vec_math avx = {exp_avx, log1p_avx};
    static const vec_math avx512 = {exp_avx512, log1p_avx512};
#endif
    static const vec_math *f;
    const vec_math *g = __atomic_load_n(&f, __ATOMIC_ACQUIRE);
    if (g)
        return g;
    g = &libm;
#if LOGISTIC_SLEEF
    __builtin_cpu_init();
    g = &sse2;
    if (__builtin_cpu_supports("avx"))
        g = &avx;
    if (__builtin_cpu_supports("avx512f"))
        g = &avx512;
#endif
    __atomic_store_n(&f, g, __ATOMIC_RELEASE);
    return g;
}

/* Four doubles as one value: block_terms is written on these, so that
 * each step is one vector operation per four rows (two SSE2 registers or
 * one AVX2 register: the same IEEE operations, so the same values, on
 * either).  Written row by row, with a division each, the terms cost as
 * much as reading the rows. */
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

/* The terms of a block of m <= BLOCK rows from their z and y: r[k] =
 * y - logistic(z) (r of BLOCK elements: the padding to 8 is written too);
 * each row's term (as row_terms) into ll_rows when not NULL; returns the
 * sum of the terms.  Without ll_rows the sum of y z - max(z, 0) is taken
 * in 8 lane sums (lane k mod 8) and that of the log(1 + e) terms as logs
 * of products of eight (1 + e) at a time, a log1p for eight rows instead
 * of one a row: each 1 + e in (1, 2] rounds by at most 2^-53 relative, so
 * each row's term is off by at most 1.2e-16, below the sum's own
 * rounding. */
static inline __attribute__((always_inline)) double
block_terms(size_t m, const double *z, const double *y, double *ll_rows,
            double *r)
{
    double q[BLOCK], t[BLOCK], ex[BLOCK], zp[BLOCK], yp[BLOCK];
    /* the block padded to a multiple of 8 with z = 0, y = 0 */
    size_t m8 = (m + 7) & ~(size_t)7;
    for (size_t k = 0; k < m8; k++) {
        zp[k] = k < m ? z[k] : 0.0;
        yp[k] = k < m ? y[k] : 0.0;
        t[k] = -fabs(zp[k]);
    }
    /* exp(-|z|) for the whole block in one call: a vector function where
     * SLEEF is there (the scalar exp was a fifth of a pass) */
    const vec_math *vm = vec_math_here();
    vm->exp(m8, t, ex);
    const v4d one = {1, 1, 1, 1}, zero = {0, 0, 0, 0};
    v4d acc[2] = {zero, zero};
    for (size_t k = 0; k < m8; k += 8) {
        for (int h = 0; h < 2; h++) {
            size_t j = k + 4 * (size_t)h;
            v4d zv, yv, ev;
            memcpy(&zv, zp + j, sizeof zv);
            memcpy(&yv, yp + j, sizeof yv);
            memcpy(&ev, ex + j, sizeof ev);
            v4l nneg = zv >= zero, pos = zv > zero;
            v4d qv = one + ev;
            v4d num = (v4d)(((v4l)one & nneg) | ((v4l)ev & ~nneg));
            v4d rv = yv - num / qv;
            memcpy(q + j, &qv, sizeof qv);
            memcpy(r + j, &rv, sizeof rv);
            /* y z - max(z, 0) */
            acc[h] += yv * zv - (v4d)((v4l)zv & pos);
        }
    }
    if (ll_rows) {
        double total = 0;
        for (size_t k = 0; k < m; k++) {
            double zk = z[k];
            double l = y[k] * zk - ((zk > 0 ? zk : 0) + log1p(ex[k]));
            ll_rows[k] = l;
            total += l;
        }
        return total;
    }
    /* the padding's terms are y z - max(z, 0) = 0: nothing to drop */
    double total = ((acc[0][0] + acc[1][0]) + (acc[0][2] + acc[1][2])) +
                   ((acc[0][1] + acc[1][1]) + (acc[0][3] + acc[1][3]));
    for (size_t k = m; k < m8; k++)
        q[k] = 1;
    /* the groups' P - 1, padded with zeros to a multiple of 8, then their
     * log1p in one call (a scalar log1p a group was 5% of a pass) */
    size_t ng = m8 / 8, ng8 = (ng + 7) & ~(size_t)7;
    for (size_t j = 0; j < ng8; j++) {
        const double *f = q + 8 * j;
        /* P in [1, 256]: P - 1 is exact */
        t[j] = j < ng ? ((f[0] * f[1]) * (f[2] * f[3])) *
                                ((f[4] * f[5]) * (f[6] * f[7])) -
                            1
                      : 0.0;
    }
    vm->log1p(ng8, t, ex);
    for (size_t j = 0; j < ng; j++)
        total -= ex[j];
    return total;
}

/* One block of 8 products added to the partial sums (constant indices:
 * the sums stay in registers). */
#define BLOCK8(p, x, w)                                                       \
    do {                                                                      \
        p[0] += (x)[0] * (w)[0];                                              \
        p[1] += (x)[1] * (w)[1];                                              \
        p[2] += (x)[2] * (w)[2];                                              \
        p[3] += (x)[3] * (w)[3];                                              \
        p[4] += (x)[4] * (w)[4];                                              \
        p[5] += (x)[5] * (w)[5];                                              \
        p[6] += (x)[6] * (w)[6];                                              \
        p[7] += (x)[7] * (w)[7];                                              \
    } while (0)

/* x . w in 8 partial sums (partial sum l over the elements j = l mod 8,
 * the last block zero-padded), combined as ((p0 + p4) + (p2 + p6)) +
 * ((p1 + p5) + (p3 + p7)): eight chains of additions in flight instead of
 * one, in vector registers, and the same order whatever the vector unit
 * (no FMA: the AVX2 form is compiled without it).  wt: w's last block,
 * zero-padded. */
static inline __attribute__((always_inline)) double
dot8(const double *x, const double *w, const double *wt, size_t D)
{
    double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t j = 0;
    for (; j + 8 <= D; j += 8)
        BLOCK8(p, x + j, w + j);
    if (j < D) {
        double xt[8];
        for (size_t l = 0; l < 8; l++)
            xt[l] = j + l < D ? x[j + l] : 0.0;
        BLOCK8(p, xt, wt);
    }
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

/* dot8 on pairs of 4-wide values (partial sums 0-3 and 4-7: the same
 * additions in the same order, so the same value), for a row whose last
 * block of 8 may be read whole: its elements past D belong to the next
 * row and are cleared by the masks tm (all ones for the elements below D).
 * drift's loaders refuse NaN and Inf, so w's zero padding alone would
 * make their products 0; the mask keeps that true of any data. */
static inline __attribute__((always_inline)) double
dot8_whole(const double *x, const double *w, const double *wt, size_t D,
           const v4l *tm)
{
    v4d p0 = {0, 0, 0, 0}, p1 = p0, a, b, c, d;
    size_t j = 0;
    for (; j + 8 <= D; j += 8) {
        memcpy(&a, x + j, sizeof a);
        memcpy(&b, x + j + 4, sizeof b);
        memcpy(&c, w + j, sizeof c);
        memcpy(&d, w + j + 4, sizeof d);
        p0 += a * c;
        p1 += b * d;
    }
    if (j < D) {
        memcpy(&a, x + j, sizeof a);
        memcpy(&b, x + j + 4, sizeof b);
        memcpy(&c, wt, sizeof c);
        memcpy(&d, wt + 4, sizeof d);
        p0 += (v4d)((v4l)a & tm[0]) * c;
        p1 += (v4d)((v4l)b & tm[1]) * d;
    }
    return ((p0[0] + p1[0]) + (p0[2] + p1[2])) +
           ((p0[1] + p1[1]) + (p0[3] + p1[3]));
}

/* g += r0 x0 + r1 x1 over D elements, the two rows' products added first
 * (half the loads and stores of g of one row at a time). */
static inline __attribute__((always_inline)) void
axpy_rows2(double *restrict g, const double *restrict x0,
           const double *restrict x1, double r0, double r1, size_t D)
{
    const v4d s0 = {r0, r0, r0, r0}, s1 = {r1, r1, r1, r1};
    size_t j = 0;
    for (; j + 4 <= D; j += 4) {
        v4d a, b, gv;
        memcpy(&a, x0 + j, sizeof a);
        memcpy(&b, x1 + j, sizeof b);
        memcpy(&gv, g + j, sizeof gv);
        gv += s0 * a + s1 * b;
        memcpy(g + j, &gv, sizeof gv);
    }
    for (; j < D; j++)
        g[j] += r0 * x0[j] + r1 * x1[j];
}

/* g += r x over D elements. */
static inline __attribute__((always_inline)) void
axpy_row(double *restrict g, const double *restrict x, double r, size_t D)
{
    size_t j = 0;
    for (; j + 4 <= D; j += 4) {
        g[j] += r * x[j];
        g[j + 1] += r * x[j + 1];
        g[j + 2] += r * x[j + 2];
        g[j + 3] += r * x[j + 3];
    }
    for (; j < D; j++)
        g[j] += r * x[j];
}

/* w's last block of 8, zero-padded, for dot8. */
static void tail8(const double *w, size_t D, double *wt)
{
    memset(wt, 0, 8 * sizeof *wt);
    memcpy(wt, w + (D & ~(size_t)7), (D & 7) * sizeof *wt);
}

/* Rows first .. first+n-1 (or rows[k]) of a dense matrix of xlen
 * readable doubles: each row's dot product, log-likelihood term and
 * gradient scalar, and the gradient's sum grad += r_i x_i while the block
 * of rows is in cache (one pass over the rows).  ll_rows may be NULL;
 * returns the sum of the terms; *bad is set when a label is neither 0
 * nor 1. */
static inline __attribute__((always_inline)) double
dense_rows(const double *X, size_t ldx, size_t xlen, const double *Y,
           size_t ldy, const size_t *rows, size_t first, size_t n, size_t D,
           const double *w, double *ll_rows, double *grad, int *bad)
{
    double total = 0, wt[8], zz[BLOCK], yy[BLOCK], rr[BLOCK];
    int b = 0;
    tail8(w, D, wt);
    /* the tail's masks; a row's last block of 8 is read whole when it
     * lies inside the matrix (every row but the last, or last few) */
    v4l tm[2];
    for (size_t l = 0; l < 8; l++)
        tm[l / 4][l % 4] = l < (D & 7) ? -1 : 0;
    size_t tail_end = (D & ~(size_t)7) + 8;
    for (size_t k0 = 0; k0 < n; k0 += BLOCK) {
        size_t m = n - k0 < BLOCK ? n - k0 : BLOCK;
        /* the block's dot products first, then its terms (one vector exp
         * over the block), then the sums */
        for (size_t k = 0; k < m; k++) {
            size_t i = rows ? rows[k0 + k] : first + k0 + k;
            zz[k] = i * ldx + tail_end <= xlen
                        ? dot8_whole(X + i * ldx, w, wt, D, tm)
                        : dot8(X + i * ldx, w, wt, D);
            yy[k] = Y[i * ldy];
            b |= yy[k] != 0.0 && yy[k] != 1.0;
        }
        total += block_terms(m, zz, yy, ll_rows ? ll_rows + k0 : NULL, rr);
        size_t k = 0;
        for (; grad && k + 2 <= m; k += 2) {
            size_t i = rows ? rows[k0 + k] : first + k0 + k;
            size_t i1 = rows ? rows[k0 + k + 1] : i + 1;
            axpy_rows2(grad, X + i * ldx, X + i1 * ldx, rr[k], rr[k + 1], D);
        }
        if (grad && k < m) {
            size_t i = rows ? rows[k0 + k] : first + k0 + k;
            axpy_row(grad, X + i * ldx, rr[k], D);
        }
    }
    *bad |= b;
    return total;
}

typedef double (*dense_rows_fn)(const double *, size_t, size_t,
                                const double *, size_t, const size_t *,
                                size_t, size_t, size_t, const double *,
                                double *, double *, int *);

static double dense_rows_base(const double *X, size_t ldx, size_t xlen,
                              const double *Y, size_t ldy, const size_t *rows,
                              size_t first, size_t n, size_t D,
                              const double *w, double *ll_rows, double *grad,
                              int *bad)
{
    return dense_rows(X, ldx, xlen, Y, ldy, rows, first, n, D, w, ll_rows,
                      grad, bad);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same loop for AVX2 (4-wide vectors; still no FMA). */
__attribute__((target("avx2"))) static double
dense_rows_avx2(const double *X, size_t ldx, size_t xlen, const double *Y,
                size_t ldy, const size_t *rows, size_t first, size_t n,
                size_t D, const double *w, double *ll_rows, double *grad,
                int *bad)
{
    return dense_rows(X, ldx, xlen, Y, ldy, rows, first, n, D, w, ll_rows,
                      grad, bad);
}
#endif

/* The loop for this CPU, chosen once. */
static dense_rows_fn dense_rows_here(void)
{
    static dense_rows_fn f;
    dense_rows_fn g = __atomic_load_n(&f, __ATOMIC_ACQUIRE);
    if (g)
        return g;
    g = dense_rows_base;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && !getenv("NOAVX2"))
        g = dense_rows_avx2;
#endif
    __atomic_store_n(&f, g, __ATOMIC_RELEASE);
    return g;
}

/* out (length D) += a x_i for a sparse row. */
static void sparse_axpy(const drift_sparse *sp, size_t i, double a,
                        double *out)
{
    for (uint64_t k = sp->row_ptr[i]; k < sp->row_ptr[i + 1]; k++)
        out[sp->idx[k]] += a * sp->val[k];
}

/* The engine never asks for more rows than a workspace holds; say so if
 * it ever does. */
static int too_many_rows(const workspace *ws, const drift_rows *b,
                         drift_err *e)
{
    snprintf(e->msg, sizeof e->msg,
             "logistic: %zu rows exceed the workspace of %zu", b->n, ws->cap);
    return DRIFT_EINTERNAL;
}

/* z = X w and, per row, l_i and s_i = y_i - logistic(z_i) (so that
 * grad l_i = s_i x_i).  Dense rows also give the matrix used (X, ld). */
static int forward(const logistic *m, workspace *ws, const double *w,
                   const drift_rows *b, const double **X, size_t *ld,
                   double *ll_rows, double *ll_sum, drift_err *e)
{
    const double *y;
    size_t ldy;
    size_t n = b->n;
    if (m->sp) {
        for (size_t k = 0; k < n; k++) {
            size_t i = drift_rows_at(b, k);
            ws->z[k] = sparse_dot(m->sp, i, w);
            ws->yb[k] = m->y[i * m->ldy];
        }
        *X = NULL;
        *ld = 0;
        y = ws->yb;
        ldy = 1;
    } else {
        rows_matrix(m, ws, b, X, ld, &y, &ldy);
        double wt[8];
        tail8(w, m->D, wt);
        for (size_t k = 0; k < n; k++)
            ws->z[k] = dot8(*X + k * *ld, w, wt, m->D);
    }
    double total = 0;
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        double z = ws->z[k], yk = y[k * ldy];
        bad |= yk != 0.0 && yk != 1.0;
        double l, r;
        row_terms(z, yk, &l, &r);
        if (ll_rows)
            ll_rows[k] = l;
        total += l;
        ws->r[k] = r;
    }
    if (bad && m->lazy_check)
        return bad_label(m, ws, b, y, ldy, e);
    if (ll_sum)
        *ll_sum = total;
    return DRIFT_OK;
}

/* log_lik's sum over sparse rows in one sweep, a block of rows at a time:
 * their dot products, terms and gradient's sums while their entries are
 * in cache. */
static int sparse_sum(const logistic *m, workspace *ws, const double *w,
                      const drift_rows *b, double *ll_rows, double *ll_sum,
                      double *grad_sum, drift_err *e)
{
    memset(grad_sum, 0, m->D * sizeof *grad_sum);
    double total = 0, zz[BLOCK], rr[BLOCK];
    int bad = 0;
    for (size_t k0 = 0; k0 < b->n; k0 += BLOCK) {
        size_t n = b->n - k0 < BLOCK ? b->n - k0 : BLOCK;
        double *yy = ws->yb + k0;
        for (size_t k = 0; k < n; k++) {
            size_t i = drift_rows_at(b, k0 + k);
            zz[k] = sparse_dot(m->sp, i, w);
            yy[k] = m->y[i * m->ldy];
            bad |= yy[k] != 0.0 && yy[k] != 1.0;
        }
        total += block_terms(n, zz, yy, ll_rows ? ll_rows + k0 : NULL, rr);
        for (size_t k = 0; k < n; k++)
            sparse_axpy(m->sp, drift_rows_at(b, k0 + k), rr[k], grad_sum);
    }
    if (bad && m->lazy_check)
        return bad_label(m, ws, b, ws->yb, 1, e);
    if (ll_sum)
        *ll_sum = total;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *wsp, const double *w,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    const logistic *m = self;
    workspace *ws = wsp;
    if (b->n > ws->cap)
        return too_many_rows(ws, b, e);
    if (m->sp && grad_sum && !grad_rows)
        return sparse_sum(m, ws, w, b, ll_rows, ll_sum, grad_sum, e);
    if (!m->sp && !grad_rows) {
        /* One pass: each row's dot product, terms and gradient while the
         * row is in cache. */
        if (grad_sum)
            memset(grad_sum, 0, m->D * sizeof *grad_sum);
        int bad = 0;
        double total = dense_rows_here()(m->X, m->ldx, m->xlen, m->y,
                                         m->ldy, b->rows, b->first, b->n,
                                         m->D, w, ll_rows, grad_sum, &bad);
        if (bad && m->lazy_check) {
            for (size_t k = 0; k < b->n; k++)
                ws->yb[k] = m->y[drift_rows_at(b, k) * m->ldy];
            return bad_label(m, ws, b, ws->yb, 1, e);
        }
        if (ll_sum)
            *ll_sum = total;
        return DRIFT_OK;
    }
    const double *X;
    size_t ld;
    int rc = forward(m, ws, w, b, &X, &ld, ll_rows, ll_sum, e);
    if (rc)
        return rc;
    if (m->sp) {
        if (grad_sum) {
            memset(grad_sum, 0, m->D * sizeof *grad_sum);
            for (size_t k = 0; k < b->n; k++)
                sparse_axpy(m->sp, drift_rows_at(b, k), ws->r[k], grad_sum);
        }
        if (grad_rows) {
            memset(grad_rows, 0, b->n * m->D * sizeof *grad_rows);
            for (size_t k = 0; k < b->n; k++)
                sparse_axpy(m->sp, drift_rows_at(b, k), ws->r[k],
                            grad_rows + k * m->D);
        }
        return DRIFT_OK;
    }
    if (grad_sum) {
        memset(grad_sum, 0, m->D * sizeof *grad_sum);
        for (size_t k = 0; k < b->n; k++)
            for (size_t j = 0; j < m->D; j++)
                grad_sum[j] += ws->r[k] * X[k * ld + j];
    }
    if (grad_rows)
        for (size_t k = 0; k < b->n; k++)
            for (size_t j = 0; j < m->D; j++)
                grad_rows[k * m->D + j] = ws->r[k] * X[k * ld + j];
    return DRIFT_OK;
}

static int jvp(const void *self, void *wsp, const double *w, const double *v,
               const drift_rows *b, double *out, double *ll_rows,
               drift_err *e)
{
    const logistic *m = self;
    workspace *ws = wsp;
    if (b->n > ws->cap)
        return too_many_rows(ws, b, e);
    const double *X;
    size_t ld;
    int rc = forward(m, ws, w, b, &X, &ld, ll_rows, NULL, e);
    if (rc)
        return rc;
    if (m->sp)
        for (size_t k = 0; k < b->n; k++)
            out[k] = sparse_dot(m->sp, drift_rows_at(b, k), v);
    else {
        double vt[8];
        tail8(v, m->D, vt);
        for (size_t k = 0; k < b->n; k++)
            out[k] = dot8(X + k * ld, v, vt, m->D);
    }
    for (size_t k = 0; k < b->n; k++)
        out[k] *= ws->r[k];
    return DRIFT_OK;
}

static int glm_scalars(const void *self, void *wsp, const double *w,
                       const drift_rows *b, double *s, double *ll_rows,
                       drift_err *e)
{
    const logistic *m = self;
    workspace *ws = wsp;
    if (b->n > ws->cap)
        return too_many_rows(ws, b, e);
    const double *X;
    size_t ld;
    int rc = forward(m, ws, w, b, &X, &ld, ll_rows, NULL, e);
    if (rc)
        return rc;
    memcpy(s, ws->r, b->n * sizeof *s);
    return DRIFT_OK;
}

static int glm_design(const void *self, const drift_rows *b, double *x,
                      drift_err *e)
{
    (void)e;
    const logistic *m = self;
    if (m->sp) {
        memset(x, 0, b->n * m->D * sizeof *x);
        for (size_t k = 0; k < b->n; k++)
            sparse_axpy(m->sp, drift_rows_at(b, k), 1.0, x + k * m->D);
        return DRIFT_OK;
    }
    for (size_t k = 0; k < b->n; k++)
        memcpy(x + k * m->D, m->X + drift_rows_at(b, k) * m->ldx,
               m->D * sizeof(double));
    return DRIFT_OK;
}

static int glm_design_sum(const void *self, const drift_rows *b,
                          const double *wt, double *out, drift_err *e)
{
    (void)e;
    const logistic *m = self;
    for (size_t k = 0; k < b->n; k++) {
        size_t i = drift_rows_at(b, k);
        if (m->sp) {
            sparse_axpy(m->sp, i, wt[k], out);
            continue;
        }
        const double *x = m->X + i * m->ldx;
        for (size_t j = 0; j < m->D; j++)
            out[j] += wt[k] * x[j];
    }
    return DRIFT_OK;
}

static int predict(const void *self, void *wsp, const double *w,
                   const drift_rows *b, double *pred, double *y, drift_err *e)
{
    const logistic *m = self;
    workspace *ws = wsp;
    if (b->n > ws->cap)
        return too_many_rows(ws, b, e);
    const double *X;
    size_t ld;
    int rc = forward(m, ws, w, b, &X, &ld, NULL, NULL, e);
    if (rc)
        return rc;
    for (size_t k = 0; k < b->n; k++) {
        pred[k] = inv_logit(ws->z[k]);
        y[k] = m->y[drift_rows_at(b, k) * m->ldy];
    }
    return DRIFT_OK;
}

static void constrain(const void *self, const double *w, double *out)
{
    const logistic *m = self;
    memcpy(out, w, m->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *w,
                       drift_err *e)
{
    (void)e;
    const logistic *m = self;
    memcpy(w, out, m->D * sizeof *w);
    return DRIFT_OK;
}

static int fail(drift_err *e, int code, const char *msg)
{
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    return code;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    long ycol = drift_data_column(data, "y");
    if (ycol < 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model logistic needs a column 'y' (0/1 outcomes) and "
                 "columns x.1 ... x.D; the header has no 'y'",
                 data->source);
        return DRIFT_EDATA;
    }
    const drift_sparse *sp = NULL;
    if (data->struct_size >= sizeof(drift_data))
        for (size_t k = 0; k < data->n_sparse; k++)
            if (!strcmp(data->sparse[k].name, "x"))
                sp = &data->sparse[k];
    size_t D = 0, cap = 0;
    long first = -1, *cols = NULL;
    int contiguous = 1;
    for (; !sp;) {
        char name[32];
        snprintf(name, sizeof name, "x.%zu", D + 1);
        /* x.k is almost always right after x.(k-1): look there before
         * searching every column, or a header of 10^6 columns costs 10^12
         * comparisons. */
        long c = -1, guess = D ? cols[D - 1] + 1 : -1;
        if (guess >= 0 && (size_t)guess < data->n_cols &&
            !strcmp(data->col_names[guess], name))
            c = guess;
        else
            c = drift_data_column(data, name);
        if (c < 0)
            break;
        if (D == cap) {
            size_t nc = cap ? 2 * cap : 64;
            long *bigger = realloc(cols, nc * sizeof *cols);
            if (!bigger) {
                free(cols);
                return fail(e, DRIFT_ENOMEM, "out of memory");
            }
            cols = bigger;
            cap = nc;
        }
        cols[D] = c;
        if (D == 0)
            first = c;
        else if (c != first + (long)D)
            contiguous = 0;
        D++;
    }
    if (sp) {
        /* Sparse rows: D is the larger of the data's and the option's (a
         * held-out file may not use the last features). */
        D = sp->dim > (size_t)opt[1] ? sp->dim : (size_t)opt[1];
    } else if (D == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model logistic needs predictor columns x.1 ... x.D "
                 "(or LIBSVM rows); the header has none named x.1",
                 data->source);
        free(cols);
        return DRIFT_EDATA;
    }
    /* Refuse, with the size, a D whose vectors cannot fit in memory (a
     * stray LIBSVM index, or --model-set D), before allocating D names. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page
                                        : INFINITY;
    if (2.0 * 8.0 * (double)D > phys) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model logistic with D = %zu predictors holds vectors "
                 "of %.3g GiB each and needs several; this machine has "
                 "%.3g GiB of memory",
                 data->source, D, 8.0 * (double)D / 1073741824.0,
                 phys / 1073741824.0);
        free(cols);
        return DRIFT_EINVAL;
    }
    size_t N = data->n_rows;
    /* Labels are checked here, with the file's line in the message, unless
     * that would cost a pass over a mapped row store of wide rows (data
     * larger than memory): then each label is checked as its row is used. */
    int lazy = data->first_line == 0 && data->row_stride > 1;
    for (size_t i = 0; i < N && !lazy; i++) {
        double y = data->values[i * data->row_stride + (size_t)ycol];
        if (y != 0.0 && y != 1.0) {
            if (sp)
                snprintf(e->msg, sizeof e->msg,
                         "%s: row %zu: label %g: logistic regression needs "
                         "0/1 labels (LIBSVM files often use -1/+1: map -1 "
                         "to 0 before converting)",
                         data->source, i + 1, y);
            else if (data->first_line)
                snprintf(e->msg, sizeof e->msg,
                         "%s:%zu: error: column 'y' (field %ld) must be 0 "
                         "or 1 for logistic regression, found %g",
                         data->source, data->first_line + i, ycol + 1, y);
            else
                snprintf(e->msg, sizeof e->msg,
                         "%s: row %zu: column 'y' must be 0 or 1 for "
                         "logistic regression, found %g",
                         data->source, i + 1, y);
            free(cols);
            return DRIFT_EDATA;
        }
    }
    logistic *m = calloc(1, sizeof *m);
    if (!m) {
        free(cols);
        return fail(e, DRIFT_ENOMEM, "out of memory");
    }
    m->N = N;
    m->D = D;
    m->s = opt[0];
    m->lazy_check = lazy;
    m->source = data->source;
    m->y = data->values + ycol;
    m->ldy = data->row_stride;
    if (sp) {
        m->sp = sp;
    } else if (contiguous) {
        m->X = data->values + first;
        m->ldx = data->row_stride;
        m->xlen = N * data->row_stride - first;
    } else {
        m->owned = malloc(N * D * sizeof(double));
        if (!m->owned) {
            logistic_free(m);
            free(cols);
            return fail(e, DRIFT_ENOMEM, "out of memory copying predictors");
        }
        for (size_t i = 0; i < N; i++)
            for (size_t k = 0; k < D; k++)
                m->owned[i * D + k] =
                    data->values[i * data->row_stride + (size_t)cols[k]];
        m->X = m->owned;
        m->ldx = D;
        m->xlen = N * D;
    }
    m->names = calloc(D, sizeof *m->names);
    for (size_t k = 0; m->names && k < D; k++) {
        char name[32];
        snprintf(name, sizeof name, "w.%zu", k + 1);
        if (!(m->names[k] = strdup(name))) {
            for (size_t j = 0; j < k; j++)
                free(m->names[j]);
            free(m->names);
            m->names = NULL;
        }
    }
    if (!m->names) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: out of memory for the names of D = %zu parameters "
                 "(about %.3g GiB)",
                 data->source, D, (double)D * 48.0 / 1073741824.0);
        logistic_free(m);
        free(cols);
        return DRIFT_ENOMEM;
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = D;
    out->n_rows = N;
    out->n_out = D;
    out->out_names = (const char *const *)m->names;
    out->flags = DRIFT_MODEL_GLM;
    out->self = m;
    out->free = logistic_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->jvp = jvp;
    out->glm_scalars = glm_scalars;
    out->glm_design = glm_design;
    out->glm_design_sum = glm_design_sum;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    out->outcome = DRIFT_OUTCOME_BINARY;
    out->predict = predict;
    free(cols);
    return DRIFT_OK;
}

static const drift_hparam options[] = {
    {"s", DRIFT_HP_REAL, 3.1622776601683795, 0, INFINITY, DRIFT_HP_OPEN_LO,
     NULL, "prior standard deviation of every weight: w ~ N(0, s^2 I)"},
    {"D", DRIFT_HP_INT, 0, 0, 4294967296.0, 0, NULL,
     "sparse rows only: number of weights, if more than the data's largest "
     "index"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER,
    "logistic",
    "Bayesian logistic regression: y ~ bernoulli_logit(x . w), w ~ N(0, s^2)",
    options,
    sizeof options / sizeof options[0],
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
