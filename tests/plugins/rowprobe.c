/* rowprobe.c: a sampler that reports, in its columns, which rows each
 * step visited and what every row service said of them, for
 * tests/engine/run/test_mpi.sh: a run across MPI ranks must visit the
 * same rows in the same order as one process and get the same values.  Each step
 * takes a minibatch through grad_batch (rows__: a hash of its row
 * indices, in order, below 10^9 so that the file holds it exactly), asks
 * grad_rows, grad_sum, jvp_rows and, for a model in GLM form,
 * glm_scalars, glm_design and glm_design_sum about those rows, and moves theta as SGLD
 * does.  U_full's value every 50th step.  For tests only: not
 * installed. */
#include <math.h>
#include <string.h>

#include <drift/sampler.h>

typedef struct probe {
    size_t d, n;
    double h;
    size_t *rows;
    double *grad, *grads, *urows, *gsum, *v, *jv, *s, *x, *xs;
    double last_full;
} probe;

static int pr_init(void *state, const drift_services *svc, drift_chain *c,
                   const double *hp, double *theta)
{
    (void)theta;
    probe *p = state;
    p->d = svc->dim(c);
    p->n = svc->batch(c);
    p->h = hp[0];
    p->rows = svc->alloc(c, p->n * sizeof *p->rows);
    p->grad = svc->alloc(c, p->d * sizeof(double));
    p->grads = svc->alloc(c, p->n * p->d * sizeof(double));
    p->urows = svc->alloc(c, p->n * sizeof(double));
    p->gsum = svc->alloc(c, p->d * sizeof(double));
    p->v = svc->alloc(c, p->d * sizeof(double));
    p->jv = svc->alloc(c, p->n * sizeof(double));
    p->s = svc->alloc(c, p->n * sizeof(double));
    p->x = svc->alloc(c, p->n * p->d * sizeof(double));
    p->xs = svc->alloc(c, p->d * sizeof(double));
    if (!p->rows || !p->grad || !p->grads || !p->urows || !p->gsum ||
        !p->v || !p->jv || !p->s || !p->x || !p->xs)
        return DRIFT_ENOMEM;
    for (size_t k = 0; k < p->d; k++)
        p->v[k] = 1.0 / (double)(k + 1);
    p->last_full = NAN;
    return DRIFT_OK;
}

static int pr_step(void *state, const drift_services *svc, drift_chain *c,
                   double *theta)
{
    probe *p = state;
    double U = 0, us = 0;
    int rc = svc->grad_batch(c, theta, p->n, p->grad, &U, p->rows);
    if (rc)
        return rc;
    uint64_t hash = 0;
    for (size_t k = 0; k < p->n; k++)
        hash = (hash * 1000003u + p->rows[k] + 1) % 999999937u;
    if ((rc = svc->grad_rows(c, theta, p->rows, p->n, p->grads, p->urows)) ||
        (rc = svc->grad_sum(c, theta, p->rows, p->n, p->gsum, &us)) ||
        (rc = svc->jvp_rows(c, theta, p->v, p->rows, p->n, p->jv)))
        return rc;
    double diag[8] = {(double)hash, 0, 0, 0, 0, us, p->last_full, 0};
    for (size_t k = 0; k < p->n; k++) {
        diag[1] += p->urows[k];
        diag[2] += p->grads[k * p->d + k % p->d];
        diag[3] += p->jv[k] * (double)(k + 1);
    }
    if (svc->is_glm(c)) {
        if ((rc = svc->glm_scalars(c, theta, p->rows, p->n, p->s)) ||
            (rc = svc->glm_design(c, p->rows, p->n, p->x)))
            return rc;
        for (size_t k = 0; k < p->n; k++)
            diag[4] += p->s[k] * p->x[k * p->d + (k + 1) % p->d];
        /* The rows' design weighted by their scalars, added to v: v plus
         * the summed log-likelihood gradient, read through v's weights. */
        memcpy(p->xs, p->v, p->d * sizeof(double));
        if ((rc = svc->glm_design_sum(c, p->rows, p->n, p->s, p->xs)))
            return rc;
        for (size_t k = 0; k < p->d; k++)
            diag[7] += p->xs[k] * p->v[k];
    }
    if (svc->iteration(c) % 50 == 0 &&
        (rc = svc->U_full(c, theta, &p->last_full)))
        return rc;
    double sd = sqrt(2 * p->h);
    for (size_t k = 0; k < p->d; k++)
        theta[k] += -p->h * p->grad[k] + sd * svc->normal(c);
    return svc->emit_draw(c, theta, -U, diag);
}

static const drift_hparam pr_hp[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "step size"},
};

static const char *const pr_columns[] = {"rows__", "urows__", "growdiag__",
                                         "jvp__",  "glm__",   "gsum__",
                                         "ufull__", "xsum__"};

static const drift_sampler samplers[] = {{
    .name = "rowprobe",
    .summary = "reports the rows each step visits and what the row "
               "services say of them (tests)",
    .hparams = pr_hp,
    .n_hparams = 1,
    .columns = pr_columns,
    .n_columns = 8,
    .state_size = sizeof(probe),
    .default_batch = 16,
    .init = pr_init,
    .step = pr_step,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER, 1, samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
