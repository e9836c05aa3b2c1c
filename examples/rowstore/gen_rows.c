/* gen_rows.c: writes synthetic logistic-regression rows as CSV on standard
 * output (header y,x.1..x.D; x.1 = 1, the rest N(0,1); y ~ Bernoulli), for
 * the row-store examples.  Usage: gen_rows N D [seed] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 88172645463325252ull;

static double unif(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return (double)(s >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
    double u = unif(), v = unif();
    return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_rows N D [seed]\n");
        return 2;
    }
    long long N = atoll(argv[1]);
    int D = atoi(argv[2]);
    if (argc > 3)
        s ^= (uint64_t)atoll(argv[3]) * 0x9e3779b97f4a7c15ull;
    double *w = malloc(D * sizeof *w), *x = malloc(D * sizeof *x);
    for (int j = 0; j < D; j++)
        w[j] = gauss() / sqrt(D);
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    printf("y");
    for (int j = 1; j <= D; j++)
        printf(",x.%d", j);
    printf("\n");
    for (long long i = 0; i < N; i++) {
        double z = 0;
        for (int j = 0; j < D; j++) {
            x[j] = j == 0 ? 1.0 : gauss();
            z += x[j] * w[j];
        }
        printf("%d", unif() < 1 / (1 + exp(-z)));
        for (int j = 0; j < D; j++)
            printf(",%.6g", x[j]);
        printf("\n");
    }
    return 0;
}
