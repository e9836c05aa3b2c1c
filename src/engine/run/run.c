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

/* Rows per model call in full passes, and the smallest workspace. */
#define MIN_WS_ROWS 256

void drift_run_request_stop(void) { drift_stop_request(0); }

void drift_run_chain_release(drift_chain *c)
{
    const drift_model *m = c->model;
    if (c->scratch.ws && m)
        m->workspace_free(m->self, c->scratch.ws);
    drift_advisor_free(&c->access.advisor);
    if (m)
        drift_oracle_release(c);
    drift_stream_free(&c->access.stream);
    for (size_t k = 0; k < c->mem.n; k++)
        drift_free(c->mem.allocs[k]);
    drift_free(c->mem.allocs);
    drift_free(c->scratch.rows);
    drift_free(c->scratch.g);
    drift_free(c->scratch.g2);
    drift_free(c->scratch.rows_grad);
    drift_free(c->scratch.ll);
    drift_free(c->traj.m1);
    drift_free(c->traj.m2);
    drift_free(c->traj.seg);
    drift_free(c->output.row);
    drift_free(c->state);
    drift_watch_free(c);
    drift_csvout_free(c->output.csv);
    c->output.csv = NULL;
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
    c->noise.sd = sqrt(2.0 * cfg->step.grad_noise / c->hp[k]);
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
    c->adapt.step = NAN;
    drift_adapt_metric_init(&c->adapt.metric, DRIFT_METRIC_UNIT, c->d, NULL);
    drift_adapt_schedule_make(cfg->budget.warmup, &c->adapt.sched);
    c->info.warmup = cfg->budget.warmup;
    c->info.iterations = cfg->budget.iters;
    c->info.passes = cfg->budget.passes;
    c->info.seconds = cfg->budget.seconds;
    c->info.chains = cfg->launch.chains ? cfg->launch.chains : 1;
    c->info.init_buffer = c->adapt.sched.init_buffer;
    c->info.term_buffer = c->adapt.sched.term_buffer;
    c->info.base_window = c->adapt.sched.base_window;
    drift_rng_seed(&c->rng, cfg->launch.seed, id);
    c->access.rng = c->rng;
    drift_rng_long_jump(&c->access.rng);
    c->noise.rng = c->access.rng;
    drift_rng_long_jump(&c->noise.rng);
    c->output.lp_rng =
        c->noise.rng; /* lp__ estimates (emit.c): a stream apart */
    drift_rng_long_jump(&c->output.lp_rng);
    c->scratch.cap = c->batch > MIN_WS_ROWS ? c->batch : MIN_WS_ROWS;
    if (drift_stream_init(&c->access.stream, cfg->step.access, c->N,
                          &c->access.rng, c->scratch.cap))
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    drift_advisor_init(
        &c->access.advisor, cfg->problem.mapped ? cfg->problem.data : NULL,
        cfg->problem.mapped ? cfg->problem.fd : -1, cfg->problem.map);
    c->scratch.ws = m->workspace_new(m->self, c->scratch.cap);
    c->scratch.rows = drift_malloc_array(c->scratch.cap, sizeof(size_t));
    c->scratch.g = drift_calloc(c->d, sizeof(double));
    c->scratch.g2 = drift_calloc(c->d, sizeof(double));
    c->scratch.ll = drift_malloc_array(c->scratch.cap, sizeof(double));
    /* Trajectory buffers only for continuous samplers: three vectors of
     * length d that a discrete sampler never touches (gigabytes at
     * D = 10^8). */
    int continuous =
        (cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
    if (continuous) {
        c->traj.m1 = drift_calloc(c->d, sizeof(double));
        c->traj.m2 = drift_calloc(c->d, sizeof(double));
        c->traj.seg = drift_calloc(c->d, sizeof(double));
    }
    c->n_diag = drift_chain_n_diag(cfg->step.sampler, c->d);
    c->output.row_len = 2 + c->n_diag + m->n_out;
    if (cfg->output.emit_segments) /* time__, duration__, x0.k__, v.k__ */
        c->output.row_len += 2 + 2 * c->d;
    else /* derived and generated quantities, scores */
        c->output.row_len +=
            m->n_gen + (cfg->output.save_gradients ? c->d : 0);
    c->output.row = drift_calloc(c->output.row_len, sizeof(double));
    if (!c->scratch.ws || !c->scratch.rows || !c->scratch.g ||
        !c->scratch.g2 || !c->scratch.ll || !c->output.row ||
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
    if (!(c->cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) ||
        c->traj.t_mom <= 0)
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
    if (done <= warmup && drift_adapt_window_ends(&c->adapt.sched, done)) {
        int last = drift_adapt_last_window_ends(&c->adapt.sched, done);
        if (drift_adapt_metric_update(&c->adapt.metric, last) < 0) {
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

/* Run-level setup, on chain 1 (c) while the other chains wait for it in
 * wait_setup: --gradient cv's mode search from chain 1's initial point
 * theta (given values or a Pathfinder draw, else zeros), then the
 * extensions' setup hooks (the step size or plan the user left to the
 * engine, whose pilots use cv's estimates when cv is on), the Laplace
 * check's curvature at the final centre, then the sampler's own setup
 * with the hyperparameters as chosen.  Their cost stays in chain 1's
 * count. */
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
    if (ok && drift_run_ext_setup(c))
        ok = 0;
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
    unsigned first =
        c->cfg->launch.first_chain_id ? c->cfg->launch.first_chain_id : 1;
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
int drift_run_chain_find_init(drift_chain *c, double *theta)
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
        int rc = full ? svc->grad_full(c, theta, c->scratch.g2, &U)
                      : svc->grad_prior(c, theta, c->scratch.g2, &U);
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
    drift_adapt_schedule_make(cfg->budget.warmup, &c->adapt.sched);
    c->info.warmup = cfg->budget.warmup;
    c->info.iterations = cfg->budget.iters;
    c->info.init_buffer = c->adapt.sched.init_buffer;
    c->info.term_buffer = c->adapt.sched.term_buffer;
    c->info.base_window = c->adapt.sched.base_window;
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
    c->access.advisor.evict = c->access.advisor.drop && run->at_once == 1;
    c->stop = 1;
    if (rc)
        return -1;
    int file_failed = 0;
    if (cfg->output.path && (!cfg->ranks || cfg->ranks->writer)) {
        drift_chain_path(cfg->output.path, cfg->launch.chains, id, res->path,
                         sizeof res->path);
        drift_err e;
        if (drift_writer_open(res->path, &c->output.w, &e)) {
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
    if (drift_run_chain_find_init(c, c->theta))
        return -1;
    c->nonfinite[0] = '\0';
    drift_guard_call(c->ext.guard, DRIFT_GUARD_INIT, 0);
    int irc = cfg->step.sampler->init(c->state, &drift_services_table, c,
                                      c->hp, c->theta);
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
 * c->scratch.g2 (variances), free by now, for the file's footer. */
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
    int have_moments = trajectory_moments(c, c->traj.seg, c->scratch.g2);
    if (have_moments && cfg->output.on_trajectory)
        cfg->output.on_trajectory(cfg->output.on_trajectory_user, c->id,
                                  c->traj.t_mom, c->traj.seg, c->scratch.g2,
                                  c->d);
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
    if (!c->output.w)
        return;
    /* Rows are whole: a failed chain's draws so far stay a valid file;
     * a chain that never started leaves nothing behind. */
    if (started && !c->output.write_failed) {
        double t_end = drift_now();
        uint64_t warm_iters =
            c->iter < cfg->budget.warmup ? c->iter : cfg->budget.warmup;
        char note[700] = "";
        if (c->failed)
            snprintf(note, sizeof note,
                     "chain %u failed at iteration %llu; the draws "
                     "before it are valid: %s",
                     c->id, (unsigned long long)c->iter, c->message);
        else if (interrupted(c))
            snprintf(
                note, sizeof note,
                "interrupted by a signal after %llu iterations "
                "(%llu in warmup)%s",
                (unsigned long long)c->iter, (unsigned long long)warm_iters,
                c->iter < cfg->budget.warmup ? ": no draws after warmup" : "");
        else if (c->iter < cfg->budget.warmup)
            snprintf(note, sizeof note,
                     "the budget ran out in warmup, after %llu "
                     "iterations: no draws after warmup",
                     (unsigned long long)c->iter);
        double t_warm_end = c->t_warm_end;
        if (t_warm_end < 0)
            t_warm_end = cfg->budget.warmup ? t_end : c->t_start;
        drift_csvout_end end = {t_warm_end - c->t_start,
                                t_end - t_warm_end,
                                note,
                                have_moments ? c->traj.seg : NULL,
                                have_moments ? c->scratch.g2 : NULL,
                                c->traj.t_mom};
        drift_csvout_finish(c, &end);
        file->w = c->output.w;
        file->out = c->output.csv;
        c->output.csv = NULL;
    } else {
        /* A failed write (the first one stopped the chain: nothing goes
         * in place, a previous file of the name stays) or a chain that
         * never started. */
        drift_writer_abort(c->output.w);
        drift_guard_file_settled(c->ext.guard);
        res->path[0] = '\0';
    }
    c->output.w = NULL;
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
    res->draws = c.output.draws_written;
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
    unsigned K = ranks                ? ranks->count
                 : cfg->launch.chains ? cfg->launch.chains
                                      : 1;
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
    if (cfg->output.emit_segments &&
        !(cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--emit segments: sampler %s emits draws, not "
                             "the segments of a continuous trajectory; use "
                             "--emit draws (or a piecewise-deterministic "
                             "sampler such as bps)",
                             cfg->step.sampler->name);
    /* The engine's own vectors of d values per chain (point, gradients,
     * and a continuous trajectory's moments), before any is allocated: a
     * model too big for the machine is refused with its size. */
    int continuous =
        (cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
    double vecs = 3.0 + (continuous ? 3.0 : 0.0) +
                  (cfg->output.emit_segments ? 2.0 : 0.0);
    double need = (double)K * 8.0 *
                  (vecs * (double)cfg->problem.model->dim +
                   (double)cfg->problem.model->n_out);
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
                             cfg->problem.model->dim, K, K == 1 ? "" : "s",
                             want, vecs, cfg->problem.model->dim, have);
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
        if (cfg->budget.passes > 0 &&
            cfg->budget.passes < DRIFT_MODE_MIN_PASSES)
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
    unsigned K = ranks                ? ranks->count
                 : cfg->launch.chains ? cfg->launch.chains
                                      : 1;
    unsigned first =
        (cfg->launch.first_chain_id ? cfg->launch.first_chain_id : 1) +
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
            cfg->budget.iters ? cfg->budget.warmup + cfg->budget.iters : 0,
            cfg->budget.warmup, cfg->budget.passes, cfg->budget.seconds,
            cfg->problem.model->n_rows};
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
