/* pathfinder.h: Pathfinder (Zhang, Carpenter, Gelman & Vehtari 2022) as
 * CmdStan's pathfinder method runs it: along the L-BFGS path from an
 * initial point, the Gaussian approximations whose covariance is the
 * L-BFGS inverse-Hessian estimate (a diagonal plus a low-rank term, the
 * paper's Algorithms 1-4), the one with the highest ELBO (a Monte Carlo
 * estimate) kept; several paths from independent inits pooled by Pareto-
 * smoothed importance resampling (PSIS, Vehtari et al. 2024).  On the
 * unconstrained scale, over a drift_logdensity (with the Jacobians, as
 * CmdStan).  No option parsing and no output here: the command is
 * cli/pathfinder.c, and drift sample's --init pathfinder calls it too. */
#ifndef DRIFT_PATHFINDER_H
#define DRIFT_PATHFINDER_H

#include "engine/stats/psis.h"
#include "logdensity.h"
#include "optimize.h"
#include "rng.h"

typedef struct drift_pathfinder_opts {
    drift_optimize_opts lbfgs;  /* the path: CmdStan's L-BFGS options, iter
                                   its max_lbfgs_iters (1000) */
    unsigned num_paths;         /* independent paths (4) */
    unsigned num_draws;         /* draws of each path's approximation
                                   (1000) */
    unsigned num_psis_draws;    /* draws resampled from the pooled paths
                                   (1000; unused with one path) */
    unsigned num_elbo_draws;    /* draws of each ELBO estimate (25) */
    int psis_resample;          /* pool the paths by PSIS (1) or return
                                   every path's draws (0) */
    int calculate_lp;           /* the log density at every draw (1); 0:
                                   NaN, and no resampling */
    double init_radius;         /* random inits uniform(-r, r) on the
                                   unconstrained scale (2) */
} drift_pathfinder_opts;

/* CmdStan's defaults. */
void drift_pathfinder_defaults(drift_pathfinder_opts *o);

/* How one path went. */
typedef struct drift_pathfinder_path {
    int status;                 /* DRIFT_OK, or the error that ended it */
    char message[512];          /* the error's text ("" when none) */
    unsigned iterations;        /* L-BFGS iterations */
    int converged;              /* L-BFGS met a tolerance (optimize.h) */
    const char *why;            /* how L-BFGS ended, CmdStan's words */
    unsigned best_iter;         /* the iteration whose approximation was
                                   kept (1 = the first iterate) */
    double elbo;                /* its ELBO estimate */
    unsigned n_approx;          /* iterations with an approximation */
} drift_pathfinder_path;

/* The draws.  The pool holds every successful path's num_draws draws
 * (path by path); the result's draws are pool rows idx[0..n), in order:
 * the PSIS resample, or the whole pool. */
typedef struct drift_pathfinder_result {
    size_t d;
    size_t n;                   /* draws */
    size_t *idx;                /* n: their rows of the pool */
    size_t pool_n;              /* pool rows */
    double *theta;              /* pool_n x d, unconstrained */
    double *lp;                 /* pool_n: log density (NaN: not computed) */
    double *lp_approx;          /* pool_n: the approximation's log density */
    unsigned *path;             /* pool_n: the path (0-based) of each row */
    double pareto_k;            /* PSIS's k-hat over the pool (NaN: no PSIS:
                                   one path, or no lp) */
    unsigned n_paths;
    unsigned paths_ok;          /* paths that gave draws */
    drift_pathfinder_path *paths; /* n_paths */
} drift_pathfinder_result;

void drift_pathfinder_result_free(drift_pathfinder_result *r);

/* Runs Pathfinder over ld's density on d coordinates.  init (d values,
 * unconstrained; NULL: each path draws its own, uniform(-r, r), up to 100
 * tries for a finite density) starts every path.  Draws come from rng
 * alone, so a seed fixes the result.  *out gets the result (the caller
 * frees it) when at least one path succeeded; a path that failed is said
 * in its entry.  Errors: every path failed (DRIFT_ENUMERIC for a density
 * that grows without bound or has no curvature along the path: no
 * approximation; the message is the first path's), DRIFT_ENOMEM, or an
 * error of the model. */
int drift_pathfinder_run(drift_logdensity *ld, size_t d,
                         const drift_pathfinder_opts *o, const double *init,
                         drift_rng *rng, drift_pathfinder_result **out,
                         drift_err *e);

/* The stream of a seed that --init pathfinder's run draws from (chains
 * draw from streams 1, 2, ... by id, the mode search from 0). */
#define DRIFT_PATHFINDER_STREAM 0x7066u

/* Chains' initial points, as --init pathfinder gives them: draws 0..n-1
 * (n x d, unconstrained, into *points, which the caller frees) of a
 * multi-path Pathfinder at CmdStan's defaults over m's density with its
 * Jacobians, from seed's stream DRIFT_PATHFINDER_STREAM.  Draw k depends
 * on seed and k alone (not on n), so a chain started at draw id - 1
 * depends on the seed and its id alone.  Errors as drift_pathfinder_run,
 * or a model that drift_logdensity_new refuses. */
int drift_pathfinder_inits(const drift_model *m, uint64_t seed, size_t n,
                           double **points, drift_err *e);


#endif
