/* sgld_shadow.c: a second sampler named 'sgld', for the precedence rule:
 * the install directory (here DRIFT_PLUGIN_DIR) wins over
 * DRIFT_PLUGIN_PATH, with a warning naming both files. */
#define BAD_NAME "sgld"
#include "../badsampler.h"
