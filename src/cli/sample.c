/* sample.c: `drift sample`, `drift samplers` and `drift models`: a
 * command line (or a checkpoint's manifest) made into a run's spec, the
 * plan made of it (engine/run/plan.h) run, with the steps only the
 * command takes (checkpoint manifests, the gates of a run across MPI
 * ranks) as the plan's hooks, and a one-line account per chain on
 * standard error.  Not for the run's defaults and checks (the plan) nor
 * the sampling itself (engine). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/stop.h"
#include "base/writer.h"
#include "base/util.h"
#include "cli.h"
#include "mpirun.h"
#include "resume.h"
#include "engine/lang/lang_model.h"
#include "engine/run/guard.h"
#include "engine/run/hparam.h"
#include "engine/run/plan.h"
#include "engine/run/plugin.h"
#include "engine/run/run.h"
#include "engine/stats/checks.h"
#include "engine/stats/stancsv.h"

enum {
    O_MODEL, O_MODEL_SET, O_DATA, O_DATA_SET, O_SAMPLER, O_SET, O_BATCH, O_ACCESS,
    O_PASSES, O_ITER, O_SECONDS, O_THIN, O_WARMUP, O_SAVE_WARMUP, O_SEED,
    O_OUT, O_CHAINS, O_GRAD_NOISE, O_MAX_MEMORY, O_INIT,
    O_QUIET, O_CHAIN_ID, O_TEST, O_EVAL_EVERY, O_EMIT, O_THREADS,
    O_GENERATED_EVERY, O_STEP_TIMEOUT, O_CHECKPOINT_EVERY, O_RESUME,
    O_RANKS_PER_CHAIN, O_GRADIENT, O_SAVE_GRADIENTS, O_HELP
};

static const cli_opt sample_opts[] = {
    [O_MODEL] = {"--model", 1, "NAME|PATH  model plugin (see 'drift models')"},
    [O_MODEL_SET] = {"--model-set", 1, "K=V  set a model option (repeatable)"},
    [O_DATA] = {"--data", 1,
                "FILE  data: CSV rows with a header (y,x.1,...), LIBSVM "
                "(.libsvm/.svm) or a row store; for a .drift model also "
                "CmdStan JSON (repeatable)"},
    [O_DATA_SET] = {"--data-set", 1,
                    "NAME=V  set a data scalar of a .drift model "
                    "(repeatable)"},
    [O_SAMPLER] = {"--sampler", 1,
                   "NAME|PATH  sampler plugin (default nuts; see 'drift "
                   "samplers')"},
    [O_SET] = {"--set", 1, "K=V  set a sampler hyperparameter (repeatable)"},
    [O_BATCH] = {"--batch", 1, "N  minibatch size (default: the sampler's)"},
    [O_ACCESS] = {"--access", 1,
                  "MODE  data access: ra (random, default), rr (reshuffle), "
                  "ca (cyclic)"},
    [O_PASSES] = {"--passes", 1, "P  budget in data passes"},
    [O_ITER] = {"--iter", 1,
                "K  budget in iterations after warmup (default 1000 when "
                "no budget is given; 0: the warmup alone)"},
    [O_SECONDS] = {"--seconds", 1, "S  budget in wall-clock seconds"},
    [O_THIN] = {"--thin", 1,
                "T  keep every T-th draw; for continuous samplers, the "
                "output time step (at least 1e-4)"},
    [O_WARMUP] = {"--warmup", 1,
                  "W  iterations before draws are kept: adaptation, or "
                  "burn-in for samplers that do not adapt (default 1000 "
                  "with an iteration budget or an adapting sampler, else "
                  "0)"},
    [O_SAVE_WARMUP] = {"--save-warmup", 0,
                       "write warmup draws too (before '# Adaptation "
                       "terminated')"},
    [O_SEED] = {"--seed", 1, "S  random seed (default: from the clock)"},
    [O_OUT] = {"--out", 1,
               "FILE  draws file (default output.csv; with K chains "
               "output_1.csv ...)"},
    [O_CHAINS] = {"--chains", 1,
                  "K  chains (4), run in parallel threads up to the number "
                  "of processor cores and queued beyond it"},
    [O_GRAD_NOISE] = {"--grad-noise", 1,
                      "B  add N(0, 2B/h) noise to every gradient"},
    [O_MAX_MEMORY] = {"--max-memory", 1,
                      "BYTES  bound on sampler memory (suffixes K, M, G)"},
    [O_INIT] = {"--init", 1,
                "random|R|0|mode|pathfinder|FILE  initial point on the "
                "unconstrained scale: random = U(-2,2) (default, redrawn up "
                "to 100 times where the density is not finite), U(-R,R), 0 "
                "(or zero) for zeros, mode (the default with --gradient cv) "
                "for a draw of the Laplace approximation at cv's mode, "
                "pathfinder for draw k of one multi-path Pathfinder run "
                "(drift pathfinder's defaults) for chain k, or a JSON/CSV "
                "file of values (names it lacks drawn as random)"},
    [O_QUIET] = {"--quiet", 0, "no progress or summary lines"},
    [O_CHAIN_ID] = {"--chain-id", 1,
                    "ID  id of the first chain (1), as CmdStan's id"},
    [O_TEST] = {"--test", 1,
                "FILE  held-out rows: metrics to STEM_metrics.csv"},
    [O_EVAL_EVERY] = {"--eval-every", 1,
                      "P  with --test, evaluate every P data passes (and at "
                      "the end)"},
    [O_THREADS] = {"--threads", 1,
                   "T  threads per chain for full-data passes (1; the sums' "
                   "last bits depend on T)"},
    [O_EMIT] = {"--emit", 1,
                "draws|segments  continuous samplers: draws every --thin "
                "time units (default), or the trajectory's segments"},
    [O_GENERATED_EVERY] = {"--generated-every", 1,
                           "K  a .drift model's generated block on every "
                           "K-th kept draw (1); with K > 1 it goes, with "
                           "those draws, to FILE_generated.csv beside the "
                           "draws file"},
    [O_STEP_TIMEOUT] = {"--step-timeout", 1,
                        "S  end the run, keeping the draws so far, when a "
                        "sampler's call (a step) has not returned for S "
                        "seconds (default: no limit)"},
    [O_CHECKPOINT_EVERY] = {"--checkpoint-every", 1,
                            "K|Ts|Tm|Th  save each chain every K iterations "
                            "(or T seconds, minutes, hours), at its end and "
                            "on a signal, into STEM.ckpt beside --out; "
                            "removed when the run completes"},
    [O_RESUME] = {"--resume", 1,
                  "DIR  continue the interrupted run whose checkpoint is "
                  "DIR (its own command, in its own directory): the files "
                  "are those the run would have written uninterrupted"},
    [O_RANKS_PER_CHAIN] = {"--ranks-per-chain", 1,
                           "R  under mpirun -n P: R ranks run each chain, "
                           "each over 1/R of the rows (default P / gcd(P, "
                           "K): every rank busy, as few ranks per chain as "
                           "that allows)"},
    [O_GRADIENT] = {"--gradient", 1,
                    "plain|cv|svrg|saga|tmu  minibatch gradient "
                    "estimator: plain, cv (control variates centred at the "
                    "mode, found once per run, its cost chain 1's; the "
                    "default where the engine plans the run), svrg "
                    "(centred at a snapshot of the chain's point renewed "
                    "every data pass), saga (each row's gradient at its "
                    "last visit) or tmu (saga's, the whole table renewed "
                    "every data pass); any sampler that uses the engine's estimate "
                    "(sgld, psgld, sghmc, sgnht, msgnht) takes any of "
                    "them"},
    [O_SAVE_GRADIENTS] = {"--save-gradients", 0,
                          "write the score d log p / d theta at every draw "
                          "written (columns grad_lp_1__ ...; one full-data "
                          "gradient per draw, not counted in grads__), for "
                          "drift summary --ksd"},
    [O_HELP] = {"--help", 0, "show this help"},
};
#define N_SAMPLE_OPTS (sizeof sample_opts / sizeof sample_opts[0])

/* The command line as a spec (engine/run/plan.h): the model, data and
 * sampler, and every other option by its name; --help and --resume are
 * the command's own. */
