/* logdensity.h: the posterior's log density at given points over all the
 * data, with or without the constraint transforms' log-Jacobians, and its
 * gradient on the unconstrained scale: what the methods that evaluate a
 * model at points (log_prob, optimization, generated quantities over
 * draws) share.  Not for samplers, which see the model through the
 * oracles (oracle.c), nor for counting gradients. */
#ifndef DRIFT_LOGDENSITY_H
#define DRIFT_LOGDENSITY_H

#include <drift/model.h>

typedef struct drift_logdensity drift_logdensity;

/* An evaluator of m (borrowed: it must outlive the evaluator).  With
 * jacobian 0 the density is that of the constrained values, log_prior
 * less the model's log_jacobian; a model without log_jacobian whose
 * parameters are not all unconstrained is then refused, with a message
 * saying so (after `who` and a colon, when who is not NULL) and what to
 * give instead. */
int drift_logdensity_new(drift_logdensity **out, const drift_model *m,
                         int jacobian, const char *who, drift_err *e);
void drift_logdensity_free(drift_logdensity *ld);

/* log p(theta | data) into *lp (the prior plus every row; constants
 * included) and, when grad != NULL, its gradient in theta (d).  A point
 * where the density is not finite returns the model's error. */
int drift_logdensity_eval(drift_logdensity *ld, const double *theta,
                          double *lp, double *grad, drift_err *e);

/* An estimate over some rows: log p(theta) plus scale times the sum of
 * the terms of rows[0..n) (indices into the model's rows, repeats
 * allowed) into *lp and, when grad != NULL, its gradient.  With scale
 * N/n and rows drawn uniformly, an unbiased estimate of
 * drift_logdensity_eval's value and gradient: what the minibatch methods
 * (stochastic optimisation, variational inference) use.  Only the rows
 * named are read, so a memory-mapped row store is touched no further. */
int drift_logdensity_eval_rows(drift_logdensity *ld, const double *theta,
                               const size_t *rows, size_t n, double scale,
                               double *lp, double *grad, drift_err *e);

/* The rows per minibatch step when the user names none: all N when N <=
 * 10^4, else max(1000, N / 1000) (a thousandth of the data per step, so
 * that 10,000 steps make about ten passes, but never fewer than 1000
 * rows, whose sum's noise is then small beside a step's own). */
size_t drift_logdensity_batch(size_t n_rows);

/* The workspace the evaluator holds (one of m's), for other calls of the
 * model at the same points (generate). */
void *drift_logdensity_ws(const drift_logdensity *ld);

/* Whether m's constraint transforms are the identity: no log_jacobian
 * needed (n_out == dim and constrain() copies at probe points). */
int drift_logdensity_unconstrained(const drift_model *m);

/* The precision at x: minus the Hessian of the log density (d x d,
 * row-major, into P), column j from the gradients at x +- h_j e_j,
 * h_j = 1e-5 max(1, |x_j|) (central differences: error of order h^2 in
 * the curvature), then symmetrised.  work: 3 d doubles.  The model's
 * error where the density is not finite next to x. */
int drift_logdensity_precision(drift_logdensity *ld, size_t d,
                               const double *x, double *P, double *work,
                               drift_err *e);

#endif
