/* variational.c: ADVI over minibatches (see variational.h), following
 * Stan's advi.hpp, normal_meanfield.hpp and normal_fullrank.hpp step for
 * step: the same gradient estimators, step sizes, adaptation and tests. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "variational.h"

/* |mu_j| or a scale beyond it: the approximation has run away (the
 * density has no proper posterior to approximate). */
#define RUNAWAY 1e100
/* Data this small is used whole, for gradients and ELBO alike. */
#define SMALL_N 10000

struct drift_vi {
    size_t d;
    int fullrank;
    double *mu;     /* d */
    double *omega;  /* d: log scales (meanfield) */
    double *L;      /* d x d row-major lower triangle (fullrank) */
};

void drift_vi_defaults(drift_vi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iter = 10000;
    o->grad_samples = 1;
    o->elbo_samples = 100;
    o->eta = 1.0;
    o->adapt_engaged = 1;
    o->adapt_iter = 50;
    o->tol_rel_obj = 0.01;
    o->eval_elbo = 100;
}

size_t drift_vi_elbo_rows(size_t n_rows)
{
    return n_rows <= SMALL_N ? n_rows : SMALL_N;
}

/* The state of one fit: the approximation, its gradient and Stan's
 * running squared gradient, and the rows. */
typedef struct fit {
    drift_logdensity *ld;
    const drift_model *m;
    const drift_vi_opts *o;
    size_t d, np;           /* np: parameters of the family */
    drift_vi q;             /* params: mu then omega or L */
    double *par, *grad, *hist;
    double *z, *zeta, *g;   /* d each */
    size_t batch, n_elbo;
    size_t *rows;           /* batch: this step's rows */
    size_t *elbo_rows;      /* n_elbo fixed rows (NULL: all) */
    const double *init_sd;  /* d initial scales (NULL: 1) */
    /* Control variates: the snapshot point and the full-data gradient
     * there (NULL: plain minibatch estimates). */
    double *cv_at, *cv_grad, *cv_tmp;
    drift_rng rng;
    int ran_away;           /* the ascent left every finite scale */
} fit;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* n rows drawn uniformly with replacement, sorted so that a memory-mapped
 * store is read in order. */
static void draw_rows(drift_rng *rng, size_t N, size_t *rows, size_t n)
{
    for (size_t k = 0; k < n; k++)
        rows[k] = (size_t)drift_rng_below(rng, N);
    qsort(rows, n, sizeof *rows, cmp_size);
}

/* zeta = mu + S z. */
static void transform(const drift_vi *q, const double *z, double *zeta)
{
    size_t d = q->d;
    for (size_t i = 0; i < d; i++) {
        double s = q->mu[i];
        if (q->fullrank) {
            const double *Li = q->L + i * d;
            for (size_t j = 0; j <= i; j++)
                s += Li[j] * z[j];
        } else {
            s += exp(q->omega[i]) * z[i];
        }
        zeta[i] = s;
    }
}

/* The entropy of the approximation, Stan's (constant included). */
static double entropy(const drift_vi *q)
{
    double h = 0.5 * (double)q->d * (1.0 + log(2 * M_PI));
    for (size_t i = 0; i < q->d; i++)
        h += q->fullrank ? log(fabs(q->L[i * q->d + i])) : q->omega[i];
    return h;
}

/* The log density at zeta: over all rows when the gradient's batch or
 * the ELBO's set is the data, else over rows[n] scaled to N. */
static int logp(fit *f, const double *zeta, const size_t *rows, size_t n,
                double *lp, double *grad, drift_err *e)
{
    size_t N = f->m->n_rows;
    if (!rows || n >= N)
        return drift_logdensity_eval(f->ld, zeta, lp, grad, e);
    return drift_logdensity_eval_rows(f->ld, zeta, rows, n,
                                      (double)N / (double)n, lp, grad, e);
}

/* A point without a finite density (or gradient) is dropped, as Stan
 * drops it; a model's own failure is an error. */
static int dropped(int rc)
{
    return rc == DRIFT_ENUMERIC || rc == DRIFT_ENONFINITE;
}

