/* sghmc.c: stochastic-gradient underdamped Langevin dynamics, the
 * Euler-Maruyama step of
 *
 *     d theta = r dt,   dr = -gamma r dt - grad U(theta) dt + sigma dW,
 *
 * with a minibatch estimate of grad U:
 *
 *     theta_{k+1} = theta_k + h r_k,
 *     r_{k+1}     = r_k - h gamma r_k - h grad U~(theta_k) + sigma sqrt(h) xi_k.
 *
 * This is the SGHMC (SGULD) baseline of the EWSG paper (Li, Wang, Zha and
 * Tao); unit mass, r_0 ~ N(0, I).  Explicit Euler is unstable where
 * h * (curvature of U) exceeds gamma, so small frictions need small steps;
 * scheme=symplectic takes the momentum step first and moves theta with the
 * new momentum, theta_{k+1} = theta_k + h r_{k+1} (semi-implicit Euler, the
 * form of Chen, Fox and Guestrin's SGHMC and of Ding et al.'s thermostat
 * experiments), which is stable for h^2 * curvature < 4 at any friction.  With sigma = sqrt(2 gamma) the
 * dynamics leave exp(-U(theta) - |r|^2/2) invariant; another sigma samples
 * at temperature sigma^2 / (2 gamma).  Not exact: the minibatch noise adds
 * heat that the friction does not remove (Chen, Fox and Guestrin 2014), and
 * the discretisation bias grows with h.
 *
 * With a diagonal metric (hyperparameter precond: the engine's, from the
 * curvature at --gradient cv's mode or learned in warmup) the momentum
 * has mass matrix M = P^-1, so that theta moves with velocity P r and
 * the noise that the friction balances is N(0, M):
 *
 *     r_{k+1}     = r_k - h gamma r_k - h grad U~(theta_k)
 *                       + sigma sqrt(h) M^(1/2) xi_k,
 *     theta_{k+1} = theta_k + h P r,
 *
 * which leaves exp(-U(theta) - r' P r / 2) invariant with sigma =
 * sqrt(2 gamma) (the friction and the noise scale with the same M, as
 * the fluctuation-dissipation balance needs).  P follows the engine's
 * metric as sgld.c describes; after a warmup window changes it, the
 * momentum is drawn afresh from N(0, P^-1).  precond=dense (sgld.c) uses
 * the engine's dense metric, r ~ N(0, M), velocity M^-1 r, noise N(0, M),
 * through the metric services. */
#include <math.h>

#include <drift/sampler.h>

#include "precond.h"

DRIFT_PLUGIN_LICENSE("MIT");

enum { PC_AUTO = 0, PC_UNIT = 1, PC_MODE = 2, PC_WARMUP = 3, PC_DENSE = 4 };

typedef struct sghmc {
    double h, gamma, sigma;
    int symplectic;
    int precond;            /* PC_UNIT, PC_MODE, PC_WARMUP or PC_DENSE */
    double min0;            /* min_j M0^-1_jj */
    double n_g2;            /* steps summed into g2 */
    size_t d, n;
    double *r, *grad, *xi, *P, *buf, *g2;
} sghmc;

