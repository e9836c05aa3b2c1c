/* test_vmath.c: the AD kernels' vector math (vmath.c).  Errors
 * in ulps against long double (expl, log1pl, tanhl, 1 / (1 + expl(-x)))
 * on a grid per function, for every kind this build has: the C library,
 * SLEEF strict (1 ulp, no FMA) and fast (FMA; tanh 3.5 ulp), and glibc's
 * libmvec for comparison; each kind's documented bound asserted, and the
 * table printed with each kind's speed (ns per element over 4096-element
 * arrays, best of 20: information, not asserted).  Then reproducibility:
 * an element's result depends on its value alone (arrays of every length
 * and offset, and the one-element forms, agree bitwise), and special
 * values (infinities, NaN, -1 for log1p) come out as the C library's. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/lang/vmath.h"
#include "harness.h"

#if DRIFT_HAVE_LIBMVEC && defined(__x86_64__)
#include <x86intrin.h>
/* glibc's libmvec, AVX2 forms (the vector ABI's names). */
__m256d _ZGVdN4v_exp(__m256d);
__m256d _ZGVdN4v_log1p(__m256d);
__m256d _ZGVdN4v_tanh(__m256d);

__attribute__((target("avx2"))) static void mvec_loop(size_t n,
                                                      const double *x,
                                                      double *y, int f)
{
    for (size_t k = 0; k < n; k += 4) {
        double b[4] = {0, 0, 0, 0};
        size_t m = n - k < 4 ? n - k : 4;
        memcpy(b, x + k, m * sizeof *b);
        __m256d v = _mm256_loadu_pd(b);
        v = f == 0 ? _ZGVdN4v_exp(v) : f == 1 ? _ZGVdN4v_log1p(v)
                                              : _ZGVdN4v_tanh(v);
        _mm256_storeu_pd(b, v);
        memcpy(y + k, b, m * sizeof *b);
    }
}
static void mvec_exp(size_t n, const double *x, double *y)
{
    mvec_loop(n, x, y, 0);
}
static void mvec_log1p(size_t n, const double *x, double *y)
{
    mvec_loop(n, x, y, 1);
}
static void mvec_tanh(size_t n, const double *x, double *y)
{
    mvec_loop(n, x, y, 2);
}
static const drift_vmath MVEC = {mvec_exp, mvec_log1p, mvec_tanh, NULL, NULL,
                                 NULL, "glibc libmvec, AVX2 (comparison)"};
#define HAVE_MVEC 1
#else
#define HAVE_MVEC 0
#endif

enum { F_EXP, F_LOG1P, F_TANH, F_LOGISTIC, N_F };
static const char *fname[N_F] = {"exp", "log1p", "tanh", "logistic"};

/* ---- the grids ---- */

static unsigned long long lcg = 12345;

static double unif(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg >> 11) * 0x1.0p-53;
}

/* A random sign times 10^u, u uniform on [lo, hi]. */
static double decades(double lo, double hi)
{
    return (unif() < 0.5 ? -1 : 1) * pow(10, lo + (hi - lo) * unif());
}

static size_t grid(int f, double *x, size_t cap)
{
    size_t n = 0;
    switch (f) {
    case F_EXP:
        for (; n < 100000; n++) /* the whole range, subnormal results too */
            x[n] = -745.0 + 1454.7 * unif();
        for (; n < 150000; n++)
            x[n] = -1 + 2 * unif();
        for (; n < 160000; n++) /* tiny arguments */
            x[n] = decades(-300, -5);
        break;
    case F_LOG1P:
        for (; n < 40000; n++) /* near -1 */
            x[n] = -1 + pow(10, -15 * unif());
        for (; n < 100000; n++)
            x[n] = -0.999 + 1.999 * unif();
        for (; n < 140000; n++)
            x[n] = pow(10, 300 * unif());
        for (; n < 160000; n++)
            x[n] = decades(-300, -5);
        break;
    case F_TANH:
        for (; n < 100000; n++)
            x[n] = -20 + 40 * unif();
        for (; n < 160000; n++)
            x[n] = decades(-300, 0);
        break;
    default:
        for (; n < 100000; n++)
            x[n] = -745 + 785 * unif();
        for (; n < 160000; n++)
            x[n] = -8 + 16 * unif();
        break;
    }
    assert_true(n <= cap);
    return n;
}

static long double reference(int f, double x)
{
    long double X = x;
    switch (f) {
    case F_EXP: return expl(X);
    case F_LOG1P: return log1pl(X);
    case F_TANH: return tanhl(X);
    default: return 1.0L / (1.0L + expl(-X));
    }
}

/* |y - ref| in units of the last place of the double nearest ref. */
static double ulps(double y, long double ref)
{
    if (y == ref)
        return 0;
    int e;
    frexpl(ref, &e);
    int p = e - 53 < -1074 ? -1074 : e - 53;
    return (double)(fabsl((long double)y - ref) / ldexpl(1.0L, p));
}

