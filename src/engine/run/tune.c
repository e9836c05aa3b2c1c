/* tune.c: the step-size search of tune.h: pilot chains stepped here
 * through the services table, their draws scored (exact or
 * control-variate gradients) and compared by the kernel Stein
 * discrepancy.  Not for making the pilot chains (runplan.c, through
 * drift_tune_ops) nor for the KSD's arithmetic (stats/ksd.c). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/stop.h"
#include "base/util.h"
#include "engine/stats/ksd.h"
#include "oracle.h"
#include "rng.h"
#include "tune.h"

/* KSDs within this factor of the smallest count as a tie. */
#define TIE 1.1
/* Draws' mean |S s|^2 may exceed their mean tr(S H S) by this share (an
 * sd about 5% wide), plus three standard errors of the ratio. */
#define STEIN_TOL 0.1

/* The search's working memory. */
typedef struct tuner {
    const drift_tune_config *cfg;
    const drift_tune_ops *ops;
    drift_tune_result *out;
    size_t d, m;
    int exact;
    double *draws[DRIFT_TUNE_MAX_TRIALS]; /* m x d per trial (NULL: none) */
    double *scores;         /* m x d */
    double *wx, *ws;        /* m x d: draws and scores in the whitened
                               units (white_x, white_s) */
    double *w1, *w2;        /* d each: scratch for whitening */
    double *ref, *ref_grad, *ref_prior, *g1, *g2, *p1; /* d each */
    int have_ref;           /* ref* hold the current pilot's reference */
    double ref_U, ref_U0;   /* U and U_prior at the reference */
    double U_start;         /* U at the pilots' initial point (NaN: not
                               yet known) */
    char why[512];          /* a pilot's failure that is no divergence */
    size_t *rows;           /* score_rows */
    drift_rng rng;
    double t0;
} tuner;

/* The reference of the control-variate scores at x (d values): grad U
 * and grad U_prior there, on chain c.  Counts N. */
static int set_reference(tuner *t, drift_chain *c, const double *x)
{
    const drift_services *svc = &drift_services_table;
    memcpy(t->ref, x, t->d * sizeof *x);
    int rc = svc->grad_full(c, t->ref, t->ref_grad, &t->ref_U);
    if (!rc)
        rc = svc->grad_prior(c, t->ref, t->ref_prior, &t->ref_U0);
    t->have_ref = rc == DRIFT_OK;
    return rc;
}

/* x in the whitened units (tune.h): L^-1 x with cfg->chol, x / scale
 * with cfg->scale, else x. */
static void white_x(const tuner *t, const double *x, double *out)
{
    const double *L = t->cfg->chol, *S = t->cfg->scale;
    size_t d = t->d;
    if (L) {
        for (size_t i = 0; i < d; i++) {
            double v = x[i];
            for (size_t j = 0; j < i; j++)
                v -= L[i * d + j] * out[j];
            out[i] = v / L[i * d + i];
        }
        return;
    }
    for (size_t k = 0; k < d; k++)
        out[k] = S ? x[k] / S[k] : x[k];
}

/* A gradient (or score) in the whitened units: L' g, scale g, or g. */
static void white_s(const tuner *t, const double *g, double *out)
{
    const double *L = t->cfg->chol, *S = t->cfg->scale;
    size_t d = t->d;
    if (L) {
        for (size_t j = 0; j < d; j++) {
            double v = 0;
            for (size_t i = j; i < d; i++)
                v += L[i * d + j] * g[i];
            out[j] = v;
        }
        return;
    }
    for (size_t k = 0; k < d; k++)
        out[k] = S ? g[k] * S[k] : g[k];
}

/* A step z given in the whitened units into the parameters': L z,
 * scale z, or z. */
static void unwhite_step(const tuner *t, const double *z, double *out)
{
    const double *L = t->cfg->chol, *S = t->cfg->scale;
    size_t d = t->d;
    if (L) {
        for (size_t i = 0; i < d; i++) {
            double v = 0;
            for (size_t j = 0; j <= i; j++)
                v += L[i * d + j] * z[j];
            out[i] = v;
        }
        return;
    }
    for (size_t k = 0; k < d; k++)
        out[k] = S ? z[k] * S[k] : z[k];
}

