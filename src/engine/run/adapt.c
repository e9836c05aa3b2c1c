/* adapt.c: the arithmetic of warmup adaptation: Stan's windowed schedule,
 * dual averaging of a step size, Welford estimators and the metric they
 * set (diagonal, from the draws or from draws and gradients as nutpie
 * does, or dense through a Cholesky factor: LAPACK and BLAS).
 * Pure functions on caller-owned memory; not for the services table
 * (oracle.c) nor for deciding when a window ends during a run (run.c). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <cblas.h>

#include "adapt.h"
#include "base/lapack.h"

/* ---- the schedule ------------------------------------------------------- */

void drift_adapt_schedule_make(uint64_t warmup, drift_adapt_schedule *s)
{
    memset(s, 0, sizeof *s);
    s->warmup = warmup;
    if (warmup == 0)
        return;
    if (warmup < 20) {
        /* Stan does no metric adaptation below 20 iterations: all of
         * warmup is the initial fast interval. */
        s->init_buffer = warmup;
        return;
    }
    uint64_t init = 75, term = 50, base = 25;
    if (init + base + term > warmup) {
        /* Stan truncates 0.15 and 0.1 of warmup to integers. */
        init = (uint64_t)(0.15 * (double)warmup);
        term = (uint64_t)(0.1 * (double)warmup);
        base = warmup - (init + term);
    }
    s->init_buffer = init;
    s->term_buffer = term;
    s->base_window = base;
    /* Windows as Stan's windowed_adaptation walks them, in 0-based
     * iterations: a window ends at `next`; the next one is twice as long,
     * unless the one after it would cross the terminal buffer, in which
     * case it stretches to the buffer. */
    uint64_t last = warmup - term - 1; /* the last slow iteration */
    uint64_t size = base, next = init + base - 1;
    while (s->n_windows < DRIFT_ADAPT_MAX_WINDOWS) {
        s->window_end[s->n_windows++] = next + 1;
        if (next >= last)
            break;
        size *= 2;
        uint64_t counter = next;
        next = counter + size;
        if (next != last && next + 2 * size >= warmup - term)
            next = last;
    }
}

int drift_adapt_in_window(const drift_adapt_schedule *s, uint64_t iter)
{
    return s->n_windows > 0 && iter >= s->init_buffer &&
           iter < s->warmup - s->term_buffer;
}

int drift_adapt_window_ends(const drift_adapt_schedule *s, uint64_t done)
{
    for (size_t k = 0; k < s->n_windows; k++)
        if (s->window_end[k] == done)
            return 1;
    return 0;
}

int drift_adapt_last_window_ends(const drift_adapt_schedule *s,
                                 uint64_t done)
{
    return s->n_windows > 0 && s->window_end[s->n_windows - 1] == done;
}

/* ---- dual averaging ----------------------------------------------------- */

void drift_adapt_da_restart(drift_dual_avg *da, double h0, double delta)
{
    da->mu = log(10.0 * h0);
    da->gamma = 0.05;
    da->t0 = 10.0;
    da->kappa = 0.75;
    da->delta = delta;
    da->s_bar = 0;
    da->x_bar = 0;
    da->counter = 0;
}

double drift_adapt_da_update(drift_dual_avg *da, double accept_stat)
{
    double a = isnan(accept_stat) ? 0.0 : accept_stat;
    if (a > 1)
        a = 1;
    else if (a < 0)
        a = 0;
    da->counter++;
    double t = (double)da->counter;
    double eta = 1.0 / (t + da->t0);
    da->s_bar = (1.0 - eta) * da->s_bar + eta * (da->delta - a);
    double x = da->mu - da->s_bar * sqrt(t) / da->gamma;
    double w = pow(t, -da->kappa);
    da->x_bar = (1.0 - w) * da->x_bar + w * x;
    return exp(x);
}

double drift_adapt_da_final(const drift_dual_avg *da)
{
    return exp(da->x_bar);
}

/* ---- Welford estimators ------------------------------------------------- */

size_t drift_adapt_welford_doubles(size_t d, int dense)
{
    return 2 * d + (dense ? d * d : d);
}

void drift_adapt_welford_init(drift_adapt_welford *w, size_t d, int dense,
                              double *mem)
{
    w->d = d;
    w->dense = dense;
    w->mean = mem;
    w->delta = mem + d;
    w->m2 = mem + 2 * d;
    drift_adapt_welford_restart(w);
}

