/* fuzz_parser.c: libFuzzer target for the model language's front end and
 * graph builder.  Any bytes are a model: they are parsed, resolved and
 * type-checked; a model that passes is bound to placeholder data (as
 * drift check does without data), built into a graph and its log prior
 * and gradient evaluated at zero.  Nothing may crash, hang or leak.
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined), not
 * by make check; seeds in corpus/parser. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/ad.h"
#include "engine/lang/graph.h"
#include "engine/lang/langdata.h"
#include "engine/lang/lower.h"
#include "parser/front.h"
#include "parser/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The name the input is parsed under: its extension picks the front end
 * (fuzz_stan.c sets it to a .stan name). */
#ifndef FUZZ_SOURCE_NAME
#define FUZZ_SOURCE_NAME "fuzz.drift"
#endif

#ifdef FUZZ_KNOWN_INTS
/* Every int of the data is known, a small value taken from its name,
 * so that loops over data sizes are unrolled as with real data. */
static int fuzz_int(const void *self, const char *name, long *out)
{
    (void)self;
    *out = 1 + (long)((unsigned char)name[0] % 4);
    return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    drift_source *src;
    drift_err e;
    if (drift_source_new(FUZZ_SOURCE_NAME, (const char *)data, size, &src, &e))
        return 0;
    drift_diag d;
    drift_diag_init(&d, NULL);
#ifdef FUZZ_KNOWN_INTS
    drift_known_ints ki = {NULL, fuzz_int};
    drift_program *p = drift_parse_known(src, &ki, &d);
#else
    drift_program *p = drift_parse(src, &d);
#endif
    if (p && !d.n_errors && !drift_resolve(p, &d) && !drift_typecheck(p, &d)) {
        drift_langdata *ld = NULL;
        if (!drift_langdata_load(NULL, NULL, 0, &ld, &d) &&
            !drift_langdata_bind_sizes(p, ld, 1, &d) &&
            !drift_typecheck(p, &d) &&
            !drift_langdata_bind_values(p, ld, 1, &d)) {
            drift_graph *g = drift_lower_program(p, ld, &d);
            /* Evaluate only small graphs: sizes come from the input. */
            if (g && g->dim <= 4096 && g->n_nodes <= 4096) {
                drift_ad_ws *ws = drift_ad_ws_new(g, 1);
                double *theta = calloc(g->dim + 1, sizeof *theta);
                double *grad = calloc(g->dim + 1, sizeof *grad);
                double lp;
                if (ws && theta && grad)
                    drift_ad_prior(g, ws, theta, &lp, grad, &e);
                free(theta);
                free(grad);
                drift_ad_ws_free(ws);
            }
            drift_graph_free(g);
        }
        drift_langdata_free(ld);
    }
    drift_program_free(p);
    drift_source_free(src);
    return 0;
}
