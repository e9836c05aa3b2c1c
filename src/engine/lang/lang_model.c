/* lang_model.c: the model ABI over a likelihood graph (see
 * lang_model.h): opening a .drift file with its data, the drift_model
 * functions (all evaluation is ad.c's), constraint transforms for output,
 * and the description drift check prints.  Not for evaluation kernels. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ad.h"
#include "base/msg.h"
#include "base/util.h"
#include "graph.h"
#include "lower.h"
#include "lang_model.h"
#include "langdata.h"
#include "parser/front.h"
#include "parser/parse.h"
#include "parser/stan.h"
#include "rand.h"
#include "transform.h"

typedef struct lang_model {
    drift_source *src;
    drift_program *prog;
    drift_langdata *ld;
    drift_graph *g;
    char **names;               /* n_out constrained values */
    size_t n_names;
    char **theta_names;         /* dim unconstrained coordinates */
    size_t n_theta_names;
    char **gen_names;           /* derived and generated values */
    size_t n_gen_names;
    int describe_only;
} lang_model;

int drift_lang_is_model_file(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return (n > 6 && !strcmp(name + n - 6, ".drift")) ||
           (n > 5 && !strcmp(name + n - 5, ".stan"));
}

static void lm_free(void *self)
{
    lang_model *m = self;
    if (!m)
        return;
    for (size_t k = 0; k < m->n_names; k++)
        drift_free(m->names[k]);
    drift_free(m->names);
    for (size_t k = 0; k < m->n_theta_names; k++)
        drift_free(m->theta_names[k]);
    drift_free(m->theta_names);
    for (size_t k = 0; k < m->n_gen_names; k++)
        drift_free(m->gen_names[k]);
    drift_free(m->gen_names);
    drift_graph_free(m->g);
    drift_langdata_free(m->ld);
    drift_program_free(m->prog);
    drift_source_free(m->src);
    drift_free(m);
}

static void *lm_ws_new(const void *self, size_t max_batch)
{
    const lang_model *m = self;
    return drift_ad_ws_new(m->g, max_batch);
}

static void lm_ws_free(const void *self, void *ws)
{
    (void)self;
    drift_ad_ws_free(ws);
}

static int lm_log_prior(const void *self, void *ws, const double *theta,
                        double *lp, double *grad, drift_err *e)
{
    const lang_model *m = self;
    return drift_ad_prior(m->g, ws, theta, lp, grad, e);
}

static int lm_log_jacobian(const void *self, void *ws, const double *theta,
                           double *lj, double *grad, drift_err *e)
{
    const lang_model *m = self;
    return drift_ad_log_jacobian(m->g, ws, theta, lj, grad, e);
}

static int lm_log_lik(const void *self, void *ws, const double *theta,
                      const drift_rows *b, double *ll_rows, double *ll_sum,
                      double *grad_sum, double *grad_rows, drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc
              : drift_ad_lik(m->g, ws, theta, b, ll_rows, ll_sum, grad_sum,
                             grad_rows, e);
}

static int lm_jvp(const void *self, void *ws, const double *theta,
                  const double *v, const drift_rows *b, double *out,
                  double *ll_rows, drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc : drift_ad_jvp(m->g, ws, theta, v, b, out, ll_rows, e);
}

static int lm_glm_scalars(const void *self, void *ws, const double *theta,
                          const drift_rows *b, double *s, double *ll_rows,
                          drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc : drift_ad_glm_scalars(m->g, ws, theta, b, s, ll_rows, e);
}

static int lm_glm_design(const void *self, const drift_rows *b, double *x,
                         drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc : drift_ad_glm_design(m->g, b, x, e);
}

static int lm_glm_design_sum(const void *self, const drift_rows *b,
                             const double *w, double *out, drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc : drift_ad_glm_design_sum(m->g, b, w, out, e);
}

