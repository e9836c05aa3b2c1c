/* heldout.c: test-set metrics for --test: running log-sum-exp of each test
 * row's log density over the draws, running sums of the model's
 * predictions, and the metrics CSV; and the run extension (ext.h) that
 * evaluates a chain's draws every eval_every data passes and at its end.
 * Not for adding draws (emit.c adds each kept draw). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "engine/lang/lang_model.h"
#include "ext.h"
#include "heldout.h"
#include "shard.h"

/* Test rows per model call. */
#define CHUNK 256

void drift_heldout_set_close(drift_heldout_set *s)
{
    if (s->have_model && s->model.free)
        s->model.free(s->model.self);
    drift_table_free(s->table);
    drift_free(s->path);
    memset(s, 0, sizeof *s);
}

/* A .drift model over the test rows: the training run's data files with
 * the one that gave the rows replaced by path (the data block's values
 * and --data-set stay as they were). */
static int open_lang_test(drift_heldout_set *s, const drift_problem *train,
                          const char *path, drift_err *e)
{
    const char *rows_src = train->rows_view ? train->rows_view->source : NULL;
    if (!rows_src)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--test %s: the model's rows did not come from "
                             "a rows file (CSV, LIBSVM or row store), so "
                             "there is no file for the test rows to replace",
                             path);
    size_t n = 0;
    for (const char *const *d = train->lang_data; d && *d; d++)
        n++;
    const char **files = drift_calloc(n + 2, sizeof *files);
    if (!files)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        if (strcmp(train->lang_data[j], rows_src) != 0)
            files[k++] = train->lang_data[j];
    files[k++] = path;
    files[k] = NULL;
    drift_lang_spec ls = {.path = train->lang_path,
                          .data = files,
                          .data_set = train->lang_data_set,
                          .n_data_set = train->lang_n_data_set,
                          .reductions_from = &train->model};
    int rc = drift_lang_open(&ls, &s->model, e);
    drift_free(files);
    if (rc) {
        drift_err_prefix(e, "--test %s", path);
        return rc;
    }
    s->have_model = 1;
    return drift_model_check(&s->model, train->lang_path, e);
}

int drift_heldout_set_open(drift_heldout_set *s, const drift_problem *train,
                           const char *path, drift_err *e)
{
    memset(s, 0, sizeof *s);
    const drift_model *tm = &train->model;
    if (!train->have_model || (!train->entry && !train->lang_path))
        return drift_err_set(e, DRIFT_EINVAL, "--test: no training model");
    if (tm->n_rows == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--test %s: the model has no data rows, so "
                             "there is nothing to predict",
                             path);
    if (!(s->path = drift_strdup(path)))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc;
    const char *name;
    if (train->lang_path) {
        name = train->lang_path;
        if ((rc = open_lang_test(s, train, path, e)))
            return rc;
    } else {
        if ((rc = drift_table_open(path, &s->table, e)))
            return rc;
        const drift_model_plugin *mp = train->entry->m;
        name = mp->name;
        if ((rc = mp->create(&s->table->view, train->options, &s->model, e))) {
            if (!e->msg[0])
                drift_err_set(e, rc, "model %s could not be built", mp->name);
            drift_err_prefix(e, "--test %s", path);
            return rc;
        }
        s->have_model = 1;
        if ((rc = drift_model_check(&s->model, train->entry->path, e)))
            return rc;
    }
    const drift_model *m = &s->model;
    if (m->n_rows == 0)
        return drift_err_set(e, DRIFT_EDATA, "--test %s: the file has no rows",
                             path);
    if (m->dim != tm->dim || m->n_out != tm->n_out)
        return drift_err_set(e, DRIFT_EDATA,
                             "--test %s: over these rows model %s has %zu "
                             "parameters, over the training data %zu: the "
                             "test rows must not change the parameters "
                             "(e.g. a larger user index; for sizes bound "
                             "from the data, such as a sparse_vector's D, "
                             "give the size with --data-set D=...)",
                             path, name, m->dim, tm->dim);
    for (size_t k = 0; k < m->n_out; k++)
        if (strcmp(m->out_names[k], tm->out_names[k]))
            return drift_err_set(e, DRIFT_EDATA,
                                 "--test %s: parameter %zu is '%s' over the "
                                 "test rows but '%s' over the training data",
                                 path, k + 1, m->out_names[k],
                                 tm->out_names[k]);
    return DRIFT_OK;
}

