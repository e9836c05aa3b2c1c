/* libsvm.c: LIBSVM rows, validated as they are read: a finite label, then
 * index:value pairs with indices 1 .. 2^32-1 strictly increasing and
 * finite values; every problem reported with file, line and column. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "libsvm.h"

int drift_libsvm_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (!strcmp(dot, ".libsvm") || !strcmp(dot, ".svm") ||
                   !strcmp(dot, ".svmlight"));
}

int drift_libsvm_open(drift_libsvm *s, const char *path, drift_err *e)
{
    memset(s, 0, sizeof *s);
    return drift_textfile_open(&s->f, path, 0, e);
}

void drift_libsvm_close(drift_libsvm *s)
{
    drift_free(s->idx);
    drift_free(s->val);
    drift_textfile_close(&s->f);
    memset(s, 0, sizeof *s);
}

static int push(drift_libsvm *s, uint32_t i, double v)
{
    if (s->nnz == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 64;
        uint32_t *ni = drift_realloc(s->idx, nc * sizeof *ni);
        if (!ni)
            return -1;
        s->idx = ni;
        double *nv = drift_realloc(s->val, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->val = nv;
        s->cap = nc;
    }
    s->idx[s->nnz] = i;
    s->val[s->nnz] = v;
    s->nnz++;
    return 0;
}

/* Parses [b, e) as a finite double. */
static int number(const char *b, const char *e, double *out)
{
    char buf[128];
    size_t len = (size_t)(e - b);
    /* strtod would stop at a NUL byte and take "1\0x" for 1. */
    if (len == 0 || len >= sizeof buf || memchr(b, '\0', len))
        return -1;
    memcpy(buf, b, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* drift_libsvm_next without the check that the file is still whole. */
static int next_row(drift_libsvm *s, drift_err *e)
{
    drift_line ln;
    const char *path = s->f.path;
    for (;;) {
        int got = drift_textfile_next(&s->f, &ln);
        if (got <= 0)
            return got;
        /* Drop a comment, then skip lines that are empty. */
        const char *hash = memchr(ln.b, '#', (size_t)(ln.e - ln.b));
        if (hash)
            ln.e = hash;
        if (!drift_line_blank(&ln))
            break;
    }
    size_t lineno = s->f.lineno;
    s->nnz = 0;
    const char *p = ln.b;
    while (p < ln.e && (*p == ' ' || *p == '\t'))
        p++;
    const char *tok = p;
    while (p < ln.e && *p != ' ' && *p != '\t')
        p++;
    char shown[64];
    if (number(tok, p, &s->label)) {
        drift_describe(tok, p, shown, sizeof shown);
        drift_err_set(e, DRIFT_EDATA,
                      "%s:%zu:%zu: error: label '%s' is not a finite "
                      "number (LIBSVM rows read 'label index:value ...')",
                      path, lineno, (size_t)(tok - ln.b) + 1, shown);
        return -1;
    }
    unsigned long long prev = 0;
    for (;;) {
        while (p < ln.e && (*p == ' ' || *p == '\t'))
            p++;
        if (p >= ln.e)
            break;
        tok = p;
        while (p < ln.e && *p != ' ' && *p != '\t')
            p++;
        size_t col = (size_t)(tok - ln.b) + 1;
        const char *colon = memchr(tok, ':', (size_t)(p - tok));
        drift_describe(tok, p, shown, sizeof shown);
        if (!colon) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: '%s' is not index:value",
                          path, lineno, col, shown);
            return -1;
        }
        char ibuf[32];
        size_t ilen = (size_t)(colon - tok);
        unsigned long long index = 0;
        int ok = ilen > 0 && ilen < sizeof ibuf && !memchr(tok, 0, ilen);
        if (ok) {
            memcpy(ibuf, tok, ilen);
            ibuf[ilen] = '\0';
            ok = drift_parse_u64(ibuf, (uint64_t *)&index) == 0;
        }
        if (!ok || index == 0 || index > UINT32_MAX) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: index in '%s' must be an "
                          "integer from 1 to %u",
                          path, lineno, col, shown, (unsigned)UINT32_MAX);
            return -1;
        }
        if (index <= prev) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: index %llu after %llu: indices "
                          "must increase within a row",
                          path, lineno, col, index, prev);
            return -1;
        }
        double v;
        if (number(colon + 1, p, &v)) {
            drift_err_set(e, DRIFT_EDATA,
                          "%s:%zu:%zu: error: value in '%s' is not a finite "
                          "number",
                          path, lineno, col, shown);
            return -1;
        }
        prev = index;
        if (push(s, (uint32_t)(index - 1), v)) {
            drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
            return -1;
        }
    }
    return 1;
}

int drift_libsvm_next(drift_libsvm *s, drift_err *e)
{
    int got = next_row(s, e);
    /* Rows read from a map whose file lost pages are zeros, not data. */
    if (drift_textfile_status(&s->f, 0, e))
        return -1;
    return got;
}