/* The ELBO estimate: elbo_samples draws over the fixed rows, points with
 * no finite density dropped (all dropped: DRIFT_ENUMERIC). */
static int calc_elbo(fit *f, double *elbo, drift_err *e)
{
    size_t d = f->d;
    unsigned n = f->o->elbo_samples, used = 0;
    double s = 0;
    for (unsigned k = 0; k < n; k++) {
        drift_rng_normal_fill(&f->rng, d, f->z);
        transform(&f->q, f->z, f->zeta);
        double lp;
        int rc = logp(f, f->zeta, f->elbo_rows, f->n_elbo, &lp, NULL, e);
        if (rc && !dropped(rc))
            return rc;
        if (rc || !isfinite(lp))
            continue;
        s += lp;
        used++;
    }
    if (!used)
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "the log density is not finite at any of the "
                             "%u draws of the ELBO estimate",
                             n);
    /* Stan divides by all draws, dropped ones counting as 0. */
    *elbo = s / n + entropy(&f->q);
    return DRIFT_OK;
}

/* The ELBO's gradient into f->grad (mu, then omega or L): grad_samples
 * reparameterised draws, each over a fresh minibatch, plus the entropy's
 * gradient.  Points with no finite density are redrawn, up to 10 per
 * sample (then DRIFT_ENUMERIC). */
static int calc_grad(fit *f, drift_err *e)
{
    size_t d = f->d;
    unsigned n = f->o->grad_samples, tries = 0;
    double *gmu = f->grad, *gs = f->grad + d;
    memset(f->grad, 0, f->np * sizeof *f->grad);
    for (unsigned k = 0; k < n;) {
        drift_rng_normal_fill(&f->rng, d, f->z);
        transform(&f->q, f->z, f->zeta);
        const size_t *rows = NULL;
        if (f->batch < f->m->n_rows) {
            draw_rows(&f->rng, f->m->n_rows, f->rows, f->batch);
            rows = f->rows;
        }
        double lp;
        int rc = logp(f, f->zeta, rows, f->batch, &lp, f->g, e);
        if (!rc && rows && f->cv_at) {
            /* g_full(at) + the batch's g(zeta) - g(at): the same rows at
             * both points, so their noise cancels as zeta nears at. */
            rc = logp(f, f->cv_at, rows, f->batch, &lp, f->cv_tmp, e);
            for (size_t i = 0; i < d && !rc; i++)
                f->g[i] += f->cv_grad[i] - f->cv_tmp[i];
        }
        int ok = !rc;
        for (size_t i = 0; i < d && ok; i++)
            ok = isfinite(f->g[i]);
        if (!ok) {
            if (rc && !dropped(rc))
                return rc;
            if (++tries >= 10 * n) {
                char why[200];
                snprintf(why, sizeof why, "%.190s",
                         rc ? e->msg : "a non-finite gradient");
                return drift_err_set(
                    e, DRIFT_ENUMERIC,
                    "the gradient of the log density is not finite at %u "
                    "draws of the approximation (%s)",
                    tries, why);
            }
            continue;
        }
        for (size_t i = 0; i < d; i++) {
            gmu[i] += f->g[i];
            if (f->q.fullrank) {
                for (size_t j = 0; j <= i; j++)
                    gs[i * d + j] += f->g[i] * f->z[j];
            } else {
                gs[i] += f->g[i] * f->z[i];
            }
        }
        k++;
    }
    for (size_t i = 0; i < d; i++) {
        gmu[i] /= n;
        if (f->q.fullrank) {
            for (size_t j = 0; j <= i; j++)
                gs[i * d + j] /= n;
            /* d log|det L| / dL: 1/L_ii on the diagonal. */
            gs[i * d + i] += 1.0 / f->q.L[i * d + i];
        } else {
            /* the chain rule through exp(omega), and d entropy/d omega */
            gs[i] = gs[i] / n * exp(f->q.omega[i]) + 1.0;
        }
    }
    return DRIFT_OK;
}

