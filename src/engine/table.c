/* table.c: the CSV reader behind --data.  It maps the file, counts rows,
 * then parses every field as a finite double, reporting the first bad
 * field with its file, line and column.  Not a general CSV library: no
 * quoted values (only quoted header names), no missing values. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table.h"
#include "util.h"

/* The bytes of a file: mapped when possible, else read into memory. */
typedef struct file_bytes {
    const char *p;
    size_t n;
    void *map;
    char *heap;
} file_bytes;

static int bytes_open(const char *path, file_bytes *fb, drift_err *e)
{
    memset(fb, 0, sizeof *fb);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open data file: %s",
                             path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            close(fd);
            fb->p = "";
            return DRIFT_OK;
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            fb->map = m;
            fb->p = m;
            fb->n = (size_t)st.st_size;
            return DRIFT_OK;
        }
    } else if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return drift_err_set(e, DRIFT_EIO,
                             "%s: is a directory, expected a data file",
                             path);
    }
    /* Pipes and other streams: read everything. */
    size_t cap = 1 << 16, len = 0;
    char *buf = drift_malloc(cap);
    if (!buf) {
        close(fd);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (len == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : drift_realloc(buf, cap * 2);
            if (!nb) {
                drift_free(buf);
                close(fd);
                return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                     path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            drift_free(buf);
            close(fd);
            return drift_err_set(e, DRIFT_EIO, "%s: read error: %s", path,
                                 strerror(err));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    fb->heap = buf;
    fb->p = buf;
    fb->n = len;
    return DRIFT_OK;
}

static void bytes_close(file_bytes *fb)
{
    if (fb->map)
        munmap(fb->map, fb->n);
    drift_free(fb->heap);
}

/* A line: [b, e) without its terminator (\n or \r\n). */
typedef struct line {
    const char *b, *e;
} line;

static const char *next_line(const char *p, const char *end, line *ln)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    ln->b = p;
    ln->e = stop;
    if (ln->e > ln->b && ln->e[-1] == '\r')
        ln->e--;
    return nl ? nl + 1 : end;
}

static int is_blank(const line *ln)
{
    for (const char *q = ln->b; q < ln->e; q++)
        if (*q != ' ' && *q != '\t')
            return 0;
    return 1;
}

static int is_comment(const line *ln)
{
    const char *q = ln->b;
    while (q < ln->e && (*q == ' ' || *q == '\t'))
        q++;
    return q < ln->e && *q == '#';
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

/* Describes a bad field for a message: at most 40 bytes, printable. */
static void describe(const char *b, const char *e, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *q = b; q < e && n + 5 < cap && n < 40; q++) {
        unsigned char ch = (unsigned char)*q;
        if (ch >= 32 && ch < 127)
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
    }
    if (e - b > 40 && n + 4 < cap) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

static int parse_header(const char *path, const line *ln, size_t lineno,
                        drift_table *t, drift_err *e)
{
    size_t cols = 1;
    for (const char *q = ln->b; q < ln->e; q++)
        cols += (*q == ',');
    t->names = drift_calloc(cols, sizeof *t->names);
    if (!t->names)
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    t->view.n_cols = cols;
    const char *p = ln->b;
    for (size_t c = 0; c < cols; c++) {
        const char *fe = memchr(p, ',', (size_t)(ln->e - p));
        if (!fe)
            fe = ln->e;
        const char *b = p, *en = fe;
        trim(&b, &en);
        if (en - b >= 2 && *b == '"' && en[-1] == '"') {
            b++;
            en--;
        }
        size_t col = (size_t)(p - ln->b) + 1;
        if (b == en)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: empty column name in "
                                 "the header (column %zu); the first line "
                                 "must name every column, e.g. y,x.1,x.2",
                                 path, lineno, col, c + 1);
        t->names[c] = drift_malloc((size_t)(en - b) + 1);
        if (!t->names[c])
            return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        memcpy(t->names[c], b, (size_t)(en - b));
        t->names[c][en - b] = '\0';
        for (size_t k = 0; k < c; k++)
            if (strcmp(t->names[k], t->names[c]) == 0)
                return drift_err_set(e, DRIFT_EDATA,
                                     "%s:%zu:%zu: error: column '%s' is "
                                     "named twice in the header (columns "
                                     "%zu and %zu)",
                                     path, lineno, col, t->names[c], k + 1,
                                     c + 1);
        p = fe + 1;
    }
    /* A header of numbers is almost certainly a missing header. */
    double dummy;
    if (drift_parse_double(t->names[0], &dummy) == 0)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s:%zu:1: error: the first line looks like "
                             "data ('%s'), but a header naming the columns "
                             "is required, e.g. y,x.1,x.2",
                             path, lineno, t->names[0]);
    return DRIFT_OK;
}

