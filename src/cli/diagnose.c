/* diagnose.c: `drift diagnose`, as CmdStan's diagnose method: at a random
 * point on the unconstrained scale it compares the model's gradient of
 * the log density, summed and per row, with central finite differences,
 * prints both per parameter with the error, and exits 1 when an error
 * exceeds the tolerance.  For .drift models and C model plugins alike.
 * Not for sampling. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "cli.h"
#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "engine/run/rng.h"

enum { D_MODEL, D_MODEL_SET, D_DATA, D_DATA_SET, D_SEED, D_EPSILON, D_ERROR,
       D_ROWS, D_HELP };

static const cli_opt diag_opts[] = {
    [D_MODEL] = {"--model", 1, "NAME|PATH  a C model plugin"},
    [D_MODEL_SET] = {"--model-set", 1, "K=V  set a model option (repeatable)"},
    [D_DATA] = {"--data", 1, "FILE  data: CSV rows or CmdStan JSON"},
    [D_DATA_SET] = {"--data-set", 1, "NAME=V  set a data scalar (repeatable)"},
    [D_SEED] = {"--seed", 1, "S  random seed of the point (default: clock)"},
    [D_EPSILON] = {"--epsilon", 1,
                   "E  finite-difference step (default 1e-6)"},
    [D_ERROR] = {"--error", 1,
                 "T  tolerance on |gradient - difference| / max(1, "
                 "|gradient|) (default 1e-6)"},
    [D_ROWS] = {"--rows", 1,
                "K  rows whose per-row gradients are checked (default "
                "100; 0: all)"},
    [D_HELP] = {"--help", 0, "show this help"},
};
#define N_DIAG_OPTS (sizeof diag_opts / sizeof diag_opts[0])

typedef struct diag_args {
    const char *model;
    const char *data[16];
    size_t n_data;
    char *model_set[64], *data_set[64];
    size_t n_model_set, n_data_set;
    uint64_t seed;
    int have_seed, help;
    double eps, tol;
    uint64_t rows;
} diag_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift diagnose: %s %s: %s\n", opt, v, want);
    return EXIT_USAGE;
}

static int on_opt(void *user, int idx, const char *v)
{
    diag_args *a = user;
    switch (idx) {
    case -2:
    case D_HELP: a->help = 1; return 0;
    case -1:
        if (a->model || !drift_lang_is_model_file(v)) {
            fprintf(stderr,
                    "drift diagnose: unexpected argument '%s' (a model is "
                    "a .drift file or --model NAME)\n",
                    v);
            return EXIT_USAGE;
        }
        a->model = v;
        return 0;
    case D_MODEL: a->model = v; return 0;
    case D_MODEL_SET:
    case D_DATA_SET: {
        char **arr = idx == D_MODEL_SET ? a->model_set : a->data_set;
        size_t *n = idx == D_MODEL_SET ? &a->n_model_set : &a->n_data_set;
        if (*n >= 64)
            return bad(diag_opts[idx].name, v, "given too many times");
        arr[(*n)++] = (char *)v;
        return 0;
    }
    case D_DATA:
        if (a->n_data + 1 >= sizeof a->data / sizeof a->data[0])
            return bad("--data", v, "too many data files");
        a->data[a->n_data++] = v;
        return 0;
    case D_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    case D_EPSILON:
        if (drift_parse_double(v, &a->eps) || !(a->eps > 0) || a->eps > 1)
            return bad("--epsilon", v, "expected a number in (0, 1]");
        return 0;
    case D_ERROR:
        if (drift_parse_double(v, &a->tol) || !(a->tol > 0))
            return bad("--error", v, "expected a positive number");
        return 0;
    case D_ROWS:
        if (drift_parse_u64(v, &a->rows))
            return bad("--rows", v, "expected a non-negative integer");
        return 0;
    }
    return 0;
}

typedef struct evaluator {
    const drift_model *m;
    void *ws;
    size_t cap;
} evaluator;

/* log p(theta | data) up to a constant: prior plus every row. */
static int log_density(evaluator *ev, const double *theta, double *lp,
                       double *grad, double *gtmp, drift_err *e)
{
    const drift_model *m = ev->m;
    int rc = m->log_prior(m->self, ev->ws, theta, lp, grad, e);
    if (rc)
        return rc;
    for (size_t first = 0; first < m->n_rows; first += ev->cap) {
        size_t n = m->n_rows - first < ev->cap ? m->n_rows - first : ev->cap;
        drift_rows b = {NULL, first, n};
        double ll;
        if ((rc = m->log_lik(m->self, ev->ws, theta, &b, NULL, &ll,
                             grad ? gtmp : NULL, NULL, e)))
            return rc;
        *lp += ll;
        if (grad)
            for (size_t j = 0; j < m->dim; j++)
                grad[j] += gtmp[j];
    }
    return DRIFT_OK;
}