/* The score grad log p at x into s (d values) and U(x) into *U, on chain
 * c: exact, or the control-variate estimates around the reference from
 * two halves A and B of the rows, s = (s_A + s_B) / 2, and *noise =
 * |W (s_A - s_B)|^2 / 4 (W s the score in the whitened units of
 * white_s), an unbiased estimate of the
 * trace of S s's noise
 * covariance (each half has twice s's variance, and they are
 * independent). */
static int score_at(tuner *t, drift_chain *c, const double *x, double *s,
                    double *noise, double *U)
{
    const drift_services *svc = &drift_services_table;
    size_t d = t->d;
    int rc;
    *noise = 0;
    if (t->exact) {
        if ((rc = svc->grad_full(c, x, s, U)))
            return rc;
        for (size_t k = 0; k < d; k++)
            s[k] = -s[k];
        return DRIFT_OK;
    }
    size_t n = t->cfg->score_rows / 2, N = t->cfg->N;
    double U0, Ux = 0, Ur = 0;
    if ((rc = svc->grad_prior(c, x, t->p1, &U0)))
        return rc;
    double scale = (double)N / (double)n;
    *U = t->ref_U + (U0 - t->ref_U0);
    for (int half = 0; half < 2; half++) {
        for (size_t k = 0; k < n; k++)
            t->rows[k] = (size_t)drift_rng_below(&t->rng, N);
        if ((rc = svc->grad_sum(c, x, t->rows, n, t->g1, &Ux)) ||
            (rc = svc->grad_sum(c, t->ref, t->rows, n, t->g2, &Ur)))
            return rc;
        *U += scale * (Ux - Ur) / 2;
        for (size_t k = 0; k < d; k++) {
            double sk = -(t->ref_grad[k] + (t->p1[k] - t->ref_prior[k]) +
                          scale * (t->g1[k] - t->g2[k]));
            if (half == 0) {
                s[k] = sk;
            } else {
                t->w1[k] = s[k] - sk;
                s[k] = (s[k] + sk) / 2;
            }
        }
    }
    /* the halves' difference in the whitened units */
    white_s(t, t->w1, t->w2);
    for (size_t k = 0; k < d; k++)
        *noise += t->w2[k] * t->w2[k] / 4;
    return DRIFT_OK;
}

/* Hutchinson's estimate of E tr(W grad^2 U W') over the m draws x (W the
 * whitening of white_s: L', diag(scale) or I): at each draw x_i one
 * random +-1 direction z in the whitened units, z . W (grad U(x_i + e
 * W' z) - grad U(x_i)) / e over the same rows (all of them with exact
 * scores, else score_rows random ones, scaled), e a thousandth of the
 * whitened draws' mean sd; *trace is the mean over the draws.  Two uses:
 * m exact independent draws give E KSD^2 = (E tr + d) / m in those units,
 * the level a pilot's KSD is read against; and, the Stein identity, E_p
 * |W grad log p|^2 = E_p tr(W grad^2 U W') under the target, which draws
 * spread too wide (a step's bias) break: their mean |W s|^2 exceeds
 * their mean trace.  Uses the whitened draws in t->wx. */
