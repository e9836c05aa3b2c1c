/* logdensity.c: the whole-data log density at a point, with or without
 * the constraint Jacobians (see logdensity.h).  Not for samplers. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "base/util.h"
#include "logdensity.h"

/* Rows evaluated per log_lik call. */
#define LD_CHUNK 1024

struct drift_logdensity {
    const drift_model *m;
    void *ws;
    size_t cap;
    int jacobian;
    double *gtmp;       /* d: one call's gradient */
};

int drift_logdensity_unconstrained(const drift_model *m)
{
    if (m->n_out != m->dim)
        return 0;
    size_t d = m->dim;
    double *th = drift_malloc_array(2 * d, sizeof(double));
    if (!th)
        return 0;
    int same = 1;
    /* Two points no transform of drift's or Stan's leaves unchanged. */
    for (int probe = 0; probe < 2 && same; probe++) {
        for (size_t j = 0; j < d; j++)
            th[j] = probe ? -0.731 - 0.017 * (double)(j % 29)
                          : 0.377 + 0.113 * (double)(j % 31);
        m->constrain(m->self, th, th + d);
        for (size_t j = 0; j < d && same; j++)
            same = th[d + j] == th[j];
    }
    drift_free(th);
    return same;
}

int drift_logdensity_new(drift_logdensity **out, const drift_model *m,
                         int jacobian, const char *who, drift_err *e)
{
    *out = NULL;
    if (!jacobian && !m->log_jacobian && !drift_logdensity_unconstrained(m))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s%sthe model has constrained parameters but "
                             "does not report its constraints' "
                             "log-Jacobian (log_jacobian in drift/model.h), "
                             "so the density without it cannot be "
                             "computed: give --jacobian",
                             who ? who : "", who ? ": " : "");
    drift_logdensity *ld = drift_calloc(1, sizeof *ld);
    if (!ld)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    ld->m = m;
    ld->jacobian = jacobian || !m->log_jacobian;
    ld->cap = m->n_rows < LD_CHUNK ? (m->n_rows ? m->n_rows : 1) : LD_CHUNK;
    ld->ws = m->workspace_new(m->self, ld->cap);
    ld->gtmp = drift_malloc_array(m->dim ? m->dim : 1, sizeof(double));
    if (!ld->ws || !ld->gtmp) {
        drift_logdensity_free(ld);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    *out = ld;
    return DRIFT_OK;
}

void drift_logdensity_free(drift_logdensity *ld)
{
    if (!ld)
        return;
    if (ld->ws)
        ld->m->workspace_free(ld->m->self, ld->ws);
    drift_free(ld->gtmp);
    drift_free(ld);
}

void *drift_logdensity_ws(const drift_logdensity *ld)
{
    return ld->ws;
}

size_t drift_logdensity_batch(size_t n_rows)
{
    if (n_rows <= 10000)
        return n_rows;
    size_t b = n_rows / 1000;
    return b < 1000 ? 1000 : b;
}

/* Subtracts the constraint Jacobian when the evaluator leaves it out, and
 * refuses a non-finite result. */
static int finish(drift_logdensity *ld, const double *theta, double *lp,
                  double *grad, drift_err *e)
{
    const drift_model *m = ld->m;
    if (!ld->jacobian) {
        double lj;
        double *gt = grad ? ld->gtmp : NULL;
        int rc = m->log_jacobian(m->self, ld->ws, theta, &lj, gt, e);
        if (rc)
            return rc;
        *lp -= lj;
        if (grad)
            for (size_t j = 0; j < m->dim; j++)
                grad[j] -= gt[j];
    }
    if (!isfinite(*lp))
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "the log density is %g at this point", *lp);
    return DRIFT_OK;
}

int drift_logdensity_eval_rows(drift_logdensity *ld, const double *theta,
                               const size_t *rows, size_t n, double scale,
                               double *lp, double *grad, drift_err *e)
{
    const drift_model *m = ld->m;
    size_t d = m->dim;
    double *gt = grad ? ld->gtmp : NULL;
    int rc = m->log_prior(m->self, ld->ws, theta, lp, grad, e);
    if (rc)
        return rc;
    for (size_t first = 0; first < n; first += ld->cap) {
        size_t k = n - first < ld->cap ? n - first : ld->cap;
        drift_rows b = {rows + first, 0, k};
        double ll = 0;
        if ((rc = m->log_lik(m->self, ld->ws, theta, &b, NULL, &ll, gt, NULL,
                             e)))
            return rc;
        *lp += scale * ll;
        if (grad)
            for (size_t j = 0; j < d; j++)
                grad[j] += scale * gt[j];
    }
    return finish(ld, theta, lp, grad, e);
}

int drift_logdensity_eval(drift_logdensity *ld, const double *theta,
                          double *lp, double *grad, drift_err *e)
{
    const drift_model *m = ld->m;
    size_t d = m->dim;
    double *gt = grad ? ld->gtmp : NULL;
    int rc = m->log_prior(m->self, ld->ws, theta, lp, grad, e);
    if (rc)
        return rc;
    for (size_t first = 0; first < m->n_rows; first += ld->cap) {
        size_t n = m->n_rows - first < ld->cap ? m->n_rows - first : ld->cap;
        drift_rows b = {NULL, first, n};
        double ll = 0;
        if ((rc = m->log_lik(m->self, ld->ws, theta, &b, NULL, &ll, gt, NULL,
                             e)))
            return rc;
        *lp += ll;
        if (grad)
            for (size_t j = 0; j < d; j++)
                grad[j] += gt[j];
    }
    return finish(ld, theta, lp, grad, e);
}

int drift_logdensity_precision(drift_logdensity *ld, size_t d,
                               const double *x0, double *P, double *work,
                               drift_err *e)
{
    double lp, *x = work, *gp = work + d, *gm = work + 2 * d;
    memcpy(x, x0, d * sizeof *x);
    for (size_t j = 0; j < d; j++) {
        double h = 1e-5 * fmax(1.0, fabs(x0[j]));
        x[j] = x0[j] + h;
        int rc = drift_logdensity_eval(ld, x, &lp, gp, e);
        if (!rc) {
            x[j] = x0[j] - h;
            rc = drift_logdensity_eval(ld, x, &lp, gm, e);
        }
        x[j] = x0[j];
        if (rc)
            return rc;
        for (size_t i = 0; i < d; i++)
            P[i * d + j] = -(gp[i] - gm[i]) / (2 * h);
    }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < i; j++) {
            double s = 0.5 * (P[i * d + j] + P[j * d + i]);
            P[i * d + j] = P[j * d + i] = s;
        }
    return DRIFT_OK;
}
