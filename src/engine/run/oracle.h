/* oracle.h: the services table samplers are given (oracle.c: the
 * gradient oracles, minibatch streams, random numbers, memory; it points
 * at poisson.c's and emit.c's services too). */
#ifndef DRIFT_ORACLE_H
#define DRIFT_ORACLE_H

#include "chain.h"

/* Frees what full passes on several threads keep per chain. */
void drift_oracle_release(drift_chain *c);

/* The services table given to samplers. */
extern const drift_services drift_services_table;

#endif
