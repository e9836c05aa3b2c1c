/* sgld.c: stochastic-gradient Langevin dynamics (Welling and Teh, 2011),
 * the Euler-Maruyama step of d theta = -grad U dt + sqrt(2) dW with a
 * minibatch estimate of grad U:
 *
 *     theta <- theta - h grad U~(theta) + sqrt(2 h) xi,   xi ~ N(0, I).
 *
 * (Welling and Teh's epsilon is 2h.)  The minibatch size is the engine's
 * --batch.  Not an exact sampler: its bias grows with h.
 *
 * With a preconditioner P (hyperparameter precond: the engine's, through
 * its DRIFT_TABLE_PRECOND services, which own P's choice, its warmup
 * windows and its checkpoint state) the step is the preconditioned one,
 * which leaves the same target invariant in the limit h -> 0 (P does not
 * depend on theta):
 *
 *     theta <- theta - h P grad U~(theta) + sqrt(2 h) P^(1/2) xi.
 *
 * P is the inverse curvature at the run's mode (precond=mode, diagonal;
 * dense, the inverse empirical Fisher matrix there, for posteriors whose
 * coordinates are strongly correlated), learned in warmup (warmup), or
 * the identity (unit); auto takes dense under a mode up to 100
 * parameters, mode beyond, unit without one. */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct sgld {
    double h, noise;
    size_t d, n;
    const drift_precond_services *pre;
    double *grad, *xi, *Pg, *Pxi;
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
    DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                     DRIFT_TABLE_PRECOND, 1, "sgld");
    size_t bytes = s->d * sizeof(double);
    s->grad = svc->alloc(c, bytes);
    s->xi = svc->alloc(c, bytes);
    s->Pg = svc->alloc(c, bytes);
    s->Pxi = svc->alloc(c, bytes);
    if (!s->grad || !s->xi || !s->Pg || !s->Pxi)
        return DRIFT_ENOMEM;
    return s->pre->use(c, (drift_precond_kind)hp[1], s->h);
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
    s->pre->mul(c, s->grad, s->Pg);
    s->pre->sqrt_mul(c, s->xi, s->Pxi);
    for (size_t k = 0; k < s->d; k++)
        theta[k] += -s->h * s->Pg[k] + s->noise * s->Pxi[k];
    s->pre->observe(c, theta, s->grad);
    /* lp__ is the minibatch estimate at the point the step started from. */
    return svc->emit_draw(c, theta, -U, NULL);
}

/* A step reads only theta (the engine's) and draws a fresh minibatch and
 * fresh noise; everything here is scratch (P is the engine's). */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    (void)state;
    (void)svc;
    (void)c;
    return DRIFT_OK;
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += -h P grad U + sqrt(2h) P^(1/2) N(0, I), P the "
     "metric of precond (I for unit)"},
    {"precond", DRIFT_HP_ENUM, DRIFT_PRECOND_AUTO, 0, 0, 0,
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