typedef struct sample_cli {
    const char *model, *sampler, *resume;
    const char *data[DRIFT_PLAN_MAX_DATA + 1];
    size_t n_data;
    drift_option *opts;
    size_t n_opts;
    int help;
    int n_options;          /* options given (--resume stands alone) */
} sample_cli;

static int bad_value(const char *opt, const char *value, const char *want)
{
    fprintf(stderr, "drift sample: %s %s: %s\n", opt, value, want);
    return EXIT_USAGE;
}

static int on_sample_opt(void *user, int idx, const char *v)
{
    sample_cli *c = user;
    c->n_options += idx != O_QUIET;
    switch (idx) {
    case -2:
    case O_HELP: c->help = 1; return 0;
    case -1:
        /* A model file in the language is the one positional argument. */
        if (!c->model && drift_lang_is_model_file(v)) {
            c->model = v;
            return 0;
        }
        fprintf(stderr,
                "drift sample: unexpected argument '%s' (a model is a .drift "
                "file or --model NAME, data are given with --data)\n",
                v);
        return EXIT_USAGE;
    case O_MODEL: c->model = v; return 0;
    case O_DATA:
        if (c->n_data + 1 > DRIFT_PLAN_MAX_DATA)
            return bad_value("--data", v, "too many data files");
        c->data[c->n_data++] = v;
        return 0;
    case O_SAMPLER: c->sampler = v; return 0;
    case O_RESUME: c->resume = v; return 0;
    }
    /* Any other option is the plan's: its value checked now, so that the
     * first bad one on the line is the one reported. */
    const char *name = sample_opts[idx].name + 2;
    drift_err e = {{0}};
    int rc = drift_spec_check_option(name, v, &e);
    if (rc == DRIFT_ENOMEM)
        return EXIT_RUN_FAILED;
    if (rc) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        return EXIT_USAGE;
    }
    drift_option *o = realloc(c->opts, (c->n_opts + 1) * sizeof *o);
    if (!o)
        return EXIT_RUN_FAILED;
    o[c->n_opts++] = (drift_option){name, v};
    c->opts = o;
    return 0;
}

