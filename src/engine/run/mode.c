/* mode.c: --gradient cv's run-level work.  Once per run, on
 * chain 1 before any chain's init, the posterior's mode theta-hat is found:
 * one pass of per-row gradients at the start gives the problem's diagonal
 * scale (empirical Fisher plus the prior's curvature), which
 * preconditions full-gradient L-BFGS (and, on more than
 * DRIFT_MODE_ADAM_ROWS rows, a quarter pass of Adam before it).  Then one
 * pass at theta-hat keeps what the control-variate estimator needs there:
 * the log likelihood's gradient and value summed over all rows, each row's
 * scalar and term for a model in generalised linear form (when that costs
 * less than recomputing them in every minibatch), and the diagonal
 * curvature of U that a diagonal metric starts from.  Every evaluation
 * goes through the counted oracles, so the cost is chain 1's and the
 * budget's.  Not for the estimator itself (oracle.c) nor for sampling. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "base/util.h"
#include "mode.h"
#include "oracle.h"

/* L-BFGS: pairs (s, y) kept, iterations, trials of one line search. */
#define LBFGS_HISTORY 8
#define LBFGS_MAX_ITER 1000
#define LINE_TRIES 40
/* The search's share of a --passes or --seconds budget. */
#define BUDGET_SHARE 0.5
/* Without such a budget: at most this many data passes. */
#define MAX_PASSES 1000.0
/* Adam on large data: minibatch rows, data passes, step sizes. */
#define ADAM_BATCH 1024
#define ADAM_PASSES 0.25
#define ADAM_RATE 0.05
#define ADAM_DECAY_ITERS 50.0
/* Coordinates up to which the prior's curvature is taken coordinate by
 * coordinate (2 d prior gradients); beyond, along the all-ones direction
 * (exact for a prior that is a product over coordinates). */
#define PRIOR_FD_MAX_DIM 1024
/* The dense curvature (for a DENSE metric) is summed when d is at most
 * this and N d^2 at most DENSE_MAX_FLOPS. */
#define DENSE_MAX_DIM 256
#define DENSE_MAX_FLOPS 4e10
/* Per-row gradient scratch for the store pass of a general model. */
#define ROWS_SCRATCH_BYTES ((size_t)16 << 20)

typedef struct search {
    drift_chain *c;
    const drift_services *svc;
    size_t d, N;
    double cap_grads;       /* the search stops past these (0: none) */
    double cap_seconds;
    uint64_t grads0;
    double t0;
    uint64_t iterations;
    double decrement;
    int converged, capped;
    /* the best point met */
    double *best, best_U;
    /* The diagonal scale of the problem: 1 / (empirical Fisher diagonal
     * plus the prior's curvature) at the starting point (d), which
     * preconditions L-BFGS and Adam (NULL: none). */
    double *Dinv;
} search;

static double dot(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * b[k];
    return s;
}

/* Whether the search has spent its share of the budget. */
static int capped(search *s)
{
    if (s->cap_grads > 0 &&
        (double)(s->c->grads - s->grads0) >= s->cap_grads)
        return s->capped = 1;
    if (s->cap_seconds > 0 && drift_now() - s->t0 >= s->cap_seconds)
        return s->capped = 1;
    return 0;
}

static void note_best(search *s, const double *x, double U)
{
    if (isfinite(U) && U < s->best_U) {
        s->best_U = U;
        memcpy(s->best, x, s->d * sizeof *x);
    }
}

/* U and grad U over all rows (counted N).  DRIFT_ENONFINITE is a point to
 * step back from; anything else ends the search. */
static int eval_full(search *s, const double *x, double *g, double *U)
{
    *U = INFINITY;
    int rc = s->svc->grad_full(s->c, x, g, U);
    if (rc == DRIFT_OK)
        note_best(s, x, *U);
    return rc;
}

/* L-BFGS from x (f, g its value and gradient) with a backtracking Armijo
 * line search, its initial inverse Hessian gamma diag(s->Dinv) (the
 * problem's diagonal scale; gamma = s'y / y' Dinv y from the newest pair,
 * 1 before any: a Newton step on the diagonal); x, f, g are left at the
 * last accepted point.  Returns DRIFT_OK (converged, capped or stuck: s
 * says which) or a failure. */
