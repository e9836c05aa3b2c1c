/* bench_logistic.c: `make bench` for the walking skeleton.  On synthetic
 * logistic-regression data of Covertype's size (N = 581,012, d = 54), made
 * here, it times in one process:
 *   - a streaming read of the array (the memory-bandwidth reference),
 *   - a full-gradient pass: a plain C loop vs drift's grad_full oracle
 *     through the logistic plugin,
 *   - an SGLD data pass at batch 50: a plain C loop vs drift's sgld plugin,
 * each the best of several repetitions, in ns per datum, with ratios.
 * Not a test: nothing here asserts on time. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "base/util.h"
#include "engine/run/oracle.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"

#include "bench_plan.h"

enum { N = 581012, D = 54, COLS = D + 1, REPS = 5, BATCH = 50 };

static double *data;
static const char *names[COLS];

static void make_data(void)
{
    static char buf[COLS][16];
    data = malloc((size_t)N * COLS * sizeof *data);
    if (!data) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    drift_rng r;
    drift_rng_seed(&r, 1, 0);
    double w[D];
    for (int j = 0; j < D; j++)
        w[j] = drift_rng_normal(&r) / sqrt(D);
    for (size_t i = 0; i < N; i++) {
        double *row = data + i * COLS, z = 0;
        for (int j = 0; j < D; j++) {
            row[1 + j] = j == 0 ? 1.0 : drift_rng_normal(&r);
            z += row[1 + j] * w[j];
        }
        row[0] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
    }
    snprintf(buf[0], sizeof buf[0], "y");
    names[0] = buf[0];
    for (int j = 0; j < D; j++) {
        snprintf(buf[1 + j], sizeof buf[0], "x.%d", j + 1);
        names[1 + j] = buf[1 + j];
    }
}

static double sink;

/* ---- plain C references -------------------------------------------------- */

static double bandwidth_pass(void)
{
    double t = drift_now(), s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    const double *p = data;
    size_t n = (size_t)N * COLS;
    /* Four independent sums, so the loop is bound by memory, not by the
     * latency of one chain of additions. */
    for (size_t k = 0; k + 3 < n; k += 4) {
        s0 += p[k];
        s1 += p[k + 1];
        s2 += p[k + 2];
        s3 += p[k + 3];
    }
    sink += s0 + s1 + s2 + s3;
    return drift_now() - t;
}

static void plain_grad(const double *w, double *g)
{
    memset(g, 0, D * sizeof *g);
    for (size_t i = 0; i < N; i++) {
        const double *row = data + i * COLS, *x = row + 1;
        double z = 0;
        for (int j = 0; j < D; j++)
            z += x[j] * w[j];
        double s = row[0] - 1 / (1 + exp(-z));
        for (int j = 0; j < D; j++)
            g[j] += s * x[j];
    }
    for (int j = 0; j < D; j++)
        g[j] = -(g[j] - w[j] / 10.0);
}

static double plain_full_pass(void)
{
    double w[D], g[D];
    for (int j = 0; j < D; j++)
        w[j] = 0.01 * j;
    double t = drift_now();
    plain_grad(w, g);
    sink += g[0];
    return drift_now() - t;
}

static double plain_sgld_pass(void)
{
    drift_rng r;
    drift_rng_seed(&r, 2, 0);
    double w[D] = {0}, g[D];
    double h = 1e-6, noise = sqrt(2 * h), scale = (double)N / BATCH;
    double t = drift_now();
    for (size_t it = 0; it < N / BATCH; it++) {
        memset(g, 0, sizeof g);
        for (int b = 0; b < BATCH; b++) {
            const double *row = data + drift_rng_below(&r, N) * COLS, *x = row + 1;
            double z = 0;
            for (int j = 0; j < D; j++)
                z += x[j] * w[j];
            double s = row[0] - 1 / (1 + exp(-z));
            for (int j = 0; j < D; j++)
                g[j] += s * x[j];
        }
        for (int j = 0; j < D; j++)
            w[j] += h * (scale * g[j] - w[j] / 10.0) + noise * drift_rng_normal(&r);
    }
    sink += w[0];
    return drift_now() - t;
}

/* ---- drift ---------------------------------------------------------------- */

static double best(double (*f)(void *), void *arg)
{
    double b = INFINITY;
    for (int k = 0; k < REPS; k++) {
        double t = f(arg);
        if (t < b)
            b = t;
    }
    return b;
}

static double plain(void *f) { return ((double (*)(void))f)(); }

