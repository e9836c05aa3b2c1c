/* kern.c: dense and sparse row kernels of linear predictors (see kern.h):
 * the dot products of a block's rows with one vector and the transposed
 * sum, each in an SSE2, an AVX2 and an AVX-512F form with the same
 * arithmetic in the same order, chosen once per process.  Not for any
 * other arithmetic. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "kern.h"

/* No product and sum may become one FMA (AVX-512F brings FMA with it in
 * GCC, and the results would then depend on the vector unit). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

typedef double v2d __attribute__((vector_size(16)));

static inline v2d load2(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store2(double *p, v2d v) { memcpy(p, &v, sizeof v); }

/* bernoulli_logit's arithmetic (kern.h) on vectors of W doubles VD with
 * masks VL: the same IEEE operations on every unit, so the same values;
 * the sum of the terms in 8 lane partial sums (NA = 8 / W accumulators,
 * vector k / W adding to accumulator (k / W) % NA), combined as the dot
 * products' are. */
#define LOGIT_BODY(VD, VL, W)                                                \
    enum { NA = 8 / W };                                                      \
    const VD one = (VD){0} + 1, zero = (VD){0}, nan = (VD){0} + NAN;          \
    VL bad = (VL){0};                                                         \
    VD acc[NA];                                                               \
    for (int a = 0; a < NA; a++)                                              \
        acc[a] = zero;                                                        \
    for (size_t k = 0; k < S; k += W) {                                       \
        VD zv, yv, ev;                                                        \
        memcpy(&zv, z + k, sizeof zv);                                        \
        memcpy(&yv, y + k, sizeof yv);                                        \
        memcpy(&ev, e + k, sizeof ev);                                        \
        VL pos = zv > zero, nneg = zv >= zero;                                \
        VD t = yv * zv - (VD)((VL)zv & pos);                                  \
        if (l) {                                                              \
            VD lv;                                                            \
            memcpy(&lv, l + k, sizeof lv);                                    \
            t = t - lv;                                                       \
        }                                                                     \
        VD num = (VD)(((VL)one & nneg) | ((VL)ev & ~nneg));                   \
        VD q1 = one + ev;                                                     \
        VD gk = yv - num / q1;                                                \
        VL label = (yv == zero) | (yv == one);                                \
        t = (VD)(((VL)t & label) | ((VL)nan & ~label));                       \
        bad |= ~(t - t == zero);                                              \
        memcpy(lp + k, &t, sizeof t);                                         \
        memcpy(g + k, &gk, sizeof gk);                                        \
        if (!l)                                                               \
            memcpy(pm1 + k, &q1, sizeof q1);                                  \
        if (k + W > n) {                                                      \
            /* the last rows: padding adds nothing */                         \
            double tv[W];                                                     \
            memcpy(tv, &t, sizeof tv);                                        \
            for (size_t w = 0; w < W; w++)                                    \
                if (k + w >= n)                                               \
                    tv[w] = 0;                                                \
            memcpy(&t, tv, sizeof t);                                         \
        }                                                                     \
        acc[(k / W) % NA] += t;                                               \
    }                                                                         \
    double p8[8];                                                             \
    for (int a = 0; a < NA; a++)                                              \
        memcpy(p8 + a * W, &acc[a], sizeof acc[a]);                           \
    *sum = ((p8[0] + p8[4]) + (p8[2] + p8[6])) +                              \
           ((p8[1] + p8[5]) + (p8[3] + p8[7]));                               \
    if (!l)                                                                   \
        group_products(n, S, pm1);                                            \
    for (int w = 0; w < W; w++)                                               \
        if (bad[w])                                                           \
            return 1;                                                         \
    return 0;

/* q[j] = ((f0 f1) (f2 f3)) ((f4 f5) (f6 f7)) - 1 for each 8 rows' factors
 * f = q[8j ..] (1 beyond row n), in place: each product is in [1, 256],
 * so subtracting 1 is exact. */
static void group_products(size_t n, size_t S, double *q)
{
    for (size_t k = n; k < S; k++)
        q[k] = 1;
    for (size_t j = 0; j < S / 8; j++) {
        const double *f = q + 8 * j;
        double P = ((f[0] * f[1]) * (f[2] * f[3])) *
                   ((f[4] * f[5]) * (f[6] * f[7]));
        q[j] = P - 1;
    }
}

typedef long long v2l __attribute__((vector_size(16)));

