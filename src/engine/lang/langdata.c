/* langdata.c: reading the data of a language model and binding it to the
 * program's schema (see langdata.h).  JSON goes through jansson; CSV,
 * LIBSVM and row stores through the engine's table reader.  Not for
 * evaluating the model. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/util.h"
#include "langdata.h"
#include "parser/front.h"

/* Values in a JSON file beyond this count are refused (2^31). */
#define MAX_VALUES ((size_t)1 << 31)

/* ---- small helpers -------------------------------------------------------- */

/* Reads line `line` (1-based) of a text file into buf (truncated);
 * returns its length, or -1. */
static long read_line(const char *path, size_t line, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cur = 1, n = 0;
    int ch;
    while (cur < line && (ch = getc(f)) != EOF)
        if (ch == '\n')
            cur++;
    if (cur < line) {
        fclose(f);
        return -1;
    }
    while ((ch = getc(f)) != EOF && ch != '\n')
        if (n + 1 < cap)
            buf[n++] = (char)ch;
    if (n && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    fclose(f);
    return (long)n;
}

/* Reports a message of the form "path:LINE:COL: error: text" (what the
 * table reader writes) with the line and a caret; others as they are. */
static void report_table_error(drift_diag *d, const char *path,
                               const char *msg)
{
    size_t plen = strlen(path), line, col;
    int used = 0;
    /* Across ranks, another rank's share may be at fault: "rank R on
     * HOST: " before its message, kept before the report's own words. */
    char who[128] = "";
    const char *q = !strncmp(msg, "rank ", 5) ? strstr(msg, ": ") : NULL;
    if (q && !strncmp(q + 2, path, plen) && (size_t)(q - msg) < 100) {
        snprintf(who, sizeof who, "%.*s: ", (int)(q - msg), msg);
        msg = q + 2;
    }
    if (!strncmp(msg, path, plen) && msg[plen] == ':' &&
        sscanf(msg + plen + 1, "%zu:%zu: error: %n", &line, &col, &used) >= 2 &&
        used > 0) {
        char text[512];
        long n = read_line(path, line, text, sizeof text);
        drift_diag_error_at(d, path, line, col, 1, n >= 0 ? text : NULL,
                            n >= 0 ? (size_t)n : 0, "%s%s", who,
                            msg + plen + 1 + used);
        return;
    }
    /* "path: problem" (a row store's messages): the report names the
     * file itself. */
    if (!strncmp(msg, path, plen) && msg[plen] == ':' && msg[plen + 1] == ' ')
        msg += plen + 2;
    drift_diag_error_file(d, path, "%s%s", who, msg);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcasecmp(s + n - m, suf);
}

/* Whether a data file is JSON: by its name, else by its first byte. */
static int is_json_file(const char *path)
{
    if (has_suffix(path, ".json"))
        return 1;
    if (has_suffix(path, ".csv"))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int ch;
    while ((ch = getc(f)) != EOF && isspace(ch))
        ;
    fclose(f);
    return ch == '{';
}

void drift_dvalues_free(drift_dvalue *vals, size_t n)
{
    if (!vals)
        return;
    for (size_t k = 0; k < n; k++) {
        drift_free(vals[k].name);
        drift_free(vals[k].v);
    }
    drift_free(vals);
}

/* ---- JSON ------------------------------------------------------------------ */

typedef struct jctx {
    const char *file;
    const char *key;
    drift_diag *d;
    drift_dvalue *out;
    size_t pos;
    size_t idx[DRIFT_JSON_MAX_DIMS];
} jctx;

/* "key[i][j]" with 1-based indices of the current position. */
static void jpath(const jctx *c, int depth, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "%.60s", c->key);
    for (int k = 0; k < depth && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, "[%zu]",
                                 c->idx[k] + 1);
}

static int jnumber(jctx *c, json_t *j, int depth)
{
    char where[160];
    double v;
    if (json_is_integer(j)) {
        json_int_t i = json_integer_value(j);
        if (i > ((json_int_t)1 << 53) || i < -((json_int_t)1 << 53)) {
            jpath(c, depth, where, sizeof where);
            drift_diag_error_file(c->d, c->file,
                                  "'%s' is %lld, too large to hold exactly",
                                  where, (long long)i);
            return -1;
        }
        v = (double)i;
    } else if (json_is_real(j)) {
        v = json_real_value(j);
        if (v != floor(v))
            c->out->all_int = 0;
    } else {
        jpath(c, depth, where, sizeof where);
        if (json_is_string(j)) {
            const char *s = json_string_value(j);
            if (!strcasecmp(s, "nan") || !strcasecmp(s, "inf") ||
                !strcasecmp(s, "+inf") || !strcasecmp(s, "-inf") ||
                !strcasecmp(s, "infinity") || !strcasecmp(s, "-infinity"))
                drift_diag_error_file(c->d, c->file,
                                      "'%s' is \"%s\"; data must be finite "
                                      "numbers",
                                      where, s);
            else
                drift_diag_error_file(c->d, c->file,
                                      "'%s' is a string, expected a number",
                                      where);
        } else if (json_is_array(j)) {
            drift_diag_error_file(c->d, c->file,
                                  "'%s' is a list, but '%s' holds numbers at "
                                  "this depth (the lists are ragged)",
                                  where, c->key);
        } else {
            drift_diag_error_file(c->d, c->file,
                                  "'%s' is %s, expected a number", where,
                                  json_is_object(j)   ? "an object"
                                  : json_is_null(j)   ? "null"
                                                      : "a boolean");
        }
        return -1;
    }
    if (!isfinite(v)) {
        jpath(c, depth, where, sizeof where);
        drift_diag_error_file(c->d, c->file, "'%s' is not finite", where);
        return -1;
    }
    c->out->v[c->pos++] = v;
    return 0;
}

static int jfill(jctx *c, json_t *j, int depth)
{
    if (depth == c->out->ndim)
        return jnumber(c, j, depth);
    char where[160];
    if (!json_is_array(j) || json_array_size(j) != c->out->dims[depth]) {
        jpath(c, depth, where, sizeof where);
        if (!json_is_array(j))
            drift_diag_error_file(c->d, c->file,
                                  "'%s' is not a list, but '%s' is a "
                                  "%d-dimensional array",
                                  where, c->key, c->out->ndim);
        else
            drift_diag_error_file(c->d, c->file,
                                  "'%s' has %zu entries, but the first list "
                                  "at this depth has %zu (arrays must be "
                                  "rectangular)",
                                  where, json_array_size(j),
                                  c->out->dims[depth]);
        return -1;
    }
    for (size_t k = 0; k < c->out->dims[depth]; k++) {
        c->idx[depth] = k;
        if (jfill(c, json_array_get(j, k), depth + 1))
            return -1;
    }
    return 0;
}

static int jconvert(const char *file, const char *key, json_t *j,
                    drift_dvalue *out, drift_diag *d)
{
    memset(out, 0, sizeof *out);
    out->all_int = 1;
    json_t *p = j;
    while (json_is_array(p)) {
        if (out->ndim == DRIFT_JSON_MAX_DIMS) {
            drift_diag_error_file(d, file,
                                  "'%s' is nested more than %d lists deep",
                                  key, DRIFT_JSON_MAX_DIMS);
            return -1;
        }
        out->dims[out->ndim++] = json_array_size(p);
        if (json_array_size(p) == 0)
            break;
        p = json_array_get(p, 0);
    }
    size_t n = 1;
    for (int k = 0; k < out->ndim; k++) {
        if (out->dims[k] && n > MAX_VALUES / out->dims[k]) {
            drift_diag_error_file(d, file, "'%s' has too many values", key);
            return -1;
        }
        n *= out->dims[k];
    }
    out->n = n;
    out->name = drift_strdup(key);
    out->v = drift_malloc_array(n ? n : 1, sizeof(double));
    if (!out->name || !out->v) {
        drift_diag_error_file(d, file, "out of memory reading '%s'", key);
        return -1;
    }
    jctx c;
    memset(&c, 0, sizeof c);
    c.file = file;
    c.key = key;
    c.d = d;
    c.out = out;
    if (n == 0)
        return 0;
    return jfill(&c, j, 0);
}

