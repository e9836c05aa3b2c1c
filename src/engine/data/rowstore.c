/* rowstore.c: writing drift's binary row store by streaming conversion
 * from CSV or LIBSVM, and mapping it back with every header field checked
 * before any data is read.  Layout (all integers in the writer's byte
 * order, recorded by the endian field):
 *
 *   [prefix | column table | padding to 4096]   header_bytes, checksummed
 *   dense:   n_rows x n_cols doubles, row-major, at header_bytes
 *   sparse:  row_ptr (n_rows+1 uint64), idx (nnz uint32), val (nnz double),
 *            each at a 64-byte aligned offset given in the column table
 *
 * Column table: per dense column {u32 name_len, u32 type, name, pad to 8};
 * per sparse variable {u32 name_len, u32 0, name, pad to 8, u64 dim,
 * u64 nnz, u64 row_ptr_offset, u64 idx_offset, u64 val_offset}.
 * Not for other formats' parsing (csv.c, libsvm.c). */
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

#include "base/mapguard.h"
#include "base/nameindex.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "csv.h"
#include "libsvm.h"
#include "rowstore.h"

static const char MAGIC[8] = {'D', 'R', 'I', 'F', 'T', 'R', 'S', 0x1a};
#define ENDIAN_MARK 0x01020304u
#define HEADER_ALIGN 4096u
/* What a store may hold, for the reader and the writer alike. */
#define MAX_DENSE_COLS 1000000u
#define MAX_NAME_BYTES 4096u
#define MAX_HEADER_BYTES ((uint64_t)1 << 30)

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* ---- writing ------------------------------------------------------------ */

/* A buffered stream into one region of the output file. */
typedef struct section {
    int fd;
    uint64_t off;
    char *buf;
    size_t len, cap;
    int failed;
} section;

static int section_init(section *s, int fd, uint64_t off)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->off = off;
    s->cap = (size_t)1 << 20;
    s->buf = drift_malloc(s->cap);
    return s->buf ? 0 : -1;
}

