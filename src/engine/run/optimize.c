/* optimize.c: L-BFGS for the posterior mode (see optimize.h), with a
 * backtracking line search (Armijo's condition, quadratic interpolation)
 * and CmdStan's convergence tests; and the minibatch optimisers (sgd,
 * adam) for data too large for a full pass per step.  Not for chains (mode.c). */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "base/util.h"
#include "adapt.h"
#include "inits.h"
#include "optimize.h"
#include "rng.h"

/* Trials of one line search. */
#define LINE_TRIES 40
/* |x| beyond which the density is taken to have no mode. */
#define RUNAWAY 1e100

void drift_optimize_defaults(drift_optimize_opts *o)
{
    o->iter = 2000;
    o->tol_obj = 1e-12;
    o->tol_rel_obj = 1e4;
    o->tol_grad = 1e-8;
    o->tol_rel_grad = 1e7;
    o->tol_param = 1e-8;
    o->history_size = 5;
    o->init_alpha = 1e-3;
    o->on_iter = NULL;
    o->on_iter_user = NULL;
    o->polish = 1;
}

static double dot(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * b[k];
    return s;
}

/* f = -log density and its gradient; DRIFT_ENUMERIC (f = inf) where the
 * density is not finite, a point the line search steps back from. */
static int eval(drift_logdensity *ld, size_t d, const double *x, double *f,
                double *g, drift_err *e)
{
    double lp;
    int rc = drift_logdensity_eval(ld, x, &lp, g, e);
    if (rc) {
        *f = INFINITY;
        return rc;
    }
    *f = -lp;
    for (size_t k = 0; k < d; k++)
        g[k] = -g[k];
    return DRIFT_OK;
}

/* p = -H g by the two-loop recursion over the stored pairs (newest at
 * head - 1), H0 = gamma I with gamma = s'y / y'y of the newest pair. */
static void direction(size_t d, size_t m, size_t stored, size_t head,
                      const double *S, const double *Y, const double *rho,
                      double *alpha, const double *g, double *p)
{
    memcpy(p, g, d * sizeof *p);
    for (size_t q = 0; q < stored; q++) {
        size_t i = (head + m - 1 - q) % m;
        alpha[i] = rho[i] * dot(S + i * d, p, d);
        for (size_t k = 0; k < d; k++)
            p[k] -= alpha[i] * Y[i * d + k];
    }
    double gamma = 1;
    if (stored) {
        size_t i = (head + m - 1) % m;
        gamma = dot(S + i * d, Y + i * d, d) / dot(Y + i * d, Y + i * d, d);
    }
    for (size_t k = 0; k < d; k++)
        p[k] *= gamma;
    for (size_t q = stored; q-- > 0;) {
        size_t i = (head + m - 1 - q) % m;
        double beta = rho[i] * dot(Y + i * d, p, d);
        for (size_t k = 0; k < d; k++)
            p[k] += (alpha[i] - beta) * S[i * d + k];
    }
    for (size_t k = 0; k < d; k++)
        p[k] = -p[k];
}

/* Newton's steps from the point L-BFGS stopped at, with the Hessian from
 * the gradient by central differences, while the Newton decrement g'H^-1 g
 * (about the squared distance to the mode in posterior sds) is above
 * 1e-10: L-BFGS's relative tests take its curvature from a few pairs,
 * which on a badly scaled posterior can stop it sds from the mode.  Where
 * the Hessian is not positive definite (no interior mode) or a step makes
 * no progress, the point stays as it is. */
/* Newton's step s = -H^-1 g at x, H the finite-difference Hessian of f
 * (the precision), and the decrement g'H^-1 g into *dec: DRIFT_OK, a
 * numeric error of the density, or DRIFT_ENUMERIC where H is not positive
 * definite (no mode near).  H: d x d, work: 3d. */
