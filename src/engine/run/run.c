/* run.c: running chains.  Sets up each chain's random streams, access
 * stream, workspaces, sampler state and output file, writes the header,
 * loops the sampler's step until the budget is spent or a stop is
 * requested, and reports.  K chains run in K threads and share nothing
 * writable, so a chain's output depends only on (seed, chain id).  Not for
 * option parsing (the CLI) nor for the services samplers call (oracle.c). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "base/util.h"
#include "base/writer.h"
#include "chain.h"
#include "csvout.h"
#include "heldout.h"
#include "hparam.h"
#include "oracle.h"
#include "progress.h"
#include "run.h"

/* Rows per model call in full passes, and the smallest workspace. */
#define MIN_WS_ROWS 256
#define DEFAULT_BATCH 32

static volatile sig_atomic_t stop_requested;

void drift_run_request_stop(void) { stop_requested = 1; }

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
    drift_free(c->traj_m1);
    drift_free(c->traj_m2);
    drift_free(c->seg_buf);
    drift_free(c->row_buf);
    drift_free(c->state);
    drift_csvout_free(c);
}

int drift_run_chain_setup(drift_chain *c, const drift_run_config *cfg,
                      unsigned id, double *theta)
{
    const drift_model *m = cfg->model;
    memset(c, 0, sizeof *c);
    c->cfg = cfg;
    c->model = m;
    c->id = id;
    c->d = m->dim;
    c->N = m->n_rows;
    c->batch = cfg->batch ? cfg->batch
                          : (cfg->sampler->default_batch
                                 ? cfg->sampler->default_batch
                                 : DEFAULT_BATCH);
    if (c->N && c->batch > c->N)
        c->batch = c->N;
    drift_rng_seed(&c->rng, cfg->seed, id);
    c->access_rng = c->rng;
    drift_rng_long_jump(&c->access_rng);
    c->noise_rng = c->access_rng;
    drift_rng_long_jump(&c->noise_rng);
    c->lp_rng = c->noise_rng; /* lp__ estimates (emit.c): a stream apart */
    drift_rng_long_jump(&c->lp_rng);
    c->in_warmup = cfg->warmup > 0;
    c->cap_warm = c->cap_samp = UINT64_MAX;
    c->ws_cap = c->batch > MIN_WS_ROWS ? c->batch : MIN_WS_ROWS;
    if (drift_stream_init(&c->stream, cfg->access, c->N, &c->access_rng,
                          c->ws_cap))
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    drift_advisor_init(&c->advisor, cfg->data_mapped ? cfg->data : NULL,
                       cfg->data_mapped ? cfg->data_fd : -1, cfg->data_map);
    c->ws = m->workspace_new(m->self, c->ws_cap);
    c->rows_buf = drift_malloc_array(c->ws_cap, sizeof(size_t));
    c->gbuf = drift_calloc(c->d, sizeof(double));
    c->gbuf2 = drift_calloc(c->d, sizeof(double));
    c->ll_buf = drift_malloc_array(c->ws_cap, sizeof(double));
    /* Trajectory buffers only for continuous samplers: three vectors of
     * length d that a discrete sampler never touches (gigabytes at
     * D = 10^8). */
    int continuous = (cfg->sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
    if (continuous) {
        c->traj_m1 = drift_calloc(c->d, sizeof(double));
        c->traj_m2 = drift_calloc(c->d, sizeof(double));
        c->seg_buf = drift_calloc(c->d, sizeof(double));
    }
    c->row_len = 2 + cfg->sampler->n_columns + m->n_out;
    if (cfg->emit_segments) /* time__, duration__, x0.k__, v.k__ */
        c->row_len += 2 + 2 * c->d;
    c->row_buf = drift_calloc(c->row_len, sizeof(double));
    if (!c->ws || !c->rows_buf || !c->gbuf || !c->gbuf2 ||
        !c->ll_buf || !c->row_buf ||
        (continuous && (!c->traj_m1 || !c->traj_m2 || !c->seg_buf)))
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory setting up chain %u", id);
    if (cfg->sampler->state_size) {
        c->state = drift_calloc(1, cfg->sampler->state_size);
        if (!c->state)
            return drift_chain_fail(c, DRIFT_ENOMEM,
                                    "out of memory for the sampler state");
    }
    if (cfg->grad_noise > 0) {
        /* The step size: 'h' in the Langevin family, 'eta' in AGLD's. */
        long k = drift_hparams_find(cfg->sampler->hparams,
                                    cfg->sampler->n_hparams, "h");
        if (k < 0)
            k = drift_hparams_find(cfg->sampler->hparams,
                                   cfg->sampler->n_hparams, "eta");
        if (k < 0 || isnan(cfg->hp[k]))
            return drift_chain_fail(c, DRIFT_EINVAL,
                                    "--grad-noise needs a sampler with a step "
                                    "size 'h' or 'eta'; %s has none",
                                    cfg->sampler->name);
        c->grad_noise_sd = sqrt(2.0 * cfg->grad_noise / cfg->hp[k]);
    }
    /* Initial point. */
    switch (cfg->init_mode) {
    case DRIFT_INIT_RANDOM: {
        /* Stan's default radius is 2: U(-2, 2). */
        double r = cfg->init_radius > 0 ? cfg->init_radius : 2.0;
        for (size_t k = 0; k < c->d; k++)
            theta[k] = -r + 2.0 * r * drift_rng_uniform(&c->rng);
        break;
    }
    case DRIFT_INIT_VALUES: {
        drift_err me = {{0}};
        if (m->unconstrain(m->self, cfg->init_values, theta, &me))
            return drift_chain_fail(c, DRIFT_EINVAL, "--init: %s", me.msg);
        break;
    }
    default:
        memset(theta, 0, c->d * sizeof *theta);
    }
    return DRIFT_OK;
}

/* The time averages of a continuous trajectory after warmup: mean[k] and
 * var[k] (d each) from the exact integrals.  0 when there is none. */
static int trajectory_moments(const drift_chain *c, double *mean, double *var)
{
    if (!(c->cfg->sampler->flags & DRIFT_SAMPLER_CONTINUOUS) || c->t_mom <= 0)
        return 0;
    for (size_t k = 0; k < c->d; k++) {
        mean[k] = c->traj_m1[k] / c->t_mom;
        double v = c->traj_m2[k] / c->t_mom - mean[k] * mean[k];
        var[k] = v > 0 ? v : 0; /* rounding below zero for a still coordinate */
    }
    return 1;
}

static int budget_spent(const drift_chain *c, double t_start)
{
    const drift_run_config *cfg = c->cfg;
    if (stop_requested)
        return 1;
    if (cfg->iters && !c->in_warmup && c->iter - c->warm_iters >= cfg->iters)
        return 1;
    if (cfg->passes > 0 && c->N &&
        (double)c->grads >= cfg->passes * (double)c->N)
        return 1;
    if (cfg->seconds > 0 && drift_now() - t_start >= cfg->seconds)
        return 1;
    return 0;
}

/* ---- equal counts across the chains of a run ------------------------------
 * Readers of Stan CSV take a run's files together only when every chain
 * has as many warmup draws and as many draws after warmup (rstan, cmdstanr
 * and CmdStanPy refuse the files otherwise).  Budgets in passes or seconds,
 * a signal, and continuous samplers (whose draws fall on a time grid) end
 * chains at different counts, so the chains meet twice: at the end of
 * warmup and at the end of the run.  At each meeting the count to reach is
 * the largest any live chain brought; the others step on (past their
 * budget) until they reach it, and emit.c writes no draw past it.  A chain
 * that fails leaves the meetings; its file stands alone. */
typedef struct run_sync {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned live;          /* chains that have not failed or ended */
    unsigned arrived[2];    /* 0: end of warmup, 1: end of the run */
    uint64_t target[2];
    int stopping;           /* a chain met at the end of warmup because a
                               budget ran out or a stop was requested */
    int off;                /* chains run one after another: no waiting */
} run_sync;

static void sync_init(run_sync *s, unsigned K)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->live = K;
}

