/* table.c: the --data loaders behind one function: CSV into a row-major
 * array, LIBSVM into a label column and compressed sparse rows, binary row
 * stores mapped in place.  Not for parsing details (csv.c, libsvm.c,
 * rowstore.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "csv.h"
#include "libsvm.h"
#include "table.h"

static drift_table *table_new(const char *path, drift_err *e)
{
    drift_table *t = drift_calloc(1, sizeof *t);
    if (!t) {
        drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    t->rs.fd = -1;
    t->source = drift_strdup(path);
    if (!t->source) {
        drift_free(t);
        drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    t->view.struct_size = (uint32_t)sizeof(drift_data);
    t->view.source = t->source;
    return t;
}

/* Share `index` of `count` of a text file's bytes from offset `start` (the
 * data after a header) to its end: see drift_textfile_limit. */
static int limit_share(drift_textfile *f, size_t start, unsigned index,
                       unsigned count)
{
    size_t len = (size_t)(f->end - f->p) + (size_t)(f->p - (const char *)f->map);
    size_t span = len > start ? len - start : 0;
    size_t from = start + (size_t)((unsigned __int128)span * index / count);
    size_t to = index + 1 == count
                    ? len
                    : start + (size_t)((unsigned __int128)span * (index + 1) /
                                       count);
    return drift_textfile_limit(f, from, to);
}

/* A share's messages count lines from its first: "PATH:LINE:" at the
 * front of e gets the lines before the share added. */
static void share_lines(drift_err *e, const char *path,
                        const drift_textfile *f)
{
    size_t n = strlen(path);
    if (!f->in_share || strncmp(e->msg, path, n) || e->msg[n] != ':')
        return;
    char *end;
    unsigned long long line = strtoull(e->msg + n + 1, &end, 10);
    if (end == e->msg + n + 1 || *end != ':')
        return;
    char rest[sizeof e->msg];
    snprintf(rest, sizeof rest, "%s", end);
    snprintf(e->msg + n + 1, sizeof e->msg - n - 1, "%llu%s",
             line + (unsigned long long)drift_textfile_line_base(f), rest);
}

/* A CSV file, or its share index of count (count 0: the whole). */
static int read_csv(const char *path, unsigned index, unsigned count,
                    drift_table **out, drift_err *e)
{
    *out = NULL;
    drift_csv c;
    int rc = drift_csv_open(&c, path, 0, e);
    drift_table *t = NULL;
    if (rc)
        goto fail;
    if (count) {
        if (limit_share(&c.f, (size_t)(c.data_start - (const char *)c.f.map),
                        index, count)) {
            rc = drift_err_set(e, DRIFT_EIO,
                               "%s: not a regular file: a run across ranks "
                               "reads its rows in shares of the file",
                               path);
            goto fail;
        }
        c.data_start = c.f.cur;
    }
    size_t rows = drift_csv_count_rows(&c);
    if (rows == 0 && !count) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s:%zu:1: error: the file has a header but no "
                           "data rows",
                           path, c.header_line + 1);
        goto fail;
    }
    if (!(t = table_new(path, e))) {
        rc = DRIFT_ENOMEM;
        goto fail;
    }
    size_t cols = c.n_cols;
    t->values = drift_malloc_array(rows ? rows : 1, cols * sizeof(double));
    if (!t->values) {
        rc = drift_err_set(e, DRIFT_ENOMEM,
                           "%s: out of memory for %zu rows x %zu columns",
                           path, rows, cols);
        goto fail;
    }
    drift_advise_huge(t->values, rows * cols * sizeof(double));
    for (size_t r = 0; r < rows; r++) {
        int got = drift_csv_next(&c, t->values + r * cols, e);
        if (got <= 0) {
            if (got < 0)
                share_lines(e, path, &c.f);
            rc = got < 0 ? DRIFT_EDATA
                         : drift_err_set(e, DRIFT_EINTERNAL,
                                         "%s: fewer rows than counted", path);
            goto fail;
        }
    }
    t->kind = DRIFT_TABLE_CSV;
    t->names = c.names; /* taken over from the reader */
    c.names = NULL;
    t->view.n_rows = rows;
    t->view.n_cols = cols;
    t->view.col_names = (const char *const *)t->names;
    t->view.values = t->values;
    t->view.row_stride = cols;
    /* A share's first line is not known without reading what precedes
     * it: its messages say where (share_lines), the view does not. */
    t->view.first_line = count > 1 ? 0 : c.header_line + 1;
    drift_csv_close(&c);
    *out = t;
    return DRIFT_OK;
fail:
    drift_csv_close(&c);
    drift_table_free(t);
    return rc;
}

int drift_table_read_csv(const char *path, drift_table **out, drift_err *e)
{
    return read_csv(path, 0, 0, out, e);
}

