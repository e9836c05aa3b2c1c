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
#ifndef BAD_SERVICES
#define BAD_SERVICES DRIFT_SERVICES_VERSION
#endif
/* Counts that may lie about their tables. */
#ifndef BAD_N_HPARAMS
#define BAD_N_HPARAMS sizeof hparams / sizeof hparams[0]
#endif
#ifndef BAD_N_COLUMNS
#define BAD_N_COLUMNS sizeof columns / sizeof columns[0]
#endif
#ifndef BAD_N_SAMPLERS
#define BAD_N_SAMPLERS 1
#endif

static const drift_hparam hparams[] = {BAD_HPARAMS};
static const char *const columns[] = {BAD_COLUMNS};

static const drift_sampler samplers[] = {{
    .name = BAD_NAME,
    .summary = "a sampler the loader must refuse",
    .hparams = hparams,
    .n_hparams = BAD_N_HPARAMS,
    .columns = columns,
    .n_columns = BAD_N_COLUMNS,
    .state_size = 8,
    .init = never_init,
    .step = never_step,
}};

static const drift_sampler_plugin plugin = {
    BAD_ABI, (uint32_t)sizeof(drift_sampler_plugin), (uint32_t)sizeof(size_t),
    (uint32_t)sizeof(double), BAD_SAMPLER_SIZE, BAD_SERVICES,
    BAD_N_SAMPLERS, samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
