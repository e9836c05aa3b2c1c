/* bench_lang_sparse.c: `make bench` for sparse rows in the model language.
 * Sparse logistic regression at a criteo-like shape scaled to this machine
 * (N = 10^6 rows by default, D = 10^6 features, 40 non-zeros per row,
 * synthetic, in memory): the .drift model (x : sparse_vector[D]) against
 * the logistic C plugin's sparse path on the same rows, in one process:
 *   - SGLD at batch 100 and 1000: ns per datum of a stretch of a data
 *     pass (a whole pass at D = 10^6 takes minutes: every step also costs
 *     O(D) for the prior, the dense gradient and the noise), and ratio;
 *   - the O(non-zeros) kernels alone: ns per datum of the summed gradient
 *     (log_lik), of jvp and of the GLM scalars on random minibatches of
 *     100, 1000 and 10000 rows, and ratio (each still writes or zeroes the
 *     O(D) gradient once per call).
 * Each figure is the best of a few repetitions.  Not a test: nothing here
 * asserts on time.  Usage: bench_lang_sparse [N] */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"

#include "bench_plan.h"

enum { NNZ = 40, REPS = 3 };

static size_t N = 1000000, D = 1000000;
static uint64_t *row_ptr;
static uint32_t *idx;
static double *val, *y;
static double sink;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench: %s: %s\n", what, msg);
    exit(1);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, z = *(const uint32_t *)b;
    return (x > z) - (x < z);
}

/* Rows of NNZ distinct sorted features valued 1/sqrt(NNZ); labels from a
 * logistic model with N(0, 1) weights. */