/* ---- SSE2 (the baseline: every x86-64 CPU, and other CPUs' plain C) ---- */

/* Partial sums p0..p7 as (p0 p1) (p2 p3) (p4 p5) (p6 p7). */
static inline double reduce_sse2(v2d q0, v2d q1, v2d q2, v2d q3)
{
    v2d t01 = q0 + q2, t23 = q1 + q3; /* (p0+p4, p1+p5), (p2+p6, p3+p7) */
    v2d u = t01 + t23;
    return u[0] + u[1];
}

static void dot_sse2(size_t n, size_t k, const double *X, size_t ldx,
                     const double *w, double *z, const double *C, size_t ldc,
                     double *cv)
{
    size_t kb = k & ~(size_t)7, rem = k - kb;
    double wt[8] = {0}, xt[8] = {0};
    memcpy(wt, w + kb, rem * sizeof *wt);
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * ldx;
        v2d q0 = {0, 0}, q1 = q0, q2 = q0, q3 = q0;
        for (size_t j = 0; j < kb; j += 8) {
            q0 += load2(x + j) * load2(w + j);
            q1 += load2(x + j + 2) * load2(w + j + 2);
            q2 += load2(x + j + 4) * load2(w + j + 4);
            q3 += load2(x + j + 6) * load2(w + j + 6);
        }
        if (rem) {
            memcpy(xt, x + kb, rem * sizeof *xt);
            q0 += load2(xt) * load2(wt);
            q1 += load2(xt + 2) * load2(wt + 2);
            q2 += load2(xt + 4) * load2(wt + 4);
            q3 += load2(xt + 6) * load2(wt + 6);
        }
        z[r] = reduce_sse2(q0, q1, q2, q3);
        if (C)
            cv[r] = C[r * ldc];
    }
}

static void axpy_sse2(size_t n, size_t k, const double *X, size_t ldx,
                      const double *s, size_t sl, double *g)
{
    size_t j0 = 0;
    for (; j0 + 8 <= k; j0 += 8) {
        v2d a0 = load2(g + j0), a1 = load2(g + j0 + 2);
        v2d a2 = load2(g + j0 + 4), a3 = load2(g + j0 + 6);
        size_t r = 0;
        for (; r + 2 <= n; r += 2) {
            const double *x = X + r * ldx + j0, *x2 = x + ldx;
            v2d sv = {s[r * sl], s[r * sl]};
            v2d sw = {s[(r + 1) * sl], s[(r + 1) * sl]};
            a0 += sv * load2(x) + sw * load2(x2);
            a1 += sv * load2(x + 2) + sw * load2(x2 + 2);
            a2 += sv * load2(x + 4) + sw * load2(x2 + 4);
            a3 += sv * load2(x + 6) + sw * load2(x2 + 6);
        }
        if (r < n) {
            const double *x = X + r * ldx + j0;
            v2d sv = {s[r * sl], s[r * sl]};
            a0 += sv * load2(x);
            a1 += sv * load2(x + 2);
            a2 += sv * load2(x + 4);
            a3 += sv * load2(x + 6);
        }
        store2(g + j0, a0);
        store2(g + j0 + 2, a1);
        store2(g + j0 + 4, a2);
        store2(g + j0 + 6, a3);
    }
    for (; j0 + 2 <= k; j0 += 2) {
        v2d a = load2(g + j0);
        size_t r = 0;
        for (; r + 2 <= n; r += 2) {
            v2d sv = {s[r * sl], s[r * sl]};
            v2d sw = {s[(r + 1) * sl], s[(r + 1) * sl]};
            a += sv * load2(X + r * ldx + j0) +
                 sw * load2(X + (r + 1) * ldx + j0);
        }
        if (r < n) {
            v2d sv = {s[r * sl], s[r * sl]};
            a += sv * load2(X + r * ldx + j0);
        }
        store2(g + j0, a);
    }
    if (j0 < k) {
        double a = g[j0];
        size_t r = 0;
        for (; r + 2 <= n; r += 2)
            a += s[r * sl] * X[r * ldx + j0] +
                 s[(r + 1) * sl] * X[(r + 1) * ldx + j0];
        if (r < n)
            a += s[r * sl] * X[r * ldx + j0];
        g[j0] = a;
    }
}

