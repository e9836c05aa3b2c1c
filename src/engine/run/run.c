/* run.c: running chains.  Sets up each chain's random streams, access
 * stream, workspaces, sampler state and output file (laid out by
 * csvout.c); the core loop: set up, initialise, step until the budget is
 * spent or a stop is requested, finish, calling the run extensions' hooks
 * (ext.h) in between; brings the files of a run's
 * chains to equal draw counts once all have ended, and reports.  K chains
 * run in K threads and share nothing writable, so a chain's draws depend
 * only on (seed, chain id).  Not for option parsing (the CLI), the
 * features the extensions hold, nor the services samplers call
 * (oracle.c). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "base/msg.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "adapt.h"
#include "chain.h"
#include "precond.h"
#include "csvout.h"
#include "ext.h"
#include "guard.h"
#include "hparam.h"
#include "mode.h"
#include "oracle.h"
#include "plancheck.h"
#include "progress.h"
#include "ranks.h"
#include "run.h"
#include "shard.h"
#include "watch.h"
#include "tune.h"
#include "biascheck.h"

/* Rows per model call in full passes, and the smallest workspace. */
#define MIN_WS_ROWS 256

void drift_run_request_stop(void) { drift_stop_request(0); }

void drift_run_chain_release(drift_chain *c)
{
    const drift_model *m = c->model;
    if (c->ws && m)
        m->workspace_free(m->self, c->ws);
    drift_advisor_free(&c->advisor);
    if (m)
        drift_oracle_release(c);
    drift_stream_free(&c->stream);
    for (size_t k = 0; k < c->n_allocs; k++)
        drift_free(c->allocs[k]);
    drift_free(c->allocs);
    drift_free(c->rows_buf);
    drift_free(c->gbuf);
    drift_free(c->gbuf2);
    drift_free(c->rows_grad);
    drift_free(c->ll_buf);
    drift_free(c->traj.m1);
    drift_free(c->traj.m2);
    drift_free(c->traj.seg);
    drift_free(c->row_buf);
    drift_free(c->state);
    drift_watch_free(c);
    drift_csvout_free(c->out);
    c->out = NULL;
}

int drift_run_chain_setup_init(drift_chain *c, double *theta)
{
    const drift_run_config *cfg = c->cfg;
    const drift_model *m = c->model;
    switch (cfg->init.mode) {
    case DRIFT_INIT_RANDOM: {
        /* Stan's default radius is 2: U(-2, 2). */
        double r = cfg->init.radius > 0 ? cfg->init.radius : 2.0;
        for (size_t k = 0; k < c->d; k++)
            theta[k] = -r + 2.0 * r * drift_rng_uniform(&c->rng);
        break;
    }
    case DRIFT_INIT_VALUES: {
        drift_err me = {{0}};
        const double *values = cfg->init.values;
        double *mixed = NULL;
        size_t missing = 0;
        for (size_t k = 0; cfg->init.given && k < m->n_out; k++)
            missing += !cfg->init.given[k];
        if (missing) {
            /* A partial file: a random point, then the file's values over
             * its constrained image (Stan's partial inits). */
            double r = cfg->init.radius > 0 ? cfg->init.radius : 2.0;
            mixed = drift_calloc(m->n_out ? m->n_out : 1, sizeof *mixed);
            if (!mixed)
                return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
            for (size_t k = 0; k < c->d; k++)
                theta[k] = -r + 2.0 * r * drift_rng_uniform(&c->rng);
            m->constrain(m->self, theta, mixed);
            for (size_t k = 0; k < m->n_out; k++)
                if (cfg->init.given[k])
                    mixed[k] = cfg->init.values[k];
            values = mixed;
        }
        int urc = m->unconstrain(m->self, values, theta, &me);
        drift_free(mixed);
        if (urc)
            return drift_chain_fail(c, DRIFT_EINVAL, "--init: %s", me.msg);
        break;
    }
    case DRIFT_INIT_POINTS:
        memcpy(theta, cfg->init.points + (size_t)(c->id - 1) * c->d,
               c->d * sizeof *theta);
        break;
    case DRIFT_INIT_MODE:
        /* Zeros until the run's mode is known (chain 1 searches from
         * there), then a draw of the Laplace approximation at it. */
        if (c->run && c->run->cv.ready)
            drift_mode_draw(&c->run->cv, &c->rng, theta);
        else
            memset(theta, 0, c->d * sizeof *theta);
        break;
    default:
        memset(theta, 0, c->d * sizeof *theta);
    }
    return DRIFT_OK;
}

/* --grad-noise's sd, sqrt(2B/h), from the chain's step size: 'h' in the
 * Langevin family, 'eta' in AGLD's. */
static int set_grad_noise(drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    if (!(cfg->step.grad_noise > 0))
        return DRIFT_OK;
    long k = drift_hparams_find(cfg->step.sampler->hparams,
                                cfg->step.sampler->n_hparams, "h");
    if (k < 0)
        k = drift_hparams_find(cfg->step.sampler->hparams,
                               cfg->step.sampler->n_hparams, "eta");
    if (k < 0 || isnan(c->hp[k]))
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "--grad-noise needs a sampler with a step "
                                "size 'h' or 'eta'; %s has none",
                                cfg->step.sampler->name);
    c->grad_noise_sd = sqrt(2.0 * cfg->step.grad_noise / c->hp[k]);
    return DRIFT_OK;
}

int drift_run_chain_setup(drift_chain *c, const drift_run_config *cfg,
                      unsigned id, double *theta)
{
    const drift_model *m = cfg->problem.model;
    memset(c, 0, sizeof *c);
    c->cfg = cfg;
    c->est.kind = (drift_gradient)cfg->step.gradient;
    c->model = m;
    c->id = id;
    c->d = m->dim;
    /* Across ranks the model holds this rank's share; the chain sees
     * every row. */
    c->N = cfg->ranks ? cfg->ranks->rows_total : m->n_rows;
    c->batch = cfg->step.batch ? cfg->step.batch
                          : (cfg->step.sampler->default_batch
                                 ? cfg->step.sampler->default_batch
                                 : DRIFT_DEFAULT_BATCH);
    if (c->N && c->batch > c->N)
        c->batch = c->N;
    c->t_start = drift_now();
    c->t_warm_end = -1;
    c->adapted_step = NAN;
    drift_adapt_metric_init(&c->metric, DRIFT_METRIC_UNIT, c->d, NULL);
    drift_adapt_schedule_make(cfg->budget.warmup, &c->sched);
    c->info.warmup = cfg->budget.warmup;
    c->info.iterations = cfg->budget.iters;
    c->info.passes = cfg->budget.passes;
    c->info.seconds = cfg->budget.seconds;
    c->info.chains = cfg->launch.chains ? cfg->launch.chains : 1;
    c->info.init_buffer = c->sched.init_buffer;
    c->info.term_buffer = c->sched.term_buffer;
    c->info.base_window = c->sched.base_window;
    drift_rng_seed(&c->rng, cfg->launch.seed, id);
    c->access_rng = c->rng;
    drift_rng_long_jump(&c->access_rng);
    c->noise_rng = c->access_rng;
    drift_rng_long_jump(&c->noise_rng);
    c->lp_rng = c->noise_rng; /* lp__ estimates (emit.c): a stream apart */
    drift_rng_long_jump(&c->lp_rng);
    c->ws_cap = c->batch > MIN_WS_ROWS ? c->batch : MIN_WS_ROWS;
    if (drift_stream_init(&c->stream, cfg->step.access, c->N, &c->access_rng,
                          c->ws_cap))
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    drift_advisor_init(&c->advisor, cfg->problem.mapped ? cfg->problem.data : NULL,
                       cfg->problem.mapped ? cfg->problem.fd : -1, cfg->problem.map);
    c->ws = m->workspace_new(m->self, c->ws_cap);
    c->rows_buf = drift_malloc_array(c->ws_cap, sizeof(size_t));
    c->gbuf = drift_calloc(c->d, sizeof(double));
    c->gbuf2 = drift_calloc(c->d, sizeof(double));
    c->ll_buf = drift_malloc_array(c->ws_cap, sizeof(double));
    /* Trajectory buffers only for continuous samplers: three vectors of
     * length d that a discrete sampler never touches (gigabytes at
     * D = 10^8). */
    int continuous = (cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
    if (continuous) {
        c->traj.m1 = drift_calloc(c->d, sizeof(double));
        c->traj.m2 = drift_calloc(c->d, sizeof(double));
        c->traj.seg = drift_calloc(c->d, sizeof(double));
    }
    c->n_diag = drift_chain_n_diag(cfg->step.sampler, c->d);
    c->row_len = 2 + c->n_diag + m->n_out;
    if (cfg->output.emit_segments) /* time__, duration__, x0.k__, v.k__ */
        c->row_len += 2 + 2 * c->d;
    else /* derived and generated quantities, scores */
        c->row_len += m->n_gen + (cfg->output.save_gradients ? c->d : 0);
    c->row_buf = drift_calloc(c->row_len, sizeof(double));
    if (!c->ws || !c->rows_buf || !c->gbuf || !c->gbuf2 ||
        !c->ll_buf || !c->row_buf ||
        (continuous && (!c->traj.m1 || !c->traj.m2 || !c->traj.seg)))
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory setting up chain %u", id);
    if (cfg->step.sampler->state_size) {
        c->state = drift_calloc(1, cfg->step.sampler->state_size);
        if (!c->state)
            return drift_chain_fail(c, DRIFT_ENOMEM,
                                    "out of memory for the sampler state");
    }
    c->hp = cfg->step.hp;
    /* A step size the run chooses is known only after the run's setup
     * (run_chain sets the noise then). */
    long auto_k = drift_hparams_step_size(cfg->step.sampler->hparams,
                                          cfg->step.sampler->n_hparams);
    if (!(auto_k >= 0 && isnan(cfg->step.hp[auto_k])) && set_grad_noise(c))
        return c->failed;
    return drift_run_chain_setup_init(c, theta);
}

/* The time averages of a continuous trajectory after warmup: mean[k] and
 * var[k] (d each) from the exact integrals.  0 when there is none. */
static int trajectory_moments(const drift_chain *c, double *mean, double *var)
{
    if (!(c->cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) || c->traj.t_mom <= 0)
        return 0;
    for (size_t k = 0; k < c->d; k++) {
        mean[k] = c->traj.m1[k] / c->traj.t_mom;
        double v = c->traj.m2[k] / c->traj.t_mom - mean[k] * mean[k];
        var[k] = v > 0 ? v : 0; /* rounding below zero for a still coordinate */
    }
    return 1;
}

static int budget_spent(const drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    /* Across ranks, signals and the clock count only as the group agreed
     * on them (each oracle's sum carries them), so that every rank of the
     * chain ends at the same step. */
    if (c->ext.shard ? drift_shard_stopped(c) != 0 : drift_stop_requested())
        return 1;
    if (cfg->budget.iters && c->iter >= cfg->budget.warmup + cfg->budget.iters)
        return 1;
    if (cfg->budget.warmup_only && c->iter >= cfg->budget.warmup)
        return 1;
    if (cfg->budget.passes > 0 && c->N &&
        (double)c->grads >= cfg->budget.passes * (double)c->N)
        return 1;
    if (!c->ext.shard && cfg->budget.seconds > 0 &&
        drift_now() - c->t_start >= cfg->budget.seconds)
        return 1;
    return 0;
}

/* Whether the chain stopped for a signal (across ranks, one that any rank
 * of its group received). */
static int interrupted(const drift_chain *c)
{
    return c->ext.shard ? drift_shard_stopped(c) == 1
                        : drift_stop_requested() != 0;
}

/* A chain's file once the chain has ended, until the run brings it to
 * the other chains' counts and commits it (w NULL: none). */
typedef struct chain_file {
    drift_writer *w;
    struct drift_csvout *out;
} chain_file;

/* The run's queue of chains: W worker threads take the next chain index
 * until none is left, so K chains run W at a time. */
typedef struct chain_queue {
    const drift_run_config *cfg;
    drift_run_shared *run;
    drift_chain_result *results;
    chain_file *files;
    drift_progress *prog;
    unsigned K, first;      /* this process's chains: ids first .. */
    unsigned next;          /* next chain index to start (under mu) */
    pthread_mutex_t mu;
} chain_queue;

/* The sampler's phase callback, when it has one. */
static void notify(drift_chain *c, drift_phase phase)
{
    const drift_sampler *s = c->cfg->step.sampler;
    if (s->phase)
        s->phase(c->state, &drift_services_table, c, phase);
}

/* After a step, once c->iter counts it: the end of a slow window (the
 * metric is set from it, then the sampler hears of it), the end of
 * warmup.  In the callbacks, iteration() is the number of steps done. */
static void after_step(drift_chain *c)
{
    uint64_t done = c->iter;
    uint64_t warmup = c->cfg->budget.warmup;
    if (done <= warmup && drift_adapt_window_ends(&c->sched, done)) {
        int last = drift_adapt_last_window_ends(&c->sched, done);
        if (drift_adapt_metric_update(&c->metric, last) < 0) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "the covariance of warmup window ending at iteration "
                     "%llu is not positive definite; the metric is kept",
                     (unsigned long long)done);
            drift_services_table.warn(c, msg);
        }
        drift_precond_window_end(c);
        notify(c, DRIFT_PHASE_WINDOW_END);
    }
    /* The adaptation block follows (csvout.c), before the first draw
     * after warmup; emit.c restarts thinning there. */
    if (done == warmup)
        notify(c, DRIFT_PHASE_WARMUP_END);
}

