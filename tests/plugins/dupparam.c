/* dupparam.c: a hyperparameter table naming 'h' twice. */
#define BAD_NAME "dupparam"
#define BAD_HPARAMS {"h", DRIFT_HP_REAL, 0.1, 0, 1, 0, NULL, "step"}, \
                    {"h", DRIFT_HP_REAL, 0.2, 0, 1, 0, NULL, "again"}
#include "badsampler.h"
