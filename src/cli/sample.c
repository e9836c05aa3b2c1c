/* sample.c: `drift sample`, `drift samplers` and `drift models`: options
 * in, a checked run configuration out, chains run, a one-line account per
 * chain on standard error.  Not for the sampling itself (engine). */
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

#include "base/mapguard.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "mpirun.h"
#include "resume.h"
#include "engine/lang/lang_model.h"
#include "engine/run/emit.h"
#include "engine/run/guard.h"
#include "engine/run/heldout.h"
#include "engine/run/hparam.h"
#include "engine/run/inits.h"
#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "engine/run/progress.h"
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
                "random|R|0|mode|FILE  initial point on the unconstrained "
                "scale: random = U(-2,2) (default, redrawn up to 100 times "
                "where the density is not finite), U(-R,R), 0 (or zero) "
                "for zeros, mode (the default with --gradient cv) for a "
                "draw of the Laplace approximation at cv's mode, or a "
                "JSON/CSV file of values (names it lacks drawn as "
                "random)"},
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

typedef struct sample_args {
    const char *model, *sampler, *out, *init, *test;
    const char *data[8];
    size_t n_data;
    char **model_set;
    size_t n_model_set;
    char **data_set;        /* .drift models: --data-set NAME=VALUE */
    size_t n_data_set;
    char **set;
    size_t n_set;
    size_t batch;
    drift_access access;
    uint64_t iters, thin, warmup, seed, generated_every;
    int have_seed, have_thin, have_warmup, save_warmup, quiet, help;
    int have_gradient;      /* --gradient was given */
    int save_gradients;     /* --save-gradients */
    int warmup_only;        /* --iter 0 */
    int emit_segments;
    double passes, seconds, thin_time, grad_noise, eval_every, init_radius;
    double step_timeout;    /* --step-timeout; 0: none */
    unsigned chains, chain_id, threads;
    size_t max_memory;
    uint64_t ckpt_iters;    /* --checkpoint-every K */
    double ckpt_seconds;    /* --checkpoint-every T[smh] */
    const char *resume;     /* --resume DIR */
    unsigned ranks_per_chain; /* --ranks-per-chain R (0: the default) */
    int gradient;           /* --gradient: DRIFT_GRADIENT_* */
    int n_options;          /* options given (--resume stands alone) */
} sample_args;

static int bad_value(const char *opt, const char *value, const char *want)
{
    fprintf(stderr, "drift sample: %s %s: %s\n", opt, value, want);
    return EXIT_USAGE;
}

static int parse_u64_opt(const char *opt, const char *v, uint64_t lo,
                         uint64_t hi, uint64_t *out)
{
    uint64_t x;
    if (drift_parse_u64(v, &x) || x < lo || x > hi) {
        char want[96];
        snprintf(want, sizeof want, "expected an integer in [%llu, %llu]",
                 (unsigned long long)lo, (unsigned long long)hi);
        return bad_value(opt, v, want);
    }
    *out = x;
    return 0;
}

static int parse_pos_double(const char *opt, const char *v, double *out)
{
    double x;
    if (drift_parse_double(v, &x) || !(x > 0))
        return bad_value(opt, v, "expected a positive number");
    *out = x;
    return 0;
}

static int parse_bytes(const char *opt, const char *v, size_t *out)
{
    char *end;
    double x = strtod(v, &end);
    double mult = 1;
    if (end != v && *end) {
        switch (*end) {
        case 'k': case 'K': mult = 1024.0; break;
        case 'm': case 'M': mult = 1024.0 * 1024; break;
        case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
        default: mult = -1;
        }
        if (end[1] && !(end[1] == 'B' && !end[2]) &&
            !(end[1] == 'i' && end[2] == 'B' && !end[3]))
            mult = -1;
    }
    if (end == v || mult < 0 || !(x > 0) || x * mult > 1e18)
        return bad_value(opt, v,
                         "expected a positive size in bytes, e.g. 512M or "
                         "2G");
    *out = (size_t)(x * mult);
    return 0;
}

static int push(char ***arr, size_t *n, const char *v)
{
    char **p = realloc(*arr, (*n + 1) * sizeof **arr);
    if (!p)
        return EXIT_RUN_FAILED;
    p[(*n)++] = (char *)v;
    *arr = p;
    return 0;
}

