/* services.h: the services table samplers are given (defined in oracle.c),
 * for the engine's own modules that call services (the preconditioner,
 * the checks after a run) without depending on the oracles' internals. */
#ifndef DRIFT_SERVICES_H
#define DRIFT_SERVICES_H

#include <drift/sampler.h>

extern const drift_services drift_services_table;

#endif
