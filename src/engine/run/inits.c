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

static int read_json(const char *path, const drift_model *m, double *values,
                     unsigned char *given, drift_err *e)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!root)
        return drift_err_set(e, DRIFT_EINVAL, "%s:%d:%d: error: %s", path,
                             je.line, je.column, je.text);
    int rc = DRIFT_OK;
    if (!json_is_object(root))
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: expected a JSON object of named values, "
                           "e.g. {\"w\": [0.1, 0.2]}",
                           path);
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
