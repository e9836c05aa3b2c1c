/* pathfinder.c: Pathfinder's paths, their approximations and ELBOs, and
 * PSIS over the pooled draws (see pathfinder.h).  The L-BFGS itself is
 * optimize.c's; this file watches its iterates. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "adapt.h"
#include "pathfinder.h"

#define LOG_2PI 1.8378770664093454836

void drift_pathfinder_defaults(drift_pathfinder_opts *o)
{
    drift_optimize_defaults(&o->lbfgs);
    o->lbfgs.iter = 1000;
    o->lbfgs.polish = 0;    /* the path is L-BFGS's alone */
    o->lbfgs.confirm = 1;   /* but not cut short far from the mode */
    o->num_paths = 4;
    o->num_draws = 1000;
    o->num_psis_draws = 1000;
    o->num_elbo_draws = 25;
    o->psis_resample = 1;
    o->calculate_lp = 1;
    o->init_radius = 2;
}

static double dot(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * b[k];
    return s;
}

/* ---- one approximation: N(mu, Sigma), Sigma = diag(alpha) + B G B' ----
 *
 * With k = 2 * (pairs) >= d it is held dense: L the Cholesky factor of
 * Sigma (d x d), a draw mu + L u.  Otherwise as the paper's Algorithm 4:
 * Q R = diag(alpha)^-1/2 B (thin QR, Q d x k), L the factor of
 * I + R G R' (k x k), a draw mu + sqrt(alpha) (u + Q (L - I) Q'u).  Either
 * way log q = -(logdet + u'u + d log 2 pi) / 2. */
typedef struct approx {
    size_t k;           /* columns of B (0: none built) */
    int dense;
    double logdet;      /* log det Sigma */
    double *mu;         /* d */
    double *sa;         /* d: sqrt(alpha) */
    double *Q;          /* k x d: Q's columns, one per row */
    double *L;          /* dense: d x d; else k x k (row-major, lower) */
} approx;

/* Buffers of an approximation for history m over d coordinates (the
 * dense form only when d <= 2m, so L fits in 4m^2 either way). */
static int approx_alloc(approx *a, size_t d, size_t m)
{
    size_t k = 2 * m;
    memset(a, 0, sizeof *a);
    a->mu = drift_malloc_array(2 * d + k * d + k * k + 1, sizeof *a->mu);
    if (!a->mu)
        return DRIFT_ENOMEM;
    a->sa = a->mu + d;
    a->Q = a->sa + d;
    a->L = a->Q + k * d;
    return DRIFT_OK;
}

static void approx_free(approx *a) { drift_free(a->mu); }

/* Scratch of approx_build and approx_draw. */
typedef struct scratch {
    double *B;          /* k x d: B's columns, then diag(alpha)^-1/2 B,
                           then the Householder vectors */
    double *G;          /* k x k: the middle factor */
    double *R;          /* m x m: s_i'y_j, then its inverse */
    double *T;          /* m x m, k x k: products */
    double *v, *w;      /* k */
    double *u;          /* d */
} scratch;

static int scratch_alloc(scratch *s, size_t d, size_t m)
{
    size_t k = 2 * m;
    s->B = drift_malloc_array(k * d + 2 * k * k + 2 * m * m + 2 * k + d + 1,
                              sizeof *s->B);
    if (!s->B)
        return DRIFT_ENOMEM;
    s->G = s->B + k * d;
    s->T = s->G + k * k;
    s->R = s->T + k * k;
    s->v = s->R + 2 * m * m;
    s->w = s->v + k;
    s->u = s->w + k;
    return DRIFT_OK;
}

/* Thin Householder QR of the k columns c_j = B + j d (k < d) in place:
 * R (k x k, upper) into R, the explicit Q's columns into Q (k x d).
 * A zero column gives a zero row of R (rank-deficient B is fine: Q stays
 * orthonormal). */
