/* bench_lang.c: `make bench` for the model language.  In one process:
 *   - Covertype-sized logistic regression (N = 581,012, d = 54, synthetic,
 *     made here as in bench_logistic.c): a full-gradient pass and an SGLD
 *     pass at batch 50 through the .drift model against the same through
 *     the logistic C plugin, in ns per datum, with their ratios;
 *   - a 784-100-10 tanh network (the Bayesian neural net of Ding et al.)
 *     at batch 100: one minibatch gradient through the .drift model
 *     against the same products written as plain C loops, in GFLOP/s, to
 *     show the graph's products go through OpenBLAS's dgemm, and against
 *     those products alone as bare dgemm calls on the same shapes (the
 *     ceiling on one core).
 * Each figure is the best of several repetitions.  Not a test: nothing
 * here asserts on time. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "base/util.h"
#include "engine/lang/lang_model.h"
#include "engine/run/oracle.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"

#include "bench_plan.h"

enum { N = 581012, D = 54, COLS = D + 1, REPS = 5, BATCH = 50 };

static double sink;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench: %s: %s\n", what, msg);
    exit(1);
}

static char *write_model(const char *text)
{
    char tmpl[] = "/tmp/drift-bench-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("temporary file", "cannot write");
    close(fd);
    char *path = malloc(strlen(tmpl) + 8);
    sprintf(path, "%s.drift", tmpl);
    if (rename(tmpl, path))
        die(path, "cannot rename");
    return path;
}

static void open_lang(const char *text, const drift_data *view,
                      char *const *sets, size_t n_sets, drift_model *m)
{
    char *path = write_model(text);
    const drift_data *tables[] = {view};
    drift_lang_spec spec = {.path = path, .data_set = sets,
                            .n_data_set = n_sets, .diag = stderr,
                            .tables = tables, .n_tables = 1};
    drift_err e;
    if (drift_lang_open(&spec, m, &e))
        die(path, e.msg);
    unlink(path);
    free(path);
}

/* ---- logistic regression ----------------------------------------------------- */

static double *make_logistic(const char **names)
{
    static char buf[COLS][16];
    double *data = malloc((size_t)N * COLS * sizeof *data);
    if (!data)
        die("data", "out of memory");
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
    return data;
}

/* A model opened as drift sample opens it, a plan over it and its
 * chain, for grad_full and the SGLD pass. */
typedef struct ctx {
    drift_registry *reg;
    drift_problem prob;
    drift_plan *plan;
    drift_chain c;
    double theta[D];
} ctx;

/* The SGLD pass as drift sample runs it. */
static const drift_option sgld_options[] = {
    {"set", "h=1e-6"}, {"batch", "50"},  {"passes", "1"},
    {"warmup", "0"},   {"thin", "1"},    {"seed", "3"},
    {"chains", "1"},   {"init", "zero"}, {"quiet", NULL}};
enum { N_SGLD_OPTIONS = sizeof sgld_options / sizeof *sgld_options };

static double full_pass(ctx *x)
{
    double g[D];
    for (int j = 0; j < D; j++)
        x->theta[j] = 0.01 * j;
    double t = drift_now();
    drift_services_table.grad_full(&x->c, x->theta, g, NULL);
    sink += g[0];
    return drift_now() - t;
}

static double sgld_pass(ctx *x)
{
    return bench_plan_time(x->reg, &x->prob, "sgld", sgld_options,
                           N_SGLD_OPTIONS);
}

static double best(double (*f)(ctx *), ctx *x)
{
    double b = INFINITY;
    for (int k = 0; k < REPS; k++) {
        double t = f(x);
        if (t < b)
            b = t;
    }
    return b;
}

/* model (a plugin's name or a .drift file) over view, and its chain. */
static void setup(ctx *x, drift_registry *reg, const char *model,
                  const drift_data *view)
{
    memset(x, 0, sizeof *x);
    x->reg = reg;
    bench_problem_open(reg, model, view, NULL, NULL, &x->prob);
    x->plan = bench_plan(reg, &x->prob, "sgld", sgld_options,
                         N_SGLD_OPTIONS);
    bench_chain(x->plan, &x->c, x->theta);
}

static void release(ctx *x)
{
    drift_run_chain_release(&x->c);
    drift_plan_free(x->plan);
    drift_problem_close(&x->prob);
}

