/* ksd.c: `drift summary --ksd`: the kernel Stein discrepancy of the kept
 * draws of one or more chains (engine/stats/ksd.h), on the model's
 * unconstrained scale.  The scores come from the files' grad_lp_k__
 * columns (drift sample --save-gradients) or are recomputed, one
 * full-data gradient per draw used, from the model and data the header
 * names (model_file, data, data_set, model.* options) or that --model and
 * --data give.  Draws are thinned evenly to at most --ksd-draws.  Not for
 * the discrepancy's arithmetic nor for printing the table (summary.c). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli.h"
#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "engine/run/score.h"
#include "engine/stats/ksd.h"
#include "engine/stats/stancsv.h"

static int is_diag_col(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && !strcmp(name + n - 2, "__");
}

/* path as recorded, or beside the draws file when it is relative and not
 * found from here. */
static void resolve(const char *path, const char *beside, char *buf,
                    size_t cap)
{
    snprintf(buf, cap, "%s", path);
    if (path[0] == '/' || access(path, R_OK) == 0)
        return;
    const char *slash = strrchr(beside, '/');
    if (!slash)
        return;
    char alt[4096];
    snprintf(alt, sizeof alt, "%.*s/%s", (int)(slash - beside), beside, path);
    if (access(alt, R_OK) == 0)
        snprintf(buf, cap, "%s", alt);
}

/* The model and data of the draws, opened: --model and --data, or the
 * header's.  Returns 0, or EXIT_USAGE with a message printed. */
typedef struct opened {
    drift_registry *reg;
    drift_problem prob;
    int open;
    char model[4096];
    char data_buf[8][4096];
    const char *data[9];
    char *data_set[16];
    char *model_set[32];
    size_t n_data_set, n_model_set;
    char sets[48][256];
} opened;