size_t drift_json_parse(const char *buf, size_t len, const char *name,
                        drift_dvalue **vals, size_t *n_vals, drift_diag *d)
{
    *vals = NULL;
    *n_vals = 0;
    size_t before = d->n_errors;
    json_error_t err;
    /* A UTF-8 byte order mark before the document: skipped, as RFC 8259
     * lets a parser do (jansson would say '[' or '{' expected). */
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
        buf += 3;
        len -= 3;
    }
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        char text[512];
        long n = err.line > 0 ? read_line(name, (size_t)err.line, text,
                                          sizeof text)
                              : -1;
        if (err.line > 0)
            drift_diag_error_at(d, name, (size_t)err.line,
                                err.column > 0 ? (size_t)err.column : 1, 1,
                                n >= 0 ? text : NULL, n >= 0 ? (size_t)n : 0,
                                "invalid JSON: %s", err.text);
        else
            drift_diag_error_file(d, name, "invalid JSON: %s", err.text);
        return d->n_errors - before;
    }
    if (!json_is_object(root)) {
        drift_diag_error_file(d, name,
                              "a JSON data file holds one object, "
                              "{\"name\": value, ...}, as CmdStan's do");
        json_decref(root);
        return d->n_errors - before;
    }
    size_t n = json_object_size(root);
    drift_dvalue *out = drift_calloc(n ? n : 1, sizeof *out);
    if (!out) {
        drift_diag_error_file(d, name, "out of memory");
        json_decref(root);
        return d->n_errors - before;
    }
    size_t k = 0;
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (k == n)
            break;
        if (jconvert(name, key, value, &out[k], d)) {
            k++;
            break;
        }
        k++;
    }
    json_decref(root);
    *vals = out;
    *n_vals = k;
    return d->n_errors - before;
}

static size_t read_json_file(const char *path, drift_dsource *s,
                             drift_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        drift_diag_error_file(d, path, "cannot open data file: %s",
                              strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = drift_malloc(cap);
    while (buf) {
        if (len == cap) {
            char *nb = cap > SIZE_MAX / 4 ? NULL : drift_realloc(buf, cap * 2);
            if (!nb) {
                drift_free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        drift_diag_error_file(d, path, "out of memory reading the file");
        return 1;
    }
    if (bad) {
        drift_free(buf);
        drift_diag_error_file(d, path, "read error (is it a directory?)");
        return 1;
    }
    size_t errs = drift_json_parse(buf, len, path, &s->vals, &s->n_vals, d);
    drift_free(buf);
    return errs;
}

/* ---- loading -------------------------------------------------------------- */

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t k = 1; k < n; k++)
        if (!(isalnum((unsigned char)s[k]) || s[k] == '_'))
            return 0;
    return 1;
}

size_t drift_langdata_load(const char *const *files, char *const *sets,
                           size_t n_sets, drift_langdata **out,
                           drift_diag *d)
{
    return drift_langdata_load_share(files, sets, n_sets, NULL, out, d);
}

size_t drift_langdata_load_share(const char *const *files, char *const *sets,
                                 size_t n_sets,
                                 const drift_table_share *share,
                                 drift_langdata **out, drift_diag *d)
{
    size_t before = d->n_errors;
    size_t n_files = 0, n_tables = 0;
    for (const char *const *f = files; f && *f; f++)
        n_files++;
    drift_langdata *ld = drift_calloc(1, sizeof *ld);
    *out = ld;
    if (!ld) {
        drift_diag_error_file(d, "drift", "out of memory");
        return 1;
    }
    ld->src = drift_calloc(n_files + 1, sizeof *ld->src);
    if (!ld->src) {
        drift_diag_error_file(d, "drift", "out of memory");
        return 1;
    }
    for (size_t k = 0; k < n_files; k++) {
        drift_dsource *s = &ld->src[ld->n_src++];
        s->path = drift_strdup(files[k]);
        if (!s->path) {
            drift_diag_error_file(d, files[k], "out of memory");
            continue;
        }
        for (size_t j = 0; j < k; j++)
            if (!strcmp(files[j], files[k]))
                drift_diag_error_file(d, files[k],
                                      "the same data file is given twice "
                                      "with --data");
        if (!drift_rowstore_sniff(files[k]) && is_json_file(files[k])) {
            s->kind = DRIFT_DS_JSON;
            read_json_file(files[k], s, d);
        } else {
            /* A row store is mapped, not read: its rows stay on disk until
             * they are used. */
            s->kind = DRIFT_DS_TABLE;
            drift_err e = {{0}};
            if (share && n_tables++) {
                /* Every rank reads the same files, so every rank refuses
                 * here alike, before any exchange. */
                drift_diag_error_file(d, files[k],
                                      "a second rows file: a run across "
                                      "MPI ranks splits one rows file by "
                                      "rows; join the rows files into one "
                                      "(drift data convert)");
                continue;
            }
            if (share ? drift_table_open_share(files[k], share, &s->table,
                                               &e)
                      : drift_table_open(files[k], &s->table, &e))
                report_table_error(d, files[k], e.msg);
            else if (share)
                ld->rows_total = s->table->share_total;
        }
    }
    if (n_sets) {
        drift_dsource *s = &ld->src[ld->n_src++];
        s->kind = DRIFT_DS_SET;
        s->path = drift_strdup("--data-set");
        s->vals = drift_calloc(n_sets, sizeof *s->vals);
        if (!s->path || !s->vals) {
            drift_diag_error_file(d, "--data-set", "out of memory");
            return d->n_errors - before;
        }
        for (size_t k = 0; k < n_sets; k++) {
            const char *eq = strchr(sets[k], '=');
            size_t nl = eq ? (size_t)(eq - sets[k]) : 0;
            double v;
            if (!eq || !valid_name(sets[k], nl)) {
                drift_diag_error_file(d, "--data-set",
                                      "'%s': expected NAME=VALUE, e.g. "
                                      "--data-set K=10",
                                      sets[k]);
                continue;
            }
            if (drift_parse_double(eq + 1, &v)) {
                drift_diag_error_file(d, "--data-set",
                                      "%s: the value '%s' is not a finite "
                                      "number",
                                      sets[k], eq + 1);
                continue;
            }
            drift_dvalue *dv = &s->vals[s->n_vals];
            int dup = 0;
            for (size_t j = 0; j < s->n_vals; j++)
                if (strlen(s->vals[j].name) == nl &&
                    !strncmp(s->vals[j].name, sets[k], nl))
                    dup = 1;
            if (dup) {
                drift_diag_error_file(d, "--data-set",
                                      "'%.*s' is set twice", (int)nl,
                                      sets[k]);
                continue;
            }
            dv->name = drift_malloc(nl + 1);
            dv->v = drift_malloc(sizeof(double));
            if (!dv->name || !dv->v) {
                drift_free(dv->name);
                drift_free(dv->v);
                drift_diag_error_file(d, "--data-set", "out of memory");
                continue;
            }
            memcpy(dv->name, sets[k], nl);
            dv->name[nl] = '\0';
            dv->v[0] = v;
            dv->n = 1;
            dv->all_int = v == floor(v);
            s->n_vals++;
        }
    }
    return d->n_errors - before;
}

int drift_langdata_add_table(drift_langdata *ld, const drift_data *data,
                             drift_diag *d)
{
    drift_dsource *ns = drift_realloc(ld->src, (ld->n_src + 1) * sizeof *ns);
    drift_table *t = drift_calloc(1, sizeof *t);
    if (ns)
        ld->src = ns;
    if (!ns || !t) {
        drift_free(t);
        drift_diag_error_file(d, data->source, "out of memory");
        return -1;
    }
    drift_dsource *s = &ld->src[ld->n_src];
    memset(s, 0, sizeof *s);
    s->path = drift_strdup(data->source ? data->source : "(memory)");
    if (!s->path) {
        drift_free(t);
        drift_diag_error_file(d, "(memory)", "out of memory");
        return -1;
    }
    t->view = *data;
    t->names = (char **)data->col_names;
    t->values = (double *)data->values;
    s->kind = DRIFT_DS_TABLE;
    s->table = t;
    s->borrowed = 1;
    ld->n_src++;
    return 0;
}

void drift_langdata_free(drift_langdata *ld)
{
    if (!ld)
        return;
    for (size_t k = 0; k < ld->n_src; k++) {
        drift_free(ld->src[k].path);
        if (ld->src[k].borrowed)
            drift_free(ld->src[k].table);
        else
            drift_table_free(ld->src[k].table);
        drift_dvalues_free(ld->src[k].vals, ld->src[k].n_vals);
    }
    drift_free(ld->src);
    for (size_t k = 0; k < ld->n_sd; k++)
        drift_free(ld->sd[k].rb.cols);
    drift_free(ld->sd);
    for (size_t k = 0; k < ld->n_owned; k++)
        drift_free(ld->owned[k]);
    drift_free(ld->owned);
    for (size_t k = 0; k < ld->n_lazy_int; k++)
        drift_free(ld->lazy_int_names[k]);
    drift_free(ld->lazy_int_names);
    drift_free(ld->lazy_int);
    drift_free(ld->chunk_checked);
    drift_free(ld);
}

/* Chunk k of the rows: every lazily checked int variable's values. */
static int check_chunk(const drift_langdata *ld, size_t k, drift_err *e)
{
    size_t from = k * DRIFT_LANGDATA_INT_CHUNK;
    for (size_t v = 0; v < ld->n_lazy_int; v++) {
        const drift_rowbind *rb = &ld->sd[ld->lazy_int[v]].rb;
        const drift_table *t = rb->src->table;
        size_t to = from + DRIFT_LANGDATA_INT_CHUNK;
        if (to > t->view.n_rows)
            to = t->view.n_rows;
        for (size_t i = from; i < to; i++)
            for (size_t c = 0; c < rb->sz; c++) {
                double x = rb->base[i * rb->ld + rb->cols[c]];
                if (x == floor(x) && fabs(x) <= 9007199254740992.0)
                    continue;
                return drift_err_set(
                    e, DRIFT_EDATA,
                    "%s: data row %zu: '%s' is declared int, but column "
                    "'%s' of this row store holds %.17g, though its header "
                    "says the column holds integers: the store is damaged "
                    "or was not written by drift (drift check reads every "
                    "value)",
                    rb->src->path, i + 1, ld->lazy_int_names[v],
                    t->view.col_names[rb->cols[c]], x);
            }
    }
    return DRIFT_OK;
}

int drift_langdata_check_rows(drift_langdata *ld, const drift_rows *b,
                              drift_err *e)
{
    if (!ld || !ld->n_lazy_int || !b)
        return DRIFT_OK;
    size_t last = (size_t)-1;
    for (size_t r = 0; r < b->n; r++) {
        size_t k = drift_rows_at(b, r) / DRIFT_LANGDATA_INT_CHUNK;
        if (k == last || k >= ld->n_chunks ||
            __atomic_load_n(&ld->chunk_checked[k], __ATOMIC_ACQUIRE))
            continue;
        last = k;
        int rc = check_chunk(ld, k, e);
        if (rc)
            return rc;
        __atomic_store_n(&ld->chunk_checked[k], 1, __ATOMIC_RELEASE);
    }
    return DRIFT_OK;
}

/* ---- finding names in the sources ----------------------------------------- */

static const drift_dvalue *find_value(const drift_dsource *s,
                                      const char *name)
{
    for (size_t k = 0; k < s->n_vals; k++)
        if (!strcmp(s->vals[k].name, name))
            return &s->vals[k];
    return NULL;
}

/* The sparse row variable called name in a table, or NULL. */
static const drift_sparse *table_sparse(const drift_table *t,
                                        const char *name)
{
    if (!t || t->view.struct_size < sizeof(drift_data))
        return NULL;
    for (size_t k = 0; k < t->view.n_sparse; k++)
        if (!strcmp(t->view.sparse[k].name, name))
            return &t->view.sparse[k];
    return NULL;
}

/* Whether a table has a column "name" or "name.<...>" (dense). */
static int table_has_dense(const drift_table *t, const char *name)
{
    if (!t)
        return 0;
    size_t n = strlen(name);
    for (size_t c = 0; c < t->view.n_cols; c++) {
        const char *col = t->view.col_names[c];
        if (!strncmp(col, name, n) && (col[n] == '\0' || col[n] == '.'))
            return 1;
    }
    return 0;
}

/* Whether a table gives name: as dense columns or as sparse rows. */
static int table_has(const drift_table *t, const char *name)
{
    return table_has_dense(t, name) || table_sparse(t, name) != NULL;
}

/* The sources that give name: in CSV columns (for rows) or as a JSON or
 * --data-set value.  Returns how many; *first gets the first. */
static size_t sources_of(const drift_langdata *ld, const char *name,
                         const drift_dsource **first,
                         const drift_dsource **second)
{
    size_t n = 0;
    *first = *second = NULL;
    for (size_t k = 0; k < ld->n_src; k++) {
        const drift_dsource *s = &ld->src[k];
        int has = s->kind == DRIFT_DS_TABLE ? table_has(s->table, name)
                                          : find_value(s, name) != NULL;
        if (!has)
            continue;
        if (n == 0)
            *first = s;
        else if (n == 1)
            *second = s;
        n++;
    }
    return n;
}

/* The declared dimensions of a symbol in flat order (arrays, then the
 * element's) as expressions and as (possibly unknown) values. */
static int decl_dims(const drift_sym *s, drift_expr **ex, long *val)
{
    const drift_typeexpr *te = s->decl->type;
    int n = 0;
    for (int k = 0; k < te->n_arr; k++)
        ex[n++] = te->arr_size[k];
    if (te->kind == DRIFT_T_VECTOR || te->kind == DRIFT_T_SPARSE)
        ex[n++] = te->size[0];
    else if (te->kind == DRIFT_T_MATRIX) {
        ex[n++] = te->size[0];
        ex[n++] = te->size[1] ? te->size[1] : te->size[0]; /* square */
    }
    for (int k = 0; k < n; k++)
        if (drift_eval_size(ex[k], &val[k]))
            val[k] = -1;
    return n;
}

/* Parses "name.i.j..." with exactly `want` positive indices. */
static int parse_col(const char *col, const char *name, int want,
                     long *idx)
{
    size_t n = strlen(name);
    if (strncmp(col, name, n))
        return -1;
    const char *p = col + n;
    for (int k = 0; k < want; k++) {
        if (*p != '.')
            return -1;
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v < 1 || v > (1L << 31))
            return -1;
        idx[k] = v;
        p = end;
    }
    return *p ? -1 : 0;
}