/* Stan's step: the squared gradient's running average (0.9 old, 0.1
 * new; the first step's alone), then par += eta / sqrt(t) * g / (1 +
 * sqrt(hist)).  Unless stan_steps, the mean's step is taken in the
 * approximation's own scale: on g~ = S' g_mu (S = diag(exp(omega)) or L),
 * mu += S (eta / sqrt(t) * g~ / (1 + sqrt(hist))).  Stan's step is in the
 * parameters' units, eta / sqrt(t) at most whatever the posterior's sd, so
 * when that sd is small (many rows) the mean wanders many sds; in the
 * approximation's scale it wanders a fraction of its sd. */
static void step(fit *f, double eta, unsigned t)
{
    double scaled = eta / sqrt((double)t);
    size_t d = f->d, k0 = 0;
    if (!f->o->stan_steps) {
        double *gt = f->zeta, *dt = f->g; /* free between gradients */
        for (size_t i = 0; i < d; i++) {
            double s = 0;
            if (f->q.fullrank) /* (L' g)_i = sum_{j >= i} L_ji g_j */
                for (size_t j = i; j < d; j++)
                    s += f->q.L[j * d + i] * f->grad[j];
            else
                s = exp(f->q.omega[i]) * f->grad[i];
            gt[i] = s;
            f->hist[i] = t == 1 ? s * s : 0.9 * f->hist[i] + 0.1 * s * s;
            dt[i] = scaled * s / (1.0 + sqrt(f->hist[i]));
        }
        for (size_t i = 0; i < d; i++) {
            double s = 0;
            if (f->q.fullrank)
                for (size_t j = 0; j <= i; j++)
                    s += f->q.L[i * d + j] * dt[j];
            else
                s = exp(f->q.omega[i]) * dt[i];
            f->q.mu[i] += s;
        }
        k0 = d;
        if (f->q.fullrank) {
            /* L's row i in units of coordinate i's sd, as the mean's */
            for (size_t i = 0; i < d; i++) {
                double sd = drift_vi_sd(&f->q, i);
                for (size_t j = 0; j <= i; j++) {
                    size_t k = d + i * d + j;
                    double g = sd * f->grad[k];
                    f->hist[k] = t == 1 ? g * g
                                        : 0.9 * f->hist[k] + 0.1 * g * g;
                    dt[j] = sd * scaled * g / (1.0 + sqrt(f->hist[k]));
                }
                for (size_t j = 0; j <= i; j++)
                    f->par[d + i * d + j] += dt[j];
            }
            return;
        }
    }
    for (size_t k = k0; k < f->np; k++) {
        double g = f->grad[k];
        f->hist[k] = t == 1 ? g * g : 0.9 * f->hist[k] + 0.1 * g * g;
        f->par[k] += scaled * g / (1.0 + sqrt(f->hist[k]));
    }
}

/* Back to the start: mean init, the initial scales (Stan's: 1), no
 * gradient history. */
static void reset(fit *f, const double *init)
{
    size_t d = f->d;
    memset(f->par, 0, f->np * sizeof *f->par);
    memcpy(f->q.mu, init, d * sizeof *init);
    for (size_t i = 0; i < d; i++) {
        double s = f->init_sd ? f->init_sd[i] : 1.0;
        if (f->q.fullrank)
            f->q.L[i * d + i] = s;
        else
            f->q.omega[i] = log(s);
    }
    memset(f->hist, 0, f->np * sizeof *f->hist);
}

/* Whether the approximation has left every finite scale. */
static int runaway(const fit *f)
{
    for (size_t k = 0; k < f->np; k++)
        if (!isfinite(f->par[k]) || fabs(f->par[k]) > RUNAWAY)
            return 1;
    if (!f->q.fullrank)
        for (size_t i = 0; i < f->d; i++)
            if (f->q.omega[i] > log(RUNAWAY))
                return 1;
    return 0;
}

/* Stan's adapt_eta: each eta of the sequence from the start for
 * adapt_iter steps, kept while the ELBO it reaches improves. */
