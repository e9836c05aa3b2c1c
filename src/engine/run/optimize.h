/* optimize.h: the posterior mode on the unconstrained scale by L-BFGS, as
 * CmdStan's optimize method finds it: its options by CmdStan's names and
 * defaults, its convergence tests, the density with or without the
 * constraint Jacobians (drift_logdensity's choice); or by minibatch
 * stochastic gradients (sgd, adam) when a full pass per step is too
 * dear.  Standalone: not the
 * mode search of control variates (mode.c), which works through a
 * chain's counted oracles and budget. */
#ifndef DRIFT_OPTIMIZE_H
#define DRIFT_OPTIMIZE_H

#include "logdensity.h"
#include "rng.h"

/* The most coordinates Newton's polish of a mode is tried on (it takes d
 * gradients and d^2 doubles a step). */
#define DRIFT_OPTIMIZE_POLISH_MAX_DIM 1000

typedef struct drift_optimize_opts {
    unsigned iter;          /* iterations at most (2000) */
    double tol_obj;         /* |f_k - f_k-1| below it: converged (1e-12) */
    double tol_rel_obj;     /* ... relative, in units of epsilon (1e4) */
    double tol_grad;        /* |g| below it (1e-8) */
    double tol_rel_grad;    /* g' H g / max(|f|, 1), in epsilons (1e7) */
    double tol_param;       /* |x_k - x_k-1| below it (1e-8) */
    unsigned history_size;  /* pairs kept (5) */
    double init_alpha;      /* the first line search's first step (1e-3) */
    int polish;             /* 1 (the default): once a tolerance is met,
                               Newton's steps with a finite-difference
                               Hessian until the Newton decrement is below
                               1e-10 (models of at most
                               DRIFT_OPTIMIZE_POLISH_MAX_DIM coordinates);
                               0: CmdStan's L-BFGS alone */
    int confirm;            /* 1: a relative test (objective or gradient)
                               ends the search only where the Newton
                               decrement with a finite-difference Hessian
                               is at most 1e-2 (a tenth of a posterior sd
                               from the mode); else the search goes on
                               with the relative tests off.  For paths
                               (Pathfinder) that polishing cannot mend.
                               0 (the default): CmdStan's tests */
    /* Called (when not NULL) at the start point and at every accepted
     * iterate with the point x, f = -log density there and its gradient
     * g (d values each, valid during the call): what a method built on
     * the optimiser's path (Pathfinder) sees of it.  A non-zero return
     * stops the search, which returns it (the callee sets the message). */
    int (*on_iter)(void *user, const double *x, double f, const double *g);
    void *on_iter_user;
} drift_optimize_opts;

/* CmdStan's defaults (no on_iter). */
void drift_optimize_defaults(drift_optimize_opts *o);

typedef struct drift_optimize_result {
    double lp;              /* log density at the point returned */
    unsigned iterations;
    int converged;          /* 1: a tolerance was met, or the line search
                               could make no more progress; 0: the
                               iteration limit was reached */
    const char *why;        /* which test ended it, in CmdStan's words */
    unsigned newton_steps;  /* Newton's steps after L-BFGS (polish) */
    unsigned unconfirmed;   /* relative tests met away from the mode and
                               not taken (confirm) */
    double newton_decrement;/* g'H^-1 g where it ended (NaN: not
                               computed) */
    double grad_sds;        /* minibatch methods: the final full-data
                               gradient's largest coordinate in units of
                               its sampling sd (drift_optimize_sg) */
} drift_optimize_result;

/* Maximises ld's density over its model's d coordinates from theta (its
 * value there must be finite), leaving the best point in theta.  Returns
 * DRIFT_OK (r says how it ended) or an error of the model, or
 * DRIFT_ENUMERIC when the density grows without bound (no mode: an
 * improper posterior), with a message saying so. */
int drift_optimize_lbfgs(drift_logdensity *ld, size_t d,
                         const drift_optimize_opts *o, double *theta,
                         drift_optimize_result *r, drift_err *e);

