/* rng.c: xoshiro256++ (Blackman and Vigna, 2019) seeded through
 * splitmix64, a 128-layer ziggurat for normals (Marsaglia and Tsang, 2000,
 * in Doornik's 2005 formulation), inverse-CDF exponentials and Lemire's
 * bounded integers.  Not for anything that needs to be unpredictable. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "rng.h"

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t drift_rng_u64(drift_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void jump_with(drift_rng *r, const uint64_t poly[4])
{
    uint64_t t[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 64; b++) {
            if (poly[i] & (1ull << b))
                for (int k = 0; k < 4; k++)
                    t[k] ^= r->s[k];
            drift_rng_u64(r);
        }
    for (int k = 0; k < 4; k++)
        r->s[k] = t[k];
}

/* Jump polynomials of xoshiro256: 2^128 and 2^192 steps. */
static const uint64_t JUMP[4] = {0x180ec6d33cfd0abaull, 0xd5a61266f0c9392cull,
                                 0xa9582618e03fc9aaull, 0x39abdc4529b1661cull};
static const uint64_t LONG_JUMP[4] = {
    0x76e15d3efefdcbbfull, 0xc5004e441c522fb3ull, 0x77710069854ee241ull,
    0x39109bb02acbe635ull};

/* The generator is linear over GF(2): a jump is a 256 x 256 bit matrix,
 * held as its columns (the images of the 256 unit states). */
typedef uint64_t jump_matrix[256][4];

/* out = M v. */
static void mat_apply(const jump_matrix M, const uint64_t v[4],
                      uint64_t out[4])
{
    uint64_t t[4] = {0, 0, 0, 0};
    for (int i = 0; i < 256; i++)
        if (v[i / 64] & (1ull << (i % 64)))
            for (int k = 0; k < 4; k++)
                t[k] ^= M[i][k];
    for (int k = 0; k < 4; k++)
        out[k] = t[k];
}

/* n jumps of 2^128 steps in O(log n) matrix squarings instead of n jumps:
 * a start-up cost linear in --chain-id (a stream of 10^8 took minutes)
 * becomes milliseconds, with the very same state. */
static void jump_n(drift_rng *r, uint64_t n)
{
    static _Thread_local jump_matrix P, Q;
    for (int i = 0; i < 256; i++) {
        drift_rng e = {{0, 0, 0, 0}};
        e.s[i / 64] = 1ull << (i % 64);
        jump_with(&e, JUMP);
        for (int k = 0; k < 4; k++)
            P[i][k] = e.s[k];
    }
    for (;;) {
        if (n & 1)
            mat_apply(P, r->s, r->s);
        n >>= 1;
        if (!n)
            break;
        for (int i = 0; i < 256; i++)
            mat_apply(P, P[i], Q[i]);
        memcpy(P, Q, sizeof P);
    }
}

void drift_rng_seed(drift_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed;
    for (int k = 0; k < 4; k++)
        r->s[k] = splitmix64(&x);
    /* A few jumps cost less than building the jump's matrix. */
    if (stream <= 256) {
        for (uint64_t j = 0; j < stream; j++)
            jump_with(r, JUMP);
    } else {
        jump_n(r, stream);
    }
}

void drift_rng_long_jump(drift_rng *r) { jump_with(r, LONG_JUMP); }

void drift_rng_jump(drift_rng *r) { jump_with(r, JUMP); }

double drift_rng_uniform(drift_rng *r)
{
    return (double)(drift_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* ---- ziggurat ---------------------------------------------------------- */

#define ZIG_C 128
#define ZIG_R 3.442619855899
#define ZIG_V 9.91256303526217e-3

static double zig_x[ZIG_C + 1];
static double zig_ratio[ZIG_C];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_setup(void)
{
    double f = exp(-0.5 * ZIG_R * ZIG_R);
    zig_x[0] = ZIG_V / f;
    zig_x[1] = ZIG_R;
    zig_x[ZIG_C] = 0.0;
    for (int i = 2; i < ZIG_C; i++) {
        zig_x[i] = sqrt(-2.0 * log(ZIG_V / zig_x[i - 1] + f));
        f = exp(-0.5 * zig_x[i] * zig_x[i]);
    }
    for (int i = 0; i < ZIG_C; i++)
        zig_ratio[i] = zig_x[i + 1] / zig_x[i];
}

/* The tail beyond ZIG_R, by Marsaglia's exponential rejection. */
static double zig_tail(drift_rng *r, int negative)
{
    double x, y;
    do {
        x = log(1.0 - drift_rng_uniform(r)) / ZIG_R;
        y = log(1.0 - drift_rng_uniform(r));
    } while (-2.0 * y < x * x);
    return negative ? x - ZIG_R : ZIG_R - x;
}

static double zig_normal(drift_rng *r)
{
    for (;;) {
        uint64_t bits = drift_rng_u64(r);
        int i = (int)(bits & (ZIG_C - 1));
        /* u uniform in [-1, 1) from the 53 high bits. */
        double u = 2.0 * ((double)(bits >> 11) * 0x1.0p-53) - 1.0;
        if (fabs(u) < zig_ratio[i])
            return u * zig_x[i];
        if (i == 0)
            return zig_tail(r, u < 0);
        double x = u * zig_x[i];
        double f0 = exp(-0.5 * (zig_x[i] * zig_x[i] - x * x));
        double f1 = exp(-0.5 * (zig_x[i + 1] * zig_x[i + 1] - x * x));
        if (f1 + drift_rng_uniform(r) * (f0 - f1) < 1.0)
            return x;
    }
}

double drift_rng_normal(drift_rng *r)
{
    pthread_once(&zig_once, zig_setup);
    return zig_normal(r);
}

void drift_rng_normal_fill(drift_rng *r, size_t n, double *out)
{
    pthread_once(&zig_once, zig_setup);
    for (size_t k = 0; k < n; k++)
        out[k] = zig_normal(r);
}

double drift_rng_exponential(drift_rng *r)
{
    return -log1p(-drift_rng_uniform(r));
}

uint64_t drift_rng_below(drift_rng *r, uint64_t n)
{
    /* Lemire (2019): multiply-shift with rejection of the biased zone. */
    unsigned __int128 m = (unsigned __int128)drift_rng_u64(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = (unsigned __int128)drift_rng_u64(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

void drift_rng_shuffle(drift_rng *r, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)drift_rng_below(r, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