static double rel_error(double g, double fd)
{
    return fabs(g - fd) / fmax(1.0, fabs(g));
}

static void name_of(const drift_model *m, size_t k, char *buf, size_t cap)
{
    if (m->theta_names)
        snprintf(buf, cap, "%s", m->theta_names[k]);
    else if (m->n_out == m->dim && m->out_names)
        snprintf(buf, cap, "%s", m->out_names[k]);
    else
        snprintf(buf, cap, "theta[%zu]", k + 1);
}

static int run(const diag_args *a, const drift_model *m)
{
    size_t d = m->dim, N = m->n_rows;
    evaluator ev = {m, NULL, N < 256 ? (N ? N : 1) : 256};
    drift_err e = {{0}};
    int status = 0;
    double *theta = calloc(d, sizeof *theta), *grad = calloc(d, sizeof *grad);
    double *gtmp = calloc(d, sizeof *gtmp), *tp = calloc(d, sizeof *tp);
    ev.ws = m->workspace_new(m->self, ev.cap);
    if (!theta || !grad || !gtmp || !tp || !ev.ws) {
        fprintf(stderr, "drift diagnose: out of memory\n");
        status = EXIT_RUN_FAILED;
        goto out;
    }
    drift_rng rng;
    drift_rng_seed(&rng, a->seed, 0);
    for (size_t k = 0; k < d; k++)
        theta[k] = -2 + 4 * drift_rng_uniform(&rng);
    double lp;
    if (log_density(&ev, theta, &lp, grad, gtmp, &e)) {
        fprintf(stderr, "drift diagnose: %s\n", e.msg);
        status = EXIT_RUN_FAILED;
        goto out;
    }
    printf("drift diagnose: seed %llu, point drawn uniformly from (-2, 2) "
           "on the unconstrained scale\n",
           (unsigned long long)a->seed);
    printf("log density %.10g; epsilon %g, tolerance %g (error = |model - "
           "finite difference| / max(1, |model|))\n\n",
           lp, a->eps, a->tol);
    printf("summed gradient of the log density:\n");
    printf("  %-20s %15s %18s %18s %12s\n", "param", "value", "model",
           "finite diff", "error");
    double worst = 0;
    for (size_t k = 0; k < d; k++) {
        double lp1, lp2;
        memcpy(tp, theta, d * sizeof *tp);
        tp[k] = theta[k] + a->eps;
        int rc = log_density(&ev, tp, &lp1, NULL, NULL, &e);
        tp[k] = theta[k] - a->eps;
        if (!rc)
            rc = log_density(&ev, tp, &lp2, NULL, NULL, &e);
        if (rc) {
            fprintf(stderr, "drift diagnose: %s\n", e.msg);
            status = EXIT_RUN_FAILED;
            goto out;
        }
        double fd = (lp1 - lp2) / (2 * a->eps), err = rel_error(grad[k], fd);
        if (err > worst)
            worst = err;
        char name[128];
        name_of(m, k, name, sizeof name);
        printf("  %-20s %15.8g %18.10g %18.10g %12.3g%s\n", name, theta[k],
               grad[k], fd, err, err > a->tol ? "  <- exceeds" : "");
    }
    if (worst > a->tol)
        status = EXIT_RUN_FAILED;

    if (N) {
        size_t R = a->rows == 0 || a->rows > N ? N : (size_t)a->rows;
        size_t chunk = R < ev.cap ? R : ev.cap;
        double *G = malloc(chunk * d * sizeof *G);
        double *lpp = malloc(chunk * sizeof *lpp), *lpm = malloc(chunk * sizeof *lpm);
        double *maxerr = calloc(d, sizeof *maxerr);
        double *at_g = calloc(d, sizeof *at_g), *at_fd = calloc(d, sizeof *at_fd);
        size_t *at_row = calloc(d, sizeof *at_row);
        size_t *rows = malloc(chunk * sizeof *rows);
        if (!G || !lpp || !lpm || !maxerr || !rows || !at_g || !at_fd ||
            !at_row) {
            fprintf(stderr, "drift diagnose: out of memory\n");
            free(G), free(lpp), free(lpm), free(maxerr), free(rows);
            free(at_g), free(at_fd), free(at_row);
            status = EXIT_RUN_FAILED;
            goto out;
        }
        int rc = 0;
        for (size_t done = 0; done < R && !rc; done += chunk) {
            size_t n = R - done < chunk ? R - done : chunk;
            /* Rows spread over the data set, the same ones each time. */
            for (size_t i = 0; i < n; i++)
                rows[i] = (size_t)(((done + i) * (N / R)) % N);
            drift_rows b = {rows, 0, n};
            if ((rc = m->log_lik(m->self, ev.ws, theta, &b, NULL, NULL, NULL,
                                 G, &e)))
                break;
            for (size_t k = 0; k < d && !rc; k++) {
                memcpy(tp, theta, d * sizeof *tp);
                tp[k] = theta[k] + a->eps;
                rc = m->log_lik(m->self, ev.ws, tp, &b, lpp, NULL, NULL, NULL,
                                &e);
                tp[k] = theta[k] - a->eps;
                if (!rc)
                    rc = m->log_lik(m->self, ev.ws, tp, &b, lpm, NULL, NULL,
                                    NULL, &e);
                for (size_t i = 0; !rc && i < n; i++) {
                    double fd = (lpp[i] - lpm[i]) / (2 * a->eps);
                    double err = rel_error(G[i * d + k], fd);
                    if (err > maxerr[k] || (done == 0 && i == 0)) {
                        maxerr[k] = err;
                        at_g[k] = G[i * d + k];
                        at_fd[k] = fd;
                        at_row[k] = rows[i];
                    }
                }
            }
        }
        if (rc) {
            fprintf(stderr, "drift diagnose: %s\n", e.msg);
            status = EXIT_RUN_FAILED;
        } else {
            printf("\nper-row gradients of the log likelihood terms (%zu of "
                   "%zu rows; each parameter at its worst row):\n",
                   R, N);
            printf("  %-20s %8s %18s %18s %12s\n", "param", "row", "model",
                   "finite diff", "error");
            double w = 0;
            for (size_t k = 0; k < d; k++) {
                char name[128];
                name_of(m, k, name, sizeof name);
                printf("  %-20s %8zu %18.10g %18.10g %12.3g%s\n", name,
                       at_row[k] + 1, at_g[k], at_fd[k], maxerr[k],
                       maxerr[k] > a->tol ? "  <- exceeds" : "");
                if (maxerr[k] > w)
                    w = maxerr[k];
            }
            if (w > worst)
                worst = w;
            if (w > a->tol)
                status = EXIT_RUN_FAILED;
        }
        free(G), free(lpp), free(lpm), free(maxerr), free(rows);
        free(at_g), free(at_fd), free(at_row);
    }
    if (!status)
        printf("\nall errors within %g (largest %.3g)\n", a->tol, worst);
    else if (worst > a->tol)
        printf("\nlargest error %.3g exceeds the tolerance %g\n", worst,
               a->tol);
out:
    if (ev.ws)
        m->workspace_free(m->self, ev.ws);
    free(theta), free(grad), free(gtmp), free(tp);
    return status;
}