static void elem_name(const char *name, int nd, const long *dims, size_t k,
                      char *buf, size_t cap);

/* ---- sizes ------------------------------------------------------------------ */

typedef struct sizer {
    drift_program *p;
    drift_langdata *ld;
    drift_diag *d;
    size_t errors;
    char **origin;          /* per symbol: where its value came from */
} sizer;

static void size_missing(sizer *z, const drift_program *p,
                         const drift_langdata *ld, const drift_sym *s);

static void set_origin(sizer *z, const drift_sym *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void set_origin(sizer *z, const drift_sym *s, const char *fmt, ...)
{
    char buf[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    drift_free(z->origin[s->id]);
    z->origin[s->id] = drift_strdup(buf);
    if (!z->origin[s->id]) {
        drift_diag_error_file(z->d, z->p->src->name, "out of memory");
        z->errors++;
    }
}

/* Binds (or checks) the size named by expression ex to `extent`. */
static void infer(sizer *z, drift_expr *ex, long extent, const char *how)
{
    if (ex->kind != DRIFT_E_NAME || !ex->sym)
        return;
    drift_sym *s = ex->sym;
    int is_size = s->kind == DRIFT_SYM_SIZE ||
                  (s->kind == DRIFT_SYM_DATA && s->decl->type->kind == DRIFT_T_INT &&
                   s->decl->type->n_arr == 0);
    if (!is_size)
        return;
    if (!s->have_value) {
        s->have_value = 1;
        s->value = extent;
        set_origin(z, s, "%s", how);
        return;
    }
    if (s->value != extent) {
        drift_diag_error(z->d, z->p->src, ex->loc,
                         "size '%s' is %ld %s, but %ld %s", s->name, s->value,
                         z->origin[s->id] ? z->origin[s->id] : "", extent,
                         how);
        z->errors++;
    }
}

static void infer_rows_csv(sizer *z, drift_sym *s, const drift_dsource *src)
{
    drift_expr *ex[DRIFT_MAX_ARRAY + 2];
    long val[DRIFT_MAX_ARRAY + 2];
    int nd = decl_dims(s, ex, val);
    if (nd == 0)
        return;
    long mx[DRIFT_MAX_ARRAY + 2] = {0}, idx[DRIFT_MAX_ARRAY + 2];
    const drift_table *t = src->table;
    size_t count = 0;
    for (size_t c = 0; c < t->view.n_cols; c++)
        if (parse_col(t->view.col_names[c], s->name, nd, idx) == 0) {
            count++;
            for (int k = 0; k < nd; k++)
                if (idx[k] > mx[k])
                    mx[k] = idx[k];
        }
    for (int k = 0; k < nd; k++)
        if (mx[k] == 0) {
            drift_diag_error(z->d, z->p->src, s->loc,
                             "%s has columns for rows variable '%s', but "
                             "none named as its elements (%s.1, %s.2, ...)",
                             src->path, s->name, s->name, s->name);
            z->errors++;
            return;
        }
    /* The largest indices imply the shape; every element needs its column
     * (so a stray x.99999999 cannot imply a huge vector). */
    size_t want = 1;
    for (int k = 0; k < nd; k++)
        want = want > count ? want : want * (size_t)mx[k];
    if (want != count) {
        char biggest[160], missing[160] = "";
        size_t used = (size_t)snprintf(biggest, sizeof biggest, "%s", s->name);
        for (int k = 0; k < nd && used < sizeof biggest; k++)
            used += (size_t)snprintf(biggest + used, sizeof biggest - used,
                                     ".%ld", mx[k]);
        /* Name the first missing element when the shape is plausible. */
        for (size_t e = 0; want > count && want <= 4 * count + 16 && e < want;
             e++) {
            elem_name(s->name, nd, mx, e, missing, sizeof missing);
            if (drift_table_column(t, missing) < 0)
                break;
            missing[0] = '\0';
        }
        if (missing[0])
            drift_diag_error(z->d, z->p->src, s->loc,
                             "rows variable '%s' has columns up to %s in %s, "
                             "but no column '%s'",
                             s->name, biggest, src->path, missing);
        else
            drift_diag_error(z->d, z->p->src, s->loc,
                             "%s has %zu columns for rows variable '%s', but "
                             "its largest indices (%s) do not match: each "
                             "element needs exactly one column",
                             src->path, count, s->name, biggest);
        z->errors++;
        return;
    }
    for (int k = 0; k < nd; k++) {
        char how[300];
        snprintf(how, sizeof how, "from the columns of '%s' in %s", s->name,
                 src->path);
        infer(z, ex[k], mx[k], how);
    }
}

/* A rows variable that a table gives in the other encoding (dense
 * columns for a sparse_vector, sparse rows for a vector): reported, and
 * 1 returned. */
static int sparse_mismatch(sizer *z, drift_sym *s, const drift_dsource *src)
{
    int want_sparse = s->decl->type->kind == DRIFT_T_SPARSE;
    const drift_table *t = src->table;
    if (want_sparse && !table_sparse(t, s->name) &&
        table_has_dense(t, s->name)) {
        drift_diag_error(z->d, z->p->src, s->loc,
                         "rows variable '%s' is declared sparse_vector, but "
                         "%s gives it as dense columns (%s.1, %s.2, ...): "
                         "declare it vector, or give sparse rows (a LIBSVM "
                         "file, or a row store converted from one)",
                         s->name, src->path, s->name, s->name);
        z->errors++;
        return 1;
    }
    if (!want_sparse && table_sparse(t, s->name)) {
        char ty[128];
        drift_type_format(&s->type, ty, sizeof ty);
        drift_diag_error(z->d, z->p->src, s->loc,
                         "%s gives '%s' as sparse rows (LIBSVM features), but "
                         "it is declared %s: declare it %s : "
                         "sparse_vector[D] and use it in dot(%s, w)",
                         src->path, s->name, ty, s->name, s->name);
        z->errors++;
        return 1;
    }
    return 0;
}

/* A sparse_vector no source gives (its size is then unknown too): says
 * which sparse rows the data have instead. */
static void missing_sparse(sizer *z, drift_sym *s)
{
    char have[300] = "";
    size_t used = 0;
    for (size_t j = 0; j < z->ld->n_src; j++) {
        const drift_dsource *src = &z->ld->src[j];
        if (src->kind != DRIFT_DS_TABLE || !src->table ||
            src->table->view.struct_size < sizeof(drift_data))
            continue;
        for (size_t k = 0; k < src->table->view.n_sparse && used < 200; k++) {
            int w = snprintf(have + used, sizeof have - used,
                             "%s'%s' in %s", used ? ", " : "",
                             src->table->view.sparse[k].name, src->path);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    char ty[128];
    drift_type_format(&s->type, ty, sizeof ty);
    drift_diag_error(z->d, z->p->src, s->loc,
                     "rows variable '%s : %s' is in no data file: expected "
                     "sparse rows named '%s' (a LIBSVM file's features are "
                     "'x', its labels 'y'; or a row store converted from "
                     "one)%s%s",
                     s->name, ty, s->name, used ? "; the data have " : "",
                     have);
    z->errors++;
}

/* The size of a sparse_vector: at least the data's dimension (one more
 * than the largest feature index), bound to it when nothing else gives
 * it; larger is allowed (a held-out file need not use the last
 * features), smaller is an error naming both. */
static void infer_sparse(sizer *z, drift_sym *s, const drift_dsource *src,
                         const drift_sparse *sp)
{
    drift_expr *ex = s->decl->type->size[0];
    if (sp->dim > ((size_t)1 << 31)) {
        drift_diag_error(z->d, z->p->src, s->loc,
                         "the sparse rows '%s' in %s have %zu features, "
                         "more than drift allows (2^31)",
                         s->name, src->path, sp->dim);
        z->errors++;
        return;
    }
    drift_sym *size = ex->kind == DRIFT_E_NAME ? ex->sym : NULL;
    int is_size = size && (size->kind == DRIFT_SYM_SIZE ||
                           (size->kind == DRIFT_SYM_DATA &&
                            size->decl->type->kind == DRIFT_T_INT &&
                            size->decl->type->n_arr == 0));
    if (is_size && !size->have_value) {
        size->have_value = 1;
        size->value = (long)sp->dim;
        set_origin(z, size,
                   "from the sparse rows '%s' in %s (their largest feature "
                   "index)",
                   s->name, src->path);
        return;
    }
    long v;
    if (drift_eval_size(ex, &v) || v >= (long)sp->dim)
        return;
    if (is_size)
        drift_diag_error(z->d, z->p->src, ex->loc,
                         "size '%s' is %ld %s, but the sparse rows '%s' in %s "
                         "have feature indices up to %zu: '%s' must be at "
                         "least %zu",
                         size->name, v,
                         z->origin[size->id] ? z->origin[size->id] : "",
                         s->name, src->path, sp->dim, size->name, sp->dim);
    else
        drift_diag_error(z->d, z->p->src, ex->loc,
                         "sparse_vector '%s' has size %ld, but its rows in %s "
                         "have feature indices up to %zu",
                         s->name, v, src->path, sp->dim);
    z->errors++;
}

static void infer_value(sizer *z, drift_sym *s, const drift_dsource *src,
                        const drift_dvalue *v, int rows)
{
    drift_expr *ex[DRIFT_MAX_ARRAY + 2];
    long val[DRIFT_MAX_ARRAY + 2];
    int nd = decl_dims(s, ex, val);
    if (v->ndim != nd + rows)
        return; /* reported when the values are bound */
    for (int k = 0; k < nd; k++) {
        char how[300];
        snprintf(how, sizeof how, "from the shape of '%s' in %s", s->name,
                 src->path);
        infer(z, ex[k], (long)v->dims[k + rows], how);
    }
}

size_t drift_langdata_bind_sizes(drift_program *p, drift_langdata *ld,
                                 int placeholder, drift_diag *d)
{
    sizer z;
    memset(&z, 0, sizeof z);
    z.p = p;
    z.ld = ld;
    z.d = d;
    z.origin = drift_calloc(p->n_syms + 1, sizeof *z.origin);
    if (!z.origin) {
        drift_diag_error_file(d, p->src->name, "out of memory");
        return 1;
    }

    /* N: every CSV file and every rows variable in JSON agree on it. */
    const char *n_from = NULL;
    int have_n = 0;
    size_t N = 0;
    for (size_t k = 0; k < ld->n_src; k++) {
        const drift_dsource *s = &ld->src[k];
        if (s->kind != DRIFT_DS_TABLE || !s->table)
            continue;
        if (!have_n) {
            N = s->table->view.n_rows;
            n_from = s->path;
            have_n = 1;
        } else if (s->table->view.n_rows != N) {
            drift_diag_error_file(d, s->path,
                                  "the file has %zu rows, but %s has %zu; "
                                  "every rows file needs one row per datum",
                                  s->table->view.n_rows, n_from, N);
            z.errors++;
        }
    }
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_ROWS)
            continue;
        for (size_t j = 0; j < ld->n_src; j++) {
            const drift_dsource *src = &ld->src[j];
            const drift_dvalue *v =
                src->kind == DRIFT_DS_JSON ? find_value(src, s->name) : NULL;
            if (!v || v->ndim < 1)
                continue;
            if (ld->rows_total) {
                drift_diag_error_file(d, src->path,
                                      "rows variable '%s' is given in JSON: "
                                      "a run across MPI ranks splits the "
                                      "rows of a CSV, LIBSVM or row store "
                                      "file; put the rows there",
                                      s->name);
                z.errors++;
                continue;
            }
            if (!have_n) {
                N = v->dims[0];
                n_from = src->path;
                have_n = 1;
            } else if (v->dims[0] != N) {
                drift_diag_error_file(d, src->path,
                                      "rows variable '%s' has %zu entries, "
                                      "but %s gives %zu rows",
                                      s->name, v->dims[0], n_from, N);
                z.errors++;
            }
        }
    }
    /* Across ranks the rows here are a share; N is every share's. */
    size_t N_all = ld->rows_total ? (size_t)ld->rows_total : N;
    /* An "N" in a JSON file must agree (CmdStan data often carries it),
     * unless the program declares an N of its own (the number of rows is
     * then N__). */
    int own_n = 0;
    for (size_t k = 0; k < p->n_syms; k++)
        own_n |= (p->syms[k]->kind == DRIFT_SYM_DATA ||
                  p->syms[k]->kind == DRIFT_SYM_ROWS) &&
                 !strcmp(p->syms[k]->name, "N");
    for (size_t j = 0; j < ld->n_src && !own_n; j++) {
        const drift_dsource *src = &ld->src[j];
        const drift_dvalue *v =
            src->kind != DRIFT_DS_TABLE ? find_value(src, "N") : NULL;
        if (!v)
            continue;
        if (v->ndim != 0 || !v->all_int || v->v[0] < 0) {
            drift_diag_error_file(d, src->path,
                                  "'N' must be a non-negative integer (the "
                                  "number of rows)");
            z.errors++;
        } else if (!have_n) {
            N = N_all = (size_t)v->v[0];
            n_from = src->path;
            have_n = 1;
        } else if ((size_t)v->v[0] != N_all) {
            drift_diag_error_file(d, src->path,
                                  "'N' is %zu, but %s has %zu rows; N is "
                                  "always the number of rows",
                                  (size_t)v->v[0], n_from, N_all);
            z.errors++;
        }
    }
    ld->N = N;

    /* Explicit values of sizes and int data scalars. */
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind == DRIFT_SYM_N) {
            s->have_value = 1;
            s->value = (long)N_all;
            continue;
        }
        int int_scalar = s->kind == DRIFT_SYM_SIZE ||
                         (s->kind == DRIFT_SYM_DATA &&
                          s->decl->type->kind == DRIFT_T_INT &&
                          s->decl->type->n_arr == 0);
        s->have_value = 0;
        if (!int_scalar)
            continue;
        for (size_t j = 0; j < ld->n_src; j++) {
            const drift_dsource *src = &ld->src[j];
            const drift_dvalue *v =
                src->kind != DRIFT_DS_TABLE ? find_value(src, s->name) : NULL;
            if (!v || v->ndim != 0 || !v->all_int)
                continue; /* a wrong shape is reported with the values */
            if (s->have_value) {
                drift_diag_error_file(d, src->path,
                                      "'%s' is given twice: here and %s",
                                      s->name, z.origin[s->id]);
                z.errors++;
                continue;
            }
            if (v->v[0] < 0 || v->v[0] > (double)(1L << 31)) {
                drift_diag_error_file(d, src->path,
                                      "size '%s' is %g; sizes are integers "
                                      "from 0 to 2^31",
                                      s->name, v->v[0]);
                z.errors++;
                continue;
            }
            s->have_value = 1;
            s->value = (long)v->v[0];
            set_origin(&z, s, "in %s", src->path);
        }
    }

    /* Sizes the shapes of the data imply. */
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_ROWS && s->kind != DRIFT_SYM_DATA)
            continue;
        int sparse = s->decl->type->kind == DRIFT_T_SPARSE;
        for (size_t j = 0; j < ld->n_src; j++) {
            const drift_dsource *src = &ld->src[j];
            if (src->kind == DRIFT_DS_TABLE) {
                if (s->kind != DRIFT_SYM_ROWS)
                    continue;
                if (sparse_mismatch(&z, s, src))
                    continue;
                if (!sparse && table_has(src->table, s->name))
                    infer_rows_csv(&z, s, src);
            } else {
                const drift_dvalue *v = find_value(src, s->name);
                if (v && sparse) {
                    drift_diag_error(d, p->src, s->loc,
                                     "rows variable '%s' is declared "
                                     "sparse_vector, but %s gives it as "
                                     "JSON values; sparse rows come from a "
                                     "LIBSVM file or a row store converted "
                                     "from one (or declare it vector)",
                                     s->name, src->path);
                    z.errors++;
                } else if (v) {
                    infer_value(&z, s, src, v, s->kind == DRIFT_SYM_ROWS);
                }
            }
        }
    }
    /* Sparse rows last, as a lower bound: whatever else gave their size
     * must be at least the data's dimension. */
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_ROWS || s->decl->type->kind != DRIFT_T_SPARSE)
            continue;
        const drift_dsource *given = NULL;
        for (size_t j = 0; j < ld->n_src; j++) {
            const drift_dsource *src = &ld->src[j];
            const drift_sparse *sp = src->kind == DRIFT_DS_TABLE
                                         ? table_sparse(src->table, s->name)
                                         : NULL;
            if (sp)
                infer_sparse(&z, s, src, sp);
            if (sp || (src->kind == DRIFT_DS_TABLE &&
                       table_has(src->table, s->name)) ||
                (src->kind != DRIFT_DS_TABLE && find_value(src, s->name)))
                given = src;
        }
        if (!given && !placeholder)
            missing_sparse(&z, s);
    }

    /* Whatever is left is given nowhere (unless an error above already
     * explains why). */
    for (size_t k = 0; k < p->n_syms && !z.errors; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_SIZE || s->have_value)
            continue;
        if (placeholder) {
            s->have_value = 1;
            s->value = 1;
            continue;
        }
        size_missing(&z, p, ld, s);
    }
    for (size_t k = 0; k < p->n_syms; k++)
        drift_free(z.origin[k]);
    drift_free(z.origin);
    return z.errors;
}

