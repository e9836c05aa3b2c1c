/* method_generate.c: the generate method, CmdStan's standalone generated
 * quantities: the model's derived and generated blocks evaluated at every
 * draw of existing Stan CSV files (parameters read by column name), one
 * output file per input file.  Each output is the input with those
 * columns recomputed: its comment lines (configuration, adaptation,
 * timing) and method columns kept in place, so that whatever read the
 * fit reads the output.  Its rows to a callback: input k's as chain k + 1,
 * the kept columns then the recomputed ones. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "engine/stats/stancsv.h"
#include "method.h"
#include "points.h"

typedef struct gen_args {
    drift_mfiles draws;
} gen_args;

static const drift_mopt opts[] = {
    {"draws", DRIFT_MOPT_FILES, offsetof(gen_args, draws),
     "FILE...  Stan CSV files of a fit (one per chain; every argument up to "
     "the next option)", DRIFT_MFILES_MAX, NULL, NULL},
};

static int check(void *args, drift_err *e)
{
    const gen_args *a = args;
    if (!a->draws.n)
        return drift_err_set(e, DRIFT_EINVAL,
                             "no draws given: --draws FIT_1.csv "
                             "[FIT_2.csv ...]");
    return DRIFT_OK;
}

/* Output path of input k: out for one input, OUT_K.csv for several, each
 * input's name with _gq without out. */
static void out_path(const gen_args *a, const char *out, size_t k,
                     char *buf, size_t cap)
{
    const char *in = a->draws.v[k];
    if (!out) {
        size_t len = strlen(in);
        if (len > 4 && !strcmp(in + len - 4, ".csv"))
            len -= 4;
        snprintf(buf, cap, "%.*s_gq.csv", (int)len, in);
        return;
    }
    if (a->draws.n == 1) {
        snprintf(buf, cap, "%s", out);
        return;
    }
    size_t len = strlen(out);
    if (len > 4 && !strcmp(out + len - 4, ".csv"))
        len -= 4;
    snprintf(buf, cap, "%.*s_%zu.csv", (int)len, out, k + 1);
}

/* Every output checked before any work: none may be an input (in: the
 * draws files among them; a draws file read while its output is written
 * would be lost). */
static int check_outputs(const void *args, const char *out,
                         const char *const *in, size_t n_in, drift_err *e)
{
    const gen_args *a = args;
    if (out && a->draws.n > 1 && drift_writer_check_kind(out, NULL, 0, e)) {
        drift_err_prefix(e, "--out");
        return DRIFT_EINVAL;
    }
    for (size_t k = 0; k < a->draws.n; k++) {
        char path[4096];
        out_path(a, out, k, path, sizeof path);
        if (drift_writer_check(path, in, n_in, e)) {
            drift_err_prefix(e, "--out");
            return DRIFT_EINVAL;
        }
    }
    return DRIFT_OK;
}

/* Whether column name is one of the model's derived or generated values
 * (recomputed, so the input's copy is dropped). */
static int is_gen(const drift_model *m, const char *name)
{
    for (size_t j = 0; j < m->n_gen; j++)
        if (!strcmp(m->gen_names[j], name))
            return 1;
    return 0;
}

/* The first input's kept columns, then the model's generated ones. */
static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    const gen_args *a = args;
    if (!m->n_gen)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model has no derived or generated "
                             "quantities: nothing to compute");
    FILE *f = fopen(a->draws.v[0], "r");
    if (!f)
        return drift_err_set(e, DRIFT_EINVAL, "--draws %s: cannot read it",
                             a->draws.v[0]);
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = DRIFT_OK, found = 0;
    while (!found && (got = getline(&line, &cap, f)) > 0)
        found = line[0] != '#' && strspn(line, " \t\r\n") != (size_t)got;
    fclose(f);
    if (!found) {
        free(line);
        return drift_err_set(e, DRIFT_EINVAL,
                             "--draws %s: no column header: not a Stan CSV "
                             "file",
                             a->draws.v[0]);
    }
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line, *comma; !rc && p; p = comma ? comma + 1 : NULL) {
        comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!is_gen(m, p))
            rc = drift_method_column(names, n, p, e);
    }
    free(line);
    for (size_t j = 0; !rc && j < m->n_gen; j++)
        rc = drift_method_column(names, n, m->gen_names[j], e);
    return rc;
}

/* The _rng draws' seed of row r of file k: the seed, the file and the row
 * mixed (splitmix64's finaliser), so that files and rows get unrelated
 * streams. */
