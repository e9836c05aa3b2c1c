/* watch.c: the engine watching a minibatch chain as it runs.
 * From a reference window (the second half of warmup, or
 * iterations 50-149 without one) it learns the range of lp__ and each
 * parameter's spread; after it, it warns once when lp__ stays far below
 * that range (a chain running away: a step size too large for the
 * curvature it met), once when a parameter's moves over a block of
 * iterations shrink to a thousandth of its spread (a chain that stopped:
 * a thermostat or friction grown huge, a preconditioner collapsed, a
 * coordinate so large that steps no longer change it), and once when the
 * reference window's lp__ was already far below the chain's first lp__
 * or, under --gradient cv, the mode's (a chain that left the posterior
 * at once: a sampler moves uphill from any starting point towards the
 * posterior's typical set, d/2 below the mode).  "Far" is d + 10 sqrt(d)
 * + 20 in log density (d/2 with standard deviation sqrt(d/2) for a
 * Gaussian posterior).  Not for
 * failing chains (emit.c fails a chain whose draws are not finite) nor
 * for the checks after a run (stats/checks.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/msg.h"
#include "base/util.h"
#include "ckptio.h"
#include "ext.h"
#include "shard.h"
#include "watch.h"

/* Coordinates beyond which only lp__ is watched (four vectors of d). */
#define MAX_WATCHED_DIM ((size_t)1 << 22)

/* A warning on standard error, as the warn service prints one (this file
 * sits below the services: oracle.c names the runaway in its failure
 * messages). */
static void warn(const drift_chain *c, const char *msg)
{
    /* a pilot chain of the step-size search says nothing; across ranks
     * the group's writer speaks for its ranks */
    if (c->mute || (c->ext.shard && !c->ext.shard->writer))
        return;
    fprintf(drift_msg_stream(), "drift: warning: chain %u: %s\n", c->id, msg);
}

/* What a checkpoint holds of a watch. */
typedef struct watch_core {
    uint64_t ref_from, ref_to;  /* reference iterations [from, to) */
    uint64_t block_from;        /* first iteration of the current block */
    uint64_t below;             /* draws in a row below thr */
    uint64_t below_from;        /* the first of them */
    uint64_t runaway_at;        /* where a runaway began (warned) */
    double n;                   /* reference draws of theta */
    double lp_n, lp_mean, lp_m2, lp_min, lp_max;
    double thr;                 /* lp__ below this is far below */
    double lp_first;            /* lp__ of iteration 0 (NaN: none) */
    int32_t ready;              /* the reference is complete */
    int32_t warned_runaway, warned_stuck, warned_mode;
} watch_core;

struct drift_watch {
    watch_core k;
    size_t d;                   /* coordinates watched (0: lp__ only) */
    double *mean, *m2;          /* reference mean and sums of squares */
    double *lo, *hi;            /* the current block's range */
    char note[96];
};

void drift_watch_replan(drift_chain *c)
{
    struct drift_watch *w = c->ext.watch;
    if (!w)
        return;
    uint64_t warmup = c->cfg->budget.warmup;
    if (warmup >= DRIFT_WATCH_MIN_WARMUP) {
        w->k.ref_from = warmup / 2;
        w->k.ref_to = warmup;
    } else {
        w->k.ref_from = 50;
        w->k.ref_to = 150;
    }
}

int drift_watch_new(drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    unsigned flags = cfg->step.sampler->flags;
    c->ext.watch = NULL;
    if ((flags & (DRIFT_SAMPLER_FULL_DATA | DRIFT_SAMPLER_CONTINUOUS)) ||
        c->d == 0)
        return DRIFT_OK;
    struct drift_watch *w = drift_calloc(1, sizeof *w);
    if (!w)
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    c->ext.watch = w;
    drift_watch_replan(c);
    w->k.lp_min = INFINITY;
    w->k.lp_max = -INFINITY;
    w->k.thr = -INFINITY;
    w->k.lp_first = NAN;
    if (c->d <= MAX_WATCHED_DIM) {
        w->d = c->d;
        w->mean = drift_calloc(4 * c->d, sizeof(double));
        if (!w->mean) {
            c->ext.watch = NULL;
            drift_free(w);
            return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
        }
        w->m2 = w->mean + c->d;
        w->lo = w->m2 + c->d;
        w->hi = w->lo + c->d;
    }
    c->ext.watch = w;
    return DRIFT_OK;
}

void drift_watch_free(drift_chain *c)
{
    if (!c->ext.watch)
        return;
    drift_free(c->ext.watch->mean);
    drift_free(c->ext.watch);
    c->ext.watch = NULL;
}

const char *drift_watch_note(const drift_chain *c)
{
    return c->ext.watch && c->ext.watch->k.warned_runaway ? c->ext.watch->note : "";
}

/* The reference standard deviation of coordinate j (0: none). */
static double ref_sd(const struct drift_watch *w, size_t j)
{
    return w->k.n > 1 ? sqrt(w->m2[j] / (w->k.n - 1)) : 0;
}

