/* stream.c: random access, random reshuffle and cyclic access over rows
 * 0..N-1.  RR and CA visit every row exactly once per pass; a minibatch
 * that crosses the end of a pass continues into the next.  Not for reading
 * data (the model does that). */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "stream.h"

/* RR: a new pass's order, a shuffle of the identity, so that it depends
 * only on the stream's state before it (a checkpoint keeps that state,
 * not N indices). */
static void shuffle(drift_stream *s)
{
    s->pass_rng = s->rng;
    for (size_t i = 0; i < s->N; i++)
        s->perm[i] = i;
    drift_rng_shuffle(&s->rng, s->perm, s->N);
}

int drift_stream_init(drift_stream *s, drift_access mode, size_t N,
                      const drift_rng *rng, size_t max_batch)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->N = N;
    s->rng = *rng;
    s->cap = 2 * (max_batch ? max_batch : 1);
    s->ahead = drift_malloc_array(s->cap, sizeof(size_t));
    if (!s->ahead)
        return DRIFT_ENOMEM;
    if (mode == DRIFT_ACCESS_RR && N > 0) {
        s->perm = drift_malloc_array(N, sizeof(size_t));
        if (!s->perm) {
            drift_free(s->ahead);
            s->ahead = NULL;
            return DRIFT_ENOMEM;
        }
        shuffle(s);
    }
    return DRIFT_OK;
}

void drift_stream_rebuild(drift_stream *s)
{
    if (s->mode == DRIFT_ACCESS_RR && s->perm) {
        s->rng = s->pass_rng;
        shuffle(s);
    }
}

void drift_stream_free(drift_stream *s)
{
    drift_free(s->perm);
    drift_free(s->ahead);
    memset(s, 0, sizeof *s);
}

static size_t generate(drift_stream *s)
{
    size_t i;
    switch (s->mode) {
    case DRIFT_ACCESS_RR:
        if (s->pos == s->N) {
            shuffle(s);
            s->pos = 0;
            s->passes++;
        }
        return s->perm[s->pos++];
    case DRIFT_ACCESS_CA:
        if (s->pos == s->N) {
            s->pos = 0;
            s->passes++;
        }
        i = s->pos++;
        return i;
    case DRIFT_ACCESS_RA:
    default:
        return (size_t)drift_rng_below(&s->rng, s->N);
    }
}

static void fill(drift_stream *s, size_t n)
{
    while (s->len < n) {
        s->ahead[(s->head + s->len) % s->cap] = generate(s);
        s->len++;
    }
}

void drift_stream_take(drift_stream *s, size_t n, size_t *out)
{
    if (s->N == 0)
        return;
    fill(s, n);
    for (size_t k = 0; k < n; k++) {
        out[k] = s->ahead[s->head];
        s->head = (s->head + 1) % s->cap;
    }
    s->len -= n;
}

const size_t *drift_stream_peek(drift_stream *s, size_t n, size_t *k)
{
    if (s->N == 0) {
        *k = 0;
        return s->ahead;
    }
    fill(s, n);
    size_t contiguous = s->cap - s->head;
    *k = n < contiguous ? n : contiguous;
    return s->ahead + s->head;
}

const char *drift_access_name(drift_access a)
{
    switch (a) {
    case DRIFT_ACCESS_RA: return "ra";
    case DRIFT_ACCESS_RR: return "rr";
    case DRIFT_ACCESS_CA: return "ca";
    }
    return "?";
}

int drift_access_parse(const char *s, drift_access *out)
{
    if (!strcmp(s, "ra") || !strcmp(s, "random"))
        *out = DRIFT_ACCESS_RA;
    else if (!strcmp(s, "rr") || !strcmp(s, "reshuffle"))
        *out = DRIFT_ACCESS_RR;
    else if (!strcmp(s, "ca") || !strcmp(s, "cyclic"))
        *out = DRIFT_ACCESS_CA;
    else
        return -1;
    return 0;
}
