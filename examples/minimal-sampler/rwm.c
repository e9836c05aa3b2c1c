/* rwm.c: random-walk Metropolis, the smallest complete drift sampler:
 * a hyperparameter, a diagnostic column, engine-owned state, a counted
 * full-data oracle and emitted draws.  Exact, but it needs a full pass
 * over the data per iteration: a teaching example, not a sampler for big
 * data.  docs/writing-a-sampler.md walks through it. */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct rwm {
    size_t d;
    double step;      /* proposal standard deviation */
    double U;         /* potential at the current point */
    double *prop;     /* proposed point (engine-owned memory) */
    double accepted;  /* proposals accepted so far */
} rwm;

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    rwm *s = state;
    s->d = svc->dim(c);
    s->step = hp[0]; /* validated by the engine against the table below */
    s->prop = svc->alloc(c, s->d * sizeof(double));
    if (!s->prop)
        return DRIFT_ENOMEM;
    /* U(theta) over all rows: the engine counts N evaluations. */
    return svc->U_full(c, theta, &s->U);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    rwm *s = state;
    for (size_t k = 0; k < s->d; k++)
        s->prop[k] = theta[k] + s->step * svc->normal(c);
    double Up;
    int rc = svc->U_full(c, s->prop, &Up);
    if (rc && rc != DRIFT_ENONFINITE)
        return rc; /* the engine has recorded why */
    /* Accept with probability min(1, exp(U - Up)); where the density is
     * not finite, U_full said DRIFT_ENONFINITE and Up is +inf: rejected. */
    if (log(svc->uniform(c)) < s->U - Up) {
        for (size_t k = 0; k < s->d; k++)
            theta[k] = s->prop[k];
        s->U = Up;
        s->accepted += 1;
    }
    double rate = s->accepted / (double)(svc->iteration(c) + 1);
    return svc->emit_draw(c, theta, -s->U, &rate);
}

/* Checkpoints (--checkpoint-every, --resume): on resume init has run
 * again and the engine has put theta back; U at theta and the count of
 * acceptances are what the next steps read.  prop is scratch. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    rwm *s = state;
    int rc = svc->ckpt_bytes(c, &s->U, sizeof s->U);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->accepted, sizeof s->accepted);
    return rc;
}

static const drift_hparam hparams[] = {
    {"step", DRIFT_HP_REAL, 0.1, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "standard deviation of the Gaussian random-walk proposal"},
};

static const char *const columns[] = {"accept_rate__"};

static const drift_sampler samplers[] = {{
    .name = "rwm",
    .summary = "random-walk Metropolis (full data; a teaching example)",
    .hparams = hparams,
    .n_hparams = 1,
    .columns = columns,
    .n_columns = 1,
    .state_size = sizeof(rwm),
    .flags = DRIFT_SAMPLER_FULL_DATA,
    .init = init,
    .step = step,
    .checkpoint = checkpoint,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    1,
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