static int newton_step(drift_logdensity *ld, size_t d, const double *x,
                       const double *g, double *H, double *work, double *s,
                       double *dec, drift_err *e)
{
    int rc = drift_logdensity_precision(ld, d, x, H, work, e);
    if (rc)
        return rc;
    if (drift_adapt_cholesky(H, d, H))
        return DRIFT_ENUMERIC;
    /* s = -H^-1 g by the factor's two triangular solves */
    for (size_t i = 0; i < d; i++)
        s[i] = -g[i];
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit,
                (blasint)d, H, (blasint)d, s, 1);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit,
                (blasint)d, H, (blasint)d, s, 1);
    *dec = -dot(g, s, d);
    return DRIFT_OK;
}

static int polish(drift_logdensity *ld, size_t d, double *x, double *f,
                  double *g, drift_optimize_result *r, drift_err *e)
{
    if (d > DRIFT_OPTIMIZE_POLISH_MAX_DIM)
        return DRIFT_OK;
    double *buf = drift_malloc_array(d * d + 6 * d, sizeof *buf);
    if (!buf)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    double *H = buf, *work = H + d * d, *s = work + 3 * d, *xn = s + d,
           *gn = xn + d;
    int rc = DRIFT_OK;
    r->newton_decrement = NAN;
    for (int k = 0; k < 20; k++) {
        /* f is minus the log density: its Hessian is the precision */
        double dec;
        if ((rc = newton_step(ld, d, x, g, H, work, s, &dec, e)))
            break;
        r->newton_decrement = dec;
        if (!(dec > 1e-10))
            break;
        double t = 1, fn = INFINITY;
        int accepted = 0;
        for (int tries = 0; tries < 30 && !accepted; tries++, t *= 0.5) {
            for (size_t i = 0; i < d; i++)
                xn[i] = x[i] + t * s[i];
            int erc = eval(ld, d, xn, &fn, gn, e);
            if (erc && erc != DRIFT_ENUMERIC && erc != DRIFT_ENONFINITE) {
                rc = erc;
                break;
            }
            accepted = !erc && fn <= *f - 1e-4 * t * dec;
        }
        if (rc || !accepted)
            break;
        memcpy(x, xn, d * sizeof *x);
        memcpy(g, gn, d * sizeof *g);
        *f = fn;
        r->newton_steps++;
    }
    if (rc == DRIFT_ENUMERIC || rc == DRIFT_ENONFINITE)
        rc = DRIFT_OK; /* the L-BFGS point stands */
    drift_free(buf);
    return rc;
}

/* Whether x is within a tenth of a posterior sd of a mode, by the Newton
 * decrement with the finite-difference Hessian (confirm): 1, 0, or a
 * negative error code of the density other than a numeric one. */
static int at_mode(drift_logdensity *ld, size_t d, const double *x,
                   const double *g, drift_err *e)
{
    if (d > DRIFT_OPTIMIZE_POLISH_MAX_DIM)
        return 1;   /* too costly to check: CmdStan's tests stand */
    double *buf = drift_malloc_array(d * d + 4 * d, sizeof *buf);
    if (!buf)
        return -drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    double dec;
    int rc = newton_step(ld, d, x, g, buf, buf + d * d, buf + d * d + 3 * d,
                         &dec, e);
    drift_free(buf);
    if (rc == DRIFT_ENUMERIC || rc == DRIFT_ENONFINITE)
        return 0;   /* no positive definite curvature: not at a mode */
    if (rc)
        return -rc;
    return dec <= 1e-2;
}