static void bench_logistic(drift_registry *reg)
{
    const char *names[COLS];
    double *data = make_logistic(names);
    drift_data view = {.struct_size = (uint32_t)sizeof(drift_data),
                       .n_rows = N, .n_cols = COLS, .col_names = names,
                       .values = data, .row_stride = COLS,
                       .source = "synthetic"};
    char *lang_path = write_model(
        "rows  { x : vector[D]  y : int }\n"
        "param { w : vector[D] }\n"
        "prior { w ~ normal(0, sqrt(10)) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w)) }\n");
    ctx cp, cl;
    setup(&cp, reg, "logistic", &view);
    setup(&cl, reg, lang_path, &view);
    unlink(lang_path);
    const drift_model *lang = &cl.prob.model;
    double ns = 1e9 / N;
    double fp = best(full_pass, &cp), fl = best(full_pass, &cl);
    double sp = best(sgld_pass, &cp), sl = best(sgld_pass, &cl);
    printf("logistic regression, N = %d, d = %d (best of %d)\n", N, D, REPS);
    printf("  %-46s %8.1f ns/datum\n", "full gradient, C plugin", fp * ns);
    printf("  %-46s %8.1f ns/datum   ratio %.2f (target <= 1.5)\n",
           "full gradient, .drift model", fl * ns, fl / fp);
    printf("  %-46s %8.1f ns/datum\n", "SGLD pass (batch 50), C plugin",
           sp * ns);
    printf("  %-46s %8.1f ns/datum   ratio %.2f (target <= 2)\n",
           "SGLD pass (batch 50), .drift model", sl * ns, sl / sp);
    printf("  the .drift model is %s\n",
           lang->flags & DRIFT_MODEL_GLM ? "in generalised linear form"
                                         : "NOT in generalised linear form");
    release(&cp);
    release(&cl);
    free(lang_path);
    free(data);
}

/* ---- a two-layer network ---------------------------------------------------------- */

enum { NN_N = 2000, NN_D = 784, NN_H = 100, NN_K = 10, NN_B = 100,
       NN_REPS = 20 };

/* The same minibatch gradient as plain loops: forward X W1', tanh, the
 * output layer, softmax, and back to dW1 = G' X (the dominant products). */
static double plain_nn(const double *X, const int *y, const double *W1,
                       const double *b1, const double *W2, const double *b2,
                       double *gW1)
{
    static double A[NN_B][NN_H], Z[NN_B][NN_K], GA[NN_B][NN_H];
    double t = drift_now();
    for (int r = 0; r < NN_B; r++)
        for (int h = 0; h < NN_H; h++) {
            double s = b1[h];
            for (int j = 0; j < NN_D; j++)
                s += W1[h * NN_D + j] * X[r * NN_D + j];
            A[r][h] = tanh(s);
        }
    for (int r = 0; r < NN_B; r++) {
        double mx = -INFINITY, tot = 0;
        for (int k = 0; k < NN_K; k++) {
            double s = b2[k];
            for (int h = 0; h < NN_H; h++)
                s += W2[k * NN_H + h] * A[r][h];
            Z[r][k] = s;
            mx = s > mx ? s : mx;
        }
        for (int k = 0; k < NN_K; k++)
            tot += (Z[r][k] = exp(Z[r][k] - mx));
        for (int k = 0; k < NN_K; k++)
            Z[r][k] = (k + 1 == y[r]) - Z[r][k] / tot;
        for (int h = 0; h < NN_H; h++) {
            double s = 0;
            for (int k = 0; k < NN_K; k++)
                s += Z[r][k] * W2[k * NN_H + h];
            GA[r][h] = s * (1 - A[r][h] * A[r][h]);
        }
    }
    memset(gW1, 0, sizeof(double) * NN_H * NN_D);
    for (int r = 0; r < NN_B; r++)
        for (int h = 0; h < NN_H; h++)
            for (int j = 0; j < NN_D; j++)
                gW1[h * NN_D + j] += GA[r][h] * X[r * NN_D + j];
    sink += gW1[7];
    return drift_now() - t;
}