static int lbfgs(search *s, double *x, double *f, double *g, double *work)
{
    size_t d = s->d;
    double *S = work, *Y = S + LBFGS_HISTORY * d, *p = Y + LBFGS_HISTORY * d;
    double *xn = p + d, *gn = xn + d;
    double rho[LBFGS_HISTORY], alpha[LBFGS_HISTORY];
    size_t stored = 0, head = 0; /* head: where the next pair goes */
    for (int it = 0; it < LBFGS_MAX_ITER; it++) {
        /* p = -H g by the two-loop recursion, H0 = gamma Dinv. */
        memcpy(p, g, d * sizeof *p);
        for (size_t q = 0; q < stored; q++) {
            size_t i = (head + LBFGS_HISTORY - 1 - q) % LBFGS_HISTORY;
            alpha[i] = rho[i] * dot(S + i * d, p, d);
            cblas_daxpy((int)d, -alpha[i], Y + i * d, 1, p, 1);
        }
        const double *Dinv = s->Dinv;
        double gamma;
        if (stored) {
            size_t i = (head + LBFGS_HISTORY - 1) % LBFGS_HISTORY;
            const double *yi = Y + i * d;
            double yDy = 0;
            for (size_t k = 0; k < d; k++)
                yDy += yi[k] * yi[k] * (Dinv ? Dinv[k] : 1);
            gamma = dot(S + i * d, yi, d) / yDy;
        } else if (Dinv) {
            gamma = 1;
        } else {
            double gn2 = sqrt(dot(g, g, d));
            gamma = gn2 > 1 ? 1 / gn2 : 1;
        }
        for (size_t k = 0; k < d; k++)
            p[k] *= gamma * (Dinv ? Dinv[k] : 1);
        for (size_t q = stored; q-- > 0;) {
            size_t i = (head + LBFGS_HISTORY - 1 - q) % LBFGS_HISTORY;
            double beta = rho[i] * dot(Y + i * d, p, d);
            cblas_daxpy((int)d, alpha[i] - beta, S + i * d, 1, p, 1);
        }
        cblas_dscal((int)d, -1.0, p, 1);
        double dec = -dot(g, p, d);
        if (!(dec > 0) || !isfinite(dec)) {
            /* Not a descent direction: forget the history. */
            if (!stored)
                return DRIFT_OK;
            stored = 0;
            it--;
            continue;
        }
        s->decrement = dec;
        if (dec <= DRIFT_MODE_DECREMENT) {
            s->converged = 1;
            return DRIFT_OK;
        }
        if (capped(s))
            return DRIFT_OK;
        s->iterations++;
        /* Backtracking: Armijo's condition, quadratic interpolation. */
        double t = 1, fn = INFINITY;
        int accepted = 0;
        for (int tries = 0; tries < LINE_TRIES; tries++) {
            for (size_t k = 0; k < d; k++)
                xn[k] = x[k] + t * p[k];
            int rc = eval_full(s, xn, gn, &fn);
            if (rc != DRIFT_OK && rc != DRIFT_ENONFINITE)
                return rc;
            if (rc == DRIFT_OK && fn <= *f - 1e-4 * t * dec) {
                accepted = 1;
                break;
            }
            double tq = rc == DRIFT_OK
                            ? dec * t * t / (2 * (fn - *f + t * dec))
                            : 0.1 * t;
            if (!(tq >= 0.1 * t))
                tq = 0.1 * t;
            if (tq > 0.5 * t)
                tq = 0.5 * t;
            t = tq;
            if (capped(s))
                return DRIFT_OK;
        }
        if (!accepted) {
            if (!stored)
                return DRIFT_OK; /* stuck: no descent along -g */
            stored = 0;
            continue;
        }
        /* The pair (s, y), when it keeps H positive definite. */
        double *si = S + head * d, *yi = Y + head * d;
        for (size_t k = 0; k < d; k++) {
            si[k] = xn[k] - x[k];
            yi[k] = gn[k] - g[k];
        }
        double sy = dot(si, yi, d);
        if (sy > 1e-12 * sqrt(dot(si, si, d) * dot(yi, yi, d))) {
            rho[head] = 1 / sy;
            head = (head + 1) % LBFGS_HISTORY;
            if (stored < LBFGS_HISTORY)
                stored++;
        }
        double df = *f - fn;
        memcpy(x, xn, d * sizeof *x);
        memcpy(g, gn, d * sizeof *g);
        *f = fn;
        /* No progress left at double precision. */
        if (df <= 1e-14 * fmax(1.0, fabs(fn))) {
            s->converged = 1;
            return DRIFT_OK;
        }
    }
    return DRIFT_OK;
}