static int on_sample_opt(void *user, int idx, const char *v)
{
    sample_args *a = user;
    uint64_t x;
    int rc;
    a->n_options += idx != O_QUIET;
    switch (idx) {
    case -2:
    case O_HELP: a->help = 1; return 0;
    case -1:
        /* A model file in the language is the one positional argument. */
        if (!a->model && drift_lang_is_model_file(v)) {
            a->model = v;
            return 0;
        }
        fprintf(stderr,
                "drift sample: unexpected argument '%s' (a model is a .drift "
                "file or --model NAME, data are given with --data)\n",
                v);
        return EXIT_USAGE;
    case O_MODEL: a->model = v; return 0;
    case O_MODEL_SET: return push(&a->model_set, &a->n_model_set, v);
    case O_DATA_SET: return push(&a->data_set, &a->n_data_set, v);
    case O_DATA:
        if (a->n_data + 1 >= sizeof a->data / sizeof a->data[0])
            return bad_value("--data", v, "too many data files");
        a->data[a->n_data++] = v;
        return 0;
    case O_SAMPLER: a->sampler = v; return 0;
    case O_SET: return push(&a->set, &a->n_set, v);
    case O_BATCH:
        if ((rc = parse_u64_opt("--batch", v, 1, (uint64_t)1 << 40, &x)))
            return rc;
        a->batch = (size_t)x;
        return 0;
    case O_ACCESS:
        if (drift_access_parse(v, &a->access))
            return bad_value("--access", v, "expected ra, rr or ca");
        return 0;
    case O_PASSES: return parse_pos_double("--passes", v, &a->passes);
    case O_ITER:
        if ((rc = parse_u64_opt("--iter", v, 0, (uint64_t)1 << 62, &a->iters)))
            return rc;
        a->warmup_only = a->iters == 0;
        return 0;
    case O_SECONDS: return parse_pos_double("--seconds", v, &a->seconds);
    case O_STEP_TIMEOUT:
        return parse_pos_double("--step-timeout", v, &a->step_timeout);
    case O_THIN:
        if ((rc = parse_pos_double("--thin", v, &a->thin_time)))
            return rc;
        a->have_thin = 1;
        return 0;
    case O_WARMUP:
        a->have_warmup = 1;
        return parse_u64_opt("--warmup", v, 0, (uint64_t)1 << 62, &a->warmup);
    case O_SAVE_WARMUP: a->save_warmup = 1; return 0;
    case O_SAVE_GRADIENTS: a->save_gradients = 1; return 0;
    case O_SEED:
        if ((rc = parse_u64_opt("--seed", v, 0, UINT64_MAX, &a->seed)))
            return rc;
        a->have_seed = 1;
        return 0;
    case O_OUT: a->out = v; return 0;
    case O_CHAINS:
        if ((rc = parse_u64_opt("--chains", v, 1, 1024, &x)))
            return rc;
        a->chains = (unsigned)x;
        return 0;
    case O_GRAD_NOISE: {
        double b;
        if (drift_parse_double(v, &b) || b < 0)
            return bad_value("--grad-noise", v,
                             "expected a non-negative number");
        a->grad_noise = b;
        return 0;
    }
    case O_MAX_MEMORY: return parse_bytes("--max-memory", v, &a->max_memory);
    case O_INIT: {
        double r;
        a->init = v;
        a->init_radius = 0;
        if (!drift_parse_double(v, &r)) {
            if (r < 0)
                return bad_value("--init", v,
                                 "expected zero, random, a radius >= 0 or "
                                 "a file");
            a->init_radius = r;
        } else if (strcmp(v, "zero") && strcmp(v, "random") &&
                   strcmp(v, "mode") && access(v, F_OK) != 0) {
            return bad_value("--init", v,
                             "no such file; expected zero, random, mode, a "
                             "radius or a JSON/CSV file of initial values");
        }
        return 0;
    }
    case O_QUIET: a->quiet = 1; return 0;
    case O_CHAIN_ID:
        if ((rc = parse_u64_opt("--chain-id", v, 1, 1u << 30, &x)))
            return rc;
        a->chain_id = (unsigned)x;
        return 0;
    case O_TEST: a->test = v; return 0;
    case O_EVAL_EVERY:
        return parse_pos_double("--eval-every", v, &a->eval_every);
    case O_THREADS:
        if ((rc = parse_u64_opt("--threads", v, 1, 64, &x)))
            return rc;
        a->threads = (unsigned)x;
        return 0;
    case O_GENERATED_EVERY:
        return parse_u64_opt("--generated-every", v, 1, (uint64_t)1 << 62,
                             &a->generated_every);
    case O_CHECKPOINT_EVERY: {
        char *end;
        double t = strtod(v, &end);
        double unit = !*end ? 0 : !strcmp(end, "s") ? 1 : !strcmp(end, "m")
                               ? 60 : !strcmp(end, "h") ? 3600 : -1;
        if (end == v || unit < 0 || !(t > 0) || !isfinite(t))
            return bad_value("--checkpoint-every", v,
                             "expected a number of iterations (500) or a "
                             "time (30s, 10m, 1h)");
        if (unit == 0) {
            if (t != floor(t) || t > 1e18)
                return bad_value("--checkpoint-every", v,
                                 "expected a whole number of iterations, or "
                                 "a time with its unit (30s, 10m, 1h)");
            a->ckpt_iters = (uint64_t)t;
        } else {
            a->ckpt_seconds = t * unit;
        }
        return 0;
    }
    case O_RESUME: a->resume = v; return 0;
    case O_RANKS_PER_CHAIN:
        if ((rc = parse_u64_opt("--ranks-per-chain", v, 1, 1u << 20, &x)))
            return rc;
        a->ranks_per_chain = (unsigned)x;
        return 0;
    case O_GRADIENT:
        a->have_gradient = 1;
        if (!strcmp(v, "plain"))
            a->gradient = DRIFT_GRADIENT_PLAIN;
        else if (!strcmp(v, "cv"))
            a->gradient = DRIFT_GRADIENT_CV;
        else if (!strcmp(v, "svrg"))
            a->gradient = DRIFT_GRADIENT_SVRG;
        else if (!strcmp(v, "saga"))
            a->gradient = DRIFT_GRADIENT_SAGA;
        else if (!strcmp(v, "tmu"))
            a->gradient = DRIFT_GRADIENT_TMU;
        else
            return bad_value("--gradient", v,
                             "expected plain, cv, svrg, saga or tmu");
        return 0;
    case O_EMIT:
        if (!strcmp(v, "segments"))
            a->emit_segments = 1;
        else if (!strcmp(v, "draws"))
            a->emit_segments = 0;
        else
            return bad_value("--emit", v, "expected draws or segments");
        return 0;
    }
    return 0;
}

