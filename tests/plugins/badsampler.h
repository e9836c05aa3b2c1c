/* badsampler.h: the body shared by the loader's refusal test plugins.
 * Each including file defines what is wrong with its descriptor.  The
 * sampler functions abort: the loader must refuse these plugins without
 * ever calling them. */
#include <math.h>
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

#ifndef BAD_ABI
#define BAD_ABI DRIFT_SAMPLER_ABI_VERSION
#endif
#ifndef BAD_NAME
#define BAD_NAME "bad"
#endif
#ifndef BAD_HPARAMS
#define BAD_HPARAMS {"h", DRIFT_HP_REAL, 0.1, 0, 1, 0, NULL, "step"}
#endif
#ifndef BAD_COLUMNS
#define BAD_COLUMNS "ok__"
#endif

#ifndef BAD_SAMPLER_SIZE
#define BAD_SAMPLER_SIZE (uint32_t)sizeof(drift_sampler)
#endif

static const drift_hparam hparams[] = {BAD_HPARAMS};
static const char *const columns[] = {BAD_COLUMNS};

static const drift_sampler samplers[] = {{
    .name = BAD_NAME,
    .summary = "a sampler the loader must refuse",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .columns = columns,
    .n_columns = sizeof columns / sizeof columns[0],
    .state_size = 8,
    .init = never_init,
    .step = never_step,
}};

static const drift_sampler_plugin plugin = {
    BAD_ABI, (uint32_t)sizeof(drift_sampler_plugin), (uint32_t)sizeof(size_t),
    (uint32_t)sizeof(double), BAD_SAMPLER_SIZE, 0u,
    1, samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
