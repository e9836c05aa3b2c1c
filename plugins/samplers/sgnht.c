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
 * exact: the discretisation bias grows with h. */
#include <math.h>

#include <drift/sampler.h>

typedef struct sgnht {
    double h, A;
    int multi;              /* msgnht */
    size_t d, n;
    double *p, *xi, *grad, *z;
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
    s->p = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->z = svc->alloc(c, s->d * sizeof(double));
    s->diag = svc->alloc(c, (s->d + 1) * sizeof(double));
    if (!s->p || !s->xi || !s->grad || !s->z || !s->diag)
        return DRIFT_ENOMEM;
    svc->normal_fill(c, s->d, s->p);
    for (size_t k = 0; k < s->d; k++)
        s->xi[k] = s->A;    /* sgnht uses xi[0] only */
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
    svc->normal_fill(c, s->d, s->z);
    double h = s->h, noise = sqrt(2.0 * s->A * h), pp = 0;
    for (size_t k = 0; k < s->d; k++) {
        double xi = s->multi ? s->xi[k] : s->xi[0];
        s->p[k] += -xi * s->p[k] * h - s->grad[k] * h + noise * s->z[k];
        theta[k] += s->p[k] * h;
        pp += s->p[k] * s->p[k];
    }
    double d = (double)s->d;
    size_t n_xi = s->multi ? s->d : 1;
    if (s->multi)
        for (size_t k = 0; k < s->d; k++)
            s->xi[k] += (s->p[k] * s->p[k] - 1.0) * h;
    else
        s->xi[0] += (pp / d - 1.0) * h;
    for (size_t k = 0; k < n_xi; k++)
        s->diag[k] = s->xi[k];
    s->diag[n_xi] = pp / (2.0 * d);
    return svc->emit_draw(c, theta, -U, s->diag);
}

/* The momentum p and the thermostats xi (all d, though sgnht reads only
 * xi[0]); grad, z and diag are scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sgnht *s = state;
    int rc = svc->ckpt_bytes(c, s->p, s->d * sizeof *s->p);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->xi, s->d * sizeof *s->xi);
    return rc;
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: p += -xi p h - grad U h + sqrt(2A h) N(0, I); "
     "theta += p h; xi += (p'p/d - 1) h"},
    {"A", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "diffusion factor: injected noise sqrt(2A) N(0, h I); also the "
     "thermostat's start xi_0"},
};

static const drift_hparam mhparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: p_i += -xi_i p_i h - grad_i U h + sqrt(2A h) N(0, 1); "
     "theta += p h; xi_i += (p_i^2 - 1) h"},
    {"A", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "diffusion factor: injected noise sqrt(2A) N(0, h I); also each "
     "thermostat's start"},
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
