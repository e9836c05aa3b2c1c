/* SPDX-License-Identifier: MIT (drift; see LICENSE) */
/* drift/sampler.h: the sampler ABI.  A sampler plugin is a shared object
 * exporting one function, drift_sampler_entry(), that returns a const
 * descriptor of one or more samplers.  The engine owns everything else:
 * it loads the model and data, validates hyperparameters, allocates the
 * sampler's state, runs chains, counts gradient evaluations, schedules
 * warmup (step-size and metric adaptation) and writes output.  A plugin
 * links against nothing of drift's; it reaches the engine only through
 * the const table of services handed to every call.
 *
 * Build one with:  cc -shared -fPIC $(pkg-config --cflags drift) my.c -o my.so
 *
 * Conventions for every service: the first argument is the chain handle
 * the engine passed in; vectors have length d (the model's unconstrained
 * dimension) unless stated; gradients are of the potential U, not of the
 * log density; int results are DRIFT_OK or an error whose message the
 * engine has already recorded for the chain (the sampler just returns it).
 * One status is not an error: DRIFT_ENONFINITE (drift/common.h) says the
 * point asked about has no finite density; a sampler with an accept step
 * rejects it and goes on. */
#ifndef DRIFT_SAMPLER_H
#define DRIFT_SAMPLER_H

#include <drift/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when an existing field changes meaning or place; appending a
 * service or a descriptor field does not bump it. */
#define DRIFT_SAMPLER_ABI_VERSION 2u

/* Version of the services table: bumped whenever a service is appended.
 * A plugin states the version it needs (drift_sampler_plugin's
 * services_version) and an engine with an older table refuses it at load,
 * so no plugin calls past the end of the table it was given.  From
 * version 6 the flat table no longer grows: new groups of services come
 * as sub-tables, each with its own id and version, found through the
 * table service (see drift_table_header below). */
#define DRIFT_SERVICES_VERSION 6u

/* One chain as the engine runs it; opaque to samplers. */
typedef struct drift_chain drift_chain;

/* Data-access strategies of next_batch (the engine's --access option). */
typedef enum drift_access {
    DRIFT_ACCESS_RA = 0,  /* random access: n indices with replacement */
    DRIFT_ACCESS_RR = 1,  /* random reshuffle: a fresh permutation each pass,
                             walked in order: every row once per pass */
    DRIFT_ACCESS_CA = 2   /* cyclic: rows 0..N-1 in file order, repeated */
} drift_access;

/* The run's estimator of grad U behind grad_batch (the engine's --gradient
 * option; services version 4). */
typedef enum drift_gradient {
    DRIFT_GRADIENT_PLAIN = 0, /* (N/n) sum_{i in B} grad U_i + grad U_prior */
    DRIFT_GRADIENT_CV = 1,    /* control variates centred at a mode (Baker,
                                 Fearnhead, Fox and Nemeth 2019): see
                                 grad_batch */
    /* added later (a plugin that knows only the two above reads them as
     * not cv: unbiased estimates, as plain is): */
    DRIFT_GRADIENT_SVRG = 2,  /* control variates centred at a snapshot of
                                 the chain's own point, renewed every
                                 ceil(N/n) estimates (Dubey et al. 2016) */
    DRIFT_GRADIENT_SAGA = 3,  /* each row's gradient at its last visit
                                 stands in for it (Dubey et al. 2016) */
    DRIFT_GRADIENT_TMU = 4    /* saga's table, renewed whole at the chain's
                                 point every ceil(N/n) estimates (Zhang et
                                 al. 2020's TMU: both snapshot updates) */
} drift_gradient;

/* A rate function for thinning: writes the (possibly noisy) event rate at
 * time t along the current trajectory into *rate. */
typedef int (*drift_rate_fn)(void *user, double t, double *rate);

/* An upper bound on an event rate (time measured from the start of the
 * thinning call).  With n_knots < 2 it is the line max(0, a + b t) on
 * [0, t_max].  Otherwise it is the positive part of the piecewise-linear
 * interpolation of (t[k], r[k]), k < n_knots, on [t[0], t[n_knots-1]]
 * (zero outside; t_max is not read): t[0] is 0 at the start of a call,
 * times never decrease, and a repeated time makes a jump (the knots
 * (0,a),(1,a),(1,b),(2,b) are a step from a to b at t = 1). */
typedef struct drift_rate_bound {
    double a, b;
    size_t n_knots;
    const double *t, *r;
    double t_max;           /* may be INFINITY for a linear bound */
} drift_rate_bound;

/* Counters a thinning call adds to. */
typedef struct drift_thin_stats {
    uint64_t proposals;     /* rate evaluations */
    uint64_t violations;    /* proposals where rate > bound */
} drift_thin_stats;