static void section_flush(section *s)
{
    size_t done = 0;
    while (done < s->len && !s->failed) {
        ssize_t w = pwrite(s->fd, s->buf + done, s->len - done,
                           (off_t)(s->off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            s->failed = errno ? errno : EIO;
        else
            done += (size_t)w;
    }
    s->off += s->len;
    s->len = 0;
}

static void section_put(section *s, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        size_t k = s->cap - s->len < n ? s->cap - s->len : n;
        memcpy(s->buf + s->len, c, k);
        s->len += k;
        c += k;
        n -= k;
        if (s->len == s->cap)
            section_flush(s);
    }
}

static void section_free(section *s) { drift_free(s->buf); }

/* Serialises a header into a fresh buffer of *len bytes. */
typedef struct header_spec {
    uint64_t n_rows;
    size_t n_cols;
    const char *const *names;
    const uint32_t *types;
    int sparse;
    const char *sparse_name;
    uint64_t dim, nnz;
} header_spec;

static size_t table_bytes(const header_spec *h)
{
    size_t n = 0;
    for (size_t k = 0; k < h->n_cols; k++)
        n += 8 + align_up(strlen(h->names[k]), 8);
    if (h->sparse)
        n += 8 + align_up(strlen(h->sparse_name), 8) + 5 * 8;
    return n;
}

/* Offsets of the sections that follow the header. */
typedef struct layout {
    uint64_t header_bytes, dense_off, rowptr_off, idx_off, val_off, file_bytes;
} layout;

static layout plan(const header_spec *h)
{
    layout L;
    L.header_bytes = align_up(sizeof(drift_rowstore_prefix) + table_bytes(h),
                              HEADER_ALIGN);
    L.dense_off = L.header_bytes;
    uint64_t end = L.dense_off + h->n_rows * h->n_cols * sizeof(double);
    L.rowptr_off = L.idx_off = L.val_off = 0;
    if (h->sparse) {
        L.rowptr_off = align_up(end, 64);
        L.idx_off = align_up(L.rowptr_off + (h->n_rows + 1) * 8, 64);
        L.val_off = align_up(L.idx_off + h->nnz * 4, 64);
        end = L.val_off + h->nnz * 8;
    }
    L.file_bytes = end;
    return L;
}

static unsigned char *build_header(const header_spec *h, const layout *L)
{
    unsigned char *buf = drift_calloc(1, L->header_bytes);
    if (!buf)
        return NULL;
    drift_rowstore_prefix pre;
    memset(&pre, 0, sizeof pre);
    memcpy(pre.magic, MAGIC, 8);
    pre.version = DRIFT_ROWSTORE_VERSION;
    pre.endian = ENDIAN_MARK;
    pre.header_bytes = L->header_bytes;
    pre.n_rows = h->n_rows;
    pre.n_cols = h->n_cols;
    pre.n_sparse = h->sparse ? 1 : 0;
    pre.file_bytes = L->file_bytes;
    unsigned char *p = buf + sizeof pre;
    for (size_t k = 0; k < h->n_cols; k++) {
        uint32_t len = (uint32_t)strlen(h->names[k]);
        memcpy(p, &len, 4);
        memcpy(p + 4, &h->types[k], 4);
        memcpy(p + 8, h->names[k], len);
        p += 8 + align_up(len, 8);
    }
    if (h->sparse) {
        uint32_t len = (uint32_t)strlen(h->sparse_name), zero = 0;
        memcpy(p, &len, 4);
        memcpy(p + 4, &zero, 4);
        memcpy(p + 8, h->sparse_name, len);
        p += 8 + align_up(len, 8);
        uint64_t f[5] = {h->dim, h->nnz, L->rowptr_off, L->idx_off, L->val_off};
        memcpy(p, f, sizeof f);
    }
    memcpy(buf, &pre, sizeof pre);
    pre.checksum = fnv1a(buf, L->header_bytes);
    memcpy(buf, &pre, sizeof pre);
    return buf;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
    const char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* The first failed write of any section, as an error naming out. */
static int sections_failed(const section *s, size_t n, const char *out,
                           drift_err *e)
{
    for (size_t k = 0; k < n; k++)
        if (s[k].failed)
            return drift_err_set(e, DRIFT_EIO,
                                 "%s: write error: %s; the row store is not "
                                 "written (a previous file of that name is "
                                 "kept)",
                                 out, strerror(s[k].failed));
    return DRIFT_OK;
}

/* Why a conversion stops before its input's end: a signal asked (the
 * command's handlers, base/stop.h), or the input's map lost pages.
 * Checked for every row: two atomic loads. */
static int convert_stopped(drift_textfile *f, const char *in, uint64_t rows,
                           drift_err *e)
{
    int sig = drift_stop_requested();
    if (sig) {
        char name[32];
        return drift_err_set(e, DRIFT_ESTOP,
                             "interrupted by %s after %llu rows of %s",
                             drift_stop_signal_name(sig, name, sizeof name),
                             (unsigned long long)rows, in);
    }
    return drift_textfile_status(f, 0, e);
}

/* Puts the finished store in place: the header at offset 0, the length,
 * then the writer's commit (synced, renamed over out). */
static int finish_store(drift_writer **w, const unsigned char *hdr,
                        const layout *L, const char *out, drift_err *e)
{
    int fd = drift_writer_fd(*w);
    if (write_all(fd, hdr, L->header_bytes, 0) ||
        ftruncate(fd, (off_t)L->file_bytes) != 0)
        return drift_err_set(e, DRIFT_EIO,
                             "%s: write error: %s; the row store is not "
                             "written (a previous file of that name is kept)",
                             out, strerror(errno));
    int rc = drift_writer_commit(*w, e);
    *w = NULL;
    return rc;
}

/* Whether header column col belongs to rows variable name: col is name
 * itself or name followed by ".<digit>...". */
static int column_of(const char *col, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(col, name, n) != 0)
        return 0;
    return col[n] == '\0' || (col[n] == '.' && col[n + 1] >= '0' &&
                              col[n + 1] <= '9');
}

/* The columns a schema keeps (indices into the CSV's columns), in schema
 * order (header order within a variable), and which must hold integers.
 * *n_out gets their number. */
static int schema_columns(const drift_csv *c, const char *in,
                          const drift_schema_var *vars, size_t n_vars,
                          size_t *pick, unsigned char *want_int,
                          size_t *n_out, drift_err *e)
{
    size_t nk = 0;
    for (size_t v = 0; v < n_vars; v++) {
        size_t found = 0;
        for (size_t j = 0; j < c->n_cols && nk < c->n_cols; j++)
            if (column_of(c->names[j], vars[v].name)) {
                want_int[nk] = (unsigned char)vars[v].is_int;
                pick[nk++] = j;
                found++;
            }
        if (!found)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu: error: no column for rows variable "
                                 "'%s' (expected a column '%s', or '%s.1', "
                                 "'%s.2', ...)",
                                 in, c->header_line, vars[v].name,
                                 vars[v].name, vars[v].name, vars[v].name);
    }
    *n_out = nk;
    return DRIFT_OK;
}

/* The columns keep names (NULL: all), as indices into the CSV's columns,
 * found through a hash index (a header may have 10^6 names). */
static int named_columns(const drift_csv *c, const char *in,
                         const char *const *keep, size_t *pick,
                         size_t *n_out, drift_err *e)
{
    if (!keep) {
        for (size_t k = 0; k < c->n_cols; k++)
            pick[k] = k;
        *n_out = c->n_cols;
        return DRIFT_OK;
    }
    drift_nameindex cols, kept;
    if (drift_nameindex_build(&cols, (const char *const *)c->names,
                              c->n_cols))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if (drift_nameindex_init(&kept, 16)) {
        drift_nameindex_free(&cols);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    int rc = DRIFT_OK;
    size_t nk = 0;
    for (; keep[nk] && !rc; nk++) {
        long j = drift_nameindex_find(&cols, keep[nk]);
        int again = j < 0 ? 0 : drift_nameindex_add(&kept, keep[nk], nk, NULL);
        if (j < 0)
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s: has no column '%s' (the rows schema "
                               "needs it)",
                               in, keep[nk]);
        else if (again < 0)
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        else if (again)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "column '%s' is asked for twice; a row store "
                               "names each column once",
                               keep[nk]);
        else if (nk < c->n_cols)
            pick[nk] = (size_t)j;
    }
    drift_nameindex_free(&cols);
    drift_nameindex_free(&kept);
    *n_out = nk;
    return rc;
}

