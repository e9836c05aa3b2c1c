/* shortdesc.c: a descriptor claiming drift_sampler entries smaller than
 * ABI version 1 defined them; the loader must refuse it unread. */
#include <drift/sampler.h>
#define BAD_NAME "shortdesc"
#define BAD_SAMPLER_SIZE 16u
#include "badsampler.h"