static int tune_step_size(drift_chain *c, long param);
static int plan_run(drift_chain *c, long param);
static int plan_continuous(drift_chain *c);
static int plan_affordable(const drift_chain *c);
static int check_given_step(drift_chain *c, long param);

/* Run-level setup, on chain 1 (c) while the other chains wait for it in
 * wait_setup: --gradient cv's mode search from chain 1's initial point
 * theta (given values or a Pathfinder draw, else zeros), then the step
 * size the user left to the engine (tune.h; its pilots use cv's estimates
 * when cv is on), then the sampler's own setup with the hyperparameters as chosen.  Their cost
 * stays in chain 1's count. */
static void run_setup(drift_chain *c, const double *theta)
{
    drift_run_shared *run = c->run;
    const drift_sampler *s = c->cfg->step.sampler;
    int ok = 1;
    if (c->cfg->step.gradient == DRIFT_GRADIENT_CV || c->cfg->plan.mode) {
        double *start = drift_calloc(c->d ? c->d : 1, sizeof *start);
        if (!start) {
            drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
            ok = 0;
        } else {
            if (c->cfg->init.mode == DRIFT_INIT_VALUES ||
                c->cfg->init.mode == DRIFT_INIT_POINTS)
                memcpy(start, theta, c->d * sizeof *start);
            c->phase = DRIFT_CHAIN_SETUP;
            ok = drift_mode_setup(c, start) == DRIFT_OK;
            c->phase = DRIFT_CHAIN_STEPPING;
            drift_free(start);
        }
    }
    if (ok && (s->flags & DRIFT_SAMPLER_CONTINUOUS) &&
        (c->cfg->plan.budget || c->cfg->plan.thin)) {
        c->phase = DRIFT_CHAIN_SETUP;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
        if (plan_continuous(c))
            ok = 0;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
        c->phase = DRIFT_CHAIN_STEPPING;
    } else if (ok) {
        long param = drift_hparams_step_size(s->hparams, s->n_hparams);
        if (param >= 0 && isnan(c->cfg->step.hp[param])) {
            c->phase = DRIFT_CHAIN_SETUP;
            drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
            if (c->cfg->plan.step && plan_affordable(c)
                    ? plan_run(c, param)
                    : tune_step_size(c, param))
                ok = 0;
            drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
            c->phase = DRIFT_CHAIN_STEPPING;
            if (ok)
                c->hp = run->hp;
        } else if (param >= 0 && c->cfg->plan.check &&
                   c->cfg->budget.seconds <= 0) {
            c->phase = DRIFT_CHAIN_SETUP;
            drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
            if (check_given_step(c, param))
                ok = 0;
            drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
            c->phase = DRIFT_CHAIN_STEPPING;
        }
    }
    if (ok && run->cv.ready && !c->cfg->ckpt.resume) {
        c->phase = DRIFT_CHAIN_SETUP;
        if (drift_plancheck_setup(c))
            ok = 0;
        c->phase = DRIFT_CHAIN_STEPPING;
    }
    uint64_t before = c->grads;
    if (ok && s->setup) {
        c->phase = DRIFT_CHAIN_SETUP;
        void *shared = NULL;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
        int rc = s->setup(&drift_services_table, c, c->hp, &shared);
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
        c->phase = DRIFT_CHAIN_STEPPING;
        if (rc || c->failed) {
            if (!c->failed) {
                if (rc == DRIFT_ENONFINITE && c->nonfinite[0])
                    drift_chain_fail(c, rc, "%s", c->nonfinite);
                else
                    drift_chain_fail(c, rc ? rc : DRIFT_EINTERNAL,
                                     "chain %u: the run-level setup of "
                                     "sampler %s failed (status %d)",
                                     c->id, s->name, rc);
            }
            ok = 0;
        }
        run->shared = shared;
        run->setup_grads = c->grads - before;
    }
    pthread_mutex_lock(&run->lock);
    run->state = ok ? 1 : -1;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
}

/* Across ranks, a group without the run's first chain still needs what
 * the sampler's setup leaves for every chain: it runs the setup on a
 * chain of its own made as the first chain is (same id, same streams),
 * so that it computes what the first chain's group computes, and drops
 * it (its evaluations count in no chain, as in one process they count in
 * the first chain's alone).  c lends its channel; its own streams and
 * initial point are left as they were. */
static void run_setup_apart(drift_chain *c)
{
    drift_chain s;
    unsigned first = c->cfg->launch.first_chain_id ? c->cfg->launch.first_chain_id : 1;
    double *scratch_theta = drift_calloc(c->d ? c->d : 1, sizeof(double));
    int rc = scratch_theta
                 ? drift_run_chain_setup(&s, c->cfg, first, scratch_theta)
                 : (memset(&s, 0, sizeof s),
                    drift_chain_fail(&s, DRIFT_ENOMEM, "out of memory"));
    s.run = c->run;
    s.stop = 1;
    s.ext.shard = c->ext.shard;
    if (rc) {
        /* Every rank fails alike (the setup is the same everywhere). */
        drift_run_shared *run = c->run;
        pthread_mutex_lock(&run->lock);
        run->state = -1;
        pthread_cond_broadcast(&run->cond);
        pthread_mutex_unlock(&run->lock);
    } else {
        /* (--gradient cv, whose mode search this would repeat, is
         * refused across ranks) */
        run_setup(&s, scratch_theta);
    }
    if (s.failed)
        drift_chain_fail(c, s.failed, "%s", s.message);
    s.ext.shard = NULL;
    drift_run_chain_release(&s);
    drift_free(scratch_theta);
}

/* Chain 1 failed before its setup: the others must not wait for it. */
static void run_setup_failed(drift_run_shared *run)
{
    pthread_mutex_lock(&run->lock);
    run->state = -1;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
}

/* Waits for chain 1's setup; 0 when it succeeded. */
static int wait_setup(drift_chain *c)
{
    drift_run_shared *run = c->run;
    pthread_mutex_lock(&run->lock);
    while (run->state == 0)
        pthread_cond_wait(&run->cond, &run->lock);
    int state = run->state;
    pthread_mutex_unlock(&run->lock);
    if (state > 0)
        return 0;
    drift_chain_fail(c, DRIFT_EINVAL,
                     "chain %u: not started, as the sampler's run-level "
                     "setup failed on the first chain",
                     c->id);
    return -1;
}

/* Whether the initial point was drawn (wholly or in part) at random. */
static int random_init(const drift_run_config *cfg)
{
    if (cfg->init.mode == DRIFT_INIT_RANDOM ||
        cfg->init.mode == DRIFT_INIT_MODE)
        return 1;
    if (cfg->init.mode != DRIFT_INIT_VALUES || !cfg->init.given)
        return 0;
    for (size_t k = 0; k < cfg->problem.model->n_out; k++)
        if (!cfg->init.given[k])
            return 1;
    return 0;
}

/* Stan's initialisation: a random initial point is drawn again, up to 100
 * times in all, while the log density or its gradient is not finite there
 * (over all rows for full-data samplers, whose first step evaluates them
 * anyway; the prior alone for minibatch samplers, for which a full pass is
 * a real cost).  Given values are the sampler's to judge.  Non-zero when
 * the chain failed. */
static int find_init(drift_chain *c, double *theta)
{
    const drift_run_config *cfg = c->cfg;
    if (!random_init(cfg) || c->d == 0)
        return 0;
    const drift_services *svc = &drift_services_table;
    int full = (cfg->step.sampler->flags & DRIFT_SAMPLER_FULL_DATA) != 0;
    enum { TRIES = 100 };
    for (int t = 0; t < TRIES; t++) {
        double U;
        c->nonfinite[0] = '\0';
        int rc = full ? svc->grad_full(c, theta, c->gbuf2, &U)
                      : svc->grad_prior(c, theta, c->gbuf2, &U);
        if (rc == DRIFT_OK)
            return 0;
        if (rc != DRIFT_ENONFINITE || c->failed)
            return c->failed ? c->failed : drift_chain_fail(c, rc,
                "chain %u: evaluating the initial point failed (status %d)",
                c->id, rc);
        if (t + 1 == TRIES)
            break;
        /* Redraw: all of it, or the values the init file left out. */
        if (drift_run_chain_setup_init(c, theta))
            return c->failed;
    }
    double r = cfg->init.radius > 0 ? cfg->init.radius : 2.0;
    return drift_chain_fail(c, DRIFT_ENONFINITE,
                            "chain %u: no initial point with a finite log "
                            "density and gradient in %d random draws from "
                            "U(%g, %g) on the unconstrained scale (the last: "
                            "%.300s); give initial values with --init FILE "
                            "(or a smaller radius, --init 0.5), or check "
                            "the model's support",
                            c->id, TRIES, -r, r, c->nonfinite);
}

/* ---- the step size chosen for the user (tune.h) ------------------------ */

/* The pilot chains of the step-size search: one at a time, each a chain
 * of its own (no file, draws discarded, warnings muted) made like chain
 * 1 and seeded as it is, so every pilot starts at chain 1's initial point
 * with the same random numbers. */
typedef struct pilot_ctx {
    drift_chain *owner;         /* chain 1, which pays for the pilots */
    drift_run_config cfg;       /* the run's, for a pilot */
    double *hp;                 /* the run's, with the trial step size */
    size_t param;
    drift_chain chain;
    double *theta;
    drift_run_shared shared;    /* a sampler's setup, per pilot */
    uint64_t grads;             /* what closed pilots spent */
    uint64_t calls;             /* calls into the sampler so far */
} pilot_ctx;

/* Each pilot call is a call of chain 1's setup for --step-timeout's
 * watch: a new count per call, so that only one call that does not
 * return counts as hung, not the pilots' whole time. */
static void pilot_calling(void *user)
{
    pilot_ctx *p = user;
    drift_guard_call(p->owner->ext.guard, DRIFT_GUARD_SETUP, ++p->calls);
}

static int pilot_open(void *user, double h, drift_chain **out,
                      double **theta)
{
    pilot_ctx *p = user;
    const drift_sampler *s = p->cfg.step.sampler;
    const drift_services *svc = &drift_services_table;
    if (p->param != SIZE_MAX) /* a sampler with a step size */
        p->hp[p->param] = h;
    drift_chain *pc = &p->chain;
    *out = pc;
    *theta = p->theta;
    memset(&p->shared, 0, sizeof p->shared);
    /* The pilot sees the run's mode (--gradient cv's estimates, and the
     * preconditioners samplers build from its curvature) as the chains
     * will: its samplers' setup has a block of its own. */
    if (p->owner->run)
        p->shared.cv = p->owner->run->cv;
    int rc = drift_run_chain_setup(pc, &p->cfg, p->owner->id, p->theta);
    pc->mute = 1;
    pc->stop = 1;
    pc->run = &p->shared;
    if (!rc) /* watched as the run's chains are (muted) */
        rc = drift_watch_new(pc);
    if (rc || pc->failed)
        return pc->failed ? pc->failed : rc;
    /* --init mode: the chains start at a draw of the mode's Laplace
     * approximation (the same draw for every pilot: the same stream), not
     * at the zeros chain setup left before it saw the mode. */
    if (p->cfg.init.mode == DRIFT_INIT_MODE &&
        drift_run_chain_setup_init(pc, p->theta))
        return pc->failed;
    if (find_init(pc, p->theta))
        return pc->failed;
    if (s->setup) {
        void *shared = NULL;
        pc->phase = DRIFT_CHAIN_SETUP;
        pilot_calling(p);
        rc = s->setup(svc, pc, p->hp, &shared);
        pc->phase = DRIFT_CHAIN_STEPPING;
        p->shared.shared = shared;
        if (rc || pc->failed)
            return pc->failed ? pc->failed : rc;
    }
    pc->phase = DRIFT_CHAIN_INIT;
    pilot_calling(p);
    rc = s->init(pc->state, svc, pc, p->hp, p->theta);
    pc->phase = DRIFT_CHAIN_STEPPING;
    return rc ? rc : pc->failed;
}

static void pilot_close(void *user, drift_chain *c)
{
    pilot_ctx *p = user;
    p->grads += c->grads;
    if (p->cfg.step.sampler->finish && c->state)
        p->cfg.step.sampler->finish(c->state, &drift_services_table, c);
    drift_run_chain_release(c);
    for (size_t k = 0; k < p->shared.n_allocs; k++)
        drift_free(p->shared.allocs[k]);
    drift_free(p->shared.allocs);
    memset(&p->shared, 0, sizeof p->shared);
}

