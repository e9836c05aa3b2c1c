/* vmath.c: array exp, log1p, tanh and logistic (see vmath.h): loops that
 * feed SLEEF's vector functions whole vectors (the last one padded, so an
 * element's result never depends on where it lies), chosen once per
 * process by the CPU's vector unit within the build's family of
 * functions, or the C library's functions one at a time.  Not for any
 * other arithmetic. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vmath.h"

#if DRIFT_HAVE_SLEEF && defined(__x86_64__) && defined(__clang__)
/* clang (the fuzzing builds) does not define a unit's macros under a
 * target pragma, so sleef.h would declare none of the vector functions
 * used below: such builds use the C library. */
#undef DRIFT_HAVE_SLEEF
#define DRIFT_HAVE_SLEEF 0
#endif

#if DRIFT_HAVE_SLEEF
#if defined(__x86_64__) && defined(__GNUC__)
/* sleef.h declares each vector unit's functions only where the compiler
 * targets that unit; declare them all (the header holds declarations
 * only: nothing here is compiled for these units but the loops below,
 * each marked with its own target and run only where the CPU has it). */
#include <x86intrin.h> /* first: its intrinsics keep their own targets */
#pragma GCC push_options
#pragma GCC target("sse2,sse4.1,avx,avx2,fma,avx512f")
#include <sleef.h>
#pragma GCC pop_options
#else
#include <sleef.h>
#endif
#endif

/* ---- the C library ---------------------------------------------------- */

static void libm_exp(size_t n, const double *x, double *y)
{
    for (size_t k = 0; k < n; k++)
        y[k] = exp(x[k]);
}

static void libm_log1p(size_t n, const double *x, double *y)
{
    for (size_t k = 0; k < n; k++)
        y[k] = log1p(x[k]);
}

static void libm_tanh(size_t n, const double *x, double *y)
{
    for (size_t k = 0; k < n; k++)
        y[k] = tanh(x[k]);
}

static double libm_exp1(double x) { return exp(x); }
static double libm_log1p1(double x) { return log1p(x); }
static double libm_tanh1(double x) { return tanh(x); }

static const drift_vmath LIBM = {libm_exp, libm_log1p, libm_tanh, libm_exp1,
                                 libm_log1p1, libm_tanh1,
                                 "C library (libm), one element at a time"};

#if DRIFT_HAVE_SLEEF

/* ---- SLEEF ----------------------------------------------------------- */

/* One element at a time through a scalar SLEEF function (the fallback on
 * CPUs other than x86-64, and every family's one-element form). */
static void each(size_t n, const double *x, double *y, double (*f)(double))
{
    for (size_t k = 0; k < n; k++)
        y[k] = f(x[k]);
}

#if defined(__x86_64__)
/* Loops over whole vectors of 2, 4 or 8 doubles; the tail goes through
 * the same function in a zero-padded vector. */
__attribute__((target("sse2"))) static void loop2(size_t n, const double *x,
                                                  double *y,
                                                  __m128d (*f)(__m128d))
{
    size_t k = 0;
    for (; k + 2 <= n; k += 2)
        _mm_storeu_pd(y + k, f(_mm_loadu_pd(x + k)));
    if (k < n) {
        double b[2] = {x[k], 0};
        _mm_storeu_pd(b, f(_mm_loadu_pd(b)));
        y[k] = b[0];
    }
}

__attribute__((target("avx"))) static void loop4(size_t n, const double *x,
                                                 double *y,
                                                 __m256d (*f)(__m256d))
{
    size_t k = 0;
    for (; k + 4 <= n; k += 4)
        _mm256_storeu_pd(y + k, f(_mm256_loadu_pd(x + k)));
    if (k < n) {
        double b[4] = {0, 0, 0, 0};
        memcpy(b, x + k, (n - k) * sizeof *b);
        _mm256_storeu_pd(b, f(_mm256_loadu_pd(b)));
        memcpy(y + k, b, (n - k) * sizeof *b);
    }
}