/* ---- sizes from indices ------------------------------------------------------ */

/* An expression x[g] in the statements where g is an int rows variable
 * and x's first dimension was declared with size `size`. */
typedef struct index_use {
    const drift_expr *use;
    const drift_sym *base, *index;
} index_use;

static int find_index_use(const drift_expr *e, const drift_sym *size,
                          index_use *u)
{
    if (!e)
        return 0;
    if (e->kind == DRIFT_E_INDEX && e->a->kind == DRIFT_E_NAME && e->a->sym &&
        e->a->sym->decl && e->args && e->args->kind == DRIFT_E_NAME &&
        e->args->sym && e->args->sym->kind == DRIFT_SYM_ROWS &&
        e->args->sym->decl->type->kind == DRIFT_T_INT) {
        const drift_typeexpr *te = e->a->sym->decl->type;
        const drift_expr *first = te->n_arr ? te->arr_size[0] : te->size[0];
        if (first && first->kind == DRIFT_E_NAME && first->sym == size) {
            u->use = e;
            u->base = e->a->sym;
            u->index = e->args->sym;
            return 1;
        }
    }
    if (find_index_use(e->a, size, u) || find_index_use(e->b, size, u))
        return 1;
    for (const drift_expr *a = e->args; a; a = a->next)
        if (find_index_use(a, size, u))
            return 1;
    return 0;
}