static uint64_t row_seed(uint64_t seed, size_t k, size_t r)
{
    uint64_t z = seed ^ ((uint64_t)(k + 1) << 40) ^
                 ((uint64_t)r * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Writes row text's fields (comma-separated, n_cols of them) whose keep
 * flag is set. */
static int copy_fields(FILE *out, char *line, const unsigned char *keep,
                       size_t n_cols)
{
    size_t c = 0;
    int first = 1;
    char *p = line;
    while (c < n_cols) {
        char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strcspn(p, "\r\n");
        if (keep[c]) {
            if (!first)
                fputc(',', out);
            fwrite(p, 1, len, out);
            first = 0;
        }
        c++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return first;
}

/* Input k: its output file written and put in place whole, its rows to the
 * callback. */
static int gen_file(const gen_args *a, size_t k, drift_method_run *r,
                    void *ws, double *theta, double *gen, double *row,
                    drift_err *e)
{
    const drift_model *m = r->m;
    const char *in = a->draws.v[k];
    double *vals;
    size_t n;
    drift_stancsv *csv;
    if (drift_points_from_draws(in, m, 1, &vals, &n, &csv, e))
        return DRIFT_EINVAL;
    size_t nc = csv->n_cols, n_keep = 0;
    unsigned char *keep = drift_malloc_array(nc ? nc : 1, 1);
    FILE *f = fopen(in, "r");
    char path[4096];
    out_path(a, r->out, k, path, sizeof path);
    drift_writer *w = NULL;
    FILE *out = NULL;
    char *line = NULL;
    int rc = DRIFT_OK;
    if (!keep || !f) {
        rc = !keep ? drift_err_set(e, DRIFT_ENOMEM, "out of memory")
                   : drift_err_set(e, DRIFT_EINVAL, "%s: cannot read it",
                                   in);
        goto done;
    }
    for (size_t c = 0; c < nc; c++)
        n_keep += keep[c] = !is_gen(m, csv->names[c]);
    if (r->on_draw && n_keep + m->n_gen != r->n_columns) {
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: its columns are not those of %s: draws "
                           "files of one fit have the same columns",
                           in, a->draws.v[0]);
        goto done;
    }
    if ((rc = drift_writer_open(path, &w, e)))
        goto done;
    out = drift_writer_file(w);
    size_t cap = 0, rr = 0;
    int header_done = 0;
    ssize_t got;
    while (!rc && (got = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#') {
            fputs(line, out);
            continue;
        }
        if (strspn(line, " \t\r\n") == (size_t)got)
            continue;
        if (!header_done) {
            fprintf(out, "# generate_quantities\n"
                         "#   fitted_params = %s\n"
                         "#   model = %s\n"
                         "#   seed = %llu\n",
                    in, r->model, (unsigned long long)r->seed);
            int none = copy_fields(out, line, keep, nc);
            for (size_t j = 0; j < m->n_gen; j++)
                fprintf(out, "%s%s", none && j == 0 ? "" : ",",
                        m->gen_names[j]);
            fputc('\n', out);
            header_done = 1;
            continue;
        }
        if (rr >= n || rr >= csv->n_rows) {
            rc = drift_err_set(e, DRIFT_EIO,
                               "%s: more rows than it was read with "
                               "(changed while read?)",
                               in);
            break;
        }
        if ((rc = m->unconstrain(m->self, vals + rr * m->n_out, theta, e)) ||
            (rc = m->generate(m->self, ws, theta, row_seed(r->seed, k, rr),
                              1, gen, e))) {
            drift_err_prefix(e, "%s, draw %zu", in, rr + 1);
            rc = DRIFT_ENUMERIC;
            break;
        }
        int none = copy_fields(out, line, keep, nc);
        for (size_t j = 0; j < m->n_gen; j++)
            fprintf(out, "%s%.10g", none && j == 0 ? "" : ",", gen[j]);
        fputc('\n', out);
        if (r->on_draw) {
            size_t o = 0;
            for (size_t c = 0; c < nc; c++)
                if (keep[c])
                    row[o++] = csv->values[rr * nc + c];
            memcpy(row + o, gen, m->n_gen * sizeof *gen);
            r->on_draw(r->on_draw_user, (unsigned)k + 1, 0, row,
                       r->n_columns);
        }
        r->rows++;
        rr++;
    }
done:
    free(line);
    if (f)
        fclose(f);
    if (w) { /* nothing of a failed file is put in place */
        int wrc = drift_method_file_end(w, rc, e);
        rc = rc ? rc : wrc;
    }
    if (!rc)
        fprintf(r->diag, "%s: %zu draws of %s -> %s\n", r->who, n, in, path);
    drift_free(keep);
    drift_free(vals);
    drift_stancsv_free(csv);
    return rc;
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const gen_args *a = args;
    const drift_model *m = r->m;
    size_t cap = m->n_rows < 1024 ? (m->n_rows ? m->n_rows : 1) : 1024;
    void *ws = m->workspace_new(m->self, cap);
    double *theta =
        drift_malloc_array(m->dim + m->n_gen + r->n_columns + 1,
                           sizeof(double));
    if (!ws || !theta) {
        if (ws)
            m->workspace_free(m->self, ws);
        drift_free(theta);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    int rc = DRIFT_OK;
    for (size_t k = 0; k < a->draws.n && !rc; k++)
        rc = gen_file(a, k, r, ws, theta, theta + m->dim,
                      theta + m->dim + m->n_gen, e);
    m->workspace_free(m->self, ws);
    drift_free(theta);
    return rc;
}

const drift_method drift_method_generate = {
    .name = "generate",
    .summary = "the generated quantities at every draw of existing draws "
               "files",
    .synopsis = "drift generate MODEL.drift|--model NAME --data FILE "
                "--draws FIT_1.csv [FIT_2.csv ...] [--out FILE] [--seed S]",
    .about = "Evaluates the model's derived and generated blocks at "
             "every draw of existing\nStan CSV files, as CmdStan's "
             "standalone generated quantities: parameters are\nread by "
             "column name, one output per input, each the input with "
             "those columns\nrecomputed (its comment lines and other "
             "columns kept).",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(gen_args),
    .default_out = NULL,
    .seed_help = "S  random seed of the _rng draws (default: clock)",
    .out_help = "FILE  output: FILE for one input, FILE_1.csv ... for "
                "several (default: each input's name with _gq)",
    .own_outputs = 1,
    .no_params_ok = 1,
    .check = check,
    .check_outputs = check_outputs,
    .columns = columns,
    .run = run,
};