/* A chain of a plan, for grad_full. */
typedef struct ctx {
    drift_plan *plan;
    drift_chain c;
    double theta[D];
} ctx;

/* The SGLD pass as drift sample runs it (--set h=1e-6 --batch 50
 * --passes 1 --warmup 0 --init zero --seed 3 --chains 1). */
static drift_registry *reg;
static drift_problem prob;
static const drift_option sgld_options[] = {
    {"set", "h=1e-6"}, {"batch", "50"},  {"passes", "1"},
    {"warmup", "0"},   {"thin", "1"},    {"seed", "3"},
    {"chains", "1"},   {"init", "zero"}, {"quiet", NULL}};
enum { N_SGLD_OPTIONS = sizeof sgld_options / sizeof *sgld_options };

static double drift_full_pass(void *arg)
{
    ctx *x = arg;
    double g[D];
    for (int j = 0; j < D; j++)
        x->theta[j] = 0.01 * j;
    double t = drift_now();
    drift_services_table.grad_full(&x->c, x->theta, g, NULL);
    sink += g[0];
    return drift_now() - t;
}

static double drift_sgld_pass(void *arg)
{
    (void)arg;
    return bench_plan_time(reg, &prob, "sgld", sgld_options, N_SGLD_OPTIONS);
}

int main(void)
{
    /* As drift_run does: BLAS on one thread, parallelism is drift's. */
    openblas_set_num_threads(1);
    make_data();
    drift_data view = {.struct_size = (uint32_t)sizeof(drift_data),
                       .n_rows = N, .n_cols = COLS, .col_names = names,
                       .values = data, .row_stride = COLS,
                       .source = "synthetic"};
    reg = drift_registry_new();
    drift_err e = {{0}};
    if (!reg || drift_registry_scan(reg, &e)) {
        fprintf(stderr, "bench: %s (run with make bench)\n", e.msg);
        return 1;
    }
    bench_problem_open(reg, "logistic", &view, NULL, NULL, &prob);
    /* chains for grad_full: the SGLD pass's, and at --threads 2 */
    drift_option topts[N_SGLD_OPTIONS + 1];
    memcpy(topts, sgld_options, sizeof sgld_options);
    topts[N_SGLD_OPTIONS] = (drift_option){"threads", "2"};
    ctx x, x2;
    memset(&x, 0, sizeof x);
    memset(&x2, 0, sizeof x2);
    x.plan = bench_plan(reg, &prob, "sgld", sgld_options, N_SGLD_OPTIONS);
    bench_chain(x.plan, &x.c, x.theta);
    x2.plan = bench_plan(reg, &prob, "sgld", topts, N_SGLD_OPTIONS + 1);
    bench_chain(x2.plan, &x2.c, x2.theta);
    double bw = best(plain, (void *)bandwidth_pass);
    double cf = best(plain, (void *)plain_full_pass);
    double df = best(drift_full_pass, &x);
    double df2 = best(drift_full_pass, &x2);
    double cs = best(plain, (void *)plain_sgld_pass);
    double ds = best(drift_sgld_pass, &x);
    double ns = 1e9 / N;
    printf("logistic regression, N = %d, d = %d (best of %d)\n", N, D, REPS);
    printf("%-44s %8.1f ns/datum\n", "streaming read of the rows (bandwidth)",
           bw * ns);
    printf("%-44s %8.1f ns/datum\n", "full gradient, plain C loop", cf * ns);
    printf("%-44s %8.1f ns/datum   ratio to C %.2f, to bandwidth %.2f\n",
           "full gradient, drift grad_full", df * ns, df / cf, df / bw);
    printf("%-44s %8.1f ns/datum   ratio to C %.2f, to bandwidth %.2f\n",
           "full gradient, drift grad_full, --threads 2", df2 * ns, df2 / cf,
           df2 / bw);
    printf("%-44s %8.1f ns/datum\n", "SGLD pass (batch 50), plain C loop",
           cs * ns);
    printf("%-44s %8.1f ns/datum   ratio to C %.2f\n",
           "SGLD pass (batch 50), drift sgld plugin", ds * ns, ds / cs);
    drift_run_chain_release(&x.c);
    drift_run_chain_release(&x2.c);
    drift_plan_free(x.plan);
    drift_plan_free(x2.plan);
    drift_problem_close(&prob);
    drift_registry_free(reg);
    free(data);
    return sink == 12345.678 ? 2 : 0;
}