static void bench_nn(void)
{
    size_t cols = NN_D + 1;
    double *data = malloc((size_t)NN_N * cols * sizeof *data);
    char **names = malloc(cols * sizeof *names);
    if (!data || !names)
        die("network data", "out of memory");
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    for (size_t i = 0; i < NN_N; i++) {
        data[i * cols] = (double)(1 + drift_rng_below(&r, NN_K));
        for (size_t j = 0; j < NN_D; j++)
            data[i * cols + 1 + j] = drift_rng_uniform(&r);
    }
    names[0] = strdup("y");
    for (size_t j = 0; j < NN_D; j++) {
        char b[16];
        snprintf(b, sizeof b, "x.%zu", j + 1);
        names[1 + j] = strdup(b);
    }
    drift_data view = {.struct_size = (uint32_t)sizeof(drift_data),
                       .n_rows = NN_N, .n_cols = cols,
                       .col_names = (const char *const *)names,
                       .values = data, .row_stride = cols,
                       .source = "synthetic"};
    char h[] = "H=100", k[] = "K=10";
    char *sets[] = {h, k};
    drift_model m;
    open_lang("rows  { x : vector[D]  y : int }\n"
              "param { W1 : matrix[H, D]  b1 : vector[H]\n"
              "        W2 : matrix[K, H]  b2 : vector[K] }\n"
              "prior { W1 ~ normal(0, 1)  b1 ~ normal(0, 1)\n"
              "        W2 ~ normal(0, 1)  b2 ~ normal(0, 1) }\n"
              "datum { y ~ categorical_logit(W2 * tanh(W1 * x + b1) + b2) }\n",
              &view, sets, 2, &m);
    size_t d = m.dim;
    double *theta = malloc(d * sizeof *theta), *g = malloc(d * sizeof *g);
    for (size_t j = 0; j < d; j++)
        theta[j] = 0.05 * drift_rng_normal(&r);
    void *ws = m.workspace_new(m.self, NN_B);
    size_t rows[NN_B];
    drift_err e;
    double bl = INFINITY, bp = INFINITY;
    for (int rep = 0; rep < NN_REPS; rep++) {
        for (int i = 0; i < NN_B; i++)
            rows[i] = drift_rng_below(&r, NN_N);
        drift_rows b = {rows, 0, NN_B};
        double ll, t = drift_now();
        if (m.log_lik(m.self, ws, theta, &b, NULL, &ll, g, NULL, &e))
            die("network", e.msg);
        t = drift_now() - t;
        if (t < bl)
            bl = t;
        sink += g[0];
    }
    /* The plain loops on a gathered batch with the same weights. */
    double *X = malloc(NN_B * NN_D * sizeof *X), *gW1 = malloc(d * sizeof *gW1);
    int y[NN_B];
    for (int i = 0; i < NN_B; i++) {
        memcpy(X + i * NN_D, data + rows[i] * cols + 1, NN_D * sizeof *X);
        y[i] = (int)data[rows[i] * cols];
    }
    const double *W1 = theta, *b1 = W1 + NN_H * NN_D, *W2 = b1 + NN_H,
                 *b2 = W2 + NN_K * NN_H;
    for (int rep = 0; rep < 5; rep++) {
        double t = plain_nn(X, y, W1, b1, W2, b2, gW1);
        if (t < bp)
            bp = t;
    }
    /* Multiply-adds of the two big products (forward and dW1), the rest
     * is small. */
    double flops = 2.0 * 2 * NN_B * NN_H * NN_D + 2.0 * 2 * NN_B * NN_K * NN_H;
    /* The ceiling: those four products as bare OpenBLAS dgemm calls on the
     * same shapes (X W1', A W2', G W2 and G' X), nothing else. */
    double *A = malloc(NN_B * NN_H * sizeof *A), *Z = malloc(NN_B * NN_K *
                                                             sizeof *Z);
    double *GA = malloc(NN_B * NN_H * sizeof *GA), bg = INFINITY;
    for (int j = 0; j < NN_B * NN_K; j++)
        Z[j] = 0.01 * (j % 7);
    for (int rep = 0; rep < NN_REPS; rep++) {
        double t = drift_now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, NN_B, NN_H, NN_D,
                    1.0, X, NN_D, W1, NN_D, 0.0, A, NN_H);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, NN_B, NN_K, NN_H,
                    1.0, A, NN_H, W2, NN_H, 0.0, Z, NN_K);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, NN_B, NN_H,
                    NN_K, 1.0, Z, NN_K, W2, NN_H, 0.0, GA, NN_H);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, NN_H, NN_D, NN_B,
                    1.0, GA, NN_H, X, NN_D, 0.0, gW1, NN_D);
        t = drift_now() - t;
        if (t < bg)
            bg = t;
        sink += gW1[3];
    }
    printf("\n784-100-10 tanh network, batch %d (best of %d)\n", NN_B, NN_REPS);
    printf("  %-46s %8.3f ms   %6.2f GFLOP/s\n",
           "minibatch gradient, plain C loops", bp * 1e3, flops / bp * 1e-9);
    printf("  %-46s %8.3f ms   %6.2f GFLOP/s   speed-up %.1fx\n",
           "minibatch gradient, .drift model (OpenBLAS)", bl * 1e3,
           flops / bl * 1e-9, bp / bl);
    printf("  %-46s %8.3f ms   %6.2f GFLOP/s   the model reaches %.0f%%\n",
           "the same four products, bare OpenBLAS dgemm", bg * 1e3,
           flops / bg * 1e-9, 100 * bg / bl);
    printf("  (log likelihood and its gradient in all %zu parameters; W1 * x "
           "over the batch is one dgemm of %dx%d by %dx%d, dW1 another)\n",
           d, NN_B, NN_D, NN_D, NN_H);
    free(A), free(Z), free(GA);
    m.workspace_free(m.self, ws);
    m.free(m.self);
    for (size_t j = 0; j < cols; j++)
        free(names[j]);
    free(names), free(data), free(theta), free(g), free(X), free(gW1);
}

int main(void)
{
    /* As drift_run does: BLAS on one thread (the network's products are
     * timed on one core, like everything else here). */
    openblas_set_num_threads(1);
    drift_registry *reg = drift_registry_new();
    drift_err e = {{0}};
    if (!reg || drift_registry_scan(reg, &e))
        die("plugins (run with make bench)", e.msg);
    bench_logistic(reg);
    bench_nn();
    drift_registry_free(reg);
    return sink == 12345.678 ? 2 : 0;
}