__attribute__((target("avx512f"))) static void loop8(size_t n,
                                                     const double *x,
                                                     double *y,
                                                     __m512d (*f)(__m512d))
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm512_storeu_pd(y + k, f(_mm512_loadu_pd(x + k)));
    if (k < n) {
        double b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        memcpy(b, x + k, (n - k) * sizeof *b);
        _mm512_storeu_pd(b, f(_mm512_loadu_pd(b)));
        memcpy(y + k, b, (n - k) * sizeof *b);
    }
}

/* strict: the "cinz" functions (no FMA), identical across SSE2, AVX and
 * AVX-512F and the pure-C scalar form. */
static void strict_exp_2(size_t n, const double *x, double *y)
{
    loop2(n, x, y, Sleef_cinz_expd2_u10sse2);
}
static void strict_log1p_2(size_t n, const double *x, double *y)
{
    loop2(n, x, y, Sleef_cinz_log1pd2_u10sse2);
}
static void strict_tanh_2(size_t n, const double *x, double *y)
{
    loop2(n, x, y, Sleef_cinz_tanhd2_u10sse2);
}
static void strict_exp_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_cinz_expd4_u10avx);
}
static void strict_log1p_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_cinz_log1pd4_u10avx);
}
static void strict_tanh_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_cinz_tanhd4_u10avx);
}
static void strict_exp_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_cinz_expd8_u10avx512fnofma);
}
static void strict_log1p_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_cinz_log1pd8_u10avx512fnofma);
}
static void strict_tanh_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_cinz_tanhd8_u10avx512fnofma);
}

/* fast: the "finz" functions (FMA), identical across AVX2, AVX-512F and
 * the pure-C FMA scalar form; tanh at 3.5 ulp. */
static void fast_exp_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_finz_expd4_u10avx2);
}
static void fast_log1p_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_finz_log1pd4_u10avx2);
}
static void fast_tanh_4(size_t n, const double *x, double *y)
{
    loop4(n, x, y, Sleef_finz_tanhd4_u35avx2);
}
static void fast_exp_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_finz_expd8_u10avx512f);
}
static void fast_log1p_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_finz_log1pd8_u10avx512f);
}
static void fast_tanh_8(size_t n, const double *x, double *y)
{
    loop8(n, x, y, Sleef_finz_tanhd8_u35avx512f);
}
#endif /* __x86_64__ */

static void strict_exp_1(size_t n, const double *x, double *y)
{
    each(n, x, y, Sleef_cinz_expd1_u10purec);
}
static void strict_log1p_1(size_t n, const double *x, double *y)
{
    each(n, x, y, Sleef_cinz_log1pd1_u10purec);
}
static void strict_tanh_1(size_t n, const double *x, double *y)
{
    each(n, x, y, Sleef_cinz_tanhd1_u10purec);
}

static drift_vmath strict_vm = {strict_exp_1, strict_log1p_1, strict_tanh_1,
                                Sleef_cinz_expd1_u10purec,
                                Sleef_cinz_log1pd1_u10purec,
                                Sleef_cinz_tanhd1_u10purec, NULL};
static drift_vmath fast_vm;
static char strict_name[128], fast_name[160];

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Picks each family's widest vector unit this CPU has. */
static void choose(void)
{
    const char *unit = "scalar";
#if defined(__x86_64__)
    __builtin_cpu_init();
    int avx512 = __builtin_cpu_supports("avx512f");
    int avx = __builtin_cpu_supports("avx");
    int fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx512) {
        strict_vm.exp = strict_exp_8;
        strict_vm.log1p = strict_log1p_8;
        strict_vm.tanh = strict_tanh_8;
        unit = "AVX-512";
    } else if (avx) {
        strict_vm.exp = strict_exp_4;
        strict_vm.log1p = strict_log1p_4;
        strict_vm.tanh = strict_tanh_4;
        unit = "AVX";
    } else {
        strict_vm.exp = strict_exp_2;
        strict_vm.log1p = strict_log1p_2;
        strict_vm.tanh = strict_tanh_2;
        unit = "SSE2";
    }
    snprintf(strict_name, sizeof strict_name,
             "SLEEF %d.%d.%d strict (1 ulp, no FMA), %s", SLEEF_VERSION_MAJOR,
             SLEEF_VERSION_MINOR, SLEEF_VERSION_PATCHLEVEL, unit);
    strict_vm.name = strict_name;
    if (fma) {
        fast_vm = (drift_vmath){
            avx512 ? fast_exp_8 : fast_exp_4,
            avx512 ? fast_log1p_8 : fast_log1p_4,
            avx512 ? fast_tanh_8 : fast_tanh_4,
            Sleef_finz_expd1_u10purecfma, Sleef_finz_log1pd1_u10purecfma,
            Sleef_finz_tanhd1_u35purecfma, fast_name};
        snprintf(fast_name, sizeof fast_name,
                 "SLEEF %d.%d.%d fast (FMA; exp, log1p 1 ulp, tanh 3.5 ulp), "
                 "%s",
                 SLEEF_VERSION_MAJOR, SLEEF_VERSION_MINOR,
                 SLEEF_VERSION_PATCHLEVEL, avx512 ? "AVX-512" : "AVX2");
        return;
    }