static int adapt_eta(fit *f, const double *init, double *eta_out,
                     drift_err *e)
{
    static const double seq[5] = {100, 10, 1, 0.1, 0.01};
    double elbo_init, elbo = -DBL_MAX, elbo_best = -DBL_MAX, eta_best = 0;
    double elbo_max = -DBL_MAX, eta_max = 0;
    int rc = calc_elbo(f, &elbo_init, e);
    if (rc && dropped(rc)) {
        char why[300];
        snprintf(why, sizeof why, "%.190s", e->msg);
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "cannot compute the ELBO at the initial "
                             "approximation (%s): the model may be "
                             "ill-conditioned or misspecified; try other "
                             "--init values",
                             why);
    }
    if (rc)
        return rc;
    if (f->o->log)
        fprintf(f->o->log, "Begin eta adaptation.\n");
    for (int s = 0; s < 5; s++) {
        double eta = seq[s];
        for (unsigned t = 1; t <= f->o->adapt_iter; t++) {
            rc = calc_grad(f, e);
            if (rc && !dropped(rc))
                return rc;
            if (rc) /* it may diverge: a smaller eta is tried next */
                memset(f->grad, 0, f->np * sizeof *f->grad);
            step(f, eta, t);
        }
        rc = runaway(f) ? DRIFT_ENUMERIC : calc_elbo(f, &elbo, e);
        if (rc && !dropped(rc))
            return rc;
        if (rc || !isfinite(elbo))
            elbo = -DBL_MAX;
        if (f->o->log)
            fprintf(f->o->log, "  eta = %g: ELBO %g\n", eta, elbo);
        if (elbo > elbo_max) {
            elbo_max = elbo;
            eta_max = eta;
        }
        if (elbo < elbo_best && elbo_best > elbo_init) {
            break;
        } else if (s < 4) {
            elbo_best = elbo;
            eta_best = eta;
        } else if (elbo > elbo_init) {
            eta_best = eta;
        } else if (f->init_sd && elbo_max > -DBL_MAX) {
            /* A warm start begins at the optimum's neighbourhood, where
             * the ELBO estimates of every eta may all lie within their
             * noise below the start's: the best of them, not a failure. */
            eta_best = eta_max;
        } else {
            return drift_err_set(e, DRIFT_ENUMERIC,
                                 "every step size of the adaptation (eta = "
                                 "100, 10, 1, 0.1, 0.01) failed to improve "
                                 "the ELBO: the model may be ill-conditioned "
                                 "or misspecified; give a smaller --eta with "
                                 "--adapt-engaged 0, or other --init values");
        }
        reset(f, init);
    }
    reset(f, init);
    if (f->o->log)
        fprintf(f->o->log, "Success! Found best value [eta = %g].\n",
                eta_best);
    *eta_out = eta_best;
    return DRIFT_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The parameters' average over the last n of the complete windows of
 * eval_elbo steps whose sums are in wsum (cb slots, window k in slot
 * k % cb), into f->par. */
static void average(fit *f, const double *wsum, size_t cb, size_t k_done,
                    size_t n)
{
    memset(f->par, 0, f->np * sizeof *f->par);
    for (size_t w = k_done - n; w < k_done; w++) {
        const double *s = wsum + (w % cb) * f->np;
        for (size_t j = 0; j < f->np; j++)
            f->par[j] += s[j];
    }
    double c = 1.0 / ((double)n * f->o->eval_elbo);
    for (size_t j = 0; j < f->np; j++)
        f->par[j] *= c;
}

/* Stan's stochastic_gradient_ascent: steps until the mean or median of the
 * recent relative ELBO changes falls below tol_rel_obj, or iter steps.
 * What it returns is not the last iterate but the average over the last
 * half of the windows of eval_elbo steps, at most the cb windows the
 * test looks back on (Polyak-Ruppert): with minibatch gradients and
 * Stan's steps, whose size is in the parameters' units, the last iterate
 * of a posterior whose sds are small beside those steps (large N) is
 * many sds from the optimum, while the average is not. */