/* What the run is (ABI 2), from the run_info service.  The warmup
 * schedule is Stan's windowed adaptation: an initial fast interval of
 * init_buffer iterations, then slow windows of base_window, 2 base_window,
 * 4 base_window ... iterations (the last one stretched to end where the
 * terminal interval begins), then a terminal fast interval of term_buffer
 * iterations.  Stan's defaults are 75, 25 and 50; when they do not fit
 * (warmup < 150) init_buffer is 15% of warmup, term_buffer 10% and
 * base_window the rest; below 20 iterations there is no slow window
 * (init_buffer = warmup, the other two 0).  All three are 0 without
 * warmup. */
typedef struct drift_run_info {
    uint64_t warmup;        /* warmup iterations (0: none) */
    uint64_t iterations;    /* post-warmup iteration budget (0: the run
                               is not bounded by iterations) */
    double passes;          /* data-pass budget (0: none) */
    double seconds;         /* wall-time budget (0: none) */
    unsigned chains;        /* chains in the run */
    uint64_t init_buffer;   /* initial fast interval (75) */
    uint64_t term_buffer;   /* terminal fast interval (50) */
    uint64_t base_window;   /* first slow window (25) */
} drift_run_info;

/* Phase notifications (ABI 2), delivered to drift_sampler.phase between
 * steps, in this order: WARMUP_START (only with warmup), one WINDOW_END
 * per slow window, WARMUP_END (only with warmup), RUN_END.  In a callback
 * the iteration service counts the steps taken so far. */
typedef enum drift_phase {
    DRIFT_PHASE_WARMUP_START = 0, /* before the first warmup step */
    DRIFT_PHASE_WINDOW_END = 1,   /* a slow window just ended; the engine
                                     has already set the metric from it
                                     (if the sampler uses one): re-initialise
                                     the step size */
    DRIFT_PHASE_WARMUP_END = 2,   /* after the last warmup step: freeze the
                                     step size (and call set_adapted) */
    DRIFT_PHASE_RUN_END = 3       /* after the last step of a run that did
                                     not fail */
} drift_phase;

/* Dual averaging of a step size (Nesterov; Hoffman and Gelman 2014, as
 * Stan does it), owned by the sampler, updated by the da_* services. */
typedef struct drift_dual_avg {
    double mu;              /* log step size the iterates shrink towards:
                               log(10 h0) */
    double gamma;           /* regularisation scale (0.05) */
    double t0;              /* iteration offset (10) */
    double kappa;           /* relaxation exponent (0.75) */
    double delta;           /* target acceptance statistic */
    double s_bar;           /* running average of delta - accept_stat */
    double x_bar;           /* running average of the log step sizes */
    uint64_t counter;       /* updates since the last restart */
} drift_dual_avg;

/* The metric M (ABI 2): momenta are N(0, M), and M^-1 is the estimate of
 * the target's (co)variance that preconditions a sampler's moves. */
typedef enum drift_metric_kind {
    DRIFT_METRIC_UNIT = 0,  /* M = I */
    DRIFT_METRIC_DIAG = 1,  /* diagonal, estimated per coordinate */
    DRIFT_METRIC_DENSE = 2  /* dense, estimated as a covariance (d x d
                               memory and O(d^2) products) */
} drift_metric_kind;

/* ---- sub-tables (services version 6) ----
 * A group of related services is a sub-table: a const struct that starts
 * with this header, found by its id through the table service.  A
 * sub-table grows only by appending members, each append bumping its own
 * version; table(c, id, v) returns it only when the engine's version of
 * it is at least v, so a plugin never reads past the end of the table it
 * was given, and an engine too old for a plugin's needs answers NULL (the
 * plugin then fails its init with DRIFT_NEED_TABLE's message) instead of
 * refusing every plugin built against newer headers. */
typedef struct drift_table_header {
    uint32_t id;            /* DRIFT_TABLE_* */
    uint32_t version;       /* the engine's version of this sub-table */
    uint32_t struct_size;   /* sizeof the engine's struct */
} drift_table_header;

/* Sub-table ids. */
#define DRIFT_TABLE_PRECOND 1u  /* drift_precond_services */
#define DRIFT_TABLE_METRIC 2u   /* drift_metric_services */
#define DRIFT_TABLE_ESTIMATOR 3u /* drift_estimator_services */
#define DRIFT_TABLE_REPORT 4u   /* drift_report_services */

/* The preconditioner P of a minibatch integrator (DRIFT_TABLE_PRECOND),
 * owned by the engine: its choice, its warmup windows, clamps and
 * checkpoint state, so that an integrator needs only to apply it.  P is
 * an estimate of the target's covariance (the inverse of a mass matrix);
 * the integrator's moves are theta += -h P grad U + sqrt(2h) P^(1/2) xi
 * (first order) or use P as the inverse mass of a momentum (second
 * order).  The kinds: */