int drift_optimize_lbfgs(drift_logdensity *ld, size_t d,
                         const drift_optimize_opts *o, double *x,
                         drift_optimize_result *r, drift_err *e)
{
    size_t m = o->history_size ? o->history_size : 1;
    double *buf = drift_malloc_array(2 * m * d + 4 * d + 2 * m, sizeof *buf);
    if (!buf)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    double *S = buf, *Y = S + m * d, *g = Y + m * d, *p = g + d, *xn = p + d,
           *gn = xn + d, *rho = gn + d, *alpha = rho + m;
    memset(r, 0, sizeof *r);
    double f;
    int rc = eval(ld, d, x, &f, g, e);
    if (!rc && o->on_iter)
        rc = o->on_iter(o->on_iter_user, x, f, g);
    if (rc) {
        drift_free(buf);
        return rc;
    }
    size_t stored = 0, head = 0;
    const double eps = DBL_EPSILON;
    int relative = 1;   /* the relative tests count (confirm turns them
                           off where they fire away from the mode) */
    r->why = "maximum number of iterations hit, may not be at an optimum";
    for (unsigned it = 0; it < o->iter; it++) {
        direction(d, m, stored, head, S, Y, rho, alpha, g, p);
        double dec = -dot(g, p, d);
        if (!(dec > 0) || !isfinite(dec)) {
            if (!stored) {
                r->converged = 1;
                r->why = "no descent direction: at a stationary point";
                break;
            }
            stored = 0;   /* forget the history, step along -g */
            direction(d, m, 0, 0, S, Y, rho, alpha, g, p);
            dec = dot(g, g, d);
        }
        /* The first step is init_alpha times -g, as CmdStan's. */
        double t = stored ? 1
                   : it == 0 ? o->init_alpha
                             : 1 / fmax(sqrt(dot(p, p, d)), 1.0);
        double fn = INFINITY;
        int accepted = 0;
        for (int tries = 0; tries < LINE_TRIES; tries++) {
            for (size_t k = 0; k < d; k++)
                xn[k] = x[k] + t * p[k];
            rc = eval(ld, d, xn, &fn, gn, e);
            if (rc && rc != DRIFT_ENUMERIC && rc != DRIFT_ENONFINITE) {
                drift_free(buf);
                return rc;
            }
            if (!rc && fn <= f - 1e-4 * t * dec) {
                accepted = 1;
                break;
            }
            double tq = !rc ? dec * t * t / (2 * (fn - f + t * dec)) : 0.1 * t;
            if (!(tq >= 0.1 * t))
                tq = 0.1 * t;
            if (tq > 0.5 * t)
                tq = 0.5 * t;
            t = tq;
        }
        if (!accepted) {
            if (stored) {
                stored = 0;
                continue;
            }
            /* Where the gradient is still far from 0, the density has
             * most likely run off to where it is not finite. */
            r->converged = sqrt(dot(g, g, d)) <= 1e-4 * fmax(1, fabs(f));
            r->why = r->converged
                         ? "line search failed to achieve a sufficient "
                           "decrease, no more progress can be made"
                         : "line search failed far from a stationary point "
                           "(the density is not finite a step further)";
            break;
        }
        r->iterations = it + 1;
        double *si = S + head * d, *yi = Y + head * d;
        for (size_t k = 0; k < d; k++) {
            si[k] = xn[k] - x[k];
            yi[k] = gn[k] - g[k];
        }
        double sy = dot(si, yi, d), step = sqrt(dot(si, si, d));
        if (sy > 1e-12 * sqrt(dot(si, si, d) * dot(yi, yi, d))) {
            rho[head] = 1 / sy;
            head = (head + 1) % m;
            if (stored < m)
                stored++;
        }
        double df = f - fn;
        memcpy(x, xn, d * sizeof *x);
        memcpy(g, gn, d * sizeof *g);
        f = fn;
        if (sqrt(dot(x, x, d)) > RUNAWAY || !isfinite(f)) {
            drift_free(buf);
            return drift_err_set(e, DRIFT_ENUMERIC,
                                 "the log density grows without bound "
                                 "(%g after %u iterations, |theta| %g): "
                                 "it has no mode (an improper posterior?)",
                                 -f, it + 1, sqrt(dot(x, x, d)));
        }
        if (o->on_iter && (rc = o->on_iter(o->on_iter_user, x, f, g))) {
            drift_free(buf);
            return rc;
        }
        /* CmdStan's tests, in its order. */
        int rel = 0;
        if (fabs(df) < o->tol_obj) {
            r->why = "convergence detected: absolute change in objective "
                     "function was below tolerance";
        } else if (relative &&
                   fabs(df) / fmax(fmax(fabs(f), fabs(f + df)), 1) <
                       o->tol_rel_obj * eps) {
            r->why = "convergence detected: relative change in objective "
                     "function was below tolerance";
            rel = 1;
        } else if (sqrt(dot(g, g, d)) < o->tol_grad) {
            r->why = "convergence detected: gradient norm is below "
                     "tolerance";
        } else {
            /* g' H g with the updated pairs */
            direction(d, m, stored, head, S, Y, rho, alpha, g, p);
            if (relative &&
                -dot(g, p, d) / fmax(fabs(f), 1) < o->tol_rel_grad * eps) {
                r->why = "convergence detected: relative gradient magnitude "
                         "is below tolerance";
                rel = 1;
            } else if (step < o->tol_param)
                r->why = "convergence detected: absolute parameter change "
                         "was below tolerance";
            else
                continue;
        }
        /* A relative test measured against a huge |f| far from the mode
         * (raw-scale data, a start far out) can fire after one step. */
        if (rel && o->confirm) {
            int at = at_mode(ld, d, x, g, e);
            if (at < 0) {
                drift_free(buf);
                return -at;
            }
            if (!at) {
                relative = 0;
                r->unconfirmed++;
                r->why = "maximum number of iterations hit, may not be at "
                         "an optimum";
                continue;
            }
        }
        r->converged = 1;
        break;
    }
    r->newton_decrement = NAN;
    if (r->converged && o->polish && (rc = polish(ld, d, x, &f, g, r, e))) {
        drift_free(buf);
        return rc;
    }
    r->lp = -f;
    drift_free(buf);
    return DRIFT_OK;
}