static int logit_sse2(size_t n, size_t S, const double *z, const double *y,
                      const double *e, const double *l, double *lp, double *g,
                      double *pm1, double *sum)
{
    LOGIT_BODY(v2d, v2l, 2)
}

static const drift_kern K_SSE2 = {dot_sse2, axpy_sse2, logit_sse2, "SSE2"};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* ---- AVX2 -------------------------------------------------------------- */

/* Lane masks for maskload/maskstore: the first m of 4 lanes. */
__attribute__((target("avx2"))) static inline __m256i mask4(size_t m)
{
    static const long long on[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(on + 4 - (m > 4 ? 4 : m)));
}

__attribute__((target("avx2"))) static void
dot_avx2(size_t n, size_t k, const double *X, size_t ldx, const double *w,
         double *z, const double *C, size_t ldc, double *cv)
{
    size_t kb = k & ~(size_t)7, rem = k - kb;
    __m256i m0 = mask4(rem), m1 = mask4(rem > 4 ? rem - 4 : 0);
    __m256d w0 = _mm256_maskload_pd(w + kb, m0);
    __m256d w1 = _mm256_maskload_pd(w + kb + 4, m1);
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * ldx;
        __m256d a = _mm256_setzero_pd(), b = a;
        for (size_t j = 0; j < kb; j += 8) {
            a = _mm256_add_pd(a, _mm256_mul_pd(_mm256_loadu_pd(x + j),
                                               _mm256_loadu_pd(w + j)));
            b = _mm256_add_pd(b, _mm256_mul_pd(_mm256_loadu_pd(x + j + 4),
                                               _mm256_loadu_pd(w + j + 4)));
        }
        if (rem) {
            a = _mm256_add_pd(
                a, _mm256_mul_pd(_mm256_maskload_pd(x + kb, m0), w0));
            b = _mm256_add_pd(
                b, _mm256_mul_pd(_mm256_maskload_pd(x + kb + 4, m1), w1));
        }
        __m256d t = _mm256_add_pd(a, b);
        __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t),
                               _mm256_extractf128_pd(t, 1));
        z[r] = _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
        if (C)
            cv[r] = C[r * ldc];
    }
}

/* Columns j0 .. j0+cw (cw <= 16) of the transposed sum: nv vectors of 4,
 * the last with mask ml. */
__attribute__((target("avx2"))) static inline void
axpy_avx2_block(size_t n, int nv, const double *X, size_t ldx,
                const double *s, size_t sl, double *g, __m256i ml)
{
    __m256i full = _mm256_set1_epi64x(-1);
    __m256i m0 = nv == 1 ? ml : full, m1 = nv == 2 ? ml : full;
    __m256i m2 = nv == 3 ? ml : full, m3 = ml;
    __m256d a0 = _mm256_maskload_pd(g, m0), a1 = a0, a2 = a0, a3 = a0;
    if (nv > 1)
        a1 = _mm256_maskload_pd(g + 4, m1);
    if (nv > 2)
        a2 = _mm256_maskload_pd(g + 8, m2);
    if (nv > 3)
        a3 = _mm256_maskload_pd(g + 12, m3);
#define AX2(a, m, o)                                                           \
    a = _mm256_add_pd(                                                         \
        a, _mm256_add_pd(_mm256_mul_pd(sv, _mm256_maskload_pd(x + o, m)),    \
                         _mm256_mul_pd(sw, _mm256_maskload_pd(x2 + o, m))))
#define AX1(a, m, o)                                                           \
    a = _mm256_add_pd(a, _mm256_mul_pd(sv, _mm256_maskload_pd(x + o, m)))
    size_t r = 0;
    for (; r + 2 <= n; r += 2) {
        const double *x = X + r * ldx, *x2 = x + ldx;
        __m256d sv = _mm256_set1_pd(s[r * sl]);
        __m256d sw = _mm256_set1_pd(s[(r + 1) * sl]);
        AX2(a0, m0, 0);
        if (nv > 1)
            AX2(a1, m1, 4);
        if (nv > 2)
            AX2(a2, m2, 8);
        if (nv > 3)
            AX2(a3, m3, 12);
    }
    if (r < n) {
        const double *x = X + r * ldx;
        __m256d sv = _mm256_set1_pd(s[r * sl]);
        AX1(a0, m0, 0);
        if (nv > 1)
            AX1(a1, m1, 4);
        if (nv > 2)
            AX1(a2, m2, 8);
        if (nv > 3)
            AX1(a3, m3, 12);
    }
#undef AX2
#undef AX1
    _mm256_maskstore_pd(g, m0, a0);
    if (nv > 1)
        _mm256_maskstore_pd(g + 4, m1, a1);
    if (nv > 2)
        _mm256_maskstore_pd(g + 8, m2, a2);
    if (nv > 3)
        _mm256_maskstore_pd(g + 12, m3, a3);
}