static int read_libsvm(const char *path, unsigned index, unsigned count,
                       drift_table **out, drift_err *e)
{
    *out = NULL;
    drift_libsvm s;
    drift_table *t = NULL;
    int rc = drift_libsvm_open(&s, path, e), got;
    if (rc)
        goto fail;
    if (count && limit_share(&s.f, 0, index, count)) {
        rc = drift_err_set(e, DRIFT_EIO,
                           "%s: not a regular file: a run across ranks "
                           "reads its rows in shares of the file",
                           path);
        goto fail;
    }
    /* Pass 1 sizes everything (and reports any bad row); pass 2 fills. */
    size_t n = 0;
    uint64_t nnz = 0, dim = 0;
    while ((got = drift_libsvm_next(&s, e)) > 0) {
        n++;
        nnz += s.nnz;
        if (s.nnz && (uint64_t)s.idx[s.nnz - 1] + 1 > dim)
            dim = (uint64_t)s.idx[s.nnz - 1] + 1;
    }
    if (got < 0) {
        share_lines(e, path, &s.f);
        rc = DRIFT_EDATA;
        goto fail;
    }
    if (n == 0 && !count) {
        rc = drift_err_set(e, DRIFT_EDATA, "%s:1:1: error: no data rows",
                           path);
        goto fail;
    }
    if (!(t = table_new(path, e))) {
        rc = DRIFT_ENOMEM;
        goto fail;
    }
    t->names = drift_calloc(1, sizeof *t->names);
    t->view.n_cols = t->names ? 1 : 0; /* so that free sees names[0] */
    t->values = drift_malloc_array(n ? n : 1, sizeof(double));
    t->row_ptr = drift_malloc_array(n + 1, sizeof(uint64_t));
    t->idx = drift_malloc_array(nnz ? nnz : 1, sizeof(uint32_t));
    t->val = drift_malloc_array(nnz ? nnz : 1, sizeof(double));
    if (!t->names || !(t->names[0] = drift_strdup("y")) || !t->values ||
        !t->row_ptr || !t->idx || !t->val) {
        rc = drift_err_set(e, DRIFT_ENOMEM,
                           "%s: out of memory for %zu rows and %llu "
                           "non-zeros",
                           path, n, (unsigned long long)nnz);
        goto fail;
    }
    drift_advise_huge(t->idx, nnz * sizeof(uint32_t));
    drift_advise_huge(t->val, nnz * sizeof(double));
    if (drift_textfile_rewind(&s.f)) {
        rc = drift_err_set(e, DRIFT_EINTERNAL, "%s: cannot rewind", path);
        goto fail;
    }
    uint64_t k = 0;
    t->row_ptr[0] = 0;
    for (size_t r = 0; r < n; r++) {
        if (drift_libsvm_next(&s, e) <= 0 || k + s.nnz > nnz) {
            rc = drift_err_set(e, DRIFT_EIO, "%s: changed while being read",
                               path);
            goto fail;
        }
        t->values[r] = s.label;
        if (s.nnz) { /* a row of a label alone has no arrays yet */
            memcpy(t->idx + k, s.idx, s.nnz * sizeof *t->idx);
            memcpy(t->val + k, s.val, s.nnz * sizeof *t->val);
        }
        k += s.nnz;
        t->row_ptr[r + 1] = k;
    }
    t->kind = DRIFT_TABLE_LIBSVM;
    t->sparse = (drift_sparse){"x", (size_t)dim, t->row_ptr, t->idx, t->val,
                               nnz};
    t->view.n_rows = n;
    t->view.n_cols = 1;
    t->view.col_names = (const char *const *)t->names;
    t->view.values = t->values;
    t->view.row_stride = 1;
    t->view.first_line = 0; /* LIBSVM skips comment lines: no fixed map */
    t->view.n_sparse = 1;
    t->view.sparse = &t->sparse;
    drift_libsvm_close(&s);
    *out = t;
    return DRIFT_OK;
fail:
    drift_libsvm_close(&s);
    drift_table_free(t);
    return rc;
}

static int open_rowstore(const char *path, drift_table **out, drift_err *e)
{
    *out = NULL;
    drift_table *t = table_new(path, e);
    if (!t)
        return DRIFT_ENOMEM;
    int rc = drift_rowstore_open(&t->rs, t->source, e);
    if (rc) {
        drift_table_free(t);
        return rc;
    }
    t->kind = DRIFT_TABLE_ROWSTORE;
    t->view = t->rs.view;
    t->view.source = t->source;
    if (t->view.n_sparse)
        t->view.sparse = &t->rs.sparse;
    *out = t;
    return DRIFT_OK;
}

/* Builds t's column index; on failure frees t. */
static int index_columns(drift_table **t, const char *path, drift_err *e)
{
    if (drift_nameindex_build(&(*t)->colix, (*t)->view.col_names,
                              (*t)->view.n_cols) == 0)
        return DRIFT_OK;
    drift_table_free(*t);
    *t = NULL;
    return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
}

