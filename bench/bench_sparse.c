/* bench_sparse.c: `make bench` for sparse rows.  Sparse logistic regression
 * at a criteo-like shape scaled to this machine (N rows, D = 10^6
 * features, 40 non-zeros per row, synthetic, in memory): ns per datum of
 * an SGLD data pass through the logistic plugin's sparse path, beside a
 * plain C loop doing the same arithmetic (sparse minibatch gradient, dense
 * prior and noise) in the same process.  Not a test. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"

#include "bench_plan.h"

enum { NNZ = 40 };

static size_t N = 1000000, D = 1000000;
static uint64_t *row_ptr;
static uint32_t *idx;
static double *val, *y;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, z = *(const uint32_t *)b;
    return (x > z) - (x < z);
}

static void make_data(void)
{
    row_ptr = malloc((N + 1) * sizeof *row_ptr);
    idx = malloc(N * NNZ * sizeof *idx);
    val = malloc(N * NNZ * sizeof *val);
    y = malloc(N * sizeof *y);
    if (!row_ptr || !idx || !val || !y) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    drift_rng r;
    drift_rng_seed(&r, 7, 0);
    double *w = malloc(D * sizeof *w);
    for (size_t j = 0; j < D; j++)
        w[j] = drift_rng_normal(&r);
    row_ptr[0] = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t *ix = idx + i * NNZ;
        for (;;) { /* distinct sorted indices */
            for (int k = 0; k < NNZ; k++)
                ix[k] = (uint32_t)drift_rng_below(&r, D);
            qsort(ix, NNZ, sizeof *ix, cmp_u32);
            int dup = 0;
            for (int k = 1; k < NNZ; k++)
                dup |= ix[k] == ix[k - 1];
            if (!dup)
                break;
        }
        double z = 0;
        for (int k = 0; k < NNZ; k++) {
            val[i * NNZ + k] = 1.0 / sqrt(NNZ);
            z += val[i * NNZ + k] * w[ix[k]];
        }
        y[i] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
        row_ptr[i + 1] = (i + 1) * NNZ;
    }
    free(w);
}

static double sink;

/* The same arithmetic as sgld + the sparse logistic model, by hand. */
static double plain_pass(size_t batch)
{
    drift_rng r;
    drift_rng_seed(&r, 2, 0);
    double *w = calloc(D, sizeof *w), *g = malloc(D * sizeof *g);
    double h = 1e-7, noise = sqrt(2 * h), scale = (double)N / batch;
    double t = drift_now();
    for (size_t it = 0; it < N / batch; it++) {
        memset(g, 0, D * sizeof *g);
        for (size_t b = 0; b < batch; b++) {
            size_t i = drift_rng_below(&r, N);
            double z = 0;
            for (uint64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
                z += val[k] * w[idx[k]];
            double s = y[i] - 1 / (1 + exp(-z));
            for (uint64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
                g[idx[k]] += s * val[k];
        }
        for (size_t j = 0; j < D; j++)
            w[j] += h * (scale * g[j] - w[j] / 10.0) +
                    noise * drift_rng_normal(&r);
    }
    t = drift_now() - t;
    sink += w[0];
    free(w);
    free(g);
    return t;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        N = (size_t)strtoull(argv[1], NULL, 10);
    make_data();
    static const char *names[] = {"y"};
    drift_sparse sp = {"x", D, row_ptr, idx, val, N * NNZ};
    drift_data view = {.struct_size = (uint32_t)sizeof(drift_data),
                       .n_rows = N, .n_cols = 1, .col_names = names,
                       .values = y, .row_stride = 1, .source = "synthetic",
                       .n_sparse = 1, .sparse = &sp};
    drift_registry *reg = drift_registry_new();
    drift_err e = {{0}};
    if (!reg || drift_registry_scan(reg, &e)) {
        fprintf(stderr, "bench: %s (run with make bench)\n", e.msg);
        return 1;
    }
    drift_problem prob;
    bench_problem_open(reg, "logistic", &view, NULL, NULL, &prob);
    printf("sparse logistic regression, N = %zu, D = %zu, %d non-zeros per "
           "row (one SGLD pass)\n", N, D, NNZ);
    size_t batches[] = {100, 1000, 10000};
    for (int k = 0; k < 3; k++) {
        /* one pass as drift sample runs it */
        char batch[32];
        snprintf(batch, sizeof batch, "%zu", batches[k]);
        const drift_option options[] = {
            {"set", "h=1e-7"}, {"batch", batch},  {"passes", "1"},
            {"warmup", "0"},   {"thin", "1"},     {"seed", "3"},
            {"chains", "1"},   {"init", "zero"},  {"quiet", NULL}};
        double t = bench_plan_time(reg, &prob, "sgld", options,
                                   sizeof options / sizeof *options);
        double c = plain_pass(batches[k]);
        printf("batch %5zu: drift sgld %9.1f ns/datum, plain C %9.1f "
               "ns/datum, ratio %.2f\n",
               batches[k], 1e9 * t / N, 1e9 * c / N, t / c);
    }
    printf("(besides O(non-zeros), each step costs O(D) for the dense prior "
           "gradient\n and Langevin noise, which larger batches amortise)\n");
    drift_problem_close(&prob);
    drift_registry_free(reg);
    return sink == 1234.5 ? 2 : 0;
}