typedef enum drift_precond_kind {
    DRIFT_PRECOND_AUTO = 0,   /* use() resolves it: DENSE up to 100
                                 parameters where the run has a mode
                                 (--gradient cv, or the engine's plan),
                                 MODE beyond, UNIT without a mode */
    DRIFT_PRECOND_UNIT = 1,   /* P = I */
    DRIFT_PRECOND_MODE = 2,   /* diagonal: the inverse diagonal curvature
                                 at the mode (the mode service's curv,
                                 as the DIAG metric starts), fixed */
    DRIFT_PRECOND_WARMUP = 3, /* diagonal, starting as MODE's (or I
                                 without a mode) and learned in warmup's
                                 slow windows: see below */
    DRIFT_PRECOND_DENSE = 4   /* the inverse empirical Fisher matrix at
                                 the mode (the DENSE metric), fixed */
} drift_precond_kind;

/* WARMUP's windows: from each step the integrator hands observe() its
 * point and gradient estimate; at a slow window's end the engine sets the
 * DIAG metric from the points (sampler.h's metric_use) and P to that
 * M^-1 times c = min_j P0_jj / min_j M^-1_jj, P0 the P the chain started
 * with (so a step size keeps the units of that start and the windows
 * change only the proportions between coordinates), each entry moving by
 * at most a factor 10 a window, and no larger than what the window's
 * gradients allow, 1 / (h_eff mean g_j^2), unless it already was (E[g_j^2]
 * is at least the curvature, so the step stays stable, and a chain still
 * travelling gets smaller steps, not larger).  Then, as always, the
 * sampler hears phase(WINDOW_END), where a second-order integrator draws
 * its momentum afresh.  P and the window's sums are part of the chain's
 * checkpoint, saved after the sampler's own part. */
typedef struct drift_precond_services {
    drift_table_header header;  /* DRIFT_TABLE_PRECOND, version 1 */
    /* From init only: the chain's P is of kind (the sampler's
     * hyperparameter, usually), with h_eff the step's scale that caps
     * WARMUP's updates (h for first-order moves; for second-order ones
     * max(h^2, h / (2 friction))).  AUTO is resolved as above.  A kind the
     * run cannot give (MODE or DENSE without a mode; WARMUP without slow
     * windows) is refused with a message naming the sampler, the
     * hyperparameter precond and what to use instead. */
    int (*use)(drift_chain *c, drift_precond_kind kind, double h_eff);
    /* The kind in use (AUTO resolved; UNIT when use() was not called). */
    drift_precond_kind (*kind)(drift_chain *c);
    /* out = P v, out = P^(1/2) v (DIAG: sqrt(P_jj) v_j; DENSE: L v with
     * L L' = P).  out may not alias v. */
    void (*mul)(drift_chain *c, const double *v, double *out);
    void (*sqrt_mul)(drift_chain *c, const double *v, double *out);
    /* p ~ N(0, P^-1), a momentum for the inverse mass P, from the chain's
     * random stream. */
    void (*draw_momentum)(drift_chain *c, double *p);
    /* A step's new point and the gradient estimate it used; read only
     * under WARMUP, in warmup (a no-op otherwise, so call it always). */
    void (*observe)(drift_chain *c, const double *theta, const double *grad);
} drift_precond_services;

/* More of the metric's services (DRIFT_TABLE_METRIC, version 2). */
typedef struct drift_metric_services {
    drift_table_header header;  /* DRIFT_TABLE_METRIC, version 2 */
    /* metric_observe with grad = grad U(theta) beside the point (d
     * values, unconstrained), under the same rules.  For a DIAG metric a
     * window whose points came with gradients sets M^-1 to sqrt(var(theta)
     * / var(grad U)) per coordinate (nutpie's estimate: for a Gaussian
     * target the exact variances, from points that need not have spread
     * over the posterior yet), bounded to [1e-20, 1e20], instead of the
     * regularised variance; a coordinate where that ratio is not a
     * positive number keeps the variance.  The last slow window of warmup
     * sets the regularised variance all the same: by then the points
     * have spread, and where coordinates are correlated the variance is
     * the better scale.  A DENSE metric uses the point alone.  Called
     * from init (after metric_use) with the initial point, it starts a
     * DIAG metric at M^-1 = 1/|grad_k U| per coordinate (bounded to
     * [1e-10, 1e10]; a zero or non-finite entry keeps 1), nutpie's start,
     * instead of the identity, unless the run's mode set the start (see
     * metric_use). */
    void (*observe_grad)(drift_chain *c, const double *theta,
                         const double *grad);
    /* ---- version 2 ---- */
    /* Sets a DIAG metric's M^-1 to inv (d values), for a sampler that
     * adapts the metric on a schedule of its own instead of the engine's
     * windows (it then passes no points to metric_observe, so the
     * engine's window ends leave the metric as it is).  Each entry is
     * bounded to [1e-20, 1e20]; one that is not a positive number keeps
     * its old value.  The metric set is the one the output's adaptation
     * block records and the checkpoint keeps.  Allowed from init and in
     * warmup (its steps and phase callbacks); returns DRIFT_OK, or fails
     * the chain (DRIFT_EINVAL) when the metric is not DIAG or warmup is
     * over. */
    int (*set_diag)(drift_chain *c, const double *inv);
    /* The same for a DENSE metric: M^-1 = inv (d x d, row-major,
     * symmetric).  Returns DRIFT_OK, or 1 when inv is not positive
     * definite (the metric is kept); fails the chain as set_diag does. */
    int (*set_dense)(drift_chain *c, const double *inv);
} drift_metric_services;

