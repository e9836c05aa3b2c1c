/* adapt.h: the arithmetic of warmup adaptation (engine-internal): Stan's
 * windowed schedule, dual averaging of a step size, Welford estimators of
 * a variance or covariance, and the metric they set.  Pure functions on
 * the structs below; the services that expose them to samplers are in
 * oracle.c, the calls at window ends in run.c. */
#ifndef DRIFT_ADAPT_H
#define DRIFT_ADAPT_H

#include <stddef.h>
#include <stdint.h>

#include <drift/sampler.h>

/* Slow windows a schedule can hold: they double, so 64 covers any
 * uint64_t warmup. */
#define DRIFT_ADAPT_MAX_WINDOWS 64

/* A warmup schedule: the buffers of drift_run_info and where each slow
 * window ends, as iteration counts (the window ending at 100 takes in
 * iterations up to the 100th, 0-based 99). */
typedef struct drift_adapt_schedule {
    uint64_t warmup, init_buffer, term_buffer, base_window;
    size_t n_windows;
    uint64_t window_end[DRIFT_ADAPT_MAX_WINDOWS];
} drift_adapt_schedule;

/* Stan's windowed-adaptation schedule for `warmup` iterations (the
 * defaults 75/25/50, scaled to 15%/75%/10% when they do not fit, no slow
 * window below 20 iterations, each window twice the last, the last one
 * stretched to the terminal buffer when the next would not fit). */
void drift_adapt_schedule_make(uint64_t warmup, drift_adapt_schedule *s);

/* 1 when 0-based iteration `iter` lies in a slow window of s. */
int drift_adapt_in_window(const drift_adapt_schedule *s, uint64_t iter);

/* 1 when a slow window ends once `done` iterations are complete. */
int drift_adapt_window_ends(const drift_adapt_schedule *s, uint64_t done);
/* Whether the last slow window ends when done iterations are done. */
int drift_adapt_last_window_ends(const drift_adapt_schedule *s,
                                 uint64_t done);

/* Dual averaging (the da_* services; see drift_dual_avg). */
void drift_adapt_da_restart(drift_dual_avg *da, double h0, double delta);
double drift_adapt_da_update(drift_dual_avg *da, double accept_stat);
double drift_adapt_da_final(const drift_dual_avg *da);

/* A Welford estimator of the mean and of the variance (dense == 0: d
 * values) or covariance (dense: d x d) of the points added. */
typedef struct drift_adapt_welford {
    size_t d;
    int dense;
    uint64_t n;
    double *mean;           /* d */
    double *m2;             /* sums of squared deviations: d or d x d */
    double *delta;          /* d scratch */
} drift_adapt_welford;

/* Doubles a Welford estimator needs in its memory block. */
size_t drift_adapt_welford_doubles(size_t d, int dense);
/* Lays w out over mem (drift_adapt_welford_doubles(d, dense) doubles,
 * zeroed) and starts it empty. */
void drift_adapt_welford_init(drift_adapt_welford *w, size_t d, int dense,
                              double *mem);
void drift_adapt_welford_restart(drift_adapt_welford *w);
void drift_adapt_welford_add(drift_adapt_welford *w, const double *x);
/* The sample (co)variance (n - 1 in the denominator) regularised as
 * Stan does: (n/(n+5)) S + 1e-3 (5/(n+5)) I, into out (d or d x d).
 * Returns 0, or -1 (out untouched) when fewer than two points were
 * added. */
int drift_adapt_welford_regularised(const drift_adapt_welford *w,
                                    double *out);

/* A metric: M^-1 and the factor L (L L' = M^-1) its products need. */
typedef struct drift_adapt_metric {
    drift_metric_kind kind;
    size_t d;
    double *inv;            /* M^-1: d (DIAG) or d x d (DENSE) */
    double *factor;         /* DIAG: sqrt(M^-1) (d); DENSE: the lower
                               Cholesky factor of M^-1 (d x d) */
    drift_adapt_welford est; /* the current window's points */
    drift_adapt_welford grad; /* DIAG: the gradients of U at the points
                                 that came with one (the metric
                                 sub-table's observe_grad) */
} drift_adapt_metric;

/* Doubles a metric of kind over d coordinates needs, its estimator's
 * included (0 for UNIT). */
size_t drift_adapt_metric_doubles(drift_metric_kind kind, size_t d);
/* Lays m out over mem (drift_adapt_metric_doubles doubles, zeroed) as the
 * identity. */
void drift_adapt_metric_init(drift_adapt_metric *m, drift_metric_kind kind,
                             size_t d, double *mem);
/* Adds a point (and, for a DIAG metric, the gradient of U there when grad
 * is not NULL) to the current window's estimators. */
void drift_adapt_metric_observe(drift_adapt_metric *m, const double *theta,
                                const double *grad);
/* Starts a DIAG metric from the gradient of U at the initial point
 * (nutpie's start): M^-1 = 1/|grad_k U|, bounded to [1e-10, 1e10]; a
 * coordinate where the gradient is 0 or not finite keeps its value.
 * Other kinds are left alone. */
void drift_adapt_metric_start_grad(drift_adapt_metric *m, const double *grad);
/* Sets M^-1 from the estimators and restarts them.  A DIAG metric whose
 * window had at least two gradients takes sqrt(var(theta) / var(grad U))
 * per coordinate, exactly the variance for a Gaussian target whatever
 * the points' spread (nutpie's estimate), unless last (the last slow
 * window of warmup) is set; otherwise the sample (co)variance
 * regularised as Stan does.  Returns 0, 1 when the window had too few
 * points (the metric is kept), or -1 when the dense estimate is not
 * positive definite (the metric is kept). */
int drift_adapt_metric_update(drift_adapt_metric *m, int last);
/* Sets a DIAG metric's M^-1 to inv (d values) and its factor: each
 * entry bounded to [1e-20, 1e20], one that is not a positive number
 * keeping its old value.  Other kinds are left alone. */
void drift_adapt_metric_set_diag(drift_adapt_metric *m, const double *inv);
/* Sets a DENSE metric's M^-1 to inv (d x d, symmetric) and its factor to
 * inv's Cholesky factor.  Returns 0, or -1 (the metric untouched) when inv
 * is not positive definite. */
int drift_adapt_metric_set_dense(drift_adapt_metric *m, const double *inv);

/* The lower Cholesky factor of the d x d symmetric a into l (row-major,
 * upper part zeroed; l may be a); -1 when a is not positive definite. */
int drift_adapt_cholesky(const double *a, size_t d, double *l);

/* The inverse of the d x d symmetric positive definite a into inv (d x d;
 * scratch: d x d doubles).  Returns 0, or -1 when a is not positive
 * definite. */
int drift_adapt_spd_inverse(const double *a, size_t d, double *inv,
                            double *scratch);

/* out = M^-1 v;  out = L v;  p = L'^-1 z (so p ~ N(0, M) when z ~ N(0, I)).
 * out may not alias v; p may be z. */
void drift_adapt_metric_inv_mul(const drift_adapt_metric *m, const double *v,
                                double *out);
void drift_adapt_metric_inv_sqrt_mul(const drift_adapt_metric *m,
                                     const double *v, double *out);
void drift_adapt_metric_from_normal(const drift_adapt_metric *m,
                                    const double *z, double *p);

#endif