/* "a-b" or "a" for a range of counts. */
static void fmt_range(char *buf, size_t cap, double lo, double hi,
                      const char *fmt)
{
    char a[32], b[32];
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    if (strcmp(a, b))
        snprintf(buf, cap, "%s-%s", a, b);
    else
        snprintf(buf, cap, "%s", a);
}

/* After a signal: one line saying what completed and where it is. */
static void signal_account(const drift_chain_result *res, unsigned K,
                           size_t N, uint64_t warmup, uint64_t total)
{
    double it_lo = INFINITY, it_hi = 0, p_lo = INFINITY, p_hi = 0;
    unsigned long long draws = 0;
    /* Chains still queued when the signal came never started: they have
     * no file, and are counted apart. */
    unsigned ran = K;
    while (ran > 1 && !res[ran - 1].path[0] && !res[ran - 1].iterations)
        ran--;
    unsigned queued = K - ran;
    K = ran;
    /* Chains stopped in warmup while others had draws leave no file (the
     * engine drops them so that the set's counts agree). */
    unsigned dropped = 0, first_dropped = 0, first_file = K, last_file = K;
    for (unsigned k = 0; k < K; k++) {
        if (res[k].path[0]) {
            if (first_file == K)
                first_file = k;
            last_file = k;
        } else if (res[k].iterations && !res[k].status && !dropped++) {
            first_dropped = res[k].id;
        }
    }
    for (unsigned k = 0; k < K; k++) {
        double it = (double)res[k].iterations;
        double ps = N ? (double)res[k].grads / (double)N : 0;
        it_lo = fmin(it_lo, it);
        it_hi = fmax(it_hi, it);
        p_lo = fmin(p_lo, ps);
        p_hi = fmax(p_hi, ps);
        draws += res[k].draws;
    }
    char its[64], ps[64], files[8300];
    fmt_range(its, sizeof its, it_lo, it_hi, "%.0f");
    fmt_range(ps, sizeof ps, p_lo, p_hi, "%.4g");
    const char *first = first_file < K ? res[first_file].path : "";
    const char *last = first_file < K ? res[last_file].path : "";
    if (!first[0])
        snprintf(files, sizeof files, "no file");
    else if (first_file == last_file)
        snprintf(files, sizeof files, "%s", first);
    else
        snprintf(files, sizeof files, "%s ... %s", first, last);
    char sig[32];
    drift_stop_signal_name(drift_stop_requested(), sig, sizeof sig);
    fprintf(stderr,
            "drift: interrupted by %s: %u chain%s stopped after %s "
            "iterations",
            sig, K, K > 1 ? "s" : "", its);
    if (total)
        fprintf(stderr, " of %llu", (unsigned long long)total);
    if (warmup && it_lo < (double)warmup)
        fprintf(stderr, " (in warmup)");
    if (N)
        fprintf(stderr, " (%s data passes)", ps);
    fprintf(stderr, "; %llu draws kept in %s, complete and valid (marked "
                    "'# interrupted')",
            draws, files);
    if (dropped)
        fprintf(stderr,
                "; %u chain%s (chain %u%s) stopped in warmup before a "
                "first draw and left no file, so that the kept files' "
                "counts agree",
                dropped, dropped > 1 ? "s" : "", first_dropped,
                dropped > 1 ? ", ..." : "");
    if (queued)
        fprintf(stderr, "; %u queued chain%s never started", queued,
                queued > 1 ? "s" : "");
    fputc('\n', stderr);
}

/* After a run: the files of the chains that kept draws, read back and
 * checked as CmdStan's diagnose checks them; one "warning:" line per
 * problem on standard error.  The draws are valid all the same (the exit
 * status stays 0). */