/* p as the pilots of chain 1 (c) make it: the run's configuration for
 * chains of their own (no file, no warmup, draws discarded, steps steps),
 * the hyperparameters pilot_hp (the step size at param varies), starting
 * point buffer theta (d values). */
static void pilot_ctx_init(pilot_ctx *p, drift_chain *c, double *pilot_hp,
                           double *theta, size_t param, uint64_t steps)
{
    p->owner = c;
    p->cfg = *c->cfg;
    p->cfg.step.hp = pilot_hp;
    p->cfg.step.hp_set = NULL;
    p->cfg.budget.warmup = 0;
    p->cfg.budget.iters = steps;
    p->cfg.budget.passes = 0;
    p->cfg.budget.seconds = 0;
    p->cfg.budget.warmup_only = 0;
    p->cfg.output.save_warmup = 0;
    p->cfg.budget.thin = 1;
    p->cfg.launch.chains = 1;
    p->cfg.output.path = NULL;
    p->cfg.output.on_row = NULL;
    p->cfg.output.on_trajectory = NULL;
    p->cfg.heldout.model = NULL;
    p->cfg.output.progress = 0;
    p->cfg.output.emit_segments = 0;
    p->cfg.ckpt.dir = NULL;
    p->cfg.ckpt.resume = 0;
    p->cfg.output.save_gradients = 0;
    p->cfg.output.discard_draws = 1;
    p->hp = pilot_hp;
    p->param = param;
    p->theta = theta;
}

/* Rows of a control-variate score estimate in the pilots. */
#define TUNE_SCORE_ROWS 128
/* Draws scored per pilot. */
#define TUNE_DRAWS 64
/* Trials a search typically runs (for sizing pilots to a budget). */
#define TUNE_TRIALS 8
/* Share of chain 1's --passes or --seconds budget the pilots may take. */
#define TUNE_SHARE 0.25

/* How long the pilots are: a tenth of a chain's steps (100 to 20000),
 * and, under a --passes budget, at most what TUNE_SHARE of chain 1's
 * passes pays for in TUNE_TRIALS pilots and their scores.  0 when that
 * is under 40 steps: too little to choose by. */
static uint64_t tune_steps(const drift_chain *c, size_t draws,
                           size_t score_rows)
{
    const drift_run_config *cfg = c->cfg;
    /* The run's length in steps: its iterations, or the steps a budget in
     * passes pays for at one batch a step, or CmdStan's 2000. */
    uint64_t L = cfg->budget.iters ? cfg->budget.warmup + cfg->budget.iters
                            : cfg->budget.warmup > 2000 ? cfg->budget.warmup : 2000;
    if (!cfg->budget.iters && cfg->budget.passes > 0 && c->N && c->batch)
        L = (uint64_t)fmin(1e12, cfg->budget.passes * (double)c->N /
                                     (double)c->batch);
    uint64_t steps = L / 10;
    if (steps < 100)
        steps = 100;
    if (steps > 20000)
        steps = 20000;
    if (cfg->budget.passes > 0 && c->N) {
        double N = (double)c->N;
        double per_trial = TUNE_SHARE * cfg->budget.passes * N / TUNE_TRIALS;
        /* Exact scores, or estimates around each pilot's own mean (one
         * full-data gradient a pilot), and the Hessian's trace at each
         * draw (tune.c: one more gradient there, or two on fresh rows). */
        double score = c->N <= 2 * score_rows
                           ? 2.0 * (double)draws * N
                           : (double)draws * 4.0 * (double)score_rows + N;
        double fit = (per_trial - score) / (double)(c->batch ? c->batch : 1);
        if (fit < 40)
            return 0;
        if (fit < (double)steps)
            steps = (uint64_t)fit;
    }
    return steps;
}

/* Chooses the step size (hyperparameter param) for the run on chain 1
 * (c), whose count gets the pilots' cost; run->hp gets the
 * hyperparameters with the choice, run->tune how it was made.  Non-zero
 * when the chain failed. */
static int tune_step_size(drift_chain *c, long param)
{
    drift_run_shared *run = c->run;
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    const drift_hparam *hp = &s->hparams[param];
    size_t n = s->n_hparams;
    run->hp = drift_calloc(n ? n : 1, sizeof(double));
    run->tune = drift_calloc(1, sizeof *run->tune);
    pilot_ctx *p = drift_calloc(1, sizeof *p);
    double *pilot_hp = drift_calloc(n ? n : 1, sizeof(double));
    double *theta = drift_calloc(c->d ? c->d : 1, sizeof(double));
    if (!run->hp || !run->tune || !p || !pilot_hp || !theta) {
        drift_free(p);
        drift_free(pilot_hp);
        drift_free(theta);
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory choosing the step size");
    }
    memcpy(run->hp, cfg->step.hp, n * sizeof(double));
    memcpy(pilot_hp, cfg->step.hp, n * sizeof(double));
    size_t rows = c->N < 2 * TUNE_SCORE_ROWS ? c->N : TUNE_SCORE_ROWS;
    if (c->batch > rows && c->batch <= c->N / 2)
        rows = c->batch;
    uint64_t steps = tune_steps(c, TUNE_DRAWS, rows);
    char grid[400];
    int rc = DRIFT_OK;
    if (steps == 0) {
        run->hp[param] = hp->def;
        snprintf(run->tune_note, sizeof run->tune_note,
                 "%s = %.4g, %s's default, not chosen: --passes %g leaves "
                 "the step-size pilots too little (a quarter of chain 1's "
                 "budget); give a larger budget, or --set %s=VALUE",
                 hp->name, hp->def, s->name, cfg->budget.passes, hp->name);
        drift_free(run->tune);
        run->tune = NULL;
        snprintf(run->tune_header, sizeof run->tune_header,
                 "# tune_step_size = %s (default: not chosen)\n"
                 "# drift: %s\n",
                 hp->name, run->tune_note);
        if (!cfg->output.quiet)
            fprintf(drift_msg_stream(), "drift: warning: %s\n",
                    run->tune_note);
        goto out;
    }
    pilot_ctx_init(p, c, pilot_hp, theta, (size_t)param, steps);
    drift_tune_config tc = {
        s, (size_t)param, c->d, c->N, c->batch, steps, TUNE_DRAWS, rows,
        cfg->budget.seconds > 0 ? TUNE_SHARE * cfg->budget.seconds : 0, cfg->launch.seed, NULL,
        NULL};
    /* Under --gradient cv the pilots' KSD is measured in the posterior
     * sds the mode's curvature gives (tune.h: scale). */
    double *scale = NULL, *chol = NULL;
    if (run->cv.ready && run->cv.inv_metric &&
        (scale = drift_calloc(c->d ? c->d : 1, sizeof *scale))) {
        for (size_t k = 0; k < c->d; k++) {
            double v = run->cv.inv_metric[k];
            scale[k] = v > 0 && isfinite(v) ? sqrt(v) : 1.0;
        }
        tc.scale = scale;
    }
    /* and in the dense metric's, where cv made one */
    if (run->cv.ready && run->cv.inv_dense &&
        (chol = drift_malloc_array(c->d * c->d, sizeof *chol))) {
        if (drift_adapt_cholesky(run->cv.inv_dense, c->d, chol) == 0)
            tc.chol = chol;
    }
    drift_tune_ops ops = {p, pilot_open, pilot_close, pilot_calling};
    drift_err e = {{0}};
    rc = drift_tune_step_size(&tc, &ops, hp->def, hp->lo, hp->hi, run->tune,
                              &e);
    drift_free(scale);
    drift_free(chol);
    c->grads += p->grads;
    run->tune->grads = p->grads;
    if (rc) {
        if (rc == DRIFT_ESTOP && drift_stop_requested())
            drift_chain_fail(c, DRIFT_ESTOP,
                             "chain %u: stopped by a signal while choosing "
                             "%s's step size, before any draw",
                             c->id, s->name);
        else if (rc == DRIFT_ENUMERIC || rc == DRIFT_ENOMEM)
            drift_chain_fail(c, rc, "chain %u: choosing the step size: %s",
                             c->id, e.msg);
        else /* the pilot's failure is the chain's */
            drift_chain_fail(c, rc, "%s", e.msg);
        goto out;
    }
    run->hp[param] = run->tune->h;
    drift_tune_format_grid(run->tune, grid, sizeof grid);
    size_t b = 0;
    for (size_t j = 1; j < run->tune->n_trials; j++)
        if (run->tune->trials[j].h == run->tune->h)
            b = j;
    double best = run->tune->trials[b].ksd2;
    char cost[64] = "";
    if (c->N)
        snprintf(cost, sizeof cost, "%.3g data passes and ",
                 (double)p->grads / (double)c->N);
    char ratios[400];
    drift_tune_format_ratios(run->tune, ratios, sizeof ratios);
    snprintf(run->tune_note, sizeof run->tune_note,
             "%s = %.4g chosen for %s: its pilot's kernel Stein "
             "discrepancy, %.3g, is the smallest, or within 10%% of it at "
             "the largest step whose draws keep the Stein identity "
             "(ratio %.3g, at most %.3g), of %zu pilot chains of %llu "
             "steps (%s:KSD %s)%s; they "
             "cost %s%.3g s, counted in chain %u; "
             "--set %s=VALUE chooses it yourself",
             hp->name, run->tune->h, s->name, sqrt(best > 0 ? best : 0),
             run->tune->trials[b].stein_ratio,
             drift_tune_ratio_bound(TUNE_DRAWS, c->d),
             run->tune->n_trials, (unsigned long long)steps, hp->name, grid,
             run->tune->cut_short ? " (cut short by the time budget)" : "",
             cost, run->tune->seconds, c->id, hp->name);
    snprintf(run->tune_header, sizeof run->tune_header,
             "# tune_step_size = %s\n"
             "# tune_choice = %.10g\n"
             "# tune_grid = %s\n"
             "# tune_stein_ratio = %s\n"
             "# tune_pilot_grads = %llu\n"
             "# drift: %s was chosen by %zu pilot chains of %llu steps from "
             "chain 1's initial\n"
             "#   point, each scored by the kernel Stein discrepancy (IMQ, "
             "c = 1, beta = -1/2)\n"
             "#   of %d draws from its second half, with %s scores;\n"
             "#   tune_grid lists %s:KSD in the order run; the smallest KSD "
             "wins, or of\n"
             "#   the steps within 10%% of it the largest whose draws' "
             "mean |grad log p|^2 over\n"
             "#   their mean trace of the Hessian of -log p "
             "(tune_stein_ratio; 1 for exact\n"
             "#   draws) is at most %.3g, else the smallest of them; the "
             "pilots' cost is in\n"
             "#   chain 1's grads__\n",
             hp->name, run->tune->h, grid, ratios,
             (unsigned long long)run->tune->grads, hp->name,
             run->tune->n_trials, (unsigned long long)steps, TUNE_DRAWS,
             run->tune->exact ? "exact full-data"
                              : "control-variate minibatch",
             hp->name, drift_tune_ratio_bound(TUNE_DRAWS, c->d));
    if (!cfg->output.quiet)
        fprintf(drift_msg_stream(), "drift: %s\n", run->tune_note);
    /* Read against what exact draws would give: all the pilots may be
     * far from the target (too short, or a sampler that cannot get
     * there), and the ranking then says little. */
    double exact = run->tune->trials[b].ksd2_exact;
    if (isfinite(exact) && exact > 0 && best > 25 * exact) {
        /* Under plain minibatch gradients on a model with rows, what
         * helps most is --gradient cv (its estimates and the metric of
         * its mode: on raw-scale regressions plain SGLD runs away at
         * every step size worth taking). */
        int cv_would = !run->cv.ready && c->N > 0 &&
                       !(s->flags & (DRIFT_SAMPLER_FULL_DATA |
                                     DRIFT_SAMPLER_OWN_ESTIMATES |
                                     DRIFT_SAMPLER_PICKS_ESTIMATOR));
        char warn[800];
        snprintf(warn, sizeof warn,
                 "no pilot of %s came near the target: the best KSD, %.3g "
                 "at %s = %.4g, is %.0f times what as many exact draws "
                 "would give there (about %.3g); the chains are unlikely "
                 "to be accurate either: %s",
                 s->name, sqrt(best), hp->name, run->tune->h,
                 sqrt(best / exact), sqrt(exact),
                 cv_would ? "run with --gradient cv (gradient estimates "
                            "centred at the posterior's mode and a metric "
                            "from its curvature, which make step sizes "
                            "fit every parameter's scale), or give a "
                            "larger budget (the pilots grow with it)"
                          : "give a larger budget (the pilots grow with "
                            "it), or change the sampler's other settings");
        fprintf(drift_msg_stream(), "drift: warning: %s\n", warn);
        size_t used = strlen(run->tune_header);
        snprintf(run->tune_header + used, sizeof run->tune_header - used,
                 "# drift: warning: %s\n", warn);
    }
out:
    drift_free(p);
    drift_free(pilot_hp);
    drift_free(theta);
    return rc ? -1 : 0;
}