static void householder_qr(double *B, size_t d, size_t k, double *R,
                           double *Q, double *beta)
{
    for (size_t c = 0; c < k; c++) {
        double *v = B + c * d;
        double nx = sqrt(dot(v + c, v + c, d - c));
        beta[c] = 0;
        if (nx > 0) {
            double a = v[c] > 0 ? -nx : nx;
            v[c] -= a;
            double vv = dot(v + c, v + c, d - c);
            beta[c] = vv > 0 ? 2 / vv : 0;
            for (size_t j = c + 1; j < k; j++) {
                double *cj = B + j * d;
                double t = beta[c] * dot(v + c, cj + c, d - c);
                for (size_t r = c; r < d; r++)
                    cj[r] -= t * v[r];
            }
            R[c * k + c] = a;
        } else {
            R[c * k + c] = 0;
        }
        for (size_t j = c + 1; j < k; j++)
            R[c * k + j] = B[j * d + c];
        for (size_t j = 0; j < c; j++)
            R[c * k + j] = 0;
    }
    /* Q = H_0 ... H_{k-1} [e_0 ... e_{k-1}] */
    for (size_t j = 0; j < k; j++) {
        double *q = Q + j * d;
        memset(q, 0, d * sizeof *q);
        q[j] = 1;
        for (size_t c = k; c-- > 0;) {
            if (beta[c] == 0)
                continue;
            const double *v = B + c * d;
            double t = beta[c] * dot(v + c, q + c, d - c);
            for (size_t r = c; r < d; r++)
                q[r] -= t * v[r];
        }
    }
}

/* The approximation at x (gradient gf of f = -log density) from the
 * np pairs S, Y (np x d each, oldest first; s'y > 0 for each) and the
 * diagonal alpha: the inverse-Hessian estimate of L-BFGS in Byrd, Nocedal
 * and Schnabel's compact form, H = diag(alpha) + B G B' with
 * B = [diag(alpha) Y, S], G = [[0, -R^-1], [-R^-T, R^-T (D + Y'diag(alpha)Y)
 * R^-1]], R the upper triangle of S'Y and D its diagonal; the mean is the
 * Newton step x - H gf.  Returns 0, or -1 when H is not positive definite
 * in floating point (no approximation at this iterate). */
static int approx_build(approx *a, scratch *s, size_t d, size_t np,
                        const double *S, const double *Y,
                        const double *alpha, const double *x,
                        const double *gf)
{
    size_t k = 2 * np;
    double *R = s->R, *Ri = s->R + np * np, *G = s->G, *T = s->T;
    a->k = 0;
    /* R and its inverse (upper triangular, back substitution). */
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < np; j++)
            R[i * np + j] = j >= i ? dot(S + i * d, Y + j * d, d) : 0;
    for (size_t i = 0; i < np; i++)
        if (!(R[i * np + i] > 0))
            return -1;
    for (size_t c = 0; c < np; c++)
        for (size_t i = np; i-- > 0;) {
            double t = i == c ? 1 : 0;
            for (size_t j = i + 1; j < np; j++)
                t -= R[i * np + j] * Ri[j * np + c];
            Ri[i * np + c] = t / R[i * np + i];
        }
    /* T = D + Y' diag(alpha) Y */
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j <= i; j++) {
            double t = 0;
            for (size_t r = 0; r < d; r++)
                t += Y[i * d + r] * alpha[r] * Y[j * d + r];
            T[i * np + j] = T[j * np + i] = t;
        }
    for (size_t i = 0; i < np; i++)
        T[i * np + i] += R[i * np + i];
    /* G */
    memset(G, 0, k * k * sizeof *G);
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < np; j++) {
            G[i * k + np + j] = -Ri[i * np + j];
            G[(np + i) * k + j] = -Ri[j * np + i];
            double t = 0; /* (R^-T T R^-1)_ij */
            for (size_t p = 0; p < np; p++)
                for (size_t q = 0; q < np; q++)
                    t += Ri[p * np + i] * T[p * np + q] * Ri[q * np + j];
            G[(np + i) * k + np + j] = t;
        }
    /* B's columns */
    double *B = s->B;
    for (size_t i = 0; i < np; i++)
        for (size_t r = 0; r < d; r++) {
            B[i * d + r] = alpha[r] * Y[i * d + r];
            B[(np + i) * d + r] = S[i * d + r];
        }
    /* mu = x - (alpha gf + B G B' gf) */
    for (size_t i = 0; i < k; i++)
        s->v[i] = dot(B + i * d, gf, d);
    for (size_t i = 0; i < k; i++)
        s->w[i] = dot(G + i * k, s->v, k);
    for (size_t r = 0; r < d; r++) {
        double t = alpha[r] * gf[r];
        for (size_t i = 0; i < k; i++)
            t += B[i * d + r] * s->w[i];
        a->mu[r] = x[r] - t;
        a->sa[r] = sqrt(alpha[r]);
    }
    double logdet = 0;
    if (k >= d) {
        /* Sigma = diag(alpha) + B G B', dense */
        double *Sig = a->L;
        for (size_t r = 0; r < d; r++)
            for (size_t c = 0; c <= r; c++) {
                double t = r == c ? alpha[r] : 0;
                for (size_t i = 0; i < k; i++) {
                    double gi = 0;
                    for (size_t j = 0; j < k; j++)
                        gi += G[i * k + j] * B[j * d + c];
                    t += B[i * d + r] * gi;
                }
                Sig[r * d + c] = Sig[c * d + r] = t;
            }
        if (drift_adapt_cholesky(Sig, d, a->L))
            return -1;
        for (size_t r = 0; r < d; r++)
            logdet += 2 * log(a->L[r * d + r]);
        a->dense = 1;
    } else {
        for (size_t i = 0; i < k; i++)
            for (size_t r = 0; r < d; r++)
                B[i * d + r] /= a->sa[r];
        double *Rq = T; /* k x k */
        householder_qr(B, d, k, Rq, a->Q, s->w);
        /* M = I + Rq G Rq' into L, then its factor */
        double *M = a->L;
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j <= i; j++) {
                double t = i == j ? 1 : 0;
                for (size_t p = 0; p < k; p++) {
                    double gp = 0;
                    for (size_t q = 0; q < k; q++)
                        gp += G[p * k + q] * Rq[j * k + q];
                    t += Rq[i * k + p] * gp;
                }
                M[i * k + j] = M[j * k + i] = t;
            }
        if (drift_adapt_cholesky(M, k, a->L))
            return -1;
        for (size_t r = 0; r < d; r++)
            logdet += log(alpha[r]);
        for (size_t i = 0; i < k; i++)
            logdet += 2 * log(a->L[i * k + i]);
        a->dense = 0;
    }
    if (!isfinite(logdet))
        return -1;
    for (size_t r = 0; r < d; r++)
        if (!isfinite(a->mu[r]))
            return -1;
    a->logdet = logdet;
    a->k = k;
    return 0;
}

