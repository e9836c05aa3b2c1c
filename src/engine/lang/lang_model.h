/* lang_model.h: a model written in drift's language, as a drift_model.
 * Opens a .drift file with its data (parse, resolve, type-check, bind the
 * data, build the graph) and fills the same model ABI a C plugin fills,
 * so every sampler runs on it unchanged.  Not for the CLI's options. */
#ifndef DRIFT_LANG_MODEL_H
#define DRIFT_LANG_MODEL_H

#include <stdio.h>

#include <drift/model.h>

typedef struct drift_lang_spec {
    const char *path;               /* the .drift file */
    const char *const *data;        /* data files, NULL-terminated (may be
                                       NULL) */
    char *const *data_set;          /* "name=value" scalars */
    size_t n_data_set;
    FILE *diag;                     /* where reports go (NULL: stderr) */
    int describe_only;              /* without data files: bind what the
                                       data would give to placeholders, to
                                       describe the model (drift check) */
    const drift_data *const *tables;/* rows already in memory, read like
                                       CSV files (borrowed: they must
                                       outlive the model; may be NULL) */
    size_t n_tables;
    int check_every_row;            /* check outcome supports of rows in a
                                       memory-mapped row store too (a pass
                                       over the file before anything else;
                                       drift check asks for it).  Otherwise
                                       such rows are checked as they are
                                       evaluated. */
    /* A run across MPI ranks: the rows file is read in shares,
     * this process's alone (engine/data/table.h); NULL: all of it. */
    const struct drift_table_share *share;
    /* A model of the same file opened on other rows (the training rows
     * of held-out rows): its transformed block's reductions over the
     * rows (mean(x), sd(x) ...) are used rather than computed from these
     * rows, as a model centred on the training data predicts.  NULL:
     * compute them.  Borrowed for the call only. */
    const drift_model *reductions_from;
} drift_lang_spec;

/* Whether a --model argument or positional argument names a model file
 * in the language (it ends in ".drift"). */
int drift_lang_is_model_file(const char *name);

/* Opens spec's model into *out.  Errors in the model or its data are
 * reported to spec->diag with file:line:col, the line and a caret; e gets
 * a one-line summary.  Returns DRIFT_OK or an error (DRIFT_EINVAL for the
 * model, DRIFT_EDATA for the data). */
int drift_lang_open(const drift_lang_spec *spec, drift_model *out,
                    drift_err *e);

/* The data table most rows come from (for prefetching), or NULL.  m must
 * come from drift_lang_open. */
const drift_data *drift_lang_rows_view(const drift_model *m);

struct drift_table;

/* The same table itself (a memory-mapped row store, for instance, whose
 * reading the caller may advise and read ahead: see drift_table_advise
 * and chain.h's data_mapped), or NULL.  Owned by the model. */
const struct drift_table *drift_lang_rows_table(const drift_model *m);

/* Whether the model's generated quantities hold values per data row
 * (which a share of the rows cannot give).  m must come from
 * drift_lang_open. */
int drift_lang_gen_per_row(const drift_model *m);

/* Why a Stan program was lowered whole (its data one datum, nothing a
 * minibatch sampler could subsample): the statement that couples the
 * rows; NULL for any other model.  m must come from drift_lang_open. */
const char *drift_lang_whole_why(const drift_model *m);

/* Prints what drift check shows: parameters with shapes and constraints,
 * the data's sizes and rows, and the graph's size and form. */
void drift_lang_describe(const drift_model *m, FILE *out);

#endif
