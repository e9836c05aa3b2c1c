/* lmc.c: the full-data Langevin baselines.
 *
 *   lmc   the unadjusted Langevin algorithm (Euler-Maruyama step of
 *         d theta = -grad U dt + sqrt(2) dW with the exact gradient):
 *             theta <- theta - h grad U(theta) + sqrt(2h) xi.
 *         Biased by O(h); costs one data pass per step.
 *   mala  the Metropolis-adjusted Langevin algorithm (Roberts and Tweedie,
 *         1996): the lmc step is a proposal, accepted with the
 *         Metropolis-Hastings probability, so exp(-U) is exactly invariant.
 *         During --warmup the step size is adapted by Nesterov dual
 *         averaging towards an acceptance rate adapt_delta (0.574, the
 *         optimal MALA rate of Roberts and Rosenthal, 1998), with the
 *         constants Stan uses (Hoffman and Gelman, 2014, Algorithm 5); the
 *         averaged step size is kept from the first draw on.
 *
 * Not for minibatches: both use grad_full (one data pass per step). */
#include <math.h>

#include <drift/sampler.h>

/* ---- lmc ----------------------------------------------------------------- */

typedef struct lmc {
    double h, noise;
    size_t d;
    double *grad, *xi;
} lmc;

static int lmc_init(void *state, const drift_services *svc, drift_chain *c,
                    const double *hp, double *theta)
{
    (void)theta;
    lmc *s = state;
    s->h = hp[0];
    s->noise = sqrt(2.0 * s->h);
    s->d = svc->dim(c);
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    return s->grad && s->xi ? DRIFT_OK : DRIFT_ENOMEM;
}

static int lmc_step(void *state, const drift_services *svc, drift_chain *c,
                    double *theta)
{
    lmc *s = state;
    double U;
    int rc = svc->grad_full(c, theta, s->grad, &U);
    if (rc)
        return rc;
    svc->normal_fill(c, s->d, s->xi);
    for (size_t k = 0; k < s->d; k++)
        theta[k] += -s->h * s->grad[k] + s->noise * s->xi[k];
    /* lp__ is -U at the point the step started from, as for sgld. */
    return svc->emit_draw(c, theta, -U, NULL);
}

static const drift_hparam lmc_hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "step size: theta += -h grad U + sqrt(2h) N(0, I), full gradient"},
};

/* ---- mala ---------------------------------------------------------------- */

typedef struct mala {
    double h;               /* step size in use */
    double delta, gamma, kappa, t0; /* dual averaging */
    double mu, Hbar, log_h_bar;
    uint64_t t;             /* adaptation steps so far */
    int adapting;
    size_t d;
    double U, U_prop;       /* U at the current point and the proposal */
    double *grad, *grad_prop, *prop, *xi;
} mala;

static int mala_init(void *state, const drift_services *svc, drift_chain *c,
                     const double *hp, double *theta)
{
    mala *s = state;
    s->h = hp[0];
    s->delta = hp[1];
    s->gamma = hp[2];
    s->kappa = hp[3];
    s->t0 = hp[4];
    /* Stan centres the adaptation on ten times the initial step size, which
     * favours trying larger steps. */
    s->mu = log(10.0 * s->h);
    s->log_h_bar = 0;
    s->d = svc->dim(c);
    s->grad = svc->alloc(c, s->d * sizeof(double));
    s->grad_prop = svc->alloc(c, s->d * sizeof(double));
    s->prop = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    if (!s->grad || !s->grad_prop || !s->prop || !s->xi)
        return DRIFT_ENOMEM;
    return svc->grad_full(c, theta, s->grad, &s->U);
}

/* log q(to | from) + const for the Langevin proposal
 * to ~ N(from - h grad U(from), 2h I). */
static double log_q(const double *to, const double *from,
                    const double *grad_from, double h, size_t d)
{
    double ss = 0;
    for (size_t k = 0; k < d; k++) {
        double r = to[k] - from[k] + h * grad_from[k];
        ss += r * r;
    }
    return -ss / (4.0 * h);
}

/* One dual-averaging update (Hoffman and Gelman 2014, Algorithm 5) from
 * the acceptance statistic of the step just taken. */
