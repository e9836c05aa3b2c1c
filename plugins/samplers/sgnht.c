/* sgnht.c: stochastic-gradient Nose-Hoover thermostats (Ding, Fang,
 * Babbush, Chen, Skeel and Neven, NIPS 2014), Algorithm 1:
 *
 *     p_0 ~ N(0, I),  xi_0 = A,
 *     p     <- p - xi p h - grad U~(theta) h + sqrt(2A) N(0, h I),
 *     theta <- theta + p h,
 *     xi    <- xi + (p'p / d - 1) h.
 *
 * The thermostat xi grows while the kinetic energy p'p/2 is above its
 * equilibrium value d/2 and shrinks while below, so it absorbs the unknown
 * heat of the minibatch noise: the dynamics sample exp(-U) whatever that
 * noise's (constant) variance, where SGHMC needs it known.  msgnht keeps
 * one thermostat per coordinate, xi_i <- xi_i + (p_i^2 - 1) h (the
 * multivariate thermostat, mSGNHT), for noise whose variance differs
 * between coordinates.  That diagonal thermostat is not in Ding et al.'s
 * paper: it is Gan, Chen, Henao, Carlson and Carin's (ICML 2015, "Scalable
 * deep Poisson factor analysis for topic modeling"), also used by Li et al.
 * (2015).  Columns: xi__ (msgnht: xi.1__ ... xi.d__, one per
 * thermostat) and kinetic__ = p'p / (2d), which settles at 0.5.  Not
 * exact: the discretisation bias grows with h.
 *
 * With a diagonal metric (hyperparameter precond: the engine's, from the
 * curvature at --gradient cv's mode or learned in warmup) the momentum
 * has mass matrix M = P^-1: p_0 ~ N(0, M), the noise is sqrt(2A) M^(1/2)
 * N(0, h I), theta moves with velocity P p, and the thermostats hold the
 * kinetic energy p' P p / 2 (msgnht: each p_i^2 P_ii / 2) at its
 * equilibrium d/2 (1/2), so that friction, noise and thermostat agree on
 * one mass matrix (at equilibrium xi = A and p ~ N(0, M)).  kinetic__ is
 * then p' P p / (2d).  P follows the engine's metric as sgld.c
 * describes; after a warmup window changes it, p is drawn afresh from
 * N(0, P^-1).  precond=dense (sgld.c) uses the engine's dense metric, p ~
 * N(0, M), velocity M^-1 p, noise N(0, M), and the thermostats hold
 * p' M^-1 p / d (msgnht: p_i (M^-1 p)_i) at 1, through the metric
 * services. */
#include <math.h>
#include <stdio.h>

#include <drift/sampler.h>

#include "precond.h"

DRIFT_PLUGIN_LICENSE("MIT");

enum { PC_AUTO = 0, PC_UNIT = 1, PC_MODE = 2, PC_WARMUP = 3, PC_DENSE = 4 };

typedef struct sgnht {
    double h, A;
    int multi;              /* msgnht */
    int precond;            /* PC_UNIT, PC_MODE, PC_WARMUP or PC_DENSE */
    double min0;            /* min_j M0^-1_jj */
    double n_g2;            /* steps summed into g2 */
    size_t d, n;
    double *p, *xi, *grad, *z, *P, *buf, *g2;
    double *diag;           /* the row's columns: xi (1, msgnht d), kinetic */
} sgnht;

/* p ~ N(0, P^-1). */
static void draw_momentum(sgnht *s, const drift_services *svc,
                          drift_chain *c)
{
    svc->normal_fill(c, s->d, s->p);
    for (size_t j = 0; j < s->d; j++)
        s->p[j] /= sqrt(s->P[j]);
}