static void print_checks(const drift_chain_result *res, unsigned K)
{
    const char **paths = calloc(K ? K : 1, sizeof *paths);
    size_t C = 0;
    if (!paths)
        return;
    for (unsigned k = 0; k < K; k++)
        if (!res[k].status && res[k].path[0] && res[k].draws)
            paths[C++] = res[k].path;
    drift_checks_files(paths, C, stderr);
    free(paths);
}

/* What a run's account needs besides its chains' results. */
typedef struct run_report {
    const drift_plan_args *a;
    int run_rc;             /* drift_run's status (rank 0's, under mpirun) */
    const char *msg;        /* its message */
    size_t N;               /* the data's rows */
    int fixed;              /* the sampler keeps its initial point */
} run_report;

/* The run's account on stderr, for K chains' results: the refusal of a
 * run that never started; after a signal one line; otherwise a line per
 * chain (and each failure's message), then the files' checks. */
static void print_run(void *user, const drift_chain_result *res, unsigned K)
{
    const run_report *x = user;
    const drift_plan_args *a = x->a;
    int any_status = 0, interrupted = x->run_rc == DRIFT_ESTOP;
    for (unsigned k = 0; k < K; k++) {
        any_status |= res[k].status != 0;
        interrupted |= res[k].interrupted;
    }
    if (x->run_rc && !any_status && x->run_rc != DRIFT_ESTOP) {
        fprintf(stderr, "drift sample: %s\n", x->msg);
        return;
    }
    if (interrupted && !any_status) {
        signal_account(res, K, x->N, a->warmup,
                       a->iters ? a->warmup + a->iters : 0);
        return;
    }
    for (unsigned k = 0; k < K; k++) {
        const drift_chain_result *r = &res[k];
        if (r->status)
            fprintf(stderr, "drift sample: %s\n", r->message);
        if (!a->quiet || r->status) {
            fprintf(stderr, "drift: chain %u: %llu iterations", r->id,
                    (unsigned long long)r->iterations);
            if (x->N)
                fprintf(stderr, ", %.4g data passes",
                        (double)r->grads / (double)x->N);
            fprintf(stderr, ", %llu draws in %.3g s",
                    (unsigned long long)r->draws, r->seconds);
            if (r->path[0])
                fprintf(stderr, " -> %s", r->path);
            if (r->metrics_path[0])
                fprintf(stderr, ", metrics -> %s", r->metrics_path);
            fputc('\n', stderr);
        }
    }
    /* A sampler that keeps its initial point has no convergence to
     * check (CmdStan's fixed_param: its chains differ by their inits). */
    if (!x->run_rc && !any_status && !x->fixed)
        print_checks(res, K);
}

/* The plugins the registry refused, one warning each. */
static void print_problems(const drift_registry *reg)
{
    for (size_t k = 0; k < drift_registry_n_problems(reg); k++)
        fprintf(stderr, "drift: warning: %s\n", drift_registry_problem(reg, k));
}

/* What the command does at the plan's hooks (engine/run/plan.h): a
 * checkpoint's manifest, and the gates of a run across MPI ranks. */
typedef struct sample_hooks {
    cli_mpi *mpi;
    int argc;                   /* the command line (after "sample") */
    char **argv;
    const drift_spec *spec;     /* the run's spec, for its manifest */
    const char *resume_dir;     /* the checkpoint continued (NULL: none) */
    const ckpt_command *cmd;    /* its manifest */
    int status;                 /* the exit status a hook failed with */
    int ckpt_fresh;             /* this run wrote the manifest */
} sample_hooks;

/* A hook that said why it failed: its exit status kept. */
static int hook_status(sample_hooks *x, int status, drift_err *e)
{
    x->status = status;
    e->msg[0] = 0;
    return DRIFT_EINVAL;
}

/* A resumed run loads no plugin its manifest does not vouch for. */
static int vet_plugin(void *user, drift_plan *p, const char *kind,
                      const char *spec, drift_err *e)
{
    sample_hooks *x = user;
    int rc;
    (void)p;
    if (x->resume_dir &&
        (rc = ckpt_check_plugin(x->resume_dir, x->cmd, kind, spec)))
        return hook_status(x, rc, e);
    return DRIFT_OK;
}

/* Under mpirun: join the job; every rank runs the same drift, command,
 * plugins and files as rank 0, and got this far (rank 0's seed for
 * all). */
