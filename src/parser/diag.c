/* diag.c: model sources and the printing of error reports with the
 * offending line and a caret (see diag.h).  Not for deciding what is an
 * error. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "diag.h"

/* Model files larger than this are refused: no model is that long, and
 * a data file given as the model would otherwise be read whole. */
#define MAX_SOURCE_BYTES (16u << 20)

/* Lines longer than this are shown as a window around the place. */
#define SHOW_MAX 150

int drift_source_new(const char *name, const char *text, size_t len,
                     drift_source **out, drift_err *e)
{
    *out = NULL;
    drift_source *s = drift_calloc(1, sizeof *s);
    if (!s)
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", name);
    s->name = drift_strdup(name);
    s->text = drift_malloc(len + 1);
    size_t lines = 1;
    for (size_t k = 0; k < len; k++)
        lines += text[k] == '\n';
    s->line_start = drift_malloc_array(lines, sizeof *s->line_start);
    if (!s->name || !s->text || !s->line_start) {
        drift_source_free(s);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", name);
    }
    if (len)
        memcpy(s->text, text, len);
    s->text[len] = '\0';
    s->len = len;
    s->line_start[0] = 0;
    s->n_lines = 1;
    for (size_t k = 0; k < len; k++)
        if (text[k] == '\n')
            s->line_start[s->n_lines++] = k + 1;
    *out = s;
    return DRIFT_OK;
}

int drift_source_read(const char *path, drift_source **out, drift_err *e)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open model file: %s",
                             path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = drift_malloc(cap);
    int rc = DRIFT_OK;
    while (buf) {
        if (len == cap) {
            if (cap >= MAX_SOURCE_BYTES) {
                rc = drift_err_set(e, DRIFT_EINVAL,
                                   "%s: the model file is larger than %u "
                                   "bytes; is it a data file?",
                                   path, MAX_SOURCE_BYTES);
                break;
            }
            char *nb = drift_realloc(buf, cap * 2);
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
        if (got == 0) {
            if (ferror(f))
                rc = drift_err_set(e, DRIFT_EIO,
                                   "%s: read error (is it a directory?)",
                                   path);
            break;
        }
    }
    fclose(f);
    if (!buf)
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    if (!rc)
        rc = drift_source_new(path, buf, len, out, e);
    drift_free(buf);
    return rc;
}

void drift_source_free(drift_source *s)
{
    if (!s)
        return;
    drift_free(s->name);
    drift_free(s->text);
    drift_free(s->line_start);
    drift_free(s);
}

int drift_source_line(const drift_source *s, int line, const char **b,
                      size_t *n)
{
    if (!s || line < 1 || (size_t)line > s->n_lines)
        return -1;
    size_t start = s->line_start[line - 1];
    size_t end = (size_t)line < s->n_lines ? s->line_start[line] - 1 : s->len;
    if (end > start && s->text[end - 1] == '\r')
        end--;
    *b = s->text + start;
    *n = end - start;
    return 0;
}

void drift_diag_init(drift_diag *d, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->max_errors = 20;
}

static int printing(drift_diag *d)
{
    return d->out && d->n_errors <= d->max_errors;
}

/* Prints "  LINE | text" and "     | ^~~~" for columns [col, col+width). */
static void show_line(FILE *f, size_t lineno, const char *text, size_t n,
                      size_t col, size_t width)
{
    if (!text)
        return;
    size_t from = 0, to = n;
    if (col < 1)
        col = 1;
    if (col > n + 1)
        col = n + 1;
    if (width < 1)
        width = 1;
    if (n > SHOW_MAX) {
        from = col > SHOW_MAX / 2 ? col - SHOW_MAX / 2 : 0;
        to = from + SHOW_MAX < n ? from + SHOW_MAX : n;
    }
    fprintf(f, "%5zu | %s", lineno, from ? "..." : "");
    for (size_t k = from; k < to; k++) {
        unsigned char ch = (unsigned char)text[k];
        fputc(ch == '\t' || (ch >= 32 && ch != 127) ? ch : '?', f);
    }
    fprintf(f, "%s\n      | %s", to < n ? "..." : "", from ? "   " : "");
    for (size_t k = from; k + 1 < col && k < to; k++)
        fputc(text[k] == '\t' ? '\t' : ' ', f);
    fputc('^', f);
    for (size_t k = 1; k < width && col - 1 + k < to; k++)
        fputc('~', f);
    fputc('\n', f);
}