static int hess_trace(tuner *t, drift_chain *c, const double *x,
                      double *trace)
{
    const drift_services *svc = &drift_services_table;
    size_t d = t->d, m = t->m, N = t->cfg->N;
    /* gb: scratch of 2d doubles (the whitened scores' room, read no
     * more) */
    double *mean = t->p1, *xz = t->g1, *ga = t->g2, *gb = t->ws;
    double *z = t->w1, *step = t->w2;
    const double *wx = t->wx;
    double sd = 0;
    memset(mean, 0, d * sizeof *mean);
    for (size_t i = 0; i < m; i++)
        for (size_t k = 0; k < d; k++)
            mean[k] += wx[i * d + k] / (double)m;
    for (size_t k = 0; k < d; k++) {
        double v = 0;
        for (size_t i = 0; i < m; i++)
            v += (wx[i * d + k] - mean[k]) * (wx[i * d + k] - mean[k]);
        sd += sqrt(v / (double)(m - 1)) / (double)d;
    }
    double e = 1e-3 * (sd > 0 ? sd : 1e-3);
    size_t n = t->exact ? 0 : t->cfg->score_rows;
    double scale = n ? (double)N / (double)n : 1;
    double gn = c->noise.sd;
    c->noise.sd = 0;
    *trace = 0;
    int rc = DRIFT_OK;
    for (size_t i = 0; i < m && !rc; i++) {
        const double *xi = x + i * d;
        for (size_t k = 0; k < d; k++)
            z[k] = drift_rng_uniform(&t->rng) < 0.5 ? -e : e;
        unwhite_step(t, z, step);
        for (size_t k = 0; k < d; k++)
            xz[k] = xi[k] + step[k];
        if (t->exact) {
            /* grad U(x_i) is minus the score already computed there */
            if ((rc = svc->grad_full(c, xz, ga, NULL)))
                break;
            for (size_t k = 0; k < d; k++)
                ga[k] += t->scores[i * d + k];
        } else {
            /* both on the same rows, so that their difference is the
             * curvature's and not the rows' */
            for (size_t k = 0; k < n; k++)
                t->rows[k] = (size_t)drift_rng_below(&t->rng, N);
            if ((rc = svc->grad_sum(c, xz, t->rows, n, ga, NULL)) ||
                (rc = svc->grad_sum(c, xi, t->rows, n, gb, NULL)))
                break;
            for (size_t k = 0; k < d; k++) {
                ga[k] *= scale;
                gb[k] *= scale;
            }
            double *pa = gb + d; /* gb has 2d doubles at least */
            if ((rc = svc->grad_prior(c, xz, pa, NULL)))
                break;
            for (size_t k = 0; k < d; k++)
                ga[k] += pa[k];
            if ((rc = svc->grad_prior(c, xi, pa, NULL)))
                break;
            for (size_t k = 0; k < d; k++)
                ga[k] -= gb[k] + pa[k];
        }
        /* z . W (grad U(x + e W' z) - grad U(x)) / e^2 estimates the
         * trace (z here is e times the +-1 direction) */
        white_s(t, ga, step);
        double q = 0;
        for (size_t k = 0; k < d; k++)
            q += z[k] / e * step[k] / e;
        *trace += q / (double)m;
    }
    c->noise.sd = gn;
    return rc;
}

/* KSD^2 of trial j's draws, scored on chain c; +inf when a score is not
 * finite.  With estimated scores, the V-statistic less the estimated
 * noise on its diagonal, sum_i E|e_i|^2 / m^2 (c = 1): unbiased for the
 * V-statistic of exact scores.  DRIFT_ESTOP and allocation failures are
 * passed on. */
static int score_trial(tuner *t, drift_chain *c, size_t j)
{
    drift_tune_trial *tr = &t->out->trials[j];
    const double *x = t->draws[j];
    /* --grad-noise perturbs grad_full: the scores must be the model's. */
    double gn = c->noise.sd, noise = 0, U_mean = 0;
    c->noise.sd = 0;
    int rc = DRIFT_OK;
    for (size_t i = 0; i < t->m && !rc; i++) {
        double e2, U;
        rc = score_at(t, c, x + i * t->d, t->scores + i * t->d, &e2, &U);
        noise += e2;
        U_mean += U / (double)t->m;
    }
    c->noise.sd = gn;
    if (rc == DRIFT_ESTOP || rc == DRIFT_ENOMEM)
        return rc;
    if (rc) {
        tr->ksd2 = INFINITY;
        c->failed = 0; /* a pilot's failure is the pilot's score */
        return DRIFT_OK;
    }
    /* A pilot whose draws lie, on average, where the density is far
     * below its starting point's ran away: its step is too large, though
     * a gradient that stays bounded far out (a logistic regression's)
     * keeps its values finite, and its few draws, far apart, barely
     * interact in the kernel.  Posterior draws lie d/2 +- sqrt(d/2) above
     * the mode's U; the margin allows for a start at the mode. */
    double dd = (double)t->d;
    if (isfinite(t->U_start) &&
        !(U_mean <= t->U_start + dd + 10 * sqrt(dd) + 10)) {
        tr->ksd2 = INFINITY;
        tr->ran_away = 1;
        return DRIFT_OK;
    }
    /* The draws and scores in the whitened units, and the scores' mean
     * |W s|^2, less the estimates' noise. */
    double s2 = 0;
    for (size_t i = 0; i < t->m; i++) {
        white_x(t, x + i * t->d, t->wx + i * t->d);
        white_s(t, t->scores + i * t->d, t->ws + i * t->d);
        for (size_t q = 0; q < t->d; q++)
            s2 += t->ws[i * t->d + q] * t->ws[i * t->d + q];
    }
    s2 = (s2 - noise) / (double)t->m;
    drift_ksd k;
    drift_err ke = {{0}};
    const double *kx = t->wx, *ks = t->ws;
    if (drift_ksd_imq(kx, t->d, ks, t->d, t->m, t->d, 1.0, -0.5, &k, NULL,
                      &ke)) {
        tr->ksd2 = INFINITY;
        return DRIFT_OK;
    }
    tr->ksd2 = k.ksd2 - noise / ((double)t->m * (double)t->m);
    /* What m exact independent draws would give near here. */
    double trace;
    int hrc = hess_trace(t, c, x, &trace);
    if (hrc == DRIFT_ESTOP || hrc == DRIFT_ENOMEM)
        return hrc;
    c->failed = 0;
    tr->ksd2_exact = hrc ? NAN : (fmax(trace, 0) + dd) / (double)t->m;
    tr->stein_ratio = !hrc && trace > 0 ? s2 / trace : NAN;
    return DRIFT_OK;
}

