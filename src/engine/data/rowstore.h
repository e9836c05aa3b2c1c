/* rowstore.h: drift's binary row store: a small self-describing header
 * (magic, format version, endianness, row count, column names and types,
 * dense and sparse sections, a checksum of the header) followed by
 * row-major doubles and, for sparse row variables, compressed-sparse-row
 * arrays.  Written by streaming conversion (memory independent of the
 * input's size), read by memory-mapping, so data larger than memory can be
 * sampled from.  Not for anything but drift's own files. */
#ifndef DRIFT_ROWSTORE_H
#define DRIFT_ROWSTORE_H

#include <stdint.h>
#include <stdio.h>

#include <drift/common.h>

#define DRIFT_ROWSTORE_VERSION 1u

/* The fixed prefix of every row store; the column table follows. */
typedef struct drift_rowstore_prefix {
    char magic[8];          /* "DRIFTRS" then 0x1a */
    uint32_t version;       /* DRIFT_ROWSTORE_VERSION */
    uint32_t endian;        /* 0x01020304 as written */
    uint64_t header_bytes;  /* prefix + column table, padded to 4096 */
    uint64_t n_rows;
    uint64_t n_cols;        /* dense columns */
    uint64_t n_sparse;      /* sparse row variables (0 or 1) */
    uint64_t file_bytes;    /* the whole file */
    uint64_t checksum;      /* FNV-1a 64 of the header, this field zero */
    uint64_t reserved[4];
} drift_rowstore_prefix;

/* A mapped row store.  view describes its data (pointing into the map). */
typedef struct drift_rowstore {
    drift_data view;
    char **names;
    char *sparse_name;
    drift_sparse sparse;
    uint32_t *col_types;    /* 0 real, 1 integer-valued */
    void *map;
    size_t map_len;
    drift_rowstore_prefix prefix;
    int fd;
    int guard;              /* base/mapguard.h handle + 1 (0: none) */
} drift_rowstore;

/* True when the file at path starts with the row store magic. */
int drift_rowstore_sniff(const char *path);

/* Maps and validates path (magic, version, endianness, header checksum,
 * sizes, sparse offsets and indices).  Messages name the problem. */
int drift_rowstore_open(drift_rowstore *rs, const char *path, drift_err *e);
void drift_rowstore_close(drift_rowstore *rs);

/* drift_rowstore_open for a run across ranks: the same map and view of
 * the whole file, but of the sparse rows only the share's are checked:
 * rows lo .. hi - 1, with lo = N index / count and hi = N (index + 1) /
 * count, the rows the caller may read. */
int drift_rowstore_open_share(drift_rowstore *rs, const char *path,
                              unsigned index, unsigned count, uint64_t *lo,
                              uint64_t *hi, drift_err *e);

/* Converts a CSV or LIBSVM file (by name: .libsvm/.svm/.svmlight) to a row
 * store at out, streaming, written under a temporary name and renamed.
 * keep (may be NULL) lists the dense columns to keep, in order.  *rows
 * (may be NULL) gets the row count. */
int drift_rowstore_convert(const char *in, const char *out,
                           const char *const *keep, uint64_t *rows,
                           drift_err *e);

/* A rows schema for conversion: the rows variables a model reads, so that
 * only their columns are kept (a variable x takes the column x, or the
 * columns x.1, x.2, ..., x.i.j of its vector, matrix or array elements)
 * and integer variables are checked to hold integers. */
typedef struct drift_schema_var {
    const char *name;
    int is_int;
} drift_schema_var;

/* drift_rowstore_convert with the kept columns given by a schema (n vars)
 * instead of by name.  For a LIBSVM input, the variables must be among
 * y (the label) and x (the sparse features). */
int drift_rowstore_convert_schema(const char *in, const char *out,
                                  const drift_schema_var *vars, size_t n,
                                  uint64_t *rows, drift_err *e);

/* Prints the header of path in human-readable form. */
int drift_rowstore_info(const char *path, FILE *f, drift_err *e);

/* Access-pattern advice for a mapped store: sequential (cyclic access,
 * read ahead and drop what was passed) or random. */
void drift_rowstore_advise(const drift_rowstore *rs, int sequential);

#endif
