/* oracle.h: engine-internal entry points shared between the services
 * table (oracle.c), Poisson events (poisson.c) and output (output.c). */
#ifndef DRIFT_ORACLE_H
#define DRIFT_ORACLE_H

#include "chain.h"

/* Frees what full passes on several threads keep per chain. */
void drift_oracle_release(drift_chain *c);

/* Output name of unconstrained coordinate k, for messages. */
void drift_param_name(const drift_chain *c, size_t k, char *buf, size_t cap);

/* Poisson services (poisson.c). */
double drift_poisson_linear_svc(drift_chain *c, double a, double b);
double drift_poisson_bound_svc(drift_chain *c, const drift_rate_bound *bound,
                               double t0);
int drift_thin_svc(drift_chain *c, const drift_rate_bound *bound,
                   drift_rate_fn rate, void *user, double *t_event,
                   double *rate_at, drift_thin_stats *stats);

/* Emission (output.c). */
int drift_emit_draw(drift_chain *c, const double *theta, double lp,
                    const double *diag);
int drift_emit_segment(drift_chain *c, const double *x0, const double *v,
                       double duration, double lp, const double *diag);

#endif
