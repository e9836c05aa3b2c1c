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
 * paper's; the default without cv), or the engine's diagonal metric as in
 * sgld (mode: the inverse curvature at cv's mode, the default with cv;
 * warmup: learned from warmup draws; unit: none, which is sgld; dense:
 * the inverse empirical Fisher matrix at cv's mode), G = P as sgld.c
 * describes P.  precond=auto under cv: dense up to AUTO_DENSE_DIM
 * parameters, mode beyond. */
#include <math.h>

#include <drift/sampler.h>

#include "precond.h"

DRIFT_PLUGIN_LICENSE("MIT");

enum { PC_AUTO = 0, PC_RMSPROP = 1, PC_UNIT = 2, PC_MODE = 3,
       PC_WARMUP = 4, PC_DENSE = 5 };

typedef struct psgld {
    double h, lambda, alpha;
    int precond;            /* PC_RMSPROP, PC_UNIT, PC_MODE or PC_WARMUP */
    double min0;            /* min_j M0^-1_jj */
    double n_g2;            /* steps summed into g2 */
    size_t d, n, N;
    double *grad, *gprior, *V, *xi, *P, *buf, *g2;
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
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->gprior = svc->alloc(c, s->d * sizeof(double));
    s->V = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    if (!s->grad || !s->gprior || !s->V || !s->xi)
        return DRIFT_ENOMEM;
    /* a mode to precondition from: under --gradient cv, or the engine's
     * plan */
    int cv = svc->mode(c, NULL, NULL) == DRIFT_OK;
    s->precond = (int)hp[3];
    if (s->precond == PC_AUTO)
        s->precond = !cv ? PC_RMSPROP
                     : s->d <= AUTO_DENSE_DIM ? PC_DENSE : PC_MODE;
    int rc = precond_refuse(svc, c, "psgld",
                            s->precond == PC_MODE || s->precond == PC_DENSE,
                            s->precond == PC_WARMUP, cv,
                            "precond=warmup or rmsprop");
    if (rc)
        return rc;
    if (s->precond == PC_RMSPROP && cv)
        svc->warn(c, "psgld: precond=rmsprop with --gradient cv: RMSprop "
                     "measures the gradients' noise, which cv removes near "
                     "the mode, so its preconditioner grows towards "
                     "1/lambda; precond=mode (the default with cv) is the "
                     "safe choice");
    if (s->precond == PC_DENSE) {
        s->buf = svc->alloc(c, s->d * sizeof(double));
        s->g2 = svc->alloc(c, s->d * sizeof(double));
        if (!s->buf || !s->g2)
            return DRIFT_ENOMEM;
        return svc->metric_use(c, DRIFT_METRIC_DENSE);
    }
    if (s->precond == PC_MODE || s->precond == PC_WARMUP) {
        s->P = svc->alloc(c, s->d * sizeof(double));
        s->buf = svc->alloc(c, s->d * sizeof(double));
        s->g2 = svc->alloc(c, s->d * sizeof(double));
        if (!s->P || !s->buf || !s->g2)
            return DRIFT_ENOMEM;
        rc = svc->metric_use(c, DRIFT_METRIC_DIAG);
        if (rc)
            return rc;
        s->min0 = min_of(s->P, svc->metric_get(c, s->P));
    }
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    psgld *s = state;
    double U;
    int rc = svc->grad_batch(c, theta, s->n, s->grad, &U, NULL);
    if (rc)
        return rc;
    if (s->precond != PC_RMSPROP) {
        svc->normal_fill(c, s->d, s->xi);
        double noise = sqrt(2.0 * s->h);
        if (s->precond == PC_UNIT) {
            for (size_t k = 0; k < s->d; k++)
                theta[k] += -s->h * s->grad[k] + noise * s->xi[k];
        } else if (s->precond == PC_DENSE) {
            svc->metric_inv_mul(c, s->grad, s->buf);
            svc->metric_inv_sqrt_mul(c, s->xi, s->g2);
            for (size_t k = 0; k < s->d; k++)
                theta[k] += -s->h * s->buf[k] + noise * s->g2[k];
        } else {
            for (size_t k = 0; k < s->d; k++)
                theta[k] += -s->h * s->P[k] * s->grad[k] +
                            noise * sqrt(s->P[k]) * s->xi[k];
            if (s->precond == PC_WARMUP && svc->in_warmup(c)) {
                svc->metric_observe(c, theta);
                for (size_t k = 0; k < s->d; k++)
                    s->g2[k] += s->grad[k] * s->grad[k];
                s->n_g2++;
            }
        }
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

static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    psgld *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END && s->precond == PC_WARMUP)
        precond_update(s->P, s->buf, s->g2, &s->n_g2, s->min0, s->h, svc,
                       c);
}

/* The running average V of squared mean gradients, and P with the
 * engine's metric; the rest is scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    psgld *s = state;
    int rc = svc->ckpt_bytes(c, s->V, s->d * sizeof *s->V);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->P, s->d * sizeof *s->P);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, s->g2, s->d * sizeof *s->g2);
    if (!rc && s->P)
        rc = svc->ckpt_bytes(c, &s->n_g2, sizeof s->n_g2);
    return rc;
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
