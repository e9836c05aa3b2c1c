/* runplan.c: the run-level tuning, the run extension "tune" (ext.h).  On
 * the run's first chain, in the run-level setup, while the other chains
 * wait: the step size the user left to the engine, chosen by the KSD
 * search (tune.h) or, for a minibatch sampler at its defaults, by the
 * engine's plan (the bias check, biascheck.h), which also sizes the
 * burn-in, iterations and thinning; or the check of a step size the user
 * gave.  All of them run pilot chains, made here like chain 1 from the
 * run's configuration.  Not for the search's scoring (tune.c) nor the
 * bias check's comparisons (biascheck.c), which see pilots only through
 * drift_tune_ops, nor the core loop (run.c). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/msg.h"
#include "base/stop.h"
#include "base/util.h"
#include "adapt.h"
#include "biascheck.h"
#include "chain.h"
#include "ext.h"
#include "guard.h"
#include "hparam.h"
#include "mode.h"
#include "run.h"
#include "services.h"
#include "tune.h"
#include "watch.h"

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
    if (drift_run_chain_find_init(pc, p->theta))
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
                 : cfg->budget.warmup > 2000 ? cfg->budget.warmup
                                             : 2000;
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


/* Chain 1 failed while its pilots chose the step size (status rc, the
 * search's message msg): a stop by a signal says so; the search's own
 * numeric and memory failures say where they happened; the rest (a
 * pilot's failure, such as the sampler refusing its settings) are the
 * chain's as they are. */
static void search_failed(drift_chain *c, int rc, const char *msg)
{
    if (rc == DRIFT_ESTOP && drift_stop_requested())
        drift_chain_fail(c, DRIFT_ESTOP,
                         "chain %u: stopped by a signal while choosing "
                         "%s's step size, before any draw",
                         c->id, c->cfg->step.sampler->name);
    else if (rc == DRIFT_ENUMERIC || rc == DRIFT_ENOMEM)
        drift_chain_fail(c, rc, "chain %u: choosing the step size: %s",
                         c->id, msg);
    else
        drift_chain_fail(c, rc, "%s", msg);
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
        s,
        (size_t)param,
        c->d,
        c->N,
        c->batch,
        steps,
        TUNE_DRAWS,
        rows,
        cfg->budget.seconds > 0 ? TUNE_SHARE * cfg->budget.seconds : 0,
        cfg->launch.seed,
        NULL,
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
        search_failed(c, rc, e.msg);
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
        allow =
            fmin(allow, PLAN_BUDGET_SHARE * cfg->budget.passes * N / per_step);
    drift_biascheck_config bc = {
        s,
        d,
        hp->def,
        hp->lo,
        hp->hi,
        run->cv.ready ? run->cv.mode : NULL,
        chol,
        scale,
        (uint64_t)fmin(allow, 1e12),
        PLAN_FIRST_STEPS,
        0,
        NULL,
        NULL,
        NULL,
        cfg->budget.seconds > 0 ? PLAN_BUDGET_SHARE * cfg->budget.seconds : 0,
        NULL,
        NULL};
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
        search_failed(c, rc, e.msg);
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
        pc->budget.thin =
            (pc->budget.iters + BIASCHECK_KEEP - 1) / BIASCHECK_KEEP;
        /* Saved warmup splits from the draws at a multiple of thin. */
        if (pc->output.save_warmup && pc->budget.warmup % pc->budget.thin)
            pc->budget.warmup +=
                pc->budget.thin - pc->budget.warmup % pc->budget.thin;
    }
    run->planned = 1;

    double passes = N > 0 ? (double)p->grads / N : 0;
    double run_passes =
        N > 0 ? (double)(pc->budget.warmup + pc->budget.iters) * per_step / N
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
             r.n_pilots, passes, tau, (unsigned long long)pc->budget.warmup,
             (unsigned long long)pc->budget.iters,
             (unsigned long long)pc->budget.thin,
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
        s,
        d,
        0,
        0,
        0,
        run->cv.ready ? run->cv.mode : NULL,
        NULL,
        scale,
        (uint64_t)fmin(allow, 1e12),
        PLAN_FIRST_STEPS,
        TUNE_DRAWS,
        plan_stein,
        &tc,
        plan_points,
        cfg->budget.seconds > 0 ? PLAN_BUDGET_SHARE * cfg->budget.seconds : 0,
        NULL,
        NULL};
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
        pc->budget.thin_time =
            dt_seg * (double)pc->budget.iters / BIASCHECK_KEEP;
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
    double steps = cfg->budget.iters
                       ? (double)(cfg->budget.warmup + cfg->budget.iters)
                       : 0;
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

/* ---- the run-level tuning as a run extension (ext.h) ------------------- */

/* The search runs pilot chains in one process: a step size left to the
 * engine cannot be chosen across ranks. */
static int tune_check(const drift_run_config *cfg, drift_err *e)
{
    if (!cfg->ranks)
        return DRIFT_OK;
    long k = drift_hparams_step_size(cfg->step.sampler->hparams,
                                     cfg->step.sampler->n_hparams);
    if (k >= 0 && isnan(cfg->step.hp[k]))
        return drift_err_set(e, DRIFT_EINVAL,
                             "sampler %s under mpirun: its step size "
                             "'%s' is chosen by pilot chains in one "
                             "process only; give it (--set %s=...)",
                             cfg->step.sampler->name,
                             cfg->step.sampler->hparams[k].name,
                             cfg->step.sampler->hparams[k].name);
    return DRIFT_OK;
}

/* The run-level setup's tuning, on chain 1 (c): a continuous minibatch
 * sampler whose budget or thinning the user left to the engine gets its
 * plan; a step size left to the engine is chosen by the plan where the
 * plan is on and the budget affords its search, else by the KSD search,
 * and every chain's sampler gets it (run->hp); a step size given is
 * checked where the plan asks for that (not under --seconds, whose time
 * would be the run's).  Non-zero when the chain failed. */
static int tune_setup(drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    int ok = 1;
    if ((s->flags & DRIFT_SAMPLER_CONTINUOUS) &&
        (cfg->plan.budget || cfg->plan.thin)) {
        c->phase = DRIFT_CHAIN_SETUP;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
        if (plan_continuous(c))
            ok = 0;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
        c->phase = DRIFT_CHAIN_STEPPING;
        return !ok;
    }
    long param = drift_hparams_step_size(s->hparams, s->n_hparams);
    if (param >= 0 && isnan(cfg->step.hp[param])) {
        c->phase = DRIFT_CHAIN_SETUP;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
        if (cfg->plan.step && plan_affordable(c) ? plan_run(c, param)
                                                 : tune_step_size(c, param))
            ok = 0;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
        c->phase = DRIFT_CHAIN_STEPPING;
        if (ok)
            c->hp = c->run->hp;
    } else if (param >= 0 && cfg->plan.check && cfg->budget.seconds <= 0) {
        c->phase = DRIFT_CHAIN_SETUP;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_SETUP, 0);
        if (check_given_step(c, param))
            ok = 0;
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, 0);
        c->phase = DRIFT_CHAIN_STEPPING;
    }
    return !ok;
}

const drift_run_ext drift_tune_ext = {
    .name = "tune",
    .check = tune_check,
    .setup = tune_setup,
};