static int init_common(sgnht *s, const drift_services *svc, drift_chain *c,
                       const double *hp, int multi)
{
    const char *name = multi ? "msgnht" : "sgnht";
    s->h = hp[0];
    s->A = hp[1];
    s->multi = multi;
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    s->p = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->z = svc->alloc(c, s->d * sizeof(double));
    s->diag = svc->alloc(c, (s->d + 1) * sizeof(double));
    if (!s->p || !s->xi || !s->grad || !s->z || !s->diag)
        return DRIFT_ENOMEM;
    for (size_t k = 0; k < s->d; k++)
        s->xi[k] = s->A;    /* sgnht uses xi[0] only */
    /* a mode to precondition from: under --gradient cv, or the engine's
     * plan */
    int cv = svc->mode(c, NULL, NULL) == DRIFT_OK;
    s->precond = (int)hp[2];
    if (s->precond == PC_AUTO)
        s->precond = !cv ? PC_UNIT
                     : s->d <= AUTO_DENSE_DIM ? PC_DENSE : PC_MODE;
    int rc = precond_refuse(svc, c, name,
                            s->precond == PC_MODE || s->precond == PC_DENSE,
                            s->precond == PC_WARMUP, cv, "precond=warmup");
    if (rc)
        return rc;
    if (s->precond == PC_UNIT) {
        svc->normal_fill(c, s->d, s->p);
        return DRIFT_OK;
    }
    if (s->precond == PC_DENSE) {
        s->buf = svc->alloc(c, s->d * sizeof(double));
        if (!s->buf)
            return DRIFT_ENOMEM;
        rc = svc->metric_use(c, DRIFT_METRIC_DENSE);
        if (!rc)
            svc->metric_draw(c, s->p);
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

static int sgnht_init(void *state, const drift_services *svc, drift_chain *c,
                      const double *hp, double *theta)
{
    (void)theta;
    return init_common(state, svc, c, hp, 0);
}

static int msgnht_init(void *state, const drift_services *svc,
                       drift_chain *c, const double *hp, double *theta)
{
    (void)theta;
    return init_common(state, svc, c, hp, 1);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    sgnht *s = state;
    double U;
    int rc = svc->grad_batch(c, theta, s->n, s->grad, &U, NULL);
    if (rc)
        return rc;
    double h = s->h, noise = sqrt(2.0 * s->A * h), pp = 0;
    double d = (double)s->d;
    size_t n_xi = s->multi ? s->d : 1;
    if (s->precond == PC_UNIT) {
        svc->normal_fill(c, s->d, s->z);
        for (size_t k = 0; k < s->d; k++) {
            double xi = s->multi ? s->xi[k] : s->xi[0];
            s->p[k] += -xi * s->p[k] * h - s->grad[k] * h + noise * s->z[k];
            theta[k] += s->p[k] * h;
            pp += s->p[k] * s->p[k];
        }
        if (s->multi)
            for (size_t k = 0; k < s->d; k++)
                s->xi[k] += (s->p[k] * s->p[k] - 1.0) * h;
        else
            s->xi[0] += (pp / d - 1.0) * h;
    } else if (s->precond == PC_DENSE) {
        /* z ~ N(0, M); buf = M^-1 p (the velocity) */
        svc->metric_draw(c, s->z);
        for (size_t k = 0; k < s->d; k++) {
            double xi = s->multi ? s->xi[k] : s->xi[0];
            s->p[k] += -xi * s->p[k] * h - s->grad[k] * h + noise * s->z[k];
        }
        svc->metric_inv_mul(c, s->p, s->buf);
        for (size_t k = 0; k < s->d; k++) {
            theta[k] += s->buf[k] * h;
            pp += s->p[k] * s->buf[k];
            if (s->multi)
                s->xi[k] += (s->p[k] * s->buf[k] - 1.0) * h;
        }
        if (!s->multi)
            s->xi[0] += (pp / d - 1.0) * h;
    } else {
        /* The noise N(0, h P^-1); velocity P p. */
        svc->normal_fill(c, s->d, s->z);
        for (size_t k = 0; k < s->d; k++) {
            double xi = s->multi ? s->xi[k] : s->xi[0];
            s->p[k] += -xi * s->p[k] * h - s->grad[k] * h +
                       noise * s->z[k] / sqrt(s->P[k]);
            double v = s->P[k] * s->p[k];
            theta[k] += v * h;
            pp += s->p[k] * v;
            if (s->multi)
                s->xi[k] += (s->p[k] * v - 1.0) * h;
        }
        if (!s->multi)
            s->xi[0] += (pp / d - 1.0) * h;
        if (s->precond == PC_WARMUP && svc->in_warmup(c)) {
            svc->metric_observe(c, theta);
            for (size_t k = 0; k < s->d; k++)
                s->g2[k] += s->grad[k] * s->grad[k];
            s->n_g2++;
        }
    }
    for (size_t k = 0; k < n_xi; k++)
        s->diag[k] = s->xi[k];
    s->diag[n_xi] = pp / (2.0 * d);
    return svc->emit_draw(c, theta, -U, s->diag);
}

/* A window's end set a new metric: h keeps its start's units, and the
 * momentum is drawn from the new one. */
static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    sgnht *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END && s->precond == PC_WARMUP) {
        /* h^2 P L < 4 keeps the step stable; h P E[g^2] / (2 A) is the
         * heat of the gradients' noise relative to the injected noise's. */
        double h_eff = fmax(s->h * s->h, s->h / (2 * fmax(s->A, 1e-12)));
        precond_update(s->P, s->buf, s->g2, &s->n_g2, s->min0, h_eff, svc,
                       c);
        draw_momentum(s, svc, c);
    }
}