void drift_adapt_welford_restart(drift_adapt_welford *w)
{
    w->n = 0;
    memset(w->mean, 0, w->d * sizeof(double));
    memset(w->m2, 0, (w->dense ? w->d * w->d : w->d) * sizeof(double));
}

void drift_adapt_welford_add(drift_adapt_welford *w, const double *x)
{
    size_t d = w->d;
    w->n++;
    double inv_n = 1.0 / (double)w->n;
    for (size_t k = 0; k < d; k++) {
        w->delta[k] = x[k] - w->mean[k];
        w->mean[k] += w->delta[k] * inv_n;
    }
    if (!w->dense) {
        for (size_t k = 0; k < d; k++)
            w->m2[k] += (x[k] - w->mean[k]) * w->delta[k];
        return;
    }
    /* (x - new mean)(x - old mean)', as Stan accumulates it. */
    for (size_t i = 0; i < d; i++) {
        double a = x[i] - w->mean[i];
        double *row = w->m2 + i * d;
        for (size_t j = 0; j < d; j++)
            row[j] += a * w->delta[j];
    }
}

int drift_adapt_welford_regularised(const drift_adapt_welford *w, double *out)
{
    if (w->n < 2)
        return -1;
    double n = (double)w->n, shrink = n / (n + 5.0),
           ridge = 1e-3 * (5.0 / (n + 5.0)), scale = shrink / (n - 1.0);
    size_t d = w->d;
    if (!w->dense) {
        for (size_t k = 0; k < d; k++)
            out[k] = scale * w->m2[k] + ridge;
        return 0;
    }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j <= i; j++) {
            /* The accumulation is symmetric but for rounding: average. */
            double v = 0.5 * (w->m2[i * d + j] + w->m2[j * d + i]) * scale;
            if (i == j)
                v += ridge;
            out[i * d + j] = out[j * d + i] = v;
        }
    return 0;
}

/* ---- the metric --------------------------------------------------------- */

size_t drift_adapt_metric_doubles(drift_metric_kind kind, size_t d)
{
    switch (kind) {
    case DRIFT_METRIC_DIAG:
        return 2 * d + 2 * drift_adapt_welford_doubles(d, 0);
    case DRIFT_METRIC_DENSE:
        return 2 * d * d + drift_adapt_welford_doubles(d, 1);
    default:
        return 0;
    }
}

void drift_adapt_metric_init(drift_adapt_metric *m, drift_metric_kind kind,
                             size_t d, double *mem)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->d = d;
    if (kind == DRIFT_METRIC_DIAG) {
        m->inv = mem;
        m->factor = mem + d;
        for (size_t k = 0; k < d; k++)
            m->inv[k] = m->factor[k] = 1.0;
        drift_adapt_welford_init(&m->est, d, 0, mem + 2 * d);
        drift_adapt_welford_init(&m->grad, d, 0,
                                 mem + 2 * d + drift_adapt_welford_doubles(d, 0));
    } else if (kind == DRIFT_METRIC_DENSE) {
        m->inv = mem;
        m->factor = mem + d * d;
        memset(mem, 0, 2 * d * d * sizeof(double));
        for (size_t k = 0; k < d; k++)
            m->inv[k * d + k] = m->factor[k * d + k] = 1.0;
        drift_adapt_welford_init(&m->est, d, 1, mem + 2 * d * d);
    } else {
        m->kind = DRIFT_METRIC_UNIT;
    }
}

/* Lower Cholesky factor of the d x d symmetric a (its lower triangle is
 * read) into l (row-major, upper part zeroed; l may be a), through
 * LAPACK's blocked dpotrf: a dense metric over hundreds of coordinates is
 * factored at every window's end.  -1 when a is not positive definite or
 * not finite. */
static int cholesky(const double *a, size_t d, double *l)
{
    for (size_t i = 0; i < d; i++) {
        if (l != a)
            memcpy(l + i * d, a + i * d, (i + 1) * sizeof *l);
        memset(l + i * d + i + 1, 0, (d - i - 1) * sizeof *l);
    }
    if (d == 0)
        return 0;
    /* Row-major lower is column-major upper. */
    blasint n = (blasint)d, info = 0;
    dpotrf_("U", &n, l, &n, &info);
    if (info)
        return -1;
    /* dpotrf need not stop on NaN; every entry of a row reaches that
     * row's diagonal. */
    for (size_t i = 0; i < d; i++)
        if (!(l[i * d + i] > 0) || !isfinite(l[i * d + i]))
            return -1;
    return 0;
}