static void make_data(void)
{
    row_ptr = malloc((N + 1) * sizeof *row_ptr);
    idx = malloc(N * NNZ * sizeof *idx);
    val = malloc(N * NNZ * sizeof *val);
    y = malloc(N * sizeof *y);
    double *w = malloc(D * sizeof *w);
    if (!row_ptr || !idx || !val || !y || !w)
        die("data", "out of memory");
    drift_rng r;
    drift_rng_seed(&r, 11, 0);
    for (size_t j = 0; j < D; j++)
        w[j] = drift_rng_normal(&r);
    row_ptr[0] = 0;
    for (size_t i = 0; i < N; i++) {
        uint32_t *ix = idx + i * NNZ;
        int dup;
        do {
            for (int k = 0; k < NNZ; k++)
                ix[k] = (uint32_t)drift_rng_below(&r, D);
            qsort(ix, NNZ, sizeof *ix, cmp_u32);
            dup = 0;
            for (int k = 1; k < NNZ; k++)
                dup |= ix[k] == ix[k - 1];
        } while (dup);
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

/* The .drift model's file (a fresh temporary path, returned). */
static char *write_lang(void)
{
    static const char *text =
        "rows  { x : sparse_vector[D]  y : int }\n"
        "param { w : vector[D] }\n"
        "prior { w ~ normal(0, sqrt(10)) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    char tmpl[] = "/tmp/drift-bench-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("temporary file", "cannot write");
    close(fd);
    char *path = malloc(sizeof tmpl + 8);
    if (!path)
        die("temporary file", "out of memory");
    snprintf(path, sizeof tmpl + 8, "%s.drift", tmpl);
    if (rename(tmpl, path))
        die(path, "cannot rename");
    return path;
}

/* Seconds of SGLD over `passes` data passes as drift sample runs them
 * (best of REPS). */
static double sgld_time(drift_registry *reg, const drift_problem *p,
                        size_t batch, double passes)
{
    char b[32], ps[32];
    snprintf(b, sizeof b, "%zu", batch);
    snprintf(ps, sizeof ps, "%.17g", passes);
    const drift_option options[] = {
        {"set", "h=1e-7"}, {"batch", b},      {"passes", ps},
        {"warmup", "0"},   {"thin", "1000000"}, {"seed", "3"},
        {"chains", "1"},   {"init", "zero"},  {"quiet", NULL}};
    double best = INFINITY;
    for (int rep = 0; rep < REPS; rep++) {
        double t = bench_plan_time(reg, p, "sgld", options,
                                   sizeof options / sizeof *options);
        if (t < best)
            best = t;
    }
    return best;
}

typedef struct kernels {
    double grad, jvp, glm; /* seconds per call */
} kernels;

/* Seconds per call of the summed gradient, jvp and GLM scalars on a
 * random minibatch of n rows (best of several calls). */
static kernels kernel_times(const drift_model *m, size_t n, int calls)
{
    void *ws = m->workspace_new(m->self, n);
    double *w = malloc(D * sizeof *w), *v = malloc(D * sizeof *v);
    double *g = malloc(D * sizeof *g), *out = malloc(n * sizeof *out);
    size_t *rows = malloc(n * sizeof *rows);
    if (!ws || !w || !v || !g || !out || !rows)
        die("kernels", "out of memory");
    drift_rng r;
    drift_rng_seed(&r, 5, 1);
    for (size_t j = 0; j < D; j++) {
        w[j] = 0.1 * drift_rng_normal(&r);
        v[j] = drift_rng_normal(&r);
    }
    kernels k = {INFINITY, INFINITY, INFINITY};
    drift_err e;
    for (int c = 0; c < calls; c++) {
        for (size_t i = 0; i < n; i++)
            rows[i] = drift_rng_below(&r, N);
        drift_rows b = {rows, 0, n};
        double ll, t = drift_now();
        if (m->log_lik(m->self, ws, w, &b, NULL, &ll, g, NULL, &e))
            die("log_lik", e.msg);
        t = drift_now() - t;
        k.grad = t < k.grad ? t : k.grad;
        t = drift_now();
        if (m->jvp(m->self, ws, w, v, &b, out, NULL, &e))
            die("jvp", e.msg);
        t = drift_now() - t;
        k.jvp = t < k.jvp ? t : k.jvp;
        t = drift_now();
        if (m->glm_scalars(m->self, ws, w, &b, out, NULL, &e))
            die("glm_scalars", e.msg);
        t = drift_now() - t;
        k.glm = t < k.glm ? t : k.glm;
        sink += g[0] + out[0] + ll;
    }
    m->workspace_free(m->self, ws);
    free(w), free(v), free(g), free(out), free(rows);
    return k;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        N = (size_t)strtoull(argv[1], NULL, 10);
    make_data();
    static const char *names[] = {"y"};
    drift_sparse sp = {"x", D, row_ptr, idx, val, N * NNZ};
    drift_data view = {(uint32_t)sizeof(drift_data), 0, N, 1, names, y, 1,
                       "synthetic", 0, 1, &sp};
    drift_registry *reg = drift_registry_new();
    drift_err e = {{0}};
    if (!reg || drift_registry_scan(reg, &e))
        die("plugins (run with make bench)", e.msg);
    char *lang_path = write_lang();
    drift_problem pp, pl;
    bench_problem_open(reg, "logistic", &view, NULL, NULL, &pp);
    bench_problem_open(reg, lang_path, &view, NULL, NULL, &pl);
    unlink(lang_path);
    const drift_model *plugin = &pp.model, *lang = &pl.model;
    if (!(lang->flags & DRIFT_MODEL_GLM) || lang->dim != D)
        die(".drift model", "not in generalised linear form, or wrong D");
    printf("sparse logistic regression, N = %zu, D = %zu, %d non-zeros per "
           "row: the .drift model (sparse_vector) against the C plugin "
           "(best of %d)\n", N, D, NNZ, REPS);
    static const size_t sb[] = {100, 1000};
    static const double sfrac[] = {0.02, 0.2}; /* 200 steps each */
    for (int k = 0; k < 2; k++) {
        double passes = sfrac[k] * 1000000.0 / (double)N;
        passes = passes > 1 ? 1 : passes;
        double tp = sgld_time(reg, &pp, sb[k], passes);
        double tl = sgld_time(reg, &pl, sb[k], passes);
        double rows = passes * (double)N;
        printf("  SGLD, batch %5zu (%.3g of a pass): C plugin %10.1f "
               "ns/datum, .drift %10.1f ns/datum, ratio %.2f\n",
               sb[k], passes, 1e9 * tp / rows, 1e9 * tl / rows, tl / tp);
    }
    static const size_t kb[] = {100, 1000, 10000};
    for (int k = 0; k < 3; k++) {
        int calls = kb[k] <= 1000 ? 40 : 10;
        kernels p = kernel_times(plugin, kb[k], calls);
        kernels l = kernel_times(lang, kb[k], calls);
        double per = 1e9 / (double)kb[k];
        printf("  batch %5zu: summed gradient %8.1f vs %8.1f ns/datum "
               "(ratio %.2f); jvp %6.1f vs %6.1f (%.2f); GLM scalars %6.1f "
               "vs %6.1f (%.2f)\n",
               kb[k], p.grad * per, l.grad * per, l.grad / p.grad,
               p.jvp * per, l.jvp * per, l.jvp / p.jvp, p.glm * per,
               l.glm * per, l.glm / p.glm);
    }
    printf("(C plugin first, .drift second; each SGLD step also costs O(D) "
           "for the prior,\n the dense gradient and the noise, which larger "
           "batches amortise)\n");
    drift_problem_close(&pp);
    drift_problem_close(&pl);
    free(lang_path);
    drift_registry_free(reg);
    free(row_ptr), free(idx), free(val), free(y);
    return sink == 1234.5 ? 2 : 0;
}
