/* sgld.c: stochastic-gradient Langevin dynamics (Welling and Teh, 2011),
 * the Euler-Maruyama step of d theta = -grad U dt + sqrt(2) dW with a
 * minibatch estimate of grad U:
 *
 *     theta <- theta - h grad U~(theta) + sqrt(2 h) xi,   xi ~ N(0, I).
 *
 * (Welling and Teh's epsilon is 2h.)  The minibatch size is the engine's
 * --batch.  Not an exact sampler: its bias grows with h.
 *
 * With a diagonal metric P (hyperparameter precond: the engine's metric,
 * from the curvature at --gradient cv's mode or learned in warmup) the
 * step is the preconditioned one, which leaves the same target invariant
 * in the limit h -> 0 (P does not depend on theta):
 *
 *     theta <- theta - h P grad U~(theta) + sqrt(2 h) P^(1/2) xi.
 *
 * P is the engine's M^-1 times c = min_j M0^-1_jj / min_j M^-1_jj, M0 the
 * metric the chain started with: h keeps the units of that start (the
 * identity, or the inverse curvature at the mode, where h ~ 0.1 is a step
 * of a tenth of a posterior standard deviation squared), and the metric
 * learned in warmup changes only the proportions between coordinates. */
#include <math.h>

#include <drift/sampler.h>

enum { PC_AUTO = 0, PC_UNIT = 1, PC_MODE = 2, PC_WARMUP = 3 };

typedef struct sgld {
    double h, noise;
    int precond;            /* PC_UNIT, PC_MODE or PC_WARMUP */
    double min0, scale;     /* min M0^-1 and c */
    size_t d, n;
    double *grad, *xi, *pg, *lxi;
} sgld;

/* The smallest entry of the engine's diagonal M^-1 (buf: d scratch). */
static double metric_min(const drift_services *svc, drift_chain *c,
                         double *buf)
{
    size_t n = svc->metric_get(c, buf);
    double m = INFINITY;
    for (size_t k = 0; k < n; k++)
        m = buf[k] < m ? buf[k] : m;
    return n && m > 0 && isfinite(m) ? m : 1.0;
}

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
    s->pg = svc->alloc(c, s->d * sizeof(double));
    s->lxi = svc->alloc(c, s->d * sizeof(double));
    if (!s->grad || !s->xi || !s->pg || !s->lxi)
        return DRIFT_ENOMEM;
    int cv = svc->gradient(c) == DRIFT_GRADIENT_CV;
    s->precond = (int)hp[1];
    if (s->precond == PC_AUTO)
        s->precond = cv ? PC_MODE : PC_UNIT;
    if (s->precond == PC_MODE && !cv)
        return svc->fail(c, "sgld: precond=mode needs the curvature at the "
                            "mode: run with --gradient cv (or use "
                            "precond=warmup)");
    if (s->precond == PC_WARMUP && svc->run_info(c)->base_window == 0)
        return svc->fail(c, "sgld: precond=warmup learns the metric in "
                            "warmup's slow windows: give --warmup 20 or "
                            "more (150 or more for Stan's windows)");
    s->scale = 1;
    if (s->precond != PC_UNIT) {
        int rc = svc->metric_use(c, DRIFT_METRIC_DIAG);
        if (rc)
            return rc;
        s->min0 = metric_min(svc, c, s->pg);
    }
    return DRIFT_OK;
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
    if (s->precond == PC_UNIT) {
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -s->h * s->grad[k] + s->noise * s->xi[k];
    } else {
        double hc = s->h * s->scale, noise = sqrt(2.0 * hc);
        svc->metric_inv_mul(c, s->grad, s->pg);
        svc->metric_inv_sqrt_mul(c, s->xi, s->lxi);
        for (size_t k = 0; k < s->d; k++)
            theta[k] += -hc * s->pg[k] + noise * s->lxi[k];
        if (s->precond == PC_WARMUP)
            svc->metric_observe(c, theta);
    }
    /* lp__ is the minibatch estimate at the point the step started from. */
    return svc->emit_draw(c, theta, -U, NULL);
}

/* A window's end set a new metric: h keeps its start's units. */
static void phase(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase ph)
{
    sgld *s = state;
    if (ph == DRIFT_PHASE_WINDOW_END && s->precond == PC_WARMUP)
        s->scale = s->min0 / metric_min(svc, c, s->pg);
}

/* Nothing to save: a step reads only theta (the engine's) and draws a
 * fresh minibatch and fresh noise; grad and xi are scratch, and the
 * metric's scale follows from the metric the engine restores. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sgld *s = state;
    if (s->precond == PC_WARMUP && svc->ckpt_restoring(c))
        s->scale = s->min0 / metric_min(svc, c, s->pg);
    return DRIFT_OK;
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-4, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "step size: theta += -h P grad U + sqrt(2h) P^(1/2) N(0, I), P the "
     "metric of precond (I for unit)"},
    {"precond", DRIFT_HP_ENUM, PC_AUTO, 0, 0, 0, "auto|unit|mode|warmup",
     "diagonal metric P: unit (none), mode (inverse curvature at "
     "--gradient cv's mode), warmup (learned from warmup draws, starting "
     "from mode's under cv), auto: mode with --gradient cv, else unit"},
};

static const drift_sampler samplers[] = {{
    .name = "sgld",
    .summary = "stochastic-gradient Langevin dynamics (Welling & Teh 2011)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .state_size = sizeof(sgld),
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
