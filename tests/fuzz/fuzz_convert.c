/* fuzz_convert.c: differential libFuzzer target for conversion: an input
 * read as a table (CSV, or LIBSVM when the first byte is odd) and the row
 * store converted from it must agree.  A file the reader accepts converts
 * (but for the documented limits of a store), the store opens, and it
 * holds the same rows bit for bit (names, values, sparse offsets, indices
 * and values); a file the reader refuses does not convert.  Any
 * disagreement aborts.  Built by `make fuzz`; seeds in corpus/convert;
 * replayed by make check from regressions/convert. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/data/rowstore.h"
#include "engine/data/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char csv[64], svm[64], store[64];

static void setup(void)
{
    if (csv[0])
        return;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    int pid = (int)getpid();
    snprintf(csv, sizeof csv, "%s/fuzz-convert-%d.csv", dir, pid);
    snprintf(svm, sizeof svm, "%s/fuzz-convert-%d.libsvm", dir, pid);
    snprintf(store, sizeof store, "%s/fuzz-convert-%d.drs", dir, pid);
}

static void same(const drift_data *a, const drift_data *b)
{
    if (a->n_rows != b->n_rows || a->n_cols != b->n_cols ||
        a->n_sparse != b->n_sparse)
        abort();
    for (size_t j = 0; j < a->n_cols; j++)
        if (strcmp(a->col_names[j], b->col_names[j]))
            abort();
    for (size_t i = 0; i < a->n_rows; i++)
        if (memcmp(a->values + i * a->row_stride, b->values + i * b->row_stride,
                   a->n_cols * sizeof(double)))
            abort();
    for (size_t s = 0; s < a->n_sparse; s++) {
        const drift_sparse *p = &a->sparse[s], *q = &b->sparse[s];
        if (strcmp(p->name, q->name) || p->dim != q->dim || p->nnz != q->nnz ||
            memcmp(p->row_ptr, q->row_ptr, (a->n_rows + 1) * sizeof(uint64_t)) ||
            memcmp(p->idx, q->idx, p->nnz * sizeof(uint32_t)) ||
            memcmp(p->val, q->val, p->nnz * sizeof(double)))
            abort();
    }
}

/* The refusals a readable input may meet: what a store cannot hold. */
static int store_limit(const char *msg)
{
    return strstr(msg, "no row has a feature") ||
           strstr(msg, "a row store holds at most") ||
           strstr(msg, "a row store holds names of at most") ||
           strstr(msg, "a row store's header holds at most");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size == 0)
        return 0;
    const char *in = (data[0] & 1) ? svm : csv;
    FILE *f = fopen(in, "wb");
    if (!f)
        abort();
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    drift_table *a = NULL, *b = NULL;
    drift_err ea, ec, eb;
    int ra = drift_table_open(in, &a, &ea);
    int rc = drift_rowstore_convert(in, store, NULL, NULL, &ec);
    if (ra == 0 && rc != 0 && !store_limit(ec.msg)) {
        fprintf(stderr, "read but not converted: %s\n", ec.msg);
        abort();
    }
    if (ra != 0 && rc == 0) {
        fprintf(stderr, "converted but not read: %s\n", ea.msg);
        abort();
    }
    if (rc == 0) {
        if (drift_table_open(store, &b, &eb)) {
            fprintf(stderr, "converted store refused: %s\n", eb.msg);
            abort();
        }
        same(&a->view, &b->view);
        drift_table_free(b);
    }
    drift_table_free(a);
    unlink(in);
    unlink(store);
    return 0;
}
