/* test_kern.c: the row kernels of linear predictors (kern.c, issues 13
 * and 18).  Every vector unit this CPU has (SSE2, AVX2, AVX-512F) must
 * give bitwise the results of the order kern.h states, written here as
 * plain scalar C: dot products of rows of every length 0 .. 70 (tails of
 * every size, row strides longer than the rows, unaligned starts), the
 * transposed sum over blocks of rows (column tails of every size, strided
 * scalars), values spanning many binades so that a different order of
 * additions would show, and signed zeros and infinities.  Then the sparse
 * kernels against a plain loop of the stated order, for ranges and
 * gathered rows, summed and per row; bernoulli_logit's arithmetic on
 * every unit against its formula.  Timings are printed (ns per element,
 * information only). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/lang/kern.h"
#include "harness.h"

/* The stated orders: 8 partial sums, the last block zero-padded, then
 * ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7)); rows added to g in
 * pairs. */
static double ref_dot(size_t k, const double *x, const double *w)
{
    volatile double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t j0 = 0; j0 < k; j0 += 8)
        for (size_t l = 0; l < 8; l++) {
            double xv = j0 + l < k ? x[j0 + l] : 0;
            double wv = j0 + l < k ? w[j0 + l] : 0;
            volatile double prod = xv * wv;
            p[l] = p[l] + prod;
        }
    volatile double a = p[0] + p[4], b = p[2] + p[6];
    volatile double c = p[1] + p[5], d = p[3] + p[7];
    volatile double ab = a + b, cd = c + d;
    return ab + cd;
}

static void ref_axpy(size_t n, size_t k, const double *X, size_t ldx,
                     const double *s, size_t sl, double *g)
{
    for (size_t j = 0; j < k; j++) {
        size_t r = 0;
        for (; r + 2 <= n; r += 2) {
            volatile double p1 = s[r * sl] * X[r * ldx + j];
            volatile double p2 = s[(r + 1) * sl] * X[(r + 1) * ldx + j];
            volatile double pair = p1 + p2;
            g[j] = g[j] + pair;
        }
        if (r < n) {
            volatile double prod = s[r * sl] * X[r * ldx + j];
            g[j] = g[j] + prod;
        }
    }
}

