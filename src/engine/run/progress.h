/* progress.h: the live progress line on standard error while chains run:
 * chain ids, iteration, data passes, draws per second and an ETA, one line
 * for all chains, redrawn at most every half second by the thread that
 * started the chains.  Chains only store three counters per step (relaxed
 * atomic stores, no locks), so the line costs the hot loop nothing
 * measurable.  Not for deciding whether standard error is a terminal (the
 * caller does) or for the end-of-run account (the CLI). */
#ifndef DRIFT_PROGRESS_H
#define DRIFT_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

/* What one chain has done; written by its thread, read by the watcher. */
typedef struct drift_progress_slot {
    uint64_t iter, grads, draws;
    int done;
} drift_progress_slot;

static inline void drift_progress_note(drift_progress_slot *s, uint64_t iter,
                                       uint64_t grads, uint64_t draws)
{
    if (!s)
        return;
    __atomic_store_n(&s->iter, iter, __ATOMIC_RELAXED);
    __atomic_store_n(&s->grads, grads, __ATOMIC_RELAXED);
    __atomic_store_n(&s->draws, draws, __ATOMIC_RELAXED);
}

/* The budget the line measures progress against (0: none of that kind). */
typedef struct drift_progress_budget {
    uint64_t iters;     /* warmup + post-warmup iterations */
    uint64_t warmup;
    double passes;
    double seconds;
    size_t N;           /* rows, for data passes (0: none) */
} drift_progress_budget;

typedef struct drift_progress drift_progress;

/* How progress is shown: one line redrawn in place (a terminal), or, where
 * standard error is a log (a file, CI, a notebook), a line per chain at
 * each tenth of its iterations as CmdStan prints them, e.g.
 * "Chain 1 Iteration:  200 / 2000 [ 10%]  (Warmup)", which a log keeps
 * legible (no carriage returns) and short. */
enum { DRIFT_PROGRESS_LINE = 1, DRIFT_PROGRESS_LOG = 2 };

/* Switches p to DRIFT_PROGRESS_LOG's lines (before drift_progress_watch). */
void drift_progress_log_lines(drift_progress *p);

/* The log line of chain k (0-based) at iteration it, into buf (exposed for
 * tests). */
void drift_progress_log_format(const drift_progress *p, unsigned k,
                               uint64_t it, double passes, char *buf,
                               size_t cap);

/* A watcher of K chains with ids first .. first+K-1, drawing on f.
 * NULL when out of memory (the run then goes on without a line). */
drift_progress *drift_progress_new(unsigned K, unsigned first,
                                   const drift_progress_budget *b, FILE *f);
void drift_progress_free(drift_progress *p);

/* The iteration budget (warmup + iterations) and warmup the run's plan
 * chose once the chains had begun; p may be NULL. */
void drift_progress_replan(drift_progress *p, uint64_t iters,
                           uint64_t warmup);

/* Chain k's (0-based) slot. */
drift_progress_slot *drift_progress_slot_at(drift_progress *p, unsigned k);

/* Marks chain k finished and wakes the watcher. */
void drift_progress_done(drift_progress *p, unsigned k);

/* Draws the line until every chain is done, then erases it.  Call from
 * the thread that started the chains. */
void drift_progress_watch(drift_progress *p);

/* The line for the current counters, elapsed seconds since the start,
 * written into buf (at most cap - 1 characters; exposed for tests). */
void drift_progress_format(drift_progress *p, double elapsed, char *buf,
                           size_t cap);

#endif
