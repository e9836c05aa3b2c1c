/* sgld.c: stochastic-gradient Langevin dynamics (Welling and Teh, 2011),
 * the Euler-Maruyama step of d theta = -grad U dt + sqrt(2) dW with a
 * minibatch estimate of grad U:
 *
 *     theta <- theta - h grad U~(theta) + sqrt(2 h) xi,   xi ~ N(0, I).
 *
 * (Welling and Teh's epsilon is 2h.)  The minibatch size is the engine's
 * --batch.  Not an exact sampler: its bias grows with h.
 *
 * With a diagonal metric P (hyperparameter precond: the engine's metric,
 * from the curvature at --gradient cv's mode or learned in warmup) the
 * step is the preconditioned one, which leaves the same target invariant
 * in the limit h -> 0 (P does not depend on theta):
 *
 *     theta <- theta - h P grad U~(theta) + sqrt(2 h) P^(1/2) xi.
 *
 * P starts as the engine's M^-1 (the identity, or under cv the inverse
 * curvature at the mode, where h ~ 0.1 moves a tenth of a posterior
 * variance); a warmup window's end sets it to the new M^-1 times c =
 * min_j M0^-1_jj / min_j M^-1_jj, M0 the metric the chain started with,
 * so that h keeps the units of that start and the windows change only
 * the proportions between coordinates, and each entry moves by at most a
 * factor PRECOND_CLAMP per window: a window that caught the chain still
 * settling (a coordinate's draws spread by the chain's own travel) cannot
 * make that coordinate's steps explode.
 *
 * precond=dense takes instead the engine's dense metric under cv, the
 * inverse of the empirical Fisher matrix at the mode, P = M^-1 (with
 * P^(1/2) its Cholesky factor L, L L' = P): for posteriors whose
 * coordinates are strongly correlated (regressions on raw, uncentred
 * predictors), which a diagonal P cannot straighten.  precond=auto takes
 * it under cv when d <= AUTO_DENSE_DIM (its products cost d^2 a step, a
 * minibatch's n d). */
#include <math.h>

#include <drift/sampler.h>

#include "precond.h"

DRIFT_PLUGIN_LICENSE("MIT");

enum { PC_AUTO = 0, PC_UNIT = 1, PC_MODE = 2, PC_WARMUP = 3, PC_DENSE = 4 };

typedef struct sgld {
    double h, noise;
    int precond;            /* PC_UNIT, PC_MODE, PC_WARMUP or PC_DENSE */
    double min0;            /* min_j M0^-1_jj */
    double n_g2;            /* steps summed into g2 */
    size_t d, n;
    double *grad, *xi, *P, *buf, *g2;
} sgld;

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    (void)theta;
    sgld *s = state;
    s->h = hp[0];
    s->noise = sqrt(2.0 * s->h);
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    if (!s->grad || !s->xi)
        return DRIFT_ENOMEM;
    /* a mode to precondition from: under --gradient cv, or the engine's
     * plan */
    int cv = svc->mode(c, NULL, NULL) == DRIFT_OK;
    s->precond = (int)hp[1];
    if (s->precond == PC_AUTO)
        s->precond = !cv ? PC_UNIT
                     : s->d <= AUTO_DENSE_DIM ? PC_DENSE : PC_MODE;
    int rc = precond_refuse(svc, c, "sgld",
                            s->precond == PC_MODE || s->precond == PC_DENSE,
                            s->precond == PC_WARMUP, cv, "precond=warmup");
    if (rc)
        return rc;
    if (s->precond == PC_UNIT)
        return DRIFT_OK;
    if (s->precond == PC_DENSE) {
        s->buf = svc->alloc(c, s->d * sizeof(double));
        s->g2 = svc->alloc(c, s->d * sizeof(double));
        if (!s->buf || !s->g2)
            return DRIFT_ENOMEM;
        return svc->metric_use(c, DRIFT_METRIC_DENSE);
    }
    s->P = svc->alloc(c, s->d * sizeof(double));
    s->buf = svc->alloc(c, s->d * sizeof(double));
    s->g2 = svc->alloc(c, s->d * sizeof(double));
    if (!s->P || !s->buf || !s->g2)
        return DRIFT_ENOMEM;
    rc = svc->metric_use(c, DRIFT_METRIC_DIAG);
    if (rc)
        return rc;
    size_t n = svc->metric_get(c, s->P);
    s->min0 = min_of(s->P, n);
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    sgld *s = state;
    double U;
    int rc = svc->grad_batch(c, theta, s->n, s->grad, &U, NULL);
    if (rc)
        return rc;
    svc->normal_fill(c, s->d, s->xi);
    if (s->precond == PC_UNIT) {
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -s->h * s->grad[k] + s->noise * s->xi[k];
    } else if (s->precond == PC_DENSE) {
        /* buf = P grad, g2 = L xi */
        svc->metric_inv_mul(c, s->grad, s->buf);
        svc->metric_inv_sqrt_mul(c, s->xi, s->g2);
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -s->h * s->buf[k] + s->noise * s->g2[k];
    } else {
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -s->h * s->P[k] * s->grad[k] +
                        s->noise * sqrt(s->P[k]) * s->xi[k];
        if (s->precond == PC_WARMUP && svc->in_warmup(c)) {
            svc->metric_observe(c, theta);
            for (size_t k = 0; k < s->d; k++)
                s->g2[k] += s->grad[k] * s->grad[k];
            s->n_g2++;
        }
    }
    /* lp__ is the minibatch estimate at the point the step started from. */
    return svc->emit_draw(c, theta, -U, NULL);
}

static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    sgld *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END && s->precond == PC_WARMUP)
        precond_update(s->P, s->buf, s->g2, &s->n_g2, s->min0, s->h, svc,
                       c);
}

/* A step reads only theta (the engine's) and draws a fresh minibatch and
 * fresh noise; grad, xi and buf are scratch.  P and the squared gradients
 * of the current window are saved (with precond=unit there is
 * nothing). */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sgld *s = state;
    if (s->precond == PC_UNIT || s->precond == PC_DENSE)
        return DRIFT_OK;
    int rc = svc->ckpt_bytes(c, s->P, s->d * sizeof *s->P);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->g2, s->d * sizeof *s->g2);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->n_g2, sizeof s->n_g2);
    return rc;
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += -h P grad U + sqrt(2h) P^(1/2) N(0, I), P the "
     "metric of precond (I for unit)"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0,
     "auto|unit|mode|warmup|dense",
     "metric P: unit (none), mode (inverse diagonal curvature at "
     "--gradient cv's mode), warmup (diagonal, learned from warmup draws, "
     "starting from mode's under cv), dense (inverse empirical Fisher "
     "matrix at cv's mode); auto: with --gradient cv dense up to 100 "
     "parameters, mode beyond, else unit"},
};

static const drift_sampler samplers[] = {{
    .name = "sgld",
    .summary = "stochastic-gradient Langevin dynamics (Welling & Teh 2011)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .state_size = sizeof(sgld),
    .init = init,
    .step = step,
    .phase = phase,
    .checkpoint = checkpoint,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    sizeof samplers / sizeof samplers[0],
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