static void vreport(drift_diag *d, const char *kind, const char *file,
                    size_t line, size_t col, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* Messages come from input text: keep control characters out. */
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 32)
            *p = '?';
    if (!strcmp(kind, "error") && !d->first[0]) {
        if (line)
            snprintf(d->first, sizeof d->first, "%.150s:%zu:%zu: %.200s", file,
                     line, col, msg);
        else
            snprintf(d->first, sizeof d->first, "%.150s: %.200s", file, msg);
    }
    if (!printing(d))
        return;
    if (line)
        fprintf(d->out, "%s:%zu:%zu: %s: %s\n", file, line, col, kind, msg);
    else
        fprintf(d->out, "%s: %s: %s\n", file, kind, msg);
}

static void count_error(drift_diag *d)
{
    d->n_errors++;
    if (d->out && d->n_errors == d->max_errors + 1)
        fprintf(d->out, "drift: too many errors; stopping the report "
                        "here\n");
}

static void loc_report(drift_diag *d, const char *kind,
                       const drift_source *src, drift_loc loc,
                       const char *fmt, va_list ap)
{
    const char *name = src ? src->name : "(model)";
    size_t line = loc.first_line > 0 ? (size_t)loc.first_line : 1;
    size_t col = loc.first_column > 0 ? (size_t)loc.first_column : 1;
    vreport(d, kind, name, line, col, fmt, ap);
    if (!printing(d))
        return;
    const char *b;
    size_t n;
    if (drift_source_line(src, (int)line, &b, &n) == 0) {
        size_t width = 1;
        if (loc.last_line == loc.first_line && loc.last_column >= loc.first_column)
            width = (size_t)(loc.last_column - loc.first_column) + 1;
        else if (loc.last_line > loc.first_line && n >= col)
            width = n - col + 1;
        show_line(d->out, line, b, n, col, width);
    }
}

void drift_diag_error(drift_diag *d, const drift_source *src, drift_loc loc,
                      const char *fmt, ...)
{
    count_error(d);
    va_list ap;
    va_start(ap, fmt);
    loc_report(d, "error", src, loc, fmt, ap);
    va_end(ap);
}

void drift_diag_warning(drift_diag *d, const drift_source *src, drift_loc loc,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loc_report(d, "warning", src, loc, fmt, ap);
    va_end(ap);
}

void drift_diag_note(drift_diag *d, const drift_source *src, drift_loc loc,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loc_report(d, "note", src, loc, fmt, ap);
    va_end(ap);
}

void drift_diag_error_at(drift_diag *d, const char *file, size_t line,
                         size_t col, size_t width, const char *text,
                         size_t text_len, const char *fmt, ...)
{
    count_error(d);
    va_list ap;
    va_start(ap, fmt);
    vreport(d, "error", file, line ? line : 1, col ? col : 1, fmt, ap);
    va_end(ap);
    if (printing(d) && text)
        show_line(d->out, line, text, text_len, col, width);
}

void drift_diag_error_file(drift_diag *d, const char *file, const char *fmt,
                           ...)
{
    count_error(d);
    va_list ap;
    va_start(ap, fmt);
    vreport(d, "error", file, 0, 0, fmt, ap);
    va_end(ap);
}

int drift_diag_summary(const drift_diag *d, const char *file, int code,
                       drift_err *e)
{
    /* Printed reports are not repeated: the summary only counts them. */
    if (d->out && d->n_errors)
        return drift_err_set(e, code, "%s: %zu error%s, reported above", file,
                             d->n_errors, d->n_errors == 1 ? "" : "s");
    if (d->n_errors <= 1)
        return drift_err_set(e, code, "%s",
                             d->first[0] ? d->first : "error in the model");
    return drift_err_set(e, code, "%s: %zu errors (the first: %s)", file,
                         d->n_errors, d->first);
}
