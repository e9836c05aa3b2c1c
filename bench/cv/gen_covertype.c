/* Covertype-sized synthetic logistic regression: N = 581012, D = 54
 * (intercept + 53 standard normal predictors), w ~ N(0, 1/D), written as CSV. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static uint64_t s[2] = {0x9E3779B97F4A7C15ULL, 0xD1B54A32D192ED03ULL};
static uint64_t next(void) { uint64_t a = s[0], b = s[1], r = a + b; b ^= a; s[0] = ((a << 55) | (a >> 9)) ^ b ^ (b << 14); s[1] = (b << 36) | (b >> 28); return r; }
static double unif(void) { return ((next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double norm(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }
int main(void) {
    enum { N = 581012, D = 54 };
    double w[D];
    for (int j = 0; j < D; j++) w[j] = norm() / sqrt(D);
    printf("y");
    for (int j = 0; j < D; j++) printf(",x.%d", j + 1);
    printf("\n");
    double x[D];
    for (long i = 0; i < N; i++) {
        double z = 0;
        for (int j = 0; j < D; j++) { x[j] = j == 0 ? 1.0 : norm(); z += x[j] * w[j]; }
        int y = unif() < 1 / (1 + exp(-z));
        printf("%d", y);
        for (int j = 0; j < D; j++) printf(",%.6g", x[j]);
        printf("\n");
    }
    return 0;
}