static int open_model(const drift_stancsv *f, const cli_ksd_opts *o,
                      opened *op)
{
    int from_header_plugin = 0;
    const char *model = o->model ? o->model
                                 : drift_stancsv_meta(f, "model_file");
    if (!model || !*model) {
        fprintf(stderr,
                "drift summary: --ksd: %s names no model (no model_file in "
                "its header) and holds no scores (grad_lp_k__ columns): give "
                "the model and data with --model FILE --data FILE\n",
                f->path);
        return EXIT_USAGE;
    }
    /* A draws file is data: it may name a model file to parse, or an
     * installed model by name, but never code to load.  A plugin path in
     * its header is replaced by the model of that name on the plugin
     * search path; a plugin found nowhere else must be given with
     * --model, which the user types. */
    if (!o->model && !drift_lang_is_model_file(model)) {
        const char *name = drift_stancsv_meta(f, "model");
        if (!name || !*name || strchr(name, '/') ||
            drift_lang_is_model_file(name)) {
            fprintf(stderr,
                    "drift summary: --ksd: %s names the model plugin %s; "
                    "drift loads no code that a draws file names: give the "
                    "model with --model FILE (and --data FILE)\n",
                    f->path, model);
            return EXIT_USAGE;
        }
        from_header_plugin = 1;
        model = name;
    }
    if (from_header_plugin)
        snprintf(op->model, sizeof op->model, "%s", model);
    else
        resolve(model, f->path, op->model, sizeof op->model);
    size_t nd = 0;
    if (o->n_data) {
        for (size_t k = 0; k < o->n_data && nd < 8; k++)
            snprintf(op->data_buf[nd++], sizeof op->data_buf[0], "%s",
                     o->data[k]);
    } else {
        /* "a.csv, b.json" as drift writes several files; "(none)". */
        const char *d = drift_stancsv_meta(f, "data");
        if (d && strcmp(d, "(none)")) {
            const char *p = d;
            while (*p && nd < 8) {
                const char *comma = strstr(p, ", ");
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                char one[4096];
                snprintf(one, sizeof one, "%.*s", (int)len, p);
                resolve(one, f->path, op->data_buf[nd],
                        sizeof op->data_buf[0]);
                nd++;
                p = comma ? comma + 2 : p + len;
            }
        }
    }
    /* What the header names is read only when it is a plain file: a FIFO
     * or a device there would hang or never end the summary. */
    for (size_t k = 0; k <= nd; k++) {
        const char *p = k < nd ? op->data_buf[k] : op->model;
        if ((k < nd && o->n_data) || (k == nd && (o->model ||
                                                  from_header_plugin)))
            continue;
        struct stat st;
        if (stat(p, &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr,
                    "drift summary: --ksd: %s names %s %s, which is not a "
                    "regular file; give the model and data with --model "
                    "FILE --data FILE\n",
                    f->path, k < nd ? "the data" : "the model", p);
            return EXIT_USAGE;
        }
    }
    for (size_t k = 0; k < nd; k++)
        op->data[k] = op->data_buf[k];
    op->data[nd] = NULL;
    /* The header's data values and model options: part of the model. */
    size_t ns = 0;
    for (size_t k = 0; k < f->n_meta && ns < 48; k++) {
        const char *key = f->meta_keys[k];
        if (!strcmp(key, "data_set") && op->n_data_set < 16) {
            snprintf(op->sets[ns], sizeof op->sets[0], "%s",
                     f->meta_values[k]);
            op->data_set[op->n_data_set++] = op->sets[ns++];
        } else if (!strncmp(key, "model.", 6) && op->n_model_set < 32) {
            snprintf(op->sets[ns], sizeof op->sets[0], "%s=%s", key + 6,
                     f->meta_values[k]);
            op->model_set[op->n_model_set++] = op->sets[ns++];
        }
    }
    op->reg = drift_registry_new();
    if (!op->reg)
        return EXIT_RUN_FAILED;
    drift_problem_spec spec = {op->model, op->data, op->model_set,
                               op->n_model_set, op->data_set,
                               op->n_data_set, stderr, NULL, NULL, 0};
    drift_err e = {{0}};
    int rc = drift_problem_open(&op->prob, op->reg, &spec, &e);
    op->open = 1;
    if (rc && from_header_plugin) {
        fprintf(stderr,
                "drift summary: --ksd: %s was written with the model plugin "
                "%s (model %s), which is not installed here (%s); drift "
                "loads no code that a draws file names: give the model with "
                "--model FILE (and --data FILE)\n",
                f->path, drift_stancsv_meta(f, "model_file"), model, e.msg);
        return EXIT_USAGE;
    }
    if (!rc && from_header_plugin) {
        const char *was = drift_stancsv_meta(f, "model_file");
        char a[PATH_MAX], b[PATH_MAX];
        if (!was || !realpath(was, a) || !realpath(op->prob.entry->path, b) ||
            strcmp(a, b))
            fprintf(stderr,
                    "drift summary: --ksd: note: %s was written with the "
                    "model plugin %s; its scores are recomputed with the "
                    "installed model %s (%s)\n",
                    f->path, was ? was : "(not recorded)", model,
                    op->prob.entry->path);
    }
    if (rc) {
        fprintf(stderr,
                "drift summary: --ksd: opening the model of %s (%s%s%s) to "
                "recompute its scores: %s%s\n",
                f->path, op->model, nd ? " with data " : "",
                nd ? op->data[0] : "", e.msg,
                o->model ? ""
                         : "; give them with --model FILE --data FILE if "
                           "they moved");
        return EXIT_USAGE;
    }
    return 0;
}

static void close_model(opened *op)
{
    if (op->open)
        drift_problem_close(&op->prob);
    drift_registry_free(op->reg);
}

/* Index of the first of d consecutive columns grad_lp_1__ ... grad_lp_d__
 * (d counted), or -1. */
