/* table.h: data sets as the engine holds them: a named, row-major table of
 * doubles read from a CSV file, exposed to models as a drift_data view.
 * Not for the data block's scalars and arrays (see the model language) and
 * not for parsing anything but the file formats named here. */
#ifndef DRIFT_TABLE_H
#define DRIFT_TABLE_H

#include <drift/common.h>

typedef struct drift_table {
    drift_data view;    /* what models see; points into the fields below */
    char **names;       /* n_cols owned names */
    double *values;     /* owned N x n_cols array */
    char *source;       /* owned copy of the path */
} drift_table;

/* Reads a CSV file whose first non-comment line names the columns.  Lines
 * starting with '#' before the header are skipped; blank lines are allowed
 * only at the end.  Every field must be a finite number.  On failure
 * returns non-zero and writes "file:line:col: error: ..." into e. */
int drift_table_read_csv(const char *path, drift_table **out, drift_err *e);

void drift_table_free(drift_table *t);

#endif
