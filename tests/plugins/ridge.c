/* ridge.c: Bayesian ridge regression, a test model with a closed-form
 * Gaussian posterior:
 *     y_i ~ N(x_i . w, sigma^2),  w ~ N(0, tau^2 I_D),
 * rows y, x.1 ... x.D.  Posterior: w | y ~ N(m, A^-1) with
 *     A = X'X / sigma^2 + I / tau^2,  m = A^-1 X'y / sigma^2.
 * Option glm (default true) declares the generalised linear form
 * (grad log p(y_i | w) = r_i x_i, r_i = (y_i - x_i . w) / sigma^2); with
 * glm=false the same model is offered without it, so samplers keeping
 * per-datum state take their general path.  Both paths compute every
 * gradient entry as the same product r_i * x_ij, so they agree bit for bit.
 *
 * For tests (and the AGLD examples) only: not installed.  It also carries a
 * test-only trace of the rows each gradient evaluation touched
 * (ridge_trace_*; value-only calls, such as the engine's lp__ estimates,
 * are not traced), global and not thread-safe, which tests reach with
 * dlsym. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drift/model.h>

/* log(sqrt(2 pi)) */
#define LOG_SQRT_2PI 0.91893853320467274178

typedef struct ridge {
    size_t N, D;
    double *X;          /* N x D, owned */
    double *y;          /* N, owned */
    double sigma, tau;
    char **names;
} ridge;

typedef struct workspace {
    size_t cap;
    double *r;          /* per-row residual / sigma^2 */
} workspace;

/* ---- the test-only trace ---------------------------------------------- */

/* One model call: its rows were trace_rows[first .. first+n) (a list) or
 * the range range_first .. range_first+n-1 (range != 0). */
typedef struct trace_call {
    size_t first, n, range_first;
    int range;
} trace_call;

static struct {
    int on;
    size_t *rows;
    size_t n_rows, cap_rows;
    trace_call *calls;
    size_t n_calls, cap_calls;
} trace;

static void trace_record(const drift_rows *b)
{
    if (!trace.on)
        return;
    if (trace.n_calls == trace.cap_calls) {
        size_t nc = trace.cap_calls ? 2 * trace.cap_calls : 1024;
        trace_call *p = realloc(trace.calls, nc * sizeof *p);
        if (!p) {
            trace.on = 0;
            return;
        }
        trace.calls = p;
        trace.cap_calls = nc;
    }
    trace_call *tc = &trace.calls[trace.n_calls++];
    tc->n = b->n;
    tc->range = b->rows == NULL;
    tc->range_first = b->first;
    tc->first = trace.n_rows;
    if (!b->rows)
        return;
    if (trace.n_rows + b->n > trace.cap_rows) {
        size_t nc = trace.cap_rows ? 2 * trace.cap_rows : 4096;
        while (nc < trace.n_rows + b->n)
            nc *= 2;
        size_t *p = realloc(trace.rows, nc * sizeof *p);
        if (!p) {
            trace.on = 0;
            return;
        }
        trace.rows = p;
        trace.cap_rows = nc;
    }
    memcpy(trace.rows + trace.n_rows, b->rows, b->n * sizeof(size_t));
    trace.n_rows += b->n;
}

/* Starts (on != 0) or stops recording; starting clears what was kept. */
__attribute__((visibility("default"))) void ridge_trace_set(int on)
{
    if (on) {
        trace.n_rows = 0;
        trace.n_calls = 0;
    }
    trace.on = on;
}

/* Takes the calls recorded so far and stops recording: call k is
 * (*first)[k], (*n)[k] rows, from rows + (*first)[k] or the range starting
 * at (*range_first)[k] when (*is_range)[k].  Returns the number of calls;
 * the arrays are copies the caller frees, and the trace's own buffers are
 * released (so nothing is left when the plugin is unloaded). */