static void adapt(mala *s, double accept_stat)
{
    s->t++;
    double t = (double)s->t;
    double w = 1.0 / (t + s->t0);
    s->Hbar = (1.0 - w) * s->Hbar + w * (s->delta - accept_stat);
    double log_h = s->mu - sqrt(t) / s->gamma * s->Hbar;
    double eta = pow(t, -s->kappa);
    s->log_h_bar = eta * log_h + (1.0 - eta) * s->log_h_bar;
    s->h = exp(log_h);
}

static int mala_step(void *state, const drift_services *svc, drift_chain *c,
                     double *theta)
{
    mala *s = state;
    int warm = svc->in_warmup(c);
    if (warm)
        s->adapting = 1;
    else if (s->adapting) {
        /* Warmup is over: keep the averaged step size from now on. */
        s->adapting = 0;
        s->h = exp(s->log_h_bar);
    }
    double h = s->h, noise = sqrt(2.0 * h);
    svc->normal_fill(c, s->d, s->xi);
    for (size_t k = 0; k < s->d; k++)
        s->prop[k] = theta[k] - h * s->grad[k] + noise * s->xi[k];
    int rc = svc->grad_full(c, s->prop, s->grad_prop, &s->U_prop);
    if (rc)
        return rc;
    double log_alpha = s->U - s->U_prop +
                       log_q(theta, s->prop, s->grad_prop, h, s->d) -
                       log_q(s->prop, theta, s->grad, h, s->d);
    /* A non-finite ratio (overflow far out in the tails) rejects. */
    double accept_stat = isnan(log_alpha) ? 0.0
                         : log_alpha >= 0 ? 1.0
                                          : exp(log_alpha);
    if (svc->uniform(c) < accept_stat) {
        for (size_t k = 0; k < s->d; k++) {
            theta[k] = s->prop[k];
            s->grad[k] = s->grad_prop[k];
        }
        s->U = s->U_prop;
    }
    if (warm)
        adapt(s, accept_stat);
    double diag[2] = {accept_stat, h};
    return svc->emit_draw(c, theta, -s->U, diag);
}

static const drift_hparam mala_hparams[] = {
    {"h", DRIFT_HP_REAL, 0.1, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "initial step size of the proposal theta - h grad U + sqrt(2h) "
     "N(0, I); adapted during --warmup, kept as given without warmup"},
    {"adapt_delta", DRIFT_HP_REAL, 0.574, 0, 1,
     DRIFT_HP_OPEN_LO | DRIFT_HP_OPEN_HI, NULL,
     "target acceptance rate of the step-size adaptation (0.574: "
     "Roberts & Rosenthal's optimum for MALA)"},
    {"adapt_gamma", DRIFT_HP_REAL, 0.05, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "dual-averaging regularisation scale (Stan's gamma)"},
    {"adapt_kappa", DRIFT_HP_REAL, 0.75, 0, 1, DRIFT_HP_OPEN_LO, NULL,
     "dual-averaging relaxation exponent (Stan's kappa)"},
    {"adapt_t0", DRIFT_HP_REAL, 10, 0, INFINITY, 0, NULL,
     "dual-averaging iteration offset (Stan's t0)"},
};

static const char *const mala_columns[] = {"accept_stat__", "stepsize__"};

static const drift_sampler samplers[] = {
    {
        .name = "lmc",
        .summary = "unadjusted Langevin algorithm with full gradients",
        .hparams = lmc_hparams,
        .n_hparams = sizeof lmc_hparams / sizeof lmc_hparams[0],
        .state_size = sizeof(lmc),
        .flags = DRIFT_SAMPLER_FULL_DATA,
        .init = lmc_init,
        .step = lmc_step,
    },
    {
        .name = "mala",
        .summary = "Metropolis-adjusted Langevin algorithm (exact, full "
                   "data), step size adapted in warmup",
        .hparams = mala_hparams,
        .n_hparams = sizeof mala_hparams / sizeof mala_hparams[0],
        .columns = mala_columns,
        .n_columns = sizeof mala_columns / sizeof mala_columns[0],
        .state_size = sizeof(mala),
        .flags = DRIFT_SAMPLER_FULL_DATA,
        .init = mala_init,
        .step = mala_step,
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
