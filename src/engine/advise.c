/* advise.c: madvise() hints for sequential passes over mapped data (dense
 * rows and sparse row sections alike).  Advice only: nothing here changes
 * what is read. */
#include "config.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "advise.h"

#define CHUNK_BYTES ((size_t)32 << 20)

void drift_advisor_init(drift_advisor *a, const drift_data *data)
{
    a->data = data;
    a->chunk = 0;
    a->started = 0;
    size_t row_bytes = data ? data->row_stride * sizeof(double) : 0;
    if (data && data->n_sparse && data->n_rows)
        row_bytes += (size_t)(data->sparse[0].nnz / data->n_rows) * 12;
    a->rows_per_chunk = row_bytes ? CHUNK_BYTES / row_bytes + 1 : 0;
}

/* Applies advice to the bytes of rows [r0, r1) in every section. */
static void advise_rows(const drift_data *d, size_t r0, size_t r1, int how)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const void *lo[3], *hi[3];
    int n = 0;
    lo[n] = d->values + r0 * d->row_stride;
    hi[n++] = d->values + r1 * d->row_stride;
    if (d->n_sparse) {
        const drift_sparse *s = &d->sparse[0];
        lo[n] = s->idx + s->row_ptr[r0];
        hi[n++] = s->idx + s->row_ptr[r1];
        lo[n] = s->val + s->row_ptr[r0];
        hi[n++] = s->val + s->row_ptr[r1];
    }
    for (int k = 0; k < n; k++) {
        uintptr_t a = (uintptr_t)lo[k], b = (uintptr_t)hi[k];
        if (how == MADV_DONTNEED) { /* whole pages inside the range only */
            a = (a + page - 1) & ~(page - 1);
            b &= ~(page - 1);
        } else {
            a &= ~(page - 1);
            b = (b + page - 1) & ~(page - 1);
        }
        if (b > a)
            madvise((void *)a, b - a, how);
    }
}

void drift_advisor_at(drift_advisor *a, size_t r)
{
    const drift_data *d = a->data;
    if (!d || !a->rows_per_chunk || !d->n_rows)
        return;
    size_t chunk = r / a->rows_per_chunk, N = d->n_rows;
    if (a->started && chunk == a->chunk)
        return;
    size_t next0 = (chunk + 1) * a->rows_per_chunk;
    if (next0 < N)
        advise_rows(d, next0,
                    next0 + a->rows_per_chunk < N ? next0 + a->rows_per_chunk
                                                  : N,
                    MADV_WILLNEED);
    if (a->started && a->chunk < chunk) {
        size_t p0 = a->chunk * a->rows_per_chunk;
        size_t p1 = chunk * a->rows_per_chunk;
        advise_rows(d, p0, p1 < N ? p1 : N, MADV_DONTNEED);
    } else if (a->started && chunk < a->chunk) {
        /* Wrapped to a new pass: drop the tail of the last one. */
        size_t p0 = a->chunk * a->rows_per_chunk;
        if (p0 < N)
            advise_rows(d, p0, N, MADV_DONTNEED);
    }
    a->chunk = chunk;
    a->started = 1;
}
