/* catmodel.c: a test model with a categorical outcome, for the held-out
 * accuracy: y_i in 1..K ~ categorical(softmax(beta)), beta.k ~ N(0, s^2),
 * K a model option (not read from the data, so training and test rows
 * give the same parameters).  For tests only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct catmodel {
    size_t N, K;
    double *y;
    double s;
    char **names;
} catmodel;

static void cm_free(void *self)
{
    catmodel *m = self;
    if (!m)
        return;
    for (size_t k = 0; m->names && k < m->K; k++)
        free(m->names[k]);
    free(m->names);
    free(m->y);
    free(m);
}

static void *ws_new(const void *self, size_t max_batch)
{
    (void)max_batch;
    return malloc(((const catmodel *)self)->K * sizeof(double));
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
    const catmodel *m = self;
    double s2 = m->s * m->s, t = 0;
    for (size_t k = 0; k < m->K; k++) {
        t += -0.5 * th[k] * th[k] / s2;
        if (grad)
            grad[k] = -th[k] / s2;
    }
    *lp = t;
    return DRIFT_OK;
}

/* log softmax of beta into ws. */
static void log_softmax(const catmodel *m, const double *th, double *out)
{
    double mx = th[0], z = 0;
    for (size_t k = 1; k < m->K; k++)
        mx = th[k] > mx ? th[k] : mx;
    for (size_t k = 0; k < m->K; k++)
        z += exp(th[k] - mx);
    for (size_t k = 0; k < m->K; k++)
        out[k] = th[k] - mx - log(z);
}

static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)e;
    const catmodel *m = self;
    double *ls = ws, tot = 0;
    log_softmax(m, th, ls);
    if (grad_sum)
        memset(grad_sum, 0, m->K * sizeof *grad_sum);
    for (size_t r = 0; r < b->n; r++) {
        size_t y = (size_t)m->y[drift_rows_at(b, r)] - 1;
        if (ll_rows)
            ll_rows[r] = ls[y];
        tot += ls[y];
        for (size_t k = 0; k < m->K; k++) {
            double g = (k == y) - exp(ls[k]);
            if (grad_sum)
                grad_sum[k] += g;
            if (grad_rows)
                grad_rows[r * m->K + k] = g;
        }
    }
    if (ll_sum)
        *ll_sum = tot;
    return DRIFT_OK;
}

static int predict(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *pred, double *y, drift_err *e)
{
    (void)e;
    const catmodel *m = self;
    double *ls = ws;
    log_softmax(m, th, ls);
    for (size_t r = 0; r < b->n; r++) {
        for (size_t k = 0; k < m->K; k++)
            pred[r * m->K + k] = exp(ls[k]);
        y[r] = m->y[drift_rows_at(b, r)];
    }
    return DRIFT_OK;
}

static void constrain(const void *self, const double *th, double *out)
{
    memcpy(out, th, ((const catmodel *)self)->K * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *th,
                       drift_err *e)
{
    (void)e;
    memcpy(th, out, ((const catmodel *)self)->K * sizeof *th);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    long col = drift_data_column(data, "y");
    size_t K = (size_t)opt[0];
    if (col < 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg, "%s: model catmodel needs a column y",
                 data->source);
        return DRIFT_EDATA;
    }
    catmodel *m = calloc(1, sizeof *m);
    if (!m)
        return DRIFT_ENOMEM;
    m->N = data->n_rows;
    m->K = K;
    m->s = opt[1];
    m->y = malloc(m->N * sizeof *m->y);
    m->names = calloc(K, sizeof *m->names);
    if (!m->y || !m->names) {
        cm_free(m);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < m->N; i++) {
        double v = data->values[i * data->row_stride + (size_t)col];
        if (v != floor(v) || v < 1 || v > (double)K) {
            snprintf(e->msg, sizeof e->msg,
                     "%s:%zu: error: y must be a class in 1..%zu",
                     data->source, data->first_line + i, K);
            cm_free(m);
            return DRIFT_EDATA;
        }
        m->y[i] = v;
    }
    for (size_t k = 0; k < K; k++) {
        char name[32];
        snprintf(name, sizeof name, "beta.%zu", k + 1);
        if (!(m->names[k] = strdup(name))) {
            cm_free(m);
            return DRIFT_ENOMEM;
        }
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = K;
    out->n_rows = m->N;
    out->n_out = K;
    out->out_names = (const char *const *)m->names;
    out->self = m;
    out->free = cm_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    out->outcome = DRIFT_OUTCOME_CATEGORICAL;
    out->n_classes = K;
    out->predict = predict;
    return DRIFT_OK;
}

static const drift_hparam options[] = {
    {"K", DRIFT_HP_INT, 3, 2, 100, 0, NULL, "number of classes"},
    {"s", DRIFT_HP_REAL, 2.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "prior standard deviation of the logits"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "catmodel",
    "categorical outcome, softmax of free logits (tests only)", options, 2,
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
