/* fuzz_libsvm.c: libFuzzer target for the LIBSVM reader: the input is
 * written to a .libsvm file and opened as a table (both passes: sizing,
 * then filling); an accepted table is read whole and its sparse rows
 * checked against what the reader promises (offsets increasing, indices
 * strictly increasing within a row and below dim).  Built by `make fuzz`;
 * seeds in corpus/libsvm; replayed by make check from regressions/libsvm. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/data/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/fuzz-libsvm-%d.libsvm", dir,
                 (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    drift_table *t;
    drift_err e;
    if (drift_table_open(path, &t, &e) == 0) {
        const drift_data *d = &t->view;
        if (d->n_cols != 1 || d->n_sparse != 1 || d->n_rows == 0)
            abort();
        const drift_sparse *sp = d->sparse;
        volatile double sink = 0;
        if (sp->row_ptr[0] != 0 || sp->row_ptr[d->n_rows] != sp->nnz)
            abort();
        for (size_t i = 0; i < d->n_rows; i++) {
            sink += d->values[i];
            if (sp->row_ptr[i + 1] < sp->row_ptr[i])
                abort();
            for (uint64_t k = sp->row_ptr[i]; k < sp->row_ptr[i + 1]; k++) {
                if (sp->idx[k] >= sp->dim ||
                    (k > sp->row_ptr[i] && sp->idx[k] <= sp->idx[k - 1]))
                    abort();
                sink += sp->val[k];
            }
        }
        (void)sink;
        drift_table_free(t);
    }
    unlink(path);
    return 0;
}