static int before_data(void *user, drift_plan *p, drift_err *e)
{
    sample_hooks *x = user;
    drift_plan_args *a = &p->a;
    if (!x->mpi->on)
        return DRIFT_OK;
    const char *model_path = a->model;
    if (a->model && !drift_lang_is_model_file(a->model)) {
        const drift_model_entry *me = NULL;
        int rc = drift_registry_model(p->reg, a->model, &me, e);
        if (rc)
            return rc;
        model_path = me->path;
    }
    int rc = cli_mpi_gate1(x->mpi, 0, x->argc, x->argv, p->sampler_path,
                           model_path, (const char *const *)a->data,
                           &a->seed, a->have_seed);
    return rc ? hook_status(x, rc, e) : DRIFT_OK;
}

/* Checkpoints: the manifest of a fresh run, or the check that a resumed
 * one is made of what it began with; then, under mpirun, the gate after
 * the data. */
static int after_data(void *user, drift_plan *p, drift_err *e)
{
    sample_hooks *x = user;
    drift_plan_args *a = &p->a;
    const drift_problem *prob = &p->prob;
    int rc;
    if (a->ckpt_iters || a->ckpt_seconds > 0) {
        ckpt_dir_for(a->out, p->ckpt_dir, sizeof p->ckpt_dir);
        ckpt_inputs in = {
            prob->lang_path ? prob->lang_path
                            : prob->entry ? prob->entry->path : NULL,
            a->data, a->n_data, p->sampler_path,
            p->init_mode == DRIFT_INIT_VALUES ? a->init : NULL};
        if (x->resume_dir) {
            snprintf(p->ckpt_dir, sizeof p->ckpt_dir, "%s", x->resume_dir);
            rc = ckpt_check(p->ckpt_dir, x->cmd, &in);
        } else {
            rc = ckpt_start(p->ckpt_dir, x->spec, a->seed, a->have_seed,
                            &in);
            x->ckpt_fresh = rc == 0;
        }
        if (rc)
            return hook_status(x, rc, e);
    } else if (x->resume_dir) {
        return drift_err_set(e, DRIFT_EINVAL,
                             "--resume %s: the checkpoint's command has no "
                             "--checkpoint-every; it is damaged",
                             x->resume_dir);
    }
    if (x->mpi->on && (rc = cli_mpi_gate2(x->mpi, 0, prob)))
        return hook_status(x, rc, e);
    return DRIFT_OK;
}

/* The locks a group's writer holds on its run's output set. */
typedef struct rank_locks {
    int set;            /* the set's lock (-1: none) */
    int *chains;        /* its chains' names' (n of them) */
    unsigned n;
} rank_locks;

/* One output set, one run, across ranks too: a job with one group of
 * ranks locks the set as a run in one process does; with several, each
 * group's writer holds the set's lock shared and its own chains' names
 * exclusively, so that neither a run in one process nor another job
 * writing any of those chains mixes its files with the job's.  Ranks
 * that write nothing take no lock.  0, or the exit status (said). */
static int lock_rank_outputs(const drift_plan_args *a, const cli_mpi *mpi,
                             rank_locks *lk)
{
    if (mpi->L.grank != 0 || !a->out)
        return 0;
    int several = mpi->L.G > 1;
    drift_err le = {{0}};
    int rc = drift_writer_lock_set_mode(a->out, several, &lk->set, &le);
    if (!rc && several &&
        !(lk->chains = malloc(mpi->L.count * sizeof *lk->chains)))
        rc = drift_err_set(&le, DRIFT_ENOMEM, "out of memory");
    unsigned first = (a->chain_id ? a->chain_id : 1) + mpi->L.first;
    for (unsigned k = 0; !rc && several && k < mpi->L.count; k++) {
        char path[PATH_MAX];
        drift_chain_path(a->out, a->chains, first + k, path, sizeof path);
        rc = drift_writer_lock_set(path, &lk->chains[k], &le);
        if (!rc)
            lk->n = k + 1;
    }
    if (rc) {
        fprintf(stderr, "drift sample: %s: --out: %s\n", mpi->who, le.msg);
        return EXIT_USAGE;
    }
    return 0;
}

static void unlock_rank_outputs(const drift_plan_args *a, const cli_mpi *mpi,
                                rank_locks *lk)
{
    unsigned first = (a->chain_id ? a->chain_id : 1) + mpi->L.first;
    for (unsigned k = 0; k < lk->n; k++) {
        char path[PATH_MAX];
        drift_chain_path(a->out, a->chains, first + k, path, sizeof path);
        drift_writer_unlock_set(path, lk->chains[k]);
    }
    free(lk->chains);
    lk->chains = NULL;
    lk->n = 0;
    if (lk->set >= 0)
        drift_writer_unlock_set(a->out, lk->set);
    lk->set = -1;
}

