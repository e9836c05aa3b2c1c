/* rng.h: the per-chain random stream (xoshiro256++), with uniform, normal
 * (ziggurat), exponential and bounded-integer draws.  Chains get disjoint
 * streams by jumping 2^128 steps per chain id from the seed's start.
 * Not for cryptography. */
#ifndef DRIFT_RNG_H
#define DRIFT_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct drift_rng {
    uint64_t s[4];
} drift_rng;

/* Stream `stream` (0, 1, 2, ...) of seed `seed`: streams are 2^128 draws
 * apart, so they never overlap in practice.  Its cost grows with the
 * logarithm of stream, not with stream (a chain id of 2^30 is
 * milliseconds). */
void drift_rng_seed(drift_rng *r, uint64_t seed, uint64_t stream);
/* Moves r 2^128 draws ahead: from stream k of a seed to stream k + 1. */
void drift_rng_jump(drift_rng *r);
/* Moves r 2^192 draws ahead: a sub-stream for a second consumer. */
void drift_rng_long_jump(drift_rng *r);

uint64_t drift_rng_u64(drift_rng *r);
double drift_rng_uniform(drift_rng *r);       /* [0, 1), 53 bits */
double drift_rng_normal(drift_rng *r);        /* N(0, 1) */
void drift_rng_normal_fill(drift_rng *r, size_t n, double *out);
double drift_rng_exponential(drift_rng *r);   /* Exp(1) */
uint64_t drift_rng_below(drift_rng *r, uint64_t n); /* [0, n), n >= 1 */
/* Fisher-Yates shuffle of a[0..n). */
void drift_rng_shuffle(drift_rng *r, size_t *a, size_t n);

#endif