static int ascend(fit *f, double eta, drift_vi_result *r, drift_err *e)
{
    const drift_vi_opts *o = f->o;
    double elbo = 0, elbo_prev;
    double cb_len = 0.1 * o->iter / o->eval_elbo;
    size_t cb = cb_len > 2 ? (size_t)cb_len : 2, n_cb = 0, head = 0;
    double buf[2 * 1000 + 2], sorted[2 * 1000 + 2];
    if (cb > 1000)
        cb = 1000;
    double *wsum = drift_calloc(cb * f->np, sizeof *wsum);
    if (!wsum)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if (o->log)
        fprintf(o->log, "Begin stochastic gradient ascent.\n"
                        "  iter             ELBO   delta_ELBO_mean   "
                        "delta_ELBO_med   notes \n");
    r->converged = 0;
    r->why = "the maximum number of iterations was reached";
    int rc = DRIFT_OK;
    size_t k_done = 0;
    for (unsigned t = 1; t <= o->iter; t++) {
        rc = calc_grad(f, e);
        if (rc && dropped(rc)) {
            char why[300];
            snprintf(why, sizeof why, "%.190s", e->msg);
            rc = drift_err_set(
                e, DRIFT_ENUMERIC,
                "the ELBO diverged at iteration %u (eta = %g): %s; try a "
                "smaller --eta (with --adapt-engaged 0), other --init "
                "values, or a larger --batch",
                t, eta, why);
        }
        if (rc)
            goto done;
        step(f, eta, t);
        r->iterations = t;
        if (runaway(f)) {
            f->ran_away = 1;
            rc = drift_err_set(
                e, DRIFT_ENUMERIC,
                "the approximation ran away at iteration %u (a mean or "
                "scale beyond 1e100, eta = %g): the posterior is improper "
                "(give the parameters proper priors), or the steps are too "
                "large (give a smaller --eta with --adapt-engaged 0)",
                t, eta);
            goto done;
        }
        double *ws = wsum + (k_done % cb) * f->np;
        if ((t - 1) % o->eval_elbo == 0)
            memset(ws, 0, f->np * sizeof *ws);
        for (size_t j = 0; j < f->np; j++)
            ws[j] += f->par[j];
        if (t % o->eval_elbo)
            continue;
        k_done++;
        elbo_prev = elbo;
        rc = calc_elbo(f, &elbo, e);
        if (rc || !isfinite(elbo)) {
            if (!rc || dropped(rc))
                rc = drift_err_set(
                    e, DRIFT_ENUMERIC,
                    "the ELBO is not finite at iteration %u (eta = %g): the "
                    "approximation diverged; try a smaller --eta (with "
                    "--adapt-engaged 0), other --init values, or a larger "
                    "--batch",
                    t, eta);
            goto done;
        }
        double rel = fabs((elbo - elbo_prev) / elbo_prev);
        buf[head] = rel;
        head = (head + 1) % cb;
        if (n_cb < cb)
            n_cb++;
        double mean = 0;
        for (size_t k = 0; k < n_cb; k++)
            mean += buf[k];
        mean /= (double)n_cb;
        memcpy(sorted, buf, n_cb * sizeof *buf);
        qsort(sorted, n_cb, sizeof *sorted, cmp_double);
        double med = n_cb % 2 ? sorted[n_cb / 2]
                              : 0.5 * (sorted[n_cb / 2 - 1] +
                                       sorted[n_cb / 2]);
        const char *note = "";
        if (mean < o->tol_rel_obj) {
            note = "MEAN ELBO CONVERGED";
            r->why = "the mean relative change of the ELBO fell below "
                     "tol_rel_obj";
            r->converged = 1;
        }
        if (med < o->tol_rel_obj) {
            note = "MEDIAN ELBO CONVERGED";
            r->why = "the median relative change of the ELBO fell below "
                     "tol_rel_obj";
            r->converged = 1;
        }
        if (!r->converged && t > 10 * o->eval_elbo &&
            (med > 0.5 || mean > 0.5))
            note = "MAY BE DIVERGING... INSPECT ELBO";
        if (o->log)
            fprintf(o->log, "  %4u %16.3f %17.3f %16.3f   %s\n", t, elbo,
                    mean, med, note);
        r->elbo = elbo;
        if (r->converged)
            break;
    }
    if (k_done) {
        size_t n = k_done / 2 ? k_done / 2 : 1;
        average(f, wsum, cb, k_done, n < cb ? n : cb);
        /* the ELBO reported is the average's */
        if ((rc = calc_elbo(f, &elbo, e)) == DRIFT_OK)
            r->elbo = elbo;
        else if (dropped(rc))
            rc = drift_err_set(e, DRIFT_ENUMERIC,
                               "the ELBO is not finite at the averaged "
                               "approximation: try a smaller --eta (with "
                               "--adapt-engaged 0)");
    }
done:
    drift_free(wsum);
    return rc;
}