/* r ~ N(0, P^-1). */
static void draw_momentum(sghmc *s, const drift_services *svc,
                          drift_chain *c)
{
    svc->normal_fill(c, s->d, s->r);
    for (size_t j = 0; j < s->d; j++)
        s->r[j] /= sqrt(s->P[j]);
}

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    (void)theta;
    sghmc *s = state;
    s->h = hp[0];
    s->gamma = hp[1];
    s->sigma = isnan(hp[2]) ? sqrt(2.0 * s->gamma) : hp[2];
    s->symplectic = hp[3] != 0;
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    s->r = svc->alloc(c, s->d * sizeof(double));
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    if (!s->r || !s->grad || !s->xi)
        return DRIFT_ENOMEM;
    /* a mode to precondition from: under --gradient cv, or the engine's
     * plan */
    int cv = svc->mode(c, NULL, NULL) == DRIFT_OK;
    s->precond = (int)hp[4];
    if (s->precond == PC_AUTO)
        s->precond = !cv ? PC_UNIT
                     : s->d <= AUTO_DENSE_DIM ? PC_DENSE : PC_MODE;
    int rc = precond_refuse(svc, c, "sghmc",
                            s->precond == PC_MODE || s->precond == PC_DENSE,
                            s->precond == PC_WARMUP, cv, "precond=warmup");
    if (rc)
        return rc;
    if (s->precond == PC_UNIT) {
        svc->normal_fill(c, s->d, s->r);
        return DRIFT_OK;
    }
    if (s->precond == PC_DENSE) {
        s->buf = svc->alloc(c, s->d * sizeof(double));
        if (!s->buf)
            return DRIFT_ENOMEM;
        rc = svc->metric_use(c, DRIFT_METRIC_DENSE);
        if (!rc)
            svc->metric_draw(c, s->r);
        return rc;
    }
    s->P = svc->alloc(c, s->d * sizeof(double));
    s->buf = svc->alloc(c, s->d * sizeof(double));
    s->g2 = svc->alloc(c, s->d * sizeof(double));
    if (!s->P || !s->buf || !s->g2)
        return DRIFT_ENOMEM;
    rc = svc->metric_use(c, DRIFT_METRIC_DIAG);
    if (rc)
        return rc;
    s->min0 = min_of(s->P, svc->metric_get(c, s->P));
    draw_momentum(s, svc, c);
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    sghmc *s = state;
    double U;
    int rc = svc->grad_batch(c, theta, s->n, s->grad, &U, NULL);
    if (rc)
        return rc;
    double noise = s->sigma * sqrt(s->h), decay = 1.0 - s->h * s->gamma;
    double rr = 0;
    if (s->precond == PC_UNIT) {
        svc->normal_fill(c, s->d, s->xi);
        for (size_t k = 0; k < s->d; k++) {
            double r_new = decay * s->r[k] - s->h * s->grad[k] +
                           noise * s->xi[k];
            theta[k] += s->h * (s->symplectic ? r_new : s->r[k]);
            s->r[k] = r_new;
            rr += r_new * r_new;
        }
    } else if (s->precond == PC_DENSE) {
        /* xi ~ N(0, M); buf = M^-1 r (the velocity) */
        svc->metric_draw(c, s->xi);
        if (!s->symplectic)
            svc->metric_inv_mul(c, s->r, s->buf);
        for (size_t k = 0; k < s->d; k++)
            s->r[k] = decay * s->r[k] - s->h * s->grad[k] + noise * s->xi[k];
        if (s->symplectic)
            svc->metric_inv_mul(c, s->r, s->buf);
        for (size_t k = 0; k < s->d; k++)
            theta[k] += s->h * s->buf[k];
        if (!s->symplectic) /* the kinetic energy is r_{k+1}'s */
            svc->metric_inv_mul(c, s->r, s->buf);
        for (size_t k = 0; k < s->d; k++)
            rr += s->r[k] * s->buf[k];
    } else {
        /* xi ~ N(0, I), the noise N(0, P^-1) */
        svc->normal_fill(c, s->d, s->xi);
        for (size_t k = 0; k < s->d; k++) {
            double r_new = decay * s->r[k] - s->h * s->grad[k] +
                           noise * s->xi[k] / sqrt(s->P[k]);
            theta[k] += s->h * s->P[k] * (s->symplectic ? r_new : s->r[k]);
            s->r[k] = r_new;
            rr += s->P[k] * r_new * r_new;
        }
        if (s->precond == PC_WARMUP && svc->in_warmup(c)) {
            svc->metric_observe(c, theta);
            for (size_t k = 0; k < s->d; k++)
                s->g2[k] += s->grad[k] * s->grad[k];
            s->n_g2++;
        }
    }
    double diag[1] = {rr / (2.0 * (double)s->d)};
    return svc->emit_draw(c, theta, -U, diag);
}

/* A window's end set a new metric: h keeps its start's units, and the
 * momentum is drawn from the new one. */
static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    sghmc *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END && s->precond == PC_WARMUP) {
        /* h^2 P L < 4 keeps the step stable; h P E[g^2] / (2 gamma) is
         * the heat of the gradients' noise relative to the friction's. */
        double h_eff = fmax(s->h * s->h, s->h / (2 * fmax(s->gamma, 1e-12)));
        precond_update(s->P, s->buf, s->g2, &s->n_g2, s->min0, h_eff, svc,
                       c);
        draw_momentum(s, svc, c);
    }
}

/* The momentum r, carried from step to step, and P with the engine's
 * metric; grad, xi and buf are scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sghmc *s = state;
    int rc = svc->ckpt_bytes(c, s->r, s->d * sizeof *s->r);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->P, s->d * sizeof *s->P);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->g2, s->d * sizeof *s->g2);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, &s->n_g2, sizeof s->n_g2);
    return rc;
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += h P r; r += -h gamma r - h grad U + sigma "
     "sqrt(h) P^(-1/2) N(0, I), P the metric of precond (I for unit)"},
    {"gamma", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "friction gamma of dr = -gamma r dt - grad U dt + sigma dW"},
    {"sigma", DRIFT_HP_REAL, NAN, 0, INFINITY, 0, NULL,
     "noise amplitude; default (auto) sqrt(2 gamma), which makes exp(-U) "
     "invariant"},
    {"scheme", DRIFT_HP_ENUM, 0, 0, 0, 0, "em|symplectic",
     "em: theta moves with r_k (Euler-Maruyama); symplectic: with r_{k+1} "
     "(semi-implicit, stable at small gamma)"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0,
     "auto|unit|mode|warmup|dense",
     "mass matrix P^-1: unit (none), mode (diagonal curvature at "
     "--gradient cv's mode), warmup (diagonal, learned from warmup draws, "
     "starting from mode's under cv), dense (empirical Fisher matrix at "
     "cv's mode); auto: with --gradient cv dense up to 100 parameters, "
     "mode beyond, else unit"},
};

static const char *const columns[] = {"kinetic__"};

static const drift_sampler samplers[] = {{
    .name = "sghmc",
    .summary = "stochastic-gradient underdamped Langevin (SGHMC), "
               "Euler-Maruyama",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .columns = columns,
    .n_columns = 1,
    .state_size = sizeof(sghmc),
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