/* ---- the engine's plan for a minibatch sampler (biascheck.h) ----------- */

/* Steps the plan's pilots may take together: PLAN_PILOT_PASSES data
 * passes, or PLAN_PILOT_STEPS where that is more (a minibatch step costs
 * the same at any N), but that floor only as far as PLAN_PILOT_MAX_PASSES
 * passes or PLAN_PILOT_ROWS rows reach (a large --batch must not make the
 * pilots cost thousands of passes). */
#define PLAN_PILOT_STEPS 200000
#define PLAN_PILOT_PASSES 20.0
#define PLAN_PILOT_MAX_PASSES 150.0
#define PLAN_PILOT_ROWS 2e7

static double plan_pilot_steps(double N, double batch)
{
    double floor_steps = fmin(PLAN_PILOT_STEPS,
                              fmax(PLAN_PILOT_MAX_PASSES * N / batch,
                                   PLAN_PILOT_ROWS / batch));
    return fmax(PLAN_PILOT_PASSES * N / batch, floor_steps);
}
/* First length of a compared pilot. */
#define PLAN_FIRST_STEPS 2000
/* Iterations a chain may always be given, whatever the plan's cap in passes
 * (minibatch steps cost the same at any N), as far as PLAN_MIN_CAP_TIMES
 * times the cap's passes or PLAN_PILOT_ROWS rows reach (a large
 * --batch). */
#define PLAN_MIN_CAP_STEPS 200000.0
#define PLAN_MIN_CAP_TIMES 10.0

/* A chain's iterations under the plan's cap of `passes` data passes, at
 * per_step rows an iteration, with at_least as the floor above. */
static double plan_cap(double passes, double N, double per_step,
                       double at_least)
{
    double cap = passes * N / per_step;
    return fmax(cap, fmin(at_least, fmax(PLAN_MIN_CAP_TIMES * cap,
                                         PLAN_PILOT_ROWS / per_step)));
}
/* Under a --passes or --seconds budget: the pilots' share of it, and the
 * burn-in's most of what a chain's budget pays for. */
#define PLAN_BUDGET_SHARE 0.25
#define PLAN_BUDGET_WARMUP 0.2
/* (Not for a continuous sampler's segments, which cost many minibatches
 * each.) */
/* Burn-in: this many autocorrelation times, at least PLAN_MIN_WARMUP. */
#define PLAN_WARMUP_TAUS 10.0
#define PLAN_MIN_WARMUP 200

/* The bias check's Stein ratio of a pilot's draws (user: the scores'
 * drift_tune_config). */
static int plan_stein(void *user, drift_chain *c, const double *x,
                      double *ratio, double *se)
{
    return drift_tune_stein(user, c, x, ratio, se);
}

/* What the plan's and the check's pilots need: their context, their
 * hyperparameters, a starting point, and the whitened units of the run's
 * mode (sds of its diagonal curvature; the dense metric's lower factor
 * where cv made one and want_chol asks for it). */
typedef struct plan_scratch {
    pilot_ctx *p;
    double *pilot_hp, *theta, *scale, *chol;
} plan_scratch;

static void plan_scratch_free(plan_scratch *ps)
{
    drift_free(ps->p);
    drift_free(ps->pilot_hp);
    drift_free(ps->theta);
    drift_free(ps->scale);
    drift_free(ps->chol);
    memset(ps, 0, sizeof *ps);
}

/* ps for chain 1 (c), the step size at param (SIZE_MAX: none); DRIFT_OK,
 * or the chain failed for want of memory. */
static int plan_scratch_new(drift_chain *c, size_t param, int want_chol,
                            plan_scratch *ps)
{
    drift_run_shared *run = c->run;
    const drift_run_config *cfg = c->cfg;
    size_t n = cfg->step.sampler->n_hparams, d = c->d;
    memset(ps, 0, sizeof *ps);
    ps->p = drift_calloc(1, sizeof *ps->p);
    ps->pilot_hp = drift_calloc(n ? n : 1, sizeof(double));
    ps->theta = drift_calloc(d ? d : 1, sizeof(double));
    ps->scale = drift_calloc(d ? d : 1, sizeof(double));
    if (want_chol && run->cv.ready && run->cv.inv_dense)
        ps->chol = drift_malloc_array(d * d, sizeof(double));
    if (!ps->p || !ps->pilot_hp || !ps->theta || !ps->scale) {
        plan_scratch_free(ps);
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory planning the run");
    }
    memcpy(ps->pilot_hp, cfg->step.hp, n * sizeof(double));
    pilot_ctx_init(ps->p, c, ps->pilot_hp, ps->theta, param, 0);
    for (size_t k = 0; k < d; k++) {
        double v = run->cv.ready ? run->cv.inv_metric[k] : 1.0;
        ps->scale[k] = v > 0 && isfinite(v) ? sqrt(v) : 1.0;
    }
    if (ps->chol && drift_adapt_cholesky(run->cv.inv_dense, d, ps->chol)) {
        drift_free(ps->chol);
        ps->chol = NULL;
    }
    return DRIFT_OK;
}

/* The bias check's way to move the run's centre (user: the scratch's
 * owner): the control variates, the metric and the starting draws become
 * those at x, and the plan's whitened units the new metric's. */
typedef struct plan_centre {
    drift_chain *c;
    plan_scratch *ps;
} plan_centre;

static int plan_recentre(void *user, const double *x)
{
    plan_centre *pc = user;
    drift_chain *c = pc->c;
    const drift_cv *cv = &c->run->cv;
    size_t d = c->d;
    int rc = drift_mode_recentre(c, x);
    if (rc)
        return rc;
    for (size_t k = 0; k < d; k++)
        pc->ps->scale[k] = sqrt(cv->inv_metric[k]);
    if (pc->ps->chol &&
        (!cv->inv_dense ||
         drift_adapt_cholesky(cv->inv_dense, d, pc->ps->chol))) {
        memset(pc->ps->chol, 0, d * d * sizeof(double));
        for (size_t k = 0; k < d; k++)
            pc->ps->chol[k * d + k] = pc->ps->scale[k];
    }
    return DRIFT_OK;
}

/* The largest Monte Carlo error, in posterior sds, that the plan's
 * budget allows the mean of the worst of d coordinates. */
#define PLAN_MC_SD 0.07

/* Effective draws a chain the plan sizes a run for: BIASCHECK_ESS, or
 * more where the largest of d coordinates' Monte Carlo errors, about
 * sqrt(2 ln 2d) / sqrt(the chains' effective draws) posterior sds, would
 * pass PLAN_MC_SD: every coordinate's mean, not the typical one's, is
 * then within a small fraction of its sd (at 4 chains: 400 up to d = 25,
 * 470 at d = 50, 653 at d = 300). */
static double plan_ess(size_t d, unsigned chains)
{
    double z = sqrt(2 * log(2.0 * (double)(d ? d : 1)));
    double need = (z / PLAN_MC_SD) * (z / PLAN_MC_SD) /
                  (double)(chains ? chains : 1);
    return fmax(BIASCHECK_ESS, ceil(need));
}

/* The warning of a plan whose cap of max_passes a chain cut the run to
 * iters (unit: "iterations" or "segments") below the ess effective draws
 * an autocorrelation time tau asks for. */
static void cap_warning(char *warn, size_t size, const char *name,
                        const char *unit, double tau, double ess,
                        double max_passes, uint64_t iters)
{
    snprintf(warn, size,
             "the plan for %s needs about %.0f %s a chain for %.0f "
             "effective draws; the plan's cap of %g passes a chain allows "
             "%llu: expect about %.0f; give --iter or --passes for more",
             name, ceil(ess * tau), unit, ess, max_passes,
             (unsigned long long)iters, (double)iters / tau);
}

/* A warning of the plan's on standard error and in the header's note. */
static void plan_warn(drift_run_shared *run, const char *warn)
{
    fprintf(drift_msg_stream(), "drift: warning: %s\n", warn);
    size_t used = strlen(run->tune_header);
    snprintf(run->tune_header + used, sizeof run->tune_header - used,
             "# drift: warning: %s\n", warn);
}

/* Steps the plan's search needs at the least: a scan and a pair of
 * first-length pilots. */
#define PLAN_MIN_STEPS 6000.0

/* Whether a budget in passes leaves the plan's search room (its share of
 * chain 1's budget holds PLAN_MIN_STEPS steps); if not, the step size is
 * chosen as where the plan does not apply (the KSD search keeps the
 * sampler's default, and says so, when it has no room either). */
static int plan_affordable(const drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    if (!(cfg->budget.passes > 0) || c->N == 0)
        return 1;
    double batch = (double)(c->batch ? c->batch : 1);
    return PLAN_BUDGET_SHARE * cfg->budget.passes * (double)c->N / batch >=
           PLAN_MIN_STEPS;
}

/* Chooses the step size (hyperparameter param) on chain 1 (c) by the bias
 * check, and the iterations, burn-in and thinning the user left to the
 * plan; run->hp and run->plan_cfg get them, run->tune_note and
 * run->tune_header what was chosen and why.  The pilots' cost is chain
 * 1's.  Non-zero when the chain failed. */