/* Adam on minibatches of ADAM_BATCH rows drawn with replacement from a
 * stream of the run's seed apart from every chain's, for ADAM_PASSES data
 * passes (or the search's share of the budget), with the step size
 * ADAM_RATE / (1 + t / ADAM_DECAY_ITERS)^0.6 in each coordinate's own
 * unit, sqrt(N Dinv_j) / 2 (the inverse square root of a row's share of
 * the curvature: 1 / the predictor's scale in a logistic regression
 * started at 0); x gets the average of the iterates of the second
 * half. */
static int adam(search *s, double *x, double *work)
{
    drift_chain *c = s->c;
    size_t d = s->d, N = s->N;
    size_t n = N < ADAM_BATCH ? N : ADAM_BATCH;
    double *m = work, *v = m + d, *g = v + d, *gp = g + d, *avg = gp + d;
    size_t *rows = drift_malloc_array(n, sizeof *rows);
    if (!rows)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for the mode search");
    drift_rng rng;
    drift_rng_seed(&rng, c->cfg->launch.seed, 0);
    drift_rng_long_jump(&rng);
    uint64_t T = (uint64_t)ceil(ADAM_PASSES * (double)N / (double)n);
    uint64_t avg_from = T / 2, n_avg = 0;
    memset(m, 0, 3 * d * sizeof *m);
    memset(avg, 0, d * sizeof *avg);
    double b1 = 0.9, b2 = 0.999, b1t = 1, b2t = 1;
    int rc = DRIFT_OK;
    for (uint64_t t = 0; t < T; t++) {
        if (capped(s))
            break;
        for (size_t k = 0; k < n; k++)
            rows[k] = (size_t)drift_rng_below(&rng, N);
        double Usum;
        rc = s->svc->grad_sum(c, x, rows, n, g, &Usum);
        if (rc == DRIFT_OK)
            rc = s->svc->grad_prior(c, x, gp, NULL);
        if (rc == DRIFT_ENONFINITE) {
            /* Adam left the support: go back to the best point met. */
            rc = DRIFT_OK;
            break;
        }
        if (rc)
            break;
        s->iterations++;
        b1t *= b1;
        b2t *= b2;
        double rate = ADAM_RATE / pow(1 + (double)t / ADAM_DECAY_ITERS, 0.6);
        for (size_t k = 0; k < d; k++) {
            /* The gradient of U / N: the same scale at any N. */
            double gk = (g[k] / (double)n) + gp[k] / (double)N;
            m[k] = b1 * m[k] + (1 - b1) * gk;
            v[k] = b2 * v[k] + (1 - b2) * gk * gk;
            double unit = s->Dinv ? 0.5 * sqrt((double)N * s->Dinv[k]) : 1;
            x[k] -= rate * unit * (m[k] / (1 - b1t)) /
                    (sqrt(v[k] / (1 - b2t)) + 1e-8);
        }
        if (t >= avg_from) {
            n_avg++;
            for (size_t k = 0; k < d; k++)
                avg[k] += (x[k] - avg[k]) / (double)n_avg;
        }
    }
    drift_free(rows);
    if (!rc && n_avg)
        memcpy(x, avg, d * sizeof *x);
    return rc;
}

/* Whether the GLM path keeps each row's scalar and term at the mode (16
 * bytes a row) rather than recomputing them in every minibatch: when the
 * model is in generalised linear form, its rows are dense enough that
 * writing x_i as d doubles costs about what reading it does, and the 16 N
 * bytes fit in an eighth of the machine's memory (and in half of
 * --max-memory). */
