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
 * With a preconditioner P (hyperparameter precond: the engine's, through
 * its DRIFT_TABLE_PRECOND services; sgld.c says which) the momentum has
 * mass matrix M = P^-1: p_0 ~ N(0, M), the noise is sqrt(2A) M^(1/2)
 * N(0, h I), theta moves with velocity P p, and the thermostats hold the
 * kinetic energy p' P p / 2 (msgnht: each p_i (P p)_i / 2) at its
 * equilibrium d/2 (1/2), so that friction, noise and thermostat agree on
 * one mass matrix (at equilibrium xi = A and p ~ N(0, M)).  kinetic__ is
 * then p' P p / (2d).  After a warmup window changes P (precond=warmup),
 * p is drawn afresh from N(0, P^-1). */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct sgnht {
    double h, A;
    int multi;              /* msgnht */
    size_t d, n;
    const drift_precond_services *pre;
    double *p, *xi, *grad, *z, *v;
    double *diag;           /* the row's columns: xi (1, msgnht d), kinetic */
} sgnht;

static int init_common(sgnht *s, const drift_services *svc, drift_chain *c,
                       const double *hp, int multi)
{
    s->h = hp[0];
    s->A = hp[1];
    s->multi = multi;
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    if (multi)
        DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                         DRIFT_TABLE_PRECOND, 1, "msgnht");
    else
        DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                         DRIFT_TABLE_PRECOND, 1, "sgnht");
    size_t bytes = s->d * sizeof(double);
    s->p = svc->alloc(c, bytes);
    s->xi = svc->alloc(c, bytes);
    s->grad = svc->alloc(c, bytes);
    s->z = svc->alloc(c, bytes);
    s->v = svc->alloc(c, bytes);
    s->diag = svc->alloc(c, (s->d + 1) * sizeof(double));
    if (!s->p || !s->xi || !s->grad || !s->z || !s->v || !s->diag)
        return DRIFT_ENOMEM;
    for (size_t k = 0; k < s->d; k++)
        s->xi[k] = s->A;    /* sgnht uses xi[0] only */
    /* h^2 P L < 4 keeps the step stable; h P E[g^2] / (2 A) is the heat
     * of the gradients' noise relative to the injected noise's: the scale
     * that caps a warmup window's P. */
    double h_eff = fmax(s->h * s->h, s->h / (2 * fmax(s->A, 1e-12)));
    int rc = s->pre->use(c, (drift_precond_kind)hp[2], h_eff);
    if (!rc)
        s->pre->draw_momentum(c, s->p);
    return rc;
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
    /* z ~ N(0, M); v = P p (the velocity) */
    s->pre->draw_momentum(c, s->z);
    for (size_t k = 0; k < s->d; k++) {
        double xi = s->multi ? s->xi[k] : s->xi[0];
        s->p[k] += -xi * s->p[k] * h - s->grad[k] * h + noise * s->z[k];
    }
    s->pre->mul(c, s->p, s->v);
    for (size_t k = 0; k < s->d; k++) {
        theta[k] += s->v[k] * h;
        pp += s->p[k] * s->v[k];
        if (s->multi)
            s->xi[k] += (s->p[k] * s->v[k] - 1.0) * h;
    }
    if (!s->multi)
        s->xi[0] += (pp / d - 1.0) * h;
    s->pre->observe(c, theta, s->grad);
    for (size_t k = 0; k < n_xi; k++)
        s->diag[k] = s->xi[k];
    s->diag[n_xi] = pp / (2.0 * d);
    return svc->emit_draw(c, theta, -U, s->diag);
}

/* A window's end set a new P: the momentum is drawn from it. */
static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    (void)svc;
    sgnht *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END &&
        s->pre->kind(c) == DRIFT_PRECOND_WARMUP)
        s->pre->draw_momentum(c, s->p);
}

/* The momentum p and the thermostats xi (all d, though sgnht reads only
 * xi[0]); P is the engine's; grad, z, v and diag are scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sgnht *s = state;
    int rc = svc->ckpt_bytes(c, s->p, s->d * sizeof *s->p);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->xi, s->d * sizeof *s->xi);
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
    {"precond", DRIFT_HP_ENUM, DRIFT_PRECOND_AUTO, 0, 0, 0, "auto|unit|mode|warmup|dense",
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
    {"precond", DRIFT_HP_ENUM, DRIFT_PRECOND_AUTO, 0, 0, 0, "auto|unit|mode|warmup|dense",
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