static int plan_run(drift_chain *c, long param)
{
    drift_run_shared *run = c->run;
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    const drift_hparam *hp = &s->hparams[param];
    size_t n = s->n_hparams, d = c->d;
    double ess = plan_ess(d, cfg->launch.chains);
    plan_scratch ps;
    int rc = plan_scratch_new(c, (size_t)param, 1, &ps);
    if (rc)
        return -1;
    pilot_ctx *p = ps.p;
    double *scale = ps.scale, *chol = ps.chol;
    run->hp = drift_calloc(n ? n : 1, sizeof(double));
    if (!run->hp) {
        rc = drift_chain_fail(c, DRIFT_ENOMEM,
                              "out of memory planning the run");
        goto out;
    }
    memcpy(run->hp, cfg->step.hp, n * sizeof(double));
    double N = (double)c->N, batch = (double)(c->batch ? c->batch : 1);
    double per_step = batch * (cfg->step.gradient == DRIFT_GRADIENT_CV &&
                                       !run->cv.s
                                   ? 2.0
                                   : 1.0);
    double allow = plan_pilot_steps(N, batch);
    /* Under a budget in passes the pilots take at most a share of chain
     * 1's (the mode search has had its own); under one in seconds, a
     * share of the time. */
    if (cfg->budget.passes > 0 && N > 0)
        allow = fmin(allow, PLAN_BUDGET_SHARE * cfg->budget.passes * N / per_step);
    drift_biascheck_config bc = {
        s, d, hp->def, hp->lo, hp->hi,
        run->cv.ready ? run->cv.mode : NULL, chol, scale,
        (uint64_t)fmin(allow, 1e12), PLAN_FIRST_STEPS, 0, NULL, NULL, NULL,
        cfg->budget.seconds > 0 ? PLAN_BUDGET_SHARE * cfg->budget.seconds : 0, NULL, NULL};
    /* The Stein check's scores, as the KSD search makes them. */
    size_t rows = c->N < 2 * TUNE_SCORE_ROWS ? c->N : TUNE_SCORE_ROWS;
    drift_tune_config tc = {s, (size_t)param, d, c->N, c->batch, 0,
                            TUNE_DRAWS, rows, 0, cfg->launch.seed,
                            chol ? NULL : scale, chol};
    bc.stein_draws = TUNE_DRAWS;
    bc.stein = plan_stein;
    bc.stein_user = &tc;
    plan_centre pcen = {c, &ps};
    if (run->cv.ready && cfg->step.gradient == DRIFT_GRADIENT_CV) {
        bc.recentre = plan_recentre;
        bc.recentre_user = &pcen;
    }
    drift_tune_ops ops = {p, pilot_open, pilot_close, pilot_calling};
    drift_biascheck_result r;
    drift_err e = {{0}};
    rc = drift_biascheck_step_search(&bc, &ops, &r, &e);
    c->grads += p->grads;
    if (rc) {
        if (rc == DRIFT_ESTOP && drift_stop_requested())
            drift_chain_fail(c, DRIFT_ESTOP,
                             "chain %u: stopped by a signal while choosing "
                             "%s's step size, before any draw",
                             c->id, s->name);
        else
            drift_chain_fail(c, rc, "chain %u: choosing the step size: %s",
                             c->id, e.msg);
        goto out;
    }
    run->hp[param] = r.h;

    /* The run's length from the chosen pilot's autocorrelation time. */
    run->plan_cfg = *cfg;
    drift_run_config *pc = &run->plan_cfg;
    double tau = isfinite(r.tau) ? r.tau : NAN;
    /* Unverified: the run is still sized by the last pilot's mixing (at
     * the step taken, about h_seen / h times slower), so that a budget
     * too small is not added to a step that could not be checked. */
    int tau_guess = 0;
    if (!isfinite(tau) && isfinite(r.tau_seen) && r.h_seen > 0 && r.h > 0) {
        tau = r.tau_seen * fmax(1.0, r.h_seen / r.h);
        tau_guess = 1;
    }
    int capped = 0;
    if (cfg->plan.warmup) {
        pc->budget.warmup = isfinite(tau)
                         ? (uint64_t)fmax(PLAN_MIN_WARMUP,
                                          ceil(PLAN_WARMUP_TAUS * tau))
                         : 1000;
        /* Under a budget in passes or seconds the burn-in leaves most of
         * a chain's budget to draws. */
        double room = INFINITY;
        if (cfg->budget.passes > 0 && N > 0)
            room = cfg->budget.passes * N / per_step;
        if (cfg->budget.seconds > 0 && r.steps > 0) {
            double per = (drift_now() - c->t_start) / (double)r.steps;
            if (per > 0)
                room = fmin(room, cfg->budget.seconds / per);
        }
        if (isfinite(room) &&
            (double)pc->budget.warmup > PLAN_BUDGET_WARMUP * room)
            pc->budget.warmup = (uint64_t)(PLAN_BUDGET_WARMUP * room);
    }
    if (cfg->plan.budget) {
        double it = isfinite(tau) ? ceil(ess * tau) : 1000;
        if (cfg->plan.max_passes > 0 && N > 0) {
            double cap = plan_cap(cfg->plan.max_passes, N, per_step,
                                  PLAN_MIN_CAP_STEPS);
            if (it > cap) {
                it = fmax(1, floor(cap));
                capped = 1;
            }
        }
        pc->budget.iters = (uint64_t)fmin(it, 1e15);
    }
    if (cfg->plan.thin && pc->budget.iters > BIASCHECK_KEEP) {
        pc->budget.thin = (pc->budget.iters + BIASCHECK_KEEP - 1) / BIASCHECK_KEEP;
        /* Saved warmup splits from the draws at a multiple of thin. */
        if (pc->output.save_warmup && pc->budget.warmup % pc->budget.thin)
            pc->budget.warmup += pc->budget.thin - pc->budget.warmup % pc->budget.thin;
    }
    run->planned = 1;

    double passes = N > 0 ? (double)p->grads / N : 0;
    double run_passes = N > 0 ? (double)(pc->budget.warmup + pc->budget.iters) *
                                    per_step / N
                              : 0;
    char why[400];
    if (r.verified)
        snprintf(why, sizeof why,
                 "pilots at %s = %.4g and %.4g agree (whitened variance "
                 "ratio %.3f +- %.3f, mean shift %.3f sd) and the second "
                 "keeps the Stein identity (ratio %.3f +- %.3f)",
                 hp->name, 2 * r.h, r.h, r.var_ratio, r.var_se,
                 r.mean_shift, r.stein, r.stein_se);
    else
        snprintf(why, sizeof why,
                 "no pair of pilots agreed within the checks' allowance "
                 "(%s:variance ratio/Stein ratio %.200s)",
                 hp->name, r.trail[0] ? r.trail : "none");
    snprintf(run->tune_note, sizeof run->tune_note,
             "plan for %s: %s = %.4g, %s%s; %zu pilots, %.3g data passes; "
             "autocorrelation time %.3g steps: burn-in %llu, "
             "%llu iterations thinned by %llu for about %.0f effective "
             "draws a chain (%.3g passes a chain); --set %s=, --warmup, "
             "--iter, --thin override",
             s->name, hp->name, r.h, why,
             r.recentred ? "; the centre (control variates, metric, "
                           "starting draws) moved off the mode to the "
                           "pilots' mean, whose draws the mode's Laplace "
                           "approximation did not fit"
                         : "",
             r.n_pilots, passes, tau,
             (unsigned long long)pc->budget.warmup,
             (unsigned long long)pc->budget.iters, (unsigned long long)pc->budget.thin,
             isfinite(tau) ? (double)pc->budget.iters / tau : NAN, run_passes,
             hp->name);
    snprintf(run->tune_header, sizeof run->tune_header,
             "# plan_step_size = %s\n"
             "# plan_choice = %.10g\n"
             "# plan_verified = %d\n"
             "# plan_variance_ratio = %.6g\n"
             "# plan_variance_ratio_se = %.6g\n"
             "# plan_mean_shift = %.6g\n"
             "# plan_stein_ratio = %.6g\n"
             "# plan_trail = %.300s\n"
             "# plan_autocorrelation_time = %.6g\n"
             "# plan_pilot_grads = %llu\n"
             "# plan_centre_moves = %d\n"
             "# plan_centre_fits = %d\n"
             "# drift: %s\n",
             hp->name, r.h, r.verified, r.var_ratio, r.var_se, r.mean_shift,
             r.stein, r.trail[0] ? r.trail : "none", tau,
             (unsigned long long)p->grads, r.recentred, r.centred,
             run->tune_note);
    if (!cfg->output.quiet)
        fprintf(drift_msg_stream(), "drift: %s\n", run->tune_note);
    char warn[1200] = "", slow[800];
    snprintf(slow, sizeof slow,
             "its pilots mix too slowly for the check within its allowance "
             "(autocorrelation time %s%.3g steps%s): the sampler moves "
             "slowly on this posterior (one whose shape the curvature at "
             "its mode does not describe, such as a hierarchical model's "
             "group scales, or a step the check had to shrink)%s; try "
             "another minibatch sampler (drift samplers), nuts where full "
             "gradients are affordable, or give --passes and a larger "
             "--batch",
             tau_guess ? "about " : "", tau, tau_guess ? "" : " or more",
             r.centred ? ""
                       : ", whose bulk lies away from that mode (the "
                         "centring windows did not settle)");
    if (!r.verified)
        snprintf(warn, sizeof warn,
                 "%s's step size could not be checked for discretisation "
                 "bias: %s = %.4g is the smallest tried, and the draws "
                 "should not be trusted (runs with this warning have been "
                 "far off: a hierarchical model's group scales 1.5 to 7 "
                 "times too small); %s",
                 s->name, hp->name, r.h,
                 r.h_stable == 0
                     ? "no step tried was stable: the sampler may not suit "
                       "this posterior (try sghmc or nuts)"
                     : slow);
    else if (capped)
        cap_warning(warn, sizeof warn, s->name, "iterations", tau, ess,
                    cfg->plan.max_passes, pc->budget.iters);
    if (warn[0])
        plan_warn(run, warn);
out:
    plan_scratch_free(&ps);
    return rc || c->failed ? -1 : 0;
}

/* The bias check's sink for a continuous pilot's points (user: the
 * pilots' context): the next pilot hands its trajectory every dt time
 * units to fn (NULL: none). */
static void plan_points(void *user, void (*fn)(void *, const double *),
                        void *fn_user, double dt)
{
    pilot_ctx *p = user;
    p->cfg.output.on_point = fn;
    p->cfg.output.on_point_user = fn_user;
    p->cfg.budget.thin_time = fn ? dt : 0;
}

/* The plan for a continuous minibatch sampler (no step size): one pilot
 * from the mode's Laplace draw, grown until it holds enough effective
 * draws, sizes the burn-in and the segments (iterations) for
 * plan_ess effective draws a chain and the output time step for
 * about BIASCHECK_KEEP draws; the Stein ratio of its draws says whether
 * the sampler's bias (sbps: the band width k) shows.  Non-zero when the
 * chain failed. */
static int plan_continuous(drift_chain *c)
{
    drift_run_shared *run = c->run;
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    size_t d = c->d;
    double ess = plan_ess(d, cfg->launch.chains);
    plan_scratch ps;
    int rc = plan_scratch_new(c, SIZE_MAX, 0, &ps);
    if (rc)
        return -1;
    pilot_ctx *p = ps.p;
    double *scale = ps.scale;
    double N = (double)c->N, batch = (double)(c->batch ? c->batch : 1);
    /* A segment costs a few minibatches: the pilots' allowance in
     * segments is a tenth of the discrete samplers' in steps. */
    double allow = plan_pilot_steps(N, batch) / 10;
    size_t rows = c->N < 2 * TUNE_SCORE_ROWS ? c->N : TUNE_SCORE_ROWS;
    drift_tune_config tc = {s, 0, d, c->N, c->batch, 0, TUNE_DRAWS, rows, 0,
                            cfg->launch.seed, scale, NULL};
    drift_biascheck_config bc = {
        s, d, 0, 0, 0, run->cv.ready ? run->cv.mode : NULL, NULL, scale,
        (uint64_t)fmin(allow, 1e12),
        PLAN_FIRST_STEPS, TUNE_DRAWS, plan_stein, &tc, plan_points,
        cfg->budget.seconds > 0 ? PLAN_BUDGET_SHARE * cfg->budget.seconds : 0, NULL, NULL};
    drift_tune_ops ops = {p, pilot_open, pilot_close, pilot_calling};
    drift_biascheck_result r;
    drift_biascheck_pilot pl;
    memset(&pl, 0, sizeof pl);
    drift_err e = {{0}};
    double t_traj;
    int enough;
    rc = drift_biascheck_measure(&bc, &ops, 0, &r, &pl, &t_traj, &enough,
                                 &e);
    c->grads += p->grads;
    if (rc) {
        if (rc == DRIFT_ESTOP && drift_stop_requested())
            drift_chain_fail(c, DRIFT_ESTOP,
                             "chain %u: stopped by a signal while planning "
                             "the run, before any draw", c->id);
        else
            drift_chain_fail(c, rc, "chain %u: planning the run: %s", c->id,
                             e.msg);
        goto out;
    }
    run->plan_cfg = *cfg;
    drift_run_config *pc = &run->plan_cfg;
    /* The output time step: the pilot's trajectory time a segment; the
     * autocorrelation time (measured in trajectory time) in segments. */
    double dt_seg = isfinite(t_traj) && pl.steps ? t_traj / (double)pl.steps
                                                 : NAN;
    double tau = !pl.unstable && isfinite(r.tau) && dt_seg > 0
                     ? fmax(1, r.tau / dt_seg)
                     : NAN;
    double per_step = r.steps ? (double)p->grads / (double)r.steps : batch;
    int capped = 0;
    if (cfg->plan.warmup)
        pc->budget.warmup = isfinite(tau)
                         ? (uint64_t)fmax(PLAN_MIN_WARMUP,
                                          ceil(PLAN_WARMUP_TAUS * tau))
                         : 1000;
    if (cfg->plan.budget) {
        double it = isfinite(tau) ? ceil(ess * tau) : 10000;
        if (cfg->plan.max_passes > 0 && N > 0) {
            /* a segment costs a few minibatches: a tenth of the steps */
            double cap = plan_cap(cfg->plan.max_passes, N, per_step,
                                  PLAN_MIN_CAP_STEPS / 10);
            if (it > cap) {
                it = fmax(1, floor(cap));
                capped = 1;
            }
        }
        pc->budget.iters = (uint64_t)fmin(it, 1e15);
    }
    if (cfg->plan.thin && isfinite(dt_seg) && dt_seg > 0)
        pc->budget.thin_time = dt_seg * (double)pc->budget.iters / BIASCHECK_KEEP;
    run->planned = 1;
    int stein_ok = isfinite(r.stein) &&
                   fabs(r.stein - 1) <= BIASCHECK_STEIN_TOL + r.stein_se;
    snprintf(run->tune_note, sizeof run->tune_note,
             "plan for %s: a pilot of %llu segments from the mode (%.3g data "
             "passes; Stein ratio of its draws %.3f +- %.3f, 1 for "
             "the target): autocorrelation time %.3g segments, %.3g "
             "trajectory time a segment: burn-in %llu, %llu segments, "
             "draws every %.4g time units, for about %.0f effective draws "
             "a chain; --warmup, --iter, --thin override",
             s->name, (unsigned long long)pl.steps,
             N > 0 ? (double)p->grads / N : 0, r.stein,
             r.stein_se, tau, dt_seg, (unsigned long long)pc->budget.warmup,
             (unsigned long long)pc->budget.iters, pc->budget.thin_time,
             isfinite(tau) ? (double)pc->budget.iters / tau : NAN);
    snprintf(run->tune_header, sizeof run->tune_header,
             "# plan_pilot_segments = %llu\n"
             "# plan_stein_ratio = %.6g\n"
             "# plan_autocorrelation_time = %.6g\n"
             "# plan_thin_time = %.10g\n"
             "# plan_pilot_grads = %llu\n"
             "# drift: %s\n",
             (unsigned long long)pl.steps, r.stein, tau, pc->budget.thin_time,
             (unsigned long long)p->grads, run->tune_note);
    if (!cfg->output.quiet)
        fprintf(drift_msg_stream(), "drift: %s\n", run->tune_note);
    char warn[700] = "";
    if (pl.unstable || !isfinite(tau))
        snprintf(warn, sizeof warn,
                 "%s's pilot from the mode did not hold still: its "
                 "trajectory diverged or ran far from the mode; the draws "
                 "are unlikely to be right: try sgld or sghmc, or nuts",
                 s->name);
    else if (!stein_ok)
        snprintf(warn, sizeof warn,
                 "%s's pilot draws break the Stein identity (ratio %.3f, "
                 "1 for the target, %s): the sampler's bias shows at these "
                 "settings; a wider band (--set k=, now %g) or a larger "
                 "--batch narrows it, or use sgld or sghmc",
                 s->name, r.stein,
                 r.stein > 1 ? "draws spread too wide" : "draws too narrow",
                 cfg->step.hp[0]);
    else if (!enough)
        snprintf(warn, sizeof warn,
                 "%s's pilot could not reach %.0f effective draws within "
                 "its allowance: the autocorrelation time (and so the run's "
                 "length) may be underestimated; check ESS in the summary",
                 s->name, BIASCHECK_PILOT_ESS);
    if (warn[0])
        plan_warn(run, warn);
    if (capped && !pl.unstable && isfinite(tau)) {
        cap_warning(warn, sizeof warn, s->name, "segments", tau, ess,
                    cfg->plan.max_passes, pc->budget.iters);
        plan_warn(run, warn);
    }
out:
    plan_scratch_free(&ps);
    return rc || c->failed ? -1 : 0;
}