static int store_glm(const drift_chain *c)
{
    const drift_model *m = c->model;
    if (!(m->flags & DRIFT_MODEL_GLM) || !m->glm_scalars || !m->glm_design)
        return 0;
    const drift_data *data = c->cfg->problem.data;
    if (data && data->n_rows) {
        double per_row = (double)data->n_cols;
        for (size_t k = 0; k < data->n_sparse; k++)
            per_row += (double)data->sparse[k].nnz / (double)data->n_rows;
        if ((double)c->d > 4 * per_row + 16)
            return 0;
    }
    double bytes = 16.0 * (double)c->N;
    if (c->cfg->step.max_memory &&
        bytes > 0.5 * (double)c->cfg->step.max_memory)
        return 0;
    return bytes <= (double)drift_memory_limit() / 8;
}

/* The pass at the mode: the log likelihood's gradient and value summed
 * over all rows, the empirical Fisher information's diagonal
 * sum_i (d l_i / d theta_j)^2 into fisher, its whole matrix
 * sum_i grad l_i grad l_i' into dense (d x d, lower triangle; NULL: not
 * wanted), and (GLM) each row's scalar and term. */
static int store_pass(search *s, drift_cv *cv, double *fisher, double *dense)
{
    drift_chain *c = s->c;
    const drift_model *m = c->model;
    size_t d = s->d, N = s->N;
    int glm = store_glm(c);
    size_t chunk = c->scratch.cap;
    double *x = NULL;
    if (glm) {
        cv->s = drift_malloc_array(N, sizeof(double));
        cv->l = drift_malloc_array(N, sizeof(double));
        size_t r = ((size_t)8 << 20) / (d * sizeof(double));
        chunk = r < 1 ? 1 : r < chunk ? r : chunk;
    } else {
        size_t r = ROWS_SCRATCH_BYTES / (d * sizeof(double));
        chunk = r < 1 ? 1 : r < chunk ? r : chunk;
    }
    x = drift_malloc_array(chunk, d * sizeof(double));
    double *u = drift_malloc_array(chunk, sizeof(double));
    size_t *rows = drift_malloc_array(chunk, sizeof(size_t));
    int rc = DRIFT_OK;
    if (!x || !u || !rows || (glm && (!cv->s || !cv->l)))
        rc = drift_chain_fail(c, DRIFT_ENOMEM,
                              "out of memory for --gradient cv's store at "
                              "the mode (%zu rows)",
                              N);
    memset(cv->lik_grad, 0, d * sizeof(double));
    memset(fisher, 0, d * sizeof(double));
    if (dense)
        memset(dense, 0, d * d * sizeof(double));
    cv->lik_sum = 0;
    for (size_t first = 0; first < N && !rc; first += chunk) {
        size_t k = N - first < chunk ? N - first : chunk;
        for (size_t q = 0; q < k; q++)
            rows[q] = first + q;
        if (glm) {
            double *sv = cv->s + first, *lv = cv->l + first;
            if ((rc = drift_oracle_glm_at(c, cv->mode, rows, k, sv, lv)))
                break;
            drift_err me = {{0}};
            drift_rows b = {rows, 0, k};
            if ((rc = m->glm_design(m->self, &b, x, &me))) {
                rc = drift_chain_fail(c, rc, "%s",
                                      me.msg[0] ? me.msg : "the model failed");
                break;
            }
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)k, (int)d, 1.0, x,
                        (int)d, sv, 1, 1.0, cv->lik_grad, 1);
            /* x becomes the rows' gradients s_i x_i. */
            for (size_t q = 0; q < k; q++) {
                double *xi = x + q * d;
                for (size_t j = 0; j < d; j++) {
                    xi[j] *= sv[q];
                    fisher[j] += xi[j] * xi[j];
                }
                cv->lik_sum += lv[q];
            }
            if (dense)
                cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)d,
                            (int)k, 1.0, x, (int)d, 1.0, dense, (int)d);
        } else {
            /* grad_rows speaks in U_i = -l_i. */
            if ((rc = s->svc->grad_rows(c, cv->mode, rows, k, x, u)))
                break;
            for (size_t q = 0; q < k; q++) {
                const double *gi = x + q * d;
                for (size_t j = 0; j < d; j++) {
                    cv->lik_grad[j] -= gi[j];
                    fisher[j] += gi[j] * gi[j];
                }
                cv->lik_sum -= u[q];
            }
            if (dense)
                cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)d,
                            (int)k, 1.0, x, (int)d, 1.0, dense, (int)d);
        }
    }
    drift_free(x);
    drift_free(u);
    drift_free(rows);
    if (rc || !glm) {
        drift_free(cv->s);
        drift_free(cv->l);
        cv->s = cv->l = NULL;
    }
    return rc;
}