void drift_heldout_path(const char *chain_path, char *buf, size_t cap)
{
    const char *slash = strrchr(chain_path, '/');
    const char *dot = strrchr(chain_path, '.');
    if (dot && (!slash || dot > slash + 1))
        snprintf(buf, cap, "%.*s_metrics%s", (int)(dot - chain_path),
                 chain_path, dot);
    else
        snprintf(buf, cap, "%s_metrics", chain_path);
}

struct drift_heldout {
    const drift_model *m;
    void *ws;
    size_t n, k;        /* test rows; predictions per row */
    double *lse;        /* n: log sum_s p(y_i | theta_s) */
    double *pred_sum;   /* n x k: sum_s of predictions */
    double *y;          /* n: observed outcomes */
    double *ll, *pred, *ybuf; /* CHUNK, CHUNK x k, CHUNK scratch */
    uint64_t S;
    drift_writer *w;
    /* A chain's evaluations: every this many gradients (0: at the end
     * only), the next one due, the count at the last one (UINT64_MAX:
     * none yet). */
    double every, next;
    uint64_t last;
};

int drift_heldout_new(drift_heldout **out, const drift_model *m,
                      const char *test_path, const char *metrics_path,
                      unsigned chain_id, drift_err *e)
{
    *out = NULL;
    drift_heldout *h = drift_calloc(1, sizeof *h);
    if (!h)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    h->m = m;
    h->n = m->n_rows;
    h->k = m->outcome == DRIFT_OUTCOME_CATEGORICAL ? m->n_classes : 1;
    h->ws = m->workspace_new(m->self, CHUNK);
    h->lse = drift_malloc_array(h->n, sizeof *h->lse);
    h->pred_sum = drift_calloc(h->n, h->k * sizeof *h->pred_sum);
    h->y = drift_calloc(h->n, sizeof *h->y);
    h->ll = drift_malloc_array(CHUNK, sizeof *h->ll);
    h->pred = drift_malloc_array(CHUNK, h->k * sizeof *h->pred);
    h->ybuf = drift_malloc_array(CHUNK, sizeof *h->ybuf);
    if (!h->ws || !h->lse || !h->pred_sum || !h->y || !h->ll || !h->pred ||
        !h->ybuf) {
        drift_heldout_close(h, 0, NULL);
        return drift_err_set(e, DRIFT_ENOMEM,
                             "out of memory for the test set's %zu rows",
                             m->n_rows);
    }
    for (size_t i = 0; i < h->n; i++)
        h->lse[i] = -INFINITY;
    if (metrics_path) {
        int rc = drift_writer_open(metrics_path, &h->w, e);
        if (rc) {
            drift_heldout_close(h, 0, NULL);
            return rc;
        }
        FILE *f = drift_writer_file(h->w);
        fprintf(f, "# drift_version = %s\n", PACKAGE_VERSION);
        fprintf(f, "# test = %s\n", test_path ? test_path : "");
        fprintf(f, "# test_rows = %zu\n", h->n);
        fprintf(f, "# chain_id = %u\n", chain_id);
        fputs("# lpd = mean over test rows of log((1/S) sum_s "
              "p(y_i | theta_s)), S draws after warmup\n",
              f);
        fputs("passes,seconds,iteration,draws,lpd", f);
        if (m->outcome == DRIFT_OUTCOME_BINARY ||
            m->outcome == DRIFT_OUTCOME_CATEGORICAL)
            fputs(",accuracy", f);
        else if (m->outcome == DRIFT_OUTCOME_REAL)
            fputs(",mse", f);
        fputc('\n', f);
    }
    *out = h;
    return DRIFT_OK;
}

