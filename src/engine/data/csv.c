/* csv.c: drift's CSV data reader: header, then rows of finite numbers,
 * each bad field reported with its file, line and column.  No quoted
 * values (only quoted header names), no missing values. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/nameindex.h"
#include "base/util.h"
#include "csv.h"

static int parse_header(drift_csv *c, const drift_line *ln, drift_err *e)
{
    const char *path = c->f.path;
    size_t lineno = c->f.lineno;
    size_t cols = 1;
    for (const char *q = ln->b; q < ln->e; q++)
        cols += (*q == ',');
    c->names = drift_calloc(cols, sizeof *c->names);
    if (!c->names)
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    c->n_cols = cols;
    /* Repeated names are found through a hash index: a header of 10^6
     * columns must not cost 10^12 comparisons. */
    drift_nameindex seen;
    if (drift_nameindex_init(&seen, cols))
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    int rc = DRIFT_OK;
    const char *p = ln->b;
    for (size_t k = 0; k < cols && !rc; k++) {
        const char *fe = memchr(p, ',', (size_t)(ln->e - p));
        if (!fe)
            fe = ln->e;
        const char *b = p, *en = fe;
        drift_trim(&b, &en);
        if (en - b >= 2 && *b == '"' && en[-1] == '"') {
            b++;
            en--;
        }
        size_t col = (size_t)(p - ln->b) + 1;
        if (b == en) {
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s:%zu:%zu: error: empty column name in the "
                               "header (column %zu); the first line must "
                               "name every column, e.g. y,x.1,x.2",
                               path, lineno, col, k + 1);
            break;
        }
        const char *nul = memchr(b, '\0', (size_t)(en - b));
        if (nul) {
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s:%zu:%zu: error: a NUL byte in the name of "
                               "column %zu; column names are text",
                               path, lineno, (size_t)(nul - ln->b) + 1,
                               k + 1);
            break;
        }
        c->names[k] = drift_malloc((size_t)(en - b) + 1);
        if (!c->names[k]) {
            rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
            break;
        }
        memcpy(c->names[k], b, (size_t)(en - b));
        c->names[k][en - b] = '\0';
        size_t j;
        int dup = drift_nameindex_add(&seen, c->names[k], k, &j);
        if (dup < 0)
            rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        else if (dup)
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s:%zu:%zu: error: column '%s' is named "
                               "twice in the header (columns %zu and %zu)",
                               path, lineno, col, c->names[k], j + 1, k + 1);
        p = fe + 1;
    }
    drift_nameindex_free(&seen);
    if (rc)
        return rc;
    /* A header of numbers is almost certainly a missing header. */
    double dummy;
    if (drift_parse_double(c->names[0], &dummy) == 0)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s:%zu:1: error: the first line looks like "
                             "data ('%s'), but a header naming the columns "
                             "is required, e.g. y,x.1,x.2",
                             path, lineno, c->names[0]);
    return DRIFT_OK;
}

int drift_csv_open(drift_csv *c, const char *path, int streaming,
                   drift_err *e)
{
    memset(c, 0, sizeof *c);
    int rc = drift_textfile_open(&c->f, path, streaming, e);
    if (rc)
        return rc;
    drift_line ln;
    int got;
    while ((got = drift_textfile_next(&c->f, &ln)) > 0) {
        /* A UTF-8 byte order mark (spreadsheets write one) is no part of
         * the first name: skipped, as pandas and R's read.csv
         * (fileEncoding = "UTF-8-BOM") skip it. */
        if (c->f.lineno == 1 && ln.e - ln.b >= 3 &&
            !memcmp(ln.b, "\xef\xbb\xbf", 3))
            ln.b += 3;
        if (drift_line_comment(&ln) || drift_line_blank(&ln))
            continue;
        /* Lines ending in CR alone (classic Mac OS) read as one line: say
         * so, rather than "no data rows" or a field that is no number. */
        const char *cr = memchr(ln.b, '\r', (size_t)(ln.e - ln.b));
        if (cr)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu:%zu: error: a carriage return "
                                 "inside the header line: the file's lines "
                                 "end in CR alone (classic Mac OS), which "
                                 "drift does not read as line ends; convert "
                                 "them to LF (tr '\\r' '\\n' < FILE > NEW)",
                                 path, c->f.lineno,
                                 (size_t)(cr - ln.b) + 1);
        c->header_line = c->f.lineno;
        c->data_start = c->f.cur;
        rc = parse_header(c, &ln, e);
        /* A header read from a map that lost its pages is no header. */
        int st = drift_textfile_status(&c->f, 0, e);
        return st ? st : rc;
    }
    if (got < 0 || (rc = drift_textfile_status(&c->f, 0, e)))
        return drift_textfile_status(&c->f, 0, e);
    return drift_err_set(e, DRIFT_EDATA,
                         "%s:1:1: error: the file is empty; expected a "
                         "header line naming the columns, e.g. y,x.1,x.2",
                         path);
}

void drift_csv_close(drift_csv *c)
{
    if (c->names)
        for (size_t k = 0; k < c->n_cols; k++)
            drift_free(c->names[k]);
    drift_free(c->names);
    drift_textfile_close(&c->f);
    memset(c, 0, sizeof *c);
}

