/* gen_sparse.c: writes synthetic sparse logistic-regression rows in LIBSVM
 * form on standard output, for the larger-than-memory run of big.sh: K
 * distinct features per row out of D (1-based, increasing), each valued
 * 1/sqrt(K); hidden weights N(0, 1); y ~ Bernoulli(logistic(x . w)) as
 * 0/1.  Usage: gen_sparse N D K [seed] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 88172645463325252ull;

static uint64_t next(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static double unif(void) { return (double)(next() >> 11) * 0x1.0p-53; }

static double gauss(void)
{
    double u = unif(), v = unif();
    return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

static int cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gen_sparse N D K [seed]\n");
        return 2;
    }
    unsigned long long n = strtoull(argv[1], NULL, 10);
    uint32_t d = (uint32_t)strtoul(argv[2], NULL, 10);
    int k = atoi(argv[3]);
    if (argc > 4)
        s ^= strtoull(argv[4], NULL, 10) * 0x9e3779b97f4a7c15ull;
    if (d == 0 || k < 1 || (uint32_t)k > d) {
        fprintf(stderr, "gen_sparse: need 1 <= K <= D\n");
        return 2;
    }
    double *w = malloc(d * sizeof *w);
    uint32_t *ix = malloc((size_t)k * sizeof *ix);
    if (!w || !ix)
        return 1;
    for (uint32_t j = 0; j < d; j++)
        w[j] = gauss();
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    double v = 1 / sqrt((double)k);
    for (unsigned long long i = 0; i < n; i++) {
        int dup;
        do {
            for (int j = 0; j < k; j++)
                ix[j] = (uint32_t)(next() % d);
            qsort(ix, (size_t)k, sizeof *ix, cmp);
            dup = 0;
            for (int j = 1; j < k; j++)
                dup |= ix[j] == ix[j - 1];
        } while (dup);
        double z = 0;
        for (int j = 0; j < k; j++)
            z += v * w[ix[j]];
        printf("%d", unif() < 1 / (1 + exp(-z)));
        for (int j = 0; j < k; j++)
            printf(" %u:%.6g", ix[j] + 1, v);
        putchar('\n');
    }
    free(w);
    free(ix);
    return fflush(stdout) ? 1 : 0;
}
