/* problem.c: from a model name and data files to a checked drift_model.
 * Not for running it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "engine/lang/lang_model.h"
#include "hparam.h"
#include "problem.h"

int drift_model_check(drift_model *m, const char *who, drift_err *e)
{
    if (m->abi_version != DRIFT_MODEL_ABI_VERSION)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model reports ABI version %u, this drift "
                             "loads version %u",
                             who, m->abi_version, DRIFT_MODEL_ABI_VERSION);
    if (m->struct_size < DRIFT_MODEL_MIN_SIZE)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model struct is %u bytes, expected at "
                             "least %zu",
                             who, m->struct_size,
                             (size_t)DRIFT_MODEL_MIN_SIZE);
    /* A model built against an older header knows nothing of the fields
     * appended since: they read as absent, whatever the bytes hold. */
    if (m->struct_size < sizeof(drift_model))
        memset((char *)m + m->struct_size, 0,
               sizeof(drift_model) - m->struct_size);
    if (m->dim == 0 && !m->n_gen)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model has no parameters and nothing "
                             "to generate",
                             who);
    if (!m->workspace_new || !m->workspace_free || !m->log_prior ||
        !m->log_lik || !m->constrain || !m->unconstrain)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model lacks a required function "
                             "(workspace_new, workspace_free, log_prior, "
                             "log_lik, constrain, unconstrain)",
                             who);
    if (m->n_out && !m->out_names)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model has %zu outputs but no names", who,
                             m->n_out);
    if (m->n_gen && (!m->gen_names || !m->generate ||
                     m->n_gen_derived > m->n_gen))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model has %zu generated values but no "
                             "names or generate function",
                             who, m->n_gen);
    if (m->outcome > DRIFT_OUTCOME_REAL ||
        (m->outcome != DRIFT_OUTCOME_NONE && !m->predict) ||
        (m->outcome == DRIFT_OUTCOME_CATEGORICAL && m->n_classes < 2))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model's outcome kind %u lacks its "
                             "predict function or class count",
                             who, m->outcome);
    if ((m->flags & DRIFT_MODEL_GLM) && (!m->glm_scalars || !m->glm_design))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model claims generalised linear form "
                             "but lacks glm_scalars or glm_design",
                             who);
    return DRIFT_OK;
}

static int add_header(drift_problem *p, const char *key, const char *value)
{
    if (p->n_header >= sizeof p->header / sizeof p->header[0])
        return 0;
    size_t n = strlen(key) + strlen(value) + 4;
    char *line = drift_malloc(n);
    if (!line)
        return -1;
    snprintf(line, n, "%s = %s", key, value);
    p->header[p->n_header++] = line;
    return 0;
}

const drift_data *drift_problem_data(const drift_problem *p)
{
    if (p->rows_view)
        return p->rows_view;
    return p->table ? &p->table->view : p->mem ? p->mem : &p->empty;
}

/* A model written in the language: the .drift file reads its own data
 * (several --data files, --data-set values). */
static int open_lang(drift_problem *p, const drift_problem_spec *spec,
                     drift_err *e)
{
    if (spec->n_model_set)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--model-set %s: model options are for C model "
                             "plugins; a .drift model takes its values from "
                             "the data (--data FILE.json, --data-set "
                             "NAME=VALUE)",
                             spec->model_set[0]);
    drift_lang_spec ls = {.path = spec->model,
                          .data = spec->data,
                          .data_set = spec->data_set,
                          .n_data_set = spec->n_data_set,
                          .diag = spec->diag,
                          .share = spec->share,
                          .tables = spec->tables,
                          .n_tables = spec->n_tables};
    int rc = drift_lang_open(&ls, &p->model, e);
    if (rc)
        return rc;
    p->have_model = 1;
    if ((rc = drift_model_check(&p->model, spec->model, e)))
        return rc;
    p->rows_view = drift_lang_rows_view(&p->model);
    const drift_table *rt = drift_lang_rows_table(&p->model);
    if (spec->share && rt && rt->share_total) {
        p->rows_first = rt->share_first;
        p->rows_total = rt->share_total;
    } else if (spec->share) {
        /* Rows nowhere but in the model (none, or data-free): every rank
         * holds them all. */
        p->rows_total = p->model.n_rows;
    }
    p->lang_path = spec->model;
    p->lang_data = spec->data;
    p->lang_data_set = spec->data_set;
    p->lang_n_data_set = spec->n_data_set;
    char files[1024] = "";
    size_t used = 0;
    for (const char *const *d = spec->data; d && *d; d++) {
        int w = snprintf(files + used, sizeof files - used, "%s%s",
                         used ? ", " : "", *d);
        if (w < 0 || (size_t)w >= sizeof files - used)
            break;
        used += (size_t)w;
    }
    /* model: a name, as CmdStan writes it (CmdStanPy makes file names of
     * it, so no directory); model_file: the path. */
    const char *base = strrchr(spec->model, '/');
    base = base ? base + 1 : spec->model;
    char name[256];
    size_t n = strlen(base);
    if (n > 6 && !strcmp(base + n - 6, ".drift"))
        n -= 6;
    else if (n > 5 && !strcmp(base + n - 5, ".stan"))
        n -= 5;
    snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), base);
    if (add_header(p, "model", name) ||
        add_header(p, "model_file", spec->model) ||
        add_header(p, "data",
                   used ? files : spec->n_tables ? "(memory)" : "(none)"))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    for (size_t k = 0; k < spec->n_data_set; k++)
        if (add_header(p, "data_set", spec->data_set[k]))
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    return DRIFT_OK;
}