int drift_optimize_start(drift_logdensity *ld, const drift_model *m,
                         const char *init, uint64_t seed, double *theta,
                         drift_err *e)
{
    double lp;
    if (init) {
        double *v = drift_malloc_array(m->n_out ? m->n_out : 1, sizeof *v);
        if (!v)
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        int rc = drift_inits_read(init, m, v, e);
        if (!rc)
            rc = m->unconstrain(m->self, v, theta, e);
        drift_free(v);
        if (rc)
            return rc;
        if ((rc = drift_logdensity_eval(ld, theta, &lp, NULL, e)))
            return drift_err_prefix(e, "at the initial values of %s", init),
                   rc;
        return DRIFT_OK;
    }
    drift_rng rng;
    drift_rng_seed(&rng, seed, 0);
    return drift_optimize_random_start(ld, m->dim, 2, &rng, theta, e);
}

int drift_optimize_random_start(drift_logdensity *ld, size_t d, double r,
                                drift_rng *rng, double *x, drift_err *e)
{
    double lp;
    for (int k = 0; k < 100; k++) {
        for (size_t j = 0; j < d; j++)
            x[j] = r * (2 * drift_rng_uniform(rng) - 1);
        int rc = drift_logdensity_eval(ld, x, &lp, NULL, e);
        if (rc == DRIFT_ENOMEM)
            return rc;
        if (!rc && isfinite(lp))
            return DRIFT_OK;
    }
    char last[sizeof e->msg];
    snprintf(last, sizeof last, "%s", e->msg);
    return drift_err_set(e, DRIFT_ENUMERIC,
                         "no finite log density at 100 random initial "
                         "points (the last: %s): give --init",
                         last);
}

void drift_optimize_sg_defaults(drift_optimize_sg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->adam = 1;
    o->alpha = 0.01;
    o->a = 1.0;
    o->b = 10.0;
    o->gamma = 0.6;
    o->tol_grad_sds = 0.5;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Per-row gradients of up to 1000 rows drawn from rng at theta: each
 * coordinate's sd of a sum of N of them into sd (0 where the rows do not
 * move it). */