/* A draw of a into theta (d), its log density under a into *lq. */
static void approx_draw(const approx *a, scratch *s, size_t d, drift_rng *rng,
                        double *theta, double *lq)
{
    double *u = s->u;
    drift_rng_normal_fill(rng, d, u);
    double uu = dot(u, u, d);
    size_t k = a->k;
    if (a->dense) {
        for (size_t r = 0; r < d; r++) {
            double t = 0;
            for (size_t c = 0; c <= r; c++)
                t += a->L[r * d + c] * u[c];
            theta[r] = a->mu[r] + t;
        }
    } else {
        for (size_t i = 0; i < k; i++)
            s->v[i] = dot(a->Q + i * d, u, d);
        for (size_t i = 0; i < k; i++) {
            double t = -s->v[i];
            for (size_t j = 0; j <= i; j++)
                t += a->L[i * k + j] * s->v[j];
            s->w[i] = t;
        }
        for (size_t r = 0; r < d; r++) {
            double t = u[r];
            for (size_t i = 0; i < k; i++)
                t += a->Q[i * d + r] * s->w[i];
            theta[r] = a->mu[r] + a->sa[r] * t;
        }
    }
    *lq = -0.5 * (a->logdet + uu + (double)d * LOG_2PI);
}

/* ---- one path ---- */

typedef struct path {
    drift_logdensity *ld;
    size_t d, m;
    const drift_pathfinder_opts *o;
    drift_rng *rng;
    drift_err *e;
    double *S, *Y;          /* m x d each, ring: newest at head - 1 */
    double *hs, *hy;        /* m x d: the pairs oldest first */
    size_t stored, head;
    double *alpha;          /* d: the diagonal estimate */
    double *xp, *gp;        /* the previous iterate and gradient */
    double *theta;          /* d */
    unsigned iter;          /* iterates seen, the start point being 0 */
    approx cur, best;
    int have_best;
    double best_elbo;
    unsigned best_iter, n_approx;
    scratch sc;
} path;

static void path_free(path *p)
{
    drift_free(p->S);
    approx_free(&p->cur);
    approx_free(&p->best);
    drift_free(p->sc.B);
}