/* The check of a given step size may take twice as many steps as the run's
 * chains together, up to CHECK_MAX_STEPS;
 * a run of fewer than CHECK_MIN_STEPS is not checked (its pilots could
 * not tell anything). */
#define CHECK_SHARE 2.0
#define CHECK_MIN_STEPS 5000.0
#define CHECK_MAX_STEPS 200000.0

/* The check of a step size the user gave (hyperparameter param) on chain
 * 1 (c): pilots at h and h/2 within CHECK_SHARE of the run's steps (at
 * most CHECK_MAX_STEPS; none below CHECK_MIN_STEPS); a warning on
 * standard error when they disagree or h's draws break the Stein
 * identity, a note when the pilots mixed too slowly to tell.  The run
 * itself is not changed: the pilots are chains of their own, their cost
 * is not the run's, and nothing goes into the files.  Not under a
 * --seconds budget (its time would be the run's).  Non-zero when the
 * chain failed. */
static int check_given_step(drift_chain *c, long param)
{
    drift_run_shared *run = c->run;
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    const drift_hparam *hp = &s->hparams[param];
    size_t d = c->d;
    plan_scratch ps;
    int rc = plan_scratch_new(c, (size_t)param, 1, &ps);
    if (rc)
        return -1;
    pilot_ctx *p = ps.p;
    double *scale = ps.scale, *chol = ps.chol;
    double N = (double)c->N, batch = (double)(c->batch ? c->batch : 1);
    /* The run's length in steps, and a quarter of it for the pilots. */
    double steps = cfg->budget.iters ? (double)(cfg->budget.warmup + cfg->budget.iters) : 0;
    if (cfg->budget.passes > 0 && N > 0)
        steps = fmax(steps, cfg->budget.passes * N / batch);
    if (!(steps > 0))
        steps = 2000;
    double allow = fmin(CHECK_SHARE * steps * (double)cfg->launch.chains,
                        CHECK_MAX_STEPS);
    if (allow < CHECK_MIN_STEPS)
        goto out; /* a run this short: its own diagnostics say more */
    size_t rows = c->N < 2 * TUNE_SCORE_ROWS ? c->N : TUNE_SCORE_ROWS;
    drift_tune_config tc = {s, (size_t)param, d, c->N, c->batch, 0,
                            TUNE_DRAWS, rows, 0, cfg->launch.seed,
                            chol ? NULL : scale, chol};
    drift_biascheck_config bc = {
        s, d, hp->def, hp->lo, hp->hi,
        run->cv.ready ? run->cv.mode : NULL, chol, scale,
        (uint64_t)fmin(allow, 1e12), PLAN_FIRST_STEPS / 4, TUNE_DRAWS,
        plan_stein, &tc, NULL, 0, NULL, NULL};
    drift_tune_ops ops = {p, pilot_open, pilot_close, pilot_calling};
    drift_biascheck_result r;
    drift_err e = {{0}};
    int checked, ok;
    rc = drift_biascheck_compare(&bc, &ops, cfg->step.hp[param], &r, &checked,
                                 &ok, &e);
    /* The check's pilots are not the run's: their cost is not in chain
     * 1's count nor in the budget (the allowance bounds it), and the run
     * is the one it would have been without it. */
    if (rc == DRIFT_ESTOP) {
        rc = DRIFT_OK; /* a stop request: the run ends at its first step */
        goto out;
    }
    if (rc) {
        drift_chain_fail(c, rc, "chain %u: checking the step size: %s",
                         c->id, e.msg);
        goto out;
    }
    double passes = N > 0 ? (double)p->grads / N : 0;
    char msg[900] = "";
    int warn = 0;
    if (checked && r.h_stable == 0) {
        warn = 1;
        snprintf(msg, sizeof msg,
                 "%s = %g diverges: pilots at it ran away or produced "
                 "non-finite values; the draws will not be right: use a "
                 "smaller %s, or leave it to the engine (drop --set %s=)",
                 hp->name, cfg->step.hp[param], hp->name, hp->name);
    } else if (checked && !ok) {
        warn = 1;
        snprintf(msg, sizeof msg,
                 "%s = %g shows discretisation bias: pilots at %g and %g "
                 "differ (whitened variance ratio %.3f +- %.3f, mean shift "
                 "%.3f sd; Stein ratio at %g %.3f +- %.3f, 1 for the "
                 "target); the draws are likely off: use a smaller %s, or "
                 "leave it to the engine (drop --set %s=)%s",
                 hp->name, cfg->step.hp[param], cfg->step.hp[param],
                 cfg->step.hp[param] / 2, r.var_ratio, r.var_se, r.mean_shift,
                 cfg->step.hp[param], r.stein, r.stein_se, hp->name, hp->name,
                 cfg->step.gradient == DRIFT_GRADIENT_CV ||
                         (s->flags & (DRIFT_SAMPLER_OWN_ESTIMATES |
                                      DRIFT_SAMPLER_PICKS_ESTIMATOR))
                     ? ""
                     : ", and try --gradient cv");
    } else if (checked) {
        snprintf(msg, sizeof msg,
                 "%s = %g checked: pilots at it and at half of it agree "
                 "(whitened variance ratio %.3f +- %.3f, Stein ratio %.3f "
                 "+- %.3f; %.3g data passes, not counted in the run's)",
                 hp->name, cfg->step.hp[param], r.var_ratio, r.var_se, r.stein,
                 r.stein_se, passes);
    } else {
        char per[160] = "";
        if (isfinite(r.tau) && cfg->budget.iters)
            snprintf(per, sizeof per,
                     ", so the run's %llu iterations give about %.0f "
                     "effective draws a chain",
                     (unsigned long long)cfg->budget.iters,
                     (double)cfg->budget.iters / r.tau);
        warn = isfinite(r.tau) && cfg->budget.iters &&
               (double)cfg->budget.iters / r.tau < BIASCHECK_PILOT_ESS;
        snprintf(msg, sizeof msg,
                 "%s = %g not checked for discretisation bias: pilots at "
                 "it mix too slowly to compare within the check's "
                 "allowance (autocorrelation time about %.3g steps%s)%s",
                 hp->name, cfg->step.hp[param], r.tau, per,
                 warn ? "; the draws are unlikely to represent the "
                        "posterior: a larger budget, a larger step, or "
                        "leave the step to the engine (drop --set)"
                      : "; check the summary's ESS and R-hat");
    }
    /* Only what needs acting on is said: a step that checked out, or one
     * that could not be checked while the run's own diagnostics will
     * judge it, says nothing. */
    if (warn)
        fprintf(drift_msg_stream(), "drift: warning: %s\n", msg);
out:
    plan_scratch_free(&ps);
    return rc || c->failed ? -1 : 0;
}

/* The extensions on for one chain (their open said DRIFT_EXT_ON), and
 * their step hooks gathered in table order, so that the step loop calls
 * only hooks with something to do. */
typedef struct chain_exts {
    const drift_run_ext *on[DRIFT_RUN_MAX_EXTS];
    int (*gate[DRIFT_RUN_MAX_EXTS])(drift_chain *);
    int (*after[DRIFT_RUN_MAX_EXTS])(drift_chain *);
    unsigned n_on, n_gate, n_after;
} chain_exts;

/* Opens every extension for chain c: 0, or -1 when the chain cannot
 * start (the failure recorded). */
static int exts_open(drift_chain *c, drift_chain_result *res, chain_exts *x)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++) {
        const drift_run_ext *e = drift_run_exts[k];
        int on = e->open ? e->open(c, res) : DRIFT_EXT_IDLE;
        if (on == DRIFT_EXT_STOP)
            return -1;
        if (on != DRIFT_EXT_ON)
            continue;
        x->on[x->n_on++] = e;
        if (e->gate)
            x->gate[x->n_gate++] = e->gate;
        if (e->after_step)
            x->after[x->n_after++] = e->after_step;
    }
    return 0;
}

/* Every extension's close, also of those never opened. */
static void exts_close(drift_chain *c, drift_chain_result *res, int started)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++)
        if (drift_run_exts[k]->close)
            drift_run_exts[k]->close(c, res, started);
}

/* A chain runs by the planned configuration from here on: its warmup
 * schedule, run facts and extensions follow it.  Before the first step. */
static void chain_follow_plan(drift_chain *c)
{
    const drift_run_config *cfg = &c->run->plan_cfg;
    c->cfg = cfg;
    drift_adapt_schedule_make(cfg->budget.warmup, &c->sched);
    c->info.warmup = cfg->budget.warmup;
    c->info.iterations = cfg->budget.iters;
    c->info.init_buffer = c->sched.init_buffer;
    c->info.term_buffer = c->sched.term_buffer;
    c->info.base_window = c->sched.base_window;
    for (unsigned k = 0; k < drift_run_n_exts; k++)
        if (drift_run_exts[k]->replan)
            drift_run_exts[k]->replan(c);
}

/* Sets chain id up, opens its draws file (in one process, or on its
 * group's writer across ranks) and its extensions.  0, or -1 when the
 * chain cannot start (the failure recorded on it). */
static int chain_open(drift_chain *c, const drift_run_config *cfg,
                      drift_run_shared *run, unsigned id, double *theta,
                      double t_start, drift_chain_result *res,
                      chain_exts *x)
{
    int rc = drift_run_chain_setup(c, cfg, id, theta);
    c->run = run;
    c->theta = theta;
    c->t_start = t_start;
    /* The only chain on the store: what it passed may leave the page
     * cache too (advise.h) */
    c->advisor.evict = c->advisor.drop && run->at_once == 1;
    c->stop = 1;
    if (rc)
        return -1;
    int file_failed = 0;
    if (cfg->output.path && (!cfg->ranks || cfg->ranks->writer)) {
        drift_chain_path(cfg->output.path, cfg->launch.chains, id, res->path,
                         sizeof res->path);
        drift_err e;
        if (drift_writer_open(res->path, &c->w, &e)) {
            drift_chain_fail(c, DRIFT_EIO, "%s", e.msg);
            res->path[0] = '\0'; /* no file: none to name */
            file_failed = 1;
        }
    }
    if ((file_failed && !cfg->ranks) || exts_open(c, res, x))
        return -1;
    /* Across ranks this rank's failure so far (its file, its held-out
     * set) fails the chain on every rank at the gate before the first
     * step. */
    drift_shard_defer(c);
    return 0;
}

/* From the run-level setup to the first step: chain 1 runs the setup
 * (the others wait for it), the chain follows the run's plan, finds its
 * initial point and initialises its sampler; then the extensions may put
 * it where an earlier process left it, the draws file gets its header
 * and the extensions' gates pass.  0, or -1 when the chain failed before
 * its first step. */
static int chain_start(drift_chain *c, unsigned k, int *setup_done,
                       const chain_exts *x)
{
    drift_run_shared *run = c->run;
    const drift_run_ranks *ranks = c->cfg->ranks;
    if (k == 0 && ranks && ranks->first != 0) {
        /* A group without the run's first chain (run_setup_apart). */
        run_setup_apart(c);
        *setup_done = 1;
    } else if (k == 0) {
        run_setup(c, c->theta);
        *setup_done = 1;
    } else if (wait_setup(c)) {
        return -1;
    }
    if (c->failed)
        return -1;
    if (run->planned)
        chain_follow_plan(c);
    const drift_run_config *cfg = c->cfg;
    if (cfg->init.mode == DRIFT_INIT_MODE &&
        drift_run_chain_setup_init(c, c->theta))
        return -1;
    if (run->hp) {
        /* A step size the run chose: every chain's sampler gets it. */
        c->hp = run->hp;
        if (set_grad_noise(c))
            return -1;
    }
    c->phase = DRIFT_CHAIN_INIT;
    if (find_init(c, c->theta))
        return -1;
    c->nonfinite[0] = '\0';
    drift_guard_call(c->ext.guard, DRIFT_GUARD_INIT, 0);
    int irc = cfg->step.sampler->init(c->state, &drift_services_table, c, c->hp,
                                 c->theta);
    drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
    c->phase = DRIFT_CHAIN_STEPPING;
    if (irc && !c->failed) {
        if (c->nonfinite[0])
            drift_chain_fail(c, irc, "%s", c->nonfinite);
        else
            drift_chain_fail(c, irc, "sampler %s failed to start (status "
                             "%d)", cfg->step.sampler->name, irc);
    }
    if (c->failed)
        return -1;
    /* On --resume the chain stands where it was saved, its rows written
     * (with the header) and its warmup started. */
    int restored = 0;
    for (unsigned j = 0; j < x->n_on; j++)
        if (x->on[j]->restore && x->on[j]->restore(c, &restored))
            return -1;
    if (c->failed)
        return -1;
    if (!restored && drift_csvout_begin(c)) {
        if (!c->ext.shard)
            return -1;
        drift_shard_defer(c);
    }
    for (unsigned j = 0; j < x->n_on; j++)
        if (x->on[j]->begin && x->on[j]->begin(c))
            return -1;
    if (cfg->budget.warmup > 0 && !restored)
        notify(c, DRIFT_PHASE_WARMUP_START);
    return 0;
}

