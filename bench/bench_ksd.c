/* bench_ksd.c: what `drift summary --ksd` costs.  Two parts, in
 * one process, each the best of REPS repetitions on one thread:
 *   - the kernel sum of the IMQ kernel Stein discrepancy
 *     (engine/stats/ksd.c) over n = 1000 and 2000 draws at d = 20 and
 *     d = 54, in ns per pair of draws (and per pair and coordinate), with
 *     and without the per-coordinate parts;
 *   - one exact score, a full-data gradient (engine/run/score.c, what
 *     --save-gradients and --ksd's recomputation call per draw), on
 *     Bayesian logistic regression at N = 10^4, d = 20 and at Covertype's
 *     size, N = 581,012, d = 54 (data made here as bench_logistic makes
 *     them), through the C plugin `logistic` and the .drift model, in ms
 *     per draw and ns per datum.
 * Not a test: nothing here asserts on time. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "base/util.h"
#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"
#include "engine/run/score.h"
#include "engine/stats/ksd.h"

enum { REPS = 5 };

static double sink;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_ksd: %s: %s\n", what, msg);
    exit(1);
}

static void bench_kernel(size_t n, size_t d)
{
    double *x = malloc(n * d * sizeof *x), *s = malloc(n * d * sizeof *s);
    double *part = malloc(d * sizeof *part);
    if (!x || !s || !part)
        die("kernel", "out of memory");
    drift_rng r;
    drift_rng_seed(&r, 7, 0);
    drift_rng_normal_fill(&r, n * d, x);
    for (size_t k = 0; k < n * d; k++)
        s[k] = -x[k] + 0.1 * drift_rng_normal(&r);
    double best = INFINITY, best_p = INFINITY;
    for (int rep = 0; rep < REPS; rep++) {
        drift_ksd k;
        drift_err e;
        double t = drift_now();
        drift_ksd_imq(x, d, s, d, n, d, 1, -0.5, &k, NULL, &e);
        t = drift_now() - t;
        sink += k.ksd;
        best = t < best ? t : best;
        t = drift_now();
        drift_ksd_imq(x, d, s, d, n, d, 1, -0.5, &k, part, &e);
        t = drift_now() - t;
        sink += part[0];
        best_p = t < best_p ? t : best_p;
    }
    double pairs = (double)n * (double)(n - 1) / 2;
    printf("KSD kernel sum, n = %4zu, d = %2zu: %8.4f s, %6.1f ns/pair "
           "(%5.2f ns/pair/coordinate); with parts %6.1f ns/pair\n",
           n, d, best, best / pairs * 1e9, best / pairs / (double)d * 1e9,
           best_p / pairs * 1e9);
    free(x);
    free(s);
    free(part);
}

/* Logistic-regression rows y, x.1 ... x.D (x.1 = 1), w ~ N(0, I/D). */
static double *make_rows(size_t N, size_t D, const char **names)
{
    static char buf[64][16];
    size_t cols = D + 1;
    double *data = malloc(N * cols * sizeof *data);
    if (!data)
        die("data", "out of memory");
    drift_rng r;
    drift_rng_seed(&r, 1, 0);
    double w[64];
    for (size_t j = 0; j < D; j++)
        w[j] = drift_rng_normal(&r) / sqrt((double)D);
    for (size_t i = 0; i < N; i++) {
        double *row = data + i * cols, z = 0;
        for (size_t j = 0; j < D; j++) {
            row[1 + j] = j == 0 ? 1.0 : drift_rng_normal(&r);
            z += row[1 + j] * w[j];
        }
        row[0] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
    }
    snprintf(buf[0], sizeof buf[0], "y");
    names[0] = buf[0];
    for (size_t j = 0; j < D; j++) {
        snprintf(buf[1 + j], sizeof buf[0], "x.%zu", j + 1);
        names[1 + j] = buf[1 + j];
    }
    return data;
}

static double time_score(const drift_model *m, size_t reps)
{
    size_t d = m->dim;
    double *theta = calloc(d, sizeof *theta), *s = calloc(d, sizeof *s);
    if (!theta || !s)
        die("score", "out of memory");
    for (size_t k = 0; k < d; k++)
        theta[k] = 0.01 * (double)k;
    double best = INFINITY;
    for (size_t rep = 0; rep < reps; rep++) {
        drift_err e;
        double t = drift_now();
        if (drift_score_points(m, theta, 1, s, 1, &e))
            die("score", e.msg);
        t = drift_now() - t;
        sink += s[0];
        best = t < best ? t : best;
    }
    free(theta);
    free(s);
    return best;
}

static void bench_score(drift_registry *reg, size_t N, size_t D)
{
    const char *names[65];
    double *data = make_rows(N, D, names);
    drift_data view = {.struct_size = (uint32_t)sizeof(drift_data),
                       .n_rows = N, .n_cols = D + 1, .col_names = names,
                       .values = data, .row_stride = D + 1,
                       .source = "synthetic"};
    const drift_model_entry *me;
    drift_err e;
    if (drift_registry_model(reg, "logistic", &me, &e))
        die("logistic plugin", e.msg);
    drift_model plugin, lang;
    double sd = sqrt(10.0);
    if (me->m->create(&view, &sd, &plugin, &e))
        die("logistic plugin", e.msg);
    char tmpl[] = "/tmp/drift-bench-ksd-XXXXXX";
    int fd = mkstemp(tmpl);
    const char *text = "rows  { x : vector[D]  y : int }\n"
                       "param { w : vector[D] }\n"
                       "prior { w ~ normal(0, sqrt(10)) }\n"
                       "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die(tmpl, "cannot write");
    close(fd);
    char path[64];
    snprintf(path, sizeof path, "%s.drift", tmpl);
    if (rename(tmpl, path))
        die(path, "cannot rename");
    const drift_data *tables[] = {&view};
    drift_lang_spec spec = {.path = path, .diag = stderr, .tables = tables,
                            .n_tables = 1};
    if (drift_lang_open(&spec, &lang, &e))
        die(path, e.msg);
    unlink(path);
    size_t reps = N > 100000 ? REPS : 20 * REPS;
    double tp = time_score(&plugin, reps), tl = time_score(&lang, reps);
    printf("score (full-data gradient), N = %6zu, d = %2zu: C plugin %7.3f "
           "ms (%5.2f ns/datum), .drift model %7.3f ms (%5.2f ns/datum)\n",
           N, D, tp * 1e3, tp / (double)N * 1e9, tl * 1e3,
           tl / (double)N * 1e9);
    plugin.free(plugin.self);
    lang.free(lang.self);
    free(data);
}

int main(void)
{
    openblas_set_num_threads(1);
    printf("bench_ksd: best of %d, one thread\n", REPS);
    bench_kernel(1000, 20);
    bench_kernel(2000, 20);
    bench_kernel(1000, 54);
    bench_kernel(2000, 54);
    drift_registry *reg = drift_registry_new();
    drift_err e;
    if (!reg)
        die("registry", "out of memory");
    drift_registry_scan(reg, &e);
    bench_score(reg, 10000, 20);
    bench_score(reg, 581012, 54);
    drift_registry_free(reg);
    return sink == 12345.678 ? 2 : 0;
}
