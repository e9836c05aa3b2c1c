/* watch.h: the engine watching a minibatch chain as it runs
 * (engine-internal): lp__ running away below the range it
 * had in a reference window, lp__ far below the mode's under --gradient
 * cv, parameters that stopped moving.  Each is one warning naming the
 * chain, the iteration and a parameter; the chain goes on.  Values that
 * are not finite fail the chain (emit.c, oracle.c), with the iteration
 * the runaway began when this watch saw one.  Not for the checks after a
 * run (stats/checks.c). */
#ifndef DRIFT_WATCH_H
#define DRIFT_WATCH_H

#include "chain.h"

/* The reference window: the second half of warmup when warmup has at
 * least DRIFT_WATCH_MIN_WARMUP iterations, else iterations 50 to 149. */
#define DRIFT_WATCH_MIN_WARMUP 20
/* Runaway: this many draws in a row with lp__ below the reference's
 * minimum by more than twice its range (plus 10). */
#define DRIFT_WATCH_RUNAWAY_DRAWS 10
/* Stagnation: a parameter whose range over a block of this many
 * iterations is below DRIFT_WATCH_STUCK_FRACTION of its standard
 * deviation in the reference window. */
#define DRIFT_WATCH_BLOCK 200
#define DRIFT_WATCH_STUCK_FRACTION 1e-3

/* Makes c->ext.watch for a chain of a minibatch sampler (neither full-data
 * nor continuous) with parameters; leaves it NULL otherwise.  Returns
 * DRIFT_OK or DRIFT_ENOMEM (recorded). */
int drift_watch_new(drift_chain *c);
void drift_watch_free(drift_chain *c);

/* Moves the reference window to c->cfg's warmup, after the run's setup
 * planned a burn-in (before the first step). */
void drift_watch_replan(drift_chain *c);

/* Every draw the sampler emits (before warmup and thinning drop any):
 * theta (unconstrained) and lp (NaN: none) at iteration c->iter. */
void drift_watch_draw(drift_chain *c, const double *theta, double lp);

/* "; lp__ had been running away since iteration K" when this chain's
 * watch saw that, else "" (for failure messages). */
const char *drift_watch_note(const drift_chain *c);

/* The watch's state into or out of a checkpoint (ckpt_bytes blocks);
 * nothing without a watch. */
int drift_watch_ckpt(drift_chain *c);

#endif