static int lm_predict(const void *self, void *ws, const double *theta,
                      const drift_rows *b, double *pred, double *y,
                      drift_err *e)
{
    const lang_model *m = self;
    int rc = drift_langdata_check_rows(m->ld, b, e);
    return rc ? rc : drift_ad_predict(m->g, ws, theta, b, pred, y, e);
}

/* The dimensions of a parameter's value, outermost first (arrays, then
 * the vector's length or the matrix's rows and columns). */
static int param_dims(const drift_gparam *gp, size_t *dims)
{
    int nd = 0;
    for (int k = 0; k < gp->type.n_arr; k++)
        dims[nd++] = (size_t)gp->type.arr[k].n;
    if (gp->type.kind == DRIFT_T_VECTOR)
        dims[nd++] = (size_t)gp->type.dim[0].n;
    if (gp->type.kind == DRIFT_T_MATRIX) {
        dims[nd++] = (size_t)gp->type.dim[0].n;
        dims[nd++] = (size_t)gp->type.dim[1].n;
    }
    return nd;
}

/* Where element j of a value held row-major goes in the output, which
 * is column-major as Stan writes it (the first index runs fastest). */
static size_t out_pos(const size_t *dims, int nd, size_t j)
{
    if (nd < 2)
        return j;
    size_t pos = 0, stride = 1, idx[DRIFT_MAX_ARRAY + 2];
    for (int k = nd - 1; k >= 0; k--) {
        idx[k] = j % dims[k];
        j /= dims[k];
    }
    for (int k = 0; k < nd; k++) {
        pos += idx[k] * stride;
        stride *= dims[k];
    }
    return pos;
}

/* A structured parameter's values (row-major) from its free values;
 * work: drift_transform_work doubles. */
static void structured_values(const drift_gparam *gp, const double *u,
                              double *x, double *work)
{
    size_t fs = drift_transform_free_size(gp->con, gp->con_m, gp->con_n);
    size_t os = drift_transform_size(gp->con, gp->con_m, gp->con_n);
    for (size_t e = 0; e < gp->con_count; e++)
        drift_transform_forward(gp->con, gp->con_m, gp->con_n, u + e * fs,
                                x + e * os, NULL, NULL, NULL, work);
}

static size_t structured_scratch(const drift_gparam *gp)
{
    return gp->out_sz +
           drift_transform_work(gp->con, gp->con_m, gp->con_n);
}

static void lm_constrain(const void *self, const double *theta, double *out)
{
    const lang_model *m = self;
    const drift_graph *g = m->g;
    for (size_t p = 0; p < g->n_params; p++) {
        const drift_gparam *gp = &g->params[p];
        size_t dims[DRIFT_MAX_ARRAY + 2];
        int nd = param_dims(gp, dims);
        double *o = out + gp->out_off;
        if (gp->transform == DRIFT_G_XFORM) {
            double *x = drift_malloc_array(structured_scratch(gp),
                                           sizeof(double));
            if (!x) {
                for (size_t j = 0; j < gp->out_sz; j++)
                    o[j] = NAN;
                continue;
            }
            structured_values(gp, theta + gp->off, x, x + gp->out_sz);
            for (size_t j = 0; j < gp->out_sz; j++)
                o[out_pos(dims, nd, j)] = x[j];
            drift_free(x);
            continue;
        }
        for (size_t j = 0; j < gp->sz; j++) {
            double u = theta[gp->off + j], x;
            switch (gp->transform) {
            case DRIFT_G_LOWER: x = gp->lo + exp(u); break;
            case DRIFT_G_UPPER: x = gp->hi - exp(u); break;
            case DRIFT_G_BOUNDED: {
                double s = u >= 0 ? 1 / (1 + exp(-u)) : exp(u) / (1 + exp(u));
                x = gp->lo + (gp->hi - gp->lo) * s;
                break;
            }
            default: x = u; break;
            }
            o[out_pos(dims, nd, j)] = x;
        }
    }
}