/* Every file the run will write (each chain's draws file and, with
 * --test, its metrics file), and the --out name itself, may be written, and none is an input of the
 * run: checked before any work (base/writer.h says what is refused). */
static int check_outputs(const sample_args *a, const char *out)
{
    const char *inputs[16];
    size_t n = 0;
    for (size_t k = 0; k < a->n_data; k++)
        inputs[n++] = a->data[k];
    inputs[n++] = a->model;
    inputs[n++] = a->sampler;
    inputs[n++] = a->init;
    inputs[n++] = a->test;
    /* The name as given, too, where the chains' files are derived from
     * it (out_1.csv ...): --out /dev/full, a FIFO or a directory is a
     * mistake however many chains there are, and out_1 beside a device
     * would land in /dev.  That name is not written itself, so it may be
     * an input's: --out lin.csv beside --data lin.csv writes lin_1.csv ...
     * (each checked against the inputs below). */
    if (a->chains > 1) {
        drift_err e = {{0}};
        if (drift_writer_check_kind(out, NULL, 0, &e)) {
            fprintf(stderr, "drift sample: --out: %s\n", e.msg);
            return EXIT_USAGE;
        }
    }
    unsigned first = a->chain_id ? a->chain_id : 1;
    for (unsigned k = 0; k < a->chains; k++) {
        char path[4096], mpath[4200];
        drift_err e = {{0}};
        drift_chain_path(out, a->chains, first + k, path, sizeof path);
        int rc = drift_writer_check(path, inputs, n, &e);
        if (!rc && a->test) {
            drift_heldout_path(path, mpath, sizeof mpath);
            rc = drift_writer_check(mpath, inputs, n, &e);
        }
        if (rc) {
            fprintf(stderr, "drift sample: --out: %s\n", e.msg);
            return EXIT_USAGE;
        }
    }
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

/* Whether a sampler adapts in warmup (so that warmup is more than
 * burn-in): one with a phase callback, or one of the ABI-1 samplers that
 * adapt on in_warmup alone (their hyperparameter adapt_delta says so). */
static int sampler_adapts(const drift_sampler *s)
{
    return drift_hparams_find(s->hparams, s->n_hparams, "adapt_delta") >= 0 ||
           drift_hparams_find(s->hparams, s->n_hparams, "delta") >= 0;
}

/* A chain of the engine's plan spends at most this many data passes; a
 * continuous sampler's (sbps, psbps) more: their effective draws cost
 * several times a discrete integrator's rows (at N = 10^6, d = 50 about
 * 130 passes a chain reach the plan's target, where 100 left them at a
 * third of it, the largest mean error 0.13 sd), and the cap is only a
 * guard against a pilot's autocorrelation time gone wild. */
#define PLAN_MAX_PASSES 100.0
#define PLAN_MAX_PASSES_CONTINUOUS 400.0

/* Whether the engine plans the run (see sample_run): a minibatch sampler
 * (not full-data) on a model with rows, in one process, whose step size
 * the user left to the engine (hp holds NaN there), or, for a continuous
 * one, whose budget and output step the user left to it. */
static int plan_applies(const drift_sampler *s, const double *hp,
                        size_t n_rows, int mpi_on, int budget_given,
                        int thin_given)
{
    if (s->flags & DRIFT_SAMPLER_FULL_DATA)
        return 0;
    if (n_rows == 0 || mpi_on)
        return 0;
    /* A continuous sampler has no step size: the plan is its length and
     * output time step, and takes the run when neither was given. */
    if (s->flags & DRIFT_SAMPLER_CONTINUOUS)
        return !budget_given && !thin_given;
    long k = drift_hparams_step_size(s->hparams, s->n_hparams);
    return k >= 0 && isnan(hp[k]);
}

/* Whether a step size the user gave is checked (see drift_run_config's
 * plan): a discrete minibatch sampler on a model with rows, in one
 * process, with its step size given. */
static int check_applies(const drift_sampler *s, const double *hp,
                         size_t n_rows, int mpi_on)
{
    if (s->flags & (DRIFT_SAMPLER_FULL_DATA | DRIFT_SAMPLER_CONTINUOUS))
        return 0;
    if (n_rows == 0 || mpi_on)
        return 0;
    long k = drift_hparams_step_size(s->hparams, s->n_hparams);
    return k >= 0 && !isnan(hp[k]);
}

/* After a run: the files read back and checked as CmdStan's diagnose
 * checks them; one "warning:" line per problem on standard error.  The
 * draws are valid all the same (the exit status stays 0). */
static void print_checks(const drift_chain_result *res, unsigned K)
{
    drift_stancsv **f = calloc(K, sizeof *f);
    size_t C = 0, n = SIZE_MAX;
    if (!f)
        return;
    for (unsigned k = 0; k < K; k++) {
        drift_err e = {{0}};
        if (res[k].status || !res[k].path[0] || !res[k].draws)
            continue;
        if (drift_stancsv_read(res[k].path, &f[C], &e)) {
            fprintf(stderr, "drift: warning: cannot check %s: %s\n",
                    res[k].path, e.msg);
            continue;
        }
        if (C && f[C]->n_cols != f[0]->n_cols) {
            drift_stancsv_free(f[C]);
            continue;
        }
        size_t kept = f[C]->n_rows - f[C]->n_warmup;
        if (kept < n)
            n = kept;
        C++;
    }
    drift_checks chk = {0};
    drift_err e = {{0}};
    if (C && n && n != SIZE_MAX &&
        !drift_checks_run((const drift_stancsv *const *)f, C, n, NULL, &chk,
                          &e)) {
        for (size_t k = 0; k < chk.n; k++)
            fprintf(stderr, "drift: warning: %s\n", chk.lines[k]);
        drift_checks_free(&chk);
    }
    for (size_t k = 0; k < C; k++)
        drift_stancsv_free(f[k]);
    free(f);
}

/* What a run's account needs besides its chains' results. */
typedef struct run_report {
    const sample_args *a;
    int run_rc;             /* drift_run's status (rank 0's, under mpirun) */
    const char *msg;        /* its message */
    size_t N;               /* the data's rows */
} run_report;

/* The run's account on stderr, for K chains' results: the refusal of a
 * run that never started; after a signal one line; otherwise a line per
 * chain (and each failure's message), then the files' checks. */
static void print_run(void *user, const drift_chain_result *res, unsigned K)
{
    const run_report *x = user;
    const sample_args *a = x->a;
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
    if (!x->run_rc && !any_status)
        print_checks(res, K);
}

/* Prints the registry's problems from *from on, and moves *from past
 * them (lookups add problems as they open files). */
static void print_problems_from(const drift_registry *reg, size_t *from)
{
    size_t k = *from;
    for (; k < drift_registry_n_problems(reg); k++)
        fprintf(stderr, "drift: warning: %s\n", drift_registry_problem(reg, k));
    *from = k;
}

static void print_problems(const drift_registry *reg)
{
    size_t from = 0;
    print_problems_from(reg, &from);
}

/* One run: argc, argv the options after "sample"; resume_dir the
 * checkpoint it continues (NULL: none), whose manifest is cmd. */
static int sample_run(int argc, char **argv, const char *resume_dir,
                      const ckpt_command *cmd, int quiet, cli_mpi *mpi)
{
    sample_args a;
    memset(&a, 0, sizeof a);
    a.chains = 4;
    int out_lock = -1;
    int rc = cli_parse("sample", sample_opts, N_SAMPLE_OPTS, argc, argv,
                       on_sample_opt, &a);
    if (rc)
        goto out_args;
    a.quiet |= quiet;
    if (a.ranks_per_chain && !mpi->on) {
        fprintf(stderr, "drift sample: --ranks-per-chain %u: for a run "
                        "across MPI ranks (mpirun -n P drift sample ...)\n",
                a.ranks_per_chain);
        rc = EXIT_USAGE;
        goto out_args;
    }
    if (mpi->on && !a.help &&
        (rc = cli_mpi_plan(mpi, a.chains, a.ranks_per_chain,
                           a.ckpt_iters || a.ckpt_seconds > 0,
                           a.resume != NULL)))
        goto out_args;
    if (resume_dir && a.resume) {
        fprintf(stderr, "drift sample: --resume %s: the checkpoint's command "
                        "holds --resume; it is damaged\n",
                resume_dir);
        rc = EXIT_USAGE;
        goto out_args;
    }
    if (a.resume) {
        if (a.n_options > 1) {
            fprintf(stderr,
                    "drift sample: --resume %s takes no other option (but "
                    "--quiet): the run goes on with the command it began "
                    "with, which the checkpoint holds\n",
                    a.resume);
            rc = EXIT_USAGE;
            goto out_args;
        }
        /* The checkpoint is DIR, whatever its name: a copy or a renamed
         * directory is read, locked and removed as given.  Its absolute
         * path is taken now, as ckpt_load moves to the run's directory. */
        char dir[PATH_MAX];
        if (!realpath(a.resume, dir)) {
            fprintf(stderr, "drift sample: --resume %s: no checkpoint there "
                            "(%s)\n",
                    a.resume, strerror(errno));
            rc = EXIT_USAGE;
            goto out_args;
        }
        ckpt_command saved;
        rc = ckpt_load(a.resume, &saved);
        if (!rc)
            rc = sample_run(saved.argc, saved.argv, dir, &saved, a.quiet,
                            mpi);
        ckpt_command_free(&saved);
        goto out_args;
    }
    if (a.ckpt_iters || a.ckpt_seconds > 0) {
        if (a.test) {
            fprintf(stderr, "drift sample: --checkpoint-every with --test: "
                            "held-out metrics are not checkpointed; drop one "
                            "of them\n");
            rc = EXIT_USAGE;
            goto out_args;
        }
    }
    if (a.help) {
        if (mpi->on && mpi->rank != 0)
            goto out_args; /* rank 0 says it for all */
        cli_usage("drift sample MODEL.drift|--model NAME --data FILE "
                  "--sampler NAME [options]",
                  "Runs a sampler on a model and writes the draws as a "
                  "Stan-format CSV file.",
                  sample_opts, N_SAMPLE_OPTS);
        goto out_args;
    }
    if (!a.sampler)
        a.sampler = "nuts";
    for (size_t k = 0; k < a.n_set; k++)
        if (!strncmp(a.set[k], "batch=", 6)) {
            fprintf(stderr, "drift sample: --set %s: the minibatch size is "
                            "the engine's option: use --batch %s\n",
                    a.set[k], a.set[k] + 6);
            rc = EXIT_USAGE;
            goto out_args;
        }

    if (a.out && !*a.out) {
        fprintf(stderr, "drift sample: --out: an empty file name; give the "
                        "name of the draws file\n");
        rc = EXIT_USAGE;
        goto out_args;
    }
    if (mpi->on) {
        /* A rank's guard (engine/run/guard.h) forks now, before MPI is
         * joined: a process must not fork once it has. */
        drift_stop_catch();
        drift_guard_config gc = {mpi->L.count,
                                 (a.chain_id ? a.chain_id : 1) + mpi->L.first,
                                 a.sampler, a.step_timeout, mpi->who, 0.5};
        int guard_parent = 0, guard_status = 0;
        drift_err ge = {{0}};
        if (drift_guard_start(&gc, &guard_parent, &guard_status, &ge))
            fprintf(stderr, "drift: warning: %s: %s\n", mpi->who, ge.msg);
        if (guard_parent) {
            drift_stop_uncatch();
            mpi->on = 0; /* the rank is the child */
            rc = guard_status;
            goto out_args;
        }
        /* What this rank says before the run is said by rank 0, once. */
        cli_mpi_capture(mpi);
    }
    /* Across ranks, the groups' writers alone write files. */
    if ((!mpi->on || mpi->L.grank == 0) &&
        (rc = check_outputs(&a, a.out ? a.out : "output.csv")))
        goto out_args;
    /* One run at a time writes an output set, from here until its files
     * are in place (a run across ranks has several writers of one set). */
    if (!mpi->on) {
        drift_err le = {{0}};
        if (drift_writer_lock_set(a.out ? a.out : "output.csv", &out_lock,
                                  &le)) {
            fprintf(stderr, "drift sample: --out: %s\n", le.msg);
            rc = EXIT_USAGE;
            goto out_args;
        }
    }

    drift_err e = {{0}};
    drift_registry *reg = drift_registry_new();
    drift_problem prob;
    memset(&prob, 0, sizeof prob);
    drift_heldout_set test;
    memset(&test, 0, sizeof test);
    double *init_values = NULL;
    unsigned char *init_given = NULL;
    double *hp = NULL;
    unsigned char *hp_set = NULL;
    drift_chain_result *results = NULL;
    if (!reg) {
        fprintf(stderr, "drift sample: out of memory\n");
        rc = EXIT_RUN_FAILED;
        goto out_args;
    }
    /* A resumed run loads no plugin its manifest does not vouch for. */
    if (resume_dir &&
        ((rc = ckpt_check_plugin(resume_dir, cmd, "sampler", a.sampler)) ||
         (a.model && !drift_lang_is_model_file(a.model) &&
          (rc = ckpt_check_plugin(resume_dir, cmd, "model", a.model)))))
        goto out;
    /* No scan: the sampler and model are looked up by name, which opens
     * NAME.so alone when it exists (plugin.h). */
    size_t shown = 0;
    const drift_sampler_entry *se;
    int found = drift_registry_sampler(reg, a.sampler, &se, &e);
    print_problems_from(reg, &shown);
    if (found) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    /* Copy what we need: later loads may move the registry's arrays. */
    drift_sampler sampler = se->s;
    /* A continuous sampler's time step, before any work (emit.h): a
     * tiny one flooded the disk, or (1e-300) could not advance the
     * trajectory's clock, and failed only once the run was under way. */
    if ((sampler.flags & DRIFT_SAMPLER_CONTINUOUS) && a.have_thin &&
        !a.emit_segments && a.thin_time < DRIFT_EMIT_MIN_TIME_STEP) {
        fprintf(stderr,
                "drift sample: --thin %g: sampler %s is continuous, and "
                "--thin is its output time step, which must be at least "
                "%g: the sampler moves at about one posterior sd per unit "
                "of time, so draws closer together are all but the same "
                "draw, and a smaller step writes more than %.0f rows per "
                "unit of time; give a larger --thin, or --emit segments "
                "for the trajectory itself\n",
                a.thin_time, sampler.name, DRIFT_EMIT_MIN_TIME_STEP,
                1 / DRIFT_EMIT_MIN_TIME_STEP);
        rc = EXIT_USAGE;
        goto out;
    }
    char sampler_path[4096];
    snprintf(sampler_path, sizeof sampler_path, "%s", se->path);
    hp = calloc(sampler.n_hparams + 1, sizeof *hp);
    hp_set = calloc(sampler.n_hparams + 1, 1);
    if (!hp || !hp_set) {
        rc = EXIT_RUN_FAILED;
        goto out;
    }
    char who[96];
    snprintf(who, sizeof who, "sampler %s", sampler.name);
    if (drift_hparams_apply(sampler.hparams, sampler.n_hparams, "--set", who,
                            a.set, a.n_set, hp, hp_set, &e)) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    a.data[a.n_data] = NULL;
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (mpi->on) {
        /* Join the job: every rank runs the same drift, command, plugins
         * and files as rank 0, and got this far (rank 0's seed for all). */
        const char *model_path = a.model;
        const drift_model_entry *me = NULL;
        if (a.model && !drift_lang_is_model_file(a.model)) {
            if (drift_registry_model(reg, a.model, &me, &e)) {
                fprintf(stderr, "drift sample: %s\n", e.msg);
                rc = EXIT_USAGE;
                goto out;
            }
            model_path = me->path;
        }
        if ((rc = cli_mpi_gate1(mpi, 0, argc, argv, sampler_path, model_path,
                                (const char *const *)a.data, &a.seed,
                                a.have_seed)))
            goto out;
    }
    drift_problem_spec spec = {a.model, a.data, a.model_set, a.n_model_set,
                               a.data_set, a.n_data_set, stderr,
                               mpi->on ? &mpi->share : NULL};
    found = drift_problem_open(&prob, reg, &spec, &e);
    print_problems_from(reg, &shown);
    if (found) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        /* A data file that changed while it was read is a failed run,
         * not bad input. */
        rc = drift_mapguard_any() ? EXIT_RUN_FAILED : EXIT_USAGE;
        goto out;
    }
    if (a.have_thin) {
        if (sampler.flags & DRIFT_SAMPLER_CONTINUOUS)
            a.thin = 1;
        else if (a.thin_time != floor(a.thin_time)) {
            rc = bad_value("--thin", "", "expected a whole number of draws "
                                         "for a discrete-time sampler");
            goto out;
        } else
            a.thin = (uint64_t)a.thin_time;
    } else {
        a.thin = 1;
        a.thin_time = 0;
    }
    /* A Stan program whose rows could not be found was lowered whole:
     * a minibatch sampler would "subsample" its one datum, a
     * full-gradient run without the full-gradient samplers' exactness. */
    const char *whole = prob.lang_path ? drift_lang_whole_why(&prob.model)
                                       : NULL;
    if (whole && !(sampler.flags & DRIFT_SAMPLER_FULL_DATA)) {
        fprintf(stderr,
                "drift sample: --sampler %s subsamples rows, but %s has "
                "none: its data are one datum because %s; use a "
                "full-gradient sampler (nuts, the default, or mala), or "
                "write the model so that each row's terms stand alone "
                "(doc/from-stan.md)\n",
                sampler.name, prob.lang_path, whole);
        rc = EXIT_USAGE;
        goto out;
    }
    /* A minibatch sampler whose step size is left to the engine runs by
     * the engine's plan (engine/run/biascheck.h): the mode first (the
     * chains start from a draw of its Laplace approximation, and the
     * step-size check measures in its units), control variates there
     * unless the sampler builds its own estimates or --gradient was
     * given, the step size by the bias check, and whatever of the
     * burn-in, iterations and thinning the user did not give sized for
     * the target effective sample size. */
    int planned = plan_applies(&sampler, hp, prob.model.n_rows, mpi->on,
                               a.iters || a.passes > 0 || a.seconds > 0 ||
                                   a.warmup_only,
                               a.have_thin);
    int plan_budget = planned && !a.iters && a.passes <= 0 &&
                      a.seconds <= 0 && !a.warmup_only;
    /* The plan runs minibatches of at least DRIFT_DEFAULT_BATCH rows: a
     * sampler whose own default is smaller (ewsg's single index, the
     * paper's b = 1) pays a step's fixed cost for each row, and ewsg's
     * index selection biases its draws in proportion to the minibatch
     * noise, 1/b (N = 10^5, d = 20: sds 8-14 % narrow at b = 1, warned;
     * right at b = 10 in a fifteenth of the time).  --batch overrides. */
    if (planned && !a.batch && sampler.default_batch &&
        sampler.default_batch < DRIFT_DEFAULT_BATCH)
        a.batch = DRIFT_DEFAULT_BATCH;
    if (planned && !a.have_gradient &&
        !(sampler.flags & (DRIFT_SAMPLER_OWN_ESTIMATES |
                           DRIFT_SAMPLER_PICKS_ESTIMATOR)))
        a.gradient = DRIFT_GRADIENT_CV;
    /* CmdStan's defaults: 1000 warmup iterations, then 1000 draws.  A
     * budget in data passes or seconds is the minibatch samplers' way of
     * running, and their warmup stays 0 there unless the sampler adapts. */
    int iter_budget = a.passes <= 0 && a.seconds <= 0;
    if (!a.iters && iter_budget && !a.warmup_only)
        a.iters = 1000;
    if (!a.have_warmup)
        a.warmup = iter_budget || sampler_adapts(&sampler) ? 1000 : 0;
    /* Under --gradient cv, or the plan, chains start near the mode unless
     * told. */
    int init_mode = (a.gradient == DRIFT_GRADIENT_CV || planned) && !a.init
                        ? DRIFT_INIT_MODE
                        : DRIFT_INIT_RANDOM;
    if (a.init && !strcmp(a.init, "mode")) {
        if (a.gradient != DRIFT_GRADIENT_CV && !planned) {
            fprintf(stderr, "drift sample: --init mode: needs --gradient cv "
                            "(the mode it starts from is cv's)\n");
            rc = EXIT_USAGE;
            goto out;
        }
        init_mode = DRIFT_INIT_MODE;
    } else if (a.init && (!strcmp(a.init, "zero") ||
                   (a.init_radius == 0 &&
                    !drift_parse_double(a.init, &(double){0}))))
        init_mode = DRIFT_INIT_ZERO;
    else if (a.init && strcmp(a.init, "random") &&
             drift_parse_double(a.init, &(double){0})) {
        init_mode = DRIFT_INIT_VALUES;
        init_values = calloc(prob.model.n_out + 1, sizeof *init_values);
        init_given = calloc(prob.model.n_out + 1, 1);
        if (!init_values || !init_given) {
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        if (drift_inits_read_partial(a.init, &prob.model, init_values,
                                     init_given, &e)) {
            fprintf(stderr, "drift sample: --init %s\n", e.msg);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    if (a.eval_every > 0 && !a.test) {
        fprintf(stderr, "drift sample: --eval-every needs --test FILE\n");
        rc = EXIT_USAGE;
        goto out;
    }
    /* Across ranks, the groups' writers alone evaluate the held-out set. */
    int writer = !mpi->on || mpi->L.grank == 0;
    if (a.test && writer && drift_heldout_set_open(&test, &prob, a.test, &e)) {
        fprintf(stderr, "drift sample: %s\n", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }

    /* Checkpoints: the manifest of a fresh run, or the check that a
     * resumed one is made of what it began with. */
    char ckpt_dir[4096] = "";
    int ckpt_fresh = 0;
    if (a.ckpt_iters || a.ckpt_seconds > 0) {
        if (!sampler.checkpoint) {
            fprintf(stderr, "drift sample: --checkpoint-every: sampler %s "
                            "cannot be checkpointed (its plugin has no "
                            "checkpoint callback; see "
                            "docs/writing-a-sampler.md)\n",
                    sampler.name);
            rc = EXIT_USAGE;
            goto out;
        }
        ckpt_dir_for(a.out ? a.out : "output.csv", ckpt_dir, sizeof ckpt_dir);
        ckpt_inputs in = {
            prob.lang_path ? prob.lang_path
                           : prob.entry ? prob.entry->path : NULL,
            a.data, a.n_data, sampler_path,
            init_mode == DRIFT_INIT_VALUES ? a.init : NULL};
        if (resume_dir) {
            snprintf(ckpt_dir, sizeof ckpt_dir, "%s", resume_dir);
            rc = ckpt_check(ckpt_dir, cmd, &in);
        } else {
            rc = ckpt_start(ckpt_dir, argc, argv, a.seed, a.have_seed, &in);
            ckpt_fresh = rc == 0;
        }
        if (rc)
            goto out;
    } else if (resume_dir) {
        fprintf(stderr, "drift sample: --resume %s: the checkpoint's command "
                        "has no --checkpoint-every; it is damaged\n",
                resume_dir);
        rc = EXIT_USAGE;
        goto out;
    }

    /* This process's chains: all, or its rank group's. */
    unsigned K_here = mpi->on ? mpi->L.count : a.chains;
    results = calloc(K_here ? K_here : 1, sizeof *results);
    if (!results) {
        rc = EXIT_RUN_FAILED;
        goto out;
    }
    if (mpi->on && (rc = cli_mpi_gate2(mpi, 0, &prob)))
        goto out;

    const char *header[24];
    size_t nh = 0;
    for (size_t k = 0; k < prob.n_header && nh < 20; k++)
        header[nh++] = prob.header[k];
    for (size_t k = 0; mpi->on && k < 2; k++)
        header[nh++] = mpi->header[k];
    header[nh] = NULL;

    drift_run_config cfg = {
        .model = &prob.model,
        .data = drift_problem_data(&prob),
        .sampler = &sampler,
        .sampler_path = sampler_path,
        .hp = hp,
        .hp_set = hp_set,
        .batch = a.batch,
        .access = a.access,
        .iters = a.iters,
        .passes = a.passes,
        .seconds = a.seconds,
        .thin = a.thin,
        .thin_time = a.thin_time,
        .generated_every = a.generated_every,
        .warmup = a.warmup,
        .save_warmup = a.save_warmup,
        .seed = a.seed,
        .chains = a.chains,
        .grad_noise = a.grad_noise,
        .max_memory = a.max_memory,
        .first_chain_id = a.chain_id ? a.chain_id : 1,
        .init_mode = init_mode,
        .init_values = init_values,
        .init_given = init_given,
        .init_radius = a.init_radius,
        .init_path = init_mode == DRIFT_INIT_VALUES ? a.init : NULL,
        .out_path = a.out ? a.out : "output.csv",
        .header = header,
        .quiet = a.quiet,
        .progress = a.quiet                  ? 0
                    : isatty(STDERR_FILENO) ? DRIFT_PROGRESS_LINE
                                            : DRIFT_PROGRESS_LOG,
        .test_model = a.test && writer ? &test.model : NULL,
        .test_path = a.test,
        .eval_every = a.eval_every,
        .emit_segments = a.emit_segments,
        .data_path = a.n_data ? a.data[0] : NULL,
        .full_threads = a.threads,
        .warmup_only = a.warmup_only,
        .ckpt_dir = ckpt_dir[0] ? ckpt_dir : NULL,
        .ckpt_iters = a.ckpt_iters,
        .ckpt_seconds = a.ckpt_seconds,
        .resume = resume_dir != NULL,
        .ranks = mpi->on ? &mpi->run : NULL,
        .gradient = a.gradient,
        .save_gradients = a.save_gradients,
        .plan = {planned, planned, plan_budget, planned && !a.have_warmup,
                 planned && !a.have_thin,
                 check_applies(&sampler, hp, prob.model.n_rows, mpi->on),
                 (sampler.flags & DRIFT_SAMPLER_CONTINUOUS)
                     ? PLAN_MAX_PASSES_CONTINUOUS
                     : PLAN_MAX_PASSES},
    };
    /* A mapped row store (read by a C plugin, or by a .drift model as its
     * rows): tell the kernel how it will be read, and read ahead. */
    const drift_table *rows_table =
        prob.table ? prob.table
                   : prob.lang_path ? drift_lang_rows_table(&prob.model)
                                    : NULL;
    if (rows_table && rows_table->kind == DRIFT_TABLE_ROWSTORE) {
        cfg.data_mapped = 1;
        cfg.data_fd = rows_table->rs.fd;
        cfg.data_map = rows_table->rs.map;
        drift_table_advise(rows_table, a.access == DRIFT_ACCESS_CA);
    }
    /* SIGINT, SIGTERM, SIGHUP: the chains stop after their step and the
     * draws so far are committed; a second signal ends the process at
     * once (base/stop.h), leaving no temporary file. */
    drift_stop_catch();
    /* The run in a child process, watched from this one (engine/run/
     * guard.h): a sampler that crashes, exits or hangs loses no draws. */
    /* The guard's parent receives every chain's draws file too: the
     * limit on open files is raised (drift_run checks it) before the
     * fork, for both. */
    uint64_t max_files;
    drift_files_reserve(4ull * a.chains + 16, &max_files);
    drift_guard_config gc = {a.chains,
                             cfg.first_chain_id ? cfg.first_chain_id : 1,
                             cfg.sampler->name, a.step_timeout, NULL, 0};
    int guard_parent = 0, guard_status = 0;
    drift_err ge = {{0}};
    if (!mpi->on && drift_guard_start(&gc, &guard_parent, &guard_status, &ge))
        fprintf(stderr, "drift: warning: %s\n", ge.msg);
    if (guard_parent) {
        drift_stop_uncatch();
        rc = guard_status;
        if (rc && cfg.ckpt_dir)
            fprintf(stderr, "drift: the checkpoint %s is kept; continue the "
                            "run with: drift sample --resume %s\n",
                    cfg.ckpt_dir, cfg.ckpt_dir);
        goto out;
    }
    int run_rc = drift_run(&cfg, results, &e);
    drift_stop_uncatch();
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
    run_report rep = {&a, run_rc, e.msg,
                      mpi->on ? (size_t)prob.rows_total : prob.model.n_rows};
    if (mpi->on) {
        /* Rank 0 speaks for every chain of the job; every rank ends with
         * the job's worst status. */
        rc = cli_mpi_report(mpi, results, rc, print_run, &rep);
        goto out;
    }
    print_run(&rep, results, a.chains);
    if (run_rc && !any_status && run_rc != DRIFT_ESTOP && ckpt_fresh)
        ckpt_remove(ckpt_dir, cfg.first_chain_id, a.chains);
    /* A completed run has no use for its checkpoint. */
    if (cfg.ckpt_dir && rc == 0)
        ckpt_remove(cfg.ckpt_dir, cfg.first_chain_id, a.chains);
    /* All said: what follows is teardown, plugins' included. */
    drift_guard_child_done(rc);
out:
    free(results);
    free(hp);
    free(hp_set);
    free(init_values);
    free(init_given);
    drift_heldout_set_close(&test);
    drift_problem_close(&prob);
    drift_registry_free(reg);
out_args:
    drift_writer_unlock_set(a.out ? a.out : "output.csv", out_lock);
    free(a.set);
    free(a.model_set);
    free(a.data_set);
    return rc;
}

/* ---- drift samplers / drift models -------------------------------------- */

int cmd_sample(int argc, char **argv)
{
    /* Under mpirun, one rank of a run across ranks (mpirun.h). */
    cli_mpi mpi;
    cli_mpi_detect(&mpi);
    int rc = sample_run(argc, argv, NULL, NULL, 0, &mpi);
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
