/* newsvc.c: a sampler plugin that needs a services table newer than this
 * engine's (built by headers of a later release); the loader must refuse
 * it at load rather than let it call past the end of the table. */
#include <drift/sampler.h>
#define BAD_NAME "newsvc"
#define BAD_SERVICES (DRIFT_SERVICES_VERSION + 1u)
#include "badsampler.h"