/* The core loop: one step of the sampler after another until the budget
 * is spent, a stop is requested or the chain fails; after each, the
 * extensions' gates, warmup's bookkeeping, the extensions' after-step
 * hooks. */
static void chain_steps(drift_chain *c, const chain_exts *x)
{
    const drift_sampler *s = c->cfg->step.sampler;
    const drift_services *svc = &drift_services_table;
    while (!budget_spent(c)) {
        c->nonfinite[0] = '\0';
        drift_guard_call(c->ext.guard, DRIFT_GUARD_STEP, c->iter);
        int rc = s->step(c->state, svc, c, c->theta);
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, c->iter);
        if (rc || c->failed) {
            /* A point without a finite density fails the chain only now,
             * when the sampler gave up on it: its message says where. */
            if (!c->failed && c->nonfinite[0])
                drift_chain_fail(c, rc, "%s", c->nonfinite);
            else if (!c->failed)
                drift_chain_fail(c, rc, "chain %u, iteration %llu: sampler "
                                 "%s failed (status %d)",
                                 c->id, (unsigned long long)c->iter, s->name,
                                 rc);
            return;
        }
        c->iter++;
        for (unsigned j = 0; j < x->n_gate; j++)
            if (x->gate[j](c))
                return;
        after_step(c);
        if (c->iter == c->cfg->budget.warmup)
            c->t_warm_end = drift_now();
        for (unsigned j = 0; j < x->n_after; j++)
            if (x->after[j](c))
                return;
    }
}

/* After the step loop: the extensions' stop hooks, the sampler's finish,
 * the extensions' finish hooks, the trajectory's moments to the caller.
 * 1 when a continuous trajectory's moments are in c->traj.seg (means) and
 * c->gbuf2 (variances), free by now, for the file's footer. */
static int chain_end(drift_chain *c, const chain_exts *x)
{
    const drift_run_config *cfg = c->cfg;
    for (unsigned j = 0; j < x->n_on; j++)
        if (x->on[j]->stop)
            x->on[j]->stop(c);
    if (!c->failed)
        notify(c, DRIFT_PHASE_RUN_END);
    if (cfg->step.sampler->finish) {
        drift_guard_call(c->ext.guard, DRIFT_GUARD_FINISH, c->iter);
        cfg->step.sampler->finish(c->state, &drift_services_table, c);
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, c->iter);
    }
    for (unsigned j = 0; j < x->n_on; j++)
        if (x->on[j]->finish)
            x->on[j]->finish(c);
    int have_moments = trajectory_moments(c, c->traj.seg, c->gbuf2);
    if (have_moments && cfg->output.on_trajectory)
        cfg->output.on_trajectory(cfg->output.on_trajectory_user, c->id, c->traj.t_mom,
                           c->traj.seg, c->gbuf2, c->d);
    return have_moments;
}

/* The chain's draws file once it has ended: completed with its trailer
 * (why it is shorter than asked, if it is) and handed to drift_run in
 * file, which commits it once every chain has ended; or discarded when
 * the chain never started or a write failed. */
static void chain_file_end(drift_chain *c, drift_chain_result *res,
                           chain_file *file, int started, int have_moments)
{
    const drift_run_config *cfg = c->cfg;
    if (!c->w)
        return;
    /* Rows are whole: a failed chain's draws so far stay a valid file;
     * a chain that never started leaves nothing behind. */
    if (started && !c->write_failed) {
        double t_end = drift_now();
        uint64_t warm_iters = c->iter < cfg->budget.warmup ? c->iter : cfg->budget.warmup;
        char note[700] = "";
        if (c->failed)
            snprintf(note, sizeof note,
                     "chain %u failed at iteration %llu; the draws "
                     "before it are valid: %s",
                     c->id, (unsigned long long)c->iter, c->message);
        else if (interrupted(c))
            snprintf(note, sizeof note,
                     "interrupted by a signal after %llu iterations "
                     "(%llu in warmup)%s",
                     (unsigned long long)c->iter,
                     (unsigned long long)warm_iters,
                     c->iter < cfg->budget.warmup ? ": no draws after warmup" : "");
        else if (c->iter < cfg->budget.warmup)
            snprintf(note, sizeof note,
                     "the budget ran out in warmup, after %llu "
                     "iterations: no draws after warmup",
                     (unsigned long long)c->iter);
        double t_warm_end = c->t_warm_end;
        if (t_warm_end < 0)
            t_warm_end = cfg->budget.warmup ? t_end : c->t_start;
        drift_csvout_end end = {
            t_warm_end - c->t_start, t_end - t_warm_end, note,
            have_moments ? c->traj.seg : NULL,
            have_moments ? c->gbuf2 : NULL, c->traj.t_mom};
        drift_csvout_finish(c, &end);
        file->w = c->w;
        file->out = c->out;
        c->out = NULL;
    } else {
        /* A failed write (the first one stopped the chain: nothing goes
         * in place, a previous file of the name stays) or a chain that
         * never started. */
        drift_writer_abort(c->w);
        drift_guard_file_settled(c->ext.guard);
        res->path[0] = '\0';
    }
    c->w = NULL;
}

/* One chain, from its setup to its result: k is its index among this
 * process's chains. */
static void run_chain(const drift_run_config *cfg, drift_run_shared *run,
                      unsigned id, drift_chain_result *res, chain_file *file,
                      unsigned k)
{
    drift_chain c;
    chain_exts x;
    double t_start = drift_now();
    memset(res, 0, sizeof *res);
    memset(file, 0, sizeof *file);
    memset(&x, 0, sizeof x);
    res->id = id;
    double *theta = drift_calloc(cfg->problem.model->dim, sizeof(double));
    if (!theta) {
        res->status = DRIFT_ENOMEM;
        snprintf(res->message, sizeof res->message, "out of memory");
        return;
    }
    int setup_done = k != 0; /* chain 1 owes the others its setup */
    int started = 0, have_moments = 0;
    if (!chain_open(&c, cfg, run, id, theta, t_start, res, &x) &&
        !chain_start(&c, k, &setup_done, &x)) {
        started = 1;
        chain_steps(&c, &x);
        have_moments = chain_end(&c, &x);
    }
    if (!setup_done) /* chain 1 failed before setup: release the others */
        run_setup_failed(run);
    res->iterations = c.iter;
    res->grads = c.grads;
    res->draws = c.draws_written;
    res->proposals = c.proposals;
    res->violations = c.violations;
    res->status = c.failed;
    res->started = started;
    res->interrupted = interrupted(&c);
    snprintf(res->message, sizeof res->message, "%s", c.message);
    chain_file_end(&c, res, file, started, have_moments);
    exts_close(&c, res, started);
    res->seconds = drift_now() - c.t_start;
    drift_run_chain_release(&c);
    drift_free(theta);
}

static void *chain_worker(void *arg)
{
    chain_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        unsigned k = q->next < q->K ? q->next++ : q->K;
        pthread_mutex_unlock(&q->mu);
        if (k == q->K)
            return NULL;
        if (drift_stop_requested() && k > 0) {
            /* A queued chain that a signal came before: never started. */
            drift_chain_result *res = &q->results[k];
            memset(res, 0, sizeof *res);
            res->id = q->first + k;
            drift_progress_done(q->prog, k);
            continue;
        }
        run_chain(q->cfg, q->run, q->first + k, &q->results[k],
                  &q->files[k], k);
    }
}

/* How many chains run at once: cfg->launch.parallel, or the processor count
 * (across ranks, this rank's part of its node's cores: chains waiting in
 * MPI for one another must not wait for a core as well). */
static unsigned parallel_chains(const drift_run_config *cfg, unsigned K)
{
    long w = cfg->launch.parallel;
    if (w <= 0) {
        w = sysconf(_SC_NPROCESSORS_ONLN);
        if (cfg->ranks && w > 0)
            w /= (long)drift_ranks_node_size();
        if (cfg->ranks && w < 1)
            w = 1;
    }
    if (w <= 0)
        w = 1;
    return (unsigned)w < K ? (unsigned)w : K;
}

/* Once every chain has ended: the files of the chains that did not fail
 * are brought to the smallest draw counts among them (readers take a
 * run's files together only when their counts agree: budgets in passes
 * or seconds, a signal, and continuous samplers' time grids end chains
 * at different counts), then every file is completed and committed.  No
 * chain waits for another while it runs, so a queue of chains cannot
 * deadlock; the counts depend only on the chains' own. */
static void close_files(unsigned K, drift_chain_result *results,
                        chain_file *files, int across)
{
    uint64_t warm = UINT64_MAX, samp = UINT64_MAX, iters = UINT64_MAX;
    /* A run stopped after some chains finished and before others left
     * warmup: the chains without a draw leave no file, so that the
     * others' draws are not cut to none (within one process; across
     * ranks every chain keeps its file). */
    uint64_t samp_max = 0;
    for (unsigned k = 0; k < K && !across; k++)
        if (files[k].w && !results[k].status) {
            uint64_t s = drift_csvout_samp_count(files[k].out);
            samp_max = s > samp_max ? s : samp_max;
        }
    for (unsigned k = 0; k < K && samp_max > 0; k++)
        if (files[k].w && !results[k].status &&
            drift_csvout_samp_count(files[k].out) == 0) {
            drift_writer_abort(files[k].w);
            drift_guard_file_settled(drift_guard_slot_at(k));
            drift_csvout_free(files[k].out);
            files[k].w = NULL;
            files[k].out = NULL;
            results[k].path[0] = '\0';
            results[k].draws = 0;
        }
    for (unsigned k = 0; k < K; k++) {
        if (!files[k].w || results[k].status)
            continue;
        uint64_t w = drift_csvout_warm_count(files[k].out);
        uint64_t s = drift_csvout_samp_count(files[k].out);
        uint64_t i = drift_csvout_warm_iters(files[k].out);
        warm = w < warm ? w : warm;
        samp = s < samp ? s : samp;
        iters = i < iters ? i : iters;
    }
    /* Across ranks, the smallest counts of every chain of the run, which
     * the groups' writers hold between them (every rank takes part). */
    if (across) {
        uint64_t v[3] = {warm, samp, iters};
        if (drift_ranks_min_u64(v, 3) == DRIFT_OK) {
            warm = v[0];
            samp = v[1];
            iters = v[2];
        }
    }
    /* Warmup iterations too (the header's num_warmup), for chains
     * interrupted in warmup. */
    for (unsigned k = 0; k < K; k++)
        if (files[k].w && !results[k].status)
            drift_csvout_common_warm_iters(files[k].out, iters);
    for (unsigned k = 0; k < K; k++) {
        chain_file *f = &files[k];
        drift_chain_result *res = &results[k];
        if (!f->w)
            continue;
        drift_err e = {{0}};
        uint64_t dropped = 0;
        int rc = drift_csvout_close(f->out, f->w,
                                    res->status ? UINT64_MAX : warm,
                                    res->status ? UINT64_MAX : samp,
                                    &dropped, &e);
        res->draws -= dropped < res->draws ? dropped : res->draws;
        if (rc) {
            drift_writer_abort(f->w);
        } else {
            rc = drift_writer_commit(f->w, &e);
        }
        if (rc) {
            if (!res->status) {
                /* The path once, brief: the reason after it must fit. */
                char brief[DRIFT_PATH_BRIEF];
                const char *p = drift_path_brief(res->path, brief);
                size_t n = strlen(p);
                res->status = DRIFT_EIO;
                if (!strncmp(e.msg, p, n) && e.msg[n] == ':')
                    snprintf(res->message, sizeof res->message, "%s", e.msg);
                else {
                    int w = snprintf(res->message, sizeof res->message,
                                     "%s: ", p);
                    char *rest = res->message + w;
                    snprintf(rest, sizeof res->message - (size_t)w, "%s",
                             e.msg);
                }
            }
            res->path[0] = '\0';
        }
        drift_guard_file_settled(drift_guard_slot_at(k));
        drift_csvout_free(f->out);
        f->w = NULL;
        f->out = NULL;
    }
}

