/* fuzz_stan.c: libFuzzer target for the Stan front end: any bytes are a
 * Stan program, parsed, lowered and checked as fuzz_parser.c does for
 * the model language.  Seeds in corpus/stan. */
#define FUZZ_SOURCE_NAME "fuzz.stan"
#include "fuzz_parser.c"
