/* stream.h: the data-access stream behind next_batch: random access (with
 * replacement), random reshuffle and cyclic access, with a look-ahead so
 * the next minibatch's rows can be prefetched while the current one is
 * evaluated.  The look-ahead never changes which rows come out. */
#ifndef DRIFT_STREAM_H
#define DRIFT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include <drift/sampler.h>

#include "rng.h"

typedef struct drift_stream {
    drift_access mode;
    size_t N;
    drift_rng rng;      /* the stream's own random numbers */
    drift_rng pass_rng; /* RR: rng as it was before the current pass's
                           shuffle, which it repeats (checkpoints) */
    size_t *perm;       /* RR: the current pass's permutation, a shuffle
                           of 0..N-1 (not of the last pass's order) */
    size_t pos;         /* RR/CA: next position in the pass */
    size_t *ahead;      /* ring buffer of drawn, not yet taken indices */
    size_t cap, head, len;
    uint64_t passes;    /* completed passes (RR/CA) */
} drift_stream;

/* max_batch: the largest n that take/peek will be asked for. */
int drift_stream_init(drift_stream *s, drift_access mode, size_t N,
                      const drift_rng *rng, size_t max_batch);
void drift_stream_free(drift_stream *s);

/* The next n indices (n <= max_batch). */
void drift_stream_take(drift_stream *s, size_t n, size_t *out);
/* Makes the next n indices available without taking them; returns a
 * pointer to k <= n of them that are contiguous in the ring (enough for
 * prefetching). */
const size_t *drift_stream_peek(drift_stream *s, size_t n, size_t *k);

/* RR: rebuilds perm from pass_rng after the stream's scalars were
 * restored from a checkpoint. */
void drift_stream_rebuild(drift_stream *s);

const char *drift_access_name(drift_access a);
int drift_access_parse(const char *s, drift_access *out);

#endif