static int stop_now(void)
{
    return drift_stop_requested() != 0;
}

/* Runs and scores a pilot at step size h as the next trial. */
static int run_trial(tuner *t, double h)
{
    const drift_tune_config *cfg = t->cfg;
    drift_tune_result *out = t->out;
    size_t j = out->n_trials++;
    drift_tune_trial *tr = &out->trials[j];
    tr->h = h;
    tr->ksd2 = INFINITY;
    tr->ksd2_exact = NAN;
    tr->stein_ratio = NAN;
    tr->diverged_at = 0;
    drift_chain *c = NULL;
    double *theta = NULL;
    int rc = t->ops->open(t->ops->user, h, &c, &theta);
    if (rc) {
        /* A pilot that cannot start: the chain could not either (bad
         * data, bad options), whatever the step size. */
        if (c) {
            snprintf(t->why, sizeof t->why, "%s", c->message);
            t->ops->close(t->ops->user, c);
        }
        out->n_trials--;
        return rc;
    }
    if (isnan(t->U_start)) {
        /* Every pilot starts here: U there, once. */
        double U;
        double gn = c->noise.sd;
        c->noise.sd = 0;
        rc = drift_services_table.U_full(c, theta, &U);
        c->noise.sd = gn;
        if (rc == DRIFT_ESTOP || rc == DRIFT_ENOMEM) {
            t->ops->close(t->ops->user, c);
            return rc;
        }
        t->U_start = rc ? INFINITY : U;
        c->failed = 0;
    }
    if (!t->draws[j]) {
        t->draws[j] = drift_malloc_array(t->m * t->d, sizeof(double));
        if (!t->draws[j]) {
            t->ops->close(t->ops->user, c);
            return DRIFT_ENOMEM;
        }
    }
    /* Draws evenly from the second half: m of them, the last at the end. */
    uint64_t half = cfg->steps / 2, stride = half / t->m;
    if (stride == 0)
        stride = 1;
    uint64_t first = cfg->steps - stride * t->m;
    size_t kept = 0;
    for (uint64_t s = 0; s < cfg->steps; s++) {
        if (stop_now()) {
            t->ops->close(t->ops->user, c);
            return DRIFT_ESTOP;
        }
        c->nonfinite[0] = '\0';
        if (t->ops->calling)
            t->ops->calling(t->ops->user);
        rc = cfg->sampler->step(c->state, &drift_services_table, c, theta);
        if (rc || c->failed) {
            /* Non-finite values are the step size's fault; anything else
             * is the run's. */
            int code = c->failed ? c->failed : rc;
            if (code != DRIFT_ENONFINITE && code != DRIFT_ENUMERIC) {
                snprintf(t->why, sizeof t->why, "%s",
                         c->failed ? c->message : "a pilot chain failed");
                t->ops->close(t->ops->user, c);
                return code;
            }
            tr->diverged_at = s + 1;
            break;
        }
        c->iter++;
        if (s >= first && (s - first + 1) % stride == 0 && kept < t->m)
            memcpy(t->draws[j] + kept++ * t->d, theta, t->d * sizeof *theta);
    }
    if (!tr->diverged_at && kept == t->m) {
        c->failed = 0;
        if (!t->exact) {
            /* The reference: this pilot's mean, so that the estimates'
             * noise scales with the pilot's own spread. */
            double *mean = t->p1;
            memset(mean, 0, t->d * sizeof *mean);
            for (size_t i = 0; i < t->m; i++)
                for (size_t k = 0; k < t->d; k++)
                    mean[k] += t->draws[j][i * t->d + k] / (double)t->m;
            memcpy(t->g1, mean, t->d * sizeof *mean);
            rc = set_reference(t, c, t->g1);
            if (rc == DRIFT_ESTOP || rc == DRIFT_ENOMEM) {
                t->ops->close(t->ops->user, c);
                return rc;
            }
            c->failed = 0;
        }
        if (t->exact || t->have_ref)
            rc = score_trial(t, c, j);
        if (rc) {
            t->ops->close(t->ops->user, c);
            return rc;
        }
    } else {
        tr->diverged_at = tr->diverged_at ? tr->diverged_at : 1;
    }
    t->ops->close(t->ops->user, c);
    return DRIFT_OK;
}

