/* prevabi.c: a sampler plugin built against the previous ABI version. */
#include <drift/sampler.h>
#define BAD_ABI (DRIFT_SAMPLER_ABI_VERSION - 1u)
#define BAD_NAME "prevabi"
#include "badsampler.h"