static int lm_unconstrain(const void *self, const double *out, double *theta,
                          drift_err *e)
{
    const lang_model *m = self;
    const drift_graph *g = m->g;
    for (size_t p = 0; p < g->n_params; p++) {
        const drift_gparam *gp = &g->params[p];
        size_t dims[DRIFT_MAX_ARRAY + 2];
        int nd = param_dims(gp, dims);
        const double *o = out + gp->out_off;
        if (gp->transform == DRIFT_G_XFORM) {
            double *x = drift_malloc_array(structured_scratch(gp),
                                           sizeof(double));
            if (!x)
                return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
            for (size_t j = 0; j < gp->out_sz; j++)
                x[j] = o[out_pos(dims, nd, j)];
            size_t fs = drift_transform_free_size(gp->con, gp->con_m,
                                                  gp->con_n);
            size_t os = drift_transform_size(gp->con, gp->con_m, gp->con_n);
            for (size_t el = 0; el < gp->con_count; el++) {
                char why[200];
                if (drift_transform_inverse(gp->con, gp->con_m, gp->con_n,
                                            x + el * os,
                                            theta + gp->off + el * fs, why,
                                            sizeof why, x + gp->out_sz)) {
                    char which[64] = "";
                    if (gp->con_count > 1)
                        snprintf(which, sizeof which, " (element %zu)",
                                 el + 1);
                    drift_free(x);
                    return drift_err_set(e, DRIFT_EINVAL,
                                         "initial value of %s%s is not "
                                         "%s: %s",
                                         gp->name, which,
                                         drift_transform_what(gp->con), why);
                }
            }
            drift_free(x);
            continue;
        }
        for (size_t j = 0; j < gp->sz; j++) {
            size_t pos = out_pos(dims, nd, j);
            double x = o[pos], u;
            int ok = isfinite(x);
            switch (gp->transform) {
            case DRIFT_G_LOWER:
                ok = ok && x > gp->lo;
                u = log(x - gp->lo);
                break;
            case DRIFT_G_UPPER:
                ok = ok && x < gp->hi;
                u = log(gp->hi - x);
                break;
            case DRIFT_G_BOUNDED: {
                ok = ok && x > gp->lo && x < gp->hi;
                double s = (x - gp->lo) / (gp->hi - gp->lo);
                u = log(s) - log1p(-s);
                break;
            }
            default: u = x; break;
            }
            if (!ok)
                return drift_err_set(e, DRIFT_EINVAL,
                                     "initial value %s = %g lies outside "
                                     "its constraint (%g, %g)",
                                     m->names[gp->out_off + pos], x, gp->lo,
                                     gp->hi);
            theta[gp->off + j] = u;
        }
    }
    return DRIFT_OK;
}

/* The dimensions of a derived or generated value, outermost first: the
 * rows first for a per-row value (as Stan's array[N] ...). */
static int gout_dims(const drift_gout *o, size_t N, size_t *dims)
{
    int nd = 0;
    if (o->batched)
        dims[nd++] = N;
    for (int k = 0; k < o->type.n_arr; k++)
        dims[nd++] = (size_t)o->type.arr[k].n;
    if (o->type.kind == DRIFT_T_VECTOR)
        dims[nd++] = (size_t)o->type.dim[0].n;
    if (o->type.kind == DRIFT_T_MATRIX) {
        dims[nd++] = (size_t)o->type.dim[0].n;
        dims[nd++] = (size_t)o->type.dim[1].n;
    }
    return nd;
}

/* Copies node values val (row stride ld; rows rows of sz, the first
 * being row `first` of the data) of output o into out, column-major. */
static void gout_copy(const drift_gout *o, size_t N, const double *val,
                      size_t ld, size_t first, size_t rows, double *out)
{
    size_t dims[DRIFT_MAX_ARRAY + 3];
    int nd = gout_dims(o, N, dims);
    double *base = out + o->off;
    if (!o->batched) {
        for (size_t j = 0; j < o->sz; j++)
            base[out_pos(dims, nd, j)] = val[j];
        return;
    }
    /* Row i's element j (row-major within the row) sits at i + N * (its
     * column-major place among the row's elements). */
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < o->sz; j++)
            base[first + r + N * out_pos(dims + 1, nd - 1, j)] =
                val[r * ld + j];
}