/* The gradient estimator behind grad_batch (DRIFT_TABLE_ESTIMATOR), for
 * an integrator that stands for one estimator by its name (the agld
 * family: svrg-ld is Langevin steps over svrg).  Such a sampler sets
 * DRIFT_SAMPLER_PICKS_ESTIMATOR, so the run's --gradient is refused for it
 * and the engine's plan does not put it under cv, and its init asks for
 * its estimator here.  Under svrg, saga and tmu grad_batch keeps, per
 * chain, a snapshot or a table of every row's gradient:
 *   - the first estimate, and for svrg and tmu every period-th after it,
 *     is a renewal: the snapshot (or the whole table) is taken at theta
 *     and the estimate is then the exact sum over all N rows (counted N),
 *     with no minibatch drawn (the correction would be zero for any), so
 *     the access stream advances on ordinary estimates only and grad_batch
 *     writes SIZE_MAX to each of the n entries of its rows;
 *   - with snapshot_rows = B < N, svrg's snapshot sum is itself estimated,
 *     (N/B) times the sum over the next B rows of the stream (counted B;
 *     Zou, Xu and Gu 2018's SVRG-LD+), and the renewal's estimate is that;
 *   - other estimates are svrg's control variates at the snapshot point
 *     (2n) or saga's table corrected on n rows (n), whose entries then
 *     take the rows' new gradients (tmu: both).
 * The snapshot and the table are part of the chain's checkpoint. */
typedef struct drift_estimator_request {
    drift_gradient kind;        /* PLAIN, SVRG, SAGA or TMU */
    uint64_t period;            /* svrg, tmu: estimates from one renewal to
                                   the next; 0: ceil(N/n), one data pass */
    uint64_t snapshot_rows;     /* svrg: B, rows estimating each snapshot's
                                   sum; 0 or >= N: all, exactly */
    int track_age;              /* saga, tmu: keep each row's entry's age
                                   (8 bytes a row) for age() */
} drift_estimator_request;

typedef struct drift_estimator_services {
    drift_table_header header;  /* DRIFT_TABLE_ESTIMATOR, version 1 */
    /* From init only: the chain's estimator.  Its memory (the table: N
     * numbers for a model in generalised linear form, else N x d, plus N
     * with track_age) is taken then, so --max-memory refuses the run
     * before its first step, naming the size. */
    int (*use)(drift_chain *c, const drift_estimator_request *r);
    /* The age, in estimates, of the oldest snapshot entry the last
     * estimate read (0 after a renewal); -1 when not kept (saga and tmu
     * without track_age) or before the first estimate. */
    double (*age)(drift_chain *c);
} drift_estimator_services;

/* What a sampler tells the user beside warnings (DRIFT_TABLE_REPORT,
 * version 1). */
typedef struct drift_report_services {
    drift_table_header header;  /* DRIFT_TABLE_REPORT, version 1 */
    /* A note: something the sampler did that needs no action and leaves
     * the draws right (a start far outside the posterior moved into its
     * bulk before adaptation), printed once per distinct text on standard
     * error as "drift: chain K: MSG", not with --quiet.  The services'
     * warn is for what may leave the draws wrong. */
    void (*note)(drift_chain *c, const char *msg);
} drift_report_services;

/* In a sampler's init: svc->table(c, ID, VERSION) as a (const TYPE *), or
 * a return from init with a message saying the engine is too old. */
#define DRIFT_NEED_TABLE(var, type, svc, c, id, ver, who)                  \
    do {                                                                 \
        (var) = (const type *)(svc)->table((c), (id), (ver));            \
        if (!(var))                                                      \
            return (svc)->fail((c), who ": this drift lacks the " #type  \
                                " services it needs (version " #ver      \
                                "): upgrade drift");                     \
    } while (0)

/* The services table.  The engine fills it; samplers only read it.
 * New services are appended and bump DRIFT_SERVICES_VERSION; the loader
 * refuses a plugin that needs a newer table than the engine's. */
