/* precond.h: the diagonal preconditioner P that sgld, psgld, sghmc, sgnht
 * and msgnht share (hyperparameter precond; sgld.c's top comment says
 * what P is and why it moves as it does): its window update, and the
 * refusals of a precond the run cannot give.  A header of static
 * functions beside the plugins, each plugin a module of its own, linking
 * nothing of drift's. */
#ifndef DRIFT_PLUGINS_PRECOND_H
#define DRIFT_PLUGINS_PRECOND_H

#include <math.h>
#include <stdio.h>

#include <drift/sampler.h>

/* precond=auto under cv: dense up to this many parameters (its products
 * cost d^2 a step, a minibatch's n d), the diagonal beyond. */
#define AUTO_DENSE_DIM 100
/* The most an entry of P moves, as a factor, at one window's end. */
#define PRECOND_CLAMP 10.0

/* The smallest of m[0..n) (1 when there is none worth dividing by). */
static inline double min_of(const double *m, size_t n)
{
    double x = INFINITY;
    for (size_t k = 0; k < n; k++)
        x = m[k] < x ? m[k] : x;
    return n && x > 0 && isfinite(x) ? x : 1.0;
}

/* P after a window's end (see sgld.c's top): the engine's new M^-1 times
 * min0 / min M^-1, each entry within a factor PRECOND_CLAMP of what it
 * was, and no larger than what the gradients seen since the last window
 * allow, 1 / (h_eff mean g_j^2), unless it already was: E[g_j^2] is at
 * least the curvature, so the step stays stable, and a chain still
 * travelling (large gradients) gets smaller steps, not larger.  g2 (sums
 * of g_j^2 over *n_g2 steps) restarts. */
static inline void precond_update(double *P, double *buf, double *g2,
                                  double *n_g2, double min0, double h_eff,
                                  const drift_services *svc, drift_chain *c)
{
    size_t n = svc->metric_get(c, buf);
    double k = min0 / min_of(buf, n);
    for (size_t j = 0; j < n; j++) {
        double want = k * buf[j];
        if (want > 0 && isfinite(want))
            want = fmin(fmax(want, P[j] / PRECOND_CLAMP),
                        P[j] * PRECOND_CLAMP);
        else
            want = P[j];
        if (*n_g2 > 0 && g2[j] > 0) {
            double cap = *n_g2 / (h_eff * g2[j]);
            if (want > cap)
                want = cap > P[j] ? cap : P[j];
        }
        P[j] = want;
        g2[j] = 0;
    }
    *n_g2 = 0;
}

/* Refuses, through svc->fail, a precond this run cannot give: one from
 * the mode (precond=mode or dense: from_mode) without --gradient cv (cv),
 * or one learned in warmup (learned) without slow windows.  name is the
 * sampler's; instead what to use without cv ("precond=warmup").  Returns
 * DRIFT_OK when the run can give it. */
static inline int precond_refuse(const drift_services *svc, drift_chain *c,
                                 const char *name, int from_mode,
                                 int learned, int cv, const char *instead)
{
    char msg[240];
    if (from_mode && !cv) {
        snprintf(msg, sizeof msg,
                 "%s: precond=mode and precond=dense need the curvature at "
                 "the mode: run with --gradient cv (or use %s)",
                 name, instead);
        return svc->fail(c, msg);
    }
    if (learned && svc->run_info(c)->base_window == 0) {
        snprintf(msg, sizeof msg,
                 "%s: precond=warmup learns the metric in warmup's slow "
                 "windows: give --warmup 20 or more (150 or more for "
                 "Stan's windows)",
                 name);
        return svc->fail(c, msg);
    }
    return DRIFT_OK;
}

#endif
