/* plancheck.h: after a minibatch run centred at a mode, the kept draws'
 * spread against the posterior's Gaussian (Laplace) approximation there.
 * At the row counts minibatch samplers are for, a posterior is close to
 * that Gaussian (Bernstein-von Mises), while the samplers' biases (a step
 * too large, a subsampling scheme's own bias, a budget too short) show as
 * draws spread too wide or too narrow; the pilots that choose a step
 * compare steps with each other and cannot see a bias that does not
 * shrink with the step.  So each coordinate's variance over the kept
 * draws is compared with the marginal variance of the Laplace
 * approximation, (H^-1)_jj, H the Hessian of U at the centre (not the
 * empirical Fisher matrix, which an over-dispersed model's data make
 * larger than H), and a coordinate off by more than
 * the tolerance below beyond its Monte Carlo error (batch means) is one
 * warning naming it.  Engine-internal. */
#ifndef DRIFT_PLANCHECK_H
#define DRIFT_PLANCHECK_H

#include "chain.h"

/* Tolerance on sd ratios before the Monte Carlo error is added:
 * DRIFT_PLANCHECK_TOL + DRIFT_PLANCHECK_TOL_ROWS sqrt(d / N), the second
 * term for the Laplace approximation's own error at few rows per
 * parameter. */
#define DRIFT_PLANCHECK_TOL 0.05
#define DRIFT_PLANCHECK_TOL_ROWS 0.5
/* Batches per chain for the Monte Carlo error of the variances. */
#define DRIFT_PLANCHECK_BATCHES 5
/* Largest d checked (the Hessian is d x d, by d + 1 row-subsample
 * gradients). */
#define DRIFT_PLANCHECK_MAX_DIM 256

/* On chain 1 in the run-level setup, once the centre is final: H at
 * run->cv.mode by forward differences of gradients over a fixed
 * subsample of the rows (every k-th row, at most 5 data passes and
 * 2 x 10^6 row evaluations in all), and its inverse's diagonal into run->check_var.  Leaves
 * check_var NULL when the run has no centre, d is too large, H is not
 * positive definite, or a --seconds budget, or a --passes budget that
 * the check would take more than half of, bounds the run.  Returns DRIFT_OK, or a chain failure (a stop
 * request during it is DRIFT_ESTOP). */
int drift_plancheck_setup(drift_chain *c);

/* A kept (post-warmup) draw of chain c, unconstrained. */
void drift_plancheck_add(drift_chain *c, const double *theta);

/* After every chain: the warning, into buf ("" when none), for the K
 * chains that ran.  Frees what setup and add kept. */
void drift_plancheck_report(drift_run_shared *run, const drift_run_config *cfg,
                            unsigned K, char *buf, size_t cap);

#endif