/* A parsed plan, run: the rest of its checks, the guard of an MPI rank,
 * the plan opened with the command's hooks, run, and its account.
 * resume_dir: the checkpoint it continues (NULL: none), whose manifest
 * is cmd; spec: what a fresh checkpoint's manifest holds. */
static int run_plan(drift_plan *p, const drift_spec *spec,
                    const char *resume_dir, const ckpt_command *cmd,
                    cli_mpi *mpi, int argc, char **argv)
{
    drift_plan_args *a = &p->a;
    drift_err e = {{0}};
    int rc = 0;
    rank_locks locks = {-1, NULL, 0};
    if (drift_plan_check_args(p, &e)) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (mpi->on) {
        /* A group's writer locks the output set before its guard forks,
         * so that the guard, which completes the files, holds the locks
         * (lock_rank_outputs). */
        if ((rc = lock_rank_outputs(a, mpi, &locks)))
            goto out;
        /* A rank's guard (engine/run/guard.h) forks now, before MPI is
         * joined: a process must not fork once it has. */
        drift_stop_catch();
        drift_guard_config gc = {mpi->L.count,
                                 (a->chain_id ? a->chain_id : 1) +
                                     mpi->L.first,
                                 a->sampler, a->step_timeout, mpi->who, 0.5};
        int guard_parent = 0, guard_status = 0;
        drift_err ge = {{0}};
        if (drift_guard_start(&gc, &guard_parent, &guard_status, &ge))
            fprintf(stderr, "drift: warning: %s: %s\n", mpi->who, ge.msg);
        if (guard_parent) {
            drift_stop_uncatch();
            mpi->on = 0; /* the rank is the child */
            rc = guard_status;
            goto out;
        }
        /* What this rank says before the run is said by rank 0, once. */
        cli_mpi_capture(mpi);
        p->ranks_on = 1;
        p->ranks_writer = mpi->L.grank == 0;
        p->ranks_count = mpi->L.count;
        p->ranks_first = mpi->L.first;
        p->share = &mpi->share;
        p->ranks = &mpi->run;
        p->ranks_header[0] = mpi->header[0];
        p->ranks_header[1] = mpi->header[1];
    }
    p->resume = resume_dir != NULL;
    sample_hooks x = {mpi, argc, argv, spec, resume_dir, cmd, 0, 0};
    drift_plan_hooks hooks = {&x, vet_plugin, before_data, after_data};
    if (drift_plan_open(p, &hooks, &e)) {
        if (x.status) {
            rc = x.status;
        } else {
            if (e.msg[0])
                fprintf(stderr, "drift sample: %s\n", e.msg);
            rc = p->failed_run ? EXIT_RUN_FAILED : EXIT_USAGE;
        }
        if (x.ckpt_fresh)
            ckpt_remove(p->ckpt_dir, p->cfg.launch.first_chain_id, a->chains);
        goto out;
    }

    int watched = 0, watched_status = 0;
    int run_rc = drift_plan_launch(p, mpi->on ? DRIFT_LAUNCH_RANK
                                              : DRIFT_LAUNCH_GUARDED,
                                   &watched, &watched_status, &e);
    if (watched) {
        rc = watched_status;
        if (rc && p->cfg.ckpt.dir)
            fprintf(stderr, "drift: the checkpoint %s is kept; continue the "
                            "run with: drift sample --resume %s\n",
                    p->cfg.ckpt.dir, p->cfg.ckpt.dir);
        goto out;
    }
    const drift_chain_result *results = p->results;
    unsigned K_here = p->n_results;
    int any_status = 0, any_started_failed = 0, any_bad_data = 0;
    for (unsigned k = 0; k < K_here; k++) {
        any_status |= results[k].status != 0;
        any_started_failed |= results[k].status && results[k].started;
        /* data found bad as it was read (a row store's values), however
         * far the run had got: bad input */
        any_bad_data |= results[k].status == DRIFT_EDATA;
    }
    if (run_rc && !any_status && run_rc != DRIFT_ESTOP)
        rc = EXIT_USAGE; /* refused before any chain started */
    else if (run_rc == DRIFT_ESTOP)
        rc = 128 + (drift_stop_requested() ? drift_stop_requested() : SIGINT);
    else if (run_rc)
        rc = any_started_failed && !any_bad_data ? EXIT_RUN_FAILED
                                                 : EXIT_USAGE;
    else
        rc = 0;
    const drift_problem *prob = &p->prob;
    run_report rep = {a, run_rc, e.msg,
                      mpi->on ? (size_t)prob->rows_total
                              : prob->model.n_rows,
                      (p->sampler.flags & DRIFT_SAMPLER_FIXED) != 0};
    if (mpi->on) {
        /* Rank 0 speaks for every chain of the job; every rank ends with
         * the job's worst status. */
        rc = cli_mpi_report(mpi, results, rc, print_run, &rep);
        goto out;
    }
    print_run(&rep, results, a->chains);
    if (run_rc && !any_status && run_rc != DRIFT_ESTOP && x.ckpt_fresh)
        ckpt_remove(p->ckpt_dir, p->cfg.launch.first_chain_id, a->chains);
    /* A completed run has no use for its checkpoint. */
    if (p->cfg.ckpt.dir && rc == 0)
        ckpt_remove(p->cfg.ckpt.dir, p->cfg.launch.first_chain_id, a->chains);
    /* All said: what follows is teardown, plugins' included. */
    drift_plan_reported(rc);
out:
    unlock_rank_outputs(a, mpi, &locks);
    return rc;
}

