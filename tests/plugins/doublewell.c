/* doublewell.c: the data-free double-well target of Ding et al. (NIPS
 * 2014), section 5.1 figure:
 *     U(t) = (t+4)(t+1)(t-1)(t-3)/14 + 0.5
 *          = (t^4 + t^3 - 13 t^2 - t + 12)/14 + 0.5,
 * one parameter, no rows: the prior is the whole potential, so samplers run
 * it with --iter and grad_batch returns grad U (plus --grad-noise).  For
 * tests and examples only: not installed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

static const char *const names[] = {"theta"};

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
    double t = th[0];
    double U = (t + 4) * (t + 1) * (t - 1) * (t - 3) / 14 + 0.5;
    *lp = -U;
    if (grad)
        grad[0] = -(((4 * t + 3) * t - 26) * t - 1) / 14;
    return DRIFT_OK;
}

/* No rows: every batch is empty. */
static int log_lik(const void *self, void *ws, const double *th,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)self;
    (void)ws;
    (void)th;
    (void)b;
    (void)ll_rows;
    (void)grad_rows;
    (void)e;
    if (ll_sum)
        *ll_sum = 0;
    if (grad_sum)
        grad_sum[0] = 0;
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
    if (data->n_rows > 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model doublewell takes no data; run it without --data",
                 data->source);
        return DRIFT_EDATA;
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = 1;
    out->n_rows = 0;
    out->n_out = 1;
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
    DRIFT_MODEL_PLUGIN_HEADER, "doublewell",
    "data-free double well U = (t+4)(t+1)(t-1)(t-3)/14 + 0.5 (tests only)",
    NULL, 0, create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
