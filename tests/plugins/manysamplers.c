/* manysamplers.c: a descriptor claiming a million samplers for a table of
 * one; the loader must refuse the count before reading the table. */
#include <drift/sampler.h>
#define BAD_NAME "manysamplers"
#define BAD_N_SAMPLERS 1000000
#include "badsampler.h"