/* One pass of per-row gradients at x (counted N): U(x) into *f, grad
 * U(x) into g, and the problem's diagonal scale into s->Dinv, 1 / (the
 * empirical Fisher diagonal plus the prior's curvature; 1 where that is
 * not positive). */
static void prior_curvature(search *s, const double *x, double *out,
                            double *work);

static int scale_pass(search *s, const double *x, double *f, double *g,
                      double *work)
{
    drift_chain *c = s->c;
    const drift_model *m = c->model;
    size_t d = s->d, N = s->N;
    int glm = (m->flags & DRIFT_MODEL_GLM) && m->glm_scalars &&
              m->glm_design;
    size_t r = ((size_t)8 << 20) / (d * sizeof(double));
    size_t chunk = r < 1 ? 1 : r < c->scratch.cap ? r : c->scratch.cap;
    double *xb = drift_malloc_array(chunk, d * sizeof(double));
    double *sv = drift_malloc_array(chunk, 2 * sizeof(double));
    size_t *rows = drift_malloc_array(chunk, sizeof(size_t));
    double *fisher = s->Dinv, ll = 0;
    int rc = DRIFT_OK;
    if (!xb || !sv || !rows)
        rc = drift_chain_fail(c, DRIFT_ENOMEM,
                              "out of memory for the mode search");
    memset(fisher, 0, d * sizeof *fisher);
    memset(g, 0, d * sizeof *g);
    for (size_t first = 0; first < N && !rc; first += chunk) {
        size_t k = N - first < chunk ? N - first : chunk;
        for (size_t q = 0; q < k; q++)
            rows[q] = first + q;
        if (glm) {
            if ((rc = drift_oracle_glm_at(c, x, rows, k, sv, sv + chunk)))
                break;
            drift_err me = {{0}};
            drift_rows b = {rows, 0, k};
            if ((rc = m->glm_design(m->self, &b, xb, &me))) {
                rc = drift_chain_fail(c, rc, "%s",
                                      me.msg[0] ? me.msg : "the model failed");
                break;
            }
            for (size_t q = 0; q < k; q++) {
                ll += sv[chunk + q];
                for (size_t j = 0; j < d; j++) {
                    double gj = sv[q] * xb[q * d + j];
                    g[j] -= gj;
                    fisher[j] += gj * gj;
                }
            }
        } else {
            /* grad_rows speaks in U_i = -l_i. */
            if ((rc = s->svc->grad_rows(c, x, rows, k, xb, sv)))
                break;
            for (size_t q = 0; q < k; q++) {
                ll -= sv[q];
                for (size_t j = 0; j < d; j++) {
                    g[j] += xb[q * d + j];
                    fisher[j] += xb[q * d + j] * xb[q * d + j];
                }
            }
        }
    }
    drift_free(xb);
    drift_free(sv);
    drift_free(rows);
    if (rc)
        return rc;
    double U0;
    double *pc = work + 3 * d; /* prior_curvature's scratch is work[0, 3d) */
    if ((rc = s->svc->grad_prior(c, x, pc, &U0)))
        return rc;
    for (size_t j = 0; j < d; j++)
        g[j] += pc[j];
    *f = U0 - ll;
    note_best(s, x, *f);
    prior_curvature(s, x, pc, work);
    if (c->failed)
        return c->failed;
    for (size_t j = 0; j < d; j++) {
        double h = fisher[j] + pc[j];
        fisher[j] = h > 0 && isfinite(h) ? 1 / h : 1;
    }
    return DRIFT_OK;
}

/* The prior's second derivatives d^2 U_prior / d theta_j^2 at x by central
 * differences of its gradient (not counted: no data); entries where the
 * prior is not finite nearby read 0. */
