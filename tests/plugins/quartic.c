/* quartic.c: a test model that overflows: per-row terms
 * l_i = -(theta - y_i)^4 / 4, whose gradient (theta - y_i)^3 passes the
 * largest double once |theta| nears 1e102; an explicit sampler with too
 * large a step is thrown out there within a few iterations.  For the
 * divergence tests only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct quartic {
    size_t N;
    double *y;
} quartic;

static const char *const names[] = {"theta"};

static void q_free(void *self)
{
    quartic *m = self;
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
    (void)self;
    (void)ws;
    (void)e;
    (void)th;
    *lp = 0;
    if (grad)
        grad[0] = 0;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)e;
    const quartic *m = self;
    double tot = 0, g = 0;
    for (size_t k = 0; k < b->n; k++) {
        double r = th[0] - m->y[drift_rows_at(b, k)];
        double l = -0.25 * r * r * r * r;
        if (ll_rows)
            ll_rows[k] = l;
        if (grad_rows)
            grad_rows[k] = -r * r * r;
        tot += l;
        g += -r * r * r;
    }
    if (ll_sum)
        *ll_sum = tot;
    if (grad_sum)
        grad_sum[0] = g;
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
    (void)opt;
    long col = drift_data_column(data, "y");
    if (col < 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg, "%s: model quartic needs a column y",
                 data->source);
        return DRIFT_EDATA;
    }
    quartic *m = calloc(1, sizeof *m);
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
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = 1;
    out->n_rows = m->N;
    out->n_out = 1;
    out->out_names = names;
    out->self = m;
    out->free = q_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "quartic",
    "quartic potential that overflows (tests only)", NULL, 0, create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