int drift_heldout_add(drift_heldout *h, const double *theta, drift_err *e)
{
    const drift_model *m = h->m;
    drift_err me = {{0}};
    for (size_t first = 0; first < h->n; first += CHUNK) {
        size_t n = h->n - first < CHUNK ? h->n - first : CHUNK;
        drift_rows b = {NULL, first, n};
        int rc = m->log_lik(m->self, h->ws, theta, &b, h->ll, NULL, NULL,
                            NULL, &me);
        if (rc)
            return drift_err_set(e, rc, "test rows: %s",
                                 me.msg[0] ? me.msg : "the model failed");
        for (size_t j = 0; j < n; j++) {
            double l = h->ll[j], *a = &h->lse[first + j];
            if (isnan(l) || l == INFINITY)
                return drift_err_set(e, DRIFT_ENUMERIC,
                                     "test row %zu: the log density is %g",
                                     first + j + 1, l);
            if (l == -INFINITY)
                continue;
            double hi = *a > l ? *a : l, lo = *a > l ? l : *a;
            *a = hi + log1p(exp(lo - hi));
        }
        if (m->outcome == DRIFT_OUTCOME_NONE)
            continue;
        rc = m->predict(m->self, h->ws, theta, &b, h->pred, h->ybuf, &me);
        if (rc)
            return drift_err_set(e, rc, "test rows: %s",
                                 me.msg[0] ? me.msg : "predict failed");
        for (size_t j = 0; j < n * h->k; j++)
            h->pred_sum[first * h->k + j] += h->pred[j];
        memcpy(h->y + first, h->ybuf, n * sizeof *h->y);
    }
    h->S++;
    return DRIFT_OK;
}

void drift_heldout_metrics(const drift_heldout *h, double *lpd,
                           double *second, uint64_t *draws)
{
    *draws = h->S;
    *lpd = *second = NAN;
    if (h->S == 0)
        return;
    double logS = log((double)h->S), s = 0;
    for (size_t i = 0; i < h->n; i++)
        s += h->lse[i] - logS;
    *lpd = s / (double)h->n;
    const double S = (double)h->S;
    double acc = 0;
    switch (h->m->outcome) {
    case DRIFT_OUTCOME_BINARY:
        for (size_t i = 0; i < h->n; i++)
            acc += (h->pred_sum[i] / S > 0.5) == (h->y[i] != 0);
        *second = acc / (double)h->n;
        break;
    case DRIFT_OUTCOME_CATEGORICAL:
        for (size_t i = 0; i < h->n; i++) {
            const double *p = h->pred_sum + i * h->k;
            size_t best = 0;
            for (size_t c = 1; c < h->k; c++)
                if (p[c] > p[best])
                    best = c;
            acc += (double)(best + 1) == h->y[i];
        }
        *second = acc / (double)h->n;
        break;
    case DRIFT_OUTCOME_REAL:
        for (size_t i = 0; i < h->n; i++) {
            double r = h->pred_sum[i] / S - h->y[i];
            acc += r * r;
        }
        *second = acc / (double)h->n;
        break;
    default:
        break;
    }
}

int drift_heldout_write(drift_heldout *h, double passes, double seconds,
                        uint64_t iteration, drift_err *e)
{
    if (!h->w)
        return DRIFT_OK;
    double lpd, second;
    uint64_t S;
    drift_heldout_metrics(h, &lpd, &second, &S);
    FILE *f = drift_writer_file(h->w);
    drift_writer_real(f, passes);
    fputc(',', f);
    drift_writer_real(f, seconds);
    fprintf(f, ",%llu,%llu,", (unsigned long long)iteration,
            (unsigned long long)S);
    drift_writer_real(f, lpd);
    if (h->m->outcome != DRIFT_OUTCOME_NONE) {
        fputc(',', f);
        drift_writer_real(f, second);
    }
    fputc('\n', f);
    /* The first failed write stops the chain; close then discards the
     * file (a previous one of the name stays). */
    return drift_writer_failed(h->w, e);
}

