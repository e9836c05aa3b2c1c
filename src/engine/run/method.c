/* method.c: the methods' table, their options read by type, and the rows
 * and header lines every method writes (method.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "logdensity.h"
#include "method.h"

extern const drift_method drift_method_optimize;
extern const drift_method drift_method_laplace;
extern const drift_method drift_method_log_prob;
extern const drift_method drift_method_pathfinder;
extern const drift_method drift_method_generate;
extern const drift_method drift_method_variational;

static const drift_method *const methods[] = {
    &drift_method_optimize, &drift_method_laplace, &drift_method_log_prob,
    &drift_method_pathfinder, &drift_method_generate,
    &drift_method_variational, NULL};

const drift_method *const *drift_method_all(void)
{
    return methods;
}

const drift_method *drift_method_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t k = 0; methods[k]; k++) {
        if (!strcmp(methods[k]->name, name))
            return methods[k];
        /* The command's spelling of CmdStan's log_prob. */
        if (!strcmp(name, "log-prob") &&
            !strcmp(methods[k]->name, "log_prob"))
            return methods[k];
    }
    return NULL;
}

const drift_mopt *drift_method_opt(const drift_method *mt, const char *name)
{
    for (size_t k = 0; name && k < mt->n_opts; k++)
        if (!strcmp(mt->opts[k].name, name))
            return &mt->opts[k];
    return NULL;
}

static int takes_value(const drift_mopt *o)
{
    return o->type != DRIFT_MOPT_SET && o->type != DRIFT_MOPT_CLEAR;
}

int drift_method_set(const drift_method *mt, void *args, const char *name,
                     const char *v, drift_err *e)
{
    const drift_mopt *o = drift_method_opt(mt, name);
    if (!o)
        return drift_err_set(e, DRIFT_EINVAL,
                             "unknown option --%s (drift %s --help lists "
                             "them)",
                             name ? name : "(none)", mt->name);
    if (takes_value(o) && !v)
        return drift_err_set(e, DRIFT_EINVAL, "option --%s needs a value",
                             o->name);
    if (!takes_value(o) && v && *v)
        return drift_err_set(e, DRIFT_EINVAL,
                             "option --%s takes no value (given '%s')",
                             o->name, v);
    char *field = (char *)args + o->offset;
    switch (o->type) {
    case DRIFT_MOPT_SET: *(int *)field = 1; return DRIFT_OK;
    case DRIFT_MOPT_CLEAR: *(int *)field = 0; return DRIFT_OK;
    case DRIFT_MOPT_COUNT: {
        uint64_t u, max = o->max ? o->max : 1000000000u;
        if (drift_parse_u64(v, &u) || u == 0 || u > max)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: expected a positive integer (at "
                                 "most %llu)",
                                 o->name, v, (unsigned long long)max);
        *(uint64_t *)field = u;
        return DRIFT_OK;
    }
    case DRIFT_MOPT_UCOUNT: {
        uint64_t u, max = o->max ? o->max : 1000000000u;
        if (drift_parse_u64(v, &u) || u == 0 || u > max)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: expected an integer from 1 to "
                                 "%llu",
                                 o->name, v, (unsigned long long)max);
        *(unsigned *)field = (unsigned)u;
        return DRIFT_OK;
    }
    case DRIFT_MOPT_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "true"))
            *(int *)field = 1;
        else if (!strcmp(v, "0") || !strcmp(v, "false"))
            *(int *)field = 0;
        else
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: expected 0 or 1 (false or true)",
                                 o->name, v);
        return DRIFT_OK;
    case DRIFT_MOPT_CUSTOM: return o->set(args, v, e);
    case DRIFT_MOPT_FILES: {
        drift_mfiles *fs = (drift_mfiles *)field;
        size_t max = o->max && o->max < DRIFT_MFILES_MAX ? o->max
                                                         : DRIFT_MFILES_MAX;
        if (!*v)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s: an empty file name", o->name);
        if (fs->n >= max)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: too many files (at most %zu)",
                                 o->name, v, max);
        fs->v[fs->n++] = v;
        return DRIFT_OK;
    }
    case DRIFT_MOPT_POSITIVE: {
        double x;
        if (drift_parse_double(v, &x) || !(x > 0) || !isfinite(x))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: expected a positive number",
                                 o->name, v);
        *(double *)field = x;
        return DRIFT_OK;
    }
    case DRIFT_MOPT_FILE:
        if (!*v)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s: an empty file name", o->name);
        *(const char **)field = v;
        return DRIFT_OK;
    case DRIFT_MOPT_CHOICE:
        for (size_t k = 0; o->choices[k]; k++)
            if (!strcmp(o->choices[k], v)) {
                *(const char **)field = o->choices[k];
                return DRIFT_OK;
            }
        {
            char list[256] = "";
            size_t used = 0;
            for (size_t k = 0; o->choices[k] && used < sizeof list; k++)
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%s", k ? ", " : "",
                                         o->choices[k]);
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--%s %s: expected one of %s", o->name, v,
                                 list);
        }
    }
    return drift_err_set(e, DRIFT_EINTERNAL, "option --%s: type %d", o->name,
                         (int)o->type);
}

