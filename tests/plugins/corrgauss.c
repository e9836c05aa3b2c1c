/* corrgauss.c: a Gaussian test target with per-datum terms and a closed-form
 * posterior, correlated in 2-D:
 *     U(theta) = U_prior(theta) + sum_i 1/2 (theta - c_i)' P (theta - c_i),
 * rows c_i = (y.1[, y.2]), P the inverse of S = [s1^2, rho s1 s2; rho s1 s2,
 * s2^2] (just 1/s1^2 in 1-D), prior N(0, tau^2 I) or flat when tau = 0.
 * Posterior: precision Q = N P + I/tau^2, mean Q^-1 P sum_i c_i.
 * The langevin tests and the reproductions in examples/langevin use it (the
 * EWSG paper's 2-D target is rho = 0, s1 = s2 = 1, tau = 0; the SGNHT
 * paper's normal mean is 1-D, s1 = 1, tau = 0).  For tests only: not
 * installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct corrgauss {
    size_t N, D;
    double *c;          /* N x D centres, owned */
    double P[4];        /* D x D per-datum precision, row-major */
    double logdet_term; /* -1/2 log det(2 pi S) */
    double tau;         /* 0: flat prior */
    char *names[2];
} corrgauss;

static void cg_free(void *self)
{
    corrgauss *g = self;
    if (!g)
        return;
    free(g->names[0]);
    free(g->names[1]);
    free(g->c);
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
    const corrgauss *g = self;
    double s = 0, t2 = g->tau * g->tau;
    for (size_t k = 0; k < g->D; k++) {
        if (g->tau > 0)
            s += th[k] * th[k];
        if (grad)
            grad[k] = g->tau > 0 ? -th[k] / t2 : 0.0;
    }
    *lp = g->tau > 0 ? -0.5 * s / t2 - (double)g->D * log(g->tau) : 0.0;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)e;
    const corrgauss *g = self;
    size_t D = g->D;
    double total = 0;
    if (grad_sum)
        memset(grad_sum, 0, D * sizeof *grad_sum);
    for (size_t k = 0; k < b->n; k++) {
        const double *c = g->c + drift_rows_at(b, k) * D;
        double r[2], Pr[2] = {0, 0};
        for (size_t j = 0; j < D; j++)
            r[j] = th[j] - c[j];
        for (size_t j = 0; j < D; j++)
            for (size_t q = 0; q < D; q++)
                Pr[j] += g->P[j * D + q] * r[q];
        double quad = 0;
        for (size_t j = 0; j < D; j++) {
            quad += r[j] * Pr[j];
            if (grad_sum)
                grad_sum[j] -= Pr[j];
            if (grad_rows)
                grad_rows[k * D + j] = -Pr[j];
        }
        double l = -0.5 * quad + g->logdet_term;
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
    memcpy(out, th, ((const corrgauss *)self)->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *th,
                       drift_err *e)
{
    (void)e;
    memcpy(th, out, ((const corrgauss *)self)->D * sizeof *th);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    long col[2] = {drift_data_column(data, "y.1"),
                   drift_data_column(data, "y.2")};
    if (col[0] < 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model corrgauss needs rows with column y.1 (and y.2 "
                 "for the 2-D target)",
                 data->source);
        return DRIFT_EDATA;
    }
    corrgauss *g = calloc(1, sizeof *g);
    if (!g)
        return DRIFT_ENOMEM;
    g->N = data->n_rows;
    g->D = col[1] >= 0 ? 2 : 1;
    double rho = opt[0], s1 = opt[1], s2 = opt[2];
    g->tau = opt[3];
    if (g->D == 1) {
        g->P[0] = 1 / (s1 * s1);
        g->logdet_term = -0.5 * log(2 * M_PI * s1 * s1);
    } else {
        double det = s1 * s1 * s2 * s2 * (1 - rho * rho);
        g->P[0] = s2 * s2 / det;
        g->P[1] = g->P[2] = -rho * s1 * s2 / det;
        g->P[3] = s1 * s1 / det;
        g->logdet_term = -0.5 * log(4 * M_PI * M_PI * det);
    }
    g->c = malloc(g->N * g->D * sizeof(double));
    for (size_t j = 0; j < g->D; j++) {
        char name[32];
        snprintf(name, sizeof name, "theta.%zu", j + 1);
        g->names[j] = strdup(name);
    }
    if (!g->c || !g->names[0] || (g->D == 2 && !g->names[1])) {
        cg_free(g);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < g->N; i++)
        for (size_t j = 0; j < g->D; j++) {
            double v = data->values[i * data->row_stride + (size_t)col[j]];
            if (!isfinite(v)) {
                snprintf(e->msg, sizeof e->msg,
                         "%s: row %zu, column y.%zu: %g is not a finite "
                         "number",
                         data->source, i + 1, j + 1, v);
                cg_free(g);
                return DRIFT_EDATA;
            }
            g->c[i * g->D + j] = v;
        }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = g->D;
    out->n_rows = g->N;
    out->n_out = g->D;
    out->out_names = (const char *const *)g->names;
    out->self = g;
    out->free = cg_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_hparam options[] = {
    {"rho", DRIFT_HP_REAL, 0.6, -1, 1, DRIFT_HP_OPEN_LO | DRIFT_HP_OPEN_HI,
     NULL, "correlation of the per-datum Gaussian (2-D only)"},
    {"s1", DRIFT_HP_REAL, 1.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "per-datum standard deviation of theta.1"},
    {"s2", DRIFT_HP_REAL, 2.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "per-datum standard deviation of theta.2"},
    {"tau", DRIFT_HP_REAL, 10.0, 0, INFINITY, 0, NULL,
     "prior N(0, tau^2 I); 0: flat (improper) prior"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "corrgauss",
    "correlated Gaussian with per-datum centres (tests only)", options, 4,
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
