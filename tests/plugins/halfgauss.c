/* halfgauss.c: a data-free target whose density is zero on half of the
 * space, written as a C model would be by someone who does not transform
 * the constraint away:
 *     U(x) = x1^2 / 2 + x2^2 / (2 * 10^2)  for x1 >= 0 and x2 >= 0,
 *     U(x) = +inf                            otherwise,
 * two independent half-normals with scales 1 and 10 (so a diagonal metric
 * matters).  Their moments are closed forms: E x = s sqrt(2/pi),
 * var x = s^2 (1 - 2/pi).  Samplers see U = +inf (DRIFT_ENONFINITE) at
 * every proposal outside the quadrant.  For tests only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

static const char *const names[] = {"x.1", "x.2"};
static const double scale[2] = {1.0, 10.0};

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

static int log_prior(const void *self, void *ws, const double *x,
                     double *lp, double *grad, drift_err *e)
{
    (void)self;
    (void)ws;
    (void)e;
    double U = 0;
    for (int k = 0; k < 2; k++) {
        double s2 = scale[k] * scale[k];
        /* Outside the support: log density -inf, its gradient 0. */
        U += x[k] >= 0 ? 0.5 * x[k] * x[k] / s2 : INFINITY;
        if (grad)
            grad[k] = -x[k] / s2;
    }
    *lp = -U;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *x,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)self;
    (void)ws;
    (void)x;
    (void)b;
    (void)ll_rows;
    (void)grad_rows;
    (void)e;
    if (ll_sum)
        *ll_sum = 0;
    if (grad_sum)
        grad_sum[0] = grad_sum[1] = 0;
    return DRIFT_OK;
}

static void constrain(const void *self, const double *x, double *out)
{
    (void)self;
    out[0] = x[0];
    out[1] = x[1];
}

static int unconstrain(const void *self, const double *out, double *x,
                       drift_err *e)
{
    (void)self;
    (void)e;
    x[0] = out[0];
    x[1] = out[1];
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    (void)opt;
    if (data->n_rows > 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model halfgauss takes no data; run it without --data",
                 data->source);
        return DRIFT_EDATA;
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = 2;
    out->n_out = 2;
    out->out_names = names;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "halfgauss",
    "two half-normals (scales 1, 10); U = +inf outside the quadrant (tests "
    "only)",
    NULL, 0, create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