static int check_opts(const drift_vi_opts *o, size_t N, drift_err *e)
{
    if (o->iter < 1)
        return drift_err_set(e, DRIFT_EINVAL, "iter must be at least 1");
    if (o->grad_samples < 1)
        return drift_err_set(e, DRIFT_EINVAL,
                             "grad_samples must be at least 1");
    if (o->elbo_samples < 1)
        return drift_err_set(e, DRIFT_EINVAL,
                             "elbo_samples must be at least 1");
    if (!(o->eta > 0) || !isfinite(o->eta))
        return drift_err_set(e, DRIFT_EINVAL,
                             "eta must be a positive number");
    if (o->adapt_engaged && o->adapt_iter < 1)
        return drift_err_set(e, DRIFT_EINVAL,
                             "adapt_iter must be at least 1");
    if (!(o->tol_rel_obj > 0) || !isfinite(o->tol_rel_obj))
        return drift_err_set(e, DRIFT_EINVAL,
                             "tol_rel_obj must be a positive number");
    if (o->eval_elbo < 1)
        return drift_err_set(e, DRIFT_EINVAL,
                             "eval_elbo must be at least 1");
    if (o->batch > N && N > 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "batch %zu is more than the data's %zu rows",
                             o->batch, N);
    if (o->elbo_rows > N && N > 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "elbo_rows %zu is more than the data's %zu "
                             "rows",
                             o->elbo_rows, N);
    return DRIFT_OK;
}

static void fit_free(fit *f)
{
    drift_free(f->par);
    drift_free(f->grad);
    drift_free(f->hist);
    drift_free(f->z);
    drift_free(f->rows);
    drift_free(f->elbo_rows);
    drift_free(f->cv_at);
}

