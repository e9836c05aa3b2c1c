/* biascheck.c: the step-size search of biascheck.h: a stability scan,
 * then pilots at h and h/2 compared in whitened coordinates until a pair
 * agrees.  Not for making the pilot chains (runplan.c, through
 * drift_tune_ops) nor for sizing the run from the result (runplan.c). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/stop.h"
#include "base/util.h"
#include "biascheck.h"
#include "engine/stats/summary.h"
#include "oracle.h"

/* Coordinates whose statistics are kept (evenly spaced beyond it): the
 * check averages over them, and d in the millions would cost a pilot
 * more in bookkeeping than in gradients. */
#define TRACK_MAX 256
/* Batches of the batch-means estimate of autocorrelation times. */
#define N_BATCH 20
/* Steps of a stability-scan pilot. */
#define SCAN_STEPS 300
/* Factor between scanned steps, and how many the scan tries. */
#define SCAN_FACTOR 4.0
#define SCAN_TRIES 12
/* Halvings the comparison tries before it gives up. */
#define MAX_HALVINGS 12
/* A pilot whose mean squared whitened distance from the mode passes this
 * (ten posterior sds per coordinate) ran away. */
#define RUNAWAY 100.0
/* The same for a centring window, which may travel far from a centre
 * that is not the posterior's (a hundred sds per coordinate). */
#define TRAVEL 1e4
/* The centring: at most this many windows, each twice the last, within
 * half the pilots' allowance; a window fits its centre when its whitened
 * means lie within CENTRE_OK sds of it (beyond their noise) and its
 * whitened variances, shrunk towards 1 by CENTRE_PRIOR effective draws
 * (Stan's regularisation of its metric), within a factor CENTRE_VAR of
 * their median: the window runs at half the largest stable step, whose
 * discretisation bias widens every coordinate alike (by 40 % at d = 300
 * on a logistic regression) and is the pilots' to measure, while a
 * centre the posterior's bulk is far from puts some coordinates' spread
 * far from the others'. */
#define CENTRE_WINDOWS 6
#define CENTRE_OK 0.5
#define CENTRE_VAR 2.0
#define CENTRE_PRIOR 5.0
/* Points a continuous sampler's pilot keeps, and the most doubles of raw
 * points kept for its Stein check. */
#define MAX_POINTS 40000
#define MAX_RAW 20000000.0

/* The statistics of one compared pilot over the tracked coordinates. */
typedef struct stats {
    drift_biascheck_pilot p;
    double t_traj;              /* a continuous sampler's trajectory time */
    uint64_t n;                 /* draws summarised */
    double *mean, *var, *tau;   /* m each */
} stats;

typedef struct searcher {
    const drift_biascheck_config *cfg;
    const drift_tune_ops *ops;
    drift_biascheck_result *out;
    drift_err *e;
    size_t d, m;
    size_t *track;              /* m coordinates */
    double *w;                  /* d: whitened point */
    double *sum, *sum2, *bsum;  /* m, m, N_BATCH x m accumulators */
    double *draws;              /* cfg->stein_draws x d (NULL: none) */
    stats s[2];
    /* a continuous sampler's points on the time grid */
    double *pts;                /* pcap x m whitened tracked coordinates */
    double *raw;                /* pcap x d points (NULL: too large) */
    size_t pn, pcap;
    int pbad;                   /* a point ran away */
    int points_mode;            /* the pilot running is measured by them */
    double scan_time;           /* trajectory time of the last pilot */
    /* the centring window's sums over all d coordinates (in its second
     * half): whitened sums, squares and batch sums, and the points' own
     * sums */
    int adapting;
    uint64_t an;
    double *asum, *asum2, *abatch, *xsum;
    double t0;                  /* when the search began */
} searcher;

/* Whether DRIFT_PLAN_TRACE is set: each pilot and centring window is then
 * described on standard error (for developers of the plan). */
static int tracing(void)
{
    static int on = -1;
    if (on < 0)
        on = getenv("DRIFT_PLAN_TRACE") != NULL;
    return on;
}

/* theta in whitened units, into t->w (all d with a dense factor, else the
 * tracked coordinates' places only). */
