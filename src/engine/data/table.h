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
