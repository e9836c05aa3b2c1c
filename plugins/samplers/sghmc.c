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
 * With a preconditioner P (hyperparameter precond: the engine's, through
 * its DRIFT_TABLE_PRECOND services; sgld.c says which) the momentum has
 * mass matrix M = P^-1, so that theta moves with velocity P r and the
 * noise that the friction balances is N(0, M):
 *
 *     r_{k+1}     = r_k - h gamma r_k - h grad U~(theta_k)
 *                       + sigma sqrt(h) M^(1/2) xi_k,
 *     theta_{k+1} = theta_k + h P r,
 *
 * which leaves exp(-U(theta) - r' P r / 2) invariant with sigma =
 * sqrt(2 gamma) (the friction and the noise scale with the same M, as
 * the fluctuation-dissipation balance needs).  After a warmup window
 * changes P (precond=warmup), the momentum is drawn afresh from
 * N(0, P^-1). */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct sghmc {
    double h, gamma, sigma;
    int symplectic;
    size_t d, n;
    const drift_precond_services *pre;
    double *r, *grad, *xi, *v;
} sghmc;

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
    DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                     DRIFT_TABLE_PRECOND, 1, "sghmc");
    size_t bytes = s->d * sizeof(double);
    s->r = svc->alloc(c, bytes);
    s->grad = svc->alloc(c, bytes);
    s->xi = svc->alloc(c, bytes);
    s->v = svc->alloc(c, bytes);
    if (!s->r || !s->grad || !s->xi || !s->v)
        return DRIFT_ENOMEM;
    /* h^2 P L < 4 keeps the step stable; h P E[g^2] / (2 gamma) is the
     * heat of the gradients' noise relative to the friction's: the scale
     * that caps a warmup window's P. */
    double h_eff = fmax(s->h * s->h, s->h / (2 * fmax(s->gamma, 1e-12)));
    int rc = s->pre->use(c, (drift_precond_kind)hp[4], h_eff);
    if (!rc)
        s->pre->draw_momentum(c, s->r);
    return rc;
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
    /* xi ~ N(0, M); v = P r, the velocity of r_k (em) or r_{k+1} */
    s->pre->draw_momentum(c, s->xi);
    if (!s->symplectic)
        s->pre->mul(c, s->r, s->v);
    for (size_t k = 0; k < s->d; k++)
        s->r[k] = decay * s->r[k] - s->h * s->grad[k] + noise * s->xi[k];
    if (s->symplectic)
        s->pre->mul(c, s->r, s->v);
    for (size_t k = 0; k < s->d; k++)
        theta[k] += s->h * s->v[k];
    if (!s->symplectic) /* the kinetic energy is r_{k+1}'s */
        s->pre->mul(c, s->r, s->v);
    double rr = 0;
    for (size_t k = 0; k < s->d; k++)
        rr += s->r[k] * s->v[k];
    s->pre->observe(c, theta, s->grad);
    double diag[1] = {rr / (2.0 * (double)s->d)};
    return svc->emit_draw(c, theta, -U, diag);
}

/* A window's end set a new P: the momentum is drawn from it. */
static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    (void)svc;
    sghmc *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END &&
        s->pre->kind(c) == DRIFT_PRECOND_WARMUP)
        s->pre->draw_momentum(c, s->r);
}

/* The momentum r, carried from step to step (P is the engine's); grad,
 * xi and v are scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sghmc *s = state;
    return svc->ckpt_bytes(c, s->r, s->d * sizeof *s->r);
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
    {"precond", DRIFT_HP_ENUM, DRIFT_PRECOND_AUTO, 0, 0, 0,
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
