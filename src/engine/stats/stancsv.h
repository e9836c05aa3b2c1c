/* stancsv.h: reading Stan-format CSV files back: drift's own draws and
 * metrics files and CmdStan's output (comment lines anywhere, the
 * configuration block, adaptation comments, timing footers, warmup draws
 * saved with save_warmup).  Not for data files (table.c), which hold no
 * comments after the header and no non-finite values. */
#ifndef DRIFT_STANCSV_H
#define DRIFT_STANCSV_H

#include <stddef.h>

#include <drift/common.h>

typedef struct drift_stancsv {
    char *path;
    size_t n_cols;
    char **names;           /* n_cols column names */
    size_t n_rows;          /* every row read, warmup rows included */
    size_t n_warmup;        /* how many leading rows are warmup draws */
    double *values;         /* row r, column c: values[r * n_cols + c];
                               "nan", "inf", "-inf" are read as such */
    size_t n_meta;
    char **meta_keys;       /* "key = value" comment lines before the */
    char **meta_values;     /* column row, values without " (Default)" */
    size_t n_footer;
    char **footer_keys;     /* "key = value" comment lines after the */
    char **footer_values;   /* column row (drift's trajectory moments) */
} drift_stancsv;

/* The longest line read (as the data readers' bound): a longer one is
 * refused, so that /dev/zero or a file of NUL bytes is not read into
 * memory without end. */
#define DRIFT_STANCSV_MAX_LINE (64 << 20)

/* Reads path.  Comment lines ('#') may appear anywhere; blank lines are
 * skipped.  Warmup rows are recognised as CmdStan's readers do: when the
 * header says save_warmup = 1 (or true), the rows before the
 * "# Adaptation terminated" comment, or, without one, the first
 * ceil(num_warmup / thin) rows (drift's files before version 0.2 named it
 * warmup).  On failure
 * returns non-zero with "file:line:col: error: ..." in e. */
int drift_stancsv_read(const char *path, drift_stancsv **out, drift_err *e);
void drift_stancsv_free(drift_stancsv *f);

/* Value of the first header line "key = value", or NULL. */
const char *drift_stancsv_meta(const drift_stancsv *f, const char *key);

/* Value of the first "key = value" comment after the column row, or NULL
 * (drift's "trajectory_mean (unconstrained)" ...; the key is everything
 * before the '=', trimmed). */
const char *drift_stancsv_footer(const drift_stancsv *f, const char *key);

/* Index of column name, or -1. */
long drift_stancsv_column(const drift_stancsv *f, const char *name);

#endif