/* The momentum p, the thermostats xi (all d, though sgnht reads only
 * xi[0]) and P with the engine's metric; grad, z, buf and diag are
 * scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sgnht *s = state;
    int rc = svc->ckpt_bytes(c, s->p, s->d * sizeof *s->p);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->xi, s->d * sizeof *s->xi);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->P, s->d * sizeof *s->P);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->g2, s->d * sizeof *s->g2);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, &s->n_g2, sizeof s->n_g2);
    return rc;
}

#define PRECOND_DOC                                                         \
    "mass matrix P^-1: unit (none), mode (diagonal curvature at "          \
    "--gradient cv's mode), warmup (diagonal, learned from warmup draws, " \
    "starting from mode's under cv), dense (empirical Fisher matrix at "   \
    "cv's mode); auto: with --gradient cv dense up to 100 parameters, "    \
    "mode beyond, else unit"

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: p += -xi p h - grad U h + sqrt(2A h) P^(-1/2) N(0, I); "
     "theta += P p h; xi += (p'P p/d - 1) h"},
    {"A", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "diffusion factor: injected noise sqrt(2A) N(0, h I); also the "
     "thermostat's start xi_0"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0, "auto|unit|mode|warmup|dense",
     PRECOND_DOC},
};

static const drift_hparam mhparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: p_i += -xi_i p_i h - grad_i U h + sqrt(2A h / P_ii) "
     "N(0, 1); theta += P p h; xi_i += (p_i^2 P_ii - 1) h"},
    {"A", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "diffusion factor: injected noise sqrt(2A) N(0, h I); also each "
     "thermostat's start"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0, "auto|unit|mode|warmup|dense",
     PRECOND_DOC},
};

static const char *const columns[] = {"xi__", "kinetic__"};
/* One thermostat per coordinate: xi.1__ ... xi.d__. */
static const char *const mcolumns[] = {"xi.#__", "kinetic__"};

static const drift_sampler samplers[] = {
    {
        .name = "sgnht",
        .summary = "stochastic-gradient Nose-Hoover thermostat (Ding et al. "
                   "2014)",
        .hparams = hparams,
        .n_hparams = sizeof hparams / sizeof hparams[0],
        .columns = columns,
        .n_columns = 2,
        .state_size = sizeof(sgnht),
        .init = sgnht_init,
        .step = step,
        .phase = phase,
        .checkpoint = checkpoint,
    },
    {
        .name = "msgnht",
        .summary = "SGNHT with one thermostat per coordinate (Gan et al. "
                   "2015; Li et al. 2015)",
        .hparams = mhparams,
        .n_hparams = sizeof mhparams / sizeof mhparams[0],
        .columns = mcolumns,
        .n_columns = 2,
        .state_size = sizeof(sgnht),
        .init = msgnht_init,
        .step = step,
        .phase = phase,
        .checkpoint = checkpoint,
    },
};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    sizeof samplers / sizeof samplers[0],
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