__attribute__((visibility("default"))) size_t
ridge_trace_get(size_t **first, size_t **n, size_t **range_first,
                int **is_range, size_t **rows)
{
    size_t k = trace.n_calls;
    *first = malloc((k + 1) * sizeof **first);
    *n = malloc((k + 1) * sizeof **n);
    *range_first = malloc((k + 1) * sizeof **range_first);
    *is_range = malloc((k + 1) * sizeof **is_range);
    *rows = malloc((trace.n_rows + 1) * sizeof **rows);
    if (!*first || !*n || !*range_first || !*is_range || !*rows)
        return 0;
    for (size_t j = 0; j < k; j++) {
        (*first)[j] = trace.calls[j].first;
        (*n)[j] = trace.calls[j].n;
        (*range_first)[j] = trace.calls[j].range_first;
        (*is_range)[j] = trace.calls[j].range;
    }
    if (trace.n_rows)
        memcpy(*rows, trace.rows, trace.n_rows * sizeof **rows);
    free(trace.rows);
    free(trace.calls);
    memset(&trace, 0, sizeof trace);
    return k;
}

/* ---- the model ---------------------------------------------------------- */

static void ridge_free(void *self)
{
    ridge *m = self;
    if (!m)
        return;
    for (size_t k = 0; m->names && k < m->D; k++)
        free(m->names[k]);
    free(m->names);
    free(m->X);
    free(m->y);
    free(m);
}

static void *ws_new(const void *self, size_t max_batch)
{
    (void)self;
    workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cap = max_batch ? max_batch : 1;
    w->r = malloc(w->cap * sizeof(double));
    if (!w->r) {
        free(w);
        return NULL;
    }
    return w;
}

static void ws_free(const void *self, void *ws)
{
    (void)self;
    workspace *w = ws;
    if (w)
        free(w->r);
    free(w);
}

static int log_prior(const void *self, void *ws, const double *w, double *lp,
                     double *grad, drift_err *e)
{
    (void)ws;
    (void)e;
    const ridge *m = self;
    double t2 = m->tau * m->tau, ss = 0;
    for (size_t k = 0; k < m->D; k++) {
        ss += w[k] * w[k];
        if (grad)
            grad[k] = -w[k] / t2;
    }
    *lp = -0.5 * ss / t2 - (double)m->D * (log(m->tau) + LOG_SQRT_2PI);
    return DRIFT_OK;
}

static int too_many(const workspace *ws, const drift_rows *b, drift_err *e)
{
    if (b->n <= ws->cap)
        return 0;
    snprintf(e->msg, sizeof e->msg,
             "ridge: %zu rows exceed the workspace of %zu", b->n, ws->cap);
    return 1;
}

/* Per row: r_i = (y_i - x_i . w) / sigma^2 and, when ll_rows is given,
 * log p(y_i | w); returns the sum of the log terms. */
static double forward(const ridge *m, workspace *ws, const double *w,
                      const drift_rows *b, double *ll_rows)
{
    double s2 = m->sigma * m->sigma, total = 0;
    double c = -log(m->sigma) - LOG_SQRT_2PI;
    for (size_t k = 0; k < b->n; k++) {
        size_t i = drift_rows_at(b, k);
        const double *x = m->X + i * m->D;
        double z = 0;
        for (size_t j = 0; j < m->D; j++)
            z += x[j] * w[j];
        double res = m->y[i] - z;
        double l = -0.5 * res * res / s2 + c;
        ws->r[k] = res / s2;
        if (ll_rows)
            ll_rows[k] = l;
        total += l;
    }
    return total;
}

static int log_lik(const void *self, void *wsp, const double *w,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e)
{
    const ridge *m = self;
    workspace *ws = wsp;
    if (too_many(ws, b, e))
        return DRIFT_EINTERNAL;
    if (grad_sum || grad_rows)
        trace_record(b);
    double total = forward(m, ws, w, b, ll_rows);
    if (ll_sum)
        *ll_sum = total;
    if (grad_sum)
        memset(grad_sum, 0, m->D * sizeof *grad_sum);
    for (size_t k = 0; k < b->n; k++) {
        const double *x = m->X + drift_rows_at(b, k) * m->D;
        for (size_t j = 0; j < m->D; j++) {
            double g = ws->r[k] * x[j];
            if (grad_sum)
                grad_sum[j] += g;
            if (grad_rows)
                grad_rows[k * m->D + j] = g;
        }
    }
    return DRIFT_OK;
}

static int glm_scalars(const void *self, void *wsp, const double *w,
                       const drift_rows *b, double *s, double *ll_rows,
                       drift_err *e)
{
    const ridge *m = self;
    workspace *ws = wsp;
    if (too_many(ws, b, e))
        return DRIFT_EINTERNAL;
    trace_record(b);
    forward(m, ws, w, b, ll_rows);
    memcpy(s, ws->r, b->n * sizeof *s);
    return DRIFT_OK;
}

