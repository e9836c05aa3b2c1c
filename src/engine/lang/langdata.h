/* langdata.h: the data of a model written in the language.  Reads every
 * --data file (a table: CSV, LIBSVM or a memory-mapped row store; or
 * CmdStan-style JSON through jansson) and every --data-set name=value,
 * then binds them to the program's schema: sizes from explicit values or
 * from the shapes of the data, the data block's values, and each rows
 * variable to its columns (dense rows as strided views into the table,
 * never copied) or to the table's sparse rows (sparse_vector).  Every
 * mismatch is reported with the file, line and column at fault.  Not for
 * evaluating anything (graph.c, ad.c). */
#ifndef DRIFT_LANGDATA_H
#define DRIFT_LANGDATA_H

#include <drift/common.h>
#include <drift/model.h>

#include "engine/data/table.h"
#include "parser/ast.h"
#include "parser/diag.h"

#define DRIFT_JSON_MAX_DIMS 4

/* One named value from a JSON file or --data-set. */
typedef struct drift_dvalue {
    char *name;
    int ndim;                       /* 0: a scalar */
    size_t dims[DRIFT_JSON_MAX_DIMS];
    size_t n;                       /* product of dims */
    double *v;                      /* n values, row-major */
    int all_int;                    /* every value was an integer */
} drift_dvalue;

typedef enum drift_dsource_kind {
    DRIFT_DS_TABLE,                 /* CSV, LIBSVM or a row store */
    DRIFT_DS_JSON, DRIFT_DS_SET
} drift_dsource_kind;

typedef struct drift_dsource {
    drift_dsource_kind kind;
    char *path;                     /* "--data-set" for SET */
    drift_table *table;             /* TABLE */
    int borrowed;                   /* table wraps a caller's drift_data */
    drift_dvalue *vals;             /* JSON, SET */
    size_t n_vals;
} drift_dsource;

/* Where a rows variable's values live: element k of row i is
 * base[i * ld + cols[k]]; or, for a sparse_vector (sp != NULL), row i's
 * entries sp->idx[j], sp->val[j] for sp->row_ptr[i] <= j <
 * sp->row_ptr[i+1], every index below sz. */
typedef struct drift_rowbind {
    const double *base;
    size_t ld;
    size_t *cols;                   /* sz offsets (owned; NULL if sparse) */
    size_t sz;                      /* elements per row (sparse: D) */
    int contiguous;                 /* cols[k] == cols[0] + k */
    const drift_dsource *src;       /* for messages */
    const char *name;
    const drift_sparse *sp;         /* sparse_vector: the table's rows */
    int mapped;                     /* rows of a memory-mapped row store:
                                       data checks that would read every
                                       row are left to evaluation */
} drift_rowbind;

/* What a symbol is bound to (indexed by drift_sym.id). */
typedef struct drift_symdata {
    const double *v;                /* DATA: the values (n), row-major */
    size_t n;
    const drift_dsource *src;
    drift_rowbind rb;               /* ROWS */
} drift_symdata;

typedef struct drift_langdata {
    drift_dsource *src;
    size_t n_src;
    size_t N;                       /* rows */
    drift_symdata *sd;              /* n_syms entries once bound */
    size_t n_sd;
    double **owned;                 /* arrays built from JSON rows */
    size_t n_owned;
    const drift_table *primary;     /* the table the rows mostly come
                                       from, for prefetching and read-ahead
                                       (may be NULL) */
    int check_mapped;               /* the graph checks outcomes read from
                                       a mapped row store over every row
                                       too (drift check) */
    /* A run across ranks: the rows table holds a share of the
     * data's rows_total rows (0: all of them), and N, the language's
     * number of rows, is rows_total while the rows here are N above. */
    uint64_t rows_total;
    /* The values of the transformed block's reductions over the rows
     * (mean(x) ...), in the order the graph builds them, to use instead
     * of computing them from these rows: held-out rows are described by
     * the training rows' values.  NULL: compute them (borrowed). */
    const double *reductions;
    size_t n_reductions;
    /* Int rows variables read from a memory-mapped row store whose
     * header's int flag stood in for reading their values at open (a
     * pass over data maybe larger than memory): evaluation checks their
     * values chunk by chunk, each chunk the first time it reads a row of
     * it (drift_langdata_check_rows). */
    size_t *lazy_int;               /* their symbols' ids (into sd) */
    char **lazy_int_names;
    size_t n_lazy_int;
    unsigned char *chunk_checked;   /* per chunk; set atomically */
    size_t n_chunks;
} drift_langdata;