static void prior_curvature(search *s, const double *x, double *out,
                            double *work)
{
    size_t d = s->d;
    double *xp = work, *gp = xp + d, *gm = gp + d;
    drift_chain *c = s->c;
    memset(out, 0, d * sizeof *out);
    if (d <= PRIOR_FD_MAX_DIM) {
        memcpy(xp, x, d * sizeof *xp);
        for (size_t j = 0; j < d; j++) {
            double e = 1e-4 * fmax(1.0, fabs(x[j]));
            xp[j] = x[j] + e;
            int rc = s->svc->grad_prior(c, xp, gp, NULL);
            xp[j] = x[j] - e;
            if (!rc)
                rc = s->svc->grad_prior(c, xp, gm, NULL);
            xp[j] = x[j];
            if (!rc && c->failed == 0)
                out[j] = (gp[j] - gm[j]) / (2 * e);
        }
        return;
    }
    /* One probe along (1, ..., 1), scaled per coordinate. */
    for (size_t j = 0; j < d; j++)
        xp[j] = x[j] + 1e-4 * fmax(1.0, fabs(x[j]));
    int rc = s->svc->grad_prior(c, xp, gp, NULL);
    for (size_t j = 0; j < d; j++)
        xp[j] = x[j] - 1e-4 * fmax(1.0, fabs(x[j]));
    if (!rc)
        rc = s->svc->grad_prior(c, xp, gm, NULL);
    if (rc)
        return;
    for (size_t j = 0; j < d; j++)
        out[j] = (gp[j] - gm[j]) / (2e-4 * fmax(1.0, fabs(x[j])));
}

void drift_mode_release(drift_cv *cv)
{
    drift_free(cv->mode);
    drift_free(cv->lik_grad);
    drift_free(cv->curv);
    drift_free(cv->inv_metric);
    drift_free(cv->inv_dense);
    drift_free(cv->s);
    drift_free(cv->l);
    memset(cv, 0, sizeof *cv);
}

void drift_mode_draw(const drift_cv *cv, drift_rng *rng, double *theta)
{
    for (size_t k = 0; k < cv->d; k++)
        theta[k] = cv->mode[k] +
                   sqrt(cv->inv_metric[k]) * drift_rng_normal(rng);
}

/* A starting point with a finite U: start itself, else up to 20 draws
 * from U(-2, 2) (Stan's initial radius) from a stream of the run's seed;
 * with its U, gradient and the problem's scale there (scale_pass). */
static int first_point(search *s, double *x, double *f, double *g,
                       double *work)
{
    drift_chain *c = s->c;
    drift_rng rng;
    drift_rng_seed(&rng, c->cfg->launch.seed, 0);
    for (int t = 0; t < 21; t++) {
        if (t > 0)
            for (size_t k = 0; k < s->d; k++)
                x[k] = -2 + 4 * drift_rng_uniform(&rng);
        int rc = scale_pass(s, x, f, g, work);
        if (rc == DRIFT_OK)
            return DRIFT_OK;
        if (rc != DRIFT_ENONFINITE)
            return rc;
    }
    return drift_chain_fail(c, DRIFT_ENONFINITE,
                            "--gradient cv: the mode search found no point "
                            "with a finite log density (the starting point "
                            "and 20 draws from U(-2, 2) on the unconstrained "
                            "scale; the last: %.300s); give initial values "
                            "with --init FILE, or check the model",
                            c->nonfinite);
}

/* The pass at cv->mode (store_pass) and the metric there: the diagonal
 * curvature (the empirical Fisher's plus the prior's) into cv->curv and
 * its inverse into cv->inv_metric, and where d and N allow the inverse of
 * the whole matrix into cv->inv_dense; cv->flat counts the coordinates
 * without curvature (the first at cv->first_flat).  work: 3 d. */