/* The largest value of a rows variable's column in the data, or NaN. */
static double largest_value(const drift_langdata *ld, const char *name)
{
    double mx = NAN;
    for (size_t j = 0; j < ld->n_src; j++) {
        const drift_dsource *src = &ld->src[j];
        if (src->kind == DRIFT_DS_TABLE && src->table) {
            const drift_data *v = &src->table->view;
            long c = drift_data_column(v, name);
            if (c < 0 || !v->values)
                continue;
            for (size_t i = 0; i < v->n_rows; i++) {
                double x = v->values[i * v->row_stride + (size_t)c];
                if (isnan(mx) || x > mx)
                    mx = x;
            }
        } else {
            const drift_dvalue *dv = find_value(src, name);
            for (size_t i = 0; dv && i < dv->n; i++)
                if (isnan(mx) || dv->v[i] > mx)
                    mx = dv->v[i];
        }
    }
    return mx;
}

/* A size nothing gives: when a rows variable indexes what it sizes (a
 * group parameter a[g]), the message names the size to set and the
 * largest index the data hold. */
static void size_missing(sizer *z, const drift_program *p,
                         const drift_langdata *ld, const drift_sym *s)
{
    index_use u = {0};
    for (int k = DRIFT_BLOCK_PRIOR; k < DRIFT_N_BLOCKS && !u.use; k++)
        for (const drift_stmt *st = p->block[k] ? p->block[k]->stmts : NULL;
             st && !u.use; st = st->next) {
            if (find_index_use(st->lhs, s, &u) ||
                find_index_use(st->value, s, &u))
                break;
            for (const drift_expr *a = st->args; a; a = a->next)
                if (find_index_use(a, s, &u))
                    break;
        }
    double mx = u.use ? largest_value(ld, u.index->name) : NAN;
    if (!u.use || !(mx >= 1) || mx != floor(mx) || mx > 2147483647.0) {
        drift_diag_error(z->d, p->src, s->loc,
                         "size '%s' is not given: set it with --data-set "
                         "%s=VALUE or in a JSON data file, or give data "
                         "whose shape implies it",
                         s->name, s->name);
        z->errors++;
        return;
    }
    drift_diag_error(z->d, p->src, s->loc,
                     "size '%s' is not given: '%s' is indexed by the rows "
                     "variable '%s', whose largest value in the data is "
                     "%.0f; set --data-set %s=%.0f (or the number of groups, "
                     "if larger), or give %s in a JSON data file",
                     s->name, u.base->name, u.index->name, mx, s->name, mx,
                     s->name);
    drift_diag_note(z->d, p->src, u.use->loc, "'%s' indexes '%s' here",
                    u.index->name, u.base->name);
    z->errors++;
}