/* The minibatch optimisers: stochastic gradient ascent on the log
 * density, each step's gradient the prior's plus N/b times b rows' drawn
 * uniformly with replacement (drift_logdensity_eval_rows: only those
 * rows are read, so a memory-mapped row store is never read whole).
 *   sgd:  theta += a (b + t)^-gamma g / N: a Robbins-Monro step on the
 *         per-row average, which sums to infinity while its squares do
 *         not (1/2 < gamma <= 1);
 *   adam: Kingma and Ba's Adam (beta1 0.9, beta2 0.999, epsilon 1e-8)
 *         with the learning rate alpha / sqrt(1 + t / t0) (t0 = 100), which
 *         Adam's fixed rate lacks for a noisy gradient to settle.
 * Both return the average of the iterates of the last half of the
 * steps (Polyak-Ruppert), which takes most of the noise out of the
 * final point.  The stopping rule is the step count; then one full pass
 * computes the gradient at the point returned and compares each
 * coordinate with the sd of a sum of N per-row gradients (from up to
 * 1000 rows' spread): converged when the largest ratio, about the
 * distance to the mode in posterior sds, is below tol_grad_sds.  The
 * averaged point's own noise has sd about sqrt(N / (b T)) posterior sds
 * after T averaged steps of b rows, 1/sqrt(P) after P passes: 50 passes
 * (25 averaged) leave about 0.2, a hundred times that many 0.02. */
typedef struct drift_optimize_sg_opts {
    int adam;               /* 1: adam (the default), 0: sgd */
    size_t batch;           /* rows per step (0: drift_logdensity_batch) */
    unsigned iter;          /* steps (0: max(2000, 50 passes)) */
    double alpha;           /* adam's learning rate (0.01) */
    double a, b, gamma;     /* sgd's step a (b + t)^-gamma (1, 10, 0.6) */
    double tol_grad_sds;    /* the final check (0.5) */
    uint64_t seed;          /* the rows' draws */
} drift_optimize_sg_opts;

void drift_optimize_sg_defaults(drift_optimize_sg_opts *o);

/* The minibatch optimiser of o from theta (finite density), the point
 * returned in theta.  DRIFT_OK with r (converged: the final check
 * passed; lp the full-data log density there), DRIFT_EINVAL for an
 * option out of its bounds (naming it), DRIFT_ENUMERIC when a step leaves
 * the finite density (the step is too large: said). */
int drift_optimize_sg(drift_logdensity *ld, const drift_model *m,
                      const drift_optimize_sg_opts *o, double *theta,
                      drift_optimize_result *r, drift_err *e);

/* Rough posterior sds at a mode theta (d, into sd): 1 / the sd of a sum
 * of N per-row gradients, from up to 1000 rows drawn from seed (the
 * information identity of a well-specified model; the prior's curvature
 * left out); 1 for a coordinate the rows do not move.  What a warm start
 * of variational inference takes as its first scales. */
int drift_optimize_post_sds(const drift_model *m, const double *theta,
                            uint64_t seed, double *sd, drift_err *e);

/* A starting point with a finite density into theta (d): the constrained
 * values of the file init (JSON or CSV, as --init reads them), or, with
 * init NULL, up to 100 uniform(-2, 2) draws on the unconstrained scale
 * from seed (Stan's random inits, tried as CmdStan tries them). */
int drift_optimize_start(drift_logdensity *ld, const drift_model *m,
                         const char *init, uint64_t seed, double *theta,
                         drift_err *e);

/* A random starting point into x (d): up to 100 draws uniform(-r, r) on
 * the unconstrained scale from rng until the density is finite (Stan's
 * random inits with r = 2).  DRIFT_ENUMERIC with the last point's message
 * when none is, DRIFT_ENOMEM. */
int drift_optimize_random_start(drift_logdensity *ld, size_t d, double r,
                                drift_rng *rng, double *x, drift_err *e);

#endif