static void sync_destroy(run_sync *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

/* The chain no longer takes part (it failed, or ended). */
static void sync_leave(run_sync *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->live)
        s->live--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void sync_disable(run_sync *s)
{
    pthread_mutex_lock(&s->mu);
    s->off = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Meeting `which` with this chain's count; returns the count to reach.
 * *stopping (meeting 0 only) gets whether any chain came because its
 * budget ran out or a stop was requested (stop: this chain's own). */
static uint64_t sync_meet(run_sync *s, int which, uint64_t count, int stop,
                          int *stopping)
{
    pthread_mutex_lock(&s->mu);
    s->arrived[which]++;
    if (count > s->target[which])
        s->target[which] = count;
    if (stop)
        s->stopping = 1;
    pthread_cond_broadcast(&s->cv);
    while (!s->off && s->arrived[which] < s->live)
        pthread_cond_wait(&s->cv, &s->mu);
    uint64_t t = s->off ? count : s->target[which];
    if (stopping)
        *stopping = s->off ? stop : s->stopping;
    pthread_mutex_unlock(&s->mu);
    return t;
}

typedef struct chain_job {
    const drift_run_config *cfg;
    unsigned id;
    drift_chain_result *res;
    drift_progress *prog;
    unsigned k;             /* 0-based index among the run's chains */
    run_sync *sync;
} chain_job;

/* A row of held-out metrics at the chain's current point. */
static void eval_heldout(drift_chain *c, double t_start)
{
    drift_err e = {{0}};
    double passes = c->N ? (double)c->grads / (double)c->N : 0;
    if (drift_heldout_write(c->heldout, passes, drift_now() - t_start, c->iter,
                            &e))
        drift_chain_fail(c, DRIFT_EIO, "%s", e.msg);
}

/* What a chain's step loop carries besides the chain. */
typedef struct step_ctx {
    double t_start;
    double eval_grads, next_eval; /* held-out evaluations every
                                     eval_every data passes */
    uint64_t last_eval;
    drift_progress_slot *slot;
} step_ctx;

/* One step of the sampler; non-zero when the chain failed. */
static int one_step(drift_chain *c, double *theta, step_ctx *x)
{
    const drift_run_config *cfg = c->cfg;
    int rc = cfg->sampler->step(c->state, &drift_services_table, c, theta);
    if (rc || c->failed) {
        if (!c->failed)
            drift_chain_fail(c, rc, "chain %u, iteration %llu: sampler "
                             "%s failed (status %d)",
                             c->id, (unsigned long long)c->iter,
                             cfg->sampler->name, rc);
        return 1;
    }
    c->iter++;
    drift_progress_note(x->slot, c->iter, c->grads, c->draws_written);
    if (c->heldout && x->eval_grads > 0 && (double)c->grads >= x->next_eval) {
        eval_heldout(c, x->t_start);
        x->last_eval = c->grads;
        while (x->next_eval <= (double)c->grads)
            x->next_eval += x->eval_grads;
    }
    return c->failed != 0;
}

/* Steps until *count reaches target (catching up with the other chains of
 * the run); gives up, leaving the counts unequal, after far more steps
 * than the chain has taken so far (a sampler that stopped emitting).
 * Returns the steps taken. */
static uint64_t catch_up(drift_chain *c, double *theta, step_ctx *x,
                         const uint64_t *count, uint64_t target)
{
    uint64_t limit = 2 * c->iter + 1000, steps = 0;
    while (!c->failed && *count < target && steps < limit) {
        if (one_step(c, theta, x))
            break;
        steps++;
    }
    return steps;
}

/* prog (may be NULL) watches the run; k is the chain's index in it. */
static void run_chain(const drift_run_config *cfg, unsigned id,
                      drift_chain_result *res, drift_progress *prog,
                      unsigned k, run_sync *sync)
{
    drift_chain c;
    step_ctx x = {drift_now(), 0, 0, UINT64_MAX,
                  drift_progress_slot_at(prog, k)};
    double t_start = x.t_start, t_warm_end = t_start;
    memset(res, 0, sizeof *res);
    res->id = id;
    double *theta = drift_calloc(cfg->model->dim, sizeof(double));
    int started = 0, have_moments = 0, stopping = 0;
    uint64_t extra_steps = 0;
    if (!theta) {
        res->status = DRIFT_ENOMEM;
        snprintf(res->message, sizeof res->message, "out of memory");
        sync_leave(sync);
        return;
    }
    if (drift_run_chain_setup(&c, cfg, id, theta))
        goto done;
    if (cfg->out_path) {
        drift_chain_path(cfg->out_path, cfg->chains, id, res->path,
                         sizeof res->path);
        drift_err e;
        if (drift_writer_open(res->path, &c.w, &e)) {
            drift_chain_fail(&c, DRIFT_EIO, "%s", e.msg);
            goto done;
        }
    }
    if (cfg->test_model) {
        drift_err e = {{0}};
        if (cfg->out_path)
            drift_heldout_path(res->path, res->metrics_path,
                               sizeof res->metrics_path);
        int rc = drift_heldout_new(&c.heldout, cfg->test_model,
                                   cfg->test_path,
                                   cfg->out_path ? res->metrics_path : NULL,
                                   id, &e);
        if (rc) {
            drift_chain_fail(&c, rc, "%s", e.msg);
            goto done;
        }
    }
    const drift_services *svc = &drift_services_table;
    if (cfg->sampler->init(c.state, svc, &c, cfg->hp, theta)) {
        if (!c.failed)
            drift_chain_fail(&c, DRIFT_EINVAL, "sampler %s failed to start",
                             cfg->sampler->name);
        goto done;
    }
    if (c.failed || drift_csvout_begin(&c))
        goto done;
    started = 1;
    x.eval_grads = cfg->eval_every * (double)c.N;
    x.next_eval = x.eval_grads;
    /* Warmup: --warmup iterations, then as many more as the run's other
     * chains need to be matched (or, when a budget ran out or a stop was
     * requested in warmup, the end of the run). */
    if (c.in_warmup) {
        int stop = 0;
        while (c.iter < cfg->warmup && !(stop = budget_spent(&c, t_start)))
            if (one_step(&c, theta, &x))
                break;
        if (!c.failed) {
            const uint64_t *count =
                cfg->save_warmup ? &c.warm_offered : &c.iter;
            uint64_t target = sync_meet(sync, 0, *count, stop, &stopping);
            /* Warmup ended early: a whole number of --thin steps, so that
             * every reader splits saved warmup from the draws alike
             * (ArviZ rounds num_warmup / thin down, the others up). */
            if (stopping && cfg->save_warmup && cfg->thin > 1 &&
                !(cfg->sampler->flags & DRIFT_SAMPLER_CONTINUOUS))
                target = (target + cfg->thin - 1) / cfg->thin * cfg->thin;
            if (cfg->save_warmup)
                c.cap_warm = target;
            extra_steps += catch_up(&c, theta, &x, count, target);
        }
        c.warm_iters = c.iter;
        t_warm_end = drift_now();
        /* Thinning restarts after warmup, so the kept draws after warmup
         * do not depend on --save-warmup. */
        if (!c.failed && !stopping)
            c.in_warmup = 0;
    }
    if (!c.failed && !c.in_warmup) {
        while (!budget_spent(&c, t_start))
            if (one_step(&c, theta, &x))
                break;
        if (!c.failed) {
            uint64_t target = sync_meet(sync, 1, c.samp_offered, 0, NULL);
            c.cap_samp = target;
            extra_steps += catch_up(&c, theta, &x, &c.samp_offered, target);
        }
    }
    if (cfg->sampler->finish)
        cfg->sampler->finish(c.state, svc, &c);
    /* The final evaluation, over every draw kept (also after a failure:
     * the draws so far are valid). */
    if (c.heldout && c.grads != x.last_eval)
        eval_heldout(&c, t_start);
    /* The trajectory's moments: to the caller and, below, the footer.
     * seg_buf and gbuf2 are free by now and hold d values each. */
    have_moments = trajectory_moments(&c, c.seg_buf, c.gbuf2);
    if (have_moments && cfg->on_trajectory)
        cfg->on_trajectory(cfg->on_trajectory_user, id, c.t_mom, c.seg_buf,
                           c.gbuf2, c.d);
done:
    sync_leave(sync);
    res->iterations = c.iter;
    res->grads = c.grads;
    res->draws = c.draws_written;
    res->proposals = c.proposals;
    res->violations = c.violations;
    res->status = c.failed;
    res->started = started;
    snprintf(res->message, sizeof res->message, "%s", c.message);
    if (c.w) {
        /* Rows are whole: a failed chain's draws so far stay a valid file;
         * a chain that never started leaves nothing behind. */
        if (started) {
            double t_end = drift_now();
            char note[700] = "";
            if (c.failed)
                snprintf(note, sizeof note,
                         "chain %u failed at iteration %llu; the draws "
                         "before it are valid: %s",
                         id, (unsigned long long)c.iter, c.message);
            else if (stop_requested)
                snprintf(note, sizeof note,
                         "interrupted by a signal after %llu iterations "
                         "(%llu in warmup)%s",
                         (unsigned long long)c.iter,
                         (unsigned long long)c.warm_iters,
                         extra_steps ? "; it then ran on to the draw counts "
                                       "of the run's other chains"
                                     : "");
            else if (stopping)
                snprintf(note, sizeof note,
                         "the budget ran out in warmup, after %llu "
                         "iterations: no draws after warmup",
                         (unsigned long long)c.iter);
            else if (extra_steps)
                snprintf(note, sizeof note,
                         "%llu iterations past the budget, to the draw "
                         "counts of the run's other chains",
                         (unsigned long long)extra_steps);
            drift_csvout_end end = {
                t_warm_end - t_start, t_end - t_warm_end, note,
                have_moments ? c.seg_buf : NULL,
                have_moments ? c.gbuf2 : NULL, c.t_mom};
            if (c.in_warmup) /* it never left warmup */
                end.sampling_seconds = 0;
            drift_csvout_finish(&c, &end);
            drift_err e = {{0}};
            if (drift_writer_commit(c.w, &e) && !res->status) {
                res->status = DRIFT_EIO;
                snprintf(res->message, sizeof res->message, "%s", e.msg);
            }
        } else {
            drift_writer_abort(c.w);
            res->path[0] = '\0';
        }
        c.w = NULL;
    }
    if (c.heldout) {
        drift_err e = {{0}};
        if (drift_heldout_close(c.heldout, started, &e) && !res->status) {
            res->status = DRIFT_EIO;
            snprintf(res->message, sizeof res->message, "%s", e.msg);
        }
        c.heldout = NULL;
    }
    if (!started)
        res->metrics_path[0] = '\0';
    res->seconds = drift_now() - t_start;
    drift_run_chain_release(&c);
    drift_free(theta);
    drift_progress_done(prog, k);
}

static void *chain_thread(void *arg)
{
    chain_job *job = arg;
    run_chain(job->cfg, job->id, job->res, job->prog, job->k, job->sync);
    return NULL;
}

int drift_run(const drift_run_config *cfg, drift_chain_result *results,
              drift_err *e)
{
    unsigned K = cfg->chains ? cfg->chains : 1;
    unsigned first = cfg->first_chain_id ? cfg->first_chain_id : 1;
    if (cfg->thin == 0)
        return drift_err_set(e, DRIFT_EINVAL, "--thin must be at least 1");
    if (cfg->batch && cfg->model->n_rows && cfg->batch > cfg->model->n_rows)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--batch %zu: larger than the %zu rows of the "
                             "data",
                             cfg->batch, cfg->model->n_rows);
    if (cfg->emit_segments && !(cfg->sampler->flags & DRIFT_SAMPLER_CONTINUOUS))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--emit segments: sampler %s emits draws, not "
                             "the segments of a continuous trajectory; use "
                             "--emit draws (or a piecewise-deterministic "
                             "sampler such as bps)",
                             cfg->sampler->name);
    if (cfg->passes > 0 && cfg->model->n_rows == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--passes: the model has no data rows; give "
                             "--iter instead");
    /* BLAS stays single-threaded: chains are the parallelism, and a fixed
     * thread count keeps sums in a fixed order (same seed, same bytes). */
    openblas_set_num_threads(1);
    stop_requested = 0;
    drift_progress *prog = NULL;
    if (cfg->progress) {
        drift_progress_budget b = {
            cfg->iters ? cfg->warmup + cfg->iters : 0, cfg->warmup,
            cfg->passes, cfg->seconds, cfg->model->n_rows};
        prog = drift_progress_new(K, first, &b, stderr);
    }
    run_sync sync;
    sync_init(&sync, K);
    if (K == 1 && !prog) {
        run_chain(cfg, first, &results[0], NULL, 0, &sync);
    } else {
        pthread_t *tids = drift_calloc(K, sizeof *tids);
        chain_job *jobs = drift_calloc(K, sizeof *jobs);
        unsigned char *live = drift_calloc(K, 1);
        if (!tids || !jobs || !live) {
            drift_free(tids);
            drift_free(jobs);
            drift_free(live);
            drift_progress_free(prog);
            sync_destroy(&sync);
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        }
        for (unsigned k = 0; k < K; k++) {
            jobs[k] = (chain_job){cfg, first + k, &results[k], prog, k, &sync};
            if (pthread_create(&tids[k], NULL, chain_thread, &jobs[k]) == 0) {
                live[k] = 1;
            } else {
                /* Run it here instead: slower, same draws; the chains can
                 * no longer wait for each other. */
                sync_disable(&sync);
                run_chain(cfg, first + k, &results[k], prog, k, &sync);
            }
        }
        if (prog)
            drift_progress_watch(prog);
        for (unsigned k = 0; k < K; k++)
            if (live[k])
                pthread_join(tids[k], NULL);
        drift_free(tids);
        drift_free(jobs);
        drift_free(live);
    }
    sync_destroy(&sync);
    drift_progress_free(prog);
    for (unsigned k = 0; k < K; k++)
        if (results[k].status)
            return drift_err_set(e, results[k].status, "%s",
                                 results[k].message);
    if (stop_requested)
        return drift_err_set(e, DRIFT_ESTOP, "stopped by a signal");
    return DRIFT_OK;
}
