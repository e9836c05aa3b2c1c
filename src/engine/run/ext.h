/* ext.h: run extensions, the features that cut across a run (the process
 * guard, the input maps' watch, shards across MPI ranks, progress,
 * checkpoints, held-out metrics, the chain watch, the run-level tuning by
 * pilot chains), each one table of hooks that run.c's core loop calls in
 * the order of drift_run_exts.  An extension keeps its per-chain state in
 * a struct of its own, reached through the chain's ext member, and
 * refuses in its check what it cannot be combined with, so that every
 * refusal of a pair of features lives in one place.  Not for the core
 * loop itself (run.c) nor for the services samplers call (oracle.c). */
#ifndef DRIFT_EXT_H
#define DRIFT_EXT_H

#include "chain.h"

/* Steps between polls that cost a system call or a message (an fstat
 * of the input maps' files, an exchange between ranks). */
#define DRIFT_EXT_POLL_EVERY 256

/* What an extension's open hook says of a chain. */
enum {
    DRIFT_EXT_IDLE = 0,     /* nothing to do for it: its step hooks are
                               not called */
    DRIFT_EXT_ON = 1,       /* its step hooks are called */
    DRIFT_EXT_STOP = -1     /* the chain cannot start (a failure recorded
                               on the chain) */
};

/* One extension.  Every hook may be NULL.  Hooks run on the chain's
 * thread, in table order.
 * check: refuses a configuration (DRIFT_OK, or the error with its message
 *   in e), before anything is opened; drift_run_check calls every one.
 * open: once the chain is set up and its draws file opened (res->path),
 *   before the run-level setup; makes the extension's state.  A failure
 *   of this rank alone across ranks is deferred (drift_shard_defer) and
 *   returns DRIFT_EXT_ON or IDLE: every rank fails at the first gate.
 * setup: the run-level setup, once a run, on its first chain (across
 *   ranks, on a group's chain of its own made like it) while the other
 *   chains wait: after --gradient cv's mode search, before the sampler's
 *   setup; called whatever open said (the chain may have opened none).
 *   May set what every chain then follows: run->hp (the hyperparameters
 *   every chain's sampler gets), run->plan_cfg with run->planned (the
 *   budget, then replan), run->tune_note and run->tune_header (the files'
 *   header).  Non-zero: the chain failed (recorded on it).
 * replan: the run-level setup planned the budget (c->cfg is the plan).
 * restore: after the sampler's init: *restored = 1 when the chain now
 *   stands where an earlier process saved it (its rows written).
 *   Non-zero: the chain failed.
 * begin: before the first step, the file's header written: non-zero: the
 *   chain failed before it started.
 * gate: once a step is counted, before anything reads its results:
 *   non-zero ends the step loop (the chain failed).
 * after_step: once the step's warmup bookkeeping is done: non-zero ends
 *   the step loop.
 * stop: the step loop has ended, before the sampler's finish.
 * finish: after the sampler's finish, before the files are completed.
 * ckpt: saves or restores the extension's state as blocks of the chain's
 *   checkpoint (drift_ckpt_block), in both directions as c->ext.ckpt
 *   says.
 * close: at the chain's end, whatever happened (also when open was never
 *   called or failed): releases the state; started says whether the
 *   first step was taken.  May set res's status and message when the
 *   chain has none. */
typedef struct drift_run_ext {
    const char *name;
    int (*check)(const drift_run_config *cfg, drift_err *e);
    int (*open)(drift_chain *c, drift_chain_result *res);
    int (*setup)(drift_chain *c);
    void (*replan)(drift_chain *c);
    int (*restore)(drift_chain *c, int *restored);
    int (*begin)(drift_chain *c);
    int (*gate)(drift_chain *c);
    int (*after_step)(drift_chain *c);
    void (*stop)(drift_chain *c);
    void (*finish)(drift_chain *c);
    int (*ckpt)(drift_chain *c);
    void (*close)(drift_chain *c, drift_chain_result *res, int started);
} drift_run_ext;

/* The extensions, each in the file of its feature. */
extern const drift_run_ext drift_guard_ext;     /* guard.c */
extern const drift_run_ext drift_maps_ext;      /* maps.c */
extern const drift_run_ext drift_shard_ext;     /* shard.c */
extern const drift_run_ext drift_tune_ext;      /* runplan.c */
extern const drift_run_ext drift_progress_ext;  /* progress.c */
extern const drift_run_ext drift_ckpt_ext;      /* checkpoint.c */
extern const drift_run_ext drift_heldout_ext;   /* heldout.c */
extern const drift_run_ext drift_watch_ext;     /* watch.c */

/* Every extension, in the order their hooks run (ext.c); at most
 * DRIFT_RUN_MAX_EXTS of them. */
#define DRIFT_RUN_MAX_EXTS 16
extern const drift_run_ext *const drift_run_exts[];
extern const unsigned drift_run_n_exts;

/* Every extension's check, in table order: the first refusal, or
 * DRIFT_OK. */
int drift_run_ext_check(const drift_run_config *cfg, drift_err *e);

/* Every extension's setup hook, in table order, until one fails the
 * chain: 0, or non-zero when the chain failed. */
int drift_run_ext_setup(drift_chain *c);

/* Every extension's ckpt hook, in table order: DRIFT_OK or the first
 * error (recorded on the chain). */
int drift_run_ext_ckpt(drift_chain *c);

/* The index of chain c among this process's chains (0 for the run's
 * first), which the run's shared tables (guard slots, progress slots,
 * rank channels) are indexed by. */
static inline unsigned drift_run_ext_index(const drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    unsigned first = (cfg->launch.first_chain_id ? cfg->launch.first_chain_id : 1) +
                     (cfg->ranks ? cfg->ranks->first : 0);
    return c->id - first;
}

#endif