static void whiten(searcher *t, const double *theta)
{
    const drift_biascheck_config *cfg = t->cfg;
    size_t d = t->d;
    if (cfg->chol) {
        const double *L = cfg->chol;
        for (size_t i = 0; i < d; i++) {
            double v = theta[i] - (cfg->mode ? cfg->mode[i] : 0);
            for (size_t j = 0; j < i; j++)
                v -= L[i * d + j] * t->w[j];
            t->w[i] = v / L[i * d + i];
        }
        return;
    }
    if (t->adapting) {
        for (size_t k = 0; k < d; k++) {
            double v = theta[k] - (cfg->mode ? cfg->mode[k] : 0);
            t->w[k] = cfg->scale ? v / cfg->scale[k] : v;
        }
        return;
    }
    for (size_t a = 0; a < t->m; a++) {
        size_t k = t->track[a];
        double v = theta[k] - (cfg->mode ? cfg->mode[k] : 0);
        t->w[k] = cfg->scale ? v / cfg->scale[k] : v;
    }
}

/* The points sink of a continuous sampler's pilot. */
static void take_point(void *user, const double *theta)
{
    searcher *t = user;
    if (t->pn >= t->pcap)
        return;
    whiten(t, theta);
    double r2 = 0, *row = t->pts + t->pn * t->m;
    for (size_t a = 0; a < t->m; a++) {
        double v = t->w[t->track[a]];
        row[a] = v;
        r2 += v * v;
    }
    if (!(r2 <= RUNAWAY * (double)t->m))
        t->pbad = 1;
    if (t->raw)
        memcpy(t->raw + t->pn * t->d, theta, t->d * sizeof *theta);
    t->pn++;
}

/* st's means, variances and batch-means autocorrelation times from the
 * tracked coordinates' sums in t->sum, t->sum2 and t->bsum over n draws
 * in N_BATCH batches of blen. */
static void finish_stats(searcher *t, stats *st, uint64_t n, uint64_t blen)
{
    st->n = n;
    st->p.unstable = 0;
    double vsum = 0, se2 = 0, tmax = 1;
    for (size_t a = 0; a < t->m && n > 0; a++) {
        double mu = t->sum[a] / (double)n;
        double var = t->sum2[a] / (double)n - mu * mu;
        if (var < 0)
            var = 0;
        double bv = 0;
        for (size_t j = 0; j < N_BATCH; j++) {
            double bm = t->bsum[j * t->m + a] / (double)blen - mu;
            bv += bm * bm;
        }
        bv /= N_BATCH - 1;
        double tau = var > 0 ? (double)blen * bv / var : (double)n;
        if (!(tau >= 1))
            tau = 1;
        if (tau > (double)n)
            tau = (double)n;
        st->mean[a] = mu;
        st->var[a] = var;
        st->tau[a] = tau;
        vsum += var;
        se2 += 2 * tau * var * var / (double)n;
        tmax = tau > tmax ? tau : tmax;
    }
    st->p.vbar = vsum / (double)t->m;
    st->p.vbar_se = vsum > 0 ? sqrt(se2) / vsum : INFINITY;
    st->p.tau = tmax;
}

/* st from the points kept (after their first fifth), summed as pilot()
 * sums its steps; tau in points. */
static void point_stats(searcher *t, stats *st)
{
    size_t burn = t->pn / 5, blen = (t->pn - burn) / N_BATCH;
    uint64_t n = (uint64_t)blen * N_BATCH;
    memset(t->sum, 0, t->m * sizeof *t->sum);
    memset(t->sum2, 0, t->m * sizeof *t->sum2);
    memset(t->bsum, 0, N_BATCH * t->m * sizeof *t->bsum);
    for (size_t i = 0; i < n; i++) {
        const double *row = t->pts + (burn + i) * t->m;
        double *bs = t->bsum + (i / blen) * t->m;
        for (size_t a = 0; a < t->m; a++) {
            t->sum[a] += row[a];
            t->sum2[a] += row[a] * row[a];
            bs[a] += row[a];
        }
    }
    finish_stats(t, st, n, blen);
}

/* Runs a pilot of `steps` steps at h.  With st, the draws after the
 * first fifth are summarised there (steps is then a multiple of
 * 5 N_BATCH / 4).  *unstable gets whether it diverged or ran away.
 * Returns DRIFT_OK, or a failure that is not the step size's. */
