/* inits.c: reading --init FILE (JSON through jansson, CSV through the Stan
 * CSV reader) into the model's constrained output values.  Not for
 * --init zero / random, which chain.c draws itself. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/nameindex.h"
#include "base/util.h"
#include "engine/stats/stancsv.h"
#include "inits.h"

/* Walks name "base.i.j" down a JSON value: base looked up in obj, then
 * 1-based indices into nested arrays.  With *given non-NULL a missing base
 * is no error: *given is set to 0 (1 when found). */
static int json_lookup(const char *path, json_t *obj, const char *name,
                       double *out, unsigned char *given, drift_err *e)
{
    char base[256];
    size_t blen = strcspn(name, ".");
    snprintf(base, sizeof base, "%.*s", (int)(blen < 255 ? blen : 255), name);
    json_t *v = json_object_get(obj, base);
    if (given)
        *given = v != NULL;
    if (!v && given)
        return DRIFT_OK;
    if (!v)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: no value for '%s' (the model's parameter "
                             "%s)",
                             path, base, name);
    const char *p = name + blen;
    while (*p == '.') {
        char *end;
        errno = 0;
        unsigned long idx = strtoul(p + 1, &end, 10);
        if (end == p + 1 || errno || idx == 0)
            return drift_err_set(e, DRIFT_EINTERNAL,
                                 "cannot read the index in output name %s",
                                 name);
        if (!json_is_array(v))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: '%s' is not an array deep enough for "
                                 "%s",
                                 path, base, name);
        if (idx > json_array_size(v))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: '%s' has %zu elements where the "
                                 "model needs at least %lu (for %s)",
                                 path, base, json_array_size(v), idx, name);
        v = json_array_get(v, idx - 1);
        p = end;
    }
    if (json_is_array(v))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: '%s' has more dimensions than the model's "
                             "%s",
                             path, base, name);
    if (!json_is_number(v))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: the value for %s is not a number", path,
                             name);
    double x = json_number_value(v);
    if (!isfinite(x))
        return drift_err_set(e, DRIFT_EINVAL, "%s: the value for %s is %g",
                             path, name, x);
    *out = x;
    return DRIFT_OK;
}

/* Whether name (a full "w.1" name, or with base_only a base "w") is one
 * of the model's values: its parameters and derived values (out_names) or
 * generated quantities (gen_names); *count gets how many entries carry
 * that base. */
static int known_name(const drift_model *m, const char *name, int base_only,
                      size_t *count)
{
    size_t n = 0, len = strlen(name);
    for (size_t k = 0; k < m->n_out + m->n_gen; k++) {
        const char *o = k < m->n_out ? m->out_names[k]
                                     : m->gen_names[k - m->n_out];
        if (base_only ? !strncmp(o, name, len) &&
                            (o[len] == '\0' || o[len] == '.')
                      : !strcmp(o, name))
            n++;
    }
    if (count)
        *count = n;
    return n > 0;
}

/* A name of the file that matches none of the model's: refused, with
 * the nearest of the model's names (a typo is the usual cause): values
 * meant for a parameter must never be dropped in silence. */
static int unknown_name(const char *path, const drift_model *m,
                        const char *name, int base_only, drift_err *e)
{
    size_t n = m->n_out + m->n_gen, k = 0, bytes = 0;
    for (size_t j = 0; j < n; j++)
        bytes += strlen(j < m->n_out ? m->out_names[j]
                                     : m->gen_names[j - m->n_out]) +
                 1;
    const char **cands = drift_malloc_array(n ? n : 1, sizeof *cands);
    char *names = drift_malloc(bytes + 1);
    if (!cands || !names) {
        drift_free(cands);
        drift_free(names);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    size_t used = 0;
    for (size_t j = 0; j < n; j++) {
        const char *o = j < m->n_out ? m->out_names[j]
                                     : m->gen_names[j - m->n_out];
        size_t len = base_only ? strcspn(o, ".") : strlen(o);
        /* Bases repeat (w.1, w.2 ...): each once; they come together. */
        if (base_only && k && strlen(cands[k - 1]) == len &&
            !strncmp(cands[k - 1], o, len))
            continue;
        memcpy(names + used, o, len);
        names[used + len] = '\0';
        cands[k++] = names + used;
        used += len + 1;
    }
    const char *near = drift_closest(name, cands, k);
    int rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: '%s' names no value of the model%s%s%s; an "
                           "init file holds only the model's parameters "
                           "(and values it writes), each once",
                           path, name, near ? " (did you mean '" : "",
                           near ? near : "", near ? "'?)" : "");
    drift_free(cands);
    drift_free(names);
    return rc;
}

/* The numbers a JSON value holds, nested arrays counted through. */
static size_t json_leaves(json_t *v)
{
    if (!json_is_array(v))
        return 1;
    size_t n = 0;
    for (size_t k = 0; k < json_array_size(v); k++)
        n += json_leaves(json_array_get(v, k));
    return n;
}