/* The checks of a parsed plan made before anything else, on a command
 * line and a manifest alike. */
static int check_ranks(const drift_plan_args *a, const cli_mpi *mpi)
{
    if (a->ranks_per_chain && !mpi->on) {
        fprintf(stderr, "drift sample: --ranks-per-chain %u: for a run "
                        "across MPI ranks (mpirun -n P drift sample ...)\n",
                a->ranks_per_chain);
        return EXIT_USAGE;
    }
    return 0;
}

/* --resume DIR: the run its manifest's spec describes, continued. */
static int resume_run(const char *dir, int quiet, cli_mpi *mpi)
{
    /* The checkpoint is DIR, whatever its name: a copy or a renamed
     * directory is read, locked and removed as given.  Its absolute path
     * is taken now, as ckpt_load moves to the run's directory. */
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        fprintf(stderr, "drift sample: --resume %s: no checkpoint there "
                        "(%s)\n",
                dir, strerror(errno));
        return EXIT_USAGE;
    }
    ckpt_command saved;
    int rc = ckpt_load(dir, &saved);
    if (rc)
        return rc;
    drift_spec spec;
    ckpt_spec(&saved, &spec);
    drift_plan *p = NULL;
    drift_err e = {{0}};
    if ((rc = drift_plan_parse(&spec, &p, &e))) {
        if (e.msg[0])
            fprintf(stderr, "drift sample: %s\n", e.msg);
        rc = rc == DRIFT_ENOMEM ? EXIT_RUN_FAILED : EXIT_USAGE;
    } else {
        p->a.quiet |= quiet;
        rc = check_ranks(&p->a, mpi);
        if (!rc)
            rc = run_plan(p, &spec, abs, &saved, mpi, 0, NULL);
    }
    drift_plan_free(p);
    ckpt_command_free(&saved);
    return rc;
}

/* drift sample: argc, argv the options after "sample", made into a spec
 * and a plan, run. */
static int sample_run(int argc, char **argv, cli_mpi *mpi)
{
    sample_cli c;
    memset(&c, 0, sizeof c);
    drift_plan *p = NULL;
    drift_err e = {{0}};
    int rc = cli_parse("sample", sample_opts, N_SAMPLE_OPTS, argc, argv,
                       on_sample_opt, &c);
    if (rc)
        goto out;
    drift_spec spec = {.model = c.model, .data = c.data, .n_data = c.n_data,
                       .sampler = c.sampler, .options = c.opts,
                       .n_options = c.n_opts};
    if (drift_plan_parse(&spec, &p, &e)) {
        rc = EXIT_RUN_FAILED;   /* the values were checked: memory */
        goto out;
    }
    drift_plan_args *a = &p->a;
    if ((rc = check_ranks(a, mpi)))
        goto out;
    if (mpi->on && !c.help &&
        (rc = cli_mpi_plan(mpi, a->chains, a->ranks_per_chain,
                           a->ckpt_iters || a->ckpt_seconds > 0,
                           c.resume != NULL)))
        goto out;
    if (c.resume) {
        if (c.n_options > 1) {
            fprintf(stderr,
                    "drift sample: --resume %s takes no other option (but "
                    "--quiet): the run goes on with the command it began "
                    "with, which the checkpoint holds\n",
                    c.resume);
            rc = EXIT_USAGE;
            goto out;
        }
        rc = resume_run(c.resume, a->quiet, mpi);
        goto out;
    }
    if (c.help) {
        if (mpi->on && mpi->rank != 0)
            goto out; /* rank 0 says it for all */
        cli_usage("drift sample MODEL.drift|--model NAME --data FILE "
                  "--sampler NAME [options]",
                  "Runs a sampler on a model and writes the draws as a "
                  "Stan-format CSV file.",
                  sample_opts, N_SAMPLE_OPTS);
        goto out;
    }
    rc = run_plan(p, &spec, NULL, NULL, mpi, argc, argv);
out:
    drift_plan_free(p);
    free(c.opts);
    return rc;
}

