/* stancsv.c: the Stan CSV reader behind `drift summary` and `--init FILE`.
 * Reads line by line, so files larger than memory's comfortable share are
 * held only once (as doubles).  Not a general CSV library: no quoting. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "stancsv.h"

void drift_stancsv_free(drift_stancsv *f)
{
    if (!f)
        return;
    for (size_t k = 0; k < f->n_cols; k++)
        drift_free(f->names[k]);
    drift_free(f->names);
    for (size_t k = 0; k < f->n_meta; k++) {
        drift_free(f->meta_keys[k]);
        drift_free(f->meta_values[k]);
    }
    drift_free(f->meta_keys);
    drift_free(f->meta_values);
    for (size_t k = 0; k < f->n_footer; k++) {
        drift_free(f->footer_keys[k]);
        drift_free(f->footer_values[k]);
    }
    drift_free(f->footer_keys);
    drift_free(f->footer_values);
    drift_free(f->values);
    drift_free(f->path);
    drift_free(f);
}

const char *drift_stancsv_meta(const drift_stancsv *f, const char *key)
{
    for (size_t k = 0; k < f->n_meta; k++)
        if (!strcmp(f->meta_keys[k], key))
            return f->meta_values[k];
    return NULL;
}

const char *drift_stancsv_footer(const drift_stancsv *f, const char *key)
{
    for (size_t k = 0; k < f->n_footer; k++)
        if (!strcmp(f->footer_keys[k], key))
            return f->footer_values[k];
    return NULL;
}

long drift_stancsv_column(const drift_stancsv *f, const char *name)
{
    for (size_t k = 0; k < f->n_cols; k++)
        if (!strcmp(f->names[k], name))
            return (long)k;
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* A comment "key = value [(Default)]": records it in keys/values (n of
 * them).  Header keys are single words; footer keys may hold spaces. */