__attribute__((target("avx2"))) static void
axpy_avx2(size_t n, size_t k, const double *X, size_t ldx, const double *s,
          size_t sl, double *g)
{
    for (size_t j0 = 0; j0 < k; j0 += 16) {
        size_t cw = k - j0 < 16 ? k - j0 : 16;
        int nv = (int)((cw + 3) / 4);
        __m256i ml = mask4(cw - 4 * (size_t)(nv - 1));
        /* nv a constant in each call, so that the block's accumulators
         * stay in registers */
        switch (nv) {
        case 1: axpy_avx2_block(n, 1, X + j0, ldx, s, sl, g + j0, ml); break;
        case 2: axpy_avx2_block(n, 2, X + j0, ldx, s, sl, g + j0, ml); break;
        case 3: axpy_avx2_block(n, 3, X + j0, ldx, s, sl, g + j0, ml); break;
        default: axpy_avx2_block(n, 4, X + j0, ldx, s, sl, g + j0, ml); break;
        }
    }
}

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static int
logit_avx2(size_t n, size_t S, const double *z, const double *y,
           const double *e, const double *l, double *lp, double *g,
           double *pm1, double *sum)
{
    LOGIT_BODY(v4d, v4l, 4)
}

static const drift_kern K_AVX2 = {dot_avx2, axpy_avx2, logit_avx2, "AVX2"};

/* ---- AVX-512F ---------------------------------------------------------- */

/* The dot products with w in registers: nb blocks of 8 (nb <= 8, a
 * constant in each caller), the last with lanes ml; the same additions in
 * the same order as the loop below. */
__attribute__((target("avx512f"), always_inline)) static inline void
dot_avx512_nb(size_t n, int nb, const double *X, size_t ldx,
              const double *w, double *z, const double *C, size_t ldc,
              double *cv, __mmask8 ml)
{
    __m512d wv[8];
#pragma GCC unroll 8
    for (int b = 0; b < nb; b++)
        wv[b] = _mm512_maskz_loadu_pd(b + 1 == nb ? ml : 0xff, w + 8 * b);
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * ldx;
        __m512d p = _mm512_setzero_pd();
#pragma GCC unroll 8
        for (int b = 0; b < nb; b++)
            p = _mm512_add_pd(
                p, _mm512_mul_pd(_mm512_maskz_loadu_pd(
                                     b + 1 == nb ? ml : 0xff, x + 8 * b),
                                 wv[b]));
        __m256d t = _mm256_add_pd(_mm512_castpd512_pd256(p),
                                  _mm512_extractf64x4_pd(p, 1));
        __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t),
                               _mm256_extractf128_pd(t, 1));
        z[r] = _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
        if (C)
            cv[r] = C[r * ldc];
    }
}

__attribute__((target("avx512f"))) static void
dot_avx512(size_t n, size_t k, const double *X, size_t ldx, const double *w,
           double *z, const double *C, size_t ldc, double *cv)
{
    size_t kb = k & ~(size_t)7, rem = k - kb;
    __mmask8 m = (__mmask8)((1u << rem) - 1);
    size_t nb = (k + 7) / 8;
    __mmask8 ml = rem ? m : 0xff;
    switch (nb) {
    case 1: dot_avx512_nb(n, 1, X, ldx, w, z, C, ldc, cv, ml); return;
    case 2: dot_avx512_nb(n, 2, X, ldx, w, z, C, ldc, cv, ml); return;
    case 3: dot_avx512_nb(n, 3, X, ldx, w, z, C, ldc, cv, ml); return;
    case 4: dot_avx512_nb(n, 4, X, ldx, w, z, C, ldc, cv, ml); return;
    default: break;
    }
    __m512d wt = _mm512_maskz_loadu_pd(m, w + kb);
    for (size_t r = 0; r < n; r++) {
        const double *x = X + r * ldx;
        __m512d p = _mm512_setzero_pd();
        for (size_t j = 0; j < kb; j += 8)
            p = _mm512_add_pd(p, _mm512_mul_pd(_mm512_loadu_pd(x + j),
                                               _mm512_loadu_pd(w + j)));
        if (rem)
            p = _mm512_add_pd(p, _mm512_mul_pd(_mm512_maskz_loadu_pd(m, x + kb),
                                               wt));
        __m256d t = _mm256_add_pd(_mm512_castpd512_pd256(p),
                                  _mm512_extractf64x4_pd(p, 1));
        __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t),
                               _mm256_extractf128_pd(t, 1));
        z[r] = _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
        if (C)
            cv[r] = C[r * ldc];
    }
}