/* The prints of derived (and, with all, generated), each one line on
 * stderr written at once: strings as they are, values with 17 significant
 * digits, a vector or matrix as [a, b, ...] (column-major). */
static void print_values(const drift_graph *g, drift_ad_ws *ws, int all)
{
    for (size_t k = 0; k < g->n_prints; k++) {
        const drift_gprint *p = &g->prints[k];
        if (!all && !p->derived)
            continue;
        char line[4096];
        size_t used = 0;
        for (size_t j = 0; j < p->n && used < sizeof line; j++) {
            int w;
            if (p->str[j]) {
                w = snprintf(line + used, sizeof line - used, "%s", p->str[j]);
                used += w > 0 ? (size_t)w : 0;
                continue;
            }
            size_t ld, sz = g->nodes[p->node[j]].sz;
            const double *v = drift_ad_value(ws, p->node[j], &ld);
            for (size_t q = 0; q < sz && used < sizeof line; q++) {
                w = snprintf(line + used, sizeof line - used, "%s%.17g%s",
                             sz > 1 && q == 0 ? "[" : "", v[q],
                             sz > 1 ? (q + 1 < sz ? ", " : "]") : "");
                used += w > 0 ? (size_t)w : 0;
            }
        }
        if (used >= sizeof line)
            used = sizeof line - 1;
        line[used] = '\n';
        fwrite(line, 1, used + 1, drift_msg_stream());
    }
}

static int lm_generate(const void *self, void *wsv, const double *theta,
                       uint64_t seed, int all, double *out, drift_err *e)
{
    const lang_model *m = self;
    const drift_graph *g = m->g;
    drift_ad_ws *ws = wsv;
    drift_rand rng;
    drift_rand_seed(&rng, seed);
    int rc = all ? drift_ad_eval(g, ws, theta, g->gen_shared_sched,
                                 g->n_gen_shared_sched, 0, 0, &rng, e)
                 : drift_ad_eval(g, ws, theta, g->deriv_sched,
                                 g->n_deriv_sched, 0, 0, &rng, e);
    if (rc)
        return rc;
    print_values(g, ws, all);
    int any_rows = 0;
    for (size_t k = 0; k < g->n_gouts; k++) {
        const drift_gout *o = &g->gouts[k];
        if (!all && !o->derived)
            continue;
        if (o->batched) {
            any_rows = 1;
            continue;
        }
        size_t ld;
        const double *v = drift_ad_value(ws, o->node, &ld);
        gout_copy(o, g->N, v, 0, 0, 1, out);
    }
    if (!all || !any_rows)
        return DRIFT_OK;
    size_t cap = drift_ad_ws_cap(ws);
    for (size_t first = 0; first < g->N; first += cap) {
        size_t cnt = g->N - first < cap ? g->N - first : cap;
        drift_rows b = {NULL, first, cnt};
        if ((rc = drift_langdata_check_rows(m->ld, &b, e)) ||
            (rc = drift_ad_eval(g, ws, theta, g->gen_rows_sched,
                                g->n_gen_rows_sched, first, cnt, &rng, e)))
            return rc;
        for (size_t k = 0; k < g->n_gouts; k++) {
            const drift_gout *o = &g->gouts[k];
            if (!o->batched)
                continue;
            size_t ld;
            const double *v = drift_ad_value(ws, o->node, &ld);
            gout_copy(o, g->N, v, ld, first, cnt, out);
        }
    }
    return DRIFT_OK;
}