int drift_adapt_cholesky(const double *a, size_t d, double *l)
{
    return cholesky(a, d, l);
}

int drift_adapt_metric_set_dense(drift_adapt_metric *m, const double *inv)
{
    size_t d = m->d;
    if (m->kind != DRIFT_METRIC_DENSE || cholesky(inv, d, m->factor)) {
        if (m->kind == DRIFT_METRIC_DENSE)
            cholesky(m->inv, d, m->factor);
        return -1;
    }
    memcpy(m->inv, inv, d * d * sizeof *inv);
    return 0;
}

int drift_adapt_spd_inverse(const double *a, size_t d, double *inv,
                            double *scratch)
{
    double *l = scratch;
    if (cholesky(a, d, l))
        return -1;
    /* inv = L^-T L^-1, from the identity by two triangular solves. */
    memset(inv, 0, d * d * sizeof *inv);
    for (size_t k = 0; k < d; k++)
        inv[k * d + k] = 1.0;
    if (d) {
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans,
                    CblasNonUnit, (int)d, (int)d, 1.0, l, (int)d, inv,
                    (int)d);
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans,
                    CblasNonUnit, (int)d, (int)d, 1.0, l, (int)d, inv,
                    (int)d);
    }
    /* Symmetric to the last bit. */
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < i; j++)
            inv[i * d + j] = inv[j * d + i] =
                0.5 * (inv[i * d + j] + inv[j * d + i]);
    return 0;
}

void drift_adapt_metric_observe(drift_adapt_metric *m, const double *theta,
                                const double *grad)
{
    if (m->kind == DRIFT_METRIC_UNIT)
        return;
    drift_adapt_welford_add(&m->est, theta);
    if (grad && m->kind == DRIFT_METRIC_DIAG)
        drift_adapt_welford_add(&m->grad, grad);
}

/* The bounds of a variance guessed from one gradient: it need only be
 * within a few orders of magnitude until the first window's estimate. */
#define START_VAR_MIN 1e-10
#define START_VAR_MAX 1e10

/* For a Gaussian, 1/|grad_k U| at x is sigma_k^2 / |x_k - mu_k|: sigma_k
 * when the point is one standard deviation out, halfway from the
 * identity to the variance on a log scale, and that much closer than the
 * identity for a coordinate whose scale is 1e-4 or 1e4. */
void drift_adapt_metric_start_grad(drift_adapt_metric *m, const double *grad)
{
    if (m->kind != DRIFT_METRIC_DIAG)
        return;
    for (size_t k = 0; k < m->d; k++) {
        double a = fabs(grad[k]);
        if (!(a > 0) || !isfinite(a))
            continue;
        m->inv[k] = fmin(fmax(1.0 / a, START_VAR_MIN), START_VAR_MAX);
        m->factor[k] = sqrt(m->inv[k]);
    }
}

/* The bounds of a variance estimated from draws and gradients (nutpie's):
 * beyond them a coordinate is flat or degenerate, not a scale. */
#define GRAD_VAR_MIN 1e-20
#define GRAD_VAR_MAX 1e20

/* M^-1 from a window's draws and gradients: for a Gaussian target with
 * diagonal covariance, grad_k U = (theta_k - mu_k) / sigma_k^2, so
 * sqrt(var theta_k / var grad_k) = sigma_k^2 from any points at all,
 * not only from draws that have spread over the posterior.  Under the
 * posterior, E[(theta_k - mu_k) grad_k U] = 1, so by Cauchy-Schwarz the
 * estimate lies between 1/var(grad_k) and var(theta_k) (the geometric
 * mean of the two).  A coordinate where the ratio is not a positive
 * number (no spread in theta or in the gradient) takes the draws'
 * regularised variance. */
static void diag_from_grads(drift_adapt_metric *m)
{
    size_t d = m->d;
    drift_adapt_welford_regularised(&m->est, m->inv);
    /* The two estimators may have seen different numbers of points. */
    double nx = (double)m->est.n - 1.0, ng = (double)m->grad.n - 1.0;
    for (size_t k = 0; k < d; k++) {
        double v = sqrt((m->est.m2[k] / nx) / (m->grad.m2[k] / ng));
        if (v > 0 && isfinite(v))
            m->inv[k] = fmin(fmax(v, GRAD_VAR_MIN), GRAD_VAR_MAX);
    }
}