/* ---- drift samplers / drift models -------------------------------------- */

int cmd_sample(int argc, char **argv)
{
    /* Under mpirun, one rank of a run across ranks (mpirun.h). */
    cli_mpi mpi;
    cli_mpi_detect(&mpi);
    int rc = sample_run(argc, argv, &mpi);
    return cli_mpi_end(&mpi, rc);
}

static int list_help(void *user, int idx, const char *v)
{
    (void)v;
    if (idx == -1) {
        fprintf(stderr, "drift: unexpected argument '%s'\n", v);
        return EXIT_USAGE;
    }
    *(int *)user = 1;
    return 0;
}

static void print_table(const drift_hparam *t, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        char def[64], range[128];
        drift_hparam_format(&t[k], t[k].def, def, sizeof def);
        if (t[k].flags & DRIFT_HP_STEP_SIZE) /* the engine chooses it */
            snprintf(def, sizeof def, "auto");
        drift_hparam_range(&t[k], range, sizeof range);
        printf("    %-10s %-5s default %-12s %-22s %s\n", t[k].name,
               drift_hparam_type_name(&t[k]), def, range, t[k].doc);
    }
}

static const cli_opt list_opts[] = {{"--help", 0, "show this help", NULL}};

/* What `drift samplers` prints of the registry. */
static void print_samplers(const drift_registry *reg)
{
    size_t n = drift_registry_n_samplers(reg);
    if (n == 0)
        printf("no sampler plugins found\n");
    for (size_t k = 0; k < n; k++) {
        const drift_sampler_entry *s = drift_registry_sampler_at(reg, k);
        printf("\n%s  %s\n  file: %s\n  licence: %s\n", s->s.name,
               s->s.summary, s->path, s->license ? s->license : "not stated");
        if (s->s.flags & DRIFT_SAMPLER_FULL_DATA)
            printf("  minibatch: none (full-data gradients)\n");
        else if (s->s.default_batch && s->s.default_batch < DRIFT_DEFAULT_BATCH)
            printf("  minibatch: --batch (default %zu; %d when the engine "
                   "plans the run)\n",
                   s->s.default_batch, DRIFT_DEFAULT_BATCH);
        else
            printf("  minibatch: --batch (default %zu)\n",
                   s->s.default_batch ? s->s.default_batch
                                      : (size_t)DRIFT_DEFAULT_BATCH);
        print_table(s->s.hparams, s->s.n_hparams);
        if (s->s.n_columns) {
            printf("  columns:");
            for (size_t j = 0; j < s->s.n_columns; j++)
                printf(" %s", s->s.columns[j]);
            printf("\n");
        }
    }
}

/* What `drift models` prints of the registry. */
static void print_models(const drift_registry *reg)
{
    size_t n = drift_registry_n_models(reg);
    if (n == 0)
        printf("no model plugins found\n");
    for (size_t k = 0; k < n; k++) {
        const drift_model_entry *m = drift_registry_model_at(reg, k);
        printf("\n%s  %s\n  file: %s\n  licence: %s\n", m->m->name,
               m->m->summary, m->path, m->license ? m->license : "not stated");
        print_table(m->m->options, m->m->n_options);
    }
}

/* The shared body of the listing commands: options, scan, print, and the
 * plugins that were refused. */
static int list_command(const char *cmd, const char *about,
                        void (*print)(const drift_registry *), int argc,
                        char **argv)
{
    int help = 0;
    int rc = cli_parse(cmd, list_opts, 1, argc, argv, list_help, &help);
    if (rc)
        return rc;
    if (help) {
        char synopsis[64];
        snprintf(synopsis, sizeof synopsis, "drift %s", cmd);
        cli_usage(synopsis, about, list_opts, 1);
        return 0;
    }
    drift_err e;
    drift_registry *reg = drift_registry_new();
    if (!reg)
        return EXIT_RUN_FAILED;
    drift_registry_scan(reg, &e);
    printf("plugin search path: %s\n", drift_registry_search_path(reg));
    print(reg);
    print_problems(reg);
    drift_registry_free(reg);
    return 0;
}

int cmd_samplers(int argc, char **argv)
{
    return list_command("samplers",
                        "Lists every sampler plugin found on the plugin "
                        "search path, with its\nhyperparameters (set them "
                        "with drift sample --set NAME=VALUE).",
                        print_samplers, argc, argv);
}

int cmd_models(int argc, char **argv)
{
    return list_command("models",
                        "Lists every C model plugin found on the plugin "
                        "search path, with its options\n(set them with drift "
                        "sample --model-set NAME=VALUE).",
                        print_models, argc, argv);
}
