/* chain.h: what a run is made of (engine-internal): its configuration, the
 * state each chain carries (random streams, access stream, model
 * workspaces, sampler state, output file; nothing writable is shared, so
 * chains run in parallel threads), and each chain's result.  The services
 * (oracle.c, poisson.c, emit.c) and the runner (run.c) all work on these;
 * this file calls none of them.  Not for parsing options (the CLI) or
 * loading plugins (plugin.c). */
#ifndef DRIFT_CHAIN_H
#define DRIFT_CHAIN_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <drift/model.h>
#include <drift/sampler.h>

#include "engine/data/advise.h"
#include "adapt.h"
#include "rng.h"
#include "stream.h"

struct drift_ranks_chan;

/* A run across MPI ranks (ranks.h): what this process runs of
 * it.  Its group runs chains first .. first + count - 1 of the run's K
 * (the chain queue and the results hold those alone), chain k over the
 * channel chans[k]; the model holds rows rows_first .. rows_first + n - 1
 * (n its own n_rows) of the data's rows_total; only the group's rank 0
 * (writer) writes the chains' files. */
typedef struct drift_run_ranks {
    unsigned first, count;
    struct drift_ranks_chan *const *chans;
    size_t rows_first, rows_total;
    int writer;
} drift_run_ranks;