/* What the reader accepts of a header (drift_rowstore_open); the writer
 * checks it first, so that it never writes a store drift cannot open. */
static int header_fits(const header_spec *h, const layout *L, const char *in,
                       drift_err *e)
{
    if (h->n_cols > MAX_DENSE_COLS)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: %zu columns; a row store holds at most %u "
                             "dense columns",
                             in, h->n_cols, (unsigned)MAX_DENSE_COLS);
    for (size_t k = 0; k < h->n_cols; k++)
        if (strlen(h->names[k]) > MAX_NAME_BYTES)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: column %zu's name is %zu bytes long; "
                                 "a row store holds names of at most %u "
                                 "bytes",
                                 in, k + 1, strlen(h->names[k]),
                                 (unsigned)MAX_NAME_BYTES);
    if (L->header_bytes > MAX_HEADER_BYTES)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: the column names take %llu bytes; a row "
                             "store's header holds at most %llu",
                             in, (unsigned long long)L->header_bytes,
                             (unsigned long long)MAX_HEADER_BYTES);
    return DRIFT_OK;
}

static int convert_csv(const char *in, const char *out,
                       const char *const *keep, const drift_schema_var *vars,
                       size_t n_vars, uint64_t *rows_out, drift_err *e)
{
    drift_csv c;
    int rc = drift_csv_open(&c, in, 1, e);
    if (rc) {
        drift_csv_close(&c);
        return rc;
    }
    size_t cap = c.n_cols ? c.n_cols : 1;
    size_t *pick = drift_calloc(cap, sizeof *pick);
    unsigned char *want_int = drift_calloc(cap, 1);
    uint32_t *types = drift_calloc(cap, sizeof *types);
    const char **names = drift_calloc(cap, sizeof *names);
    double *row = drift_calloc(cap, sizeof *row);
    double *orow = drift_calloc(cap, sizeof *orow);
    drift_writer *w = NULL;
    section s;
    memset(&s, 0, sizeof s);
    unsigned char *hdr = NULL;
    size_t n_out = 0;
    if (!pick || !want_int || !types || !names || !row || !orow) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    rc = vars ? schema_columns(&c, in, vars, n_vars, pick, want_int, &n_out,
                               e)
              : named_columns(&c, in, keep, pick, &n_out, e);
    if (rc)
        goto done;
    if (n_out > c.n_cols) {
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%zu columns asked for, but %s has %zu", n_out,
                           in, c.n_cols);
        goto done;
    }
    for (size_t k = 0; k < n_out; k++) {
        names[k] = c.names[pick[k]];
        types[k] = 1; /* integer-valued until a fraction is seen */
    }
    header_spec h = {0, n_out, names, types, 0, NULL, 0, 0};
    layout L = plan(&h);
    if ((rc = header_fits(&h, &L, in, e)))
        goto done;
    if ((rc = drift_writer_open(out, &w, e)))
        goto done;
    if (section_init(&s, drift_writer_fd(w), L.dense_off)) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    uint64_t n = 0;
    int got;
    while ((got = drift_csv_next(&c, row, e)) > 0) {
        for (size_t k = 0; k < n_out; k++) {
            orow[k] = row[pick[k]];
            if (types[k] && orow[k] != floor(orow[k])) {
                types[k] = 0;
                if (want_int[k]) {
                    rc = drift_err_set(e, DRIFT_EDATA,
                                       "%s:%zu: error: column '%s' holds "
                                       "%.10g, but the rows schema declares "
                                       "it an int",
                                       in, drift_csv_line(&c), names[k],
                                       orow[k]);
                    goto done;
                }
            }
        }
        section_put(&s, orow, n_out * sizeof *orow);
        n++;
        if ((n & 0xffff) == 0)
            drift_textfile_release(&c.f);
        if ((rc = sections_failed(&s, 1, out, e)) ||
            (rc = convert_stopped(&c.f, in, n, e)))
            goto done;
    }
    if (got < 0) {
        rc = DRIFT_EDATA;
        if (drift_mapguard_any())
            rc = drift_textfile_status(&c.f, 0, e);
        goto done;
    }
    if (n == 0) {
        rc = drift_err_set(e, DRIFT_EDATA,
                           "%s:%zu:1: error: the file has a header but no "
                           "data rows",
                           in, c.header_line + 1);
        goto done;
    }
    section_flush(&s);
    if ((rc = sections_failed(&s, 1, out, e)) ||
        (rc = drift_textfile_status(&c.f, 1, e)))
        goto done;
    h.n_rows = n;
    L = plan(&h);
    hdr = build_header(&h, &L);
    if (!hdr) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    rc = finish_store(&w, hdr, &L, out, e);
    if (!rc && rows_out)
        *rows_out = n;