static int row_sds(const drift_model *m, const double *theta,
                   drift_rng *rng, double *sd, drift_err *e)
{
    size_t d = m->dim, N = m->n_rows;
    size_t n = N < 1000 ? N : 1000;
    if (n && d && n > 10000000 / d)
        n = 10000000 / d;
    memset(sd, 0, d * sizeof *sd);
    if (n < 2)
        return DRIFT_OK;
    int rc = DRIFT_OK;
    double *G = drift_malloc_array(n * d, sizeof *G);
    size_t *rows = drift_malloc_array(n, sizeof *rows);
    void *ws = m->workspace_new(m->self, n);
    if (!G || !rows || !ws) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        rows[k] = n == N ? k : (size_t)drift_rng_below(rng, N);
    qsort(rows, n, sizeof *rows, cmp_size);
    drift_rows b = {rows, 0, n};
    double ll;
    if ((rc = m->log_lik(m->self, ws, theta, &b, NULL, &ll, NULL, G, e)))
        goto done;
    for (size_t j = 0; j < d; j++) {
        double s = 0, ss = 0;
        for (size_t k = 0; k < n; k++) {
            s += G[k * d + j];
            ss += G[k * d + j] * G[k * d + j];
        }
        double var = (ss - s * s / (double)n) / (double)(n - 1);
        sd[j] = sqrt((double)N * (var > 0 ? var : 0));
    }
done:
    if (ws)
        m->workspace_free(m->self, ws);
    drift_free(G);
    drift_free(rows);
    return rc;
}

/* The full-data gradient at theta (into g, lp) and its largest
 * coordinate over the sd of a sum of N per-row gradients (a coordinate
 * the rows do not move is judged by its gradient alone). */
static int grad_sds(drift_logdensity *ld, const drift_model *m,
                    const double *theta, drift_rng *rng, double *g,
                    double *lp, double *out, drift_err *e)
{
    size_t d = m->dim;
    int rc = drift_logdensity_eval(ld, theta, lp, g, e);
    if (rc)
        return rc;
    double *sd = drift_malloc_array(d ? d : 1, sizeof *sd);
    if (!sd)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if ((rc = row_sds(m, theta, rng, sd, e))) {
        drift_free(sd);
        return rc;
    }
    double worst = 0;
    for (size_t j = 0; j < d; j++) {
        double z = fabs(g[j]) / (sd[j] > 0 ? sd[j] : 1.0);
        if (!(z <= worst))
            worst = z;
    }
    *out = worst;
    drift_free(sd);
    return DRIFT_OK;
}

int drift_optimize_post_sds(const drift_model *m, const double *theta,
                            uint64_t seed, double *sd, drift_err *e)
{
    drift_rng rng;
    drift_rng_seed(&rng, seed, 2);
    int rc = row_sds(m, theta, &rng, sd, e);
    if (rc)
        return rc;
    for (size_t j = 0; j < m->dim; j++)
        sd[j] = sd[j] > 0 ? 1.0 / sd[j] : 1.0;
    return DRIFT_OK;
}

