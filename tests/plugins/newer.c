/* newer.c: a sampler plugin as drift's headers of a later release of the
 * same ABI version would build it, with a field appended to
 * drift_sampler and one to drift_sampler_plugin.  The loader must accept
 * it, step through its samplers at the size it declares, and ignore the
 * fields it does not know.  Its samplers are never run. */
#include <stdlib.h>

#include <drift/sampler.h>

typedef struct later_sampler {
    drift_sampler s;
    double appended;        /* a field "added" after this engine's release */
} later_sampler;

typedef struct later_plugin {
    drift_sampler_plugin p;
    const char *appended;
} later_plugin;

static int never_init(void *st, const drift_services *svc, drift_chain *c,
                      const double *hp, double *theta)
{
    (void)st; (void)svc; (void)c; (void)hp; (void)theta;
    abort();
}

static int never_step(void *st, const drift_services *svc, drift_chain *c,
                      double *theta)
{
    (void)st; (void)svc; (void)c; (void)theta;
    abort();
}

static const drift_hparam first_hp[] = {
    {"h", DRIFT_HP_REAL, 0.1, 0, 1, 0, NULL, "a step"},
};
static const drift_hparam second_hp[] = {
    {"k", DRIFT_HP_INT, 3, 1, 10, 0, NULL, "a count"},
    {"mode", DRIFT_HP_ENUM, 1, 0, 0, 0, "a|b", "a choice"},
};

static const later_sampler samplers[] = {
    {{.name = "newer-first", .summary = "first of two", .hparams = first_hp,
      .n_hparams = 1, .state_size = 8, .init = never_init,
      .step = never_step},
     1.5},
    {{.name = "newer-second", .summary = "second of two",
      .hparams = second_hp, .n_hparams = 2, .state_size = 8,
      .init = never_init, .step = never_step},
     2.5},
};

static const later_plugin plugin = {
    {DRIFT_SAMPLER_ABI_VERSION, (uint32_t)sizeof(later_plugin),
     (uint32_t)sizeof(size_t), (uint32_t)sizeof(double),
     (uint32_t)sizeof(later_sampler), 0u, 2,
     (const drift_sampler *)(const void *)samplers},
    "appended",
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin.p;
}