static int store_metric(search *s, drift_cv *cv, double *fisher,
                        double *work)
{
    drift_chain *c = s->c;
    size_t d = s->d, N = s->N;
    int rc;
    double *dense = NULL;
    drift_free(cv->inv_dense);
    cv->inv_dense = NULL;
    if (d <= DENSE_MAX_DIM &&
        (double)N * (double)d * (double)d <= DENSE_MAX_FLOPS)
        dense = drift_malloc_array(2 * d * d, sizeof(double));
    if ((rc = store_pass(s, cv, fisher, dense))) {
        drift_free(dense);
        return rc;
    }
    prior_curvature(s, cv->mode, cv->curv, work);
    if (c->failed) {
        drift_free(dense);
        return c->failed;
    }
    if (dense) {
        /* The whole matrix, the prior's curvature on its diagonal (its
         * off-diagonal part is left out: priors here are products over
         * coordinates, or nearly), inverted for a DENSE metric. */
        for (size_t i = 0; i < d; i++) {
            dense[i * d + i] += cv->curv[i];
            for (size_t j = 0; j < i; j++)
                dense[j * d + i] = dense[i * d + j];
        }
        cv->inv_dense = drift_malloc_array(d * d, sizeof(double));
        if (cv->inv_dense &&
            drift_adapt_spd_inverse(dense, d, cv->inv_dense, dense + d * d)) {
            drift_free(cv->inv_dense);
            cv->inv_dense = NULL;
        }
        drift_free(dense);
    }
    cv->flat = 0;
    cv->first_flat = 0;
    for (size_t j = 0; j < d; j++) {
        double h = fisher[j] + cv->curv[j];
        if (h > 0 && isfinite(h)) {
            cv->curv[j] = h;
            cv->inv_metric[j] = 1 / h;
        } else {
            if (!cv->flat++)
                cv->first_flat = j;
            cv->curv[j] = NAN;
            cv->inv_metric[j] = 1;
        }
    }
    return DRIFT_OK;
}

int drift_mode_setup(drift_chain *c, const double *start)
{
    drift_cv *cv = &c->run->cv;
    const drift_run_config *cfg = c->cfg;
    size_t d = c->d, N = c->N;
    search s = {c, &drift_services_table, d, N, 0, 0, c->grads, drift_now(),
                0, INFINITY, 0, 0, NULL, INFINITY, NULL};
    drift_mode_release(cv);
    cv->d = d;
    /* The search's share, less the pass of the store that follows it. */
    double passes_cap = MAX_PASSES;
    if (cfg->budget.passes > 0 &&
        BUDGET_SHARE * cfg->budget.passes - 1 < passes_cap)
        passes_cap = BUDGET_SHARE * cfg->budget.passes - 1;
    s.cap_grads = passes_cap * (double)N;
    if (cfg->budget.seconds > 0)
        s.cap_seconds = BUDGET_SHARE * cfg->budget.seconds;
    size_t work_n = (2 * LBFGS_HISTORY + 5) * d;
    double *work = drift_malloc_array(work_n, sizeof(double));
    double *x = drift_malloc_array(d, sizeof(double));
    double *g = drift_malloc_array(d, sizeof(double));
    double *fisher = drift_malloc_array(d, sizeof(double));
    s.best = drift_malloc_array(d, sizeof(double));
    s.Dinv = drift_malloc_array(d, sizeof(double));
    cv->mode = drift_malloc_array(d, sizeof(double));
    cv->lik_grad = drift_malloc_array(d, sizeof(double));
    cv->curv = drift_malloc_array(d, sizeof(double));
    cv->inv_metric = drift_malloc_array(d, sizeof(double));
    int rc = DRIFT_OK;
    /* The search's gradients are exact: --grad-noise is for sampling. */
    double noise = c->noise.sd;
    c->noise.sd = 0;
    c->phase = DRIFT_CHAIN_MODE;
    if (!work || !x || !g || !fisher || !s.best || !s.Dinv || !cv->mode ||
        !cv->lik_grad || !cv->curv || !cv->inv_metric) {
        rc = drift_chain_fail(c, DRIFT_ENOMEM,
                              "out of memory for --gradient cv's mode "
                              "search (%zu parameters)",
                              d);
        goto out;
    }
    memcpy(x, start, d * sizeof *x);
    memcpy(s.best, x, d * sizeof *x);
    double f;
    /* A finite starting point, and the problem's scale there. */
    if ((rc = first_point(&s, x, &f, g, work)))
        goto out;
    if (N > DRIFT_MODE_ADAM_ROWS) {
        cv->method = "adam+lbfgs";
        if ((rc = adam(&s, x, work)))
            goto out;
        if ((rc = eval_full(&s, x, g, &f)) == DRIFT_ENONFINITE) {
            memcpy(x, s.best, d * sizeof *x);
            rc = eval_full(&s, x, g, &f);
        }
    } else {
        cv->method = "lbfgs";
    }
    if (rc)
        goto out;
    if ((rc = lbfgs(&s, x, &f, g, work)))
        goto out;
    memcpy(cv->mode, x, d * sizeof *x);
    cv->U = f;
    if ((rc = store_metric(&s, cv, fisher, work)))
        goto out;
    size_t flat = cv->flat, first_flat = cv->first_flat;
    cv->iterations = s.iterations;
    cv->decrement = s.decrement;
    cv->converged = s.converged;
    cv->grads = c->grads - s.grads0;
    cv->seconds = drift_now() - s.t0;
    cv->ready = 1;
    const drift_services *svc = &drift_services_table;
    if (!s.converged) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "--gradient cv: the mode search (%s) stopped after %llu "
                 "iterations and %.3g data passes, short of the mode "
                 "(squared Newton decrement %.3g, wanted below %g)%s; "
                 "its estimates stay unbiased but are noisier away from "
                 "the mode (a posterior without a mode, such as a "
                 "hierarchical scale going to 0, has none to find): give a "
                 "larger budget, or use --gradient plain",
                 cv->method, (unsigned long long)s.iterations,
                 (double)cv->grads / (double)N, s.decrement,
                 DRIFT_MODE_DECREMENT,
                 s.capped ? ", at its share of the budget" : "");
        svc->warn(c, msg);
    }
    if (flat) {
        char name[128], msg[400];
        drift_chain_param_name(c, first_flat, name, sizeof name);
        snprintf(msg, sizeof msg,
                 "--gradient cv: %zu parameter%s (%s%s) %s no curvature at "
                 "the mode; a diagonal metric started there gives %s 1",
                 flat, flat > 1 ? "s" : "", name, flat > 1 ? ", ..." : "",
                 flat > 1 ? "have" : "has", flat > 1 ? "them" : "it");
        svc->warn(c, msg);
    }
