/* biascheck.h: the engine's plan for a minibatch sampler run at its defaults:
 * the step size chosen by a discretisation-bias check, and the burn-in,
 * iterations and thinning sized to a target effective sample size.
 *
 * The step-size search runs pilot chains (made by the runner through
 * drift_tune_ops, as the KSD search of tune.h does), all from the same
 * initial point near the mode, and compares the draws of a pilot at step
 * h with those of a pilot at h/2 in whitened coordinates (the mode's
 * curvature: L^-1 (x - mode) with a dense factor, (x - mode) / scale with
 * a diagonal one).  For an integrator whose bias is of first order in h,
 * what moves between h and h/2 is the bias left at h/2: the run takes h/2
 * when the pilots' mean whitened variances agree within BIASCHECK_VAR_TOL plus
 * their standard error, and their whitened means within
 * BIASCHECK_MEAN_TOL plus twice theirs; otherwise h halves and the check
 * repeats.  The pilots grow until each holds BIASCHECK_PILOT_ESS effective
 * draws per coordinate, so the check's precision does not depend on the
 * run's budget (a longer run never makes the choice worse), and the
 * integrated autocorrelation time of the chosen pilot sizes the run.
 * Where no pair passes within the pilots' allowance the smallest step
 * tried is taken and the result says so (the runner warns).
 *
 * Agreement between h and h/2 cannot see a bias that stays flat over the
 * steps compared (a non-uniform subsampling whose effect saturates, say),
 * so the pilot at h/2 must also keep the Stein identity: the Stein ratio
 * of a few of its draws (tune.h; exact or control-variate scores), which
 * is 1 for draws of the target whatever its shape and, for a Gaussian
 * one, the draws' variance over the target's, within BIASCHECK_STEIN_TOL
 * plus its standard error.
 *
 * Any integrator works: the search needs only its step and a step-size
 * hyperparameter.  Not for running the chains (run.c) nor for the KSD
 * search (tune.c). */
#ifndef DRIFT_BIASCHECK_H
#define DRIFT_BIASCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "chain.h"
#include "tune.h"

/* Allowed relative difference of the pilots' mean whitened variances
 * (about half of it in standard deviations). */
#define BIASCHECK_VAR_TOL 0.05
/* Allowed difference of the pilots' whitened means (posterior sds). */
#define BIASCHECK_MEAN_TOL 0.05
/* Allowed distance of the Stein ratio from 1. */
#define BIASCHECK_STEIN_TOL 0.1
/* Effective draws per coordinate each compared pilot must hold. */
#define BIASCHECK_PILOT_ESS 150.0
/* Effective draws per chain the run is sized for. */
#define BIASCHECK_ESS 400.0
/* Draws kept per chain, about, when the plan chooses the thinning. */
#define BIASCHECK_KEEP 1000

/* What the search may spend and how it measures. */
typedef struct drift_biascheck_config {
    const drift_sampler *sampler;
    size_t d;
    double h0;                  /* where the stability scan starts */
    double lo, hi;              /* the hyperparameter's bounds */
    const double *mode;         /* the centre of the whitened units (d;
                                   NULL: 0) */
    const double *chol;         /* lower factor of the covariance (d x d;
                                   NULL: scale) */
    const double *scale;        /* per-coordinate sds (d; NULL: 1) */
    uint64_t max_steps;         /* steps all pilots together may take */
    uint64_t min_steps;         /* first length of a compared pilot */
    /* The Stein check of a compared pilot: stein_draws of its draws,
     * evenly spaced after its burn-in, handed to stein on the pilot's
     * chain before it closes; *ratio their Stein ratio (tune.h), *se its
     * standard error.  NULL: no Stein check. */
    size_t stein_draws;
    int (*stein)(void *user, drift_chain *c, const double *x,
                 double *ratio, double *se);
    void *stein_user;
    /* A continuous sampler's pilots: before each, the runner is asked to
     * hand the trajectory's points every dt time units to fn(fn_user,
     * theta) (dt 0: none), and those points, not the segments' ends
     * (bounce points lie in the tails), are measured; tau is then in
     * time units.  NULL for a discrete sampler. */
    void (*points)(void *user, void (*fn)(void *, const double *),
                   void *fn_user, double dt);
    /* Wall seconds after which no further compared pilot starts (0: no
     * limit): a --seconds budget's share. */
    double seconds;
    /* The centring before the step search (NULL: none, the centre stays
     * the mode): recentre(recentre_user, x) moves the run's centre (the
     * control variates' point, the metric's curvature, the pilots' and
     * chains' starting draws) to x, and must write the new metric's sds
     * and lower factor where scale and chol above point, so that later
     * pilots' whitened units are the new centre's.  Non-zero: a failure
     * that ends the search. */
    int (*recentre)(void *user, const double *x);
    void *recentre_user;
} drift_biascheck_config;

