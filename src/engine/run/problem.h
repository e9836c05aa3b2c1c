/* problem.h: a model bound to its data, ready for chains: resolves the
 * model (a C plugin by name or path), reads the data files, applies model
 * options and checks the resulting drift_model before anything runs.
 * Not for samplers (plugin.c, chain.c). */
#ifndef DRIFT_PROBLEM_H
#define DRIFT_PROBLEM_H

#include <stdio.h>

#include <drift/model.h>

#include "engine/data/table.h"
#include "plugin.h"

typedef struct drift_problem_spec {
    const char *model;            /* NAME or path of a model plugin, or a
                                     model file in the language (.drift) */
    const char *const *data;      /* data files, NULL-terminated */
    char *const *model_set;       /* "k=v" model options */
    size_t n_model_set;
    /* .drift models only (the model language): */
    char *const *data_set;        /* "name=value" data scalars */
    size_t n_data_set;
    FILE *diag;                   /* where errors in the model and its data
                                     are reported (NULL: stderr) */
    /* A run across MPI ranks: the rows file is read in shares,
     * this process's alone; NULL: all of it. */
    const drift_table_share *share;
    /* Rows already in memory (borrowed: they must outlive the problem),
     * read as a data file's would be: a .drift model's tables beside its
     * files, or a C model's data when no file is given (one table). */
    const drift_data *const *tables;
    size_t n_tables;
} drift_problem_spec;

typedef struct drift_problem {
    drift_model model;            /* valid when have_model */
    int have_model;
    drift_table *table;           /* the rows (NULL: none given) */
    drift_data empty;             /* what a data-free model sees */
    const drift_data *mem;        /* a C model's rows in memory (borrowed;
                                     NULL: none) */
    const drift_model_entry *entry;
    double *options;
    unsigned char *options_set;
    char *header[16];             /* "key = value" lines for output files */
    size_t n_header;
    const drift_data *rows_view;  /* a .drift model's main rows table */
    /* A .drift model: what it was opened from (borrowed from the spec,
     * which must outlive the problem), so that --test can open the same
     * model over other rows. */
    const char *lang_path;
    const char *const *lang_data;
    char *const *lang_data_set;
    size_t lang_n_data_set;
    /* With a share: the model holds rows rows_first .. rows_first +
     * model.n_rows - 1 of rows_total (the data's N). */
    uint64_t rows_first, rows_total;
} drift_problem;

/* Opens spec's model over its data.  reg must have been scanned.  On
 * failure p holds nothing that needs closing beyond drift_problem_close. */
int drift_problem_open(drift_problem *p, drift_registry *reg,
                       const drift_problem_spec *spec, drift_err *e);
void drift_problem_close(drift_problem *p);

/* The data view the model reads (never NULL). */
const drift_data *drift_problem_data(const drift_problem *p);

/* Checks a model instance's fields (ABI version, sizes, functions) and
 * clears those appended after its struct_size, which it does not know. */
int drift_model_check(drift_model *m, const char *who, drift_err *e);

#endif
