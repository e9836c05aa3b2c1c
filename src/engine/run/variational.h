/* variational.h: automatic differentiation variational inference (ADVI,
 * Kucukelbir et al. 2017) as Stan's variational method runs it: a
 * Gaussian on the unconstrained scale (mean-field: diagonal; full-rank: a
 * Cholesky factor) fitted by stochastic gradient ascent on the ELBO with
 * reparameterisation gradients of the log density (constraint Jacobians
 * included), Stan's adaptive step-size sequence, its choice of eta over
 * {100, 10, 1, 0.1, 0.01} and its test of the ELBO's relative change.
 * What drift adds: the gradients from minibatches of rows (prior plus
 * N/b times b rows' terms, an unbiased estimate), so that a data set too
 * large for a full pass per step is fitted in a few passes; the ELBO is
 * then judged on one fixed set of rows.  Not for output (the command's)
 * nor for the mode (optimize.h). */
#ifndef DRIFT_VARIATIONAL_H
#define DRIFT_VARIATIONAL_H

#include <stdio.h>

#include "logdensity.h"
#include "rng.h"

typedef struct drift_vi_opts {
    int fullrank;           /* 0: meanfield (the default), 1: fullrank */
    unsigned iter;          /* iterations at most (10000) */
    unsigned grad_samples;  /* draws per ELBO gradient (1) */
    unsigned elbo_samples;  /* draws per ELBO estimate (100) */
    double eta;             /* step-size scale, used as given when
                               adapt_engaged is 0 (1) */
    int adapt_engaged;      /* choose eta by Stan's adaptation (1) */
    unsigned adapt_iter;    /* iterations per eta tried (50) */
    double tol_rel_obj;     /* the ELBO's relative change, mean or median
                               over the recent evaluations, below it:
                               converged (0.01) */
    unsigned eval_elbo;     /* iterations between ELBO estimates (100) */
    size_t batch;           /* rows per gradient (0:
                               drift_logdensity_batch's) */
    size_t elbo_rows;       /* rows of each ELBO estimate (0:
                               drift_vi_elbo_rows's) */
    int stan_steps;         /* 1: the mean's steps in the parameters'
                               units, exactly Stan's; 0 (the default): in
                               the approximation's own scale (see
                               variational.c's step) */
    int control_variates;   /* minibatch gradients as g_full(init) plus the
                               batch's g(zeta) - g(init) (one full pass at
                               the start): for a start at the mode, where
                               this takes out most of the subsampling
                               noise */
    FILE *log;              /* progress lines as Stan prints them (NULL:
                               none) */
} drift_vi_opts;

/* Stan's defaults, batch and elbo_rows 0. */
void drift_vi_defaults(drift_vi_opts *o);

/* The rows of each ELBO estimate when none is asked for: all N when N <=
 * 10^4, else 10^4 rows drawn once and kept (every estimate is then of the
 * same objective, and their relative change is not subsampling noise). */
size_t drift_vi_elbo_rows(size_t n_rows);

typedef struct drift_vi drift_vi;

typedef struct drift_vi_result {
    double eta;             /* the step-size scale used */
    double elbo;            /* the last ELBO estimate */
    unsigned iterations;    /* of the ascent after adaptation */
    int converged;          /* 1: the relative-change test was met */
    const char *why;        /* how it ended, in Stan's words */
    size_t batch, elbo_rows;/* rows per gradient and per ELBO estimate */
    unsigned n_retries;     /* ascents run again with eta / 10 after an
                               adapted eta diverged */
    char retried[320];      /* the first divergence that made it retry */
} drift_vi_result;

/* Fits the approximation of ld's density (which must include the
 * constraint Jacobians) over m's d coordinates, started at mean init (d)
 * with scales init_sd (d; NULL: 1, Stan's start; each positive).  Random numbers from seed.  Returns
 * DRIFT_OK (r says how it ended; *out the fit) or, with a message naming
 * what to try: DRIFT_ENUMERIC when the ELBO or its gradient cannot be
 * estimated (no finite density at the draws), when every eta fails, or
 * when the approximation runs away (no proper posterior); DRIFT_EINVAL
 * for an option out of its bounds (naming it), or a model error. */
int drift_vi_fit(drift_vi **out, drift_logdensity *ld, const drift_model *m,
                 const drift_vi_opts *o, const double *init,
                 const double *init_sd, uint64_t seed, drift_vi_result *r,
                 drift_err *e);
void drift_vi_free(drift_vi *q);

/* The approximation's mean (d). */
void drift_vi_mean(const drift_vi *q, double *theta);

/* A draw theta = mu + S z, z ~ N(0, I) from rng, and log_g = -z'z/2, its
 * log density under the approximation up to a constant, as Stan's
 * log_g__. */
void drift_vi_draw(const drift_vi *q, drift_rng *rng, double *theta,
                   double *log_g);

/* The scale of coordinate j: exp(omega_j), or the norm of row j of L. */
double drift_vi_sd(const drift_vi *q, size_t j);

#endif
