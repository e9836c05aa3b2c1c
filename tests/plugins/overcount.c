/* overcount.c: a sampler plugin whose counts run past its tables (50
 * hyperparameters declared for a table of one, 9 columns for one), as in
 * a crash report from outside: its mere presence on the search path made
 * every plugin scan die with SIGSEGV.  The loader must refuse it with a
 * message and never call it. */
#include <stdlib.h>

#include <drift/sampler.h>

static int never_init(void *s, const drift_services *svc, drift_chain *c,
                      const double *hp, double *theta)
{
    (void)s; (void)svc; (void)c; (void)hp; (void)theta;
    abort();
}

static int never_step(void *s, const drift_services *svc, drift_chain *c,
                      double *theta)
{
    (void)s; (void)svc; (void)c; (void)theta;
    abort();
}

static const drift_hparam one[] = {
    {"h", DRIFT_HP_REAL, 0.1, 0, 1, 0, NULL, "step"}};

static const drift_sampler samplers[] = {{
    .name = "overcount",
    .summary = "declares 50 hyperparameters for a table of one",
    .hparams = one,
    .n_hparams = 50,
    .state_size = 8,
    .init = never_init,
    .step = never_step,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_ABI_VERSION, (uint32_t)sizeof(drift_sampler_plugin),
    (uint32_t)sizeof(size_t), (uint32_t)sizeof(double),
    (uint32_t)sizeof(drift_sampler), 0u, 1, samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