static int pilot(searcher *t, double h, uint64_t steps, stats *st,
                 int *unstable)
{
    const drift_biascheck_config *cfg = t->cfg;
    drift_chain *c = NULL;
    double *theta = NULL;
    *unstable = 0;
    t->out->n_pilots++;
    int rc = t->ops->open(t->ops->user, h, &c, &theta);
    if (rc) {
        if (c) {
            drift_err_set(t->e, rc, "%s", c->message);
            t->ops->close(t->ops->user, c);
        }
        return rc;
    }
    uint64_t burn = steps / 5, n = steps - burn, blen = n / N_BATCH;
    if (st) {
        memset(t->sum, 0, t->m * sizeof *t->sum);
        memset(t->sum2, 0, t->m * sizeof *t->sum2);
        memset(t->bsum, 0, N_BATCH * t->m * sizeof *t->bsum);
    }
    uint64_t s;
    for (s = 0; s < steps; s++) {
        if (drift_stop_requested()) {
            t->ops->close(t->ops->user, c);
            return DRIFT_ESTOP;
        }
        c->nonfinite[0] = '\0';
        if (t->ops->calling)
            t->ops->calling(t->ops->user);
        rc = cfg->sampler->step(c->state, &drift_services_table, c, theta);
        if (rc || c->failed) {
            int code = c->failed ? c->failed : rc;
            /* Non-finite values are the step size's fault, and so is a
             * failure after steps that went through (a sampler that
             * fails its chain when the state blows up); a failure at the
             * first step is the run's, and so are bad data found as rows
             * are first read. */
            if (code != DRIFT_ENONFINITE && code != DRIFT_ENUMERIC &&
                (s == 0 || code == DRIFT_ENOMEM || code == DRIFT_ESTOP ||
                 code == DRIFT_EDATA)) {
                drift_err_set(t->e, code, "%s",
                              c->failed ? c->message : "a pilot chain failed");
                t->ops->close(t->ops->user, c);
                return code;
            }
            *unstable = 1;
            break;
        }
        c->iter++;
        whiten(t, theta);
        double r2 = 0;
        for (size_t a = 0; a < t->m; a++) {
            double v = t->w[t->track[a]];
            r2 += v * v;
        }
        if (!(r2 <= (t->adapting ? TRAVEL : RUNAWAY) * (double)t->m)) {
            if (tracing())
                fprintf(stderr, "  runaway at %llu: r2/m=%g\n",
                        (unsigned long long)s, r2 / (double)t->m);
            *unstable = 1;
            break;
        }
        if (t->adapting && s >= steps / 2 &&
            (s - steps / 2) / ((steps - steps / 2) / N_BATCH) < N_BATCH) {
            size_t d = t->d;
            uint64_t j = (s - steps / 2) / ((steps - steps / 2) / N_BATCH);
            double *ab = t->abatch + j * d;
            for (size_t k = 0; k < d; k++) {
                double v = t->w[k];
                t->asum[k] += v;
                t->asum2[k] += v * v;
                ab[k] += v;
            }
            for (size_t k = 0; k < d; k++)
                t->xsum[k] += theta[k];
            t->an++;
        }
        if (st && t->draws && s >= burn && !t->points_mode) {
            uint64_t ms = t->cfg->stein_draws, stride = n / ms;
            uint64_t i = s - burn;
            if (stride && (i + 1) % stride == 0 && (i + 1) / stride <= ms)
                memcpy(t->draws + ((i + 1) / stride - 1) * t->d, theta,
                       t->d * sizeof *theta);
        }
        if (st && !t->points_mode && s >= burn &&
            (s - burn) / blen < N_BATCH) {
            double *b = t->bsum + ((s - burn) / blen) * t->m;
            for (size_t a = 0; a < t->m; a++) {
                double v = t->w[t->track[a]];
                t->sum[a] += v;
                t->sum2[a] += v * v;
                b[a] += v;
            }
        }
    }
    t->out->steps += s;
    t->scan_time = c->traj.t;
    if (st) {
        st->t_traj = c->traj.t;
        st->p.stein = NAN;
        st->p.stein_se = NAN;
    }
    if (t->points_mode && t->pbad)
        *unstable = 1;
    if (st && t->points_mode && !*unstable && t->draws && t->raw) {
        /* the Stein draws: points evenly after the first fifth */
        size_t burn_p = t->pn / 5, ms = cfg->stein_draws;
        size_t stride = (t->pn - burn_p) / ms;
        for (size_t i = 0; stride && i < ms; i++)
            memcpy(t->draws + i * t->d,
                   t->raw + (burn_p + (i + 1) * stride - 1) * t->d,
                   t->d * sizeof *t->draws);
        n = stride ? ms : 0; /* (below: whether there are enough) */
    }
    if (st && !*unstable && t->draws && n / cfg->stein_draws > 0) {
        rc = cfg->stein(cfg->stein_user, c, t->draws, &st->p.stein,
                        &st->p.stein_se);
        if (rc == DRIFT_ESTOP || rc == DRIFT_ENOMEM) {
            t->ops->close(t->ops->user, c);
            return rc;
        }
        c->failed = 0;
    }
    t->ops->close(t->ops->user, c);
    if (tracing())
        fprintf(stderr, "pilot h=%g steps=%llu/%llu unstable=%d\n", h,
                (unsigned long long)s, (unsigned long long)steps, *unstable);
    if (!st || *unstable)
        return DRIFT_OK;
    if (t->points_mode) {
        st->p.h = h;
        st->p.steps = steps;
        if (t->pn < 5 * N_BATCH) {
            st->n = 0;
            return DRIFT_OK;
        }
        point_stats(t, st);
        return DRIFT_OK;
    }
    /* Means, variances and batch-means autocorrelation times. */
    st->p.h = h;
    st->p.steps = steps;
    finish_stats(t, st, blen * N_BATCH, blen);
    if (tracing())
        fprintf(stderr, "  vbar=%g se=%g tau=%g stein=%g\n", st->p.vbar,
                st->p.vbar_se, st->p.tau, st->p.stein);
    return DRIFT_OK;
}