size_t drift_method_inputs(const drift_method *mt, const void *args,
                           const char **in, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < mt->n_opts && n < max; k++) {
        const char *field = (const char *)args + mt->opts[k].offset;
        if (mt->opts[k].type == DRIFT_MOPT_FILE)
            in[n++] = *(const char *const *)field;
        if (mt->opts[k].type == DRIFT_MOPT_FILES)
            for (size_t j = 0; j < ((const drift_mfiles *)field)->n &&
                               n < max;
                 j++)
                in[n++] = ((const drift_mfiles *)field)->v[j];
    }
    if (mt->inputs && n < max)
        n += mt->inputs(args, in + n, max - n);
    return n;
}

int drift_method_column(char ***names, size_t *n, const char *name,
                        drift_err *e)
{
    char **grown = realloc(*names, (*n + 1) * sizeof *grown);
    if (!grown)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    *names = grown;
    if (!(grown[*n] = drift_strdup(name)))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    ++*n;
    return DRIFT_OK;
}

int drift_method_model_columns(const char *const *first, size_t n_first,
                               const drift_model *m, char ***names,
                               size_t *n, drift_err *e)
{
    int rc = DRIFT_OK;
    for (size_t j = 0; !rc && j < n_first; j++)
        rc = drift_method_column(names, n, first[j], e);
    for (size_t j = 0; !rc && j < m->n_out; j++)
        rc = drift_method_column(names, n, m->out_names[j], e);
    for (size_t j = 0; !rc && j < m->n_gen; j++)
        rc = drift_method_column(names, n, m->gen_names[j], e);
    return rc;
}

int drift_method_check_file(const drift_method_run *r, const char *path,
                            const char *what, drift_err *e)
{
    const char *in[DRIFT_MFILES_MAX + 64];
    size_t n = 0;
    for (size_t k = 0; k < r->n_inputs && n < DRIFT_MFILES_MAX + 63; k++)
        in[n++] = r->inputs[k];
    in[n++] = r->out;
    if (drift_writer_check(path, in, n, e)) {
        drift_err_prefix(e, "%s", what);
        return DRIFT_EINVAL;
    }
    return DRIFT_OK;
}

int drift_method_file_end(drift_writer *w, int failed, drift_err *e)
{
    int rc = failed ? DRIFT_EIO : drift_writer_failed(w, e);
    if (rc) {
        drift_writer_abort(w);
        return failed ? DRIFT_OK : rc;
    }
    return drift_writer_commit(w, e);
}

int drift_method_values(const drift_method_run *r, drift_logdensity *ld,
                        const double *theta, uint64_t seed, long long draw,
                        double *out, drift_err *e)
{
    const drift_model *m = r->m;
    m->constrain(m->self, theta, out);
    if (!m->n_gen || !m->generate(m->self, drift_logdensity_ws(ld), theta,
                                  seed, 1, out + m->n_out, e))
        return DRIFT_OK;
    if (draw > 0)
        drift_err_prefix(e, "generated quantities at draw %lld", draw);
    else if (draw == 0)
        drift_err_prefix(e, "generated quantities at the mode");
    else
        drift_err_prefix(e, "generated quantities");
    return DRIFT_ENUMERIC;
}

uint64_t drift_method_seed(uint64_t seed, uint64_t n)
{
    return seed ^ (0x9e3779b97f4a7c15ULL * n);
}

