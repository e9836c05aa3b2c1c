/* emit.h: samplers' draws and trajectory segments into the chain's rows
 * (engine-internal; the services table points at these). */
#ifndef DRIFT_EMIT_H
#define DRIFT_EMIT_H

#include "chain.h"

int drift_emit_draw(drift_chain *c, const double *theta, double lp,
                    const double *diag);
int drift_emit_segment(drift_chain *c, const double *x0, const double *v,
                       double duration, double lp, const double *diag);

#endif