/* A continuous sampler's pilot of `steps` segments whose trajectory is
 * measured every dt time units: st from its points (tau in points), its
 * Stein ratio from points evenly spaced after the first fifth. */
static int pilot_points(searcher *t, uint64_t steps, double dt, stats *st,
                        int *unstable)
{
    const drift_biascheck_config *cfg = t->cfg;
    t->pn = 0;
    t->pbad = 0;
    t->points_mode = 1;
    cfg->points(t->ops->user, take_point, t, dt);
    int rc = pilot(t, 0, steps, st, unstable);
    cfg->points(t->ops->user, NULL, NULL, 0);
    t->points_mode = 0;
    return rc;
}

/* A pilot length: at least `want` steps, whole batches after the burn-in
 * fifth. */
static uint64_t pilot_len(double want)
{
    uint64_t unit = 5 * N_BATCH;
    if (!(want < 1e15))
        want = 1e15;
    uint64_t L = (uint64_t)ceil(want / (double)unit) * unit;
    return L < unit ? unit : L;
}

/* A compared pilot at h that holds BIASCHECK_PILOT_ESS effective draws
 * per coordinate, lengthened (within the allowance) until it does.
 * *fits gets 0 when the allowance ran out first. */
static int long_pilot(searcher *t, double h, uint64_t steps, stats *st,
                      int *unstable, int *fits)
{
    *fits = 1;
    for (int k = 0; k < 6; k++) {
        if (t->out->steps + steps > t->cfg->max_steps ||
            (t->cfg->seconds > 0 && drift_now() - t->t0 > t->cfg->seconds)) {
            *fits = 0;
            return DRIFT_OK;
        }
        int rc = pilot(t, h, steps, st, unstable);
        if (rc || *unstable)
            return rc;
        t->out->tau_seen = st->p.tau;
        t->out->h_seen = h;
        double ess = (double)st->n / st->p.tau;
        if (ess >= BIASCHECK_PILOT_ESS)
            return DRIFT_OK;
        steps = pilot_len(1.25 * 1.3 * BIASCHECK_PILOT_ESS * st->p.tau);
    }
    return DRIFT_OK;
}

/* Whether pilots a (at 2h) and b (at h) agree; fills the result's
 * measures. */
static int agree(searcher *t, const stats *a, const stats *b)
{
    drift_biascheck_result *out = t->out;
    double r = a->p.vbar / b->p.vbar;
    double se = sqrt(a->p.vbar_se * a->p.vbar_se +
                     b->p.vbar_se * b->p.vbar_se);
    double dd = 0, noise = 0, noise2 = 0;
    for (size_t k = 0; k < t->m; k++) {
        double diff = a->mean[k] - b->mean[k];
        double ek = a->tau[k] * a->var[k] / (double)a->n +
                    b->tau[k] * b->var[k] / (double)b->n;
        dd += diff * diff;
        noise += ek;
        noise2 += ek * ek;
    }
    double m = (double)t->m;
    double shift2 = (dd - noise) / m;
    double shift_sd = sqrt(2 * noise2) / m;
    out->var_ratio = r;
    out->var_se = se;
    out->mean_shift = shift2 > 0 ? sqrt(shift2) : 0;
    out->stein = b->p.stein;
    out->stein_se = b->p.stein_se;
    int stein_ok = !t->cfg->stein ||
                   fabs(b->p.stein - 1) <= BIASCHECK_STEIN_TOL +
                                               b->p.stein_se;
    size_t used = strlen(out->trail);
    if (used + 60 < sizeof out->trail)
        snprintf(out->trail + used, sizeof out->trail - used,
                 "%s%.3g:%.3f/%.3f", used ? "," : "", b->p.h, r,
                 b->p.stein);
    return isfinite(r) &&
           fabs(r - 1) <= BIASCHECK_VAR_TOL + se &&
           shift2 <= BIASCHECK_MEAN_TOL * BIASCHECK_MEAN_TOL + 2 * shift_sd &&
           stein_ok;
}