int cmd_diagnose(int argc, char **argv)
{
    diag_args a;
    memset(&a, 0, sizeof a);
    a.eps = 1e-6;
    a.tol = 1e-6;
    a.rows = 100;
    int rc = cli_parse("diagnose", diag_opts, N_DIAG_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift diagnose MODEL.drift|--model NAME --data FILE "
                  "[--seed S] [--epsilon E] [--error T]",
                  "Compares the model's gradient (summed over the data and "
                  "per row) with central\nfinite differences at a random "
                  "point, as CmdStan's diagnose method does, and\nexits 1 "
                  "when an error exceeds the tolerance.",
                  diag_opts, N_DIAG_OPTS);
        return 0;
    }
    if (!a.model) {
        fprintf(stderr, "drift diagnose: no model given: give a model file "
                        "(model.drift) or use --model NAME\n");
        return EXIT_USAGE;
    }
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    a.data[a.n_data] = NULL;
    drift_err e = {{0}};
    drift_registry *reg = drift_registry_new();
    if (!reg) {
        fprintf(stderr, "drift diagnose: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    /* No scan: a model plugin is looked up by name (plugin.h). */
    drift_problem prob;
    drift_problem_spec spec = {a.model, a.data, a.model_set, a.n_model_set,
                               a.data_set, a.n_data_set, stderr, NULL, NULL,
                               0};
    if (drift_problem_open(&prob, reg, &spec, &e)) {
        fprintf(stderr, "drift diagnose: %s\n", e.msg);
        drift_problem_close(&prob);
        drift_registry_free(reg);
        return EXIT_USAGE;
    }
    rc = run(&a, &prob.model);
    drift_problem_close(&prob);
    drift_registry_free(reg);
    return rc;
}