done:
    drift_writer_abort(w);
    section_free(&s);
    drift_free(hdr);
    drift_free(pick);
    drift_free(want_int);
    drift_free(types);
    drift_free(names);
    drift_free(row);
    drift_free(orow);
    drift_csv_close(&c);
    return rc;
}

static int convert_libsvm(const char *in, const char *out, uint64_t *rows_out,
                          drift_err *e)
{
    drift_libsvm s;
    int rc = drift_libsvm_open(&s, in, e);
    if (rc) {
        drift_libsvm_close(&s);
        return rc;
    }
    /* Pass 1: validate everything and size the sections. */
    uint64_t n = 0, nnz = 0, dim = 0;
    uint32_t label_int = 1;
    int got;
    while ((got = drift_libsvm_next(&s, e)) > 0) {
        n++;
        nnz += s.nnz;
        if (s.nnz && (uint64_t)s.idx[s.nnz - 1] + 1 > dim)
            dim = (uint64_t)s.idx[s.nnz - 1] + 1;
        if (s.label != floor(s.label))
            label_int = 0;
        if ((n & 0xffff) == 0)
            drift_textfile_release(&s.f);
        if ((rc = convert_stopped(&s.f, in, n, e))) {
            drift_libsvm_close(&s);
            return rc;
        }
    }
    if (got < 0) {
        drift_libsvm_close(&s);
        return DRIFT_EDATA;
    }
    if (n == 0) {
        drift_libsvm_close(&s);
        return drift_err_set(e, DRIFT_EDATA, "%s:1:1: error: no data rows",
                             in);
    }
    if (nnz == 0) {
        drift_libsvm_close(&s);
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: no row has a feature (index:value), only "
                             "labels; a row store of LIBSVM rows needs at "
                             "least one feature",
                             in);
    }
    const char *names[1] = {"y"};
    header_spec h = {n, 1, names, &label_int, 1, "x", dim, nnz};
    layout L = plan(&h);
    drift_writer *w = NULL;
    section sec[4]; /* y, row_ptr, idx, val */
    memset(sec, 0, sizeof sec);
    unsigned char *hdr = build_header(&h, &L);
    if (!hdr) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = drift_writer_open(out, &w, e)))
        goto done;
    int fd = drift_writer_fd(w);
    if (section_init(&sec[0], fd, L.dense_off) ||
        section_init(&sec[1], fd, L.rowptr_off) ||
        section_init(&sec[2], fd, L.idx_off) ||
        section_init(&sec[3], fd, L.val_off)) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    /* Pass 2: write the four sections side by side. */
    if (drift_textfile_rewind(&s.f)) {
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: LIBSVM conversion reads its input twice, so "
                           "it must be a regular file, not a pipe",
                           in);
        goto done;
    }
    uint64_t ptr = 0, r = 0;
    section_put(&sec[1], &ptr, 8);
    while ((got = drift_libsvm_next(&s, e)) > 0) {
        if (r == n || ptr + s.nnz > nnz)
            break; /* more than pass 1 saw: reported below */
        section_put(&sec[0], &s.label, 8);
        section_put(&sec[2], s.idx, s.nnz * 4);
        section_put(&sec[3], s.val, s.nnz * 8);
        ptr += s.nnz;
        section_put(&sec[1], &ptr, 8);
        if ((++r & 0xffff) == 0)
            drift_textfile_release(&s.f);
        if ((rc = sections_failed(sec, 4, out, e)) ||
            (rc = convert_stopped(&s.f, in, r, e)))
            goto done;
    }
    if (got < 0) {
        rc = DRIFT_EDATA;
        goto done;
    }
    if ((rc = drift_textfile_status(&s.f, 1, e)))
        goto done;
    if (r != n || ptr != nnz) {
        rc = drift_err_set(e, DRIFT_EIO, "%s: changed while being converted",
                           in);
        goto done;
    }
    for (int k = 0; k < 4; k++)
        section_flush(&sec[k]);
    if ((rc = sections_failed(sec, 4, out, e)))
        goto done;
    rc = finish_store(&w, hdr, &L, out, e);
    if (!rc && rows_out)
        *rows_out = n;
done:
    drift_writer_abort(w);
    for (int k = 0; k < 4; k++)
        section_free(&sec[k]);
    drift_free(hdr);
    drift_libsvm_close(&s);
    return rc;
}

/* What every conversion checks before it reads: in is no row store, out
 * may be written and is not in. */
static int convert_check(const char *in, const char *out, drift_err *e)
{
    const char *inputs[1] = {in};
    int rc = drift_writer_check(out, inputs, 1, e);
    if (rc)
        return rc;
    if (drift_rowstore_sniff(in))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: is already a drift row store", in);
    return DRIFT_OK;
}