static int stats_alloc(stats *s, size_t m)
{
    s->mean = drift_calloc(m, sizeof *s->mean);
    s->var = drift_calloc(m, sizeof *s->var);
    s->tau = drift_calloc(m, sizeof *s->tau);
    return s->mean && s->var && s->tau ? DRIFT_OK : DRIFT_ENOMEM;
}

static void stats_free(stats *s)
{
    drift_free(s->mean);
    drift_free(s->var);
    drift_free(s->tau);
}

/* The largest stable step of the scan from x into *h (0 when none is). */
static int scan(searcher *t, double x, double *h)
{
    const drift_biascheck_config *cfg = t->cfg;
    int unstable;
    int rc = pilot(t, x, SCAN_STEPS, NULL, &unstable);
    if (rc)
        return rc;
    if (!unstable) {
        for (int k = 0; k < SCAN_TRIES && x * SCAN_FACTOR < cfg->hi &&
                        t->out->steps + SCAN_STEPS <= cfg->max_steps;
             k++) {
            rc = pilot(t, x * SCAN_FACTOR, SCAN_STEPS, NULL, &unstable);
            if (rc)
                return rc;
            if (unstable)
                break;
            x *= SCAN_FACTOR;
        }
        *h = x;
        return DRIFT_OK;
    }
    for (int k = 0; k < SCAN_TRIES && x / SCAN_FACTOR > cfg->lo &&
                    t->out->steps + SCAN_STEPS <= cfg->max_steps;
         k++) {
        x /= SCAN_FACTOR;
        rc = pilot(t, x, SCAN_STEPS, NULL, &unstable);
        if (rc)
            return rc;
        if (!unstable) {
            *h = x;
            return DRIFT_OK;
        }
    }
    *h = 0;
    return DRIFT_OK;
}


/* Whether the centring window just run fits the run's centre and metric:
 * every coordinate's whitened mean within CENTRE_OK of 0 beyond three of
 * its standard errors (batch means), and its whitened variance, shrunk
 * towards 1 by CENTRE_PRIOR effective draws, within a factor CENTRE_VAR. */
static int centre_fits(searcher *t, double *score)
{
    size_t d = t->d;
    double n = (double)t->an, blen = n / N_BATCH, off = 0, q = 0;
    size_t worst = 0;
    double *lv = drift_malloc_array(d ? d : 1, sizeof *lv);
    *score = INFINITY;
    if (!lv)
        return 0;
    for (size_t k = 0; k < d; k++) {
        double mu = t->asum[k] / n;
        double var = t->asum2[k] / n - mu * mu;
        double bv = 0;
        for (size_t j = 0; j < N_BATCH; j++) {
            double bm = t->abatch[j * d + k] / blen - mu;
            bv += bm * bm;
        }
        bv /= N_BATCH - 1;
        double neff = bv > 0 ? var / bv * N_BATCH : n; /* n / tau */
        neff = neff > n ? n : neff < 1 ? 1 : neff;
        double v = (neff * (var > 0 ? var : 0) + CENTRE_PRIOR) /
                   (neff + CENTRE_PRIOR);
        double o = fabs(mu) - 3 * sqrt((var > 0 ? var : 0) / neff);
        if (o > off) {
            off = o;
            worst = k;
        }
        lv[k] = log(v);
    }
    double med = drift_summary_quantile(lv, d, 0.5);
    for (size_t k = 0; k < d; k++)
        q = fabs(lv[k] - med) > q ? fabs(lv[k] - med) : q;
    drift_free(lv);
    if (tracing())
        fprintf(stderr, "  centre: n=%g mean off %g (coordinate %zu), "
                "max|log var - median| %g (median %g)\n", n, off, worst, q,
                med);
    *score = off / CENTRE_OK + q / log(CENTRE_VAR);
    return off <= CENTRE_OK && q <= log(CENTRE_VAR);
}