out:
    c->noise.sd = noise;
    c->phase = DRIFT_CHAIN_SETUP;
    drift_free(work);
    drift_free(x);
    drift_free(g);
    drift_free(fisher);
    drift_free(s.best);
    drift_free(s.Dinv);
    if (rc && !c->failed) {
        if (rc == DRIFT_ENONFINITE && c->nonfinite[0])
            drift_chain_fail(c, rc, "%s", c->nonfinite);
        else
            drift_chain_fail(c, rc, "--gradient cv: the mode search failed "
                             "(status %d)", rc);
    }
    return rc ? (c->failed ? c->failed : rc) : DRIFT_OK;
}

int drift_mode_recentre(drift_chain *c, const double *x)
{
    drift_cv *cv = &c->run->cv;
    size_t d = c->d;
    search s = {c, &drift_services_table, d, c->N, 0, 0, c->grads,
                drift_now(), 0, INFINITY, 0, 0, NULL, INFINITY, NULL};
    double *fisher = drift_malloc_array(d, sizeof(double));
    double *work = drift_malloc_array(3 * d, sizeof(double));
    double *g = drift_malloc_array(d, sizeof(double));
    int rc = DRIFT_OK;
    if (!fisher || !work || !g) {
        rc = drift_chain_fail(c, DRIFT_ENOMEM,
                              "out of memory moving the control variates' "
                              "centre (%zu parameters)", d);
        goto out;
    }
    double noise = c->noise.sd;
    c->noise.sd = 0;
    int phase = c->phase;
    c->phase = DRIFT_CHAIN_MODE;
    memcpy(cv->mode, x, d * sizeof *x);
    drift_free(cv->s);
    drift_free(cv->l);
    cv->s = cv->l = NULL;
    rc = store_metric(&s, cv, fisher, work);
    /* U at the centre: the likelihood's sum from the store and the
     * prior's. */
    double Up = 0;
    if (!rc)
        rc = s.svc->grad_prior(c, cv->mode, g, &Up);
    if (!rc) {
        cv->U = Up - cv->lik_sum;
        cv->recentred++;
    }
    c->noise.sd = noise;
    c->phase = phase;
    cv->grads += c->grads - s.grads0;
out:
    drift_free(fisher);
    drift_free(work);
    drift_free(g);
    if (rc && !c->failed)
        drift_chain_fail(c, rc, "moving the control variates' centre "
                         "failed (status %d)", rc);
    return rc ? (c->failed ? c->failed : rc) : DRIFT_OK;
}
