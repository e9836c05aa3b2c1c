/* fuzz_stan.c: libFuzzer target for the Stan front end: any bytes are a
 * Stan program, parsed, lowered (every int of the data known, so that
 * loops over data sizes unroll) and checked as fuzz_parser.c does for
 * the model language.  Seeds in corpus/stan. */
#define FUZZ_SOURCE_NAME "fuzz.stan"
#define FUZZ_KNOWN_INTS 1
#include "fuzz_parser.c"
