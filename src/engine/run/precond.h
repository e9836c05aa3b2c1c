/* precond.h: the preconditioner P of minibatch integrators, owned by the
 * engine and handed to samplers as the DRIFT_TABLE_PRECOND sub-table
 * (drift/sampler.h says what P is and how WARMUP's windows move it). */
#ifndef DRIFT_PRECOND_H
#define DRIFT_PRECOND_H

#include "chain.h"

/* The sub-table samplers get. */
extern const drift_precond_services drift_precond_table;

/* At a slow window's end, after the engine set the metric from it and
 * before the sampler hears phase(WINDOW_END): WARMUP's update of P. */
void drift_precond_window_end(drift_chain *c);

/* The chain's P in a checkpoint (after the sampler's part): P, the
 * window's squared gradients and their count for MODE and WARMUP,
 * nothing otherwise. */
int drift_precond_ckpt(drift_chain *c);

#endif
