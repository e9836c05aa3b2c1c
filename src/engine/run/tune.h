/* tune.h: choosing a sampler's step size for the user (the
 * hyperparameter flagged DRIFT_HP_STEP_SIZE, set to "auto" or not set).
 * Short pilot chains, all from one initial point with the same random
 * numbers, run at trial step sizes on a grid of factors of sqrt(10): from
 * the sampler's default, up by factors of 10 while the pilots improve,
 * down likewise, then the two half-decades around the best.  Each pilot
 * is scored by the kernel Stein discrepancy (stats/ksd.h) of draws taken
 * evenly from its second half, which sees both a step too small to reach
 * the posterior in the pilot's length and the bias of a step too large;
 * a pilot that diverges scores +inf, as does one that runs away (its
 * draws' mean potential U far above its starting point's).  The smallest
 * KSD wins (Coullon, South and Nemeth 2023 choose SG-MCMC step sizes the
 * same way), with one refinement: the pilots within 10% of it tie (their
 * KSDs, of a few draws, cannot tell the biases of steps that close
 * apart, seen on posteriors where a 17% wide sd moved the KSD 5%), and of
 * those the largest step whose draws keep the Stein identity E_p |S
 * grad log p|^2 = E_p tr(S grad^2 U S) (to STEIN_TOL plus three standard
 * errors; draws spread too wide break it) wins, as the one that mixes
 * fastest; when none keeps it, the smallest of the tie.
 *
 * Scores (gradients of the log density) at the pilots' draws are exact,
 * one full-data gradient each, where that costs at most twice a
 * minibatch estimate; otherwise they are control-variate estimates,
 * grad log p(x_ref) + (N/n) sum_{i in B} (grad l_i(x) - grad l_i(x_ref))
 * over n fresh random rows, around the pilot's own mean x_ref (one
 * full-data gradient per pilot), so that their noise scales with the
 * pilot's spread, and half-sample differences estimate each score's
 * noise, whose mean square the V-statistic's diagonal then loses: an
 * unbiased estimate of the V-statistic with exact scores (the
 * U-statistic would be unbiased too, but it leaves out the diagonal,
 * |s(x)|^2 + d, which is what condemns a pilot whose few draws lie far
 * apart and far out).
 *
 * This file holds the search and the scoring; the runner (runplan.c) makes
 * the pilot chains, through ops.  Not for the chains' own run. */
#ifndef DRIFT_TUNE_H
#define DRIFT_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "chain.h"

#define DRIFT_TUNE_MAX_TRIALS 16

/* How the runner makes pilot chains. */
typedef struct drift_tune_ops {
    void *user;
    /* A fresh chain whose sampler was initialised (init, after its setup
     * if it has one) with step size h; *theta its point (d values).  The
     * same initial point and random streams for every h.  Returns
     * DRIFT_OK, or a status with the chain's message in *c's message (c
     * is then still closed with close). */
    int (*open)(void *user, double h, drift_chain **c, double **theta);
    /* Ends the chain open gave, adding what it spent to the pilot's
     * count. */
    void (*close)(void *user, drift_chain *c);
    /* Called before each call into the sampler (init is open's): the
     * runner marks it for --step-timeout's watch (may be NULL). */
    void (*calling)(void *user);
} drift_tune_ops;

/* What the search may spend and how it scores. */
typedef struct drift_tune_config {
    const drift_sampler *sampler;
    size_t param;               /* index of the step size in the table */
    size_t d, N, batch;
    uint64_t steps;             /* steps per pilot (>= 8) */
    size_t draws;               /* scored draws per pilot (>= 4) */
    size_t score_rows;          /* rows per control-variate score estimate
                                   (exact scores when N <= 2 score_rows) */
    double seconds;             /* stop starting pilots past this many
                                   seconds (0: no limit) */
    uint64_t seed;              /* the scoring rows' random stream */
    /* Per-coordinate scales the KSD is measured in (d values; NULL: the
     * coordinates as they are): draws x_k / scale_k, scores s_k scale_k.
     * The IMQ kernel's width is 1 in every coordinate, so on a posterior
     * whose sds are far from 1 (raw predictors) distinct draws barely
     * interact and a chain that does not move scores better than exact
     * draws; scales near the posterior sds (the mode's curvature, under
     * --gradient cv) make the comparison one of shapes. */
    const double *scale;
    /* Or, taking precedence, the lower Cholesky factor L (d x d,
     * row-major) of a covariance near the posterior's (the dense metric
     * cv's curvature gives): draws L^-1 x, scores L' s, so that a
     * posterior whose parameters are strongly correlated (raw predictors
     * beside an intercept) is compared as a round one, in every
     * direction, not only along the axes. */
    const double *chol;
} drift_tune_config;

