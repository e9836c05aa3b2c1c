/* mode.h: --gradient cv's run-level work (engine-internal): the posterior's
 * mode, found once per run on chain 1 before any chain's init, and what
 * the control-variate estimator keeps there (mode.c).  Not for the
 * estimator itself (oracle.c's grad_batch). */
#ifndef DRIFT_MODE_H
#define DRIFT_MODE_H

#include "chain.h"

/* Rows above which the search starts with a quarter of a data pass of
 * Adam on minibatches of 1024 rows before full-gradient L-BFGS takes the
 * point to the mode; at or below it (fewer than 25 minibatches), L-BFGS
 * from the start.  Both are preconditioned by the problem's diagonal
 * scale at the start.  On a Covertype-sized logistic regression the
 * quarter pass saves about one pass of L-BFGS (7.25 passes in all against
 * 8; doc/gradient-estimators.md has the figures). */
#define DRIFT_MODE_ADAM_ROWS 100000

/* The search stops when the squared Newton decrement g' H^-1 g (L-BFGS's
 * H) falls below this: the mode is then within about 0.03 posterior
 * standard deviations (in H's norm) of the true one. */
#define DRIFT_MODE_DECREMENT 1e-3

/* The smallest --passes budget a run with --gradient cv accepts: the
 * search's share (half, less the store's pass) must hold the pass that
 * finds the problem's scale and one L-BFGS step. */
#define DRIFT_MODE_MIN_PASSES 6.0

/* Finds the mode from start (d values) and fills c->run->cv, on chain 1
 * in the run-level setup: every evaluation is counted in c's gradients
 * (so in chain 1's grads__ and the budget) and a stop request or a budget
 * spent ends it.  The search with its store takes at most half of a
 * --passes or --seconds budget (then it keeps the best point and says
 * so).  Returns DRIFT_OK, or a failure recorded on c. */
int drift_mode_setup(drift_chain *c, const double *start);

/* Moves the run's centre (cv->mode) to x, a point nearer the posterior's
 * bulk than the mode (a hierarchical model's joint mode can lie far from
 * it): the store pass and the metric are made again there, and cv->U
 * becomes U(x) (the watch's reference); cv->recentred counts the moves.
 * Chain 1, before the chains start.  DRIFT_OK, or the chain failed. */
int drift_mode_recentre(drift_chain *c, const double *x);

/* Frees what drift_mode_setup kept (cv may be zeroed or filled). */
void drift_mode_release(drift_cv *cv);

/* A draw of the diagonal Laplace approximation at the mode into theta:
 * theta-hat + sqrt(inv_metric) z, z ~ N(0, I) from rng. */
void drift_mode_draw(const drift_cv *cv, drift_rng *rng, double *theta);

#endif