static long score_columns(const drift_stancsv *f, size_t *d)
{
    long first = drift_stancsv_column(f, "grad_lp_1__");
    *d = 0;
    if (first < 0)
        return -1;
    for (size_t c = (size_t)first; c < f->n_cols; c++) {
        char want[48];
        snprintf(want, sizeof want, "grad_lp_%zu__", *d + 1);
        if (strcmp(f->names[c], want))
            break;
        (*d)++;
    }
    return first;
}

int cli_ksd(drift_stancsv *const *draws, size_t C, size_t n,
            const cli_ksd_opts *o, cli_ksd_out *out)
{
    const drift_stancsv *f0 = draws[0];
    size_t nc = f0->n_cols;
    memset(out, 0, sizeof *out);
    out->ksd = NAN;
    out->part = malloc(nc * sizeof *out->part);
    if (!out->part)
        return EXIT_RUN_FAILED;
    for (size_t c = 0; c < nc; c++)
        out->part[c] = NAN;
    const char *emit = drift_stancsv_meta(f0, "emit");
    if (emit && !strcmp(emit, "segments")) {
        fprintf(stderr, "drift summary: --ksd: %s holds a trajectory's "
                        "segments, not draws; sample with --emit draws "
                        "(the default)\n",
                f0->path);
        return EXIT_USAGE;
    }
    /* Which draws: per chain, m evenly spaced, the last one included. */
    size_t K = o->max_draws ? o->max_draws : 1000;
    size_t m = K / C;
    if (m == 0)
        m = 1;
    if (m > n)
        m = n;
    size_t M = m * C;
    out->used = M;
    out->total = n * C;
    size_t d_stored = 0;
    long g0 = score_columns(f0, &d_stored);
    const char *coords = drift_stancsv_meta(f0, "grad_lp_coordinates");
    int cols_are_theta = g0 >= 0 && coords && !strcmp(coords, "columns");
    /* The model's columns: not __, not lp__, in file order. */
    size_t n_model_cols = 0;
    size_t *model_col = malloc(nc * sizeof *model_col);
    opened op;
    memset(&op, 0, sizeof op);
    double *theta = NULL, *score = NULL, *outv = NULL;
    int rc = 0;
    if (!model_col) {
        rc = EXIT_RUN_FAILED;
        goto done;
    }
    for (size_t c = 0; c < nc; c++)
        if (!is_diag_col(f0->names[c]) && strcmp(f0->names[c], "lp__"))
            model_col[n_model_cols++] = c;
    size_t d;
    const drift_model *mod = NULL;
    if (cols_are_theta && !o->model) {
        d = d_stored;
        if (n_model_cols < d) {
            fprintf(stderr, "drift summary: --ksd: %s has %zu scores but "
                            "%zu parameter columns\n",
                    f0->path, d, n_model_cols);
            rc = EXIT_USAGE;
            goto done;
        }
        snprintf(out->how, sizeof out->how,
                 "scores read from the grad_lp columns");
    } else {
        if ((rc = open_model(f0, o, &op)))
            goto done;
        mod = &op.prob.model;
        d = mod->dim;
        if (g0 >= 0 && d_stored != d) {
            fprintf(stderr, "drift summary: --ksd: %s has %zu scores "
                            "(grad_lp_k__), but model %s has %zu "
                            "unconstrained parameters: give the model the "
                            "draws came from\n",
                    f0->path, d_stored, op.model, d);
            rc = EXIT_USAGE;
            goto done;
        }
        snprintf(out->how, sizeof out->how,
                 g0 >= 0 ? "scores read from the grad_lp columns, the "
                           "unconstrained coordinates from model %s"
                         : "scores recomputed from model %s",
                 op.model);
    }
    theta = malloc(M * (d ? d : 1) * sizeof *theta);
    score = malloc(M * (d ? d : 1) * sizeof *score);
    outv = malloc((mod ? mod->n_out + 1 : 1) * sizeof *outv);
    long *out_col = mod ? malloc((mod->n_out + 1) * sizeof *out_col) : NULL;
    if (!theta || !score || !outv || (mod && !out_col)) {
        free(out_col);
        rc = EXIT_RUN_FAILED;
        goto done;
    }
    if (mod) {
        for (size_t k = 0; k < mod->n_out; k++) {
            out_col[k] = drift_stancsv_column(f0, mod->out_names[k]);
            if (out_col[k] < 0) {
                fprintf(stderr, "drift summary: --ksd: model %s has the "
                                "parameter '%s', which %s has no column "
                                "for: give the model the draws came from "
                                "(--model)\n",
                        op.model, mod->out_names[k], f0->path);
                free(out_col);
                rc = EXIT_USAGE;
                goto done;
            }
        }
    }
    /* The draws on the unconstrained scale, and their stored scores. */
    size_t row = 0;
    for (size_t k = 0; k < C; k++) {
        const drift_stancsv *f = draws[k];
        for (size_t j = 0; j < m; j++, row++) {
            size_t i = f->n_warmup + ((j + 1) * n) / m - 1;
            const double *v = f->values + i * nc;
            double *th = theta + row * d;
            if (mod) {
                for (size_t q = 0; q < mod->n_out; q++)
                    outv[q] = v[out_col[q]];
                drift_err ue = {{0}};
                if (mod->unconstrain(mod->self, outv, th, &ue)) {
                    fprintf(stderr, "drift summary: --ksd: %s, draw %zu: "
                                    "%s\n",
                            f->path, i + 1 - f->n_warmup, ue.msg);
                    free(out_col);
                    rc = EXIT_USAGE;
                    goto done;
                }
            } else {
                for (size_t q = 0; q < d; q++)
                    th[q] = v[model_col[q]];
            }
            if (g0 >= 0)
                for (size_t q = 0; q < d; q++)
                    score[row * d + q] = v[(size_t)g0 + q];
        }
    }
    free(out_col);
    double t0 = drift_now();
    if (g0 < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        drift_err se = {{0}};
        if (drift_score_points(mod, theta, M, score,
                               cores > 0 ? (unsigned)cores : 1, &se)) {
            fprintf(stderr, "drift summary: --ksd: recomputing the scores "
                            "of %s's draws: %s\n",
                    f0->path, se.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        out->recomputed = 1;
        out->grads = (double)M * (double)mod->n_rows;
    }
    out->t_scores = drift_now() - t0;
    double *parts = malloc((d ? d : 1) * sizeof *parts);
    if (!parts) {
        rc = EXIT_RUN_FAILED;
        goto done;
    }
    t0 = drift_now();
    drift_ksd k;
    drift_err ke = {{0}};
    if (drift_ksd_imq(theta, d, score, d, M, d, 1.0, -0.5, &k, parts,
                      &ke)) {
        fprintf(stderr, "drift summary: --ksd: %s (draws of %s, thinned "
                        "as above)\n",
                ke.msg, f0->path);
        free(parts);
        rc = EXIT_USAGE;
        goto done;
    }
    out->t_kernel = drift_now() - t0;
    out->ksd = k.ksd;
    out->d = d;
    /* Each coordinate's part onto its column: the model's own columns
     * when they are the coordinates, else by the coordinates' names. */
    long lp = drift_stancsv_column(f0, "lp__");
    if (lp >= 0)
        out->part[lp] = k.ksd;
    for (size_t q = 0; q < d; q++) {
        long c = -1;
        if (!mod)
            c = (long)model_col[q];
        else if (mod->theta_names)
            c = drift_stancsv_column(f0, mod->theta_names[q]);
        else if (mod->n_out == mod->dim ||
                 drift_score_coordinates_are_outputs(mod))
            c = drift_stancsv_column(f0, mod->out_names[q]);
        if (c >= 0)
            out->part[c] = sqrt(parts[q] > 0 ? parts[q] : 0);
    }
    free(parts);
done:
    free(model_col);
    free(theta);
    free(score);
    free(outv);
    close_model(&op);
    return rc;
}