int drift_heldout_close(drift_heldout *h, int commit, drift_err *e)
{
    if (!h)
        return DRIFT_OK;
    int rc = DRIFT_OK;
    if (h->w) {
        if (commit)
            rc = drift_writer_commit(h->w, e);
        else
            drift_writer_abort(h->w);
    }
    if (h->ws)
        h->m->workspace_free(h->m->self, h->ws);
    drift_free(h->lse);
    drift_free(h->pred_sum);
    drift_free(h->y);
    drift_free(h->ll);
    drift_free(h->pred);
    drift_free(h->ybuf);
    drift_free(h);
    return rc;
}

/* ---- held-out metrics as a run extension (ext.h) ------------------------ */

/* A row of held-out metrics at the chain's current point. */
static void heldout_eval(drift_chain *c)
{
    drift_heldout *h = c->ext.heldout;
    drift_err e = {{0}};
    double passes = c->N ? (double)c->grads / (double)c->N : 0;
    if (drift_heldout_write(h, passes, drift_now() - c->t_start, c->iter,
                            &e)) {
        drift_chain_fail(c, DRIFT_EIO, "%s", e.msg);
        drift_shard_defer(c); /* across ranks: the writer's alone */
    }
    h->last = c->grads;
}

static int heldout_open(drift_chain *c, drift_chain_result *res)
{
    const drift_run_config *cfg = c->cfg;
    if (!cfg->heldout.model)
        return DRIFT_EXT_IDLE;
    drift_err e = {{0}};
    if (cfg->output.path)
        drift_heldout_path(res->path, res->metrics_path,
                           sizeof res->metrics_path);
    int rc = drift_heldout_new(&c->ext.heldout, cfg->heldout.model,
                               cfg->heldout.path,
                               cfg->output.path ? res->metrics_path : NULL,
                               c->id, &e);
    if (rc) {
        drift_chain_fail(c, rc, "%s", e.msg);
        if (!c->ext.shard)
            return DRIFT_EXT_STOP;
        res->metrics_path[0] = '\0';
        drift_shard_defer(c);
        return DRIFT_EXT_IDLE;
    }
    drift_heldout *h = c->ext.heldout;
    h->every = cfg->heldout.every * (double)c->N;
    h->next = h->every;
    h->last = UINT64_MAX;
    return DRIFT_EXT_ON;
}

/* Evaluations fall due every eval_every data passes. */
static int heldout_after_step(drift_chain *c)
{
    drift_heldout *h = c->ext.heldout;
    if (h->every > 0 && (double)c->grads >= h->next) {
        heldout_eval(c);
        /* The next multiple past the count, in one step: adding a tiny
         * interval in a loop turned once per interval passed, or forever
         * once it fell below next's precision. */
        h->next = (floor((double)c->grads / h->every) + 1) * h->every;
        if (!(h->next > (double)c->grads))
            h->next = (double)c->grads + 1; /* below one gradient */
    }
    return 0;
}

/* The final evaluation, over every draw kept (also after a failure: the
 * draws so far are valid). */
static void heldout_finish(drift_chain *c)
{
    if (c->grads != c->ext.heldout->last)
        heldout_eval(c);
}

static void heldout_close(drift_chain *c, drift_chain_result *res,
                          int started)
{
    if (c->ext.heldout) {
        drift_err e = {{0}};
        if (drift_heldout_close(c->ext.heldout, started, &e) &&
            !res->status) {
            res->status = DRIFT_EIO;
            snprintf(res->message, sizeof res->message, "%s", e.msg);
        }
        c->ext.heldout = NULL;
    }
    if (!started)
        res->metrics_path[0] = '\0';
}

const drift_run_ext drift_heldout_ext = {
    .name = "heldout",
    .open = heldout_open,
    .after_step = heldout_after_step,
    .finish = heldout_finish,
    .close = heldout_close,
};