/* Everything a run needs, filled by the caller (the CLI or a test). */
typedef struct drift_run_config {
    /* ---- the problem: the model and where its rows live ---- */
    struct {
        const drift_model *model;
        const drift_data *data;     /* the rows' storage, for prefetching
                                       (may be NULL) */
        int mapped;                 /* data is a memory-mapped row store:
                                       advise the kernel on sequential
                                       passes */
        int fd;                     /* its file (for read-ahead; -1 or 0
                                       when mapped is 0) */
        const void *map;            /* where the file is mapped */
        /* Stan CSV that every reader accepts: the first data file, for
         * the header's "data / file" (NULL: none). */
        const char *path;
    } problem;
    /* ---- how a step is taken: the sampler and its gradient ---- */
    struct {
        const drift_sampler *sampler;
        const char *sampler_path;   /* for the header (may be NULL) */
        const double *hp;           /* sampler hyperparameters, validated */
        const unsigned char *hp_set;/* which were set by the user */
        size_t batch;               /* 0: the sampler's default */
        drift_access access;
        /* The estimator behind grad_batch: DRIFT_GRADIENT_PLAIN, or
         * DRIFT_GRADIENT_CV, for which chain 1 finds a mode in the
         * run-level setup (mode.h).  drift_run refuses cv for samplers
         * that never call grad_batch (DRIFT_SAMPLER_FULL_DATA,
         * DRIFT_SAMPLER_OWN_ESTIMATES) and for models without rows. */
        int gradient;
        double grad_noise;          /* --grad-noise B (0: off) */
        size_t max_memory;          /* bound on sampler allocations
                                       (0: none) */
        unsigned full_threads;      /* --threads: threads per chain for
                                       full-data passes (0, 1: one) */
    } step;
    /* ---- how long each chain runs and what it keeps ---- */
    struct {
        uint64_t iters;             /* steps (0: none) */
        double passes;              /* data passes (0: none) */
        double seconds;             /* wall time (0: none) */
        uint64_t warmup;            /* steps before draws are written */
        /* --iter 0: the run ends with its warmup (no draws kept). */
        int warmup_only;
        uint64_t thin;              /* keep every thin-th draw (>= 1) */
        double thin_time;           /* continuous samplers: output time
                                       step (0: 1.0) */
    } budget;
    /* ---- the chains: how many, their ids and seed, how many at once ---- */
    struct {
        unsigned chains;            /* K >= 1 */
        unsigned first_chain_id;    /* id of chain 1 (default 1) */
        uint64_t seed;
        /* At most this many at a time, the rest queued (0: the number
         * of processor cores). */
        unsigned parallel;
    } launch;
    /* ---- where each chain starts ---- */
    struct {
        int mode;                   /* DRIFT_INIT_* */
        const double *values;       /* DRIFT_INIT_VALUES: n_out values */
        /* DRIFT_INIT_VALUES: which of values the file gave (n_out flags;
         * NULL: all); the others are drawn as DRIFT_INIT_RANDOM draws
         * them. */
        const unsigned char *given;
        const double *points;       /* DRIFT_INIT_POINTS: chain id k starts
                                       at row k - 1 (d values each, on the
                                       unconstrained scale) */
        double radius;              /* DRIFT_INIT_RANDOM: U(-r, r) on the
                                       unconstrained scale (0: 2, Stan's) */
        const char *path;           /* DRIFT_INIT_VALUES: for the header */
    } init;
    /* ---- what is written, and to whom ---- */
    struct {
        const char *path;           /* NULL: no draws file */
        int quiet;                  /* no progress line */
        int progress;               /* progress on stderr: 0 none,
                                       DRIFT_PROGRESS_LINE the redrawn
                                       line (a terminal),
                                       DRIFT_PROGRESS_LOG CmdStan's
                                       periodic lines (logs, CI,
                                       notebooks): progress.h */
        const char *const *header;  /* "key = value" lines for the CSV
                                       header, NULL-terminated */
        int save_warmup;            /* write warmup draws too */
        /* Continuous samplers: write the trajectory's skeleton, one row
         * per segment, instead of draws at thin_time steps (--emit
         * segments; see drift_emit_segment for the columns). */
        int emit_segments;
        /* The model's generated quantities (drift_model.generate) on
         * every generated_every-th kept draw after warmup (0: 1); NaN on
         * the others.  Derived values are written for every draw.  Not
         * with emit_segments. */
        uint64_t generated_every;
        /* save_gradients: every row written gets the score
         * grad log p(theta | data) at its draw, on the unconstrained
         * scale, over all N rows (one full-data gradient per row, not
         * counted in grads__ nor against --passes), as columns
         * grad_lp_1__ ... grad_lp_d__ after the model's; not with
         * emit_segments.  discard_draws: the draws a sampler emits are
         * checked (a non-finite point fails the chain) but neither
         * written nor counted: the pilot chains of the step-size search
         * (tune.h). */
        int save_gradients;
        int discard_draws;
        /* Called with every row written (lp__, grads__, sampler columns,
         * constrained values), also when path is NULL, warmup set for a
         * row drawn in warmup; from the chain's thread.  May be NULL. */
        void (*on_row)(void *user, unsigned chain_id, int warmup,
                       const double *row, size_t n);
        void *on_row_user;
        /* Called once per chain at its end, when a continuous sampler
         * moved for a positive time after warmup: the trajectory time T
         * and the exact time averages of theta and the variances
         * (1/T) int theta^2 - mean^2, on the unconstrained scale (d
         * values each).  May be NULL. */
        void (*on_trajectory)(void *user, unsigned chain_id, double time,
                              const double *mean, const double *var,
                              size_t d);
        void *on_trajectory_user;
        /* A pilot of a continuous sampler (discard_draws only): its
         * trajectory at every thin_time step, unconstrained (NULL:
         * none). */
        void (*on_point)(void *user, const double *theta);
        void *on_point_user;
    } output;
    /* ---- held-out metrics (--test) ---- */
    struct {
        const drift_model *model;   /* the held-out rows (NULL: none) */
        const char *path;           /* for headers */
        double every;               /* every P data passes (0: at the end
                                       only) */
    } heldout;
    /* ---- checkpoints (checkpoint.h) ---- */
    /* The directory (NULL: none), how often each chain saves itself
     * (every iters iterations, every seconds seconds; 0: not by that; a
     * chain also saves when it ends or a signal stops it), and whether
     * chains start from what the directory holds (--resume). */
    struct {
        const char *dir;
        uint64_t iters;
        double seconds;
        int resume;
    } ckpt;
    /* One run across MPI ranks: NULL in one process. */
    const drift_run_ranks *ranks;
    /* The engine's plan for a minibatch sampler at its defaults
     * (biascheck.h).  step: a step size left to the engine is chosen by
     * the bias check of pilots at h and h/2, not the KSD search.  mode:
     * the mode is found in the run-level setup even without cv (for the
     * initial point and the units the check measures in).  budget,
     * warmup, thin: the iterations, the burn-in and the thinning the user
     * did not give are sized from the chosen pilot's autocorrelation time
     * for BIASCHECK_ESS effective draws a chain.  max_passes caps a
     * chain's planned iterations (0: no cap).  check: a step size the
     * user gave is checked by pilots at h and h/2 (a quarter of the run's
     * budget at most), and the run warns when they disagree. */
    struct {
        int step, mode, budget, warmup, thin, check;
        double max_passes;
    } plan;
} drift_run_config;

/* DRIFT_INIT_MODE (--gradient cv only): each chain starts at a draw of
 * the diagonal Laplace approximation at the mode, theta-hat + z / sqrt(H)
 * with z ~ N(0, I) from the chain's stream and H the curvature there.
 * DRIFT_INIT_POINTS (--init pathfinder): each chain at its own row of
 * init_points, drawn before the run (pathfinder.h). */
