/* psgld.c: preconditioned SGLD (Li, Chen, Carlson and Carin, AAAI 2016,
 * Algorithm 1): SGLD with the diagonal RMSprop preconditioner
 *
 *     V <- alpha V + (1 - alpha) gbar . gbar,
 *     G <- diag(1 / (lambda + sqrt(V))),
 *     theta <- theta - h G grad U~(theta) + sqrt(2h G) xi,  xi ~ N(0, I),
 *
 * gbar the minibatch mean of the per-datum log-likelihood gradients (the
 * prior excluded) and V started at 0.  The paper's step epsilon is 2h (as
 * Welling and Teh's is for sgld).  Like the paper's experiments, the
 * correction term Gamma(theta) = sum_j dG_ij/dtheta_j is left out: G
 * depends on theta only through the running average V.  Not exact: the
 * bias grows with h.
 *
 * RMSprop measures the minibatch gradients' noise, which --gradient cv
 * all but removes near the mode: V would collapse and G blow up to
 * 1/lambda.  So the hyperparameter precond chooses G: rmsprop (the
 * paper's; the default without a mode), or the engine's preconditioner P
 * as sgld uses it (its DRIFT_TABLE_PRECOND services: mode, warmup, unit,
 * dense; sgld.c says which), G = P: that step is sgld's.  precond=auto
 * with a mode (under cv, or the engine's plan): the engine's auto, dense
 * up to 100 parameters, mode beyond. */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

/* The hyperparameter's values; beyond rmsprop they are the engine's
 * drift_precond_kind, shifted by one. */
enum { PC_AUTO = 0, PC_RMSPROP = 1 };

typedef struct psgld {
    double h, lambda, alpha;
    int rmsprop;            /* the paper's G; else the engine's P */
    size_t d, n, N;
    const drift_precond_services *pre;
    double *grad, *gprior, *V, *xi, *Pg, *Pxi;
} psgld;

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    (void)theta;
    psgld *s = state;
    s->h = hp[0];
    s->lambda = hp[1];
    s->alpha = hp[2];
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    s->N = svc->n_rows(c);
    DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                     DRIFT_TABLE_PRECOND, 1, "psgld");
    size_t bytes = s->d * sizeof(double);
    s->grad = svc->alloc(c, bytes);
    s->gprior = svc->alloc(c, bytes);
    s->V = svc->alloc(c, bytes);
    s->xi = svc->alloc(c, bytes);
    s->Pg = svc->alloc(c, bytes);
    s->Pxi = svc->alloc(c, bytes);
    if (!s->grad || !s->gprior || !s->V || !s->xi || !s->Pg || !s->Pxi)
        return DRIFT_ENOMEM;
    /* a mode to precondition from: under --gradient cv, or the engine's
     * plan */
    int has_mode = svc->mode(c, NULL, NULL) == DRIFT_OK;
    int pc = (int)hp[3];
    s->rmsprop = pc == PC_RMSPROP || (pc == PC_AUTO && !has_mode);
    if (s->rmsprop) {
        if (has_mode)
            svc->warn(c, "psgld: precond=rmsprop with --gradient cv: "
                         "RMSprop measures the gradients' noise, which cv "
                         "removes near the mode, so its preconditioner grows "
                         "towards 1/lambda; precond=mode (the default with "
                         "cv) is the safe choice");
        return DRIFT_OK;
    }
    drift_precond_kind kind =
        pc == PC_AUTO ? DRIFT_PRECOND_AUTO : (drift_precond_kind)(pc - 1);
    return s->pre->use(c, kind, s->h);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    psgld *s = state;
    double U;
    int rc = svc->grad_batch(c, theta, s->n, s->grad, &U, NULL);
    if (rc)
        return rc;
    if (!s->rmsprop) {
        svc->normal_fill(c, s->d, s->xi);
        double noise = sqrt(2.0 * s->h);
        s->pre->mul(c, s->grad, s->Pg);
        s->pre->sqrt_mul(c, s->xi, s->Pxi);
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -s->h * s->Pg[k] + noise * s->Pxi[k];
        s->pre->observe(c, theta, s->grad);
        return svc->emit_draw(c, theta, -U, NULL);
    }
    /* gbar = (grad U~ - grad U_prior) / N is the minibatch mean of the
     * per-datum gradients (sign is irrelevant: only its square is used);
     * a data-free target has only its prior to precondition. */
    if (s->N > 0 && (rc = svc->grad_prior(c, theta, s->gprior, NULL)))
        return rc;
    svc->normal_fill(c, s->d, s->xi);
    for (size_t k = 0; k < s->d; k++) {
        double gbar = s->N > 0 ? (s->grad[k] - s->gprior[k]) / (double)s->N
                               : s->grad[k];
        s->V[k] = s->alpha * s->V[k] + (1.0 - s->alpha) * gbar * gbar;
        double G = 1.0 / (s->lambda + sqrt(s->V[k]));
        theta[k] += -s->h * G * s->grad[k] + sqrt(2.0 * s->h * G) * s->xi[k];
    }
    return svc->emit_draw(c, theta, -U, NULL);
}

/* The running average V of squared mean gradients (P is the engine's);
 * the rest is scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    psgld *s = state;
    return svc->ckpt_bytes(c, s->V, s->d * sizeof *s->V);
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += -h G grad U + sqrt(2h G) N(0, I) (the paper's "
     "epsilon is 2h)"},
    {"lambda", DRIFT_HP_REAL, 1e-5, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "regulariser of the preconditioner G = 1/(lambda + sqrt(V))"},
    {"alpha", DRIFT_HP_REAL, 0.99, 0, 1, DRIFT_HP_OPEN_HI, NULL,
     "decay of the running average V of squared mean gradients"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0,
     "auto|rmsprop|unit|mode|warmup|dense",
     "G: rmsprop (the paper's), or the engine's metric as sgld's precond "
     "(unit, mode, warmup, dense); auto: with --gradient cv dense up to "
     "100 parameters, mode beyond, else rmsprop"},
};

static const drift_sampler samplers[] = {{
    .name = "psgld",
    .summary = "preconditioned SGLD with an RMSprop preconditioner (Li et "
               "al. 2016)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .state_size = sizeof(psgld),
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
