/* bench_plan.h: what the benchmarks share to run what drift sample runs:
 * a model opened over rows in memory or a data file as the command opens
 * it, a plan over it (drift_plan_new_internal: the command's defaults and
 * checks), its run timed, and a chain set up from the plan's
 * configuration for timing the engine's services (grad_full) alone.
 * Header only (each bench is one file).  Not a test. */
#ifndef DRIFT_BENCH_PLAN_H
#define DRIFT_BENCH_PLAN_H

#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "engine/run/plan.h"
#include "engine/run/run.h"

/* Opens model (a model plugin's name, or a .drift file, whose path must
 * outlive p) over the rows in memory view (which must outlive p) or the
 * data file path, with the model option set ("k=v", --model-set; NULL:
 * none); exits on failure. */
static inline void bench_problem_open(drift_registry *reg,
                                      const char *model,
                                      const drift_data *view,
                                      const char *path, const char *set,
                                      drift_problem *p)
{
    const drift_data *tables[1] = {view};
    const char *files[2] = {path, NULL};
    char *sets[1] = {(char *)set};
    drift_problem_spec spec = {.model = model,
                               .data = path ? files : NULL,
                               .model_set = set ? sets : NULL,
                               .n_model_set = set ? 1 : 0,
                               .diag = stderr,
                               .tables = view ? tables : NULL,
                               .n_tables = view ? 1 : 0};
    drift_err e = {{0}};
    if (drift_problem_open(p, reg, &spec, &e)) {
        fprintf(stderr, "bench: %s: %s\n", model, e.msg);
        exit(1);
    }
}

static inline void bench_drop_row(void *user, unsigned chain_id,
                                  unsigned flags, const double *row,
                                  size_t n)
{
    (void)user, (void)chain_id, (void)flags, (void)row, (void)n;
}

/* A plan of sampler over p with drift sample's options opts[n], its rows
 * dropped; exits on failure.  The engine's check of a step size given
 * (pilots at h and h/2 before the chains start) is left out, as each
 * rank of a run across MPI ranks leaves it (the plan's unplanned): the
 * benches time the step loop and the model's services against plain C
 * loops doing the same arithmetic, of which the pilots are no part. */
static inline drift_plan *bench_plan(drift_registry *reg,
                                     const drift_problem *p,
                                     const char *sampler,
                                     const drift_option *opts, size_t n)
{
    drift_spec spec = {.sampler = sampler, .options = opts, .n_options = n,
                       .on_draw = bench_drop_row};
    drift_plan_internal in = {.reg = reg, .prob = p, .unplanned = 1};
    drift_plan *plan;
    drift_err e = {{0}};
    if (drift_plan_new_internal(&spec, &in, &plan, &e)) {
        fprintf(stderr, "bench: %s: %s\n", sampler, e.msg);
        exit(1);
    }
    return plan;
}

/* Seconds that a run of a fresh plan (as bench_plan makes it) takes, the
 * plan's making not counted; exits on failure. */
static inline double bench_plan_time(drift_registry *reg,
                                     const drift_problem *p,
                                     const char *sampler,
                                     const drift_option *opts, size_t n)
{
    drift_plan *plan = bench_plan(reg, p, sampler, opts, n);
    drift_err e = {{0}};
    double t = drift_now();
    if (drift_plan_run(plan, DRIFT_LAUNCH_IN_PROCESS, &e)) {
        fprintf(stderr, "bench: %s: %s\n", sampler, e.msg);
        exit(1);
    }
    t = drift_now() - t;
    drift_plan_free(plan);
    return t;
}

/* Chain 1 of plan set up as drift_run sets it up (streams, workspaces,
 * sampler state, the row store's read-ahead), its initial point into
 * theta, for calling the engine's services on; exits on failure.
 * drift_run_chain_release it before freeing the plan. */
static inline void bench_chain(drift_plan *plan, drift_chain *c,
                               double *theta)
{
    if (drift_run_chain_setup(c, &plan->cfg, 1, theta)) {
        fprintf(stderr, "bench: chain: %s\n", c->message);
        exit(1);
    }
}

#endif
