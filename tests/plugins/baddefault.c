/* baddefault.c: a default outside its bounds. */
#define BAD_NAME "baddefault"
#define BAD_HPARAMS {"h", DRIFT_HP_REAL, 5.0, 0, 1, 0, NULL, "step"}
#include "badsampler.h"