int drift_method_approx_init(drift_method_approx *c, size_t draws,
                             size_t n_out, drift_err *e)
{
    memset(c, 0, sizeof *c);
    /* k from the first 10^6 draws at most: enough for its estimate, and
     * 8 MB whatever --draws asks */
    c->cap = draws < 1000000 ? draws : 1000000;
    c->lr = drift_malloc_array(c->cap ? c->cap : 1, sizeof *c->lr);
    if (!c->lr)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc = drift_is_means_init(&c->means, n_out, e);
    if (rc) {
        drift_free(c->lr);
        c->lr = NULL;
    }
    return rc;
}

void drift_method_approx_add(drift_method_approx *c, double log_p,
                             double log_g, const double *values)
{
    double lr = log_p - log_g;
    if (c->n < c->cap)
        c->lr[c->n++] = lr;
    drift_is_means_add(&c->means, lr, values);
}

int drift_method_approx_report(drift_method_run *r, drift_method_approx *c,
                               const char *advice, double *khat)
{
    drift_err e = {{0}};
    *khat = INFINITY;
    int have_k = c->n >= 10 && !drift_psis_khat(c->lr, c->n, khat, &e);
    size_t j = 0;
    double shift = 0, noise = 0;
    int have_shift = drift_is_means_shift(&c->means, &j, &shift, &noise);
    const char *name = have_shift ? r->m->out_names[j] : "";
    if (r->f) {
        if (have_k)
            fprintf(r->f, "# Pareto k = %.4g (PSIS on log_p__ - log_g__ of "
                          "%zu draws; above %.1f the approximation is "
                          "unreliable)\n",
                    *khat, c->n, DRIFT_PSIS_K_WARN);
        if (have_shift)
            fprintf(r->f, "# importance-weighted mean shift = %.4g sd (%s; "
                          "weighted minus plain mean in weighted sds; its "
                          "noise %.2g; above %.1f the draws are off the "
                          "posterior's centre)\n",
                    shift, name, noise, DRIFT_IS_SHIFT_WARN);
    }
    int warned = 0;
    if (have_k && *khat > DRIFT_PSIS_K_WARN) {
        fprintf(r->diag, "%s: warning: Pareto k = %.2f > %.1f: the "
                         "approximation is far from the posterior and its "
                         "draws and means may be badly off; %s\n",
                r->who, *khat, DRIFT_PSIS_K_WARN, advice);
        warned = 1;
    } else if (have_k && have_shift && fabs(shift) > DRIFT_IS_SHIFT_WARN &&
               fabs(shift) > DRIFT_IS_SHIFT_NOISE * noise) {
        fprintf(r->diag, "%s: warning: weighting the draws by posterior / "
                         "approximation moves the mean of %s by %.2f "
                         "posterior sds (Pareto k %.2f): the approximation "
                         "sits off the posterior's centre, and its draws and "
                         "means are biased; %s\n",
                r->who, name, shift, *khat, advice);
        warned = 1;
    }
    return warned;
}

void drift_method_approx_free(drift_method_approx *c)
{
    drift_free(c->lr);
    drift_is_means_free(&c->means);
    c->lr = NULL;
}

void drift_method_header(drift_method_run *r)
{
    if (!r->f)
        return;
    const char *name = strrchr(r->model, '/');
    name = name ? name + 1 : r->model;
    size_t len = strcspn(name, ".");
    fprintf(r->f, "# drift_version = %s\n# model = %.*s\n# model_file = %s\n",
            PACKAGE_VERSION, (int)len, name, r->model);
}

void drift_method_header_io(drift_method_run *r)
{
    if (!r->f)
        return;
    fprintf(r->f, "# id = 1\n# data\n");
    for (size_t k = 0; k < r->n_data; k++)
        fprintf(r->f, "#   file = %s\n", r->data[k]);
}

void drift_method_header_names(drift_method_run *r)
{
    if (!r->f)
        return;
    for (size_t j = 0; j < r->n_columns; j++)
        fprintf(r->f, "%s%s", j ? "," : "", r->columns[j]);
    fputc('\n', r->f);
}

void drift_method_row(drift_method_run *r, const double *row)
{
    if (r->f) {
        for (size_t j = 0; j < r->n_columns; j++) {
            if (j)
                fputc(',', r->f);
            if (isnan(row[j]))
                fputs("nan", r->f);
            else
                fprintf(r->f, "%.17g", row[j]);
        }
        fputc('\n', r->f);
    }
    if (r->on_draw)
        r->on_draw(r->on_draw_user, 1, 0, row, r->n_columns);
    r->rows++;
}