/* The centring, where the runner can move the run's centre
 * (cfg->recentre): a window at half the stable step *hs from the usual
 * start (a draw of the Gaussian at the centre); where its draws' second
 * half does not fit the centre and its metric (centre_fits), the centre
 * moves to their mean (the runner makes the control variates and the
 * metric there), the stable step is scanned again from *hs, and the next
 * window, twice as long, checks the new centre.  A hierarchical model's
 * joint mode can lie many posterior sds from its bulk (the group scales'
 * mode is not their posterior's); at the mode of a regression the first
 * window fits and nothing changes.  Where no window fits, the centre
 * whose window fit best is kept (moves that made things worse are
 * undone).  *fits 1 when a window fit. */
static int centre(searcher *t, double *hs, int *fits)
{
    const drift_biascheck_config *cfg = t->cfg;
    *fits = 1;
    if (!cfg->recentre)
        return DRIFT_OK;
    size_t d = t->d;
    int rc = DRIFT_OK;
    t->asum = drift_calloc(d, sizeof(double));
    t->asum2 = drift_calloc(d, sizeof(double));
    t->abatch = drift_calloc(N_BATCH * d, sizeof(double));
    t->xsum = drift_calloc(d, sizeof(double));
    double *best = drift_malloc_array(d, sizeof(double));
    double best_score = INFINITY, best_hs = *hs;
    int moved = 0; /* the centre is not the best one */
    if (!t->asum || !t->asum2 || !t->abatch || !t->xsum || !best) {
        rc = drift_err_set(t->e, DRIFT_ENOMEM,
                           "out of memory checking the run's centre");
        goto out;
    }
    *fits = 0;
    uint64_t L = pilot_len((double)cfg->min_steps);
    for (int w = 0; w < CENTRE_WINDOWS && *hs > 0; w++, L *= 2) {
        if (t->out->steps + L > cfg->max_steps / 2)
            break;
        memset(t->asum, 0, d * sizeof(double));
        memset(t->asum2, 0, d * sizeof(double));
        memset(t->abatch, 0, N_BATCH * d * sizeof(double));
        memset(t->xsum, 0, d * sizeof(double));
        t->an = 0;
        t->adapting = 1;
        int unstable;
        rc = pilot(t, *hs / 2, L, NULL, &unstable);
        t->adapting = 0;
        if (rc)
            goto out;
        if (unstable || t->an < 2 * N_BATCH) {
            *hs /= 2;
            continue;
        }
        double score;
        if (centre_fits(t, &score)) {
            *fits = 1;
            break;
        }
        if (score < best_score) {
            best_score = score;
            best_hs = *hs;
            memcpy(best, cfg->mode, d * sizeof *best);
        }
        for (size_t k = 0; k < d; k++)
            t->xsum[k] /= (double)t->an;
        if ((rc = cfg->recentre(cfg->recentre_user, t->xsum)))
            goto out;
        moved = 1;
        t->out->recentred++;
        if ((rc = scan(t, *hs, hs)))
            goto out;
    }
    if (!*fits && moved && isfinite(best_score)) {
        if ((rc = cfg->recentre(cfg->recentre_user, best)))
            goto out;
        *hs = best_hs;
    }
out:
    drift_free(best);
    drift_free(t->asum);
    drift_free(t->asum2);
    drift_free(t->abatch);
    drift_free(t->xsum);
    t->asum = t->asum2 = t->abatch = t->xsum = NULL;
    return rc;
}

