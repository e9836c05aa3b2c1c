/* gen_criteo.c: synthetic click data shaped like Criteo's display-
 * advertising logs (the AGLD paper's section 6.3), as LIBSVM: per row a
 * bias feature (index 1, value 1), 13 count fields (indices 2..14, value
 * log(1 + Poisson(lambda_f)) / 3) and 26 categorical fields, each a
 * category drawn from a Zipf law (exponent 1.1) over its own vocabulary
 * (10 to 10^6 values), hashed into the D - 14 remaining indices (value 1;
 * collisions add), so 40 non-zeros a row and heavy-tailed feature counts
 * as hashed categorical data have.  Hidden weights: N(0, 0.3^2) for the
 * counts, N(0, 0.5^2) for hashed categories, the bias set so that about a
 * quarter of the labels are 1 (Criteo's click rate is 0.26);
 * y ~ Bernoulli(logistic(x . w)).  The first NTRAIN rows go to TRAIN, the
 * next NTEST to TEST (the same hidden weights).
 * Usage: gen_criteo NTRAIN NTEST D TRAIN TEST [seed] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static double unif(void) { return ((double)(next() >> 11) + 0.5) * 0x1.0p-53; }

static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif());
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int poisson(double lam)
{
    if (lam > 30) {
        double v = lam + sqrt(lam) * gauss();
        return v < 0 ? 0 : (int)(v + 0.5);
    }
    double L = exp(-lam), p = 1;
    int k = 0;
    do {
        k++;
        p *= unif();
    } while (p > L);
    return k - 1;
}

/* Zipf(a) on 1..V by inversion of the continuous approximation. */
static uint64_t zipf(double a, double V)
{
    double u = unif();
    double hi = pow(V, 1 - a);
    double x = pow(1 + u * (hi - 1), 1 / (1 - a));
    uint64_t k = (uint64_t)x;
    return k < 1 ? 1 : (k > (uint64_t)V ? (uint64_t)V : k);
}

typedef struct { uint32_t ix; double v; } nz;

static int cmp(const void *a, const void *b)
{
    uint32_t x = ((const nz *)a)->ix, y = ((const nz *)b)->ix;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: gen_criteo NTRAIN NTEST D TRAIN TEST [seed]\n");
        return 2;
    }
    unsigned long long ntr = strtoull(argv[1], NULL, 10), nte = strtoull(argv[2], NULL, 10);
    uint32_t D = (uint32_t)strtoul(argv[3], NULL, 10);
    if (argc > 6)
        s ^= mix(strtoull(argv[6], NULL, 10));
    if (D < 1000) {
        fprintf(stderr, "gen_criteo: D must be at least 1000\n");
        return 2;
    }
    FILE *ftr = fopen(argv[4], "w"), *fte = fopen(argv[5], "w");
    if (!ftr || !fte) {
        perror("gen_criteo");
        return 1;
    }
    static char b1[1 << 20], b2[1 << 20];
    setvbuf(ftr, b1, _IOFBF, sizeof b1);
    setvbuf(fte, b2, _IOFBF, sizeof b2);
    double *w = malloc((size_t)D * sizeof *w);
    if (!w)
        return 1;
    for (uint32_t j = 0; j < D; j++)
        w[j] = (j >= 1 && j <= 13 ? 0.3 : 0.5) * gauss();
    double lam[13], vocab[26];
    for (int f = 0; f < 13; f++)
        lam[f] = exp(4 * unif());                    /* 1 .. 55 */
    for (int f = 0; f < 26; f++)
        vocab[f] = floor(pow(10, 1 + 5 * unif()));   /* 10 .. 10^6 */
    w[0] = -2.3;                                     /* the bias: ~ a quarter of clicks */
    nz row[40];
    unsigned long long ones = 0;
    for (unsigned long long i = 0; i < ntr + nte; i++) {
        int k = 0;
        row[k++] = (nz){0, 1.0};
        for (int f = 0; f < 13; f++)
            row[k++] = (nz){(uint32_t)(1 + f), log1p((double)poisson(lam[f])) / 3};
        for (int f = 0; f < 26; f++) {
            uint64_t c = zipf(1.1, vocab[f]);
            row[k++] = (nz){(uint32_t)(14 + mix(((uint64_t)f << 40) ^ c) % (D - 14)), 1.0};
        }
        qsort(row, (size_t)k, sizeof row[0], cmp);
        int m = 0;                                   /* merge hashed collisions */
        for (int j = 0; j < k; j++) {
            if (m && row[m - 1].ix == row[j].ix)
                row[m - 1].v += row[j].v;
            else
                row[m++] = row[j];
        }
        double z = 0;
        for (int j = 0; j < m; j++)
            z += w[row[j].ix] * row[j].v;
        int y = unif() < 1 / (1 + exp(-z));
        ones += y;
        FILE *f = i < ntr ? ftr : fte;
        fprintf(f, "%d", y);
        for (int j = 0; j < m; j++)
            if (row[j].v != 0)
                fprintf(f, " %u:%.6g", row[j].ix + 1, row[j].v);
        fputc('\n', f);
    }
    fprintf(stderr, "gen_criteo: %llu + %llu rows, D = %u, click rate %.3f\n", ntr, nte, D,
            (double)ones / (double)(ntr + nte));
    free(w);
    return fclose(ftr) || fclose(fte) ? 1 : 0;
}