/* ---- values ---------------------------------------------------------------- */

void drift_langdata_row_error(drift_diag *d, const drift_rowbind *rb,
                              size_t i, size_t k, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const drift_dsource *src = rb->src;
    if (src && src->kind == DRIFT_DS_TABLE && src->table &&
        src->table->view.first_line) {
        size_t line = src->table->view.first_line + i;
        size_t field = rb->cols[k];
        char text[4096];
        long n = read_line(src->path, line, text, sizeof text);
        size_t col = 1, width = 1;
        if (n >= 0) {
            size_t f = 0, q = 0;
            while (q < (size_t)n && f < field) {
                if (text[q] == ',')
                    f++;
                q++;
            }
            col = q + 1;
            size_t e = q;
            while (e < (size_t)n && text[e] != ',')
                e++;
            width = e > q ? e - q : 1;
        }
        drift_diag_error_at(d, src->path, line, col, width,
                            n >= 0 ? text : NULL, n >= 0 ? (size_t)n : 0,
                            "%s (column '%s', row %zu)", msg,
                            src->table->view.col_names[field], i + 1);
        return;
    }
    char where[128];
    if (rb->sz == 1)
        snprintf(where, sizeof where, "%s[%zu]", rb->name, i + 1);
    else
        snprintf(where, sizeof where, "%s[%zu], element %zu", rb->name,
                 i + 1, k + 1);
    drift_diag_error_file(d, src ? src->path : "(data)", "'%s': %s", where,
                          msg);
}

/* The element name "x.i.j" of flat element k of a symbol with dims. */
static void elem_name(const char *name, int nd, const long *dims, size_t k,
                      char *buf, size_t cap)
{
    long idx[DRIFT_MAX_ARRAY + 2];
    for (int j = nd - 1; j >= 0; j--) {
        idx[j] = (long)(k % (size_t)dims[j]) + 1;
        k /= (size_t)dims[j];
    }
    size_t used = (size_t)snprintf(buf, cap, "%s", name);
    for (int j = 0; j < nd && used < cap; j++)
        used += (size_t)snprintf(buf + used, cap - used, ".%ld", idx[j]);
}

static void describe_type(const drift_sym *s, char *buf, size_t cap)
{
    drift_type_format(&s->type, buf, cap);
}

static size_t bind_rows_csv(drift_program *p, drift_langdata *ld,
                            drift_sym *s, const drift_dsource *src,
                            drift_diag *d)
{
    drift_symdata *sd = &ld->sd[s->id];
    drift_expr *ex[DRIFT_MAX_ARRAY + 2];
    long dims[DRIFT_MAX_ARRAY + 2];
    int nd = decl_dims(s, ex, dims);
    size_t sz = 1;
    for (int k = 0; k < nd; k++)
        sz *= (size_t)(dims[k] > 0 ? dims[k] : 0);
    const drift_table *t = src->table;
    sd->rb.cols = drift_calloc(sz ? sz : 1, sizeof(size_t));
    if (!sd->rb.cols) {
        drift_diag_error_file(d, src->path, "out of memory");
        return 1;
    }
    /* A view into the table (for a row store, into the map): rows are
     * never copied. */
    sd->rb.sz = sz;
    sd->rb.base = t->view.values;
    sd->rb.ld = t->view.row_stride;
    sd->rb.src = src;
    sd->rb.name = s->name;
    sd->rb.contiguous = 1;
    sd->rb.mapped = t->kind == DRIFT_TABLE_ROWSTORE;
    for (size_t k = 0; k < sz; k++) {
        char col[160];
        elem_name(s->name, nd, dims, k, col, sizeof col);
        long c = drift_table_column(t, col);
        if (c < 0) {
            char ty[128];
            describe_type(s, ty, sizeof ty);
            drift_diag_error(d, p->src, s->loc,
                             "rows variable '%s : %s' needs a column '%s', "
                             "but %s has none",
                             s->name, ty, col, src->path);
            return 1;
        }
        sd->rb.cols[k] = (size_t)c;
        if (k && sd->rb.cols[k] != sd->rb.cols[0] + k)
            sd->rb.contiguous = 0;
    }
    /* Columns the schema does not expect (x.9 when D = 8) are a sign of a
     * wrong size. */
    long idx[DRIFT_MAX_ARRAY + 2];
    for (size_t c = 0; c < t->view.n_cols; c++) {
        if (parse_col(t->view.col_names[c], s->name, nd, idx))
            continue;
        for (int k = 0; k < nd; k++)
            if (idx[k] > dims[k]) {
                char ty[128];
                describe_type(s, ty, sizeof ty);
                drift_diag_error(d, p->src, s->loc,
                                 "%s has a column '%s', outside rows "
                                 "variable '%s : %s'",
                                 src->path, t->view.col_names[c], s->name,
                                 ty);
                return 1;
            }
    }
    return 0;
}

/* A sparse_vector to the table's sparse rows of the same name: a view,
 * never a copy (a row store's stay in the map). */
static size_t bind_rows_sparse(drift_program *p, drift_langdata *ld,
                               drift_sym *s, const drift_dsource *src,
                               drift_diag *d)
{
    drift_symdata *sd = &ld->sd[s->id];
    const drift_sparse *sp = table_sparse(src->table, s->name);
    long D = s->type.dim[0].n;
    if (!sp) {
        drift_diag_error(d, p->src, s->loc,
                         "rows variable '%s' is declared sparse_vector, but "
                         "%s has no sparse rows of that name",
                         s->name, src->path);
        return 1;
    }
    if (D < 0 || (size_t)D < sp->dim) {
        /* Sizing reports a size name too small; this is a literal one. */
        char ty[128];
        describe_type(s, ty, sizeof ty);
        drift_diag_error(d, p->src, s->loc,
                         "rows variable '%s : %s' is too short for its rows "
                         "in %s, whose feature indices go up to %zu",
                         s->name, ty, src->path, sp->dim);
        return 1;
    }
    sd->rb.sp = sp;
    sd->rb.sz = (size_t)D;
    sd->rb.src = src;
    sd->rb.name = s->name;
    sd->rb.mapped = src->table->kind == DRIFT_TABLE_ROWSTORE;
    return 0;
}