static int search(searcher *t)
{
    const drift_biascheck_config *cfg = t->cfg;
    drift_biascheck_result *out = t->out;
    double hs;
    int rc = scan(t, cfg->h0, &hs);
    if (rc)
        return rc;
    int centred = 1;
    if (hs > 0 && (rc = centre(t, &hs, &centred)))
        return rc;
    out->centred = centred;
    out->h_stable = hs;
    if (hs == 0) {
        /* Nothing was stable: the smallest step scanned, unverified. */
        out->h = cfg->h0 / pow(SCAN_FACTOR, SCAN_TRIES);
        if (out->h <= cfg->lo)
            out->h = cfg->h0;
        return DRIFT_OK;
    }
    stats *a = &t->s[0], *b = &t->s[1];
    double h = hs / 2;
    uint64_t L = pilot_len((double)cfg->min_steps);
    int unstable = 1, fits = 1;
    /* The first of a pair: stable over a long pilot too. */
    for (int k = 0; k < MAX_HALVINGS && unstable; k++) {
        rc = long_pilot(t, h, L, a, &unstable, &fits);
        if (rc)
            return rc;
        if (!fits)
            break;
        if (unstable)
            h /= 2;
    }
    out->h = h;
    out->tau = NAN;
    if (unstable || !fits)
        return DRIFT_OK;
    for (int k = 0; k < MAX_HALVINGS; k++) {
        double hb = h / 2;
        /* At half the step a chain needs about twice the steps. */
        uint64_t Lb = pilot_len(2.0 * (double)a->p.steps);
        rc = long_pilot(t, hb, Lb, b, &unstable, &fits);
        if (rc)
            return rc;
        out->h = hb;
        if (!fits)
            return DRIFT_OK;
        if (!unstable) {
            out->tau = b->p.tau;
            if (agree(t, a, b)) {
                out->verified = 1;
                return DRIFT_OK;
            }
            stats tmp = *a;
            *a = *b;
            *b = tmp;
        }
        h = hb;
    }
    return DRIFT_OK;
}

