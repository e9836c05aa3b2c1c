/* fixed_param.c: CmdStan's fixed_param sampler: the chain stays at its
 * initial point (--init, or Stan's random inits) and writes it as every
 * draw, so that the derived and generated blocks run once per draw: what
 * a model with no parameters to learn (simulating data, drawing from a
 * prior given as values) needs.  It evaluates nothing of the model: no
 * gradient, no step size, nothing for warmup to adapt, and lp__ and
 * accept_stat__ are 0 as CmdStan writes them.  Not a sampler of a
 * posterior. */
#include <stddef.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    (void)state, (void)svc, (void)c, (void)hp, (void)theta;
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    (void)state;
    const double accept = 0;
    return svc->emit_draw(c, theta, 0, &accept);
}

/* Nothing but theta, which the engine keeps, carries between steps. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    (void)state, (void)svc, (void)c;
    return DRIFT_OK;
}

static const char *const columns[] = {"accept_stat__"};

static const drift_sampler samplers[] = {{
    .name = "fixed_param",
    .summary = "keeps the initial point: the generated block per draw "
               "(CmdStan's fixed_param)",
    .hparams = NULL,
    .n_hparams = 0,
    .columns = columns,
    .n_columns = 1,
    .state_size = 1,
    .flags = DRIFT_SAMPLER_FULL_DATA | DRIFT_SAMPLER_FIXED,
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
