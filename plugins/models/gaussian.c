/* gaussian.c: the Gaussian with per-datum centres, written directly
 * against drift/model.h: rows c_i (columns c.1 ... c.D) and
 *
 *     U(theta) = sum_i 0.5 ||theta - c_i||^2 / sigma^2,   flat prior,
 *
 * so the posterior is N(mean of the c_i, sigma^2 / N I) in closed form: the
 * target of the samplers papers' 2-D Gaussian experiments, and a model
 * whose every moment a sampler's test can check without the model
 * language.  Each row's term is the normalised density of c_i ~ N(theta,
 * sigma^2 I).  Not a template for models with a prior or constraints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

DRIFT_PLUGIN_LICENSE("MIT");

/* log(sqrt(2 pi)) */
#define LOG_SQRT_2PI 0.91893853320467274178

typedef struct gaussian {
    size_t N, D;
    const double *C;    /* row i's centre at C + i * ldc (view or owned) */
    size_t ldc;
    double *owned;      /* non-NULL when the columns had to be gathered */
    double sigma;
    char **names;       /* "theta.1" ... */
} gaussian;

/* The evaluations need no scratch; the workspace only records its size so
 * that an oversized batch is reported rather than trusted. */
typedef struct workspace {
    size_t cap;
} workspace;

static void gaussian_free(void *self)
{
    gaussian *m = self;
    if (!m)
        return;
    for (size_t k = 0; m->names && k < m->D; k++)
        free(m->names[k]);
    free(m->names);
    free(m->owned);
    free(m);
}

static void *ws_new(const void *self, size_t max_batch)
{
    (void)self;
    workspace *w = malloc(sizeof *w);
    if (w)
        w->cap = max_batch ? max_batch : 1;
    return w;
}

static void ws_free(const void *self, void *ws)
{
    (void)self;
    free(ws);
}

static int too_many_rows(const workspace *ws, const drift_rows *b,
                         drift_err *e)
{
    snprintf(e->msg, sizeof e->msg,
             "gaussian: %zu rows exceed the workspace of %zu", b->n, ws->cap);
    return DRIFT_EINTERNAL;
}

/* Flat prior: log p(theta) = 0. */
static int log_prior(const void *self, void *ws, const double *theta,
                     double *lp, double *grad, drift_err *e)
{
    (void)ws;
    (void)theta;
    (void)e;
    const gaussian *m = self;
    *lp = 0;
    if (grad)
        memset(grad, 0, m->D * sizeof *grad);
    return DRIFT_OK;
}

static int log_lik(const void *self, void *wsp, const double *theta,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    const gaussian *m = self;
    if (b->n > ((const workspace *)wsp)->cap)
        return too_many_rows(wsp, b, e);
    size_t D = m->D;
    double inv_s2 = 1.0 / (m->sigma * m->sigma);
    double norm = -(double)D * (log(m->sigma) + LOG_SQRT_2PI), total = 0;
    if (grad_sum)
        memset(grad_sum, 0, D * sizeof *grad_sum);
    for (size_t k = 0; k < b->n; k++) {
        const double *c = m->C + drift_rows_at(b, k) * m->ldc;
        double ss = 0;
        for (size_t j = 0; j < D; j++) {
            double r = c[j] - theta[j];
            ss += r * r;
            if (grad_sum)
                grad_sum[j] += r * inv_s2;
            if (grad_rows)
                grad_rows[k * D + j] = r * inv_s2;
        }
        double l = -0.5 * ss * inv_s2 + norm;
        if (ll_rows)
            ll_rows[k] = l;
        total += l;
    }
    if (ll_sum)
        *ll_sum = total;
    return DRIFT_OK;
}

/* out[k] = v . grad l_i = v . (c_i - theta) / sigma^2. */
static int jvp(const void *self, void *wsp, const double *theta,
               const double *v, const drift_rows *b, double *out,
               double *ll_rows, drift_err *e)
{
    const gaussian *m = self;
    if (b->n > ((const workspace *)wsp)->cap)
        return too_many_rows(wsp, b, e);
    size_t D = m->D;
    double inv_s2 = 1.0 / (m->sigma * m->sigma);
    double norm = -(double)D * (log(m->sigma) + LOG_SQRT_2PI);
    for (size_t k = 0; k < b->n; k++) {
        const double *c = m->C + drift_rows_at(b, k) * m->ldc;
        double dv = 0, ss = 0;
        for (size_t j = 0; j < D; j++) {
            double r = c[j] - theta[j];
            dv += v[j] * r;
            ss += r * r;
        }
        out[k] = dv * inv_s2;
        if (ll_rows)
            ll_rows[k] = -0.5 * ss * inv_s2 + norm;
    }
    return DRIFT_OK;
}

