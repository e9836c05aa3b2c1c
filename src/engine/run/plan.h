/* plan.h: a run's plan inside drift (the public calls are in
 * <drift/drift.h>): a spec's options parsed, drift sample's defaults and
 * checks applied, the model, data and sampler opened, the run's
 * configuration filled and checked (drift_run_check).  What front ends
 * that do more than the public API see: the plan's parts, its phases,
 * and the hooks through which a front end joins a run across MPI ranks
 * or a checkpoint's manifest.  Not for running chains (run.h). */
#ifndef DRIFT_PLAN_H
#define DRIFT_PLAN_H

#include <stdio.h>

#include <drift/drift.h>

#include "chain.h"
#include "heldout.h"
#include "method.h"
#include "plugin.h"
#include "problem.h"

/* Most data files a spec may name. */
#define DRIFT_PLAN_MAX_DATA 7

/* The spec's options, parsed (the defaults are applied by
 * drift_plan_open). */
typedef struct drift_plan_args {
    const char *model, *sampler, *out, *init, *test;
    const char *data[DRIFT_PLAN_MAX_DATA + 1];    /* NULL-terminated */
    size_t n_data;
    char **model_set;       /* "k=v" model options */
    size_t n_model_set;
    char **data_set;        /* .drift models: "name=value" */
    size_t n_data_set;
    char **set;             /* "k=v" sampler hyperparameters */
    size_t n_set;
    size_t batch;
    drift_access access;
    uint64_t iters, thin, warmup, seed, generated_every;
    int have_seed, have_thin, have_warmup, save_warmup, quiet;
    int have_gradient;      /* gradient was given */
    int save_gradients;
    int warmup_only;        /* iter 0 */
    int emit_segments;
    double passes, seconds, thin_time, grad_noise, eval_every, init_radius;
    double step_timeout;    /* 0: none */
    unsigned chains, chain_id, threads;
    size_t max_memory;
    uint64_t ckpt_iters;    /* checkpoint-every K */
    double ckpt_seconds;    /* checkpoint-every T[smh] */
    unsigned ranks_per_chain;   /* 0: the default */
    int gradient;           /* DRIFT_GRADIENT_* */
} drift_plan_args;

/* What a front end does at fixed points of drift_plan_open; each returns
 * DRIFT_OK or an error (with its message in e, or an empty message when
 * the hook said it itself).  Any may be NULL. */
typedef struct drift_plan_hooks {
    void *user;
    /* Before a plugin given by path is loaded (kind "sampler" or
     * "model"). */
    int (*vet_plugin)(void *user, drift_plan *p, const char *kind,
                      const char *spec, drift_err *e);
    /* The sampler opened, its hyperparameters set and the seed drawn;
     * nothing of the model or data read yet. */
    int (*before_data)(void *user, drift_plan *p, drift_err *e);
    /* Model, data, inits and held-out rows opened; the configuration not
     * yet filled. */
    int (*after_data)(void *user, drift_plan *p, drift_err *e);
} drift_plan_hooks;

/* What an in-process caller that already holds an opened problem gives
 * drift_plan_new_internal besides its spec: only what no option of drift
 * sample can say.  Everything an option says (sampler, chains, iter,
 * warmup, thin, seed, batch, access, set, init, test ...) goes in the
 * spec's options, so that the plan's defaults and checks are the
 * command's.  Every pointer is borrowed and must outlive the plan. */
typedef struct drift_plan_internal {
    /* The model over its data, opened from reg (required); the plan
     * neither reopens nor closes it. */
    drift_registry *reg;
    const drift_problem *prob;
    /* Initial values held in memory (n_out values, on the constrained
     * scale; init_given: which of them, NULL: all), where the init option
     * names a file; NULL: as the init option says. */
    const double *init_values;
    const unsigned char *init_given;
    /* A continuous sampler's exact time averages, once per chain (as
     * drift_run_config's on_trajectory); NULL: none. */
    void (*on_trajectory)(void *user, unsigned chain_id, double time,
                          const double *mean, const double *var, size_t d);
    void *on_trajectory_user;
    /* Chains at once (0: the processor cores). */
    unsigned parallel;
    /* The run as each rank of a run across MPI ranks runs it: without
     * the engine's plan for minibatch samplers, so that a step size left
     * to the engine is chosen by the step-size search (tune.h) and one
     * given is not checked.  For the tests of that search, which a run
     * in one process reaches no other way. */
    int unplanned;
} drift_plan_internal;