static int searcher_init(searcher *t, const drift_biascheck_config *cfg,
                         const drift_tune_ops *ops,
                         drift_biascheck_result *out, drift_err *e)
{
    memset(out, 0, sizeof *out);
    out->tau = NAN;
    out->tau_seen = NAN;
    out->var_ratio = NAN;
    out->var_se = NAN;
    out->stein = NAN;
    out->stein_se = NAN;
    memset(t, 0, sizeof *t);
    t->t0 = drift_now();
    t->cfg = cfg;
    t->ops = ops;
    t->out = out;
    t->e = e;
    t->d = cfg->d;
    t->m = t->d < TRACK_MAX ? t->d : TRACK_MAX;
    if (t->m == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the step-size check needs parameters");
    t->track = drift_calloc(t->m, sizeof *t->track);
    t->w = drift_calloc(t->d, sizeof *t->w);
    t->sum = drift_calloc(t->m, sizeof *t->sum);
    t->sum2 = drift_calloc(t->m, sizeof *t->sum2);
    t->bsum = drift_calloc(N_BATCH * t->m, sizeof *t->bsum);
    if (cfg->stein && cfg->stein_draws)
        t->draws = drift_malloc_array(cfg->stein_draws * t->d,
                                      sizeof(double));
    if (cfg->points) {
        t->pcap = MAX_POINTS;
        t->pts = drift_malloc_array(t->pcap * t->m, sizeof(double));
        if ((double)t->pcap * (double)t->d <= MAX_RAW)
            t->raw = drift_malloc_array(t->pcap * t->d, sizeof(double));
        if (!t->pts)
            return drift_err_set(e, DRIFT_ENOMEM,
                                 "out of memory checking the run");
    }
    if (t->track && t->w && t->sum && t->sum2 && t->bsum &&
        (t->draws || !cfg->stein || !cfg->stein_draws) &&
        !stats_alloc(&t->s[0], t->m) && !stats_alloc(&t->s[1], t->m)) {
        for (size_t a = 0; a < t->m; a++)
            t->track[a] = (size_t)((double)a * (double)t->d / (double)t->m);
        return DRIFT_OK;
    }
    return drift_err_set(e, DRIFT_ENOMEM, "out of memory checking the run");
}

static void searcher_free(searcher *t)
{
    stats_free(&t->s[0]);
    stats_free(&t->s[1]);
    drift_free(t->track);
    drift_free(t->w);
    drift_free(t->sum);
    drift_free(t->sum2);
    drift_free(t->bsum);
    drift_free(t->draws);
    drift_free(t->pts);
    drift_free(t->raw);
}

int drift_biascheck_step_search(const drift_biascheck_config *cfg,
                                const drift_tune_ops *ops,
                                drift_biascheck_result *out, drift_err *e)
{
    searcher t;
    int rc = searcher_init(&t, cfg, ops, out, e);
    if (!rc)
        rc = search(&t);
    searcher_free(&t);
    return rc;
}

/* The continuous sampler's measure: a short pilot for the time a segment
 * takes, then pilots measured on the time grid (about two points a
 * segment), lengthened until they hold BIASCHECK_PILOT_ESS effective
 * points; st->p.tau is converted to time units and t_traj kept. */
static int measure_points(searcher *t, stats *st, int *unstable, int *fits)
{
    const drift_biascheck_config *cfg = t->cfg;
    *fits = 1;
    int rc = pilot(t, 0, SCAN_STEPS, NULL, unstable);
    if (rc || *unstable)
        return rc;
    double seg = t->scan_time / SCAN_STEPS;
    if (!(seg > 0) || !isfinite(seg)) {
        *unstable = 1;
        return DRIFT_OK;
    }
    double dt = seg / 2;
    uint64_t steps = pilot_len((double)cfg->min_steps);
    for (int k = 0; k < 6; k++) {
        if (t->out->steps + steps > cfg->max_steps) {
            *fits = 0;
            return DRIFT_OK;
        }
        rc = pilot_points(t, steps, dt, st, unstable);
        if (rc || *unstable || st->n == 0)
            return rc;
        double ess = (double)st->n / st->p.tau;
        if (ess >= BIASCHECK_PILOT_ESS && t->pn < t->pcap) {
            st->p.tau *= dt;
            return DRIFT_OK;
        }
        /* more segments for more effective points; a coarser grid when
         * the points would not fit */
        double want = 1.3 * BIASCHECK_PILOT_ESS * st->p.tau * 1.25;
        double grow = fmax(2.0, want / (double)st->n);
        steps = pilot_len((double)steps * grow);
        double pts = (double)t->pn * grow;
        if (pts > 0.8 * (double)t->pcap)
            dt *= ceil(pts / (0.8 * (double)t->pcap));
    }
    st->p.tau *= dt;
    return DRIFT_OK;
}

int drift_biascheck_measure(const drift_biascheck_config *cfg,
                            const drift_tune_ops *ops, double h,
                            drift_biascheck_result *out,
                            drift_biascheck_pilot *pilot_out,
                            double *t_traj, int *enough, drift_err *e)
{
    searcher t;
    int rc = searcher_init(&t, cfg, ops, out, e);
    int unstable = 0, fits = 1;
    *enough = 0;
    *t_traj = NAN;
    if (!rc && cfg->points)
        rc = measure_points(&t, &t.s[0], &unstable, &fits);
    else if (!rc)
        rc = long_pilot(&t, h, pilot_len((double)cfg->min_steps), &t.s[0],
                        &unstable, &fits);
    if (!rc && !unstable && t.s[0].n > 0) {
        *pilot_out = t.s[0].p;
        *t_traj = t.s[0].t_traj;
        *enough = fits && (double)t.s[0].n / t.s[0].p.tau >=
                              BIASCHECK_PILOT_ESS;
        out->h = h;
        out->tau = t.s[0].p.tau;
        out->stein = t.s[0].p.stein;
        out->stein_se = t.s[0].p.stein_se;
    } else if (!rc) {
        pilot_out->unstable = 1;
    }
    searcher_free(&t);
    return rc;
}

int drift_biascheck_compare(const drift_biascheck_config *cfg,
                            const drift_tune_ops *ops, double h,
                            drift_biascheck_result *out, int *checked,
                            int *ok, drift_err *e)
{
    searcher t;
    int rc = searcher_init(&t, cfg, ops, out, e);
    int unstable = 0, fits = 1;
    stats *a = &t.s[0], *b = &t.s[1];
    *checked = 0;
    *ok = 0;
    out->h = h;
    if (!rc)
        rc = long_pilot(&t, h, pilot_len((double)cfg->min_steps), a,
                        &unstable, &fits);
    if (!rc && !unstable && a->n > 0)
        out->tau = a->p.tau;
    if (!rc && unstable) {
        /* the step itself diverges: checked, and wrong */
        *checked = 1;
        out->h_stable = 0;
    } else if (!rc && fits && a->n > 0) {
        out->h_stable = h;
        out->tau = a->p.tau;
        rc = long_pilot(&t, h / 2, pilot_len(2.0 * (double)a->p.steps), b,
                        &unstable, &fits);
        if (!rc && fits && !unstable && b->n > 0) {
            *checked = (double)a->n / a->p.tau >= BIASCHECK_PILOT_ESS &&
                       (double)b->n / b->p.tau >= BIASCHECK_PILOT_ESS;
            /* the Stein ratio that matters is the given step's */
            double sb = b->p.stein, sbe = b->p.stein_se;
            b->p.stein = a->p.stein;
            b->p.stein_se = a->p.stein_se;
            *ok = agree(&t, a, b);
            b->p.stein = sb;
            b->p.stein_se = sbe;
            out->verified = *ok;
        } else if (!rc && unstable) {
            *checked = 1;
        }
    }
    searcher_free(&t);
    return rc;
}
