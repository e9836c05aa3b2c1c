/* precond.c: the preconditioner P of minibatch integrators (the
 * DRIFT_TABLE_PRECOND sub-table; drift/sampler.h describes P, its kinds
 * and WARMUP's windows).  DIAG kinds keep P here; DENSE is the engine's
 * dense metric, applied through its factor; the mode and the curvature
 * there come from the metric services, which start from them. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "services.h"
#include "precond.h"

/* AUTO takes DENSE up to this many parameters (its products cost d^2 a
 * step, a minibatch's n d), the diagonal beyond. */
#define AUTO_DENSE_DIM 100
/* The most an entry of P moves, as a factor, at one window's end. */
#define PRECOND_CLAMP 10.0

static const drift_services *const svc = &drift_services_table;

/* The smallest of m[0..n) (1 when there is none worth dividing by). */
static double min_of(const double *m, size_t n)
{
    double x = INFINITY;
    for (size_t k = 0; k < n; k++)
        x = m[k] < x ? m[k] : x;
    return n && x > 0 && isfinite(x) ? x : 1.0;
}

static int is_diag(drift_precond_kind k)
{
    return k == DRIFT_PRECOND_MODE || k == DRIFT_PRECOND_WARMUP;
}

static drift_precond_kind pc_kind(drift_chain *c)
{
    return c->adapt.precond.used ? c->adapt.precond.kind : DRIFT_PRECOND_UNIT;
}

static int pc_use(drift_chain *c, drift_precond_kind kind, double h_eff)
{
    drift_precond *p = &c->adapt.precond;
    const char *name = c->cfg->step.sampler->name;
    if (c->phase != DRIFT_CHAIN_INIT)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: precond use: only allowed in init",
                                name);
    if (p->used)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: precond use: called twice", name);
    if ((unsigned)kind > DRIFT_PRECOND_DENSE)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: precond use: unknown kind %d", name,
                                (int)kind);
    int has_mode = svc->mode(c, NULL, NULL) == DRIFT_OK;
    if (kind == DRIFT_PRECOND_AUTO)
        kind = !has_mode ? DRIFT_PRECOND_UNIT
               : c->d <= AUTO_DENSE_DIM ? DRIFT_PRECOND_DENSE
                                        : DRIFT_PRECOND_MODE;
    if ((kind == DRIFT_PRECOND_MODE || kind == DRIFT_PRECOND_DENSE) &&
        !has_mode)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: precond=mode and precond=dense need the "
                                "curvature at the mode: run with --gradient "
                                "cv (or use precond=warmup)",
                                name);
    /* (a pilot chain of the step-size search has no warmup: there
     * WARMUP stays at its start) */
    if (kind == DRIFT_PRECOND_WARMUP && c->info.base_window == 0 &&
        !c->cfg->output.discard_draws)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: precond=warmup learns the metric in "
                                "warmup's slow windows: give --warmup 20 or "
                                "more (150 or more for Stan's windows)",
                                name);
    p->used = 1;
    p->kind = kind;
    p->h_eff = h_eff;
    if (kind == DRIFT_PRECOND_UNIT)
        return DRIFT_OK;
    if (kind == DRIFT_PRECOND_DENSE)
        return svc->metric_use(c, DRIFT_METRIC_DENSE);
    size_t bytes = c->d * sizeof(double);
    p->P = svc->alloc(c, bytes);
    p->buf = svc->alloc(c, bytes);
    p->g2 = svc->alloc(c, bytes);
    if (!p->P || !p->buf || !p->g2)
        return c->failed ? c->failed : DRIFT_ENOMEM;
    int rc = svc->metric_use(c, DRIFT_METRIC_DIAG);
    if (rc)
        return rc;
    p->min0 = min_of(p->P, svc->metric_get(c, p->P));
    return DRIFT_OK;
}

static void pc_mul(drift_chain *c, const double *v, double *out)
{
    const drift_precond *p = &c->adapt.precond;
    drift_precond_kind kind = pc_kind(c);
    if (kind == DRIFT_PRECOND_DENSE)
        svc->metric_inv_mul(c, v, out);
    else if (is_diag(kind))
        for (size_t k = 0; k < c->d; k++)
            out[k] = p->P[k] * v[k];
    else
        memcpy(out, v, c->d * sizeof *out);
}

static void pc_sqrt_mul(drift_chain *c, const double *v, double *out)
{
    const drift_precond *p = &c->adapt.precond;
    drift_precond_kind kind = pc_kind(c);
    if (kind == DRIFT_PRECOND_DENSE)
        svc->metric_inv_sqrt_mul(c, v, out);
    else if (is_diag(kind))
        for (size_t k = 0; k < c->d; k++)
            out[k] = sqrt(p->P[k]) * v[k];
    else
        memcpy(out, v, c->d * sizeof *out);
}

static void pc_draw_momentum(drift_chain *c, double *out)
{
    const drift_precond *p = &c->adapt.precond;
    drift_precond_kind kind = pc_kind(c);
    if (kind == DRIFT_PRECOND_DENSE) {
        svc->metric_draw(c, out);
        return;
    }
    svc->normal_fill(c, c->d, out);
    if (is_diag(kind))
        for (size_t k = 0; k < c->d; k++)
            out[k] /= sqrt(p->P[k]);
}

static void pc_observe(drift_chain *c, const double *theta,
                       const double *grad)
{
    drift_precond *p = &c->adapt.precond;
    if (pc_kind(c) != DRIFT_PRECOND_WARMUP || !svc->in_warmup(c))
        return;
    svc->metric_observe(c, theta);
    for (size_t k = 0; k < c->d; k++)
        p->g2[k] += grad[k] * grad[k];
    p->n_g2++;
}

void drift_precond_window_end(drift_chain *c)
{
    drift_precond *p = &c->adapt.precond;
    if (pc_kind(c) != DRIFT_PRECOND_WARMUP)
        return;
    size_t n = svc->metric_get(c, p->buf);
    double k = p->min0 / min_of(p->buf, n);
    for (size_t j = 0; j < n; j++) {
        double want = k * p->buf[j];
        if (want > 0 && isfinite(want))
            want = fmin(fmax(want, p->P[j] / PRECOND_CLAMP),
                        p->P[j] * PRECOND_CLAMP);
        else
            want = p->P[j];
        if (p->n_g2 > 0 && p->g2[j] > 0) {
            double cap = p->n_g2 / (p->h_eff * p->g2[j]);
            if (want > cap)
                want = cap > p->P[j] ? cap : p->P[j];
        }
        p->P[j] = want;
        p->g2[j] = 0;
    }
    p->n_g2 = 0;
}

int drift_precond_ckpt(drift_chain *c)
{
    drift_precond *p = &c->adapt.precond;
    if (!is_diag(pc_kind(c)))
        return DRIFT_OK;
    int rc = svc->ckpt_bytes(c, p->P, c->d * sizeof *p->P);
    if (!rc)
        rc = svc->ckpt_bytes(c, p->g2, c->d * sizeof *p->g2);
    if (!rc)
        rc = svc->ckpt_bytes(c, &p->n_g2, sizeof p->n_g2);
    return rc;
}

const drift_precond_services drift_precond_table = {
    .header = {DRIFT_TABLE_PRECOND, 1u,
               (uint32_t)sizeof(drift_precond_services)},
    .use = pc_use,
    .kind = pc_kind,
    .mul = pc_mul,
    .sqrt_mul = pc_sqrt_mul,
    .draw_momentum = pc_draw_momentum,
    .observe = pc_observe,
};