/* name.i.j... for a multi-index idx (0-based) of nd dimensions. */
static char *index_name(const char *name, const size_t *idx, int nd)
{
    char buf[256];
    size_t used = (size_t)snprintf(buf, sizeof buf, "%s", name);
    for (int k = 0; k < nd && used < sizeof buf; k++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, ".%zu",
                                 idx[k] + 1);
    return drift_strdup(buf);
}

/* Stan's names: "w.1", "W.2.3", "mu", for each output value in output
 * (column-major) order; and names for the unconstrained coordinates
 * (those of the values for plain parameters, in theta's row-major
 * order; name.1 ... name.F for a structured type's F free values). */
static int make_names(lang_model *m)
{
    const drift_graph *g = m->g;
    m->names = drift_calloc(g->n_out + 1, sizeof *m->names);
    m->theta_names = drift_calloc(g->dim + 1, sizeof *m->theta_names);
    if (!m->names || !m->theta_names)
        return -1;
    for (size_t p = 0; p < g->n_params; p++) {
        const drift_gparam *gp = &g->params[p];
        size_t dims[DRIFT_MAX_ARRAY + 2], idx[DRIFT_MAX_ARRAY + 2];
        int nd = param_dims(gp, dims);
        for (size_t q = 0; q < gp->out_sz; q++) {
            size_t rest = q;
            for (int k = 0; k < nd; k++) {
                idx[k] = rest % dims[k];
                rest /= dims[k];
            }
            if (!(m->names[gp->out_off + q] = index_name(gp->name, idx, nd)))
                return -1;
            m->n_names = gp->out_off + q + 1;
        }
        for (size_t j = 0; j < gp->sz; j++) {
            size_t rest = j;
            if (gp->transform == DRIFT_G_XFORM) {
                idx[0] = j;
                m->theta_names[gp->off + j] = index_name(gp->name, idx, 1);
            } else {
                for (int k = nd - 1; k >= 0; k--) {
                    idx[k] = rest % dims[k];
                    rest /= dims[k];
                }
                m->theta_names[gp->off + j] = index_name(gp->name, idx, nd);
            }
            if (!m->theta_names[gp->off + j])
                return -1;
            m->n_theta_names = gp->off + j + 1;
        }
    }
    m->gen_names = drift_calloc(g->n_gen + 1, sizeof *m->gen_names);
    if (!m->gen_names)
        return -1;
    for (size_t k = 0; k < g->n_gouts; k++) {
        const drift_gout *o = &g->gouts[k];
        size_t dims[DRIFT_MAX_ARRAY + 3], idx[DRIFT_MAX_ARRAY + 3];
        int nd = gout_dims(o, g->N, dims);
        size_t total = o->sz * (o->batched ? g->N : 1);
        for (size_t q = 0; q < total; q++) {
            size_t rest = q;
            for (int d = 0; d < nd; d++) {
                idx[d] = rest % dims[d];
                rest /= dims[d];
            }
            if (!(m->gen_names[o->off + q] = index_name(o->name, idx, nd)))
                return -1;
            m->n_gen_names = o->off + q + 1;
        }
    }
    return 0;
}