void drift_adapt_metric_set_diag(drift_adapt_metric *m, const double *inv)
{
    if (m->kind != DRIFT_METRIC_DIAG)
        return;
    for (size_t k = 0; k < m->d; k++)
        if (inv[k] > 0 && isfinite(inv[k])) {
            m->inv[k] = fmin(fmax(inv[k], GRAD_VAR_MIN), GRAD_VAR_MAX);
            m->factor[k] = sqrt(m->inv[k]);
        }
}

int drift_adapt_metric_update(drift_adapt_metric *m, int last)
{
    if (m->kind == DRIFT_METRIC_UNIT)
        return 0;
    size_t d = m->d;
    int rc = 0;
    if (m->est.n < 2) {
        rc = 1;
    } else if (m->kind == DRIFT_METRIC_DIAG) {
        /* The gradients set the scales while the points may not have
         * spread over the posterior yet; by the last window they have,
         * and the variance is then the better scale where coordinates
         * are correlated: the ratio follows the conditional scale there
         * (sqrt(Sigma_kk / (Sigma^-1)_kk) for a Gaussian), which leaves
         * NUTS long trees along the correlated direction. */
        if (m->grad.n >= 2 && !last)
            diag_from_grads(m);
        else
            drift_adapt_welford_regularised(&m->est, m->inv);
        for (size_t k = 0; k < d; k++)
            m->factor[k] = sqrt(m->inv[k]);
    } else {
        /* The estimate goes into factor's memory first, so that a failed
         * factorisation leaves the metric in use untouched. */
        double *cov = m->factor;
        drift_adapt_welford_regularised(&m->est, cov);
        /* cholesky() factors in place. */
        if (cholesky(cov, d, cov)) {
            rc = -1;
            /* Restore the old factor from the old inverse. */
            cholesky(m->inv, d, m->factor);
        } else {
            /* inv = L L' (the lower triangle, then its mirror). */
            cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)d,
                        (int)d, 1.0, cov, (int)d, 0.0, m->inv, (int)d);
            for (size_t i = 0; i < d; i++)
                for (size_t j = 0; j < i; j++)
                    m->inv[j * d + i] = m->inv[i * d + j];
        }
    }
    drift_adapt_welford_restart(&m->est);
    if (m->kind == DRIFT_METRIC_DIAG)
        drift_adapt_welford_restart(&m->grad);
    return rc;
}

void drift_adapt_metric_inv_mul(const drift_adapt_metric *m, const double *v,
                                double *out)
{
    size_t d = m->d;
    switch (m->kind) {
    case DRIFT_METRIC_DIAG:
        for (size_t k = 0; k < d; k++)
            out[k] = m->inv[k] * v[k];
        return;
    case DRIFT_METRIC_DENSE:
        if (d)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)d, (int)d, 1.0,
                        m->inv, (int)d, v, 1, 0.0, out, 1);
        return;
    default:
        memcpy(out, v, d * sizeof *out);
    }
}

void drift_adapt_metric_inv_sqrt_mul(const drift_adapt_metric *m,
                                     const double *v, double *out)
{
    size_t d = m->d;
    switch (m->kind) {
    case DRIFT_METRIC_DIAG:
        for (size_t k = 0; k < d; k++)
            out[k] = m->factor[k] * v[k];
        return;
    case DRIFT_METRIC_DENSE:
        memcpy(out, v, d * sizeof *out);
        if (d)
            cblas_dtrmv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit,
                        (int)d, m->factor, (int)d, out, 1);
        return;
    default:
        memcpy(out, v, d * sizeof *out);
    }
}

void drift_adapt_metric_from_normal(const drift_adapt_metric *m,
                                    const double *z, double *p)
{
    size_t d = m->d;
    switch (m->kind) {
    case DRIFT_METRIC_DIAG:
        for (size_t k = 0; k < d; k++)
            p[k] = z[k] / m->factor[k];
        return;
    case DRIFT_METRIC_DENSE:
        /* L' p = z: cov(p) = L'^-1 L^-1 = M. */
        memmove(p, z, d * sizeof *p);
        if (d)
            cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit,
                        (int)d, m->factor, (int)d, p, 1);
        return;
    default:
        memmove(p, z, d * sizeof *p);
    }
}
