/* oracle.h: the services table samplers are given (oracle.c: the
 * gradient oracles, minibatch streams, random numbers, memory; it points
 * at poisson.c's and emit.c's services too). */
#ifndef DRIFT_ORACLE_H
#define DRIFT_ORACLE_H

#include "chain.h"

/* Frees what full passes on several threads keep per chain. */
void drift_oracle_release(drift_chain *c);

/* The chain's estimator's part of its checkpoint (svrg: the snapshot;
 * saga, tmu: the table), saved or restored after the preconditioner's;
 * nothing under plain and cv. */
int drift_oracle_estimator_ckpt(drift_chain *c);

/* For the engine's mode search (mode.c): the GLM scalars s_i and terms
 * l_i = log p(row_i | theta) of rows[n] at theta, with the model's sign
 * (grad l_i = s_i x_i); counted n, and checked against the budget of setup
 * as every oracle is.  The model must be in generalised linear form. */
int drift_oracle_glm_at(drift_chain *c, const double *theta,
                        const size_t *rows, size_t n, double *s, double *l);

/* The services table given to samplers (declared in services.h). */
#include "services.h"

#endif