/* Parses one data line into row[0..cols). */
static int parse_row(const char *path, const line *ln, size_t lineno,
                     const drift_table *t, double *row, drift_err *e)
{
    const char *p = ln->b;
    size_t cols = t->view.n_cols;
    for (size_t c = 0; c < cols; c++) {
        size_t col = (size_t)(p - ln->b) + 1;
        if (p > ln->e)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: row has %zu fields, "
                                 "expected %zu as in the header (missing "
                                 "'%s')",
                                 path, lineno, (size_t)(ln->e - ln->b) + 1,
                                 c, cols, t->names[c]);
        const char *fe = memchr(p, ',', (size_t)(ln->e - p));
        if (!fe)
            fe = ln->e;
        const char *b = p, *en = fe;
        trim(&b, &en);
        char buf[128], shown[64];
        size_t len = (size_t)(en - b);
        if (len == 0)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: empty field in column "
                                 "'%s'; every field must be a finite number",
                                 path, lineno, col, t->names[c]);
        describe(b, en, shown, sizeof shown);
        if (len >= sizeof buf)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: field '%s' in column "
                                 "'%s' is not a number",
                                 path, lineno, col, shown, t->names[c]);
        memcpy(buf, b, len);
        buf[len] = '\0';
        char *end;
        errno = 0;
        double v = strtod(buf, &end);
        if (end == buf || *end != '\0')
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: field '%s' in column "
                                 "'%s' is not a number",
                                 path, lineno, col, shown, t->names[c]);
        if (!isfinite(v))
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: field '%s' in column "
                                 "'%s' is not finite (NaN and Inf are not "
                                 "allowed in data)",
                                 path, lineno, col, shown, t->names[c]);
        row[c] = v;
        p = fe + 1;
    }
    if (p <= ln->e)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s:%zu:%zu: error: row has more than the %zu "
                             "fields of the header",
                             path, lineno, (size_t)(p - ln->b), cols);
    return DRIFT_OK;
}

int drift_table_read_csv(const char *path, drift_table **out, drift_err *e)
{
    *out = NULL;
    file_bytes fb;
    int rc = bytes_open(path, &fb, e);
    if (rc)
        return rc;
    drift_table *t = drift_calloc(1, sizeof *t);
    if (!t) {
        bytes_close(&fb);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    t->source = drift_strdup(path);
    if (!t->source) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        goto fail;
    }
    const char *p = fb.p, *end = fb.p + fb.n;
    size_t lineno = 0;
    line ln;
    int have_header = 0;
    while (p < end) {
        p = next_line(p, end, &ln);
        lineno++;
        if (is_comment(&ln) || is_blank(&ln))
            continue;
        have_header = 1;
        break;
    }
    if (!have_header) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s:1:1: error: the file is empty; expected a "
                           "header line naming the columns, e.g. y,x.1,x.2",
                           path);
        goto fail;
    }
    rc = parse_header(path, &ln, lineno, t, e);
    if (rc)
        goto fail;
    size_t header_line = lineno;

    /* Data lines: every line up to the last non-blank one. */
    size_t rows = 0;
    const char *q = p;
    const char *last_content_end = p;
    while (q < end) {
        line l2;
        const char *nq = next_line(q, end, &l2);
        if (!is_blank(&l2))
            last_content_end = nq;
        q = nq;
    }
    for (q = p; q < last_content_end;) {
        line l2;
        q = next_line(q, last_content_end, &l2);
        rows++;
    }
    if (rows == 0) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s:%zu:1: error: the file has a header but no "
                           "data rows",
                           path, header_line + 1);
        goto fail;
    }
    size_t cols = t->view.n_cols;
    t->values = drift_malloc_array(rows, cols * sizeof(double));
    if (!t->values) {
        rc = drift_err_set(e, DRIFT_ENOMEM,
                           "%s: out of memory for %zu rows x %zu columns",
                           path, rows, cols);
        goto fail;
    }
    for (size_t r = 0; r < rows; r++) {
        p = next_line(p, last_content_end, &ln);
        lineno++;
        if (is_blank(&ln)) {
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s:%zu:1: error: empty line inside the data "
                               "(only trailing empty lines are allowed)",
                               path, lineno);
            goto fail;
        }
        rc = parse_row(path, &ln, lineno, t, t->values + r * cols, e);
        if (rc)
            goto fail;
    }
    bytes_close(&fb);
    t->view.struct_size = (uint32_t)sizeof(drift_data);
    t->view.n_rows = rows;
    t->view.col_names = (const char *const *)t->names;
    t->view.values = t->values;
    t->view.row_stride = cols;
    t->view.source = t->source;
    t->view.first_line = header_line + 1;
    *out = t;
    return DRIFT_OK;
fail:
    bytes_close(&fb);
    drift_table_free(t);
    return rc;
}

void drift_table_free(drift_table *t)
{
    if (!t)
        return;
    if (t->names)
        for (size_t c = 0; c < t->view.n_cols; c++)
            drift_free(t->names[c]);
    drift_free(t->names);
    drift_free(t->values);
    drift_free(t->source);
    drift_free(t);
}