static int read_json(const char *path, const drift_model *m, double *values,
                     unsigned char *given, drift_err *e)
{
    json_error_t je;
    /* A key given twice would have one of its values dropped. */
    json_t *root = json_load_file(path,
                                  JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
                                  &je);
    if (!root)
        return drift_err_set(e, DRIFT_EINVAL, "%s:%d:%d: error: %s", path,
                             je.line, je.column, je.text);
    int rc = DRIFT_OK;
    if (!json_is_object(root))
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: expected a JSON object of named values, "
                           "e.g. {\"w\": [0.1, 0.2]}",
                           path);
    const char *key;
    json_t *val;
    if (!rc)
        json_object_foreach(root, key, val)
        {
            size_t want;
            if (!known_name(m, key, 1, &want)) {
                rc = unknown_name(path, m, key, 1, e);
                break;
            }
            size_t have = json_leaves(val);
            if (have > want) {
                rc = drift_err_set(e, DRIFT_EINVAL,
                                   "%s: '%s' holds %zu values, the model's "
                                   "'%s' has %zu",
                                   path, key, have, key, want);
                break;
            }
        }
    for (size_t k = 0; !rc && k < m->n_out; k++)
        rc = json_lookup(path, root, m->out_names[k], &values[k],
                         given ? &given[k] : NULL, e);
    json_decref(root);
    return rc;
}

static int read_csv(const char *path, const drift_model *m, double *values,
                    unsigned char *given, drift_err *e)
{
    drift_stancsv *f;
    int rc = drift_stancsv_read(path, &f, e);
    if (rc)
        return rc;
    if (f->n_rows == 0) {
        drift_stancsv_free(f);
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: no row of values under the header", path);
    }
    /* Every column is the model's (but lp__ and sampler columns, as in
     * a drift or CmdStan output file), and none is named twice; indexed,
     * as a model may have millions of values. */
    drift_nameindex model_ix, seen;
    size_t n_names = m->n_out + m->n_gen;
    if (drift_nameindex_init(&model_ix, n_names) ||
        drift_nameindex_init(&seen, f->n_cols)) {
        drift_nameindex_free(&model_ix);
        drift_stancsv_free(f);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    for (size_t k = 0; !rc && k < n_names; k++)
        if (drift_nameindex_add(&model_ix,
                                k < m->n_out ? m->out_names[k]
                                             : m->gen_names[k - m->n_out],
                                k, NULL) < 0)
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    for (size_t c = 0; !rc && c < f->n_cols; c++) {
        const char *nm = f->names[c];
        size_t len = strlen(nm), j;
        if (len > 2 && !strcmp(nm + len - 2, "__"))
            continue;
        if (drift_nameindex_find(&model_ix, nm) < 0) {
            rc = unknown_name(path, m, nm, 0, e);
            break;
        }
        int dup = drift_nameindex_add(&seen, nm, c, &j);
        if (dup < 0)
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        else if (dup)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "%s: column '%s' is named twice (columns %zu "
                               "and %zu)",
                               path, nm, j + 1, c + 1);
    }
    drift_nameindex_free(&model_ix);
    drift_nameindex_free(&seen);
    const double *row = f->values + (f->n_rows - 1) * f->n_cols;
    for (size_t k = 0; !rc && k < m->n_out; k++) {
        long c = drift_stancsv_column(f, m->out_names[k]);
        if (given)
            given[k] = c >= 0;
        if (c < 0 && given)
            continue;
        if (c < 0)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "%s: no column '%s' (the header must name "
                               "every parameter as drift writes them)",
                               path, m->out_names[k]);
        else if (!isfinite(row[c]))
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "%s: the value for %s is %g", path,
                               m->out_names[k], row[c]);
        else
            values[k] = row[c];
    }
    drift_stancsv_free(f);
    return rc;
}

int drift_inits_read(const char *path, const drift_model *m, double *values,
                     drift_err *e)
{
    return drift_inits_read_partial(path, m, values, NULL, e);
}

int drift_inits_read_partial(const char *path, const drift_model *m,
                             double *values, unsigned char *given,
                             drift_err *e)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open: %s", path,
                             strerror(errno));
    /* An init file is a small regular file: a directory, a device such as
     * /dev/zero or a FIFO would be read without end (or read as empty). */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size > DRIFT_INITS_MAX_BYTES) {
        int reg = S_ISREG(st.st_mode);
        fclose(f);
        if (reg)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: %lld bytes, more than an init file "
                                 "may hold (%d MiB): not an init file",
                                 path, (long long)st.st_size,
                                 DRIFT_INITS_MAX_BYTES >> 20);
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: is %s, not a regular file: give a JSON or "
                             "CSV file of initial values",
                             path,
                             S_ISDIR(st.st_mode)   ? "a directory"
                             : S_ISFIFO(st.st_mode) ? "a FIFO"
                             : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                                 ? "a device"
                                 : "not a file");
    }
    int c;
    while ((c = fgetc(f)) != EOF && isspace(c))
        ;
    fclose(f);
    if (c == EOF)
        return drift_err_set(e, DRIFT_EINVAL, "%s: the file is empty", path);
    return c == '{' || c == '[' ? read_json(path, m, values, given, e)
                                : read_csv(path, m, values, given, e);
}
