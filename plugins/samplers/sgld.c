/* sgld.c: stochastic-gradient Langevin dynamics (Welling and Teh, 2011),
 * the Euler-Maruyama step of d theta = -grad U dt + sqrt(2) dW with a
 * minibatch estimate of grad U:
 *
 *     theta <- theta - h grad U~(theta) + sqrt(2 h) xi,   xi ~ N(0, I).
 *
 * (Welling and Teh's epsilon is 2h.)  The minibatch size is the engine's
 * --batch.  Not an exact sampler: its bias grows with h. */
#include <math.h>

#include <drift/sampler.h>

typedef struct sgld {
    double h, noise;
    size_t d, n;
    double *grad, *xi;
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
    return s->grad && s->xi ? DRIFT_OK : DRIFT_ENOMEM;
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
    for (size_t k = 0; k < s->d; k++)
        theta[k] += -s->h * s->grad[k] + s->noise * s->xi[k];
    /* lp__ is the minibatch estimate at the point the step started from. */
    return svc->emit_draw(c, theta, -U, NULL);
}

/* Nothing to save: a step reads only theta (the engine's) and draws a
 * fresh minibatch and fresh noise; grad and xi are scratch. */
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
     "step size: theta += -h grad U + sqrt(2h) N(0, I)"},
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