static size_t bind_rows_json(drift_program *p, drift_langdata *ld,
                             drift_sym *s, const drift_dsource *src,
                             const drift_dvalue *v, drift_diag *d)
{
    drift_symdata *sd = &ld->sd[s->id];
    drift_expr *ex[DRIFT_MAX_ARRAY + 2];
    long dims[DRIFT_MAX_ARRAY + 2];
    int nd = decl_dims(s, ex, dims);
    int ok = v->ndim == nd + 1 && v->dims[0] == ld->N;
    size_t sz = 1;
    for (int k = 0; ok && k < nd; k++) {
        ok = (long)v->dims[k + 1] == dims[k];
        sz *= v->dims[k + 1];
    }
    if (!ok) {
        char ty[128];
        describe_type(s, ty, sizeof ty);
        drift_diag_error_file(d, src->path,
                              "'%s' should hold one %s per row (%zu rows), "
                              "but its shape differs (%d-dimensional, "
                              "outer length %zu)",
                              s->name, ty, ld->N, v->ndim,
                              v->ndim ? v->dims[0] : 0);
        drift_diag_note(d, p->src, s->loc, "'%s' is declared here", s->name);
        return 1;
    }
    sd->rb.cols = drift_calloc(sz ? sz : 1, sizeof(size_t));
    if (!sd->rb.cols) {
        drift_diag_error_file(d, src->path, "out of memory");
        return 1;
    }
    for (size_t k = 0; k < sz; k++)
        sd->rb.cols[k] = k;
    sd->rb.sz = sz;
    sd->rb.base = v->v;
    sd->rb.ld = sz;
    sd->rb.contiguous = 1;
    sd->rb.src = src;
    sd->rb.name = s->name;
    return 0;
}

/* A row store's values as drift check reads them: every value of the
 * rows variable finite, and an integer where the variable is declared
 * int or the store's header says its column is, as a CSV file's are
 * checked when read (a store's data section has no checksum: a flipped
 * bit, or a store another tool wrote, shows here).  1 after reporting the
 * first that is not. */
static size_t check_store_values(const drift_langdata *ld, drift_sym *s,
                                 drift_diag *d)
{
    const drift_rowbind *rb = &ld->sd[s->id].rb;
    const drift_table *t = rb->src->table;
    int want_int = s->decl->type->kind == DRIFT_T_INT;
    for (size_t i = 0; i < ld->N; i++)
        for (size_t k = 0; k < rb->sz; k++) {
            double x = rb->base[i * rb->ld + rb->cols[k]];
            const char *col = t->view.col_names[rb->cols[k]];
            int flagged = t->rs.col_types && t->rs.col_types[rb->cols[k]];
            if (!isfinite(x)) {
                drift_langdata_row_error(d, rb, i, k,
                                         "column '%s' of this row store "
                                         "holds %g; data must be finite",
                                         col, x);
                return 1;
            }
            if ((want_int || flagged) &&
                (x != floor(x) || fabs(x) > 9007199254740992.0)) {
                if (want_int)
                    drift_langdata_row_error(d, rb, i, k,
                                             "'%s' is declared int, but "
                                             "column '%s' holds %.17g",
                                             s->name, col, x);
                else
                    drift_langdata_row_error(d, rb, i, k,
                                             "column '%s' is an int column "
                                             "by this row store's header, "
                                             "but holds %.17g: the store is "
                                             "damaged",
                                             col, x);
                return 1;
            }
        }
    return 0;
}

/* Adds s (an int rows variable of the mapped row store t) to those
 * drift_langdata_check_rows checks.  1 when out of memory (reported). */
static size_t lazy_int_rows(drift_langdata *ld, drift_sym *s,
                            const drift_table *t, drift_diag *d)
{
    size_t chunks = (t->view.n_rows + DRIFT_LANGDATA_INT_CHUNK - 1) /
                    DRIFT_LANGDATA_INT_CHUNK;
    if (!ld->chunk_checked || ld->n_chunks < chunks) {
        unsigned char *c = drift_calloc(chunks ? chunks : 1, 1);
        if (!c)
            goto oom;
        drift_free(ld->chunk_checked);
        ld->chunk_checked = c;
        ld->n_chunks = chunks;
    }
    size_t *ids = drift_realloc(ld->lazy_int,
                                (ld->n_lazy_int + 1) * sizeof *ids);
    if (!ids)
        goto oom;
    ld->lazy_int = ids;
    char **names = drift_realloc(ld->lazy_int_names,
                                 (ld->n_lazy_int + 1) * sizeof *names);
    if (!names)
        goto oom;
    ld->lazy_int_names = names;
    if (!(names[ld->n_lazy_int] = drift_strdup(s->name)))
        goto oom;
    ids[ld->n_lazy_int++] = (size_t)s->id;
    /* A new variable: every chunk is to be read again for it. */
    memset(ld->chunk_checked, 0, ld->n_chunks);
    return 0;
oom:
    drift_diag_error_file(d, NULL, "out of memory");
    return 1;
}

/* Checks that an int rows variable holds integers.  A row store records
 * per column whether every value is an integer, so its rows are not read
 * (a pass over data larger than memory before sampling), unless drift
 * check reads every row (check_store_values). */
static size_t check_int_rows(drift_langdata *ld, drift_sym *s, drift_diag *d)
{
    const drift_rowbind *rb = &ld->sd[s->id].rb;
    const drift_table *t = rb->src ? rb->src->table : NULL;
    if (t && t->kind == DRIFT_TABLE_ROWSTORE && t->rs.col_types) {
        if (ld->check_mapped)
            return 0; /* check_store_values reads them all */
        for (size_t k = 0; k < rb->sz; k++)
            if (t->rs.col_types[rb->cols[k]] != 1) {
                drift_diag_error_file(d, rb->src->path,
                                      "'%s' is declared int, but column '%s' "
                                      "of this row store holds values that "
                                      "are not integers (see drift data "
                                      "info)",
                                      s->name,
                                      t->view.col_names[rb->cols[k]]);
                return 1;
            }
        /* The header's word for now; the values as evaluation reads
         * them. */
        return lazy_int_rows(ld, s, t, d);
    }
    for (size_t i = 0; i < ld->N; i++)
        for (size_t k = 0; k < rb->sz; k++) {
            double x = rb->base[i * rb->ld + rb->cols[k]];
            if (x != floor(x) || fabs(x) > 9007199254740992.0) {
                drift_langdata_row_error(d, rb, i, k,
                                         "'%s' is declared int, but the "
                                         "value is %.17g",
                                         s->name, x);
                return 1;
            }
        }
    return 0;
}

