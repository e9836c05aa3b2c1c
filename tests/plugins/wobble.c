/* wobble.c: a minibatch sampler with a fault on order, for the engine's
 * watch over running chains (tests/engine/run/test_watch.c).  Each
 * step emits theta = centre + z, z ~ N(0, I) fresh (independent draws:
 * exact on a standard normal target such as tests/plugins/mvn.c), with
 * lp__ the minibatch estimate of -U there from grad_batch, until
 * iteration `at`; from there on, by `fault`:
 *   none     as before (a healthy chain);
 *   runaway  the centre walks away, by `speed` per step in every
 *            coordinate;
 *   stuck    theta freezes where it was, but for jitter of 1e-9;
 *   blowup   coordinate 2 becomes +infinity.
 * For tests only: not installed. */
#include <math.h>

#include <drift/sampler.h>

typedef struct wobble {
    int fault;
    uint64_t at;
    double speed;
    size_t d, n;
    double *centre, *z, *g, *frozen;
} wobble;

enum { F_NONE = 0, F_RUNAWAY = 1, F_STUCK = 2, F_BLOWUP = 3 };

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    wobble *s = state;
    s->fault = (int)hp[0];
    s->at = (uint64_t)hp[1];
    s->speed = hp[2];
    s->d = svc->dim(c);
    s->n = svc->batch(c);
    s->centre = svc->alloc(c, s->d * sizeof(double));
    s->z = svc->alloc(c, s->d * sizeof(double));
    s->g = svc->alloc(c, s->d * sizeof(double));
    s->frozen = svc->alloc(c, s->d * sizeof(double));
    if (!s->centre || !s->z || !s->g || !s->frozen)
        return DRIFT_ENOMEM;
    for (size_t k = 0; k < s->d; k++)
        s->centre[k] = theta[k] = 0;
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    wobble *s = state;
    uint64_t it = svc->iteration(c);
    int late = it >= s->at;
    svc->normal_fill(c, s->d, s->z);
    if (late && s->fault == F_STUCK) {
        if (it == s->at)
            for (size_t k = 0; k < s->d; k++)
                s->frozen[k] = theta[k];
        for (size_t k = 0; k < s->d; k++)
            theta[k] = s->frozen[k] + 1e-9 * s->z[k];
    } else {
        if (late && s->fault == F_RUNAWAY)
            for (size_t k = 0; k < s->d; k++)
                s->centre[k] += s->speed;
        for (size_t k = 0; k < s->d; k++)
            theta[k] = s->centre[k] + s->z[k];
        if (late && s->fault == F_BLOWUP && s->d > 1)
            theta[1] = INFINITY;
    }
    double U = NAN;
    if (isfinite(theta[s->d > 1 ? 1 : 0])) {
        int rc = svc->grad_batch(c, theta, s->n, s->g, &U, NULL);
        if (rc)
            return rc;
    }
    return svc->emit_draw(c, theta, -U, NULL);
}

/* Draws are fresh each step; the centre and the frozen point are kept. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    wobble *s = state;
    int rc = svc->ckpt_bytes(c, s->centre, s->d * sizeof *s->centre);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->frozen, s->d * sizeof *s->frozen);
    return rc;
}

static const drift_hparam hparams[] = {
    {"fault", DRIFT_HP_ENUM, F_NONE, 0, 0, 0, "none|runaway|stuck|blowup",
     "what goes wrong from iteration at on"},
    {"at", DRIFT_HP_INT, 1500, 0, 1e9, 0, NULL, "when it goes wrong"},
    {"speed", DRIFT_HP_REAL, 0.05, 0, INFINITY, 0, NULL,
     "runaway: the centre's step per iteration"},
};

static const drift_sampler samplers[] = {{
    .name = "wobble",
    .summary = "independent normal draws with a fault on order (tests)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .state_size = sizeof(wobble),
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
