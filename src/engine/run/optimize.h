/* optimize.h: the posterior mode on the unconstrained scale by L-BFGS, as
 * CmdStan's optimize method finds it: its options by CmdStan's names and
 * defaults, its convergence tests, the density with or without the
 * constraint Jacobians (drift_logdensity's choice).  Standalone: not the
 * mode search of control variates (mode.c), which works through a
 * chain's counted oracles and budget. */
#ifndef DRIFT_OPTIMIZE_H
#define DRIFT_OPTIMIZE_H

#include "logdensity.h"

typedef struct drift_optimize_opts {
    unsigned iter;          /* iterations at most (2000) */
    double tol_obj;         /* |f_k - f_k-1| below it: converged (1e-12) */
    double tol_rel_obj;     /* ... relative, in units of epsilon (1e4) */
    double tol_grad;        /* |g| below it (1e-8) */
    double tol_rel_grad;    /* g' H g / max(|f|, 1), in epsilons (1e7) */
    double tol_param;       /* |x_k - x_k-1| below it (1e-8) */
    unsigned history_size;  /* pairs kept (5) */
    double init_alpha;      /* the first line search's first step (1e-3) */
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
} drift_optimize_result;

/* Maximises ld's density over its model's d coordinates from theta (its
 * value there must be finite), leaving the best point in theta.  Returns
 * DRIFT_OK (r says how it ended) or an error of the model, or
 * DRIFT_ENUMERIC when the density grows without bound (no mode: an
 * improper posterior), with a message saying so. */
int drift_optimize_lbfgs(drift_logdensity *ld, size_t d,
                         const drift_optimize_opts *o, double *theta,
                         drift_optimize_result *r, drift_err *e);

/* A starting point with a finite density into theta (d): the constrained
 * values of the file init (JSON or CSV, as --init reads them), or, with
 * init NULL, up to 100 uniform(-2, 2) draws on the unconstrained scale
 * from seed (Stan's random inits, tried as CmdStan tries them). */
int drift_optimize_start(drift_logdensity *ld, const drift_model *m,
                         const char *init, uint64_t seed, double *theta,
                         drift_err *e);

#endif
