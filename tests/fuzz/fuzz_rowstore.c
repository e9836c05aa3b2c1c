/* fuzz_rowstore.c: libFuzzer target for the row store reader.  The input
 * is written to a file as a row store; when it is long enough to hold a
 * prefix, its header checksum (and file_bytes) are repaired first, as
 * anyone crafting a store can, so that the fuzzer reaches every check
 * behind them.  An accepted store is read whole (every dense value, every
 * sparse row through its offsets) and described, so a size or offset the
 * reader let through wrongly shows up as a read outside the map.  Built
 * by `make fuzz`; seeds in corpus/rowstore; replayed by make check from
 * regressions/rowstore. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/data/rowstore.h"
#include "engine/data/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void setup(void)
{
    if (path[0])
        return;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/fuzz-rowstore-%d.drs", dir,
             (int)getpid());
}

/* The checksum the reader computes: FNV-1a 64 over the header with the
 * checksum field zero. */
static void repair(uint8_t *b, size_t size)
{
    enum { HB = 16, FILE_BYTES = 48, CHECKSUM = 56, PREFIX = 96 };
    if (size < PREFIX)
        return;
    uint64_t fb = size, hb;
    memcpy(b + FILE_BYTES, &fb, 8);
    memcpy(&hb, b + HB, 8);
    if (hb > size)
        return;
    memset(b + CHECKSUM, 0, 8);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < hb; k++) {
        h ^= b[k];
        h *= 0x100000001b3ull;
    }
    memcpy(b + CHECKSUM, &h, 8);
}

/* Reads every value the store offers; volatile so nothing is skipped. */
static void touch(const drift_data *d)
{
    volatile double sink = 0;
    for (size_t i = 0; i < d->n_rows; i++)
        for (size_t j = 0; j < d->n_cols; j++)
            sink += d->values[i * d->row_stride + j];
    for (size_t s = 0; s < d->n_sparse; s++) {
        const drift_sparse *sp = &d->sparse[s];
        for (size_t i = 0; i < d->n_rows; i++)
            for (uint64_t k = sp->row_ptr[i]; k < sp->row_ptr[i + 1]; k++) {
                if (sp->idx[k] >= sp->dim)
                    abort(); /* the reader promised indices below dim */
                sink += sp->val[k];
            }
    }
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return 0;
    memcpy(b, data, size);
    repair(b, size);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(b, 1, size, f);
    fclose(f);
    free(b);
    drift_table *t;
    drift_err e;
    if (drift_table_open(path, &t, &e) == 0) {
        touch(&t->view);
        for (size_t j = 0; j < t->view.n_cols; j++)
            if (drift_table_column(t, t->view.col_names[j]) < 0)
                abort();
        /* Not every input is a row store: the rest is read as CSV. */
        int store = t->kind == DRIFT_TABLE_ROWSTORE;
        drift_table_free(t);
        FILE *sink = fopen("/dev/null", "w");
        if (store && drift_rowstore_info(path, sink, &e))
            abort(); /* opened once, must open again */
        fclose(sink);
    }
    unlink(path);
    return 0;
}