/* Values over many binades, of both signs: a reordered sum differs. */
static double wild(void)
{
    double m = (double)rand() / RAND_MAX - 0.5;
    return ldexp(m, rand() % 40 - 20);
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void test_dense_units(void **state)
{
    (void)state;
    srand(7);
    enum { R = 37, KMAX = 70, LD = 75 };
    double *X = malloc((R * LD + 8) * sizeof *X);
    double *w = malloc((KMAX + 8) * sizeof *w);
    double s[2 * R], z[R], g[KMAX + 8], gr[KMAX + 8], g0[KMAX + 8];
    assert_non_null(X);
    assert_non_null(w);
    int units = 0;
    for (int u = 0; u < 3; u++) {
        const drift_kern *kn = drift_kern_get(u);
        if (!kn)
            continue;
        units++;
        for (size_t k = 0; k <= KMAX; k++)
            for (size_t off = 0; off < 3; off++) {
                /* rows start off doubles in (unaligned), stride LD or k */
                size_t ld = off == 2 ? k : LD;
                const double *Xo = X + off;
                for (size_t q = 0; q < R * LD + 8; q++)
                    X[q] = wild();
                for (size_t j = 0; j < KMAX + 8; j++)
                    w[j] = wild();
                for (size_t r = 0; r < 2 * R; r++)
                    s[r] = wild();
                double cv[R];
                kn->dot_rows(R, k, Xo, ld, w + off, z, X + 1, LD, cv);
                for (size_t r = 0; r < R; r++) {
                    if (!same_bits(cv[r], X[1 + r * LD]))
                        fail_msg("%s dot: the column copied at row %zu "
                                 "differs", kn->name, r);
                    double want = ref_dot(k, Xo + r * ld, w + off);
                    if (!same_bits(z[r], want))
                        fail_msg("%s dot: k %zu row %zu offset %zu: %.17g, "
                                 "the stated order gives %.17g",
                                 kn->name, k, r, off, z[r], want);
                }
                for (size_t j = 0; j < KMAX + 8; j++)
                    g0[j] = wild();
                memcpy(g, g0, sizeof g);
                memcpy(gr, g0, sizeof gr);
                size_t sl = off + 1 < 3 ? off + 1 : 1;
                size_t nr = R - (off == 1); /* odd and even counts */
                kn->axpy_rows(nr, k, Xo, ld, s, sl, g + off);
                ref_axpy(nr, k, Xo, ld, s, sl, gr + off);
                for (size_t j = 0; j < KMAX + 8; j++)
                    if (!same_bits(g[j], gr[j]))
                        fail_msg("%s axpy: k %zu column %zu offset %zu: "
                                 "%.17g, the stated order gives %.17g (a "
                                 "column past k must stay as it was)",
                                 kn->name, k, j, off, g[j], gr[j]);
            }
        /* Special values: a signed zero sum, an infinity, a NaN row. */
        double xs[9] = {-0.0, -0.0, 0, 0, 0, 0, 0, 0, -0.0};
        double ws[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        kn->dot_rows(1, 9, xs, 9, ws, z, NULL, 0, NULL);
        assert_true(same_bits(z[0], ref_dot(9, xs, ws)));
        xs[3] = INFINITY;
        kn->dot_rows(1, 9, xs, 9, ws, z, NULL, 0, NULL);
        assert_true(isinf(z[0]) && z[0] > 0);
        xs[5] = NAN;
        kn->dot_rows(1, 9, xs, 9, ws, z, NULL, 0, NULL);
        assert_true(isnan(z[0]));
        /* No rows: g untouched; no columns: z is +0. */
        memcpy(g, g0, sizeof g);
        kn->axpy_rows(0, 20, X, LD, s, 1, g);
        assert_memory_equal(g, g0, sizeof g);
        kn->dot_rows(3, 0, X, LD, w, z, NULL, 0, NULL);
        for (int r = 0; r < 3; r++)
            assert_true(same_bits(z[r], 0.0));
    }
    assert_true(units >= 1);
    printf("kern: %d vector unit(s) agree with the stated order; the "
           "build uses %s\n", units, drift_kern_describe());
    free(X);
    free(w);
}

/* The public functions are the chosen unit's. */
static void test_dispatch(void **state)
{
    (void)state;
    srand(3);
    enum { R = 19, K = 54 };
    double X[R * K], w[K], s[R], z[R], g[K] = {0}, zr[R], gr[K] = {0};
    for (size_t q = 0; q < R * K; q++)
        X[q] = wild();
    for (size_t j = 0; j < K; j++)
        w[j] = wild();
    for (size_t r = 0; r < R; r++)
        s[r] = wild();
    drift_kern_dot_rows(R, K, X, K, w, z);
    drift_kern_axpy_rows(R, K, X, K, s, 1, g);
    for (size_t r = 0; r < R; r++)
        zr[r] = ref_dot(K, X + r * K, w);
    ref_axpy(R, K, X, K, s, 1, gr);
    assert_memory_equal(z, zr, sizeof z);
    assert_memory_equal(g, gr, sizeof g);
}

static void test_sparse(void **state)
{
    (void)state;
    srand(5);
    enum { NR = 50, D = 300 };
    uint64_t rp[NR + 1];
    uint32_t idx[NR * 11];
    double val[NR * 11], v[2 * D], s[NR];
    rp[0] = 0;
    for (size_t i = 0; i < NR; i++) {
        size_t nz = i % 11; /* 0 .. 10 non-zeros: every tail */
        for (size_t q = 0; q < nz; q++) {
            idx[rp[i] + q] = (uint32_t)((i * 37 + q * 29) % D);
            val[rp[i] + q] = wild();
        }
        rp[i + 1] = rp[i] + nz;
    }
    for (size_t j = 0; j < 2 * D; j++)
        v[j] = wild();
    for (size_t r = 0; r < NR; r++)
        s[r] = wild();
    size_t rows[5] = {7, 3, 49, 3, 10};
    for (int gathered = 0; gathered < 2; gathered++) {
        size_t n = gathered ? 5 : 20, first = 30;
        double z[NR * 2];
        /* two strides of v: one vector for all rows, or one per row */
        for (size_t vl = 0; vl <= 1; vl++) {
            drift_kern_sparse_dot_rows(n, gathered ? rows : NULL, first, rp,
                                       idx, val, v, vl, z, 2);
            for (size_t r = 0; r < n; r++) {
                size_t i = gathered ? rows[r] : first + r;
                const double *vr = v + r * vl;
                double p[4] = {0, 0, 0, 0};
                uint64_t j = rp[i];
                for (; j + 4 <= rp[i + 1]; j += 4)
                    for (int l = 0; l < 4; l++)
                        p[l] += val[j + l] * vr[idx[j + l]];
                for (; j < rp[i + 1]; j++)
                    p[0] += val[j] * vr[idx[j]];
                double want = (p[0] + p[1]) + (p[2] + p[3]);
                assert_true(same_bits(z[2 * r], want));
            }
        }
        /* summed (gl 0) and per row (gl D) */
        for (size_t gl = 0; gl <= D; gl += D) {
            double *g = calloc(n * D + D, sizeof *g);
            double *gw = calloc(n * D + D, sizeof *gw);
            assert_non_null(g);
            assert_non_null(gw);
            drift_kern_sparse_axpy_rows(n, gathered ? rows : NULL, first, rp,
                                        idx, val, s, 1, g, gl);
            for (size_t r = 0; r < n; r++) {
                size_t i = gathered ? rows[r] : first + r;
                for (uint64_t j = rp[i]; j < rp[i + 1]; j++)
                    gw[r * gl + idx[j]] += s[r] * val[j];
            }
            assert_memory_equal(g, gw, (n * D + D) * sizeof *g);
            free(g);
            free(gw);
        }
    }
}

/* bernoulli_logit's arithmetic: every unit gives bitwise the stated
 * formula's values, sum and products (with and without the log1p terms,
 * with padding rows past n), and flags a row whose outcome is neither 0
 * nor 1 or whose predictor is not finite. */
static void test_logit_units(void **state)
{
    (void)state;
    srand(9);
    enum { S = 64 };
    double z[S], y[S], e[S], l[S], lp[S], g[S], q[S];
    double lpr[S], gr[S], qr[S];
    for (int variant = 0; variant < 6; variant++) {
        size_t n = variant >= 4 ? S - 3 : S; /* 3 rows of padding */
        for (size_t k = 0; k < S; k++) {
            z[k] = k % 9 == 0 ? (k % 2 ? -0.0 : 0.0) : wild() * 64;
            if (k == 17)
                z[k] = 800;
            if (k == 18)
                z[k] = -800;
            y[k] = (double)(rand() % 2);
            e[k] = exp(-fabs(z[k]));
            l[k] = log1p(e[k]);
        }
        int want_bad = variant == 2 || variant == 3;
        if (variant == 2)
            y[S - 3] = 2;
        if (variant == 3)
            z[5] = INFINITY;
        const double *lv = variant % 2 ? NULL : l;
        double p8[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (size_t k = 0; k < S; k++) {
            double zk = z[k], yk = y[k], ek = e[k];
            double t = yk * zk - (zk > 0 ? zk : 0);
            if (lv)
                t = t - lv[k];
            if (yk != 0 && yk != 1)
                t = NAN;
            lpr[k] = t;
            gr[k] = yk - (zk >= 0 ? 1 : ek) / (1 + ek);
            if (k < n)
                p8[k % 8] += t;
        }
        double sumr = ((p8[0] + p8[4]) + (p8[2] + p8[6])) +
                      ((p8[1] + p8[5]) + (p8[3] + p8[7]));
        for (size_t j = 0; j < S / 8; j++) {
            double f[8];
            for (size_t k = 0; k < 8; k++)
                f[k] = 8 * j + k < n ? 1 + e[8 * j + k] : 1;
            qr[j] = ((f[0] * f[1]) * (f[2] * f[3])) *
                        ((f[4] * f[5]) * (f[6] * f[7])) -
                    1;
        }
        for (int u = 0; u < 3; u++) {
            const drift_kern *kn = drift_kern_get(u);
            if (!kn)
                continue;
            double sum;
            int bad = kn->logit(n, S, z, y, e, lv, lp, g, lv ? NULL : q,
                                &sum);
            assert_int_equal(bad, want_bad);
            for (size_t k = 0; k < S; k++) {
                if (!same_bits(lp[k], lpr[k]) && !(isnan(lp[k]) &&
                                                   isnan(lpr[k])))
                    fail_msg("%s logit: lp[%zu] %.17g, the formula %.17g",
                             kn->name, k, lp[k], lpr[k]);
                if (!same_bits(g[k], gr[k]))
                    fail_msg("%s logit: g[%zu] %.17g, the formula %.17g",
                             kn->name, k, g[k], gr[k]);
            }
            if (!want_bad && !same_bits(sum, sumr))
                fail_msg("%s logit: sum %.17g, the stated order %.17g",
                         kn->name, sum, sumr);
            for (size_t j = 0; !lv && j < S / 8; j++)
                if (!same_bits(q[j], qr[j]))
                    fail_msg("%s logit: product %zu differs", kn->name, j);
        }
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ns per element of each unit at d = 20 and 54 over 256 rows (printed). */
static void test_speed(void **state)
{
    (void)state;
    enum { R = 256, K = 54 };
    double *X = malloc(R * (K + 1) * sizeof *X), w[K], z[R], g[K] = {0};
    assert_non_null(X);
    for (size_t q = 0; q < R * (K + 1); q++)
        X[q] = wild();
    for (size_t j = 0; j < K; j++)
        w[j] = wild();
    for (int u = 0; u < 3; u++) {
        const drift_kern *kn = drift_kern_get(u);
        if (!kn)
            continue;
        for (size_t k = 20; k <= K; k += K - 20) {
            double bd = INFINITY, ba = INFINITY;
            for (int rep = 0; rep < 20; rep++) {
                double t0 = now();
                kn->dot_rows(R, k, X, K + 1, w, z, NULL, 0, NULL);
                double t1 = now();
                kn->axpy_rows(R, k, X, K + 1, z, 1, g);
                double t2 = now();
                bd = fmin(bd, t1 - t0);
                ba = fmin(ba, t2 - t1);
            }
            printf("kern %-8s d = %2zu: dot %.2f, axpy %.2f ns per element\n",
                   kn->name, k, 1e9 * bd / (R * k), 1e9 * ba / (R * k));
        }
    }
    free(X);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_units),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_logit_units),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
