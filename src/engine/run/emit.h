/* emit.h: samplers' draws and trajectory segments into the chain's rows
 * (engine-internal; the services table points at these). */
#ifndef DRIFT_EMIT_H
#define DRIFT_EMIT_H

#include "chain.h"

/* lp__'s estimate at theta when a sampler has none (emit.c): block != 0
 * takes its rows as a block of consecutive rows from a uniform start, as
 * the engine does for a store larger than memory, else uniformly with
 * replacement; for one process's chain (not across ranks). */
double drift_emit_lp_estimate(drift_chain *c, const double *theta, int block);

/* The most draws one segment of a continuous trajectory may give on
 * --thin's time grid; a smaller time step fails the chain (emit.c). */
#define DRIFT_EMIT_MAX_SEGMENT_DRAWS 1e6

/* The smallest --thin (time step) a continuous sampler takes, checked
 * before a run starts: the samplers move at about unit speed (one
 * posterior sd per unit of time where a metric scales them), so draws
 * closer together are all but the same draw, and only a segment 100
 * units long reaches DRIFT_EMIT_MAX_SEGMENT_DRAWS at this step. */
#define DRIFT_EMIT_MIN_TIME_STEP 1e-4

int drift_emit_draw(drift_chain *c, const double *theta, double lp,
                    const double *diag);
int drift_emit_segment(drift_chain *c, const double *x0, const double *v,
                       double duration, double lp, const double *diag);

#endif