static int add_pair(char ***keys, char ***values, size_t *n, char *text,
                    int spaces)
{
    char *eq = strchr(text, '=');
    if (!eq)
        return 0;
    *eq = '\0';
    char *key = trim(text), *val = trim(eq + 1);
    size_t vn = strlen(val);
    static const char dflt[] = "(Default)";
    if (vn >= sizeof dflt - 1 &&
        !strcmp(val + vn - (sizeof dflt - 1), dflt)) {
        val[vn - (sizeof dflt - 1)] = '\0';
        val = trim(val);
    }
    if (!*key || (!spaces && strchr(key, ' ')))
        return 0;
    char **nk = drift_realloc(*keys, (*n + 1) * sizeof *nk);
    if (!nk)
        return -1;
    *keys = nk;
    char **nv = drift_realloc(*values, (*n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    *values = nv;
    nk[*n] = drift_strdup(key);
    nv[*n] = drift_strdup(val);
    if (!nk[*n] || !nv[*n]) {
        drift_free(nk[*n]);
        drift_free(nv[*n]);
        return -1;
    }
    (*n)++;
    return 0;
}

static int add_meta(drift_stancsv *f, char *text)
{
    return add_pair(&f->meta_keys, &f->meta_values, &f->n_meta, text, 0);
}

static int parse_names(drift_stancsv *f, char *line)
{
    size_t n = 1;
    for (char *p = line; *p; p++)
        n += *p == ',';
    f->names = drift_calloc(n, sizeof *f->names);
    if (!f->names)
        return -1;
    char *p = line;
    for (size_t k = 0; k < n; k++) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *name = trim(p);
        size_t len = strlen(name);
        if (len >= 2 && name[0] == '"' && name[len - 1] == '"') {
            name[len - 1] = '\0';
            name++;
        }
        f->names[k] = drift_strdup(name);
        if (!f->names[k])
            return -1;
        f->n_cols = k + 1;
        p = comma ? comma + 1 : p + strlen(p);
    }
    return 0;
}

static int is_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

/* getline with a bound: the line's length, -1 at the end of the input,
 * -2 when a line runs past max bytes without its end (/dev/zero, or a
 * file of NUL bytes, would otherwise be read into memory without end),
 * -3 out of memory. */
static ssize_t getline_bounded(char **line, size_t *cap, FILE *in,
                               size_t max)
{
    size_t len = 0;
    int ch;
    flockfile(in);
    while ((ch = getc_unlocked(in)) != EOF) {
        if (len + 2 > *cap) {
            size_t nc = *cap ? 2 * *cap : 256;
            char *nl = drift_realloc(*line, nc);
            if (!nl) {
                funlockfile(in);
                return -3;
            }
            *line = nl;
            *cap = nc;
        }
        (*line)[len++] = (char)ch;
        if (ch == '\n')
            break;
        if (len > max) {
            funlockfile(in);
            return -2;
        }
    }
    funlockfile(in);
    if (len == 0)
        return -1;
    (*line)[len] = '\0';
    return (ssize_t)len;
}

int drift_stancsv_read(const char *path, drift_stancsv **out, drift_err *e)
{
    *out = NULL;
    FILE *in = fopen(path, "r");
    if (!in)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open: %s", path,
                             strerror(errno));
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(in);
        return drift_err_set(e, DRIFT_EIO,
                             "%s: is a directory, not a Stan CSV file",
                             path);
    }
    drift_stancsv *f = drift_calloc(1, sizeof *f);
    char *line = NULL;
    size_t cap_line = 0, cap_rows = 0, lineno = 0;
    long marker_at = -1;
    int rc = DRIFT_OK;
    if (!f || !(f->path = drift_strdup(path))) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    ssize_t got;
    while ((got = getline_bounded(&line, &cap_line, in,
                                  DRIFT_STANCSV_MAX_LINE)) >= 0) {
        lineno++;
        int complete = got > 0 && line[got - 1] == '\n';
        size_t len = (size_t)got;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        /* A UTF-8 byte order mark (an editor's) is no part of the first
         * line: skipped, as the data readers skip it. */
        if (lineno == 1 && len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) {
            memmove(line, line + 3, len - 2);
            len -= 3;
        }
        /* Lines ending in CR alone (classic Mac OS) read as one: say so,
         * rather than "no column row" or a value that is no number. */
        const char *cr = memchr(line, '\r', len);
        if (cr) {
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s:%zu:%zu: error: a carriage return inside "
                               "a line: the file's lines end in CR alone "
                               "(classic Mac OS), which drift does not read "
                               "as line ends; convert them to LF (tr '\\r' "
                               "'\\n' < FILE > NEW)",
                               path, lineno, (size_t)(cr - line) + 1);
            goto fail;
        }
        if (len == 0)
            continue;
        if (line[0] == '#') {
            if (!f->names) {
                if (add_meta(f, line + 1)) {
                    rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                       path);
                    goto fail;
                }
            } else if (marker_at < 0 &&
                       !strncmp(trim(line + 1), "Adaptation terminated",
                                21)) {
                marker_at = (long)f->n_rows;
            } else if (add_pair(&f->footer_keys, &f->footer_values,
                                &f->n_footer, line + 1, 1)) {
                rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                   path);
                goto fail;
            }
            continue;
        }
        if (!f->names) {
            if (parse_names(f, line)) {
                rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                   path);
                goto fail;
            }
            continue;
        }
        if (f->n_rows == cap_rows) {
            size_t nc = cap_rows ? 2 * cap_rows : 1024;
            double *nv = drift_malloc_array(nc, f->n_cols * sizeof *nv);
            if (!nv) {
                rc = drift_err_set(e, DRIFT_ENOMEM,
                                   "%s: out of memory reading %zu rows", path,
                                   nc);
                goto fail;
            }
            if (f->n_rows)
                memcpy(nv, f->values, f->n_rows * f->n_cols * sizeof *nv);
            drift_free(f->values);
            f->values = nv;
            cap_rows = nc;
        }
        double *row = f->values + f->n_rows * f->n_cols;
        char *p = line;
        size_t k = 0;
        for (;;) {
            char *end;
            errno = 0;
            double v = strtod(p, &end);
            while (*end == ' ' || *end == '\t')
                end++;
            if (end == p || (*end != ',' && *end != '\0')) {
                size_t flen = strcspn(p, ",");
                rc = drift_err_set(e, DRIFT_EDATA,
                                   "%s:%zu:%zu: error: '%.*s' is not a number",
                                   path, lineno, (size_t)(p - line) + 1,
                                   (int)(flen > 40 ? 40 : flen), p);
                goto fail;
            }
            if (k < f->n_cols)
                row[k] = v;
            k++;
            if (*end == '\0')
                break;
            p = end + 1;
        }
        if (k != f->n_cols) {
            if (!complete)
                rc = drift_err_set(e, DRIFT_EDATA,
                                   "%s:%zu: error: the last row is "
                                   "incomplete (%zu of %zu fields): is the "
                                   "file still being written?",
                                   path, lineno, k, f->n_cols);
            else
                rc = drift_err_set(e, DRIFT_EDATA,
                                   "%s:%zu: error: row has %zu fields, the "
                                   "column row names %zu",
                                   path, lineno, k, f->n_cols);
            goto fail;
        }
        f->n_rows++;
    }
    if (got == -2) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s:%zu: error: a line longer than %d MiB (no "
                           "line end in sight): not a Stan CSV file",
                           path, lineno + 1, DRIFT_STANCSV_MAX_LINE >> 20);
        goto fail;
    }
    if (got == -3) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (ferror(in)) {
        rc = drift_err_set(e, DRIFT_EIO, "%s: read error", path);
        goto fail;
    }
    if (!f->names) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s: error: no column row (a Stan CSV file names "
                           "its columns in its first line that is not a "
                           "'#' comment)",
                           path);
        goto fail;
    }
    if (is_true(drift_stancsv_meta(f, "save_warmup"))) {
        if (marker_at >= 0) {
            f->n_warmup = (size_t)marker_at;
        } else {
            const char *w = drift_stancsv_meta(f, "num_warmup");
            if (!w)
                w = drift_stancsv_meta(f, "warmup");
            const char *t = drift_stancsv_meta(f, "thin");
            uint64_t W = 0, T = 1;
            if (w && !drift_parse_u64(w, &W)) {
                if (t && (drift_parse_u64(t, &T) || T == 0))
                    T = 1;
                uint64_t rows = (W + T - 1) / T;
                f->n_warmup = rows < f->n_rows ? (size_t)rows : f->n_rows;
            }
        }
    }
    free(line);
    fclose(in);
    *out = f;
    return DRIFT_OK;
fail:
    free(line);
    fclose(in);
    drift_stancsv_free(f);
    return rc;
}
