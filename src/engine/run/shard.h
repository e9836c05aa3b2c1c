/* shard.h: a chain's rows when the run spans ranks (ranks.h).  Each rank
 * of the chain's group holds one contiguous share of the N rows (the
 * model it evaluates was built over that share alone, its rows numbered
 * from 0) and evaluates the rows of a request that fall in its share;
 * the partial sums, the per-row values and the ranks' statuses are then
 * combined across the group, so that every oracle returns on every rank
 * what it returns in one process, up to the order of summation.  The
 * sampler runs on every rank with the same random streams, so it asks
 * every rank for the same rows in the same order.  oracle.c and emit.c
 * call these where c->ext.shard is set, which it never is in one process.
 * Not for the oracles' arithmetic (oracle.c) nor for MPI (ranks_mpi.c). */
#ifndef DRIFT_SHARD_H
#define DRIFT_SHARD_H

#include <stddef.h>

#include "chain.h"
#include "ranks.h"

typedef struct drift_shard {
    drift_ranks_chan *chan; /* borrowed: the chain's channel */
    size_t first, n;        /* this rank's rows: first .. first + n - 1 of
                               the N, rows 0 .. n - 1 of its model */
    int writer;             /* the group's rank 0: it writes the chain's
                               files and warnings */
    size_t *local, *pos;    /* pick's scratch: local row numbers and their
                               places in the request */
    size_t cap;
    double *sums;           /* d + 1 values: a gradient and a log term */
} drift_shard;

/* A shard of n rows from global row `first` on, over the chain's
 * channel, for a model of dimension d.  NULL when out of memory. */
drift_shard *drift_shard_new(drift_ranks_chan *chan, size_t first, size_t n,
                             size_t d);
void drift_shard_free(drift_shard *s);

/* Which of rows[0 .. n) lie in this rank's share: their local numbers
 * go to s->local and their places in rows to s->pos, in order; returns
 * how many, or SIZE_MAX when out of memory. */
size_t drift_shard_pick(drift_shard *s, const size_t *rows, size_t n);

/* Whether global row r is this rank's, and its local number. */
static inline int drift_shard_owns(const drift_shard *s, size_t r,
                                   size_t *local)
{
    if (r < s->first || r - s->first >= s->n)
        return 0;
    *local = r - s->first;
    return 1;
}

/* Sums v[n] (this rank's partial values) over the chain's group and
 * agrees on the status, rc being this rank's (DRIFT_OK, DRIFT_ENONFINITE
 * or a failure, whose message is in c->nonfinite or c->message).  The
 * agreed status is returned on every rank: a failure fails the chain
 * with the failing rank's message, ENONFINITE leaves that rank's reason
 * in c->nonfinite.  Every rank of the group must call it at the same
 * point with the same n. */
int drift_shard_combine(drift_chain *c, double *v, size_t n, int rc);

/* The same without touching the chain: the agreed status alone (for
 * values a failure does not fail the chain for, such as lp__). */
int drift_shard_sum(drift_chain *c, double *v, size_t n, int rc);

/* Per-row results: rows not this rank's get -0.0 (the one value that
 * adds to anything without changing it, sign of zero included), after
 * which `compact` values of width w (those of the rank's k rows, in the
 * order pick returned them, at the front of out) are moved to their
 * places s->pos[0 .. k). */
void drift_shard_scatter(const drift_shard *s, double *out, size_t n,
                         size_t k, size_t w);

/* Called right after something only this rank did failed the chain (its
 * draws file could not be written, an input map lost pages): the failure
 * is taken back and deferred (ranks.h), so that this rank goes on the
 * same path as the others until the group agrees at the end of the
 * step. */
void drift_shard_defer(drift_chain *c);

/* The end of a step (and the gate before the first one): with `ask`,
 * the group agrees now (a collective, at the same iterations on every
 * rank); either way, a failure some rank deferred fails the chain on
 * every rank.  Returns 1 when the chain must stop: it failed, or the
 * group agreed to stop (a signal, the --seconds budget on the group's
 * rank 0). */
int drift_shard_step_end(drift_chain *c, int ask);

/* Whether the group agreed to stop, and why (ranks.h). */
int drift_shard_stopped(const drift_chain *c);

#endif