/* Rows per chunk of drift_langdata_check_rows. */
#define DRIFT_LANGDATA_INT_CHUNK 4096

/* Before rows b of the data are evaluated: the chunks holding them whose
 * int rows variables (lazy_int) are not yet checked are read, and a value
 * that is not an integer (the store's int flag was wrong: a damaged
 * store, or one another tool wrote) fails with DRIFT_EDATA, naming the
 * file, the row and the column.  Safe from several threads at once. */
int drift_langdata_check_rows(drift_langdata *ld, const drift_rows *b,
                              drift_err *e);

/* Reads the data files (NULL-terminated; may be NULL) and the "name=value"
 * settings.  Errors go to diag; returns 0 or the number of errors.  *out
 * is set either way (free it with drift_langdata_free). */
size_t drift_langdata_load(const char *const *files, char *const *sets,
                           size_t n_sets, drift_langdata **out,
                           drift_diag *diag);

/* drift_langdata_load for a run across ranks: the one rows file (CSV,
 * LIBSVM or row store) is read in shares (engine/data/table.h), this
 * process's share alone; rows in JSON and a second rows file are
 * refused (they could not be cut at the same rows).  share NULL: the
 * same as drift_langdata_load. */
size_t drift_langdata_load_share(const char *const *files, char *const *sets,
                                 size_t n_sets,
                                 const drift_table_share *share,
                                 drift_langdata **out, drift_diag *diag);

/* Adds rows already in memory (borrowed, read like a CSV file; its
 * sparse row variables, if any, too). */
int drift_langdata_add_table(drift_langdata *ld, const drift_data *data,
                             drift_diag *diag);
void drift_langdata_free(drift_langdata *ld);

/* The integer scalar name of ld's JSON files and --data-set values:
 * 0 and *out, or -1 when there is none (a drift_known_ints reader; self
 * is the drift_langdata). */
int drift_langdata_int(const void *self, const char *name, long *out);

/* Binds N and the sizes: explicit values first, then what the shapes of
 * the data imply; a size given nowhere, or implied two ways, is an error.
 * With `placeholder`, sizes that nothing gives are set to 1 instead (for
 * describing a model without data).  Returns the number of errors. */
size_t drift_langdata_bind_sizes(drift_program *p, drift_langdata *ld,
                                 int placeholder, drift_diag *diag);

/* Binds the data block's values and the rows variables (after the
 * program was type-checked with the sizes bound): shapes must match the
 * declarations exactly and int declarations hold integers.  With
 * `placeholder`, missing values are filled with ones.  Returns the number
 * of errors. */
size_t drift_langdata_bind_values(drift_program *p, drift_langdata *ld,
                                  int placeholder, drift_diag *diag);

/* Reports an error about element k of rows variable rb at row i (0-based)
 * with the data file's line, column and a caret for CSV, or the JSON
 * entry, and returns. */
void drift_langdata_row_error(drift_diag *diag, const drift_rowbind *rb,
                              size_t i, size_t k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Parses a JSON document from memory into named values (used by the
 * loader and its fuzz target).  name is the file name for messages.
 * Returns the number of errors reported to diag. */
size_t drift_json_parse(const char *buf, size_t len, const char *name,
                        drift_dvalue **vals, size_t *n_vals,
                        drift_diag *diag);
void drift_dvalues_free(drift_dvalue *vals, size_t n);

#endif