int drift_rowstore_convert(const char *in, const char *out,
                           const char *const *keep, uint64_t *rows,
                           drift_err *e)
{
    int rc = convert_check(in, out, e);
    if (rc)
        return rc;
    if (drift_libsvm_path(in)) {
        if (keep)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: a LIBSVM file has columns y and x; a "
                                 "rows schema cannot select others",
                                 in);
        return convert_libsvm(in, out, rows, e);
    }
    return convert_csv(in, out, keep, NULL, 0, rows, e);
}

int drift_rowstore_convert_schema(const char *in, const char *out,
                                  const drift_schema_var *vars, size_t n,
                                  uint64_t *rows, drift_err *e)
{
    int rc = convert_check(in, out, e);
    if (rc)
        return rc;
    if (drift_libsvm_path(in)) {
        for (size_t k = 0; k < n; k++)
            if (strcmp(vars[k].name, "y") && strcmp(vars[k].name, "x"))
                return drift_err_set(e, DRIFT_EDATA,
                                     "%s: a LIBSVM file holds rows variables "
                                     "y (the label) and x (sparse "
                                     "features), not '%s'",
                                     in, vars[k].name);
        return convert_libsvm(in, out, rows, e);
    }
    return convert_csv(in, out, NULL, vars, n, rows, e);
}

/* ---- reading ------------------------------------------------------------ */

int drift_rowstore_sniff(const char *path)
{
    /* Only a regular file can be a row store; never open a pipe or FIFO
     * here, which would consume or lose its data. */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    char m[8];
    ssize_t got = pread(fd, m, 8, 0);
    close(fd);
    return got == 8 && memcmp(m, MAGIC, 7) == 0;
}

/* Reads the fixed prefix and header, checking magic, version, byte order,
 * sizes and checksum; *hdr gets the header bytes. */
static int read_header(int fd, const char *path, uint64_t size,
                       drift_rowstore_prefix *pre, unsigned char **hdr,
                       drift_err *e)
{
    *hdr = NULL;
    if (size < sizeof *pre)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: not a drift row store: %llu bytes is "
                             "shorter than the %zu-byte header",
                             path, (unsigned long long)size, sizeof *pre);
    if (pread(fd, pre, sizeof *pre, 0) != (ssize_t)sizeof *pre)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot read the header", path);
    if (memcmp(pre->magic, MAGIC, 8) != 0)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: not a drift row store (wrong magic "
                             "number); make one with 'drift data convert'",
                             path);
    if (pre->endian != ENDIAN_MARK) {
        if (pre->endian == 0x04030201u)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: written on a machine of the other byte "
                                 "order; convert the source data again here",
                                 path);
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (bad byte-order mark)", path);
    }
    if (pre->version > DRIFT_ROWSTORE_VERSION)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: row store format version %u is newer than "
                             "this drift reads (version %u); upgrade drift or "
                             "convert the source data with this one",
                             path, pre->version, DRIFT_ROWSTORE_VERSION);
    if (pre->version == 0)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (format version 0)", path);
    if (pre->header_bytes < sizeof *pre || pre->header_bytes > MAX_HEADER_BYTES)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (header size %llu)", path,
                             (unsigned long long)pre->header_bytes);
    if (pre->header_bytes % 8)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (header_bytes = %llu is not "
                             "a multiple of 8, so the doubles after it would "
                             "be misaligned)",
                             path, (unsigned long long)pre->header_bytes);
    if (pre->header_bytes > size)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: truncated: the header says it is %llu "
                             "bytes, the file has %llu",
                             path, (unsigned long long)pre->header_bytes,
                             (unsigned long long)size);
    unsigned char *buf = drift_malloc((size_t)pre->header_bytes);
    if (!buf)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if (pread(fd, buf, (size_t)pre->header_bytes, 0) !=
        (ssize_t)pre->header_bytes) {
        drift_free(buf);
        return drift_err_set(e, DRIFT_EIO, "%s: cannot read the header", path);
    }
    uint64_t want = pre->checksum;
    memset(buf + offsetof(drift_rowstore_prefix, checksum), 0, 8);
    uint64_t got = fnv1a(buf, (size_t)pre->header_bytes);
    if (got != want) {
        drift_free(buf);
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header: checksum mismatch (stored "
                             "%016llx, computed %016llx)",
                             path, (unsigned long long)want,
                             (unsigned long long)got);
    }
    if (pre->file_bytes != size) {
        drift_free(buf);
        if (pre->file_bytes > size)
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: truncated: the header says %llu bytes, "
                                 "the file has %llu",
                                 path, (unsigned long long)pre->file_bytes,
                                 (unsigned long long)size);
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt: the header says %llu bytes, the "
                             "file has %llu",
                             path, (unsigned long long)pre->file_bytes,
                             (unsigned long long)size);
    }
    *hdr = buf;
    return DRIFT_OK;
}

/* Reads a name entry at *p (bounded by end) into a fresh string; NULL
 * for a corrupt entry, or with *oom set when out of memory. */
