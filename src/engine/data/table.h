/* table.h: data sets as the engine holds them, exposed to models as a
 * drift_data view: a CSV file parsed into memory, a LIBSVM file parsed
 * into a dense label column plus sparse rows, or a binary row store
 * memory-mapped in place.  Not for the data block's scalars and arrays
 * (JSON, read by the model language). */
#ifndef DRIFT_TABLE_H
#define DRIFT_TABLE_H

#include <drift/common.h>

#include "base/nameindex.h"
#include "rowstore.h"

typedef enum drift_table_kind {
    DRIFT_TABLE_CSV = 0,
    DRIFT_TABLE_LIBSVM = 1,
    DRIFT_TABLE_ROWSTORE = 2
} drift_table_kind;

typedef struct drift_table {
    drift_data view;    /* what models see; points into the fields below */
    /* A share of the file's rows (drift_table_open_share): view holds
     * rows share_first .. share_first + view.n_rows - 1 of share_total
     * (0: the whole file). */
    uint64_t share_first, share_total;
    drift_table_kind kind;
    char **names;       /* n_cols owned names (CSV, LIBSVM) */
    double *values;     /* owned N x n_cols array (CSV, LIBSVM) */
    char *source;       /* owned copy of the path */
    drift_sparse sparse;/* LIBSVM's x */
    uint64_t *row_ptr;
    uint32_t *idx;
    double *val;
    drift_rowstore rs;  /* ROWSTORE */
    drift_nameindex colix; /* column names -> index (empty: not built) */
} drift_table;

/* Reads or maps a data file, by content and name: a row store (by its
 * magic number), LIBSVM (.libsvm, .svm, .svmlight), else CSV whose first
 * non-comment line names the columns.  On failure returns non-zero and
 * writes "file:line:col: error: ..." (or the row store's problem) into e. */
int drift_table_open(const char *path, drift_table **out, drift_err *e);

/* A share of a data file's rows, for a run across MPI ranks:
 * this process reads share `index` of `count` contiguous shares.  A row
 * store is cut by rows (share i holds rows N i / count ..), a text file
 * (CSV, LIBSVM) by bytes at line starts, so a text share's row count and
 * first row are known only once every share is read.  agree, called
 * exactly once by drift_table_open_share whatever befell the read (every
 * process of the share's group waits for the others in it), exchanges
 * each share's status (msg: why it failed), row count and largest sparse
 * dimension, and returns where this share begins, the rows of all the
 * shares and their largest dimension; when a share failed it fails on
 * every process, its message in e. */
typedef struct drift_table_share {
    unsigned index, count;
    int (*agree)(void *user, int status, const char *msg, uint64_t rows,
                 uint64_t dim, uint64_t *first, uint64_t *total,
                 uint64_t *dim_all, drift_err *e);
    void *user;
} drift_table_share;

/* drift_table_open for share->index of share->count shares: the table's
 * view holds that share's rows alone (none is possible); share_first and
 * share_total say where they lie.  A sparse variable's dimension is the
 * largest of every share (a LIBSVM share alone may not reach the file's
 * largest index).  Mapped row stores and text files only (no pipes). */
int drift_table_open_share(const char *path, const drift_table_share *share,
                           drift_table **out, drift_err *e);

/* The CSV reader alone (kept for callers that insist on CSV). */
int drift_table_read_csv(const char *path, drift_table **out, drift_err *e);

/* Tells a mapped row store how it will be read (sequentially for cyclic
 * access); a no-op for other kinds. */
void drift_table_advise(const drift_table *t, int sequential);

/* Column index of name, or -1: through the table's hash index (a header
 * may have 10^6 names), or a scan for a table made elsewhere. */
long drift_table_column(const drift_table *t, const char *name);

void drift_table_free(drift_table *t);

#endif