/* Columns of the transposed sum in blocks of up to 32: nv vectors of 8,
 * the last with mask ml. */
__attribute__((target("avx512f"))) static inline void
axpy_avx512_block(size_t n, int nv, const double *X, size_t ldx,
                  const double *s, size_t sl, double *g, __mmask8 ml)
{
    __mmask8 m0 = nv == 1 ? ml : 0xff, m1 = nv == 2 ? ml : 0xff;
    __mmask8 m2 = nv == 3 ? ml : 0xff, m3 = ml;
    __m512d a0 = _mm512_maskz_loadu_pd(m0, g), a1 = a0, a2 = a0, a3 = a0;
    if (nv > 1)
        a1 = _mm512_maskz_loadu_pd(m1, g + 8);
    if (nv > 2)
        a2 = _mm512_maskz_loadu_pd(m2, g + 16);
    if (nv > 3)
        a3 = _mm512_maskz_loadu_pd(m3, g + 24);
#define AX2(a, m, o)                                                           \
    a = _mm512_add_pd(                                                         \
        a, _mm512_add_pd(_mm512_mul_pd(sv, _mm512_maskz_loadu_pd(m, x + o)), \
                         _mm512_mul_pd(sw, _mm512_maskz_loadu_pd(m, x2 + o))))
#define AX1(a, m, o)                                                           \
    a = _mm512_add_pd(a, _mm512_mul_pd(sv, _mm512_maskz_loadu_pd(m, x + o)))
    size_t r = 0;
    for (; r + 2 <= n; r += 2) {
        const double *x = X + r * ldx, *x2 = x + ldx;
        __m512d sv = _mm512_set1_pd(s[r * sl]);
        __m512d sw = _mm512_set1_pd(s[(r + 1) * sl]);
        AX2(a0, m0, 0);
        if (nv > 1)
            AX2(a1, m1, 8);
        if (nv > 2)
            AX2(a2, m2, 16);
        if (nv > 3)
            AX2(a3, m3, 24);
    }
    if (r < n) {
        const double *x = X + r * ldx;
        __m512d sv = _mm512_set1_pd(s[r * sl]);
        AX1(a0, m0, 0);
        if (nv > 1)
            AX1(a1, m1, 8);
        if (nv > 2)
            AX1(a2, m2, 16);
        if (nv > 3)
            AX1(a3, m3, 24);
    }
#undef AX2
#undef AX1
    _mm512_mask_storeu_pd(g, m0, a0);
    if (nv > 1)
        _mm512_mask_storeu_pd(g + 8, m1, a1);
    if (nv > 2)
        _mm512_mask_storeu_pd(g + 16, m2, a2);
    if (nv > 3)
        _mm512_mask_storeu_pd(g + 24, m3, a3);
}

__attribute__((target("avx512f"))) static void
axpy_avx512(size_t n, size_t k, const double *X, size_t ldx, const double *s,
            size_t sl, double *g)
{
    for (size_t j0 = 0; j0 < k; j0 += 32) {
        size_t cw = k - j0 < 32 ? k - j0 : 32;
        int nv = (int)((cw + 7) / 8);
        __mmask8 ml = (__mmask8)((1u << (cw - 8 * (size_t)(nv - 1))) - 1);
        switch (nv) {
        case 1: axpy_avx512_block(n, 1, X + j0, ldx, s, sl, g + j0, ml); break;
        case 2: axpy_avx512_block(n, 2, X + j0, ldx, s, sl, g + j0, ml); break;
        case 3: axpy_avx512_block(n, 3, X + j0, ldx, s, sl, g + j0, ml); break;
        default: axpy_avx512_block(n, 4, X + j0, ldx, s, sl, g + j0, ml); break;
        }
    }
}

typedef double v8d __attribute__((vector_size(64)));
typedef long long v8l __attribute__((vector_size(64)));

