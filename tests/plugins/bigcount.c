/* bigcount.c: a descriptor whose n_hparams is absurd (2^40 for a table of
 * one); the loader must refuse the count before reading the table. */
#include <drift/sampler.h>
#define BAD_NAME "bigcount"
#define BAD_N_HPARAMS ((size_t)1 << 40)
#include "badsampler.h"