#else
    snprintf(strict_name, sizeof strict_name,
             "SLEEF %d.%d.%d strict (1 ulp, no FMA), %s", SLEEF_VERSION_MAJOR,
             SLEEF_VERSION_MINOR, SLEEF_VERSION_PATCHLEVEL, unit);
    strict_vm.name = strict_name;
#endif
    fast_vm = strict_vm;
    snprintf(fast_name, sizeof fast_name, "%s (no FMA here: strict)",
             strict_name);
    fast_vm.name = fast_name;
}

#endif /* DRIFT_HAVE_SLEEF */

const drift_vmath *drift_vmath_get(drift_vmath_kind k)
{
    if (k == DRIFT_VMATH_LIBM)
        return &LIBM;
#if DRIFT_HAVE_SLEEF
    pthread_once(&once, choose);
    return k == DRIFT_VMATH_FAST ? &fast_vm : &strict_vm;
#else
    return NULL;
#endif
}

drift_vmath_kind drift_vmath_build_kind(void)
{
#if DRIFT_HAVE_SLEEF && DRIFT_VMATH_FAST_BUILD
    return DRIFT_VMATH_FAST;
#elif DRIFT_HAVE_SLEEF
    return DRIFT_VMATH_STRICT;
#else
    return DRIFT_VMATH_LIBM;
#endif
}

/* The build's functions, found once. */
static const drift_vmath *vm(void)
{
    static const drift_vmath *chosen;
    const drift_vmath *v = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (!v) {
        v = drift_vmath_get(drift_vmath_build_kind());
        __atomic_store_n(&chosen, v, __ATOMIC_RELEASE);
    }
    return v;
}

const char *drift_vmath_describe(void) { return vm()->name; }

void drift_vmath_exp(size_t n, const double *x, double *y)
{
    vm()->exp(n, x, y);
}

void drift_vmath_log1p(size_t n, const double *x, double *y)
{
    vm()->log1p(n, x, y);
}

void drift_vmath_tanh(size_t n, const double *x, double *y)
{
    vm()->tanh(n, x, y);
}

double drift_vmath_exp1(double x) { return vm()->exp1(x); }
double drift_vmath_log1p1(double x) { return vm()->log1p1(x); }
double drift_vmath_tanh1(double x) { return vm()->tanh1(x); }

/* 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|) <= 1:
 * no overflow, and the same formula element by element. */
static double logistic_of(double x, double e)
{
    return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

void drift_vmath_logistic_with(const drift_vmath *v, size_t n,
                               const double *x, double *y)
{
    double t[256];
    for (size_t done = 0; done < n; done += 256) {
        size_t m = n - done < 256 ? n - done : 256;
        for (size_t k = 0; k < m; k++)
            t[k] = -fabs(x[done + k]);
        v->exp(m, t, t);
        for (size_t k = 0; k < m; k++)
            y[done + k] = logistic_of(x[done + k], t[k]);
    }
}

void drift_vmath_logistic(size_t n, const double *x, double *y)
{
    drift_vmath_logistic_with(vm(), n, x, y);
}

double drift_vmath_logistic1(double x)
{
    return logistic_of(x, vm()->exp1(-fabs(x)));
}