/* The parameter furthest from where the reference window had it, in its
 * standard deviations (into *z), or, without per-coordinate statistics,
 * the largest in magnitude (*z NaN). */
static size_t furthest(const struct drift_watch *w, const double *theta,
                       size_t d, double *z)
{
    size_t big = 0;
    double best = -1;
    *z = NAN;
    for (size_t j = 0; w->d && j < d; j++) {
        double sd = ref_sd(w, j);
        if (!(sd > 0))
            continue;
        double zj = fabs(theta[j] - w->mean[j]) / sd;
        if (zj > best) {
            best = zj;
            big = j;
        }
    }
    if (best >= 0) {
        *z = best;
        return big;
    }
    for (size_t j = 1; j < d; j++)
        if (fabs(theta[j]) > fabs(theta[big]))
            big = j;
    return big;
}

/* The end of the reference window: the runaway threshold, and the
 * comparisons with the first lp__ and, under a converged --gradient cv,
 * the mode's. */
static void finish_reference(drift_chain *c, struct drift_watch *w,
                             const double *theta)
{
    w->k.ready = 1;
    if (w->k.lp_n < 2)
        return;
    double range = w->k.lp_max - w->k.lp_min;
    w->k.thr = w->k.lp_min - 2 * range - 10;
    double d = (double)c->d, far = d + 10 * sqrt(d) + 20;
    const drift_cv *cv = c->run ? &c->run->cv : NULL;
    /* With a converged mode the mode's log density is the reference: the
     * first lp__ is a single minibatch estimate, which can lie far above
     * any posterior draw's. */
    int mode_ref = cv && cv->ready && cv->converged;
    if (mode_ref && w->k.lp_mean >= -cv->U - far)
        return;
    if (!mode_ref) {
        if (!(w->k.lp_mean < w->k.lp_first - far))
            return;
        char name[128], msg[700];
        /* The largest parameter in magnitude: the reference's own spread
         * is the runaway's. */
        size_t big = 0;
        for (size_t q = 1; q < c->d; q++)
            if (fabs(theta[q]) > fabs(theta[big]))
                big = q;
        drift_chain_param_name(c, big, name, sizeof name);
        snprintf(msg, sizeof msg,
                 "iteration %llu: lp__ averaged %.6g over iterations "
                 "%llu-%llu, far below its %.6g at the first iteration: "
                 "the chain moved away from the posterior instead of "
                 "towards it; %s = %.6g (unconstrained) is the largest "
                 "parameter; try a smaller step size h",
                 (unsigned long long)c->iter, w->k.lp_mean,
                 (unsigned long long)w->k.ref_from,
                 (unsigned long long)(w->k.ref_to - 1), w->k.lp_first,
                 name, theta[big]);
        w->k.warned_mode = 1;
        warn(c, msg);
        return;
    }
    double lp_mode = -cv->U;
    char name[128], msg[700];
    size_t j = 0;
    double big = -1;
    for (size_t q = 0; q < c->d; q++) {
        double sd = sqrt(cv->inv_metric[q]);
        double zq = fabs(theta[q] - cv->mode[q]) / sd;
        if (zq > big) {
            big = zq;
            j = q;
        }
    }
    drift_chain_param_name(c, j, name, sizeof name);
    snprintf(msg, sizeof msg,
             "iteration %llu: lp__ averaged %.6g over iterations %llu-%llu, "
             "far below the log density at the mode the run found "
             "(%.6g; posterior draws lie about %.3g below it): the chain "
             "is not sampling the posterior; %s = %.6g is %.3g of the "
             "mode's standard deviations from it; try a smaller step "
             "size h",
             (unsigned long long)c->iter, w->k.lp_mean,
             (unsigned long long)w->k.ref_from,
             (unsigned long long)(w->k.ref_to - 1), lp_mode, d / 2, name,
             theta[j], big);
    w->k.warned_mode = 1;
    warn(c, msg);
}

static void check_runaway(drift_chain *c, struct drift_watch *w,
                          const double *theta, double lp)
{
    if (w->k.warned_runaway || !(lp < w->k.thr)) {
        w->k.below = 0;
        return;
    }
    if (w->k.below++ == 0)
        w->k.below_from = c->iter;
    if (w->k.below < DRIFT_WATCH_RUNAWAY_DRAWS)
        return;
    w->k.warned_runaway = 1;
    w->k.runaway_at = w->k.below_from;
    snprintf(w->note, sizeof w->note,
             "; lp__ had been running away since iteration %llu",
             (unsigned long long)w->k.below_from);
    double z;
    size_t j = furthest(w, theta, c->d, &z);
    char name[128], where[96], msg[700];
    drift_chain_param_name(c, j, name, sizeof name);
    if (isnan(z))
        snprintf(where, sizeof where, "the largest parameter");
    else
        snprintf(where, sizeof where,
                 "%.3g reference standard deviations from its mean", z);
    snprintf(msg, sizeof msg,
             "iteration %llu: lp__ fell far below its range in iterations "
             "%llu-%llu (%.6g to %.6g) at iteration %llu and stayed there "
             "(now %.6g): the chain is running away; %s = %.6g is %s; "
             "try a smaller step size h",
             (unsigned long long)c->iter, (unsigned long long)w->k.ref_from,
             (unsigned long long)(w->k.ref_to - 1), w->k.lp_min,
             w->k.lp_max, (unsigned long long)w->k.below_from, lp, name,
             theta[j], where);
    warn(c, msg);
}

