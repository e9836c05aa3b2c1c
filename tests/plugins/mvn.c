/* mvn.c: a data-free multivariate normal target for samplers' tests,
 *     x ~ N(mean 1, S R S),  R_ij = rho^|i-j|  (AR(1) correlation),
 *     S = diag(s_1..s_dim),  s_i = sd * ratio^((i-1)/(dim-1)),
 * so tests know every moment in closed form.  The precision is written
 * from the AR(1) closed form, R^-1 = tridiag(-rho, [1, 1+rho^2, ..., 1],
 * -rho) / (1 - rho^2), never by inverting numerically.  Tests only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

typedef struct mvn {
    size_t d;
    double rho, mean;
    double *s;          /* d scales */
    char **names;
} mvn;

static void mvn_free(void *self)
{
    mvn *m = self;
    if (!m)
        return;
    for (size_t k = 0; m->names && k < m->d; k++)
        free(m->names[k]);
    free(m->names);
    free(m->s);
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

/* (R^-1 z)_i for the AR(1) correlation, z = S^-1 (x - mean). */
static double rinv_row(const mvn *m, const double *z, size_t i)
{
    size_t d = m->d;
    double r = m->rho, diag = (i == 0 || i == d - 1) ? 1 : 1 + r * r;
    if (d == 1)
        diag = 1 - r * r; /* a single coordinate: R = 1 */
    double v = diag * z[i];
    if (i > 0)
        v -= r * z[i - 1];
    if (i + 1 < d)
        v -= r * z[i + 1];
    return v / (1 - r * r);
}

static int log_prior(const void *self, void *ws, const double *x, double *lp,
                     double *grad, drift_err *e)
{
    (void)ws;
    const mvn *m = self;
    double z[64], q = 0;
    if (m->d > 64) {
        snprintf(e->msg, sizeof e->msg, "mvn: dim > 64");
        return DRIFT_EINVAL;
    }
    for (size_t i = 0; i < m->d; i++)
        z[i] = (x[i] - m->mean) / m->s[i];
    for (size_t i = 0; i < m->d; i++) {
        double w = rinv_row(m, z, i);
        q += z[i] * w;
        if (grad)
            grad[i] = -w / m->s[i];
    }
    *lp = -0.5 * q;
    return DRIFT_OK;
}

static int log_lik(const void *self, void *ws, const double *x,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    (void)ws;
    (void)x;
    (void)ll_rows;
    (void)grad_rows;
    const mvn *m = self;
    if (b->n) {
        snprintf(e->msg, sizeof e->msg, "mvn: the model has no data rows");
        return DRIFT_EINVAL;
    }
    if (ll_sum)
        *ll_sum = 0;
    if (grad_sum)
        memset(grad_sum, 0, m->d * sizeof *grad_sum);
    return DRIFT_OK;
}

static void constrain(const void *self, const double *x, double *out)
{
    memcpy(out, x, ((const mvn *)self)->d * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *x,
                       drift_err *e)
{
    (void)e;
    memcpy(x, out, ((const mvn *)self)->d * sizeof *x);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    if (data->n_rows) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model mvn takes no data (omit --data)", data->source);
        return DRIFT_EDATA;
    }
    mvn *m = calloc(1, sizeof *m);
    if (!m)
        return DRIFT_ENOMEM;
    m->d = (size_t)opt[0];
    m->rho = opt[1];
    double sd = opt[2], ratio = opt[3];
    m->mean = opt[4];
    m->s = malloc(m->d * sizeof *m->s);
    m->names = calloc(m->d, sizeof *m->names);
    if (!m->s || !m->names) {
        mvn_free(m);
        return DRIFT_ENOMEM;
    }
    for (size_t i = 0; i < m->d; i++) {
        double f = m->d > 1 ? (double)i / (double)(m->d - 1) : 0;
        m->s[i] = sd * pow(ratio, f);
        char name[32];
        snprintf(name, sizeof name, "x.%zu", i + 1);
        m->names[i] = strdup(name);
        if (!m->names[i]) {
            mvn_free(m);
            return DRIFT_ENOMEM;
        }
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = m->d;
    out->n_rows = 0;
    out->n_out = m->d;
    out->out_names = (const char *const *)m->names;
    out->self = m;
    out->free = mvn_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    return DRIFT_OK;
}

static const drift_hparam options[] = {
    {"dim", DRIFT_HP_INT, 2, 1, 64, 0, NULL, "dimension"},
    {"rho", DRIFT_HP_REAL, 0.0, -1, 1, DRIFT_HP_OPEN_LO | DRIFT_HP_OPEN_HI,
     NULL, "AR(1) correlation of neighbouring coordinates"},
    {"sd", DRIFT_HP_REAL, 1.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "standard deviation of x.1"},
    {"ratio", DRIFT_HP_REAL, 1.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "sd of the last coordinate / sd of the first (geometric between)"},
    {"mean", DRIFT_HP_REAL, 0.0, -INFINITY, INFINITY, 0, NULL,
     "mean of every coordinate"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "mvn",
    "data-free multivariate normal with AR(1) correlation (tests only)",
    options, 5, create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
