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
 * the discretisation bias grows with h. */
#include <math.h>

#include <drift/sampler.h>

typedef struct sghmc {
    double h, gamma, sigma;
    int symplectic;
    size_t d, n;
    double *r, *grad, *xi;
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
    s->r = svc->alloc(c, s->d * sizeof(double));
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    if (!s->r || !s->grad || !s->xi)
        return DRIFT_ENOMEM;
    svc->normal_fill(c, s->d, s->r);
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
    svc->normal_fill(c, s->d, s->xi);
    double noise = s->sigma * sqrt(s->h), decay = 1.0 - s->h * s->gamma;
    double rr = 0;
    for (size_t k = 0; k < s->d; k++) {
        double r_new = decay * s->r[k] - s->h * s->grad[k] + noise * s->xi[k];
        theta[k] += s->h * (s->symplectic ? r_new : s->r[k]);
        s->r[k] = r_new;
        rr += r_new * r_new;
    }
    double diag[1] = {rr / (2.0 * (double)s->d)};
    return svc->emit_draw(c, theta, -U, diag);
}

/* The momentum r, carried from step to step; grad and xi are scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sghmc *s = state;
    return svc->ckpt_bytes(c, s->r, s->d * sizeof *s->r);
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += h r; r += -h gamma r - h grad U + sigma "
     "sqrt(h) N(0, I)"},
    {"gamma", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "friction gamma of dr = -gamma r dt - grad U dt + sigma dW"},
    {"sigma", DRIFT_HP_REAL, NAN, 0, INFINITY, 0, NULL,
     "noise amplitude; default (auto) sqrt(2 gamma), which makes exp(-U) "
     "invariant"},
    {"scheme", DRIFT_HP_ENUM, 0, 0, 0, 0, "em|symplectic",
     "em: theta moves with r_k (Euler-Maruyama); symplectic: with r_{k+1} "
     "(semi-implicit, stable at small gamma)"},
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