static char *take_name(const unsigned char **p, const unsigned char *end,
                       uint32_t *type, int *oom)
{
    *oom = 0;
    if (end - *p < 8)
        return NULL;
    uint32_t len;
    memcpy(&len, *p, 4);
    memcpy(type, *p + 4, 4);
    if (len == 0 || len > MAX_NAME_BYTES ||
        (uint64_t)(end - *p) < 8 + align_up(len, 8))
        return NULL;
    if (memchr(*p + 8, '\0', len))
        return NULL; /* a name with a NUL byte inside is no C string */
    char *s = drift_malloc(len + 1);
    if (!s) {
        *oom = 1;
        return NULL;
    }
    memcpy(s, *p + 8, len);
    s[len] = '\0';
    *p += 8 + align_up(len, 8);
    return s;
}

/* Checks every size and offset of a header against the file's size, each
 * on its own before any sum or product, and every sum and product for
 * wrap-around: a header is input like any other (the checksum only
 * catches accidents; anyone can recompute it).  The sections must lie in
 * the order the writer puts them: header, dense rows, row_ptr, idx, val.
 * f holds the sparse table entry (dim, nnz, row_ptr, idx and val
 * offsets) when there is a sparse variable. */
static int check_layout(const drift_rowstore_prefix *pre, const uint64_t f[5],
                        uint64_t size, const char *path, drift_err *e)
{
    unsigned long long N = pre->n_rows, C = pre->n_cols, S = size;
    uint64_t cells, dense_bytes, dense_end;
    if (N == 0)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (n_rows = 0; a row store "
                             "holds at least one row)",
                             path);
    /* Every row takes at least 8 bytes (a double or a row offset). */
    if (N > size / 8)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (n_rows = %llu: more rows "
                             "than the file's %llu bytes can hold)",
                             path, N, S);
    if (__builtin_mul_overflow(pre->n_rows, pre->n_cols, &cells) ||
        __builtin_mul_overflow(cells, (uint64_t)8, &dense_bytes) ||
        dense_bytes > size ||
        __builtin_add_overflow(pre->header_bytes, dense_bytes, &dense_end) ||
        dense_end > size)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (n_rows = %llu: %llu rows "
                             "of %llu dense columns do not fit in the "
                             "file's %llu bytes)",
                             path, N, N, C, S);
    if (!pre->n_sparse)
        return DRIFT_OK;
    unsigned long long dim = f[0], nnz = f[1], rp = f[2], ix = f[3],
                       vl = f[4];
    uint64_t rp_bytes, rp_end, ix_bytes, ix_end, vl_bytes, vl_end;
    if (dim == 0 || dim > (uint64_t)UINT32_MAX + 1)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (sparse dim = %llu; "
                             "expected 1 to 2^32)",
                             path, dim);
    /* Every non-zero takes 12 bytes (a 4-byte index, an 8-byte value). */
    if (nnz > size / 12)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (sparse nnz = %llu: more "
                             "non-zeros than the file's %llu bytes can "
                             "hold)",
                             path, nnz, S);
    if (rp % 8 || rp > size || rp < dense_end ||
        __builtin_mul_overflow(pre->n_rows + 1, (uint64_t)8, &rp_bytes) ||
        __builtin_add_overflow(f[2], rp_bytes, &rp_end) || rp_end > size)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (sparse row_ptr offset = "
                             "%llu: %llu row offsets there do not fit "
                             "between the dense rows' end at %llu and the "
                             "file's end at %llu, 8-byte aligned)",
                             path, rp, N + 1, (unsigned long long)dense_end,
                             S);
    if (ix % 4 || ix > size || ix < rp_end ||
        __builtin_mul_overflow(f[1], (uint64_t)4, &ix_bytes) ||
        __builtin_add_overflow(f[3], ix_bytes, &ix_end) || ix_end > size)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (sparse idx offset = %llu: "
                             "%llu indices there do not fit between the row "
                             "offsets' end at %llu and the file's end at "
                             "%llu, 4-byte aligned)",
                             path, ix, nnz, (unsigned long long)rp_end, S);
    if (vl % 8 || vl > size || vl < ix_end ||
        __builtin_mul_overflow(f[1], (uint64_t)8, &vl_bytes) ||
        __builtin_add_overflow(f[4], vl_bytes, &vl_end) || vl_end > size)
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (sparse val offset = %llu: "
                             "%llu values there do not fit between the "
                             "indices' end at %llu and the file's end at "
                             "%llu, 8-byte aligned)",
                             path, vl, nnz, (unsigned long long)ix_end, S);
    return DRIFT_OK;
}

void drift_rowstore_close(drift_rowstore *rs)
{
    if (rs->names)
        for (size_t k = 0; k < rs->view.n_cols; k++)
            drift_free(rs->names[k]);
    drift_free(rs->names);
    drift_free(rs->sparse_name);
    drift_free(rs->col_types);
    if (rs->guard)
        drift_mapguard_remove(rs->guard - 1);
    if (rs->map)
        munmap(rs->map, rs->map_len);
    if (rs->fd >= 0)
        close(rs->fd);
    memset(rs, 0, sizeof *rs);
    rs->fd = -1;
}

/* Maps path and checks its header; the sparse rows' offsets and indices
 * are checked for rows lo .. hi - 1 of the share (index of count) alone,
 * which are all a run across ranks reads of them. */