static int glm_design(const void *self, const drift_rows *b, double *x,
                      drift_err *e)
{
    (void)e;
    const ridge *m = self;
    for (size_t k = 0; k < b->n; k++)
        memcpy(x + k * m->D, m->X + drift_rows_at(b, k) * m->D,
               m->D * sizeof(double));
    return DRIFT_OK;
}

static int predict(const void *self, void *wsp, const double *w,
                   const drift_rows *b, double *pred, double *y, drift_err *e)
{
    (void)wsp;
    (void)e;
    const ridge *m = self;
    for (size_t k = 0; k < b->n; k++) {
        size_t i = drift_rows_at(b, k);
        double z = 0;
        for (size_t j = 0; j < m->D; j++)
            z += m->X[i * m->D + j] * w[j];
        pred[k] = z;
        y[k] = m->y[i];
    }
    return DRIFT_OK;
}

static void constrain(const void *self, const double *w, double *out)
{
    memcpy(out, w, ((const ridge *)self)->D * sizeof *out);
}

static int unconstrain(const void *self, const double *out, double *w,
                       drift_err *e)
{
    (void)e;
    memcpy(w, out, ((const ridge *)self)->D * sizeof *w);
    return DRIFT_OK;
}

static int create(const drift_data *data, const double *opt, drift_model *out,
                  drift_err *e)
{
    long ycol = drift_data_column(data, "y");
    size_t D = 0;
    while (D < 4096) {
        char name[32];
        snprintf(name, sizeof name, "x.%zu", D + 1);
        if (drift_data_column(data, name) < 0)
            break;
        D++;
    }
    if (ycol < 0 || D == 0 || data->n_rows == 0) {
        snprintf(e->msg, sizeof e->msg,
                 "%s: model ridge needs rows with columns y and x.1 ... x.D",
                 data->source ? data->source : "(no data)");
        return DRIFT_EDATA;
    }
    ridge *m = calloc(1, sizeof *m);
    if (!m)
        return DRIFT_ENOMEM;
    m->N = data->n_rows;
    m->D = D;
    m->sigma = opt[0];
    m->tau = opt[1];
    m->X = malloc(m->N * D * sizeof(double));
    m->y = malloc(m->N * sizeof(double));
    m->names = calloc(D, sizeof *m->names);
    if (!m->X || !m->y || !m->names) {
        ridge_free(m);
        return DRIFT_ENOMEM;
    }
    for (size_t j = 0; j < D; j++) {
        char name[32];
        snprintf(name, sizeof name, "x.%zu", j + 1);
        size_t col = (size_t)drift_data_column(data, name);
        for (size_t i = 0; i < m->N; i++)
            m->X[i * D + j] = data->values[i * data->row_stride + col];
        snprintf(name, sizeof name, "w.%zu", j + 1);
        m->names[j] = strdup(name);
        if (!m->names[j]) {
            ridge_free(m);
            return DRIFT_ENOMEM;
        }
    }
    for (size_t i = 0; i < m->N; i++)
        m->y[i] = data->values[i * data->row_stride + (size_t)ycol];
    memset(out, 0, sizeof *out);
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = D;
    out->n_rows = m->N;
    out->n_out = D;
    out->out_names = (const char *const *)m->names;
    out->self = m;
    out->free = ridge_free;
    out->workspace_new = ws_new;
    out->workspace_free = ws_free;
    out->log_prior = log_prior;
    out->log_lik = log_lik;
    if (opt[2] != 0) {
        out->flags = DRIFT_MODEL_GLM;
        out->glm_scalars = glm_scalars;
        out->glm_design = glm_design;
    }
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
     "prior standard deviation of every weight"},
    {"glm", DRIFT_HP_BOOL, 1.0, 0, 1, 0, NULL,
     "declare the generalised linear form (false: the general path)"},
};

static const drift_model_plugin plugin = {
    DRIFT_MODEL_PLUGIN_HEADER, "ridge",
    "Bayesian ridge regression, closed-form posterior (tests only)", options,
    sizeof options / sizeof options[0], create,
};

DRIFT_EXPORT const drift_model_plugin *drift_model_entry(void)
{
    return &plugin;
}