enum { DRIFT_INIT_ZERO = 0, DRIFT_INIT_RANDOM = 1, DRIFT_INIT_VALUES = 2,
       DRIFT_INIT_MODE = 3, DRIFT_INIT_POINTS = 4 };

/* Per-chain outcome, for the caller's report. */
typedef struct drift_chain_result {
    unsigned id;
    int status;                     /* DRIFT_OK or an error */
    int started;                    /* the first step was taken: a failure
                                       is the run's, not the setup's */
    char message[512];
    uint64_t iterations;
    uint64_t draws;                 /* rows written */
    uint64_t grads;
    double seconds;
    uint64_t proposals, violations; /* thinning counters */
    char path[4096];                /* the draws file written */
    char metrics_path[4096];        /* --test metrics file ("" if none) */
    /* ---- runs across MPI ranks ---- */
    int interrupted;                /* stopped by a signal (across ranks:
                                       to any rank of its group) */
} drift_chain_result;

/* Path of chain id's output file: out_path itself when K == 1, else
 * "stem_ID.ext" as CmdStan names per-chain files. */
void drift_chain_path(const char *out_path, unsigned chains, unsigned id,
                      char *buf, size_t cap);

/* ---- inside a chain (oracle.c, poisson.c, emit.c, run.c use these) ---- */

typedef struct drift_writer drift_writer;

/* What --gradient cv found, once per run, on chain 1 (mode.c fills it in
 * the run-level setup; oracle.c's grad_batch and metric_use read it,
 * read-only, from every chain).  Values of the log likelihood (the model's
 * sign: l_i = log p(row_i | theta)) at the mode. */
typedef struct drift_cv {
    int ready;              /* the store is complete: grad_batch centres */
    size_t d;
    double *mode;           /* theta-hat (d) */
    double *lik_grad;       /* sum_i grad l_i(theta-hat) (d) */
    double lik_sum;         /* sum_i l_i(theta-hat) */
    double *curv;           /* diagonal curvature of U at the mode (d;
                               NaN where none) */
    double *inv_metric;     /* what a DIAG metric starts as: 1 / curv, or
                               1 where there is no curvature (d) */
    double *inv_dense;      /* what a DENSE metric starts as: the inverse
                               of the empirical Fisher matrix plus the
                               prior's diagonal curvature (d x d), or NULL
                               (too large, or not positive definite: then
                               diag(inv_metric)) */
    double *s, *l;          /* generalised linear models: s_i and l_i at
                               the mode (N each); NULL: recomputed in
                               each minibatch */
    /* The search's account, for the header and messages. */
    const char *method;     /* "lbfgs" or "adam+lbfgs" */
    uint64_t grads;         /* per-datum evaluations spent, store and
                               curvature included */
    uint64_t iterations;    /* optimiser iterations (Adam's and
                               L-BFGS's) */
    double U;               /* U(theta-hat) */
    double decrement;       /* squared Newton decrement g' H^-1 g at the
                               end (L-BFGS's H): ~2 (U - U_min) */
    double seconds;
    int converged;
    size_t flat, first_flat;    /* coordinates without curvature */
    unsigned recentred;         /* moves of the centre off the mode
                                   (drift_mode_recentre) */
} drift_cv;

/* What the chains of one run share (run.c makes it): the sampler's
 * run-level setup, done once on chain 1 while the others wait, and the
 * memory it allocated, which lives until every chain has ended. */
typedef struct drift_run_shared {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int state;              /* 0: setup pending, 1: done, -1: failed */
    void *shared;           /* what setup left in *shared */
    uint64_t setup_grads;   /* evaluations setup spent */
    void **allocs;          /* setup's svc->alloc blocks */
    size_t n_allocs, cap_allocs;
    drift_cv cv;            /* --gradient cv's mode */
    /* The hyperparameters every chain's sampler gets, with a
     * step size left to the engine chosen (NULL: cfg->step.hp as given), and
     * how it was chosen (NULL: it was not; tune.h). */
    double *hp;
    struct drift_tune_result *tune;
    char tune_note[1600];   /* the choice, for stderr */
    char tune_header[4000]; /* the choice, as the header's comment lines
                               ("# key = value\n" ...) */
    unsigned at_once;       /* chains of this run in flight together */
    struct drift_progress *progress; /* the run's progress line (NULL:
                               none; progress.h) */
    /* The configuration every chain runs by once the setup planned
     * iterations, burn-in or thinning (cfg.plan; planned 0: cfg as
     * given). */
    int planned;
    drift_run_config plan_cfg;
    /* The check of kept draws against the Laplace approximation at the
     * centre (plancheck.h): its marginal variances (d; NULL: no check)
     * and, per chain (id - first_chain_id), DRIFT_PLANCHECK_BATCHES
     * blocks of a count and the sums of theta and theta^2 (1 + 2d). */
    double *check_var;
    double *check_mom;
    unsigned check_slots;
} drift_run_shared;