typedef struct drift_services {
    uint32_t abi_version;   /* DRIFT_SAMPLER_ABI_VERSION of the engine */
    uint32_t struct_size;   /* sizeof(drift_services) in the engine */

    /* ---- facts ---- */
    size_t (*dim)(drift_chain *c);          /* d */
    size_t (*n_rows)(drift_chain *c);       /* N (0 for a data-free model) */
    size_t (*batch)(drift_chain *c);        /* --batch n (<= max(N, 1)) */
    drift_access (*access)(drift_chain *c); /* --access */
    int (*is_glm)(drift_chain *c);          /* model in generalised linear
                                               form: glm_* services work */
    uint64_t (*iteration)(drift_chain *c);  /* 0-based step counter */
    int (*in_warmup)(drift_chain *c);       /* 1 while in --warmup steps */
    unsigned (*chain_id)(drift_chain *c);   /* 1-based, as CmdStan */

    /* ---- oracles (each per-datum evaluation is counted) ----
     * Where the model's log density or gradient is not finite (an
     * overflow, a point outside the support), an oracle returns
     * DRIFT_ENONFINITE and writes +INFINITY to the U it outputs (NaN per-row
     * terms become +INFINITY); its gradient outputs are then undefined.
     * The chain goes on unless the sampler returns that status. */
    /* grad_full: grad U over all N rows and the prior; *U gets U(theta)
     * when U != NULL.  Counts N. */
    int (*grad_full)(drift_chain *c, const double *theta, double *grad,
                     double *U);
    /* U_full: U(theta) alone.  Counts N. */
    int (*U_full)(drift_chain *c, const double *theta, double *U);
    /* grad_batch: takes the next n rows of the access stream B and writes
     * (N/n) sum_{i in B} grad U_i + grad U_prior, the usual unbiased
     * estimate under random access; *U_est (may be NULL) gets the matching
     * estimate of U.  Counts n.  When rows != NULL the n indices used are
     * written there.
     * Under --gradient cv (the gradient service says which) it writes
     * instead the control-variate estimate centred at the run's mode
     * theta-hat,
     *     grad U(theta-hat) + (N/n) sum_{i in B} (grad U_i(theta)
     *                                  - grad U_i(theta-hat)) + grad U_prior,
     * as unbiased as the plain one and far less noisy near the mode, and
     * *U_est gets U(theta-hat) + (N/n) sum_{i in B} (U_i(theta) -
     * U_i(theta-hat)) + U_prior(theta), likewise.  It counts 2n (both
     * terms of each row evaluated), or n for a model in generalised
     * linear form, whose per-row values at the mode the engine keeps.
     * Under svrg, saga and tmu, see drift_estimator_services. */
    int (*grad_batch)(drift_chain *c, const double *theta, size_t n,
                      double *grad, double *U_est, size_t *rows);
    /* grad_prior: grad U_prior = -grad log p(theta) and *U0 (may be NULL).
     * Not counted. */
    int (*grad_prior)(drift_chain *c, const double *theta, double *grad,
                      double *U0);
    /* next_batch: the next n indices of the access stream, without
     * evaluating anything. */
    int (*next_batch)(drift_chain *c, size_t n, size_t *rows);
    /* grad_rows: per-row gradients grad U_i (n x d, row-major; may be NULL)
     * and per-row terms U_i = -log p(row_i | theta) (n; may be NULL), no
     * N/n scaling and no prior.  Counts n. */
    int (*grad_rows)(drift_chain *c, const double *theta,
                     const size_t *rows, size_t n, double *grads,
                     double *U_rows);
    /* grad_sum: sum_{i in rows} grad U_i (d, no scaling, no prior) and the
     * sum of U_i (may be NULL).  Counts n. */
    int (*grad_sum)(drift_chain *c, const double *theta, const size_t *rows,
                    size_t n, double *grad, double *U_sum);
    /* jvp_rows: out[k] = v . grad U_{rows[k]} in one forward pass.
     * Counts n. */
    int (*jvp_rows)(drift_chain *c, const double *theta, const double *v,
                    const size_t *rows, size_t n, double *out);
    /* glm_scalars / glm_design (is_glm only): grad U_i = s_i x_i.  s (n)
     * gets s_i, counted as n evaluations; x (n x d) the fixed vectors x_i,
     * not counted (data, not a gradient). */
    int (*glm_scalars)(drift_chain *c, const double *theta,
                       const size_t *rows, size_t n, double *s);
    int (*glm_design)(drift_chain *c, const size_t *rows, size_t n,
                      double *x);

    /* ---- the chain's random stream (reproducible per seed and chain) ---- */
    double (*uniform)(drift_chain *c);         /* in [0, 1) */
    double (*normal)(drift_chain *c);          /* N(0, 1) */
    void (*normal_fill)(drift_chain *c, size_t n, double *out);
    double (*exponential)(drift_chain *c);     /* Exp(1) */
    uint64_t (*discrete)(drift_chain *c, uint64_t n); /* uniform in [0, n) */

    /* ---- Poisson events (times from the current point, >= 0) ---- */
    /* First arrival of a process with rate max(0, a + b t), t >= 0;
     * INFINITY when there is none. */
    double (*poisson_linear)(drift_chain *c, double a, double b);
    /* First arrival after t0 of the rate described by bound, or INFINITY
     * when none falls between t0 and the bound's end. */
    double (*poisson_bound)(drift_chain *c, const drift_rate_bound *bound,
                            double t0);
    /* Thinning: proposes from bound, evaluates rate(user, t) at each
     * proposal, and accepts with probability rate/bound (min 1).  *t_event
     * gets the accepted time, or INFINITY when none falls before the
     * bound's end; *rate_at (may be NULL) the rate there.  Proposals and
     * bound violations (rate > bound, when the rate is then accepted with
     * probability 1) are added to *stats (may be NULL) and to the chain's
     * own counters.  A NaN rate fails the chain.
     * Adaptive thinning: the rate callback may revise *bound (the struct
     * and the arrays it points to are the sampler's) for times after t,
     * for instance refit it to the rate just observed; the next proposal
     * is then drawn after t from the bound as revised.  The acceptance at
     * t uses the bound's value at t before the callback ran. */
    int (*thin)(drift_chain *c, const drift_rate_bound *bound,
                drift_rate_fn rate, void *user, double *t_event,
                double *rate_at, drift_thin_stats *stats);

    /* ---- output ---- */
    /* A discrete draw: theta (unconstrained; the engine constrains it), lp
     * (the sampler's best value of log p(theta | data) up to a constant,
     * such as -U_est; NaN when it has none) and the sampler's diagnostic
     * columns (n_columns of the descriptor; may be NULL when 0).  The
     * engine applies --thin and --warmup. */
    int (*emit_draw)(drift_chain *c, const double *theta, double lp,
                     const double *diag);
    /* A linear piece x0 + v t, 0 <= t < duration, of a continuous
     * trajectory; the engine discretises it at --thin time steps or writes
     * it as is (--emit segments) and accumulates exact moments. */
    int (*emit_segment)(drift_chain *c, const double *x0, const double *v,
                        double duration, double lp, const double *diag);

    /* ---- accounting, memory, messages ---- */
    /* Adds n per-datum evaluations a sampler did by other means. */
    void (*count)(drift_chain *c, uint64_t n);
    uint64_t (*grads)(drift_chain *c);      /* the count so far */
    /* Zeroed memory owned by the engine, counted against --max-memory
     * and freed when the chain ends.  NULL (with a message recorded) when
     * the bound would be passed or the system is out of memory. */
    void *(*alloc)(drift_chain *c, size_t bytes);
    /* Records a message for the chain's error report (on failure) and
     * returns DRIFT_EINVAL, so a sampler can `return svc->fail(c, "...")`. */
    int (*fail)(drift_chain *c, const char *msg);
    /* A warning, printed once per distinct text on standard error. */
    void (*warn)(drift_chain *c, const char *msg);

    /* Replaces the run's --access strategy for this chain; only from init
     * (before any row was drawn).  For samplers whose identity includes
     * the access strategy (e.g. TMU with cyclic access). */
    int (*set_access)(drift_chain *c, drift_access a);

    /* ---- added in ABI 2 (services version 2) ---- */
    /* The run's budgets and warmup schedule. */
    const drift_run_info *(*run_info)(drift_chain *c);

    /* Dual averaging of a step size.  da_restart sets gamma 0.05, t0 10,
     * kappa 0.75 (Stan's defaults; a sampler may change them afterwards),
     * mu = log(10 h0), delta, and zeroes the averages and the counter.
     * da_update takes the acceptance statistic of the step just taken
     * (NaN counts as 0, values above 1 as 1) and returns the step size to
     * use next, exp(x) with x = mu - sqrt(t) s_bar / gamma.  da_final
     * returns the averaged step size exp(x_bar), the one to keep after
     * warmup. */
    void (*da_restart)(drift_chain *c, drift_dual_avg *da, double h0,
                       double delta);
    double (*da_update)(drift_chain *c, drift_dual_avg *da,
                        double accept_stat);
    double (*da_final)(drift_chain *c, const drift_dual_avg *da);

    /* The chain's metric, owned by the engine.  metric_use (from init
     * only) asks for one; it starts as the identity.  During each slow
     * warmup window the engine collects the points the sampler passes to
     * metric_observe (one per iteration, unconstrained; ignored outside
     * slow windows) and, at the window's end, sets M^-1 to their
     * variance (DIAG) or covariance (DENSE) regularised as Stan does,
     * (n/(n+5)) Sigma + 1e-3 (5/(n+5)) I for n points, before calling
     * phase(WINDOW_END).  A window with fewer than two points leaves the
     * metric as it was.  Without metric_use, the metric is the identity
     * and metric_observe does nothing.  Under --gradient cv a DIAG metric
     * starts, instead of the identity, as the inverse of the diagonal
     * curvature at the mode (see the mode service). */
    int (*metric_use)(drift_chain *c, drift_metric_kind kind);
    void (*metric_observe)(drift_chain *c, const double *theta);
    /* out = M^-1 v (out may not alias v). */
    void (*metric_inv_mul)(drift_chain *c, const double *v, double *out);
    /* p ~ N(0, M), from the chain's random stream. */
    void (*metric_draw)(drift_chain *c, double *p);
    /* out = L v with L L' = M^-1 (DIAG: sqrt(M^-1) v; DENSE: the lower
     * Cholesky factor): for Langevin noise N(0, M^-1) (out may not alias
     * v). */
    void (*metric_inv_sqrt_mul)(drift_chain *c, const double *v,
                                double *out);
    drift_metric_kind (*metric_kind)(drift_chain *c);
    /* Copies M^-1 into out: d values (DIAG), d x d row-major (DENSE), none
     * (UNIT); returns how many were written. */
    size_t (*metric_get)(drift_chain *c, double *out);
    /* The step size adaptation settled on, from phase(WARMUP_END): the
     * output gets CmdStan's adaptation block ("# Adaptation terminated",
     * "# Step size = ...", the inverse metric). */
    void (*set_adapted)(drift_chain *c, double stepsize);

    /* What drift_sampler.setup left in *shared (NULL without setup): the
     * same read-only block for every chain. */
    const void *(*shared)(drift_chain *c);

    /* ---- added in services version 3: checkpoints ---- */
    /* Inside drift_sampler.checkpoint: while the engine saves a chain,
     * appends the n bytes at p to the checkpoint; while it restores one,
     * reads the next n bytes of the checkpoint into p.  Returns DRIFT_OK,
     * or an error (recorded) when the checkpoint's next block is not n
     * bytes long: a sampler saved differently (another build).  Outside
     * checkpoint it returns DRIFT_EINVAL. */
    int (*ckpt_bytes)(drift_chain *c, void *p, size_t n);
    /* 1 while the engine restores a chain (ckpt_bytes reads), 0 while it
     * saves one. */
    int (*ckpt_restoring)(drift_chain *c);

    /* ---- added in services version 4: gradient estimators ---- */
    /* The estimator grad_batch uses (--gradient; under SVRG and SAGA it
     * estimates as their enumerators say, counting the rows it
     * evaluates: 2n a step for SVRG and N at each snapshot; n a step for
     * SAGA and N at the first). */
    drift_gradient (*gradient)(drift_chain *c);
    /* Under --gradient cv: the mode theta-hat its estimates are centred
     * at (d values into mode; may be NULL) and the diagonal curvature of
     * U there (d values into curv; may be NULL): the empirical Fisher
     * information sum_i (d U_i / d theta_j)^2 at the mode, plus the
     * prior's second derivative d^2 U_prior / d theta_j^2 by central
     * differences of its gradient; an entry without curvature (not
     * positive or not finite) reads NaN.  Returns DRIFT_OK, or
     * DRIFT_EINVAL (recorded) in a run without a mode.  The engine also
     * finds the mode when it plans a minibatch sampler's run at its
     * defaults, with or without cv: a sampler that builds its own
     * estimates (DRIFT_SAMPLER_OWN_ESTIMATES) may then centre them there
     * itself.  mode(c, NULL, NULL) asks whether the run has a mode:
     * DRIFT_OK or DRIFT_EINVAL, nothing recorded. */
    int (*mode)(drift_chain *c, double *mode, double *curv);

    /* ---- added in services version 5 ---- */
    /* glm_design_sum (is_glm only): adds sum_k w[k] x_{rows[k]} to out
     * (d), the fixed vectors of glm_design weighted, without forming the
     * n x d design (sparse rows cost their nonzeros).  Not counted (data,
     * not a gradient).  For samplers that keep one scalar per datum, such
     * as SAGA's snapshots, at a dimension where n x d doubles do not
     * fit. */
    int (*glm_design_sum)(drift_chain *c, const size_t *rows, size_t n,
                          const double *w, double *out);

    /* ---- added in services version 6: the last flat service ---- */
    /* The sub-table with this id (DRIFT_TABLE_*), when the engine has it
     * at version >= version; NULL otherwise. */
    const void *(*table)(drift_chain *c, uint32_t id, uint32_t version);
} drift_services;