/* One compared pilot. */
typedef struct drift_biascheck_pilot {
    double h;
    uint64_t steps;
    int unstable;               /* diverged or ran far from the mode */
    double vbar;                /* mean over coordinates of the whitened
                                   variance */
    double vbar_se;             /* its relative standard error */
    double tau;                 /* the largest integrated autocorrelation
                                   time over the tracked coordinates */
    double stein, stein_se;     /* its Stein ratio and standard error
                                   (NaN: not checked) */
} drift_biascheck_pilot;

typedef struct drift_biascheck_result {
    double h;                   /* the step the run takes */
    double tau;                 /* integrated autocorrelation time there
                                   (steps; NaN: not measured) */
    int verified;               /* a pair of pilots agreed */
    double var_ratio;           /* of the deciding pair: vbar(2h)/vbar(h) */
    double var_se;              /* its standard error */
    double mean_shift;          /* whitened mean difference, noise removed */
    double stein, stein_se;     /* the chosen pilot's Stein ratio */
    double h_stable;            /* the largest stable step the scan found */
    double tau_seen, h_seen;    /* the last compared pilot's
                                   autocorrelation time (steps) and step
                                   (tau_seen NaN: none finished) */
    int recentred;              /* moves of the centre */
    int centred;                /* a centring window fit the centre (0:
                                   none did within its allowance) */
    size_t n_pilots;
    uint64_t steps;             /* steps all pilots took */
    char trail[800];            /* "h:ratio,..." of the compared pairs */
} drift_biascheck_result;

/* Runs the search; out gets the choice.  Returns DRIFT_OK, DRIFT_ESTOP on a
 * stop request, or a pilot's failure that is no instability (e gets the
 * message). */
int drift_biascheck_step_search(const drift_biascheck_config *cfg,
                           const drift_tune_ops *ops, drift_biascheck_result *out,
                           drift_err *e);

/* One pilot at h (for a sampler without a step size, h is not read),
 * lengthened within cfg->max_steps until it holds BIASCHECK_PILOT_ESS
 * effective draws per coordinate (*enough 1 when it did): its measures
 * into *pilot (unstable set when it diverged), its trajectory time (a
 * continuous sampler's; NaN when unstable) into *t_traj, and out's tau
 * and Stein ratio.  Returns as drift_biascheck_step_search. */
int drift_biascheck_measure(const drift_biascheck_config *cfg,
                            const drift_tune_ops *ops, double h,
                            drift_biascheck_result *out,
                            drift_biascheck_pilot *pilot,
                            double *t_traj, int *enough, drift_err *e);

/* The check of a step size h the user gave: pilots at h and h/2, each
 * grown within cfg->max_steps to BIASCHECK_PILOT_ESS effective draws,
 * compared as the search compares a pair, with the Stein ratio of h's
 * draws.  *checked 0 when the allowance ran out first (nothing can be
 * said); else *ok 1 when they agree (out holds the measures; h_stable 0
 * when h itself diverged).  Returns as drift_biascheck_step_search. */
int drift_biascheck_compare(const drift_biascheck_config *cfg,
                            const drift_tune_ops *ops, double h,
                            drift_biascheck_result *out, int *checked,
                            int *ok, drift_err *e);

#endif