static int open_part(drift_rowstore *rs, const char *path, unsigned index,
                     unsigned count, uint64_t *lo_out, uint64_t *hi_out,
                     drift_err *e)
{
    memset(rs, 0, sizeof *rs);
    rs->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (rs->fd < 0)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open data file: %s",
                             path, strerror(errno));
    struct stat st;
    if (fstat(rs->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        drift_rowstore_close(rs);
        return drift_err_set(e, DRIFT_EIO, "%s: not a regular file", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    unsigned char *hdr;
    int rc = read_header(rs->fd, path, size, &rs->prefix, &hdr, e);
    if (rc) {
        drift_rowstore_close(rs);
        return rc;
    }
    const drift_rowstore_prefix *pre = &rs->prefix;
    const unsigned char *p = hdr + sizeof *pre, *end = hdr + pre->header_bytes;
    if (pre->n_cols > MAX_DENSE_COLS || pre->n_sparse > 1 ||
        (pre->n_cols == 0 && pre->n_sparse == 0)) {
        drift_free(hdr);
        drift_rowstore_close(rs);
        return drift_err_set(e, DRIFT_EDATA,
                             "%s: corrupt header (%llu dense columns, %llu "
                             "sparse)",
                             path, (unsigned long long)pre->n_cols,
                             (unsigned long long)pre->n_sparse);
    }
    rs->names = drift_calloc(pre->n_cols ? pre->n_cols : 1, sizeof *rs->names);
    rs->col_types = drift_calloc(pre->n_cols ? pre->n_cols : 1, sizeof(uint32_t));
    if (!rs->names || !rs->col_types) {
        drift_free(hdr);
        drift_rowstore_close(rs);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    rs->view.n_cols = pre->n_cols;
    for (size_t k = 0; k < pre->n_cols; k++) {
        int oom;
        rs->names[k] = take_name(&p, end, &rs->col_types[k], &oom);
        if (!rs->names[k]) {
            drift_free(hdr);
            drift_rowstore_close(rs);
            if (oom)
                return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                     path);
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: corrupt header (column %zu's name)",
                                 path, k + 1);
        }
        if (rs->col_types[k] > 1) {
            unsigned type = rs->col_types[k];
            drift_free(hdr);
            drift_rowstore_close(rs);
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: corrupt header (column %zu's type = "
                                 "%u; expected 0 for real or 1 for int)",
                                 path, k + 1, type);
        }
    }
    uint64_t f[5] = {0, 0, 0, 0, 0};
    if (pre->n_sparse) {
        uint32_t zero;
        int oom;
        rs->sparse_name = take_name(&p, end, &zero, &oom);
        if (!rs->sparse_name || end - p < (long)sizeof f) {
            drift_free(hdr);
            drift_rowstore_close(rs);
            if (oom)
                return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                     path);
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: corrupt header (sparse variable)", path);
        }
        memcpy(f, p, sizeof f);
    }
    drift_free(hdr);
    if ((rc = check_layout(pre, f, size, path, e))) {
        drift_rowstore_close(rs);
        return rc;
    }
    /* A name given twice would bind whichever comes first, in silence; a
     * CSV header with a repeated name is refused, and so is this. */
    drift_nameindex seen;
    if (drift_nameindex_init(&seen, pre->n_cols + 1)) {
        drift_rowstore_close(rs);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    for (size_t k = 0; k <= pre->n_cols && !rc; k++) {
        const char *nm = k < pre->n_cols ? rs->names[k] : rs->sparse_name;
        size_t j;
        int dup = nm ? drift_nameindex_add(&seen, nm, k, &j) : 0;
        if (dup < 0)
            rc = drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        else if (dup)
            rc = drift_err_set(e, DRIFT_EDATA,
                               "%s: corrupt header: column '%s' is named "
                               "twice (columns %zu and %zu%s)",
                               path, nm, j + 1, k + 1,
                               k == pre->n_cols ? ", the sparse variable"
                                                : "");
    }
    drift_nameindex_free(&seen);
    if (rc) {
        drift_rowstore_close(rs);
        return rc;
    }
    uint64_t N = pre->n_rows;
    /* The share's rows (the whole file for one share of one); 128-bit
     * products, since N times count may not fit in 64 bits. */
    uint64_t lo = (uint64_t)((unsigned __int128)N * index / count);
    uint64_t hi = (uint64_t)((unsigned __int128)N * (index + 1) / count);
    *lo_out = lo;
    *hi_out = hi;
    rs->map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, rs->fd, 0);
    if (rs->map == MAP_FAILED) {
        rs->map = NULL;
        int err = errno;
        drift_rowstore_close(rs);
        return drift_err_set(e, DRIFT_EIO, "%s: cannot map: %s", path,
                             strerror(err));
    }
    rs->map_len = (size_t)size;
    rs->guard = drift_mapguard_add(rs->map, rs->map_len, rs->fd, path) + 1;
    const char *base = rs->map;
    if (pre->n_sparse) {
        const uint64_t *rp = (const uint64_t *)(base + f[2]);
        const uint32_t *ix = (const uint32_t *)(base + f[3]);
        /* Every offset and index checked once, so no later read can leave
         * the file. */
        if (rp[0] != 0 || rp[N] != f[1]) {
            drift_rowstore_close(rs);
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s: corrupt sparse rows (row offsets do not "
                                 "span the entries)",
                                 path);
        }
        for (uint64_t r = lo; r < hi; r++) {
            int bad_row = rp[r + 1] < rp[r] || rp[r + 1] > f[1];
            uint64_t bad_k = UINT64_MAX;
            for (uint64_t k = rp[r]; !bad_row && k < rp[r + 1]; k++)
                if (ix[k] >= f[0] || (k > rp[r] && ix[k] <= ix[k - 1])) {
                    bad_k = k;
                    break;
                }
            if (bad_row || bad_k != UINT64_MAX) {
                /* Read what the message needs before unmapping. */
                uint32_t bad_index = bad_row ? 0 : ix[bad_k];
                drift_rowstore_close(rs);
                if (bad_row)
                    return drift_err_set(e, DRIFT_EDATA,
                                         "%s: corrupt sparse rows (row %llu's "
                                         "offsets)",
                                         path, (unsigned long long)r + 1);
                return drift_err_set(e, DRIFT_EDATA,
                                     "%s: corrupt sparse rows (row %llu has "
                                     "index %u)",
                                     path, (unsigned long long)r + 1,
                                     bad_index);
            }
        }
        /* The pass above read the whole index section: if the file
         * shrank under it, what it checked was zeros. */
        if ((rc = drift_mapguard_check_one(rs->guard - 1, 1, e))) {
            drift_rowstore_close(rs);
            return rc;
        }
        rs->sparse.name = rs->sparse_name;
        rs->sparse.dim = (size_t)f[0];
        rs->sparse.row_ptr = rp;
        rs->sparse.idx = ix;
        rs->sparse.val = (const double *)(base + f[4]);
        rs->sparse.nnz = f[1];
        rs->view.n_sparse = 1;
        rs->view.sparse = &rs->sparse;
    }
    rs->view.struct_size = (uint32_t)sizeof(drift_data);
    rs->view.n_rows = (size_t)N;
    rs->view.col_names = (const char *const *)rs->names;
    rs->view.values = (const double *)(base + pre->header_bytes);
    rs->view.row_stride = pre->n_cols;
    rs->view.source = path;
    rs->view.first_line = 0;
    return DRIFT_OK;
}

int drift_rowstore_open(drift_rowstore *rs, const char *path, drift_err *e)
{
    uint64_t lo, hi;
    return open_part(rs, path, 0, 1, &lo, &hi, e);
}

int drift_rowstore_open_share(drift_rowstore *rs, const char *path,
                              unsigned index, unsigned count, uint64_t *lo,
                              uint64_t *hi, drift_err *e)
{
    if (count == 0 || index >= count)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%s: share %u of %u", path, index, count);
    return open_part(rs, path, index, count, lo, hi, e);
}

void drift_rowstore_advise(const drift_rowstore *rs, int sequential)
{
    if (rs->map)
        madvise(rs->map, rs->map_len,
                sequential ? MADV_SEQUENTIAL : MADV_RANDOM);
}

int drift_rowstore_info(const char *path, FILE *f, drift_err *e)
{
    drift_rowstore rs;
    int rc = drift_rowstore_open(&rs, path, e);
    if (rc)
        return rc;
    const drift_rowstore_prefix *pre = &rs.prefix;
    fprintf(f, "file: %s\n", path);
    /* The byte-order mark matched, so the file is in this host's order. */
    const uint32_t one = 1;
    fprintf(f, "format: drift row store, version %u, %s-endian\n",
            pre->version, *(const unsigned char *)&one ? "little" : "big");
    fprintf(f, "rows: %llu\n", (unsigned long long)pre->n_rows);
    fprintf(f, "layout: %s\n", pre->n_sparse ? "dense + sparse" : "dense");
    fprintf(f, "dense columns: %llu\n", (unsigned long long)pre->n_cols);
    for (size_t k = 0; k < pre->n_cols; k++)
        fprintf(f, "  %s : %s\n", rs.names[k],
                rs.col_types[k] ? "int" : "real");
    if (pre->n_sparse)
        fprintf(f, "sparse: %s : sparse_vector[%zu], %llu non-zeros (%.2f "
                   "per row)\n",
                rs.sparse.name, rs.sparse.dim,
                (unsigned long long)rs.sparse.nnz,
                (double)rs.sparse.nnz / (double)(pre->n_rows ? pre->n_rows : 1));
    fprintf(f, "header: %llu bytes, checksum %016llx (ok)\n",
            (unsigned long long)pre->header_bytes,
            (unsigned long long)pre->checksum);
    fprintf(f, "size: %llu bytes\n", (unsigned long long)pre->file_bytes);
    drift_rowstore_close(&rs);
    return DRIFT_OK;
}