static void run(const drift_vmath *vm, int f, size_t n, const double *x,
                double *y)
{
    switch (f) {
    case F_EXP: vm->exp(n, x, y); break;
    case F_LOG1P: vm->log1p(n, x, y); break;
    case F_TANH: vm->tanh(n, x, y); break;
    default: drift_vmath_logistic_with(vm, n, x, y); break;
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of 20 over 4096 arguments from the grid, ns per element. */
static double speed(const drift_vmath *vm, int f, const double *x)
{
    static double y[4096];
    double best = INFINITY;
    for (int rep = 0; rep < 20; rep++) {
        double t = now();
        for (int k = 0; k < 16; k++)
            run(vm, f, 4096, x + k * 4096, y);
        t = now() - t;
        if (t < best)
            best = t;
    }
    return best / (16 * 4096) * 1e9;
}

/* The bound each kind documents (ulps), per function. */
static double bound(int kind, int f)
{
    if (f == F_LOGISTIC) /* exp's error, an addition and a division */
        return bound(kind, F_EXP) + 2.0;
    switch (kind) {
    case DRIFT_VMATH_STRICT: return 1.0;
    case DRIFT_VMATH_FAST: return f == F_TANH ? 3.5 : 1.0;
    case DRIFT_VMATH_LIBM: return 2.0;   /* glibc's libm-test-ulps */
    default: return 4.0;                 /* glibc: libmvec within 4 ulp */
    }
}

static void test_accuracy_and_speed(void **state)
{
    (void)state;
    static double x[160000], y[160000];
    const drift_vmath *kinds[4] = {drift_vmath_get(DRIFT_VMATH_LIBM),
                                   drift_vmath_get(DRIFT_VMATH_STRICT),
                                   drift_vmath_get(DRIFT_VMATH_FAST), NULL};
#if HAVE_MVEC
    if (__builtin_cpu_supports("avx2"))
        kinds[3] = &MVEC;
#endif
    print_message("this build: %s\n", drift_vmath_describe());
    print_message("%-9s %-62s %9s %9s %9s\n", "function", "kind",
                  "max ulp", "mean ulp", "ns/elem");
    for (int f = 0; f < N_F; f++) {
        size_t n = grid(f, x, sizeof x / sizeof *x);
        for (int k = 0; k < 4; k++) {
            if (!kinds[k])
                continue;
            run(kinds[k], f, n, x, y);
            double mx = 0, sum = 0, worst = 0;
            for (size_t i = 0; i < n; i++) {
                double u = ulps(y[i], reference(f, x[i]));
                sum += u;
                if (u > mx) {
                    mx = u;
                    worst = x[i];
                }
            }
            print_message("%-9s %-62s %9.3f %9.4f %9.2f\n", fname[f],
                          kinds[k]->name, mx, sum / (double)n,
                          speed(kinds[k], f, x));
            /* 0.01 ulp for the reference's own error. */
            if (mx > bound(k, f) + 0.01)
                fail_msg("%s, %s: %.3f ulp at %.17g, over the bound %.1f",
                         fname[f], kinds[k]->name, mx, worst, bound(k, f));
        }
    }
}

/* An element's result depends on its value alone: arrays of every length
 * up to 40 at every offset up to 8 agree bitwise with the one-element
 * forms, for every kind. */
static void test_position_independence(void **state)
{
    (void)state;
    double x[64], y[64];
    for (int kind = 0; kind < 3; kind++) {
        const drift_vmath *vm = drift_vmath_get((drift_vmath_kind)kind);
        if (!vm)
            continue;
        double (*one[3])(double) = {vm->exp1, vm->log1p1, vm->tanh1};
        for (int f = 0; f < 3; f++) {
            /* log1p's domain starts at -1 */
            for (int i = 0; i < 64; i++)
                x[i] = (f == F_LOG1P ? 0.0 : -3.7) + 0.173 * i;
            for (size_t off = 0; off < 8; off++)
                for (size_t len = 1; len <= 40; len++) {
                    run(vm, f, len, x + off, y);
                    for (size_t i = 0; i < len; i++) {
                        double want = one[f](x[off + i]);
                        if (memcmp(&y[i], &want, sizeof want))
                            fail_msg("%s, %s: element %zu of %zu at offset "
                                     "%zu: %.17g, alone %.17g",
                                     fname[f], vm->name, i, len, off, y[i],
                                     want);
                    }
                }
        }
    }
    /* The build's own functions, and the logistic function. */
    for (int i = 0; i < 64; i++)
        x[i] = -3.7 + 0.173 * i;
    for (size_t len = 1; len <= 40; len++) {
        drift_vmath_logistic(len, x + 3, y);
        for (size_t i = 0; i < len; i++) {
            double want = drift_vmath_logistic1(x[3 + i]);
            assert_memory_equal(&y[i], &want, sizeof want);
        }
        drift_vmath_exp(len, x + 1, y);
        for (size_t i = 0; i < len; i++) {
            double want = drift_vmath_exp1(x[1 + i]);
            assert_memory_equal(&y[i], &want, sizeof want);
        }
    }
}

/* Infinities, NaN and the ends of the domains, as the C library has them. */
static void test_special_values(void **state)
{
    (void)state;
    double in[7] = {INFINITY, -INFINITY, NAN, 0.0, -0.0, -1.0, -2.0};
    for (int kind = 0; kind < 3; kind++) {
        const drift_vmath *vm = drift_vmath_get((drift_vmath_kind)kind);
        if (!vm)
            continue;
        for (int f = 0; f < N_F; f++) {
            double out[7];
            run(vm, f, 7, in, out);
            for (int i = 0; i < 7; i++) {
                double want = f == F_EXP     ? exp(in[i])
                              : f == F_LOG1P ? log1p(in[i])
                              : f == F_TANH  ? tanh(in[i])
                                             : 1 / (1 + exp(-in[i]));
                int same = (isnan(want) && isnan(out[i])) ||
                           (want == out[i] &&
                            signbit(want) == signbit(out[i]));
                if (!same)
                    fail_msg("%s(%g), %s: %g, the C library gives %g",
                             fname[f], in[i], vm->name, out[i], want);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accuracy_and_speed),
        cmocka_unit_test(test_position_independence),
        cmocka_unit_test(test_special_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
