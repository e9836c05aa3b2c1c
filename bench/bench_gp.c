/* bench_gp.c: `make bench` for dense linear algebra in the model language.
 * A Gaussian-process regression (exponentiated-quadratic kernel plus
 * noise, y ~ multi_normal_cholesky(0, cholesky_decompose(K))) at
 * N = 200, 400, 600, 1000 points, in one process:
 *   - one log density with its gradient through the .drift model (the
 *     kernel matrix, its Cholesky factor, the triangular solve, the log
 *     determinant and all their reverse passes), in ms;
 *   - against LAPACK's dpotrf on the same N x N matrix alone, the floor
 *     any gradient of this model sits above (it factors the matrix once);
 *     the ratio says how many factorisations one gradient costs.
 * Each figure is the best of several repetitions (5; `bench_gp N REPS`
 * changes it, for a profiler to see many), wall and CPU time
 * (the CPU column is what a shared machine inflates least).  Not a test:
 * nothing here asserts on time. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "base/lapack.h"
#include "base/util.h"
#include "engine/lang/lang_model.h"

static const char *const gp_model =
    "data  { x : array[N] real  y : vector[N] }\n"
    "param { rho : real<lower=0>  alpha : real<lower=0>  "
    "sigma : real<lower=0> }\n"
    "prior {\n"
    "  rho ~ gamma(25, 4)\n"
    "  alpha ~ normal(0, 2)\n"
    "  sigma ~ normal(0, 1)\n"
    "  y ~ multi_normal_cholesky(rep_vector(0, N),\n"
    "        cholesky_decompose(add_diag(gp_exp_quad_cov(x, alpha, rho), "
    "sigma)))\n"
    "}\n";

static double sink;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench: %s: %s\n", what, msg);
    exit(1);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *write_file(const char *suffix, const char *text)
{
    char tmpl[] = "/tmp/drift-bench-gp-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("temporary file", "cannot write");
    close(fd);
    char *path = malloc(strlen(tmpl) + strlen(suffix) + 1);
    sprintf(path, "%s%s", tmpl, suffix);
    if (rename(tmpl, path))
        die(path, "cannot rename");
    return path;
}

/* The data: x on [0, 10] (a fixed stride with a deterministic wobble),
 * y = sin(x) plus a fixed pattern standing in for noise. */
static char *gp_data(size_t n, double *x)
{
    size_t cap = 64 + 64 * n, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len, "{\"N\": %zu, \"x\": [", n);
    for (size_t i = 0; i < n; i++) {
        x[i] = 10.0 * ((double)i + 0.3 * sin(7.0 * (double)i)) / (double)n;
        len += (size_t)snprintf(s + len, cap - len, "%s%.17g", i ? "," : "",
                                x[i]);
    }
    len += (size_t)snprintf(s + len, cap - len, "], \"y\": [");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%.17g", i ? "," : "",
                                sin(x[i]) + 0.3 * sin(13.0 * (double)i));
    snprintf(s + len, cap - len, "]}\n");
    return s;
}

static int reps = 5;

static void bench_n(size_t n)
{
    double *x = malloc(n * sizeof *x);
    char *json = gp_data(n, x);
    char *data = write_file(".json", json);
    char *model = write_file(".drift", gp_model);
    const char *files[] = {data, NULL};
    drift_lang_spec spec = {.path = model, .data = files, .diag = stderr};
    drift_model m;
    drift_err e;
    if (drift_lang_open(&spec, &m, &e))
        die(model, e.msg);
    void *ws = m.workspace_new(m.self, 1);
    if (!ws)
        die("workspace", "out of memory");
    /* rho = 2, alpha = 1, sigma = 0.3: log of each. */
    double theta[3] = {log(2.0), 0.0, log(0.3)}, g[3], lp;
    double best_w = INFINITY, best_c = INFINITY;
    for (int r = 0; r < reps; r++) {
        double w0 = drift_now(), c0 = cpu_now();
        if (m.log_prior(m.self, ws, theta, &lp, g, &e))
            die("gradient", e.msg);
        double w = drift_now() - w0, c = cpu_now() - c0;
        sink += g[0];
        if (w < best_w)
            best_w = w;
        if (c < best_c)
            best_c = c;
    }
    /* The floor: dpotrf on the same covariance matrix. */
    double *a = malloc(n * n * sizeof *a), *k = malloc(n * n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double dx = x[i] - x[j];
            k[i * n + j] = exp(-dx * dx / 8.0) + (i == j ? 0.3 : 0.0);
        }
    double ref_w = INFINITY, ref_c = INFINITY;
    for (int r = 0; r < reps; r++) {
        memcpy(a, k, n * n * sizeof *a);
        blasint nn = (blasint)n, info;
        double w0 = drift_now(), c0 = cpu_now();
        dpotrf_("U", &nn, a, &nn, &info);
        double w = drift_now() - w0, c = cpu_now() - c0;
        if (info)
            die("dpotrf", "the matrix is not positive definite");
        sink += a[0];
        if (w < ref_w)
            ref_w = w;
        if (c < ref_c)
            ref_c = c;
    }
    printf("  N = %4zu  gradient %8.2f ms (cpu %8.2f)   dpotrf %6.2f ms "
           "(cpu %6.2f)   ratio %6.1f (cpu %6.1f)\n",
           n, 1e3 * best_w, 1e3 * best_c, 1e3 * ref_w, 1e3 * ref_c,
           best_w / ref_w, best_c / ref_c);
    m.workspace_free(m.self, ws);
    if (m.free)
        m.free(m.self);
    unlink(model);
    unlink(data);
    free(model);
    free(data);
    free(json);
    free(a);
    free(k);
    free(x);
}

int main(int argc, char **argv)
{
    size_t sizes[] = {200, 400, 600, 1000};
    size_t n_sizes = sizeof sizes / sizeof sizes[0];
    if (argc > 1) {
        sizes[0] = (size_t)strtoul(argv[1], NULL, 10);
        n_sizes = 1;
    }
    if (argc > 2 && atoi(argv[2]) > 0)
        reps = atoi(argv[2]);
    printf("Gaussian-process regression: one log density and gradient "
           "through the .drift model\nagainst LAPACK dpotrf on the same "
           "matrix (best of %d; OpenBLAS threads: %d)\n",
           reps, openblas_get_num_threads());
    for (size_t i = 0; i < n_sizes; i++)
        bench_n(sizes[i]);
    return sink == 12345.678;
}