/* One trial step size. */
typedef struct drift_tune_trial {
    double h;
    double ksd2;                /* KSD^2 of the pilot (V-statistic; with
                                   estimated scores, less their noise);
                                   +inf when it diverged */
    uint64_t diverged_at;       /* step at which it diverged (0: did not) */
    int ran_away;               /* its draws' mean U lies far above the
                                   start's (ksd2 +inf) */
    double ksd2_exact;          /* about what KSD^2 of as many exact
                                   independent draws would be there:
                                   (tr grad^2 U + d) / m at the draws'
                                   mean (NaN: not known) */
    double stein_ratio;         /* the draws' mean |S s|^2 over their mean
                                   tr(S grad^2 U S): near 1 for draws of
                                   the target (the Stein identity), above
                                   it for draws spread too wide (NaN: not
                                   known) */
} drift_tune_trial;

typedef struct drift_tune_result {
    double h;                   /* the step size chosen */
    size_t n_trials;
    drift_tune_trial trials[DRIFT_TUNE_MAX_TRIALS]; /* in the order run */
    int exact;                  /* scores were exact full-data gradients */
    uint64_t grads;             /* per-datum evaluations of the pilots and
                                   their scores */
    double seconds;
    int cut_short;              /* the time limit ended the search */
} drift_tune_result;

/* Runs the search for cfg->sampler's step size starting at h0 (inside
 * the hyperparameter's bounds lo, hi).  Counts what it spends in out.
 * Returns DRIFT_OK with the choice in out->h, DRIFT_ESTOP on a stop
 * request, DRIFT_ENUMERIC when every pilot diverged, or the status of a
 * pilot that failed otherwise (it could not start, or its sampler
 * failed: not the step size's fault), with a message in e (the pilot
 * chain's own). */
int drift_tune_step_size(const drift_tune_config *cfg,
                         const drift_tune_ops *ops, double h0, double lo,
                         double hi, drift_tune_result *out, drift_err *e);

/* The trial chosen among out's: the smallest KSD, or of the trials
 * within 10% of it the largest step whose stein_ratio is at most
 * drift_tune_ratio_bound(m, d) (m draws a pilot, d parameters), or when
 * none is, the smallest step of those. */
size_t drift_tune_pick(const drift_tune_result *out, size_t m, size_t d);

/* The Stein ratio of cfg->draws draws x (m x d, row-major, cfg's
 * whitening) on chain c: their mean |W grad log p|^2 over their mean
 * trace of W grad^2 U W' (scores as the search makes them), 1 in
 * expectation for draws of the target (the Stein identity), above it for
 * draws spread too wide and below for draws too narrow; *se its standard
 * error, about.  ratio is NaN when a score was not finite.  Returns
 * DRIFT_OK, DRIFT_ESTOP or DRIFT_ENOMEM. */
int drift_tune_stein(const drift_tune_config *cfg, drift_chain *c,
                     const double *x, double *ratio, double *se);

/* 1 + STEIN_TOL + 3 sqrt(2 / (m d)): the largest stein_ratio that counts
 * as keeping the identity (sqrt(2 / (m d)) is the ratio's standard error
 * for m independent draws of a Gaussian in d dimensions). */
double drift_tune_ratio_bound(size_t m, size_t d);

/* "1e-05:0.82,3.162e-05:0.41,0.0001:diverged@37,0.001:ran-away": the
 * trials in the order run, KSD (square root of max(0, KSD^2)), into
 * buf. */
void drift_tune_format_grid(const drift_tune_result *r, char *buf,
                            size_t cap);

/* "0.01:1.02,0.1:1.31": each scored trial's step and stein_ratio, into
 * buf (trials without one left out). */
void drift_tune_format_ratios(const drift_tune_result *r, char *buf,
                              size_t cap);

#endif