/* Generated quantities computed on every K-th draw only leave NaN on the
 * other rows, which readers refuse: once the files are complete, those
 * columns move to files of their own (csvout.h). */
static void split_generated(const drift_run_config *cfg, unsigned K,
                            drift_chain_result *results)
{
    const drift_model *m = cfg->problem.model;
    if (cfg->output.generated_every <= 1 || cfg->output.emit_segments ||
        m->n_gen <= m->n_gen_derived)
        return;
    for (unsigned k = 0; k < K; k++) {
        drift_chain_result *res = &results[k];
        drift_err e = {{0}};
        if (!res->path[0] ||
            !drift_csvout_split_generated(res->path,
                                          m->gen_names[m->n_gen_derived],
                                          m->n_gen - m->n_gen_derived,
                                          cfg->output.generated_every, &e))
            continue;
        if (!res->status) {
            res->status = DRIFT_EIO;
            snprintf(res->message, sizeof res->message, "%.500s", e.msg);
        }
    }
}

/* What the run's setup allocated, once every chain has ended. */
static void release_shared(drift_run_shared *run)
{
    drift_mode_release(&run->cv);
    for (size_t k = 0; k < run->n_allocs; k++)
        drift_free(run->allocs[k]);
    drift_free(run->allocs);
    drift_free(run->hp);
    drift_free(run->tune);
    drift_free(run->check_var);
    drift_free(run->check_mom);
    pthread_mutex_destroy(&run->lock);
    pthread_cond_destroy(&run->cond);
}

/* Every refusal of a configuration, before anything is opened or
 * allocated: the extensions' checks (ext.h: what each feature cannot be
 * combined with), then the core's own: option values the engine bounds,
 * the estimators' needs, and what the machine cannot hold.  drift_run
 * calls it first; front ends call it to refuse a run before they start
 * any process. */
int drift_run_check(const drift_run_config *cfg, drift_err *e)
{
    const drift_run_ranks *ranks = cfg->ranks;
    unsigned K = ranks ? ranks->count : cfg->launch.chains ? cfg->launch.chains : 1;
    /* What each extension cannot be combined with, first. */
    int bad = drift_run_ext_check(cfg, e);
    if (bad)
        return bad;
    if (cfg->budget.thin == 0)
        return drift_err_set(e, DRIFT_EINVAL, "--thin must be at least 1");
    size_t n_rows = ranks ? ranks->rows_total : cfg->problem.model->n_rows;
    if (cfg->step.batch && n_rows && cfg->step.batch > n_rows)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--batch %zu: larger than the %zu rows of the "
                             "data",
                             cfg->step.batch, n_rows);
    if (cfg->output.emit_segments && cfg->output.save_gradients)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--save-gradients with --emit segments: the "
                             "scores are written at draws; use --emit draws "
                             "(the default)");
    if (cfg->output.emit_segments && !(cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--emit segments: sampler %s emits draws, not "
                             "the segments of a continuous trajectory; use "
                             "--emit draws (or a piecewise-deterministic "
                             "sampler such as bps)",
                             cfg->step.sampler->name);
    /* The engine's own vectors of d values per chain (point, gradients,
     * and a continuous trajectory's moments), before any is allocated: a
     * model too big for the machine is refused with its size. */
    int continuous = (cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
    double vecs = 3.0 + (continuous ? 3.0 : 0.0) +
                  (cfg->output.emit_segments ? 2.0 : 0.0);
    double need = (double)K * 8.0 *
                  (vecs * (double)cfg->problem.model->dim + (double)cfg->problem.model->n_out);
    uint64_t lim = drift_memory_limit();
    if (need > (double)lim) {
        char want[32], have[32];
        drift_format_bytes(need, want, sizeof want);
        drift_format_bytes((double)lim, have, sizeof have);
        return drift_err_set(e, DRIFT_ENOMEM,
                             "the model has %zu parameters: %u chain%s need "
                             "%s for the engine's vectors alone (%.0f of %zu "
                             "values each per chain), more than the %s of "
                             "memory this machine allows",
                             cfg->problem.model->dim, K, K == 1 ? "" : "s", want,
                             vecs, cfg->problem.model->dim, have);
    }
    /* Every chain's files stay open until the last chain ends (their
     * draw counts are evened then): all of them, before any chain starts,
     * or the run would end half written. */
    unsigned per_chain = (cfg->output.path ? 2u : 0u) +
                         (cfg->output.path && cfg->heldout.model ? 2u : 0u);
    uint64_t max_files = 0;
    if (per_chain && drift_files_reserve((uint64_t)K * per_chain + 16,
                                         &max_files))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%u chains hold %u files open each (a draws "
                             "file and its directory%s) until the last one "
                             "ends: about %llu, more than this process may "
                             "open (%llu, ulimit -n); raise the limit, or "
                             "run fewer chains per command (--chains, "
                             "--chain-id)",
                             K, per_chain,
                             per_chain > 2 ? ", and the metrics file's" : "",
                             (unsigned long long)K * per_chain,
                             (unsigned long long)max_files);
    if (cfg->step.gradient != DRIFT_GRADIENT_PLAIN &&
        (cfg->step.sampler->flags & DRIFT_SAMPLER_PICKS_ESTIMATOR)) {
        const char *name = drift_gradient_name(cfg->step.gradient);
        return drift_err_set(e, DRIFT_EINVAL,
                             "--gradient %s: sampler %s stands for its own "
                             "estimator; drop --gradient, or run sgld "
                             "--gradient %s for Langevin steps over %s",
                             name, cfg->step.sampler->name, name, name);
    }
    if (cfg->step.gradient == DRIFT_GRADIENT_CV) {
        const drift_sampler *s = cfg->step.sampler;
        if (s->flags & DRIFT_SAMPLER_FULL_DATA)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient cv: sampler %s uses full-data "
                                 "gradients, which have no minibatch noise "
                                 "for control variates to remove; drop "
                                 "--gradient cv (or pick a minibatch "
                                 "sampler such as sgld or sghmc)",
                                 s->name);
        if (s->flags & DRIFT_SAMPLER_OWN_ESTIMATES)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient cv: sampler %s builds its own "
                                 "gradient estimates from per-row "
                                 "gradients, not from the engine's "
                                 "minibatch estimate, so cv would not "
                                 "reach them; drop --gradient cv (or pick "
                                 "sgld, psgld, sghmc, sgnht or msgnht)",
                                 s->name);
        if (n_rows == 0)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient cv: the model has no data "
                                 "rows, so no minibatch to control; drop "
                                 "--gradient cv");
        if (cfg->problem.model->dim == 0)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient cv: the model has no "
                                 "parameters; drop --gradient cv");
        if (cfg->budget.passes > 0 && cfg->budget.passes < DRIFT_MODE_MIN_PASSES)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient cv with --passes %g: the mode "
                                 "search alone needs a few data passes, "
                                 "and takes at most half of the budget; "
                                 "give --passes %g or more",
                                 cfg->budget.passes, DRIFT_MODE_MIN_PASSES);
    }
    if (cfg->step.gradient == DRIFT_GRADIENT_SVRG ||
        cfg->step.gradient == DRIFT_GRADIENT_SAGA ||
        cfg->step.gradient == DRIFT_GRADIENT_TMU) {
        const drift_sampler *s = cfg->step.sampler;
        const char *name = drift_gradient_name(cfg->step.gradient);
        if (s->flags & (DRIFT_SAMPLER_FULL_DATA | DRIFT_SAMPLER_OWN_ESTIMATES))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient %s: sampler %s does not use the "
                                 "engine's minibatch estimate (it %s), so "
                                 "the estimator would not reach it; drop "
                                 "--gradient %s, or pick sgld, psgld, "
                                 "sghmc, sgnht or msgnht%s",
                                 name, s->name,
                                 (s->flags & DRIFT_SAMPLER_FULL_DATA)
                                     ? "uses full-data gradients"
                                     : "builds its own estimates",
                                 name,
                                 (s->flags & DRIFT_SAMPLER_OWN_ESTIMATES)
                                     ? " (the agld family has its own: "
                                       "svrg-ld, saga-ld, tmu-ra ...)"
                                     : "");
        if (n_rows == 0)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--gradient %s: the model has no data "
                                 "rows; drop --gradient %s",
                                 name, name);
    }
    if (cfg->init.mode == DRIFT_INIT_MODE &&
        cfg->step.gradient != DRIFT_GRADIENT_CV && !cfg->plan.mode)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--init mode needs --gradient cv (the mode it "
                             "starts from is cv's)");
    if (cfg->budget.passes > 0 && n_rows == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--passes: the model has no data rows; give "
                             "--iter instead");
    return DRIFT_OK;
}

int drift_run(const drift_run_config *cfg, drift_chain_result *results,
              drift_err *e)
{
    /* The chains this process runs: all, or its rank group's. */
    const drift_run_ranks *ranks = cfg->ranks;
    unsigned K = ranks ? ranks->count : cfg->launch.chains ? cfg->launch.chains : 1;
    unsigned first = (cfg->launch.first_chain_id ? cfg->launch.first_chain_id : 1) +
                     (ranks ? ranks->first : 0);
    int bad = drift_run_check(cfg, e);
    if (bad)
        return bad;
    /* BLAS stays single-threaded: chains are the parallelism, and a fixed
     * thread count keeps sums in a fixed order (same seed, same bytes). */
    openblas_set_num_threads(1);
    drift_progress *prog = NULL;
    if (cfg->output.progress) {
        drift_progress_budget b = {
            cfg->budget.iters ? cfg->budget.warmup + cfg->budget.iters : 0, cfg->budget.warmup,
            cfg->budget.passes, cfg->budget.seconds, cfg->problem.model->n_rows};
        prog = drift_progress_new(K, first, &b, drift_msg_stream());
        if (cfg->output.progress == DRIFT_PROGRESS_LOG)
            drift_progress_log_lines(prog);
    }
    drift_run_shared run;
    memset(&run, 0, sizeof run);
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.cond, NULL);
    run.progress = prog;
    chain_file *files = drift_calloc(K, sizeof *files);
    if (!files) {
        drift_progress_free(prog);
        release_shared(&run);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    /* Across ranks, MPI may allow calls from one thread at a time, or
     * only from this one (drift_ranks_threads). */
    unsigned mpi_threads = ranks ? drift_ranks_threads() : K;
    if ((K == 1 && !prog) || mpi_threads == 0) {
        run.at_once = 1;
        for (unsigned k = 0; k < K; k++)
            run_chain(cfg, &run, first + k, &results[k], &files[k], k);
    } else {
        /* Chains beyond the processor count wait in the queue: each
         * chain's draws depend on (seed, id) alone, never on when it ran. */
        unsigned W = parallel_chains(cfg, K);
        if (W > mpi_threads)
            W = mpi_threads;
        run.at_once = W;
        chain_queue q = {cfg, &run, results, files, prog, K, first, 0,
                         PTHREAD_MUTEX_INITIALIZER};
        pthread_t *tids = drift_calloc(W, sizeof *tids);
        unsigned char *live = drift_calloc(W, 1);
        if (!tids || !live) {
            drift_free(tids);
            drift_free(live);
            drift_free(files);
            drift_progress_free(prog);
            release_shared(&run);
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        }
        unsigned started = 0;
        for (unsigned w = 0; w < W; w++)
            if (pthread_create(&tids[w], NULL, chain_worker, &q) == 0) {
                live[w] = 1;
                started++;
            }
        if (!started) /* No thread at all: run the queue here. */
            chain_worker(&q);
        if (prog)
            drift_progress_watch(prog);
        for (unsigned w = 0; w < W; w++)
            if (live[w])
                pthread_join(tids[w], NULL);
        pthread_mutex_destroy(&q.mu);
        drift_free(tids);
        drift_free(live);
    }
    close_files(K, results, files, ranks != NULL);
    split_generated(cfg, K, results);
    int all_ran = 1;
    for (unsigned k = 0; k < K; k++)
        all_ran &= results[k].status == DRIFT_OK && !results[k].interrupted;
    if (all_ran && !drift_stop_requested()) {
        char warn[1400];
        drift_plancheck_report(&run, cfg, K, warn, sizeof warn);
        if (warn[0])
            fprintf(drift_msg_stream(), "drift: warning: %s\n", warn);
    }
    drift_free(files);
    drift_progress_free(prog);
    release_shared(&run);
    for (unsigned k = 0; k < K; k++)
        if (results[k].status)
            return drift_err_set(e, results[k].status, "%s",
                                 results[k].message);
    int stopped = drift_stop_requested() != 0;
    for (unsigned k = 0; ranks && k < K; k++)
        stopped |= results[k].interrupted;
    if (stopped)
        return drift_err_set(e, DRIFT_ESTOP, "stopped by a signal");
    return DRIFT_OK;
}