/* Index of the best trial so far (smallest KSD^2; the first on ties). */
static size_t best_trial(const drift_tune_result *r)
{
    size_t b = 0;
    for (size_t j = 1; j < r->n_trials; j++)
        if (r->trials[j].ksd2 < r->trials[b].ksd2)
            b = j;
    return b;
}

static int tried(const drift_tune_result *r, double h)
{
    for (size_t j = 0; j < r->n_trials; j++)
        if (fabs(r->trials[j].h - h) <= 1e-9 * h)
            return 1;
    return 0;
}

static int out_of_time(tuner *t)
{
    if (t->cfg->seconds > 0 && drift_now() - t->t0 > t->cfg->seconds) {
        t->out->cut_short = 1;
        return 1;
    }
    return 0;
}

static int search(tuner *t, double h0, double lo, double hi)
{
    drift_tune_result *out = t->out;
    int rc;
    const double root10 = sqrt(10.0);
    /* Steps below 1e-12 of the default are not searched. */
    double floor_h = fmax(lo, h0 * 1e-12);
    if ((rc = run_trial(t, h0)))
        return rc;
    /* Up by decades while the pilots improve. */
    double h = h0;
    while (out->n_trials + 2 < DRIFT_TUNE_MAX_TRIALS && !out_of_time(t)) {
        h *= 10;
        if (!(h < hi))
            break;
        size_t before = best_trial(out);
        if ((rc = run_trial(t, h)))
            return rc;
        if (best_trial(out) == before)
            break;
    }
    /* Down by decades, when going up did not help. */
    if (best_trial(out) == 0) {
        h = h0;
        while (out->n_trials + 2 < DRIFT_TUNE_MAX_TRIALS && !out_of_time(t)) {
            h /= 10;
            if (!(h > floor_h))
                break;
            size_t before = best_trial(out);
            if ((rc = run_trial(t, h)))
                return rc;
            if (best_trial(out) == before &&
                isfinite(out->trials[before].ksd2))
                break;
        }
    }
    /* The half-decades around the best. */
    double best_h = out->trials[best_trial(out)].h;
    const double f[2] = {1 / root10, root10};
    for (int k = 0; k < 2 && !out_of_time(t); k++) {
        double g = best_h * f[k];
        if (g > lo && g < hi && !tried(out, g) &&
            out->n_trials < DRIFT_TUNE_MAX_TRIALS)
            if ((rc = run_trial(t, g)))
                return rc;
    }
    return DRIFT_OK;
}

double drift_tune_ratio_bound(size_t m, size_t d)
{
    return 1 + STEIN_TOL + 3 * sqrt(2.0 / ((double)m * (double)(d ? d : 1)));
}