int drift_optimize_sg(drift_logdensity *ld, const drift_model *m,
                      const drift_optimize_sg_opts *o, double *theta,
                      drift_optimize_result *r, drift_err *e)
{
    size_t d = m->dim, N = m->n_rows;
    memset(r, 0, sizeof *r);
    size_t b = o->batch ? o->batch : drift_logdensity_batch(N);
    if (N && b > N)
        return drift_err_set(e, DRIFT_EINVAL,
                             "batch %zu is more than the data's %zu rows", b,
                             N);
    if (o->adam ? !(o->alpha > 0) || !isfinite(o->alpha)
                : !(o->a > 0) || !isfinite(o->a) || !(o->b >= 0) ||
                      !isfinite(o->b))
        return drift_err_set(e, DRIFT_EINVAL,
                             o->adam ? "alpha must be a positive number"
                                     : "the step a (b + t)^-gamma needs a > "
                                       "0 and b >= 0");
    if (!o->adam && !(o->gamma > 0.5 && o->gamma <= 1))
        return drift_err_set(e, DRIFT_EINVAL,
                             "gamma must lie in (0.5, 1] (Robbins-Monro), "
                             "not %g",
                             o->gamma);
    if (!(o->tol_grad_sds > 0))
        return drift_err_set(e, DRIFT_EINVAL,
                             "tol_grad_sds must be a positive number");
    unsigned iter = o->iter;
    if (!iter) {
        double passes = b ? 50.0 * (double)N / (double)b : 0;
        iter = passes > 2000 ? (passes < 4e9 ? (unsigned)passes : 4000000000u)
                             : 2000;
    }
    double *buf = drift_malloc_array(4 * d, sizeof *buf);
    size_t *rows = drift_malloc_array(b ? b : 1, sizeof *rows);
    if (!buf || !rows) {
        drift_free(buf);
        drift_free(rows);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    double *g = buf, *mom = g + d, *v = mom + d, *avg = v + d;
    memset(mom, 0, 3 * d * sizeof *buf);
    drift_rng rng;
    drift_rng_seed(&rng, o->seed, 0);
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8, t0 = 100;
    double p1 = 1, p2 = 1;
    unsigned first_avg = iter / 2 + 1, n_avg = 0;
    int rc = DRIFT_OK;
    for (unsigned t = 1; t <= iter; t++) {
        double lp;
        if (b < N) {
            for (size_t k = 0; k < b; k++)
                rows[k] = (size_t)drift_rng_below(&rng, N);
            qsort(rows, b, sizeof *rows, cmp_size);
            rc = drift_logdensity_eval_rows(ld, theta, rows, b,
                                            (double)N / (double)b, &lp, g, e);
        } else {
            rc = drift_logdensity_eval(ld, theta, &lp, g, e);
        }
        int finite = !rc;
        for (size_t j = 0; j < d && finite; j++)
            finite = isfinite(g[j]);
        if (!finite) {
            char why[300];
            snprintf(why, sizeof why, "%.190s",
                     rc ? e->msg : "the gradient is not finite");
            rc = drift_err_set(
                e, rc && rc != DRIFT_ENUMERIC ? rc : DRIFT_ENUMERIC,
                "step %u left the finite density (%s): the step is too "
                "large; give a smaller %s, or a larger --batch",
                t, why, o->adam ? "--alpha" : "--step-a");
            goto done;
        }
        if (o->adam) {
            double lr = o->alpha / sqrt(1.0 + t / t0);
            p1 *= b1;
            p2 *= b2;
            for (size_t j = 0; j < d; j++) {
                mom[j] = b1 * mom[j] + (1 - b1) * g[j];
                v[j] = b2 * v[j] + (1 - b2) * g[j] * g[j];
                double mh = mom[j] / (1 - p1), vh = v[j] / (1 - p2);
                theta[j] += lr * mh / (sqrt(vh) + eps);
            }
        } else {
            double step = o->a * pow(o->b + t, -o->gamma) /
                          (double)(N ? N : 1);
            for (size_t j = 0; j < d; j++)
                theta[j] += step * g[j];
        }
        for (size_t j = 0; j < d; j++)
            if (!isfinite(theta[j]) || fabs(theta[j]) > RUNAWAY) {
                rc = drift_err_set(
                    e, DRIFT_ENUMERIC,
                    "the point ran away at step %u (a coordinate beyond "
                    "1e100): the density has no mode (an improper "
                    "posterior), or the step is too large",
                    t);
                goto done;
            }
        if (t >= first_avg) {
            n_avg++;
            for (size_t j = 0; j < d; j++)
                avg[j] += (theta[j] - avg[j]) / n_avg;
        }
    }
    memcpy(theta, avg, d * sizeof *theta);
    r->iterations = iter;
    if ((rc = grad_sds(ld, m, theta, &rng, g, &r->lp, &r->grad_sds, e)))
        goto done;
    r->converged = r->grad_sds < o->tol_grad_sds;
    r->why = r->converged
                 ? "the full-data gradient at the averaged point is within "
                   "tol_grad_sds of its sampling sd"
                 : "the full-data gradient at the averaged point is beyond "
                   "tol_grad_sds of its sampling sd: may not be at an "
                   "optimum";
done:
    drift_free(buf);
    drift_free(rows);
    return rc;
}