static int path_alloc(path *p, size_t d, size_t m)
{
    p->S = drift_malloc_array(4 * m * d + 4 * d + 1, sizeof *p->S);
    if (!p->S)
        return DRIFT_ENOMEM;
    p->Y = p->S + m * d;
    p->hs = p->Y + m * d;
    p->hy = p->hs + m * d;
    p->alpha = p->hy + m * d;
    p->xp = p->alpha + d;
    p->gp = p->xp + d;
    p->theta = p->gp + d;
    if (approx_alloc(&p->cur, d, m) || approx_alloc(&p->best, d, m) ||
        scratch_alloc(&p->sc, d, m))
        return DRIFT_ENOMEM;
    return DRIFT_OK;
}

/* The log density at theta, -inf where it is not finite; an error only
 * when the evaluation itself failed (memory). */
static int log_p(path *p, const double *theta, double *lp)
{
    int rc = drift_logdensity_eval(p->ld, theta, lp, NULL, p->e);
    if (rc == DRIFT_ENOMEM)
        return rc;
    if (rc || !isfinite(*lp))
        *lp = -INFINITY;
    return DRIFT_OK;
}

/* The diagonal update of the paper (Gilbert and Lemarechal's): alpha'_j =
 * y's / (y'Ay / alpha_j + y_j^2 - (y'Ay / s'A^-1 s) (s_j / alpha_j)^2),
 * A = diag(alpha); kept where it would not be positive and finite. */
static void diag_update(double *alpha, const double *s, const double *y,
                        size_t d)
{
    double yay = 0, sas = 0, sy = dot(s, y, d);
    for (size_t j = 0; j < d; j++) {
        yay += y[j] * alpha[j] * y[j];
        sas += s[j] * s[j] / alpha[j];
    }
    for (size_t j = 0; j < d; j++) {
        double r = s[j] / alpha[j];
        double den = yay / alpha[j] + y[j] * y[j] - yay / sas * r * r;
        double a = sy / den;
        if (a > 0 && isfinite(a))
            alpha[j] = a;
    }
}

/* L-BFGS's callback: the pair from the previous iterate, the
 * approximation here and its ELBO. */
static int on_iter(void *user, const double *x, double f, const double *g)
{
    path *p = user;
    size_t d = p->d, m = p->m;
    (void)f;
    if (p->iter++ == 0) {
        memcpy(p->xp, x, d * sizeof *x);
        memcpy(p->gp, g, d * sizeof *g);
        return DRIFT_OK;
    }
    double *s = p->S + p->head * d, *y = p->Y + p->head * d;
    for (size_t j = 0; j < d; j++) {
        s[j] = x[j] - p->xp[j];
        y[j] = g[j] - p->gp[j];
    }
    memcpy(p->xp, x, d * sizeof *x);
    memcpy(p->gp, g, d * sizeof *g);
    /* CmdStan's curvature test: s'y > 0 and y'y / s'y at most 1e12. */
    double sy = dot(s, y, d), yy = dot(y, y, d);
    if (sy > 0 && yy / sy <= 1e12) {
        diag_update(p->alpha, s, y, d);
        p->head = (p->head + 1) % m;
        if (p->stored < m)
            p->stored++;
    }
    if (!p->stored)
        return DRIFT_OK;
    size_t np = p->stored;
    for (size_t q = 0; q < np; q++) {
        size_t i = (p->head + m - np + q) % m;
        memcpy(p->hs + q * d, p->S + i * d, d * sizeof *p->hs);
        memcpy(p->hy + q * d, p->Y + i * d, d * sizeof *p->hy);
    }
    if (approx_build(&p->cur, &p->sc, d, np, p->hs, p->hy, p->alpha, x, g))
        return DRIFT_OK;
    p->n_approx++;
    /* ELBO = E_q[log p - log q] by num_elbo_draws draws */
    double sum = 0;
    for (unsigned k = 0; k < p->o->num_elbo_draws; k++) {
        double lq, lp;
        approx_draw(&p->cur, &p->sc, d, p->rng, p->theta, &lq);
        int rc = log_p(p, p->theta, &lp);
        if (rc)
            return rc;
        sum += lp - lq;
    }
    double elbo = sum / p->o->num_elbo_draws;
    if (isfinite(elbo) && (!p->have_best || elbo > p->best_elbo)) {
        approx t = p->best;
        p->best = p->cur;
        p->cur = t;
        p->have_best = 1;
        p->best_elbo = elbo;
        p->best_iter = p->iter - 1;
    }
    return DRIFT_OK;
}