/* The end of a block: a parameter whose range shrank to a thousandth of
 * its reference spread. */
static void check_block(drift_chain *c, struct drift_watch *w)
{
    size_t j = 0;
    double worst = INFINITY;
    for (size_t q = 0; q < w->d; q++) {
        double sd = ref_sd(w, q);
        if (!(sd > 0))
            continue;
        double r = (w->hi[q] - w->lo[q]) / sd;
        if (r < worst) {
            worst = r;
            j = q;
        }
    }
    if (!(worst < DRIFT_WATCH_STUCK_FRACTION))
        return;
    w->k.warned_stuck = 1;
    char name[128], msg[600];
    drift_chain_param_name(c, j, name, sizeof name);
    snprintf(msg, sizeof msg,
             "iteration %llu: %s stopped moving: over iterations %llu-%llu "
             "it spanned %.3g, %.2g of its standard deviation %.3g in "
             "iterations %llu-%llu; the sampler's moves vanished (a "
             "thermostat or friction grown huge, a step size far too "
             "small, or a parameter so large that steps no longer change "
             "it)",
             (unsigned long long)c->iter, name,
             (unsigned long long)w->k.block_from,
             (unsigned long long)c->iter, w->hi[j] - w->lo[j], worst,
             ref_sd(w, j), (unsigned long long)w->k.ref_from,
             (unsigned long long)(w->k.ref_to - 1));
    warn(c, msg);
}

void drift_watch_draw(drift_chain *c, const double *theta, double lp)
{
    struct drift_watch *w = c->ext.watch;
    uint64_t it = c->iter;
    if (!w)
        return;
    if (it == 0)
        w->k.lp_first = lp;
    if (it < w->k.ref_from)
        return;
    if (it < w->k.ref_to) {
        if (isfinite(lp)) {
            double n = ++w->k.lp_n, dl = lp - w->k.lp_mean;
            w->k.lp_mean += dl / n;
            w->k.lp_m2 += dl * (lp - w->k.lp_mean);
            w->k.lp_min = fmin(w->k.lp_min, lp);
            w->k.lp_max = fmax(w->k.lp_max, lp);
        }
        if (w->d) {
            double n = ++w->k.n;
            for (size_t j = 0; j < w->d; j++) {
                double dj = theta[j] - w->mean[j];
                w->mean[j] += dj / n;
                w->m2[j] += dj * (theta[j] - w->mean[j]);
            }
        }
        return;
    }
    if (!w->k.ready) {
        finish_reference(c, w, theta);
        w->k.block_from = it;
    }
    if (!isnan(lp))
        check_runaway(c, w, theta, lp);
    if (!w->d || w->k.warned_stuck)
        return;
    if (it == w->k.block_from) {
        memcpy(w->lo, theta, w->d * sizeof *theta);
        memcpy(w->hi, theta, w->d * sizeof *theta);
        return;
    }
    for (size_t j = 0; j < w->d; j++) {
        w->lo[j] = fmin(w->lo[j], theta[j]);
        w->hi[j] = fmax(w->hi[j], theta[j]);
    }
    if (it + 1 - w->k.block_from >= DRIFT_WATCH_BLOCK) {
        check_block(c, w);
        w->k.block_from = it + 1;
    }
}

int drift_watch_ckpt(drift_chain *c)
{
    struct drift_watch *w = c->ext.watch;
    if (!w)
        return DRIFT_OK;
    int rc = drift_ckpt_block(c, &w->k, sizeof w->k);
    if (!rc && w->d)
        rc = drift_ckpt_block(c, w->mean, 4 * w->d * sizeof(double));
    if (!rc && w->k.warned_runaway)
        snprintf(w->note, sizeof w->note,
                 "; lp__ had been running away since iteration %llu",
                 (unsigned long long)w->k.runaway_at);
    return rc;
}

/* ---- the watch as a run extension (ext.h) ------------------------------- */

static int watch_open(drift_chain *c, drift_chain_result *res)
{
    (void)res;
    return drift_watch_new(c) ? DRIFT_EXT_STOP : DRIFT_EXT_IDLE;
}

static void watch_close(drift_chain *c, drift_chain_result *res, int started)
{
    (void)res;
    (void)started;
    drift_watch_free(c);
}

/* Draws reach the watch from emit.c (drift_watch_draw), not by a hook. */
const drift_run_ext drift_watch_ext = {
    .name = "watch",
    .open = watch_open,
    .replan = drift_watch_replan,
    .ckpt = drift_watch_ckpt,
    .close = watch_close,
};
