/* gauss.c: a conjugate test model with a closed-form posterior:
 *     y_i ~ N(theta, sigma^2 I_D),  theta ~ N(mu0, tau^2 I_D),
 * rows y.1 ... y.D.  Posterior: theta | y ~ N(m, v I) with
 *     v = 1 / (1/tau^2 + N/sigma^2),  m = v (mu0/tau^2 + sum_i y_i/sigma^2).
 * For tests only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct gauss {
    size_t N, D;
    double *y;          /* N x D, owned */
    double sigma, tau, mu0;
    char **names;
} gauss;

static void gauss_free(void *self)
{
    gauss *g = self;
    if (!g)
        return;
    for (size_t k = 0; g->names && k < g->D; k++)
        free(g->names[k]);
    free(g->names);
    free(g->y);
    free(g);
}

static void *ws_new(const void *self, size_t max_batch)
{
    (void)self;
    (void)max_batch;
    return malloc(1);
}

static void ws_free(const void *self, void *ws)
{
    (void)self;
    free(ws);
}

static int log_prior(const void *self, void *ws, const double *th,
                     double *lp, double *grad, drift_err *e)
{
    (void)ws;
    (void)e;
    const gauss *g = self;
    double t2 = g->tau * g->tau, s = 0;
    for (size_t k = 0; k < g->D; k++) {
        double r = th[k] - g->mu0;
        s += r * r;
        if (grad)
            grad[k] = -r / t2;
    }
    *lp = -0.5 * s / t2 - (double)g->D * log(g->tau);
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)e;
    const gauss *g = self;
    double s2 = g->sigma * g->sigma, total = 0;
    if (grad_sum)
        memset(grad_sum, 0, g->D * sizeof *grad_sum);
    for (size_t k = 0; k < b->n; k++) {
        const double *y = g->y + drift_rows_at(b, k) * g->D;
        double ss = 0;
        for (size_t j = 0; j < g->D; j++) {
            double r = y[j] - th[j];
            ss += r * r;
            if (grad_sum)
                grad_sum[j] += r / s2;
            if (grad_rows)
                grad_rows[k * g->D + j] = r / s2;
        }
        double l = -0.5 * ss / s2 - (double)g->D * log(g->sigma);
        if (ll_rows)
            ll_rows[k] = l;
        total += l;
    }
    if (ll_sum)
        *ll_sum = total;
    return DRIFT_OK;
}

static void constrain(const void *self, const double *th, double *out)
{
    memcpy(out, th, ((const gauss *)self)->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *th,
                       drift_err *e)
{
    (void)e;
    memcpy(th, out, ((const gauss *)self)->D * sizeof *th);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    size_t D = 0;
    long cols[64];
    for (; D < 64; D++) {
        char name[16];
        snprintf(name, sizeof name, "y.%zu", D + 1);
        cols[D] = drift_data_column(data, name);
        if (cols[D] < 0)
            break;
    }
    if (D == 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model gauss needs columns y.1 ... y.D", data->source);
        return DRIFT_EDATA;
    }
    gauss *g = calloc(1, sizeof *g);
    if (!g)
        return DRIFT_ENOMEM;
    g->N = data->n_rows;
    g->D = D;
    g->sigma = opt[0];
    g->tau = opt[1];
    g->mu0 = opt[2];
    g->y = malloc(g->N * D * sizeof(double));
    g->names = calloc(D, sizeof *g->names);
    if (!g->y || !g->names) {
        gauss_free(g);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < g->N; i++)
        for (size_t j = 0; j < D; j++)
            g->y[i * D + j] = data->values[i * data->row_stride + (size_t)cols[j]];
    for (size_t j = 0; j < D; j++) {
        char name[16];
        snprintf(name, sizeof name, "theta.%zu", j + 1);
        g->names[j] = strdup(name);
        if (!g->names[j]) {
            gauss_free(g);
            return DRIFT_ENOMEM;
        }
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = D;
    out->n_rows = g->N;
    out->n_out = D;
    out->out_names = (const char *const *)g->names;
    out->self = g;
    out->free = gauss_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_hparam options[] = {
    {"sigma", DRIFT_HP_REAL, 1.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "observation standard deviation"},
    {"tau", DRIFT_HP_REAL, 10.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "prior standard deviation"},
    {"mu0", DRIFT_HP_REAL, 0.0, -INFINITY, INFINITY, 0, NULL, "prior mean"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "gauss",
    "conjugate Gaussian mean (tests only)", options, 3, create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