int drift_lang_open(const drift_lang_spec *spec, drift_model *out,
                    drift_err *e)
{
    memset(out, 0, sizeof *out);
    drift_diag diag;
    drift_diag_init(&diag, spec->diag ? spec->diag : drift_msg_stream());
    lang_model *m = drift_calloc(1, sizeof *m);
    if (!m)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int code = DRIFT_EINVAL;
    /* A Stan program is lowered knowing the data's integers (its loops
     * over data sizes may be unrolled), so its data are read first. */
    int stan = drift_stan_is_file(spec->path);
    if (stan && drift_langdata_load_share(spec->data, spec->data_set,
                                          spec->n_data_set, spec->share,
                                          &m->ld, &diag)) {
        code = DRIFT_EDATA;
        goto fail;
    }
    drift_known_ints ki = {m->ld, drift_langdata_int};
    m->prog = drift_front_load_known(spec->path, stan ? &ki : NULL, &m->src,
                                     &diag, e);
    if (!m->prog)
        goto fail_summary;
    code = DRIFT_EDATA;
    size_t n_files = 0;
    for (const char *const *f = spec->data; f && *f; f++)
        n_files++;
    int placeholder = spec->describe_only && n_files == 0 &&
                      spec->n_data_set == 0 && spec->n_tables == 0;
    /* A model without data (a prior alone) has nothing to stand in for. */
    int needs_data = 0;
    for (size_t k = 0; k < m->prog->n_syms; k++)
        needs_data |= m->prog->syms[k]->kind == DRIFT_SYM_DATA ||
                      m->prog->syms[k]->kind == DRIFT_SYM_ROWS ||
                      m->prog->syms[k]->kind == DRIFT_SYM_SIZE;
    m->describe_only = placeholder && needs_data;
    if (!stan && drift_langdata_load_share(spec->data, spec->data_set,
                                           spec->n_data_set, spec->share,
                                           &m->ld, &diag))
        goto fail;
    for (size_t k = 0; k < spec->n_tables; k++)
        if (drift_langdata_add_table(m->ld, spec->tables[k], &diag))
            goto fail;
    if (drift_langdata_bind_sizes(m->prog, m->ld, placeholder, &diag))
        goto fail;
    if (drift_typecheck(m->prog, &diag)) {
        code = DRIFT_EINVAL;
        goto fail;
    }
    m->ld->check_mapped = spec->check_every_row;
    if (spec->reductions_from) {
        const lang_model *t = spec->reductions_from->self;
        m->ld->reductions = t->g->reductions;
        m->ld->n_reductions = t->g->n_reductions;
    }
    if (drift_langdata_bind_values(m->prog, m->ld, placeholder, &diag))
        goto fail;
    m->g = drift_lower_program(m->prog, m->ld, &diag);
    m->ld->reductions = NULL; /* borrowed for the build only */
    m->ld->n_reductions = 0;
    if (!m->g)
        goto fail;
    if (make_names(m)) {
        drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        lm_free(m);
        return DRIFT_ENOMEM;
    }
    const drift_graph *g = m->g;
    out->abi_version = DRIFT_MODEL_ABI_VERSION;
    out->struct_size = (uint32_t)sizeof *out;
    out->dim = g->dim;
    out->n_rows = g->datum_out >= 0 ? g->N : 0;
    out->n_out = g->n_out;
    out->out_names = (const char *const *)m->names;
    out->theta_names = (const char *const *)m->theta_names;
    if (g->n_gen) {
        out->n_gen = g->n_gen;
        out->n_gen_derived = g->n_gen_derived;
        out->gen_names = (const char *const *)m->gen_names;
        out->generate = lm_generate;
    }
    out->flags = g->glm ? DRIFT_MODEL_GLM : 0;
    out->self = m;
    out->free = lm_free;
    out->workspace_new = lm_ws_new;
    out->workspace_free = lm_ws_free;
    out->log_prior = lm_log_prior;
    out->log_jacobian = lm_log_jacobian;
    out->log_lik = lm_log_lik;
    out->jvp = g->datum_out >= 0 ? lm_jvp : NULL;
    if (g->glm) {
        out->glm_scalars = lm_glm_scalars;
        out->glm_design = lm_glm_design;
        out->glm_design_sum = lm_glm_design_sum;
    }
    out->constrain = lm_constrain;
    out->unconstrain = lm_unconstrain;
    out->outcome = g->outcome;
    out->n_classes = g->n_classes;
    out->predict = g->outcome ? lm_predict : NULL;
    return DRIFT_OK;
fail:
    drift_diag_summary(&diag, spec->path, code, e);
fail_summary:
    lm_free(m);
    return code;
}

int drift_lang_gen_per_row(const drift_model *m)
{
    const lang_model *lm = m->self;
    if (!lm || !lm->g)
        return 0;
    for (size_t k = 0; k < lm->g->n_gouts; k++)
        if (lm->g->gouts[k].batched)
            return 1;
    return 0;
}