/* One chain's preconditioner P (precond.h; drift/sampler.h's
 * DRIFT_TABLE_PRECOND).  Zeroed (not used: its kind reads UNIT) until the
 * sampler asks for it. */
typedef struct drift_precond {
    int used;
    drift_precond_kind kind;
    double h_eff;           /* scale of WARMUP's gradient cap */
    double min0;            /* min_j P0_jj */
    double n_g2;            /* steps summed into g2 */
    double *P, *buf, *g2;   /* d each, for MODE and WARMUP */
} drift_precond;

/* Where a chain is, for messages and budget checks. */
enum {
    DRIFT_CHAIN_STEPPING = 0,   /* in the step loop (or set up by hand) */
    DRIFT_CHAIN_SETUP = 1,      /* in the sampler's run-level setup */
    DRIFT_CHAIN_INIT = 2,       /* in the sampler's init */
    DRIFT_CHAIN_MODE = 3        /* in the engine's mode search
                                   (--gradient cv; mode.c) */
};

struct drift_chain {
    const drift_run_config *cfg;
    const drift_model *model;
    unsigned id;
    size_t d, N, batch;
    drift_rng rng;          /* the sampler's stream */
    uint64_t grads;
    uint64_t iter;
    void *state;            /* the sampler's */
    double *theta;          /* the chain's point (d), in the step loop */
    const double *hp;       /* the hyperparameters the sampler was given
                               (cfg->step.hp, or the run's with a chosen
                               step size) */
    drift_run_shared *run;  /* NULL for a chain set up alone (tests) */
    int phase;              /* DRIFT_CHAIN_*: setup and init are checked
                               against the budget by the oracles */
    double t_start;         /* when the chain started (--seconds) */
    double t_warm_end;      /* when warmup ended (-1: not yet) */
    int stop;               /* poll the run's stop request
                               (drift_stop_requested) */
    drift_run_info info;    /* what the run_info service returns */
    uint64_t proposals, violations;
    size_t n_diag;          /* diagnostic values per row (vector columns
                               count d) */
    /* ---- failure and warnings ---- */
    int failed;
    char message[512];
    char warned[8][160];
    size_t n_warned;
    int mute;               /* warnings are not printed (a pilot chain's) */
    /* Why the last oracle returned DRIFT_ENONFINITE ("" when none did in
     * this step): the failure message if the sampler gives up. */
    char nonfinite[512];
    /* ---- the rows a minibatch reads (next_batch, set_access) ---- */
    struct {
        drift_stream stream;
        drift_rng rng;          /* the stream's seed state */
        drift_advisor advisor;  /* cyclic access / full passes over a
                                   map */
        int used;               /* a row has been drawn */
    } access;
    /* ---- --grad-noise ---- */
    struct {
        drift_rng rng;
        double sd;              /* sqrt(2B/h) */
    } noise;
    /* ---- full-data passes (oracle.c) ---- */
    struct {
        void *parts;            /* --threads: per-thread workspaces */
        unsigned n_parts;
        size_t chunk;           /* rows per model call (0: not yet
                                   chosen) */
        void *ws;               /* a workspace of chunk rows when that is
                                   more than scratch.cap (else NULL:
                                   scratch.ws is used) */
    } full;
    /* ---- the model's workspace and scratch ---- */
    struct {
        void *ws;               /* model workspace for up to cap rows */
        size_t cap;
        size_t *rows;           /* cap indices */
        double *g, *g2;         /* d scratch */
        double *rows_grad;      /* rows_grad_cap x d scratch for the jvp
                                   fallback, allocated on first use */
        size_t rows_grad_cap;
        double *ll;             /* cap scratch */
    } scratch;
    /* ---- output ---- */
    struct {
        drift_writer *w;
        int write_failed;       /* a write to w failed: w is not
                                   committed */
        uint64_t draws_written;
        uint64_t gen_seen;      /* kept draws after warmup, for
                                   generated_every */
        /* Counts behind the header's num_warmup and num_samples: draws a
         * sampler offered before --thin, in warmup (counted only with
         * --save-warmup) and after it; a continuous sampler offers one
         * draw per output time step, or per segment with --emit
         * segments. */
        uint64_t warm_offered, samp_offered;
        drift_rng lp_rng;       /* rows for lp__ estimates (emit.c) */
        struct drift_csvout *csv; /* the Stan CSV file's layout
                                     (csvout.c) */
        struct drift_csvout_layout *layout; /* where csvout.c records
                                   the file's layout for it, or NULL */
        double *row;            /* a whole output row, for on_row */
        size_t row_len;
    } output;
    /* A continuous sampler's trajectory (emit.c; the vectors NULL for
     * other samplers). */
    struct {
        uint64_t grid_k;    /* output time steps passed */
        double t;           /* trajectory time written so far (warmup
                               included with save_warmup) */
        double t_mom;       /* time integrated into m1, m2 (after
                               warmup) */
        double t_next_out;  /* next output time, thin_time * grid_k (0
                               at the start) */
        double *m1, *m2;    /* integrals of theta and theta^2 (d) */
        double *seg;        /* d: a point on a segment */
    } traj;
    /* ---- memory handed to the sampler ---- */
    struct {
        void **allocs;
        size_t n, cap, used;
    } mem;
    /* ---- adaptation services ---- */
    struct {
        drift_adapt_schedule sched;
        drift_adapt_metric metric; /* UNIT until the sampler asks for
                                      one */
        drift_precond precond;  /* the integrator's P (precond.c) */
        double step;            /* from set_adapted (NaN: not called) */
    } adapt;
    /* --gradient cv's scratch (oracle.c, made on first use): theta -
     * theta-hat (d); for a generalised linear model, x_cap rows of the
     * design (x_cap x d), their scalars, log-likelihood terms and
     * products with theta - theta-hat (x_cap each, one block from s). */
    struct {
        double *delta, *x, *s, *l, *xd;
        size_t x_cap;
    } cv;
    /* The estimator behind grad_batch: the run's --gradient, or the one
     * the sampler picked (DRIFT_TABLE_ESTIMATOR); under svrg, saga and
     * tmu the chain's snapshot or table of row gradients (oracle.c; NULL:
     * none yet) */
    drift_estimator_request est;
    struct drift_vr *vr;
    /* The run extensions' state for this chain (ext.h), each made, read
     * and freed by its extension alone; NULL where it is off. */
    struct {
        struct drift_guard_slot *guard;     /* the parent's view of the
                                               chain (guard.c) */
        struct drift_shard *shard;          /* this rank's rows and the
                                               chain's channel across
                                               ranks (shard.h) */
        struct drift_progress_slot *progress; /* progress.h */
        struct drift_ckpt_chain *ckpt;      /* checkpoint.c */
        struct drift_heldout *heldout;      /* --test's evaluator */
        struct drift_watch *watch;          /* minibatch chains: lp__
                                               running away, parameters
                                               that stopped (watch.c) */
    } ext;
};