/* One sampler.  The engine allocates state_size zeroed bytes for each
 * chain and passes them to every call. */
typedef struct drift_sampler {
    const char *name;           /* what --sampler NAME selects */
    const char *summary;        /* one line */
    const drift_hparam *hparams;
    size_t n_hparams;           /* entries of hparams (at most 256) */
    const char *const *columns; /* diagnostic column names, each ending in
                                   "__" (grads__ and lp__ are the engine's);
                                   "name.#__" stands for d columns name.1__
                                   ... name.d__, one per coordinate, and
                                   takes d values of the diag array that
                                   emit_draw/emit_segment get, in order */
    size_t n_columns;           /* entries of columns (at most 256) */
    size_t state_size;
    size_t default_batch;       /* minibatch size when --batch is not given
                                   (0: the engine's default, 32) */
    unsigned flags;             /* DRIFT_SAMPLER_* below */

    /* Called once per chain before the first step.  hp holds one value per
     * hyperparameter, in table order, validated; theta holds the initial
     * point and may be changed.  Oracles called here (and in setup) count
     * against --passes and --seconds: past the budget, or on a stop
     * request, they return DRIFT_ESTOP. */
    int (*init)(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta);
    /* One iteration: moves theta and emits what it produced. */
    int (*step)(void *state, const drift_services *svc, drift_chain *c,
                double *theta);
    /* Optional: called once after the last step (even after a failure). */
    void (*finish)(void *state, const drift_services *svc, drift_chain *c);

    /* ---- added in ABI 2 ---- */
    /* Optional: phase notifications (see drift_phase), between steps. */
    void (*phase)(void *state, const drift_services *svc, drift_chain *c,
                  drift_phase phase);
    /* Optional: run-level setup, called once per run before any chain's
     * init, with chain 1's handle (its random stream and gradient count:
     * what it spends is part of chain 1's grads__ and of the budget, and
     * is written as setup_grads in the header).  Whatever it allocates
     * with svc->alloc lives until the run ends; it leaves in *shared a
     * block every chain then reads, read-only, through svc->shared.  A
     * budget or a stop request that falls during setup makes the oracles
     * return DRIFT_ESTOP. */
    int (*setup)(const drift_services *svc, drift_chain *c, const double *hp,
                 void **shared);

    /* ---- added with services version 3 ---- */
    /* Optional: the sampler's part of a checkpoint (--checkpoint-every,
     * --resume), between two steps.  It hands every value that later
     * steps depend on to svc->ckpt_bytes, in the same order whether
     * saving or restoring (svc->ckpt_restoring says which), so one
     * function does both.  On resume the engine first runs setup and init
     * again exactly as at the start (same hyperparameters, initial point
     * and random streams), so the memory init allocated exists and
     * pointers into it are valid; then it restores its own part (theta,
     * every random stream, the access stream, counters, the metric, the
     * output file) and calls checkpoint.  Pointers in the state belong to
     * the process that wrote them: save what they point to, never the
     * pointers.  Scratch that a step overwrites before reading need not
     * be saved.  Without it the engine refuses --checkpoint-every for the
     * sampler. */
    int (*checkpoint)(void *state, const drift_services *svc,
                      drift_chain *c);
} drift_sampler;