static void constrain(const void *self, const double *theta, double *out)
{
    memcpy(out, theta, ((const gaussian *)self)->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *theta,
                       drift_err *e)
{
    (void)e;
    memcpy(theta, out, ((const gaussian *)self)->D * sizeof *theta);
    return DRIFT_OK;
}

/* Column of name, looked for first at guess (c.k usually follows
 * c.(k-1)), so that wide data do not cost a scan per column. */
static long column_near(const drift_data *data, const char *name, long guess)
{
    if (guess >= 0 && (size_t)guess < data->n_cols &&
        !strcmp(data->col_names[guess], name))
        return guess;
    return drift_data_column(data, name);
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    /* The centre columns c.1 ... c.D, contiguous or not. */
    size_t D = 0;
    long first = -1;
    int contiguous = 1;
    for (;;) {
        char name[32];
        snprintf(name, sizeof name, "c.%zu", D + 1);
        long col = column_near(data, name, D ? first + (long)D : -1);
        if (col < 0)
            break;
        if (D == 0)
            first = col;
        else if (col != first + (long)D)
            contiguous = 0;
        D++;
    }
    if (D == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model gaussian needs centre columns c.1 ... c.D; the "
                 "header has none named c.1",
                 data->source);
        return DRIFT_EDATA;
    }
    /* A c.K beyond the run c.1 ... c.D is a gap, not a smaller model. */
    for (size_t k = 0; k < data->n_cols; k++) {
        const char *nm = data->col_names[k];
        if (strncmp(nm, "c.", 2) != 0)
            continue;
        char *end;
        unsigned long idx = strtoul(nm + 2, &end, 10);
        if (*end == '\0' && idx > D) {
            snprintf(e->msg, sizeof e->msg,
                     "%s: model gaussian: column '%s' follows c.1 ... c.%zu "
                     "without c.%zu; centre columns must be numbered "
                     "without gaps",
                     data->source, nm, D, D + 1);
            return DRIFT_EDATA;
        }
    }
    if (data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model gaussian needs at least one row", data->source);
        return DRIFT_EDATA;
    }
    gaussian *m = calloc(1, sizeof *m);
    if (!m)
        goto oom;
    m->N = data->n_rows;
    m->D = D;
    m->sigma = opt[0];
    if (contiguous) {
        m->C = data->values + first;
        m->ldc = data->row_stride;
    } else {
        m->owned = malloc(m->N * D * sizeof(double));
        if (!m->owned)
            goto oom;
        long col = -1;
        for (size_t j = 0; j < D; j++) {
            char name[32];
            snprintf(name, sizeof name, "c.%zu", j + 1);
            col = column_near(data, name, col + 1);
            for (size_t i = 0; i < m->N; i++)
                m->owned[i * D + j] =
                    data->values[i * data->row_stride + (size_t)col];
        }
        m->C = m->owned;
        m->ldc = D;
    }
    m->names = calloc(D, sizeof *m->names);
    if (!m->names)
        goto oom;
    for (size_t j = 0; j < D; j++) {
        char name[32];
        snprintf(name, sizeof name, "theta.%zu", j + 1);
        if (!(m->names[j] = strdup(name)))
            goto oom;
    }
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = D;
    out->n_rows = m->N;
    out->n_out = D;
    out->out_names = (const char *const *)m->names;
    out->self = m;
    out->free = gaussian_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    out->jvp = jvp;
    out->constrain = constrain;
    out->unconstrain = unconstrain;
    out->outcome = DRIFT_OUTCOME_NONE;
    return DRIFT_OK;
oom:
    gaussian_free(m);
    snprintf(e->msg, sizeof e->msg, "gaussian: out of memory for %s",
             data->source);
    return DRIFT_ENOMEM;
}

static const drift_hparam options[] = {
    {"sigma", DRIFT_HP_REAL, 1.0, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "scale of each centre: c_i ~ N(theta, sigma^2 I), flat prior"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER,
    "gaussian",
    "Gaussian with per-datum centres: U = sum_i |theta - c_i|^2 / (2 "
    "sigma^2); posterior N(mean c, sigma^2/N I)",
    options,
    sizeof options / sizeof options[0],
    create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