/* A model over sparse rows of dimension D holds vectors of D values (its
 * parameters, and each chain's point and gradient): refused, with the
 * size, when two of them cannot fit in this machine's memory, before the
 * model allocates anything (a stray LIBSVM index of 4e9 otherwise ends in
 * a vague "out of memory" minutes later). */
static int check_sparse_width(const drift_data *d, drift_err *e)
{
    uint64_t lim = drift_memory_limit();
    for (size_t k = 0; k < d->n_sparse; k++) {
        double need = 2.0 * 8.0 * (double)d->sparse[k].dim;
        if (need <= (double)lim)
            continue;
        char one[32], have[32];
        drift_format_bytes(8.0 * (double)d->sparse[k].dim, one, sizeof one);
        drift_format_bytes((double)lim, have, sizeof have);
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: sparse rows '%s' of dimension %zu (the "
                             "largest feature index): a model over them "
                             "holds vectors of %zu values, %s each, and a "
                             "run needs at least two; this machine allows "
                             "%s of memory (check the file's largest index)",
                             d->source, d->sparse[k].name, d->sparse[k].dim,
                             d->sparse[k].dim, one, have);
    }
    return DRIFT_OK;
}

int drift_problem_open(drift_problem *p, drift_registry *reg,
                       const drift_problem_spec *spec, drift_err *e)
{
    memset(p, 0, sizeof *p);
    p->empty.struct_size = (uint32_t)sizeof(drift_data);
    p->empty.source = "(no data)";
    if (!spec->model)
        return drift_err_set(e, DRIFT_EINVAL,
                             "no model given: give a model file (model.drift) "
                             "or use --model NAME (see 'drift models')");
    if (drift_lang_is_model_file(spec->model))
        return open_lang(p, spec, e);
    if (spec->n_data_set)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--data-set %s: data values are for .drift "
                             "models; C model plugins take options with "
                             "--model-set",
                             spec->data_set[0]);
    int rc = drift_registry_model(reg, spec->model, &p->entry, e);
    if (rc)
        return rc;
    const drift_model_plugin *mp = p->entry->m;
    size_t n_data = 0;
    for (const char *const *d = spec->data; d && *d; d++)
        n_data++;
    if (n_data > 1)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--data is given %zu times, but model %s reads "
                             "one data file",
                             n_data, mp->name);
    if (spec->n_tables > 1 || (spec->n_tables && n_data))
        return drift_err_set(e, DRIFT_EINVAL,
                             "model %s reads one data set, but %zu are "
                             "given (files and rows in memory)",
                             mp->name, n_data + spec->n_tables);
    if (spec->n_tables)
        p->mem = spec->tables[0];
    if (n_data == 1 &&
        (rc = spec->share ? drift_table_open_share(spec->data[0], spec->share,
                                                   &p->table, e)
                          : drift_table_open(spec->data[0], &p->table, e)))
        return rc;
    p->options = drift_calloc(mp->n_options, sizeof(double));
    p->options_set = drift_calloc(mp->n_options, 1);
    if (!p->options || !p->options_set)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    char who[96];
    snprintf(who, sizeof who, "model %s", mp->name);
    if ((rc = drift_hparams_apply(mp->options, mp->n_options, "--model-set",
                                  who, spec->model_set, spec->n_model_set,
                                  p->options, p->options_set, e)))
        return rc;
    if ((rc = check_sparse_width(drift_problem_data(p), e)))
        return rc;
    if ((rc = mp->create(drift_problem_data(p), p->options, &p->model, e))) {
        if (!e->msg[0])
            drift_err_set(e, rc, "model %s could not be built", mp->name);
        return rc ? rc : DRIFT_EINVAL;
    }
    p->have_model = 1;
    if ((rc = drift_model_check(&p->model, p->entry->path, e)))
        return rc;
    if (spec->share) {
        p->rows_first = p->table ? p->table->share_first : 0;
        p->rows_total = p->table ? p->table->share_total : p->model.n_rows;
        if (p->table && p->model.n_rows != p->table->view.n_rows)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "model %s has %zu per-datum terms over %zu "
                                 "rows: a run across MPI ranks needs a term "
                                 "per row, to split the rows between them",
                                 mp->name, p->model.n_rows,
                                 p->table->view.n_rows);
    }
    if (add_header(p, "model", mp->name) ||
        add_header(p, "model_file", p->entry->path) ||
        add_header(p, "data", n_data ? spec->data[0]
                              : p->mem ? "(memory)" : "(none)"))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    for (size_t k = 0; k < mp->n_options; k++) {
        char v[64], key[96];
        drift_hparam_format(&mp->options[k], p->options[k], v, sizeof v);
        snprintf(key, sizeof key, "model.%s", mp->options[k].name);
        if (add_header(p, key, v))
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    return DRIFT_OK;
}

void drift_problem_close(drift_problem *p)
{
    if (p->have_model && p->model.free)
        p->model.free(p->model.self);
    drift_table_free(p->table);
    drift_free(p->options);
    drift_free(p->options_set);
    for (size_t k = 0; k < p->n_header; k++)
        drift_free(p->header[k]);
    memset(p, 0, sizeof *p);
}