struct drift_plan {
    drift_plan_args a;
    const char *method;
    /* A method other than sample (method.h): its table and its options
     * parsed (the common ones, out, seed, model-set and data-set, in a);
     * NULL for sample. */
    const struct drift_method *mt;
    void *margs;
    int to_stdout;          /* the method's rows to stdout when no out is
                               given (drift log-prob's) */
    uint64_t method_rows;   /* the rows the method delivered */
    /* every file the method reads (data, model, its own files), which no
     * output may be */
    const char *method_inputs[DRIFT_PLAN_MAX_DATA + 1 + DRIFT_MFILES_MAX +
                              16];
    size_t n_method_inputs;
    int checked;            /* drift_plan_check_args done */
    int opened;
    int ran;
    int failed_run;         /* the error is a failed run, not a refusal
                               (out of memory, data changed as read) */
    /* in-memory rows: the spec's columns as row-major tables, each the
     * caller's own array borrowed or the copy mem_values (at most one) */
    double *mem_values;
    char **mem_names;       /* n_mem, as the spec gives them */
    const char **mem_order; /* n_mem, table by table */
    drift_data *mem_views;
    const drift_data **mem_tables;  /* n_mem_tables */
    size_t n_mem, n_mem_tables;
    /* the user's callback, called one row at a time */
    drift_draw_fn on_draw;
    void *on_draw_user;
    /* the user's message callback: msg, a stream handing it lines, is
     * the process's message sink while the plan is made and run */
    drift_message_fn on_message;
    void *on_message_user;
    FILE *msg;
    int out_given;          /* the out option was given */
    int sampler_given;      /* the spec named a sampler (else nuts, or
                               fixed_param for a model without
                               parameters) */
    /* ---- opened ---- */
    drift_registry *reg;
    drift_problem prob;
    drift_heldout_set test;
    drift_sampler sampler;
    char sampler_path[4096];
    double *hp;
    unsigned char *hp_set;
    double *init_values;
    unsigned char *init_given;
    double *init_points;    /* --init pathfinder: a start per chain id */
    int init_mode;
    int out_lock;
    char ckpt_dir[4096];    /* "" : no checkpoint */
    int resume;             /* continues the run checkpointed in ckpt_dir */
    const char *header[24];
    char **columns;         /* the rows' column names */
    size_t n_columns;
    /* ---- a run across MPI ranks (set by the front end before open) ---- */
    int ranks_on;
    int ranks_writer;       /* this rank writes its group's files */
    unsigned ranks_count, ranks_first;  /* this process's chains */
    const drift_table_share *share;
    drift_run_ranks *ranks;
    const char *ranks_header[2];
    /* ---- the run ---- */
    drift_run_config cfg;
    drift_chain_result *results;    /* n_results */
    unsigned n_results;
    int run_rc;
    char run_msg[512];
    FILE *diag;             /* warnings (registry problems): stderr, or
                               msg */
    /* ---- an in-process caller's opened problem and hooks ---- */
    int internal;           /* made by drift_plan_new_internal */
    drift_plan_internal in;
};

/* The spec's options parsed into a new plan (values checked one by one,
 * as drift_spec_check_option does), nothing opened. */
int drift_plan_parse(const drift_spec *spec, drift_plan **out, drift_err *e);

/* A plan for an in-process caller (tests, benchmarks) that holds an
 * opened problem: spec's options parsed and opened as drift_plan_new
 * does them (the same defaults, checks and minibatch plan), over
 * in->prob instead of a model and data the spec names (it names none),
 * with in's hooks.  Run it with drift_plan_run; free with
 * drift_plan_free, which leaves in->prob and in->reg open. */
int drift_plan_new_internal(const drift_spec *spec,
                            const drift_plan_internal *in, drift_plan **out,
                            drift_err *e);

/* The checks of the options that need no file (the sampler's minibatch
 * size given as --set batch=, an empty out name); drift_plan_open makes
 * them when the front end has not. */
int drift_plan_check_args(drift_plan *p, drift_err *e);

/* Opens the parsed plan as drift_plan_new does, calling h's hooks. */
int drift_plan_open(drift_plan *p, const drift_plan_hooks *h, drift_err *e);

/* How drift_plan_launch runs: DRIFT_LAUNCH_IN_PROCESS, _GUARDED, or: */
enum {
    /* one rank of a run across MPI ranks (its guard forked before the
     * front end joined the job): in process, signals caught */
    DRIFT_LAUNCH_RANK = 2
};

/* Runs an opened plan of a method other than sample, in process: its
 * rows to out (put in place whole, or not at all) and the callback. */
int drift_plan_run_method(drift_plan *p, drift_err *e);

/* Runs an opened plan.  Under DRIFT_LAUNCH_GUARDED returns in both
 * processes: in the watching parent with *watched 1 and *exit_status the
 * status the command ends with (the child reported the run); in the
 * child (or where no child could be made) after the run, like the other
 * launchers.  Returns drift_run's status; p->results hold the chains'. */
int drift_plan_launch(drift_plan *p, int launcher, int *watched,
                      int *exit_status, drift_err *e);

/* The guarded child has reported its run, with this exit status. */
void drift_plan_reported(int exit_status);

/* Every file the run will write may be written and is none of its
 * inputs (base/writer.h); message in e, or DRIFT_OK. */
int drift_plan_check_outputs(const drift_plan *p, drift_err *e);

#endif
