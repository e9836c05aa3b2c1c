/* csv.h: a streaming reader of drift's CSV data files: a header naming the
 * columns (after optional '#' comment lines), then rows of finite numbers.
 * Rows come one at a time, so a converter can stream a file larger than
 * memory.  Not for Stan output CSV files (comments between rows). */
#ifndef DRIFT_CSV_H
#define DRIFT_CSV_H

#include <stddef.h>

#include <drift/common.h>

#include "textfile.h"

typedef struct drift_csv {
    drift_textfile f;
    char **names;           /* n_cols owned names */
    size_t n_cols;
    size_t header_line;     /* line number of the header */
    const char *data_start; /* first byte after the header line */
} drift_csv;

/* Opens path and reads its header.  Errors name file:line:col.  With
 * streaming set, a pipe is read forward through a buffer (then
 * drift_csv_count_rows is unavailable). */
int drift_csv_open(drift_csv *c, const char *path, int streaming,
                   drift_err *e);
void drift_csv_close(drift_csv *c);

/* Number of data rows (a scan for line ends; trailing blank lines are not
 * rows).  Does not move the read position. */
size_t drift_csv_count_rows(const drift_csv *c);

/* Reads the next row into row[n_cols]: returns 1, or 0 at the end, or a
 * negative value with e set ("file:line:col: error: ..."). */
int drift_csv_next(drift_csv *c, double *row, drift_err *e);

/* Line number of the row last returned. */
static inline size_t drift_csv_line(const drift_csv *c) { return c->f.lineno; }

#endif