/* drift_sampler.flags */
#define DRIFT_SAMPLER_CONTINUOUS 1u /* emits segments, not draws (required
                                       for emit_segment) */
#define DRIFT_SAMPLER_FULL_DATA  2u /* uses only full-data oracles */
#define DRIFT_SAMPLER_OWN_ESTIMATES 4u /* builds its gradient estimates
                                       itself from the per-row oracles
                                       (grad_rows, grad_sum, jvp_rows,
                                       glm_*), not from grad_batch: the
                                       engine's --gradient cv does not
                                       apply, and is refused */
#define DRIFT_SAMPLER_PICKS_ESTIMATOR 8u /* its init picks grad_batch's
                                       estimator (DRIFT_TABLE_ESTIMATOR):
                                       --gradient is refused, and the
                                       engine's plan does not choose cv */
#define DRIFT_SAMPLER_FIXED      16u /* keeps its initial point (CmdStan's
                                       fixed_param): no warmup unless
                                       asked, and no convergence checks
                                       of its draws */

/* What drift_sampler_entry() returns.  abi_version is read first and a
 * mismatch refused before anything else is read; struct_size, the build
 * facts and services_version are compared next. */
typedef struct drift_sampler_plugin {
    uint32_t abi_version;       /* DRIFT_SAMPLER_ABI_VERSION */
    uint32_t struct_size;       /* sizeof(drift_sampler_plugin) */
    uint32_t size_t_size;       /* sizeof(size_t) */
    uint32_t double_size;       /* sizeof(double) */
    uint32_t sampler_size;      /* sizeof(drift_sampler) */
    uint32_t services_version;  /* DRIFT_SERVICES_VERSION it was built
                                   with: the newest services it may call */
    size_t n_samplers;          /* entries of samplers (1 to 64) */
    const drift_sampler *samplers;
} drift_sampler_plugin;

typedef const drift_sampler_plugin *(*drift_sampler_entry_fn)(void);
#define DRIFT_SAMPLER_ENTRY "drift_sampler_entry"

/* Fill the version fields of a plugin descriptor. */
#define DRIFT_SAMPLER_PLUGIN_HEADER                                      \
    DRIFT_SAMPLER_ABI_VERSION, (uint32_t)sizeof(drift_sampler_plugin),   \
        (uint32_t)sizeof(size_t), (uint32_t)sizeof(double),              \
        (uint32_t)sizeof(drift_sampler), DRIFT_SERVICES_VERSION

#ifdef __cplusplus
}
#endif
#endif /* DRIFT_SAMPLER_H */