size_t drift_tune_pick(const drift_tune_result *out, size_t m, size_t d)
{
    double bound = drift_tune_ratio_bound(m, d);
    /* The best pilot among those whose draws keep the Stein identity
     * (none: among all). */
    size_t b = SIZE_MAX;
    for (size_t j = 0; j < out->n_trials; j++) {
        const drift_tune_trial *tr = &out->trials[j];
        if (isfinite(tr->ksd2) && tr->stein_ratio <= bound &&
            (b == SIZE_MAX || tr->ksd2 < out->trials[b].ksd2))
            b = j;
    }
    int kept = b != SIZE_MAX;
    if (!kept)
        b = best_trial(out);
    if (!isfinite(out->trials[b].ksd2))
        return b;
    /* The pilots whose KSD ties with it: they mixed about as well in a
     * pilot's length, and their KSDs cannot tell their biases apart.  Of
     * those that keep the identity the largest step wins, as the one that
     * mixes fastest in the chains' length; when none keeps it, the
     * smallest, whose bias is least. */
    double near = out->trials[b].ksd2 > 0 ? TIE * TIE * out->trials[b].ksd2
                                          : 0;
    size_t pick = b;
    for (size_t j = 0; j < out->n_trials; j++) {
        const drift_tune_trial *tr = &out->trials[j];
        if (!(tr->ksd2 <= near))
            continue;
        if (kept ? tr->stein_ratio <= bound && tr->h > out->trials[pick].h
                 : tr->h < out->trials[pick].h)
            pick = j;
    }
    return pick;
}

/* t's working memory for cfg (t zeroed before); DRIFT_ENOMEM when some
 * allocation failed (tuner_free then frees what was made). */
static int tuner_alloc(tuner *t, const drift_tune_config *cfg,
                       const drift_tune_ops *ops, drift_tune_result *out)
{
    t->cfg = cfg;
    t->ops = ops;
    t->out = out;
    t->d = cfg->d;
    t->m = cfg->draws < 4 ? 4 : cfg->draws;
    t->t0 = drift_now();
    t->exact = cfg->N <= 2 * cfg->score_rows;
    t->U_start = NAN;
    out->exact = t->exact;
    drift_rng_seed(&t->rng, cfg->seed, 0x7475u); /* "tu": its own stream */
    t->scores = drift_malloc_array(t->m * t->d, sizeof(double));
    t->wx = drift_malloc_array(t->m * t->d, sizeof(double));
    t->ws = drift_malloc_array(t->m * t->d, sizeof(double));
    t->w1 = drift_calloc(t->d, sizeof(double));
    t->w2 = drift_calloc(t->d, sizeof(double));
    t->ref = drift_calloc(t->d, sizeof(double));
    t->ref_grad = drift_calloc(t->d, sizeof(double));
    t->ref_prior = drift_calloc(t->d, sizeof(double));
    t->g1 = drift_calloc(t->d, sizeof(double));
    t->g2 = drift_calloc(t->d, sizeof(double));
    t->p1 = drift_calloc(t->d, sizeof(double));
    t->rows = drift_calloc(cfg->score_rows ? cfg->score_rows : 1,
                           sizeof(size_t));
    return t->scores && t->ref && t->ref_grad && t->ref_prior && t->g1 &&
                   t->g2 && t->p1 && t->rows && t->wx && t->ws && t->w1 &&
                   t->w2
               ? DRIFT_OK
               : DRIFT_ENOMEM;
}

static void tuner_free(tuner *t)
{
    for (size_t j = 0; j < DRIFT_TUNE_MAX_TRIALS; j++)
        drift_free(t->draws[j]);
    drift_free(t->scores);
    drift_free(t->wx);
    drift_free(t->ws);
    drift_free(t->w1);
    drift_free(t->w2);
    drift_free(t->ref);
    drift_free(t->ref_grad);
    drift_free(t->ref_prior);
    drift_free(t->g1);
    drift_free(t->g2);
    drift_free(t->p1);
    drift_free(t->rows);
}