static size_t bind_data(drift_program *p, drift_langdata *ld, drift_sym *s,
                        int placeholder, drift_diag *d)
{
    drift_symdata *sd = &ld->sd[s->id];
    const drift_dsource *a, *b;
    size_t n = sources_of(ld, s->name, &a, &b);
    char ty[128];
    describe_type(s, ty, sizeof ty);
    drift_expr *ex[DRIFT_MAX_ARRAY + 2];
    long dims[DRIFT_MAX_ARRAY + 2];
    int nd = decl_dims(s, ex, dims);
    size_t want = 1;
    for (int k = 0; k < nd; k++)
        want *= (size_t)(dims[k] > 0 ? dims[k] : 0);
    if (n == 0) {
        if (placeholder) {
            double *ones = drift_malloc_array(want ? want : 1, sizeof(double));
            double **no = drift_realloc(ld->owned,
                                        (ld->n_owned + 1) * sizeof *no);
            if (!ones || !no) {
                drift_free(ones);
                if (no)
                    ld->owned = no;
                drift_diag_error_file(d, p->src->name, "out of memory");
                return 1;
            }
            ld->owned = no;
            ld->owned[ld->n_owned++] = ones;
            for (size_t k = 0; k < want; k++)
                ones[k] = 1;
            sd->v = ones;
            sd->n = want;
            return 0;
        }
        drift_diag_error(d, p->src, s->loc,
                         "'%s : %s' is declared in the data block but no "
                         "data source gives it: add it to a JSON data file%s",
                         s->name, ty,
                         nd == 0 ? " or use --data-set NAME=VALUE" : "");
        return 1;
    }
    if (n > 1) {
        drift_diag_error(d, p->src, s->loc,
                         "'%s' is given twice: in %s and in %s", s->name,
                         a->path, b->path);
        return 1;
    }
    if (a->kind == DRIFT_DS_TABLE) {
        drift_diag_error(d, p->src, s->loc,
                         "'%s' is a data-block value, but it is given as "
                         "columns of %s (CSV files give rows variables); "
                         "put it in a JSON file%s",
                         s->name, a->path,
                         nd == 0 ? " or use --data-set" : "");
        return 1;
    }
    const drift_dvalue *v = find_value(a, s->name);
    int ok = v->ndim == nd;
    for (int k = 0; ok && k < nd; k++)
        ok = (long)v->dims[k] == dims[k];
    if (!ok) {
        char got[96];
        if (v->ndim == 0)
            snprintf(got, sizeof got, "a number");
        else if (v->ndim == 1)
            snprintf(got, sizeof got, "a list of %zu", v->dims[0]);
        else
            snprintf(got, sizeof got, "a %d-dimensional array (%zu x %zu%s)",
                     v->ndim, v->dims[0], v->dims[1],
                     v->ndim > 2 ? " x ..." : "");
        drift_diag_error_file(d, a->path, "'%s' is declared %s, but the file "
                                          "gives %s",
                              s->name, ty, got);
        drift_diag_note(d, p->src, s->loc, "'%s' is declared here", s->name);
        return 1;
    }
    if (s->decl->type->kind == DRIFT_T_INT && !v->all_int) {
        size_t k = 0;
        while (k < v->n && v->v[k] == floor(v->v[k]))
            k++;
        drift_diag_error_file(d, a->path,
                              "'%s' is declared int, but holds %.17g", s->name,
                              k < v->n ? v->v[k] : 0.0);
        return 1;
    }
    sd->v = v->v;
    sd->n = v->n;
    sd->src = a;
    return 0;
}

size_t drift_langdata_bind_values(drift_program *p, drift_langdata *ld,
                                  int placeholder, drift_diag *d)
{
    size_t errors = 0;
    ld->sd = drift_calloc(p->n_syms + 1, sizeof *ld->sd);
    if (!ld->sd) {
        drift_diag_error_file(d, p->src->name, "out of memory");
        return 1;
    }
    ld->n_sd = p->n_syms;
    size_t primary_cols = 0;
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind == DRIFT_SYM_DATA) {
            errors += bind_data(p, ld, s, placeholder, d);
            continue;
        }
        if (s->kind != DRIFT_SYM_ROWS)
            continue;
        const drift_dsource *a, *b;
        size_t n = sources_of(ld, s->name, &a, &b);
        if (n == 0 && placeholder &&
            s->decl->type->kind == DRIFT_T_SPARSE) {
            /* Describing without data: no entries (there are no rows). */
            static const uint64_t no_rows[2] = {0, 0};
            static const drift_sparse empty = {"", 0, no_rows, NULL, NULL, 0};
            drift_symdata *sd = &ld->sd[s->id];
            sd->rb.sp = &empty;
            sd->rb.sz = s->type.dim[0].n > 0 ? (size_t)s->type.dim[0].n : 0;
            sd->rb.name = s->name;
            continue;
        }
        if (n == 0 && placeholder) {
            /* Describing without data: one placeholder row of ones. */
            drift_expr *ex[DRIFT_MAX_ARRAY + 2];
            long dims[DRIFT_MAX_ARRAY + 2];
            int nd = decl_dims(s, ex, dims);
            size_t sz = 1;
            for (int j = 0; j < nd; j++)
                sz *= (size_t)(dims[j] > 0 ? dims[j] : 0);
            drift_symdata *sd = &ld->sd[s->id];
            double *ones = drift_malloc_array(sz ? sz : 1, sizeof(double));
            sd->rb.cols = drift_calloc(sz ? sz : 1, sizeof(size_t));
            double **no = drift_realloc(ld->owned,
                                        (ld->n_owned + 1) * sizeof *no);
            if (no)
                ld->owned = no;
            if (!ones || !sd->rb.cols || !no) {
                drift_free(ones);
                drift_diag_error_file(d, p->src->name, "out of memory");
                return errors + 1;
            }
            ld->owned[ld->n_owned++] = ones;
            for (size_t j = 0; j < sz; j++) {
                ones[j] = 1;
                sd->rb.cols[j] = j;
            }
            sd->rb.base = ones;
            sd->rb.ld = 0;
            sd->rb.sz = sz;
            sd->rb.contiguous = 1;
            sd->rb.name = s->name;
            continue;
        }
        if (n == 0) {
            char ty[128];
            describe_type(s, ty, sizeof ty);
            if (s->decl->type->kind == DRIFT_T_SPARSE)
                drift_diag_error(d, p->src, s->loc,
                                 "rows variable '%s : %s' is in no data "
                                 "file: expected sparse rows named '%s' (a "
                                 "LIBSVM file's features are 'x', its "
                                 "labels 'y'; or a row store converted from "
                                 "one)",
                                 s->name, ty, s->name);
            else
                drift_diag_error(d, p->src, s->loc,
                                 "rows variable '%s : %s' is in no data "
                                 "file: expected %s in a CSV file, or an "
                                 "entry '%s' in a JSON file",
                                 s->name, ty,
                                 s->type.kind == DRIFT_T_REAL ||
                                         s->type.kind == DRIFT_T_INT
                                     ? "a column of that name"
                                     : "columns named like name.1, name.2",
                                 s->name);
            errors++;
            continue;
        }
        if (n > 1) {
            drift_diag_error(d, p->src, s->loc,
                             "rows variable '%s' is given twice: in %s and "
                             "in %s",
                             s->name, a->path, b->path);
            errors++;
            continue;
        }
        size_t e;
        if (a->kind == DRIFT_DS_TABLE) {
            e = s->decl->type->kind == DRIFT_T_SPARSE
                    ? bind_rows_sparse(p, ld, s, a, d)
                    : bind_rows_csv(p, ld, s, a, d);
            /* Sparse rows outweigh any number of dense columns. */
            size_t weight = a->table->view.n_cols +
                            (s->decl->type->kind == DRIFT_T_SPARSE
                                 ? (size_t)1 << 40
                                 : 0);
            if (!e && weight > primary_cols) {
                ld->primary = a->table;
                primary_cols = weight;
            }
        } else if (a->kind == DRIFT_DS_JSON &&
                   s->decl->type->kind == DRIFT_T_SPARSE) {
            drift_diag_error(d, p->src, s->loc,
                             "rows variable '%s' is declared sparse_vector, "
                             "but %s gives it as JSON values",
                             s->name, a->path);
            e = 1;
        } else if (a->kind == DRIFT_DS_JSON) {
            e = bind_rows_json(p, ld, s, a, find_value(a, s->name), d);
        } else {
            drift_diag_error(d, p->src, s->loc,
                             "rows variable '%s' cannot be set with "
                             "--data-set (it has one value per row)",
                             s->name);
            e = 1;
        }
        if (!e && s->decl->type->kind == DRIFT_T_INT)
            e = check_int_rows(ld, s, d);
        if (!e && ld->check_mapped && a->kind == DRIFT_DS_TABLE &&
            a->table->kind == DRIFT_TABLE_ROWSTORE &&
            s->decl->type->kind != DRIFT_T_SPARSE)
            e = check_store_values(ld, s, d);
        errors += e;
    }
    return errors;
}

/* An integer scalar of the data (JSON files and --data-set) by name. */
int drift_langdata_int(const void *self, const char *name, long *out)
{
    const drift_langdata *ld = self;
    for (size_t k = 0; ld && k < ld->n_src; k++)
        for (size_t j = 0; j < ld->src[k].n_vals; j++) {
            const drift_dvalue *v = &ld->src[k].vals[j];
            if (v->ndim == 0 && v->all_int && v->n == 1 &&
                !strcmp(v->name, name)) {
                *out = (long)v->v[0];
                return 0;
            }
        }
    return -1;
}
