/* normmean.c: a test model with a closed-form posterior predictive, for
 * the held-out metrics: y_i ~ N(theta, sigma^2), theta ~ N(mu0, tau^2),
 * one column y, per-row terms fully normalised (log densities, constants
 * included), outcome REAL with predict() = E[y | theta] = theta.
 * Posterior theta | y ~ N(m, v), v = 1/(1/tau^2 + N/sigma^2),
 * m = v (mu0/tau^2 + sum y/sigma^2); predictive y* ~ N(m, sigma^2 + v).
 * For tests only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct normmean {
    size_t N;
    double *y;
    double sigma, tau, mu0;
} normmean;

static const char *const names[] = {"theta"};

static void nm_free(void *self)
{
    normmean *m = self;
    if (m)
        free(m->y);
    free(m);
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
    const normmean *m = self;
    double r = th[0] - m->mu0, t2 = m->tau * m->tau;
    *lp = -0.5 * r * r / t2 - log(m->tau) - 0.5 * log(2 * M_PI);
    if (grad)
        grad[0] = -r / t2;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)e;
    const normmean *m = self;
    double s2 = m->sigma * m->sigma, c = -log(m->sigma) - 0.5 * log(2 * M_PI);
    double tot = 0, g = 0;
    for (size_t k = 0; k < b->n; k++) {
        double r = m->y[drift_rows_at(b, k)] - th[0];
        double l = -0.5 * r * r / s2 + c;
        if (ll_rows)
            ll_rows[k] = l;
        if (grad_rows)
            grad_rows[k] = r / s2;
        tot += l;
        g += r / s2;
    }
    if (ll_sum)
        *ll_sum = tot;
    if (grad_sum)
        grad_sum[0] = g;
    return DRIFT_OK;
}

static int predict(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *pred, double *y, drift_err *e)
{
    (void)ws;
    (void)e;
    const normmean *m = self;
    for (size_t k = 0; k < b->n; k++) {
        pred[k] = th[0];
        y[k] = m->y[drift_rows_at(b, k)];
    }
    return DRIFT_OK;
}

static void constrain(const void *self, const double *th, double *out)
{
    (void)self;
    out[0] = th[0];
}

static int unconstrain(const void *self, const double *out, double *th,
                       drift_err *e)
{
    (void)self;
    (void)e;
    th[0] = out[0];
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    long col = drift_data_column(data, "y");
    if (col < 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg, "%s: model normmean needs a column y",
                 data->source);
        return DRIFT_EDATA;
    }
    normmean *m = calloc(1, sizeof *m);
    if (!m)
        return DRIFT_ENOMEM;
    m->N = data->n_rows;
    m->y = malloc(m->N * sizeof *m->y);
    if (!m->y) {
        free(m);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < m->N; i++)
        m->y[i] = data->values[i * data->row_stride + (size_t)col];
    m->sigma = opt[0];
    m->tau = opt[1];
    m->mu0 = opt[2];
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = 1;
    out->n_rows = m->N;
    out->n_out = 1;
    out->out_names = names;
    out->self = m;
    out->free = nm_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    out->outcome = DRIFT_OUTCOME_REAL;
    out->predict = predict;
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
    DRIFT_MODEL_PLUGIN_HEADER, "normmean",
    "normal mean with a closed-form predictive (tests only)", options, 3,
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
