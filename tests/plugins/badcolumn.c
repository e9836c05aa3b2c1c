/* badcolumn.c: a diagnostic column not ending in "__". */
#define BAD_NAME "badcolumn"
#define BAD_COLUMNS "accept"
#include "badsampler.h"
