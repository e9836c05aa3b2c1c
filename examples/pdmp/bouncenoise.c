/* bouncenoise.c: a measuring instrument for the SBPS paper's Figure 1 (the
 * noise of the bounce rate), written as a drift sampler plugin so that the
 * gradients are drift's own.  It does not sample: it moves the point along
 * one straight line w(t) = w0 + v t (v a uniform unit direction from the
 * chain's stream, w0 the initial point) and, at each of the grid times
 * t_j = j dt, records the exact directional derivative G(t) = v . grad U
 * over all rows (the rate of a bounce is max(0, G)), the spread of the
 * per-row terms N v . grad U_i that a minibatch averages, and then `reps`
 * minibatch estimates v . grad U~ of G (--batch n rows of the access
 * stream each).  One iteration is one minibatch estimate; the columns:
 *   t__      the time along the line
 *   full__   G(t), all N rows and the prior
 *   batch__  this iteration's minibatch estimate of G(t)
 *   rowsd__  sd over the rows of N v . grad U_i(w(t)): with replacement
 *            the estimate's sd is rowsd / sqrt(n)
 * Build: cc -shared -fPIC -I../../include bouncenoise.c -o bouncenoise.so */
#include <math.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

typedef struct bn {
    size_t d, N, n;
    double dt;
    unsigned long reps;
    double *w0, *v, *g, *jv;
    size_t *all;
    double full, rowsd;
} bn;

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    bn *s = state;
    s->d = svc->dim(c);
    s->N = svc->n_rows(c);
    s->n = svc->batch(c);
    s->dt = hp[0];
    s->reps = (unsigned long)hp[1];
    if (s->N == 0)
        return svc->fail(c, "bouncenoise: the model has no data rows");
    s->w0 = svc->alloc(c, s->d * sizeof(double));
    s->v = svc->alloc(c, s->d * sizeof(double));
    s->g = svc->alloc(c, s->d * sizeof(double));
    s->jv = svc->alloc(c, s->N * sizeof(double));
    s->all = svc->alloc(c, s->N * sizeof(size_t));
    if (!s->w0 || !s->v || !s->g || !s->jv || !s->all)
        return DRIFT_ENOMEM;
    double nv = 0;
    for (size_t k = 0; k < s->d; k++) {
        s->w0[k] = theta[k];
        s->v[k] = svc->normal(c);
        nv += s->v[k] * s->v[k];
    }
    nv = sqrt(nv);
    for (size_t k = 0; k < s->d; k++)
        s->v[k] /= nv;
    for (size_t i = 0; i < s->N; i++)
        s->all[i] = i;
    return DRIFT_OK;
}

static double dot(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++)
        s += a[k] * b[k];
    return s;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    bn *s = state;
    uint64_t it = svc->iteration(c);
    unsigned long j = (unsigned long)(it / s->reps);
    double t = s->dt * (double)j;
    int rc;
    for (size_t k = 0; k < s->d; k++)
        theta[k] = s->w0[k] + s->v[k] * t;
    if (it % s->reps == 0) {
        if ((rc = svc->grad_full(c, theta, s->g, NULL)))
            return rc;
        s->full = dot(s->v, s->g, s->d);
        if ((rc = svc->jvp_rows(c, theta, s->v, s->all, s->N, s->jv)))
            return rc;
        double m = 0, m2 = 0;
        for (size_t i = 0; i < s->N; i++)
            m += s->jv[i];
        m /= (double)s->N;
        for (size_t i = 0; i < s->N; i++)
            m2 += (s->jv[i] - m) * (s->jv[i] - m);
        s->rowsd = (double)s->N * sqrt(m2 / (double)s->N);
    }
    if ((rc = svc->grad_batch(c, theta, s->n, s->g, NULL, NULL)))
        return rc;
    double diag[4] = {t, s->full, dot(s->v, s->g, s->d), s->rowsd};
    return svc->emit_draw(c, theta, NAN, diag);
}

static const drift_hparam hparams[] = {
    {"dt", DRIFT_HP_REAL, 0.01, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "spacing of the grid times along the line"},
    {"reps", DRIFT_HP_INT, 200, 1, 1e9, 0, NULL,
     "minibatch estimates at each grid time"},
};

static const char *const columns[] = {"t__", "full__", "batch__", "rowsd__"};

static const drift_sampler samplers[] = {{
    .name = "bouncenoise",
    .summary = "measures minibatch noise of the bounce rate along a line "
               "(SBPS paper, Figure 1)",
    .hparams = hparams,
    .n_hparams = 2,
    .columns = columns,
    .n_columns = 4,
    .state_size = sizeof(bn),
    .default_batch = 100,
    .init = init,
    .step = step,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    1,
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
