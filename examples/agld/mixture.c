/* mixture.c: the non-convex potential of Zhang et al. (AAAI 2020, 6.1) as
 * a C model plugin for examples/agld/sec61.sh:
 *     p(x) ~ exp(-sum_i f_i(x) / N),
 *     exp(-f_i(x)) = exp(-|x - a_i|^2 / 2) + exp(-|x + a_i|^2 / 2),
 * rows a.1 ... a.D, flat prior.  Per datum, log p_i = -f_i / N and
 *     grad log p_i = (a_i tanh(x . a_i) - x) / N.
 * Built by the script (cc -shared); not installed, not a template for
 * models with constraints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct mixture {
    size_t N, D;
    double *a;          /* N x D, owned */
    char **names;
} mixture;

static void mixture_free(void *self)
{
    mixture *m = self;
    if (!m)
        return;
    for (size_t k = 0; m->names && k < m->D; k++)
        free(m->names[k]);
    free(m->names);
    free(m->a);
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

static int log_prior(const void *self, void *ws, const double *x, double *lp,
                     double *grad, drift_err *e)
{
    (void)ws;
    (void)x;
    (void)e;
    const mixture *m = self;
    *lp = 0;
    if (grad)
        memset(grad, 0, m->D * sizeof *grad);
    return DRIFT_OK;
}

/* log(1 + exp(-2z)) without overflow. */
static double log1p_exp_m2(double z)
{
    return z > 0 ? log1p(exp(-2 * z)) : -2 * z + log1p(exp(2 * z));
}

static int log_lik(const void *self, void *ws, const double *x,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)e;
    const mixture *m = self;
    double invN = 1.0 / (double)m->N, total = 0;
    if (grad_sum)
        memset(grad_sum, 0, m->D * sizeof *grad_sum);
    for (size_t k = 0; k < b->n; k++) {
        const double *a = m->a + drift_rows_at(b, k) * m->D;
        double xa = 0, ss = 0;
        for (size_t j = 0; j < m->D; j++) {
            xa += x[j] * a[j];
            ss += (x[j] - a[j]) * (x[j] - a[j]);
        }
        /* log(e^{-|x-a|^2/2} + e^{-|x+a|^2/2}) = -|x-a|^2/2 +
         * log(1 + e^{-2 x.a}) */
        double l = invN * (-0.5 * ss + log1p_exp_m2(xa));
        if (ll_rows)
            ll_rows[k] = l;
        total += l;
        if (grad_sum || grad_rows) {
            double t = tanh(xa);
            for (size_t j = 0; j < m->D; j++) {
                double g = invN * (a[j] * t - x[j]);
                if (grad_sum)
                    grad_sum[j] += g;
                if (grad_rows)
                    grad_rows[k * m->D + j] = g;
            }
        }
    }
    if (ll_sum)
        *ll_sum = total;
    return DRIFT_OK;
}

static void constrain(const void *self, const double *x, double *out)
{
    memcpy(out, x, ((const mixture *)self)->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *x,
                       drift_err *e)
{
    (void)e;
    memcpy(x, out, ((const mixture *)self)->D * sizeof *x);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    (void)opt;
    size_t D = 0;
    long cols[1024];
    while (D < 1024) {
        char name[32];
        snprintf(name, sizeof name, "a.%zu", D + 1);
        if ((cols[D] = drift_data_column(data, name)) < 0)
            break;
        D++;
    }
    if (D == 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model mixture needs rows with columns a.1 ... a.D",
                 data->source ? data->source : "(no data)");
        return DRIFT_EDATA;
    }
    mixture *m = calloc(1, sizeof *m);
    if (!m)
        return DRIFT_ENOMEM;
    m->N = data->n_rows;
    m->D = D;
    m->a = malloc(m->N * D * sizeof(double));
    m->names = calloc(D, sizeof *m->names);
    if (!m->a || !m->names) {
        mixture_free(m);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < m->N; i++)
        for (size_t j = 0; j < D; j++)
            m->a[i * D + j] = data->values[i * data->row_stride + (size_t)cols[j]];
    for (size_t j = 0; j < D; j++) {
        char name[32];
        snprintf(name, sizeof name, "x.%zu", j + 1);
        if (!(m->names[j] = strdup(name))) {
            mixture_free(m);
            return DRIFT_ENOMEM;
        }
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = D;
    out->n_rows = m->N;
    out->n_out = D;
    out->out_names = (const char *const *)m->names;
    out->self = m;
    out->free = mixture_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "mixture",
    "Gaussian-mixture potential of Zhang et al. 2020, section 6.1", NULL, 0,
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