size_t drift_csv_count_rows(const drift_csv *c)
{
    size_t rows = 0, pending = 0;
    const char *p = c->data_start, *end = c->f.end;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        drift_line ln = {p, stop};
        if (ln.e > ln.b && ln.e[-1] == '\r')
            ln.e--;
        pending++;
        if (!drift_line_blank(&ln)) {
            rows += pending;
            pending = 0;
        }
        p = nl ? nl + 1 : end;
    }
    return rows;
}

/* True when only blank lines remain after the current position (in
 * streaming mode this reads them). */
static int only_blank_left(drift_csv *c)
{
    if (c->f.fd >= 0) {
        drift_line ln;
        int got;
        while ((got = drift_textfile_next(&c->f, &ln)) > 0)
            if (!drift_line_blank(&ln))
                return 0;
        return got == 0;
    }
    /* Line by line, as drift_csv_count_rows and the streaming reader
     * judge them (one CR before the line end is the line end's; a CR
     * inside a line is not blank), so that the counts agree. */
    /* In a share of the file (a run across ranks), up to the file's own
     * end: blank lines are the file's tail only when nothing follows in
     * the shares after this one either. */
    const char *p = c->f.cur,
               *end = c->f.in_share ? c->f.file_end : c->f.end;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        drift_line ln = {p, nl ? nl : end};
        if (ln.e > ln.b && ln.e[-1] == '\r')
            ln.e--;
        if (!drift_line_blank(&ln))
            return 0;
        p = nl ? nl + 1 : end;
    }
    return 1;
}

/* drift_csv_next without the check that the file is still whole. */
static int next_row(drift_csv *c, double *row, drift_err *e)
{
    drift_line ln;
    const char *path = c->f.path;
    int got = drift_textfile_next(&c->f, &ln);
    if (got <= 0)
        return got;
    size_t lineno = c->f.lineno;
    if (drift_line_blank(&ln)) {
        if (only_blank_left(c)) {
            c->f.cur = c->f.end;
            return 0;
        }
        drift_err_set(e, DRIFT_EDATA,
                      "%s:%zu:1: error: empty line inside the data (only "
                      "trailing empty lines are allowed)",
                      path, lineno);
        return -1;
    }
    const char *p = ln.b;
    for (size_t k = 0; k < c->n_cols; k++) {
        size_t col = (size_t)(p - ln.b) + 1;
        if (p > ln.e) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: row has %zu fields, expected "
                          "%zu as in the header (missing '%s')",
                          path, lineno, (size_t)(ln.e - ln.b) + 1, k,
                          c->n_cols, c->names[k]);
            return -1;
        }
        const char *fe = memchr(p, ',', (size_t)(ln.e - p));
        if (!fe)
            fe = ln.e;
        const char *b = p, *en = fe;
        drift_trim(&b, &en);
        char buf[128], shown[64];
        size_t len = (size_t)(en - b);
        if (len == 0) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: empty field in column '%s'; "
                          "every field must be a finite number",
                          path, lineno, col, c->names[k]);
            return -1;
        }
        /* strtod reads C's hexadecimal numbers ("0x1A", "0x1p-3"); a data
         * file's numbers are decimal (pandas reads such a field as text),
         * and a column of hexadecimal codes is not a quantity. */
        const char *digits = b + (len > 1 && (*b == '-' || *b == '+'));
        if (en - digits >= 2 && digits[0] == '0' &&
            (digits[1] == 'x' || digits[1] == 'X')) {
            drift_describe(b, en, shown, sizeof shown);
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: field '%s' in column '%s' is a "
                          "hexadecimal number; data are read as decimal "
                          "numbers only: write it in decimal",
                          path, lineno, col, shown, c->names[k]);
            return -1;
        }
        char *end = NULL;
        double v = 0;
        /* strtod would stop at a NUL byte and take "1\0x" for 1. */
        if (len < sizeof buf && !memchr(b, '\0', len)) {
            memcpy(buf, b, len);
            buf[len] = '\0';
            errno = 0;
            v = strtod(buf, &end);
        }
        if (!end || end == buf || *end != '\0') {
            drift_describe(b, en, shown, sizeof shown);
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: field '%s' in column '%s' is "
                          "not a number",
                          path, lineno, col, shown, c->names[k]);
            return -1;
        }
        if (!isfinite(v)) {
            drift_describe(b, en, shown, sizeof shown);
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: field '%s' in column '%s' is "
                          "not finite (NaN and Inf are not allowed in data)",
                          path, lineno, col, shown, c->names[k]);
            return -1;
        }
        row[k] = v;
        p = fe + 1;
    }
    if (p <= ln.e) {
        drift_err_set(e, DRIFT_EDATA,
                      "%s:%zu:%zu: error: row has more than the %zu fields "
                      "of the header",
                      path, lineno, (size_t)(p - ln.b), c->n_cols);
        return -1;
    }
    return 1;
}

int drift_csv_next(drift_csv *c, double *row, drift_err *e)
{
    int got = next_row(c, row, e);
    /* Rows read from a map whose file lost pages are zeros, not data:
     * whatever the parse made of them, the file changed. */
    int st = drift_textfile_status(&c->f, 0, e);
    return st ? -1 : got;
}
