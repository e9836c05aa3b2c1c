/* vmath.h: exp, log1p, tanh and the logistic function over arrays, for the
 * AD kernels' batches (ad.c, dist.c), from SLEEF's vectorised functions
 * where configure found SLEEF, else from the C library one element at a
 * time.  Not for the rest of the language's arithmetic (plain libm).
 *
 * Which SLEEF functions is the build's choice (configure
 * --with-vector-math):
 *   strict  (the default) SLEEF's 1-ulp functions without FMA ("cinz"):
 *           bitwise the same on every x86-64 CPU, whichever vector unit
 *           (SSE2, AVX, AVX-512) runs them;
 *   fast    SLEEF's FMA functions ("finz"), tanh at 3.5 ulp: bitwise the
 *           same on every CPU with FMA (AVX2 or AVX-512); strict's on a
 *           CPU without;
 *   libm    the C library's exp, log1p, tanh, one element at a time.
 * In every build an element's result depends on its value alone: not on
 * its place in the array, the array's length or alignment, the batch or
 * the number of threads (a short tail is padded to a whole vector, and the
 * one-element functions below are the same functions).  So results are
 * reproducible for a given build on a given CPU (strict: on any x86-64). */
#ifndef DRIFT_VMATH_H
#define DRIFT_VMATH_H

#include <stddef.h>

/* y[k] = f(x[k]) for k < n; y may be x. */
void drift_vmath_exp(size_t n, const double *x, double *y);
void drift_vmath_log1p(size_t n, const double *x, double *y);
void drift_vmath_tanh(size_t n, const double *x, double *y);
/* 1 / (1 + exp(-x)), without overflow. */
void drift_vmath_logistic(size_t n, const double *x, double *y);

/* The same functions of one value (bitwise equal to the array forms). */
double drift_vmath_exp1(double x);
double drift_vmath_log1p1(double x);
double drift_vmath_tanh1(double x);
double drift_vmath_logistic1(double x);

/* What this build and CPU use, e.g. "SLEEF 3.5.1 strict (1 ulp, no FMA),
 * AVX-512": for output headers and benchmarks. */
const char *drift_vmath_describe(void);

/* ---- every kind, for tests and benchmarks ---- */

typedef enum drift_vmath_kind {
    DRIFT_VMATH_LIBM = 0,
    DRIFT_VMATH_STRICT = 1,
    DRIFT_VMATH_FAST = 2
} drift_vmath_kind;

typedef struct drift_vmath {
    void (*exp)(size_t n, const double *x, double *y);
    void (*log1p)(size_t n, const double *x, double *y);
    void (*tanh)(size_t n, const double *x, double *y);
    double (*exp1)(double);
    double (*log1p1)(double);
    double (*tanh1)(double);
    const char *name;       /* as drift_vmath_describe */
} drift_vmath;

/* The functions of kind k on this CPU (fast without FMA: strict's), or
 * NULL when the build has no SLEEF.  The build's own kind is what the
 * functions above use. */
const drift_vmath *drift_vmath_get(drift_vmath_kind k);
drift_vmath_kind drift_vmath_build_kind(void);

/* The logistic function from the exp of vm (drift_vmath_logistic is this
 * with the build's kind). */
void drift_vmath_logistic_with(const drift_vmath *vm, size_t n,
                               const double *x, double *y);

#endif