const char *drift_lang_whole_why(const drift_model *m)
{
    const lang_model *lm = m->self;
    return lm && lm->prog ? lm->prog->whole_why : NULL;
}

const drift_data *drift_lang_rows_view(const drift_model *m)
{
    const lang_model *lm = m->self;
    return lm && lm->ld && lm->ld->primary ? &lm->ld->primary->view : NULL;
}

const drift_table *drift_lang_rows_table(const drift_model *m)
{
    const lang_model *lm = m->self;
    return lm && lm->ld ? lm->ld->primary : NULL;
}

static void print_type(FILE *f, const drift_sym *s, int sizes_known)
{
    drift_type t = s->type;
    if (!sizes_known) {
        /* Without data, show the sizes as written. */
        for (int k = 0; k < t.n_arr; k++)
            t.arr[k].n = -1;
        t.dim[0].n = t.dim[1].n = -1;
    }
    char buf[160];
    drift_type_format(&t, buf, sizeof buf);
    drift_constraint con = s->decl ? s->decl->type->con : DRIFT_CON_NONE;
    char *shape = con ? strstr(buf, t.kind == DRIFT_T_VECTOR ? "vector["
                                                              : "matrix[")
                      : NULL;
    if (!shape) {
        fprintf(f, "%s", buf);
        return;
    }
    /* simplex[K=3], cov_matrix[K=3]: the structured type's name, one
     * size for the square ones. */
    char *sizes = shape + 6;
    char *comma = strchr(sizes, ',');
    int square = t.kind == DRIFT_T_MATRIX && con != DRIFT_CON_CHOL_COV;
    fprintf(f, "%.*s%s", (int)(shape - buf), buf, drift_transform_name(con));
    if (square && comma)
        fprintf(f, "%.*s]", (int)(comma - sizes), sizes);
    else
        fprintf(f, "%s", sizes);
}

static void print_bounds(FILE *f, const drift_gparam *gp)
{
    switch (gp->transform) {
    case DRIFT_G_LOWER: fprintf(f, "<lower=%g>", gp->lo); break;
    case DRIFT_G_UPPER: fprintf(f, "<upper=%g>", gp->hi); break;
    case DRIFT_G_BOUNDED:
        fprintf(f, "<lower=%g, upper=%g>", gp->lo, gp->hi);
        break;
    default: break;
    }
}

