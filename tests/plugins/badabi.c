/* badabi.c: a sampler plugin claiming ABI version 999 (from the future). */
#define BAD_ABI 999u
#define BAD_NAME "badabi"
#include "badsampler.h"