/* Records a failure message for chain c (first one wins) and returns
 * code. */
int drift_chain_fail(drift_chain *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Output name of unconstrained coordinate k, for messages. */
void drift_chain_param_name(const drift_chain *c, size_t k, char *buf,
                            size_t cap);
/* The same from the model alone (after the chains have ended). */
void drift_model_param_name(const drift_model *m, size_t k, char *buf,
                            size_t cap);

/* "chain 3, iteration 12" (or ", setup", ", init"), for messages. */
void drift_chain_where(const drift_chain *c, char *buf, size_t cap);

/* 1 when a sampler's column name "name.#__" stands for one column per
 * coordinate, name.1__ ... name.d__. */
int drift_chain_column_is_vector(const char *name);

/* Diagnostic values per row: the sampler's columns with each "name.#__"
 * counted d times. */
size_t drift_chain_n_diag(const drift_sampler *s, size_t d);

/* --gradient's spelling of an estimator. */
static inline const char *drift_gradient_name(drift_gradient g)
{
    switch (g) {
    case DRIFT_GRADIENT_CV: return "cv";
    case DRIFT_GRADIENT_SVRG: return "svrg";
    case DRIFT_GRADIENT_SAGA: return "saga";
    case DRIFT_GRADIENT_TMU: return "tmu";
    default: return "plain";
    }
}

/* svrg's and tmu's estimates from one renewal to the next at minibatch
 * size n: the chain's choice, or ceil(N/n), one data pass. */
static inline uint64_t drift_estimator_period(const drift_chain *c, size_t n)
{
    if (c->est.period)
        return c->est.period;
    return n ? (c->N + n - 1) / n : 1;
}

#endif