/* Path number `which`: its L-BFGS from x0, then num_draws draws of the
 * best approximation into theta (num_draws x d), lp, lq.  DRIFT_OK, or
 * the path's error (in e). */
static int run_path(drift_logdensity *ld, size_t d,
                    const drift_pathfinder_opts *o, const double *init,
                    drift_rng *rng, drift_pathfinder_path *info,
                    double *theta, double *lp, double *lq, drift_err *e)
{
    path p;
    memset(&p, 0, sizeof p);
    p.ld = ld;
    p.d = d;
    p.m = o->lbfgs.history_size ? o->lbfgs.history_size : 1;
    p.o = o;
    p.rng = rng;
    p.e = e;
    int rc = path_alloc(&p, d, p.m);
    double *x = drift_malloc_array(d + 1, sizeof *x);
    if (rc || !x) {
        path_free(&p);
        drift_free(x);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < d; j++)
        p.alpha[j] = 1;
    if (init)
        memcpy(x, init, d * sizeof *x);
    else if ((rc = drift_optimize_random_start(ld, d, o->init_radius, rng,
                                               x, e)))
        goto done;
    drift_optimize_opts lo = o->lbfgs;
    lo.on_iter = on_iter;
    lo.on_iter_user = &p;
    drift_optimize_result r;
    rc = drift_optimize_lbfgs(ld, d, &lo, x, &r, e);
    info->iterations = p.iter ? p.iter - 1 : 0;
    info->n_approx = p.n_approx;
    if (rc)
        goto done;
    info->converged = r.converged;
    info->why = r.why;
    if (!p.have_best && !info->iterations) {
        rc = drift_err_set(e, DRIFT_ENUMERIC,
                           "L-BFGS took no step from the initial point (%s): "
                           "no path to approximate along; start elsewhere",
                           r.why);
        goto done;
    }
    if (!p.have_best) {
        rc = drift_err_set(e, DRIFT_ENUMERIC,
                           "no approximation along the L-BFGS path (%u "
                           "iterations, %s): %s",
                           info->iterations, r.why,
                           p.n_approx ? "every ELBO estimate was not finite "
                                        "(the log density is not finite at "
                                        "the approximations' draws)"
                                      : "the density has no curvature along "
                                        "it (flat, or an improper "
                                        "posterior?)");
        goto done;
    }
    info->best_iter = p.best_iter;
    info->elbo = p.best_elbo;
    for (unsigned k = 0; k < o->num_draws; k++) {
        double *t = theta + (size_t)k * d;
        approx_draw(&p.best, &p.sc, d, rng, t, &lq[k]);
        if (!o->calculate_lp)
            lp[k] = NAN;
        else if ((rc = log_p(&p, t, &lp[k])))
            goto done;
    }
done:
    path_free(&p);
    drift_free(x);
    return rc;
}

/* ---- the run ---- */

void drift_pathfinder_result_free(drift_pathfinder_result *r)
{
    if (!r)
        return;
    drift_free(r->idx);
    drift_free(r->theta);
    drift_free(r->lp);
    drift_free(r->lp_approx);
    drift_free(r->path);
    drift_free(r->paths);
    drift_free(r);
}

/* n rows drawn with replacement by the weights exp(lw) (normalised):
 * multinomial resampling, as CmdStan's. */
