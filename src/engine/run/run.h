/* run.h: running the chains of a configured run (engine-internal): set-up,
 * the step loop under a budget, stopping on request, and each chain's
 * result.  Not for the services samplers call (oracle.h). */
#ifndef DRIFT_RUN_H
#define DRIFT_RUN_H

#include "chain.h"

/* The minibatch size when neither --batch nor the sampler gives one; the
 * engine's plan runs minibatches of at least this many rows. */
#define DRIFT_DEFAULT_BATCH 32

/* Runs the configured chains (in parallel threads when K > 1) and fills
 * results[K].  Returns DRIFT_OK when every chain succeeded, else the first
 * failing chain's status (messages are in results). */
int drift_run(const drift_run_config *cfg, drift_chain_result *results,
              drift_err *e);

/* Every refusal drift_run makes of a configuration (bounds, features that
 * cannot be combined, what the machine cannot hold), made without opening
 * or starting anything: DRIFT_OK, or the error with its message. */
int drift_run_check(const drift_run_config *cfg, drift_err *e);

/* Requests every running chain to stop after its current step (signal
 * handlers call this; async-signal-safe). */
void drift_run_request_stop(void);

/* Sets up chain id of cfg (streams, workspaces, sampler state, initial
 * point into theta[d]) without running it; drift_run_chain_release undoes
 * it, also after a failed setup.  drift_run uses these; tests call the
 * services on a chain made this way. */
int drift_run_chain_setup(drift_chain *c, const drift_run_config *cfg,
                          unsigned id, double *theta);
void drift_run_chain_release(drift_chain *c);

/* Draws (or sets) the initial point of a set-up chain as cfg->init.mode
 * says, from the chain's stream: each call draws a fresh random point, so
 * the runner calls it again where the density is not finite. */
int drift_run_chain_setup_init(drift_chain *c, double *theta);

/* Stan's initialisation on a set-up chain: a random initial point theta
 * (d values) is drawn again, up to 100 times in all, while the log
 * density or its gradient is not finite there; given values are left to
 * the sampler.  0, or the chain's failure status (recorded on it).  The
 * chains and the run-level setup's pilot chains (runplan.c) start so. */
int drift_run_chain_find_init(drift_chain *c, double *theta);

#endif