int drift_vi_fit(drift_vi **out, drift_logdensity *ld, const drift_model *m,
                 const drift_vi_opts *o, const double *init,
                 const double *init_sd, uint64_t seed, drift_vi_result *r,
                 drift_err *e)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    size_t N = m->n_rows, d = m->dim;
    r->retried[0] = '\0';
    int rc = check_opts(o, N, e);
    if (rc)
        return rc;
    if (d == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model has no parameters to approximate");
    fit f;
    memset(&f, 0, sizeof f);
    f.ld = ld;
    f.m = m;
    f.o = o;
    f.d = d;
    f.init_sd = init_sd;
    f.np = d + (o->fullrank ? d * d : d);
    f.batch = o->batch ? o->batch : drift_logdensity_batch(N);
    f.n_elbo = o->elbo_rows ? o->elbo_rows : drift_vi_elbo_rows(N);
    f.par = drift_malloc_array(f.np, sizeof *f.par);
    f.grad = drift_malloc_array(f.np, sizeof *f.grad);
    f.hist = drift_malloc_array(f.np, sizeof *f.hist);
    f.z = drift_malloc_array(3 * d, sizeof *f.z);
    f.rows = drift_malloc_array(f.batch ? f.batch : 1, sizeof *f.rows);
    if (f.n_elbo < N)
        f.elbo_rows = drift_malloc_array(f.n_elbo, sizeof *f.elbo_rows);
    drift_vi *q = drift_calloc(1, sizeof *q);
    if (!f.par || !f.grad || !f.hist || !f.z || !f.rows || !q ||
        (f.n_elbo < N && !f.elbo_rows)) {
        fit_free(&f);
        drift_free(q);
        return drift_err_set(e, DRIFT_ENOMEM,
                             "out of memory (the full-rank factor is %zu x "
                             "%zu)",
                             d, d);
    }
    f.zeta = f.z + d;
    f.g = f.z + 2 * d;
    f.q.d = d;
    f.q.fullrank = o->fullrank;
    f.q.mu = f.par;
    f.q.omega = o->fullrank ? NULL : f.par + d;
    f.q.L = o->fullrank ? f.par + d : NULL;
    if (o->control_variates && f.batch < N) {
        double lp;
        f.cv_at = drift_malloc_array(3 * d, sizeof *f.cv_at);
        if (!f.cv_at) {
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        } else {
            f.cv_grad = f.cv_at + d;
            f.cv_tmp = f.cv_at + 2 * d;
            memcpy(f.cv_at, init, d * sizeof *init);
            rc = drift_logdensity_eval(ld, init, &lp, f.cv_grad, e);
        }
        if (rc) {
            fit_free(&f);
            drift_free(q);
            return rc;
        }
    }
    drift_rng_seed(&f.rng, seed, 0);
    if (f.elbo_rows)
        draw_rows(&f.rng, N, f.elbo_rows, f.n_elbo);
    reset(&f, init);
    double eta = o->eta;
    rc = o->adapt_engaged ? adapt_eta(&f, init, &eta, e) : DRIFT_OK;
    if (!rc)
        rc = ascend(&f, eta, r, e);
    /* An eta the adaptation chose that diverges later in the ascent (the
     * adaptation's few iterations did not show it): the ascent again from
     * the start with eta ten times smaller, down to 1e-3 (Stan stops with
     * the error).  An eta the user gave is used as given. */
    while (rc == DRIFT_ENUMERIC && !f.ran_away && o->adapt_engaged &&
           eta > 2e-3 && r->n_retries < 8) {
        snprintf(r->retried, sizeof r->retried, "%.300s", e->msg);
        r->n_retries++;
        eta /= 10;
        reset(&f, init);
        rc = ascend(&f, eta, r, e);
    }
    if (rc) {
        fit_free(&f);
        drift_free(q);
        return rc;
    }
    r->eta = eta;
    r->batch = f.batch;
    r->elbo_rows = f.n_elbo;
    /* The fit keeps its parameters; the rest goes. */
    *q = f.q;
    f.par = NULL;
    fit_free(&f);
    *out = q;
    return DRIFT_OK;
}

void drift_vi_free(drift_vi *q)
{
    if (!q)
        return;
    drift_free(q->mu); /* the parameters' block: mu, then omega or L */
    drift_free(q);
}

void drift_vi_mean(const drift_vi *q, double *theta)
{
    memcpy(theta, q->mu, q->d * sizeof *theta);
}

void drift_vi_draw(const drift_vi *q, drift_rng *rng, double *theta,
                   double *log_g)
{
    /* z in theta's storage would be overwritten as it is read (fullrank):
     * draw it elementwise from the last coordinate down. */
    size_t d = q->d;
    double s = 0;
    for (size_t i = 0; i < d; i++) {
        theta[i] = drift_rng_normal(rng);
        s += theta[i] * theta[i];
    }
    for (size_t i = d; i-- > 0;) {
        double v = q->mu[i];
        if (q->fullrank) {
            const double *Li = q->L + i * d;
            for (size_t j = 0; j <= i; j++)
                v += Li[j] * theta[j];
        } else {
            v += exp(q->omega[i]) * theta[i];
        }
        theta[i] = v;
    }
    *log_g = -0.5 * s;
}

double drift_vi_sd(const drift_vi *q, size_t j)
{
    if (!q->fullrank)
        return exp(q->omega[j]);
    double s = 0;
    for (size_t k = 0; k <= j; k++)
        s += q->L[j * q->d + k] * q->L[j * q->d + k];
    return sqrt(s);
}