static int resample(const double *lw, size_t pool, size_t n, drift_rng *rng,
                    size_t *idx)
{
    double *cum = drift_malloc_array(pool + 1, sizeof *cum);
    if (!cum)
        return DRIFT_ENOMEM;
    double s = 0;
    for (size_t i = 0; i < pool; i++)
        cum[i] = s += exp(lw[i]);
    for (size_t k = 0; k < n; k++) {
        double u = drift_rng_uniform(rng) * s;
        size_t lo = 0, hi = pool - 1;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cum[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        idx[k] = lo;
    }
    drift_free(cum);
    return DRIFT_OK;
}

int drift_pathfinder_run(drift_logdensity *ld, size_t d,
                         const drift_pathfinder_opts *o, const double *init,
                         drift_rng *rng, drift_pathfinder_result **out,
                         drift_err *e)
{
    *out = NULL;
    unsigned P = o->num_paths ? o->num_paths : 1;
    size_t nd = o->num_draws;
    drift_pathfinder_result *r = drift_calloc(1, sizeof *r);
    if (r) {
        r->d = d;
        r->n_paths = P;
        r->pareto_k = NAN;
        r->paths = drift_calloc(P, sizeof *r->paths);
        r->theta = drift_malloc_array(P * nd * d + 1, sizeof *r->theta);
        r->lp = drift_malloc_array(P * nd + 1, sizeof *r->lp);
        r->lp_approx = drift_malloc_array(P * nd + 1, sizeof *r->lp_approx);
        r->path = drift_malloc_array(P * nd + 1, sizeof *r->path);
    }
    if (!r || !r->paths || !r->theta || !r->lp || !r->lp_approx ||
        !r->path) {
        drift_pathfinder_result_free(r);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    int first_rc = DRIFT_OK;
    char first_msg[sizeof e->msg] = "";
    size_t rows = 0;
    for (unsigned q = 0; q < P; q++) {
        drift_pathfinder_path *info = &r->paths[q];
        int rc = run_path(ld, d, o, init, rng, info, r->theta + rows * d,
                          r->lp + rows, r->lp_approx + rows, e);
        if (rc == DRIFT_ENOMEM) {
            drift_pathfinder_result_free(r);
            return rc;
        }
        info->status = rc;
        if (rc) {
            snprintf(info->message, sizeof info->message, "%s", e->msg);
            if (!first_rc) {
                first_rc = rc;
                snprintf(first_msg, sizeof first_msg, "%s", e->msg);
            }
            continue;
        }
        for (size_t k = 0; k < nd; k++)
            r->path[rows + k] = q;
        rows += nd;
        r->paths_ok++;
    }
    if (!r->paths_ok) {
        drift_pathfinder_result_free(r);
        return drift_err_set(e, first_rc ? first_rc : DRIFT_ENUMERIC,
                             "%s%s", P > 1 ? "every path failed: " : "",
                             first_msg);
    }
    r->pool_n = rows;
    int psis = P > 1 && o->calculate_lp;
    r->n = psis && o->psis_resample ? o->num_psis_draws : rows;
    r->idx = drift_malloc_array(r->n + 1, sizeof *r->idx);
    double *lw = psis ? drift_malloc_array(rows, sizeof *lw) : NULL;
    if (!r->idx || (psis && !lw)) {
        drift_free(lw);
        drift_pathfinder_result_free(r);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    if (psis) {
        for (size_t i = 0; i < rows; i++)
            lw[i] = r->lp[i] - r->lp_approx[i];
        int rc = drift_psis_smooth(lw, rows, &r->pareto_k);
        if (!rc && o->psis_resample)
            rc = resample(lw, rows, r->n, rng, r->idx);
        drift_free(lw);
        if (rc) {
            drift_pathfinder_result_free(r);
            return rc == DRIFT_ENOMEM
                       ? drift_err_set(e, rc, "out of memory")
                       : drift_err_set(e, rc,
                                       "PSIS: the log density is not "
                                       "finite at any draw");
        }
        if (o->psis_resample) {
            *out = r;
            return DRIFT_OK;
        }
    }
    for (size_t i = 0; i < r->n; i++)
        r->idx[i] = i;
    *out = r;
    return DRIFT_OK;
}

int drift_pathfinder_inits(const drift_model *m, uint64_t seed, size_t n,
                           double **points, drift_err *e)
{
    *points = NULL;
    size_t d = m->dim;
    drift_logdensity *ld;
    int rc = drift_logdensity_new(&ld, m, 1, "--init pathfinder", e);
    if (rc)
        return rc;
    drift_pathfinder_opts o;
    drift_pathfinder_defaults(&o);
    /* Resampling draws its rows one uniform at a time, so the first 1000
     * are the same however many more are asked for. */
    if (n > o.num_psis_draws)
        o.num_psis_draws = (unsigned)n;
    drift_rng rng;
    drift_rng_seed(&rng, seed, DRIFT_PATHFINDER_STREAM);
    drift_pathfinder_result *r = NULL;
    rc = drift_pathfinder_run(ld, d, &o, NULL, &rng, &r, e);
    drift_logdensity_free(ld);
    if (rc)
        return rc;
    double *p = drift_malloc_array(n * d + 1, sizeof *p);
    if (!p) {
        drift_pathfinder_result_free(r);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; k++)
        memcpy(p + k * d, r->theta + r->idx[k] * d, d * sizeof *p);
    drift_pathfinder_result_free(r);
    *points = p;
    return DRIFT_OK;
}