void drift_lang_describe(const drift_model *mm, FILE *f)
{
    const lang_model *m = mm->self;
    const drift_graph *g = m->g;
    const drift_program *p = m->prog;
    int known = !m->describe_only;
    fprintf(f, "model %s: parsed and type-checked\n", m->src->name);
    fprintf(f, "parameters (%zu", g->n_params);
    if (known)
        fprintf(f, "; %zu unconstrained dimensions", g->dim);
    fprintf(f, "):\n");
    size_t k = 0;
    for (size_t s = 0; s < p->n_syms; s++) {
        const drift_sym *sym = p->syms[s];
        if (sym->kind != DRIFT_SYM_PARAM)
            continue;
        const drift_gparam *gp = &g->params[k++];
        fprintf(f, "  %-12s ", sym->name);
        print_type(f, sym, known);
        print_bounds(f, gp);
        if (gp->transform == DRIFT_G_XFORM && known)
            fprintf(f, "   (sampled as Stan's %s transform: %zu free "
                       "value%s)",
                    drift_transform_name(gp->con), gp->sz,
                    gp->sz == 1 ? "" : "s");
        else if (gp->transform == DRIFT_G_XFORM)
            fprintf(f, "   (sampled as Stan's %s transform)",
                    drift_transform_name(gp->con));
        else if (gp->transform)
            fprintf(f, "   (sampled as %s)",
                    gp->transform == DRIFT_G_LOWER   ? "log(x - lower)"
                    : gp->transform == DRIFT_G_UPPER ? "log(upper - x)"
                                                     : "logit of the scaled "
                                                       "value");
        fputc('\n', f);
    }
    int any = 0;
    for (size_t s = 0; s < p->n_syms; s++) {
        const drift_sym *sym = p->syms[s];
        if (sym->kind != DRIFT_SYM_DATA && sym->kind != DRIFT_SYM_ROWS &&
            sym->kind != DRIFT_SYM_SIZE)
            continue;
        if (!any)
            fprintf(f, "data:\n");
        any = 1;
        fprintf(f, "  %-12s ", sym->name);
        if (sym->kind == DRIFT_SYM_SIZE)
            fprintf(f, "int (a size, bound from the data)");
        else
            print_type(f, sym, known);
        const drift_sparse *sp = sym->kind == DRIFT_SYM_ROWS && known
                                     ? m->ld->sd[sym->id].rb.sp
                                     : NULL;
        if (sp)
            fprintf(f, "   (one per row, sparse: %llu non-zeros, %.1f per "
                       "row)",
                    (unsigned long long)sp->nnz,
                    g->N ? (double)sp->nnz / (double)g->N : 0.0);
        else if (sym->kind == DRIFT_SYM_ROWS)
            fprintf(f, "   (one per row)");
        if (known && (sym->kind == DRIFT_SYM_SIZE ||
                      (sym->type.kind == DRIFT_T_INT && !sym->type.n_arr &&
                       sym->kind == DRIFT_SYM_DATA)))
            fprintf(f, " = %ld", sym->value);
        fputc('\n', f);
    }
    if (!any && g->datum_out < 0) {
        fprintf(f, "rows: none (the model has no data)\n");
    } else if (known) {
        fprintf(f, "rows: N = %zu", g->N);
        for (size_t s = 0; s < m->ld->n_src; s++)
            fprintf(f, "%s%s", s ? ", " : " from ", m->ld->src[s].path);
        fputc('\n', f);
    } else {
        fprintf(f, "rows: no data given (sizes unknown; counted below with "
                   "every size set to 1)\n");
    }
    if (p->origin)
        fprintf(f, "%s\n", p->origin);
    size_t total, np, nd;
    drift_graph_counts(g, &total, &np, &nd);
    fprintf(f, "graph: %zu nodes (prior %zu, datum %zu evaluated per "
               "call)\n",
            total, np, nd);
    const drift_block *tb = p->block[DRIFT_BLOCK_TRANSFORMED];
    if (tb && tb->stmts) {
        fprintf(f, "transformed (not written): ");
        for (const drift_stmt *st = tb->stmts; st; st = st->next)
            fprintf(f, "%s%s%s", st == tb->stmts ? "" : ", ", st->name,
                    st->sym && st->sym->rows ? " (per row)" : "");
        fprintf(f, "\n");
    }
    for (int derived = 1; derived >= 0; derived--) {
        int any_out = 0;
        for (size_t k = 0; k < g->n_gouts; k++) {
            const drift_gout *o = &g->gouts[k];
            if (o->derived != derived)
                continue;
            fprintf(f, "%s%s%s", any_out ? ", " : derived ? "derived: "
                                                         : "generated: ",
                    o->name, o->batched ? " (per row)" : "");
            any_out = 1;
        }
        if (any_out)
            fprintf(f, "\n");
    }
    if (g->datum_out >= 0) {
        fprintf(f, "generalised linear form: %s\n",
                g->glm ? "yes (one number per datum for snapshots)" : "no");
        static const char *const kinds[] = {"none", "binary", "categorical",
                                            "real"};
        fprintf(f, "outcome for predictions: %s", kinds[g->outcome]);
        if (g->outcome == DRIFT_OUTCOME_CATEGORICAL)
            fprintf(f, " (%zu classes)", g->n_classes);
        fputc('\n', f);
    } else {
        fprintf(f, "no datum block: the prior is the whole target\n");
    }
}