__attribute__((target("avx512f"))) static int
logit_avx512(size_t n, size_t S, const double *z, const double *y,
             const double *e, const double *l, double *lp, double *g,
             double *pm1, double *sum)
{
    LOGIT_BODY(v8d, v8l, 8)
}

static const drift_kern K_AVX512 = {dot_avx512, axpy_avx512, logit_avx512,
                                    "AVX-512F"};
#define HAVE_X86_UNITS 1
#endif

/* ---- the choice ---------------------------------------------------------- */

static const drift_kern *chosen = &K_SSE2;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int unit_here(int u)
{
#ifdef HAVE_X86_UNITS
    __builtin_cpu_init();
    if (u == 2)
        return __builtin_cpu_supports("avx512f");
    if (u == 1)
        return __builtin_cpu_supports("avx2");
#endif
    return u == 0;
}

static void choose(void)
{
#ifdef HAVE_X86_UNITS
    chosen = unit_here(2) ? &K_AVX512 : unit_here(1) ? &K_AVX2 : &K_SSE2;
#endif
}

static const drift_kern *kern(void)
{
    pthread_once(&once, choose);
    return chosen;
}

const drift_kern *drift_kern_get(int u)
{
    if (u < 0 || u > 2 || !unit_here(u))
        return NULL;
#ifdef HAVE_X86_UNITS
    if (u == 2)
        return &K_AVX512;
    if (u == 1)
        return &K_AVX2;
#endif
    return &K_SSE2;
}

const char *drift_kern_describe(void) { return kern()->name; }

void drift_kern_dot_rows(size_t n, size_t k, const double *X, size_t ldx,
                         const double *w, double *z)
{
    kern()->dot_rows(n, k, X, ldx, w, z, NULL, 0, NULL);
}

void drift_kern_dot_rows_col(size_t n, size_t k, const double *X, size_t ldx,
                             const double *w, double *z, const double *C,
                             size_t ldc, double *cv)
{
    kern()->dot_rows(n, k, X, ldx, w, z, C, ldc, cv);
}

int drift_kern_logit(size_t n, size_t S, const double *z, const double *y,
                     const double *e, const double *l, double *lp, double *g,
                     double *pm1, double *sum)
{
    return kern()->logit(n, S, z, y, e, l, lp, g, pm1, sum);
}

void drift_kern_axpy_rows(size_t n, size_t k, const double *X, size_t ldx,
                          const double *s, size_t sl, double *g)
{
    if (k)
        kern()->axpy_rows(n, k, X, ldx, s, sl, g);
}

/* ---- sparse rows ---------------------------------------------------------- */

static inline size_t at(const size_t *rows, size_t first, size_t r)
{
    return rows ? rows[r] : first + r;
}

void drift_kern_sparse_dot_rows(size_t n, const size_t *rows, size_t first,
                                const uint64_t *row_ptr, const uint32_t *idx,
                                const double *val, const double *v,
                                size_t vl, double *z, size_t zl)
{
    for (size_t r = 0; r < n; r++) {
        size_t i = at(rows, first, r);
        const double *vr = v + r * vl;
        /* Four chains of dependent additions in flight instead of one. */
        double z0 = 0, z1 = 0, z2 = 0, z3 = 0;
        uint64_t j = row_ptr[i], end = row_ptr[i + 1];
        for (; j + 4 <= end; j += 4) {
            z0 += val[j] * vr[idx[j]];
            z1 += val[j + 1] * vr[idx[j + 1]];
            z2 += val[j + 2] * vr[idx[j + 2]];
            z3 += val[j + 3] * vr[idx[j + 3]];
        }
        for (; j < end; j++)
            z0 += val[j] * vr[idx[j]];
        z[r * zl] = (z0 + z1) + (z2 + z3);
    }
}

void drift_kern_sparse_axpy_rows(size_t n, const size_t *rows, size_t first,
                                 const uint64_t *row_ptr, const uint32_t *idx,
                                 const double *val, const double *s,
                                 size_t sl, double *g, size_t gl)
{
    for (size_t r = 0; r < n; r++) {
        size_t i = at(rows, first, r);
        double a = s[r * sl];
        double *gr = g + r * gl;
        for (uint64_t j = row_ptr[i]; j < row_ptr[i + 1]; j++)
            gr[idx[j]] += a * val[j];
    }
}
