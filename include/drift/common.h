/* SPDX-License-Identifier: MIT (drift; see LICENSE) */
/* drift/common.h: the types shared by drift's two plugin ABIs (models and
 * samplers): status codes, the error buffer, hyperparameter tables and the
 * read-only view of a data set.  Nothing here needs linking against drift:
 * every function in this header is static inline.
 *
 * Layout rule for every struct shared with plugins: fields are only ever
 * appended, each new one tagged with the ABI version that added it. */
#ifndef DRIFT_COMMON_H
#define DRIFT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols a plugin exports (its entry function) carry this attribute, so
 * plugins may be built with -fvisibility=hidden like drift itself. */
#if defined(__GNUC__)
#define DRIFT_EXPORT __attribute__((visibility("default")))
#else
#define DRIFT_EXPORT
#endif

/* A plugin's licence, optional: DRIFT_PLUGIN_LICENSE("MIT") at file scope
 * (an SPDX identifier or expression) exports it as the string
 * DRIFT_LICENSE_SYMBOL, which the loader reads with dlsym and `drift
 * samplers` and `drift models` show ("not stated" for a plugin without
 * it).  Nothing in the ABI's tables changes: plugins built without it keep
 * loading. */
#define DRIFT_LICENSE_SYMBOL "drift_plugin_license"
#define DRIFT_PLUGIN_LICENSE(spdx) \
    DRIFT_EXPORT extern const char drift_plugin_license[]; \
    DRIFT_EXPORT const char drift_plugin_license[] = spdx

/* Status codes returned by every fallible function, engine or plugin. */
enum {
    DRIFT_OK = 0,        /* success */
    DRIFT_EINVAL = 1,    /* bad argument, option or input */
    DRIFT_ENOMEM = 2,    /* an allocation failed or a memory bound was hit */
    DRIFT_EIO = 3,       /* a file could not be read or written */
    DRIFT_EDATA = 4,     /* a data file does not fit what the model needs */
    DRIFT_EPLUGIN = 5,   /* a plugin was refused */
    DRIFT_ENUMERIC = 6,  /* a non-finite value appeared */
    DRIFT_ESTOP = 7,     /* a stop was requested (signal, budget) */
    DRIFT_EINTERNAL = 8, /* a bug in drift: please report it */
    /* added in ABI 2: the model's log density or gradient is not finite
     * at the point asked about (U is then +INFINITY).  An oracle returns
     * it without failing the chain: a sampler that can reject the point
     * does so; one that returns it fails the chain with the engine's
     * message naming the chain, the iteration and the parameter of
     * largest magnitude. */
    DRIFT_ENONFINITE = 9
};

/* Error buffer.  The caller owns it; a function that fails writes one
 * human-readable line (no trailing newline) naming what is wrong, where,
 * and what would be right. */
typedef struct drift_err {
    char msg[512];
} drift_err;

/* Hyperparameter (and model option) types. */
typedef enum drift_hp_type {
    DRIFT_HP_REAL = 0,   /* a double in [lo, hi] */
    DRIFT_HP_INT = 1,    /* an integer in [lo, hi], passed as a double */
    DRIFT_HP_ENUM = 2,   /* one of `choices`; passed as its 0-based index */
    DRIFT_HP_BOOL = 3    /* true/false, 1/0; passed as 1.0 or 0.0 */
} drift_hp_type;

/* One row of a hyperparameter table.  The engine parses and validates every
 * `--set name=value` against the table, so a plugin receives, in table
 * order, one double per row, already inside its bounds. */
typedef struct drift_hparam {
    const char *name;      /* identifier, [A-Za-z_][A-Za-z0-9_]*, unique */
    drift_hp_type type;
    double def;            /* default; NaN means "derived" (say how in doc);
                              the plugin then receives NaN when not set */
    double lo, hi;         /* inclusive bounds for REAL and INT (use
                              -INFINITY/INFINITY for none); ignored
                              otherwise */
    unsigned flags;        /* DRIFT_HP_* flags below */
    const char *choices;   /* ENUM: "ptu|ppu|tmu"; NULL otherwise */
    const char *doc;       /* one line for `drift samplers` */
} drift_hparam;

/* drift_hparam.flags */
#define DRIFT_HP_OPEN_LO 1u  /* lower bound is exclusive */
#define DRIFT_HP_OPEN_HI 2u  /* upper bound is exclusive */
/* A REAL hyperparameter that is the sampler's step
 * size, such as SGLD's h: when the user does not set it, or sets it to
 * "auto", the engine chooses it before the chains start, by short pilot
 * runs over a grid of values scored by the kernel Stein discrepancy of
 * their draws (docs/writing-a-sampler.md), and the plugin receives the
 * value chosen.  def is the pilot's first trial (and what an engine that
 * does not know the flag passes).  At most one per sampler. */
#define DRIFT_HP_STEP_SIZE 4u

/* One sparse row variable (LIBSVM's features; the language's
 * sparse_vector[D]) in compressed-sparse-row form: row r's entries are
 * idx[k], val[k] for row_ptr[r] <= k < row_ptr[r+1], with 0-based column
 * indices increasing within a row and below dim. */
typedef struct drift_sparse {
    const char *name;            /* the row variable, e.g. "x" */
    size_t dim;                  /* D */
    const uint64_t *row_ptr;     /* n_rows + 1 offsets */
    const uint32_t *idx;         /* column indices (so D < 2^32) */
    const double *val;
    uint64_t nnz;                /* row_ptr[n_rows] */
} drift_sparse;

/* A read-only, row-major view of a data set.  The engine owns the storage
 * (an array read from CSV or a memory-mapped row store) and keeps it alive
 * until every model made from it has been freed.  Columns are named as
 * Stan names output: `y`, `x.1` ... `x.D`, `M.2.3`. */
typedef struct drift_data {
    uint32_t struct_size;        /* sizeof(drift_data) as drift was built */
    uint32_t reserved;
    size_t n_rows;               /* N */
    size_t n_cols;
    const char *const *col_names;/* n_cols names */
    const double *values;        /* row r, column c: values[r*row_stride+c] */
    size_t row_stride;           /* doubles between consecutive rows */
    const char *source;          /* file name, for messages */
    size_t first_line;           /* text line of row 0 (0: not a text file) */
    /* added in ABI 1: sparse row variables (none for CSV data) */
    size_t n_sparse;
    const drift_sparse *sparse;
} drift_data;

/* Column index of `name`, or -1 when absent. */
static inline long drift_data_column(const drift_data *d, const char *name)
{
    for (size_t c = 0; c < d->n_cols; c++)
        if (strcmp(d->col_names[c], name) == 0)
            return (long)c;
    return -1;
}

#ifdef __cplusplus
}
#endif
#endif /* DRIFT_COMMON_H */