int drift_table_open(const char *path, drift_table **out, drift_err *e)
{
    int rc;
    if (drift_rowstore_sniff(path))
        rc = open_rowstore(path, out, e);
    else if (drift_libsvm_path(path))
        rc = read_libsvm(path, 0, 0, out, e);
    else
        rc = drift_table_read_csv(path, out, e);
    return rc ? rc : index_columns(out, path, e);
}

/* Share index of count of a row store: the whole file mapped (its pages
 * are read only where the share's rows lie), the view over the share's
 * rows; sparse rows get row offsets of their own, from 0. */
static int open_rowstore_share(const char *path, unsigned index,
                               unsigned count, drift_table **out,
                               drift_err *e)
{
    *out = NULL;
    drift_table *t = table_new(path, e);
    if (!t)
        return DRIFT_ENOMEM;
    uint64_t lo, hi;
    int rc = drift_rowstore_open_share(&t->rs, t->source, index, count, &lo,
                                       &hi, e);
    if (rc) {
        drift_table_free(t);
        return rc;
    }
    t->kind = DRIFT_TABLE_ROWSTORE;
    t->view = t->rs.view;
    t->view.source = t->source;
    t->view.values = t->rs.view.values + lo * t->rs.view.row_stride;
    t->view.n_rows = (size_t)(hi - lo);
    t->share_first = lo;
    if (t->view.n_sparse) {
        const drift_sparse *sp = &t->rs.sparse;
        t->row_ptr = drift_malloc_array((size_t)(hi - lo) + 1,
                                        sizeof *t->row_ptr);
        if (!t->row_ptr) {
            drift_table_free(t);
            return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        }
        uint64_t base = sp->row_ptr[lo];
        for (uint64_t r = lo; r <= hi; r++)
            t->row_ptr[r - lo] = sp->row_ptr[r] - base;
        t->sparse = *sp;
        t->sparse.row_ptr = t->row_ptr;
        t->sparse.idx = sp->idx + base;
        t->sparse.val = sp->val + base;
        t->sparse.nnz = sp->row_ptr[hi] - base;
        t->view.sparse = &t->sparse;
    }
    *out = t;
    return DRIFT_OK;
}

int drift_table_open_share(const char *path, const drift_table_share *share,
                           drift_table **out, drift_err *e)
{
    *out = NULL;
    drift_table *t = NULL;
    drift_err le = {{0}};
    unsigned i = share->index, n = share->count ? share->count : 1;
    int rc;
    if (drift_rowstore_sniff(path))
        rc = open_rowstore_share(path, i, n, &t, &le);
    else if (drift_libsvm_path(path))
        rc = read_libsvm(path, i, n, &t, &le);
    else
        rc = read_csv(path, i, n, &t, &le);
    uint64_t rows = t ? t->view.n_rows : 0;
    uint64_t dim = t && t->view.n_sparse ? t->view.sparse[0].dim : 0;
    uint64_t first = 0, total = 0, dim_all = 0;
    int arc = share->agree(share->user, rc, le.msg, rows, dim, &first, &total,
                           &dim_all, e);
    if (arc) {
        drift_table_free(t);
        return arc;
    }
    if (total == 0) {
        drift_table_free(t);
        return drift_err_set(e, DRIFT_EDATA, "%s: error: no data rows",
                             path);
    }
    if (t->kind == DRIFT_TABLE_ROWSTORE && first != t->share_first) {
        drift_table_free(t);
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%s: the shares' rows do not follow each other "
                             "(share %u begins at row %llu, the ones before "
                             "it hold %llu)",
                             path, i, (unsigned long long)t->share_first,
                             (unsigned long long)first);
    }
    t->share_first = first;
    t->share_total = total;
    if (t->view.n_sparse && t->kind == DRIFT_TABLE_LIBSVM)
        t->sparse.dim = (size_t)dim_all;
    *out = t;
    return index_columns(out, path, e);
}

long drift_table_column(const drift_table *t, const char *name)
{
    if (!t->colix.cap)
        return drift_data_column(&t->view, name);
    return drift_nameindex_find(&t->colix, name);
}

void drift_table_advise(const drift_table *t, int sequential)
{
    if (t && t->kind == DRIFT_TABLE_ROWSTORE)
        drift_rowstore_advise(&t->rs, sequential);
}

void drift_table_free(drift_table *t)
{
    if (!t)
        return;
    if (t->names)
        for (size_t c = 0; c < t->view.n_cols && t->kind != DRIFT_TABLE_ROWSTORE; c++)
            drift_free(t->names[c]);
    drift_free(t->names);
    drift_free(t->values);
    drift_free(t->row_ptr);
    drift_free(t->idx);
    drift_free(t->val);
    drift_nameindex_free(&t->colix);
    if (t->kind == DRIFT_TABLE_ROWSTORE || t->rs.fd >= 0)
        drift_rowstore_close(&t->rs);
    drift_free(t->source);
    drift_free(t);
}