int drift_tune_step_size(const drift_tune_config *cfg,
                         const drift_tune_ops *ops, double h0, double lo,
                         double hi, drift_tune_result *out, drift_err *e)
{
    memset(out, 0, sizeof *out);
    tuner t;
    memset(&t, 0, sizeof t);
    int rc = tuner_alloc(&t, cfg, ops, out);
    if (!rc)
        rc = search(&t, h0, lo, hi);
    tuner_free(&t);
    out->seconds = drift_now() - t.t0;
    if (rc == DRIFT_ENOMEM && !t.why[0])
        return drift_err_set(e, rc, "out of memory choosing the step size");
    if (rc == DRIFT_ESTOP && !t.why[0])
        return drift_err_set(e, rc, "stopped while choosing the step size");
    if (rc)
        return drift_err_set(e, rc, "%s", t.why[0] ? t.why : "failed");
    size_t b = drift_tune_pick(out, t.m, t.d);
    if (!isfinite(out->trials[b].ksd2)) {
        char grid[512];
        drift_tune_format_grid(out, grid, sizeof grid);
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "no step size tried for %s's '%s' gave a "
                             "pilot chain that kept finite values (tried "
                             "%s); set it with --set %s=VALUE",
                             cfg->sampler->name,
                             cfg->sampler->hparams[cfg->param].name, grid,
                             cfg->sampler->hparams[cfg->param].name);
    }
    out->h = out->trials[b].h;
    return DRIFT_OK;
}

void drift_tune_format_grid(const drift_tune_result *r, char *buf,
                            size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < r->n_trials && used < cap; j++) {
        const drift_tune_trial *tr = &r->trials[j];
        int w;
        if (tr->ran_away)
            w = snprintf(buf + used, cap - used, "%s%.4g:ran-away",
                         j ? "," : "", tr->h);
        else if (tr->diverged_at)
            w = snprintf(buf + used, cap - used, "%s%.4g:diverged@%llu",
                         j ? "," : "", tr->h,
                         (unsigned long long)tr->diverged_at);
        else if (!isfinite(tr->ksd2))
            w = snprintf(buf + used, cap - used, "%s%.4g:inf", j ? "," : "",
                         tr->h);
        else
            w = snprintf(buf + used, cap - used, "%s%.4g:%.4g", j ? "," : "",
                         tr->h, sqrt(tr->ksd2 > 0 ? tr->ksd2 : 0));
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void drift_tune_format_ratios(const drift_tune_result *r, char *buf,
                              size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < r->n_trials && used < cap; j++) {
        const drift_tune_trial *tr = &r->trials[j];
        int w = isfinite(tr->ksd2) && isfinite(tr->stein_ratio)
                    ? snprintf(buf + used, cap - used, "%s%.4g:%.3g",
                               used ? "," : "", tr->h, tr->stein_ratio)
                    : 0;
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int drift_tune_stein(const drift_tune_config *cfg, drift_chain *c,
                     const double *x, double *ratio, double *se)
{
    drift_tune_result *out = drift_calloc(1, sizeof *out);
    tuner t;
    memset(&t, 0, sizeof t);
    *ratio = NAN;
    *se = NAN;
    int rc = out ? tuner_alloc(&t, cfg, NULL, out) : DRIFT_ENOMEM;
    if (!rc && !(t.draws[0] = drift_malloc_array(t.m * t.d, sizeof(double))))
        rc = DRIFT_ENOMEM;
    if (!rc) {
        memcpy(t.draws[0], x, t.m * t.d * sizeof *x);
        out->n_trials = 1;
        out->trials[0].stein_ratio = NAN;
        if (!t.exact) {
            /* the reference at the draws' mean, as for a pilot */
            memset(t.g1, 0, t.d * sizeof *t.g1);
            for (size_t i = 0; i < t.m; i++)
                for (size_t k = 0; k < t.d; k++)
                    t.g1[k] += x[i * t.d + k] / (double)t.m;
            memcpy(t.p1, t.g1, t.d * sizeof *t.p1);
            rc = set_reference(&t, c, t.p1);
        }
        if (!rc)
            rc = score_trial(&t, c, 0);
    }
    if (!rc) {
        *ratio = out->trials[0].stein_ratio;
        /* |W s|^2 over m draws of d coordinates, and one Hutchinson probe
         * a draw, both about as noisy as a variance of m d values */
        *se = sqrt(2.0 / ((double)t.m * (double)(t.d ? t.d : 1))) *
              sqrt(2.0);
    }
    tuner_free(&t);
    drift_free(out);
    return rc;
}
