/* advise.c: read-ahead for sequential passes over mapped data (dense rows
 * and sparse row sections alike): a thread that pread()s the stretches
 * ahead of the chain into the page cache, and madvise() to drop those
 * behind.  Reads and hints only: nothing here changes what is read. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "advise.h"

#define CHUNK_BYTES ((size_t)32 << 20)
#define AHEAD_CHUNKS 4  /* stretches read ahead of the chain */
#define READ_BYTES ((size_t)1 << 20)

/* Byte ranges [lo, hi) of rows [r0, r1) in each section of d. */
static int row_ranges(const drift_data *d, size_t r0, size_t r1,
                      uintptr_t lo[3], uintptr_t hi[3])
{
    int n = 0;
    lo[n] = (uintptr_t)(d->values + r0 * d->row_stride);
    hi[n++] = (uintptr_t)(d->values + r1 * d->row_stride);
    if (d->n_sparse) {
        const drift_sparse *s = &d->sparse[0];
        lo[n] = (uintptr_t)(s->idx + s->row_ptr[r0]);
        hi[n++] = (uintptr_t)(s->idx + s->row_ptr[r1]);
        lo[n] = (uintptr_t)(s->val + s->row_ptr[r0]);
        hi[n++] = (uintptr_t)(s->val + s->row_ptr[r1]);
    }
    return n;
}

static size_t chunk_rows(const drift_advisor *a, size_t k, size_t *r0)
{
    size_t N = a->data->n_rows;
    *r0 = k * a->rows_per_chunk;
    if (*r0 >= N)
        return 0;
    return *r0 + a->rows_per_chunk < N ? a->rows_per_chunk : N - *r0;
}

/* Drops the pages wholly inside rows [r0, r1) from this mapping. */
static void release_rows(const drift_advisor *a, size_t r0, size_t r1)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo[3], hi[3];
    int n = row_ranges(a->data, r0, r1, lo, hi);
    for (int k = 0; k < n; k++) {
        uintptr_t b = (lo[k] + page - 1) & ~(page - 1), e = hi[k] & ~(page - 1);
        if (e > b)
            madvise((void *)b, e - b, MADV_DONTNEED);
    }
}

/* Reads stretch k's bytes into the page cache (or hints, without a file). */
static void fetch_chunk(const drift_advisor *a, size_t k, char *buf)
{
    size_t r0, nr = chunk_rows(a, k, &r0);
    if (!nr)
        return;
    uintptr_t lo[3], hi[3];
    int n = row_ranges(a->data, r0, r0 + nr, lo, hi);
    for (int s = 0; s < n; s++) {
        if (!buf) {
            uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
            uintptr_t b = lo[s] & ~(page - 1);
            if (hi[s] > b)
                madvise((void *)b, hi[s] - b, MADV_WILLNEED);
            continue;
        }
        off_t off = (off_t)(lo[s] - (uintptr_t)a->map);
        size_t left = hi[s] - lo[s];
        while (left) {
            size_t want = left < READ_BYTES ? left : READ_BYTES;
            ssize_t got = pread(a->fd, buf, want, off);
            if (got <= 0)
                break; /* a hint only: the chain's own reads report errors */
            off += got;
            left -= (size_t)got;
        }
    }
}

static void *reader(void *arg)
{
    drift_advisor *a = arg;
    char *buf = malloc(READ_BYTES);
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        size_t k = a->next_read, r0;
        if (buf && k <= a->chunk + AHEAD_CHUNKS && chunk_rows(a, k, &r0)) {
            a->next_read++;
            pthread_mutex_unlock(&a->mu);
            fetch_chunk(a, k, buf);
            pthread_mutex_lock(&a->mu);
        } else {
            pthread_cond_wait(&a->cv, &a->mu);
        }
    }
    pthread_mutex_unlock(&a->mu);
    free(buf);
    return NULL;
}

void drift_advisor_init(drift_advisor *a, const drift_data *data, int fd,
                        const void *map)
{
    a->data = data;
    a->fd = fd;
    a->map = map;
    a->chunk = 0;
    a->started = 0;
    a->running = 0;
    a->stop = 0;
    a->next_read = 0;
    size_t row_bytes = data ? data->row_stride * sizeof(double) : 0;
    if (data && data->n_sparse && data->n_rows)
        row_bytes += (size_t)(data->sparse[0].nnz / data->n_rows) * 12;
    a->rows_per_chunk = row_bytes ? CHUNK_BYTES / row_bytes + 1 : 0;
    if (!data || !a->rows_per_chunk || fd < 0 || !map)
        return;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    /* Without the thread, the madvise hints below still apply. */
    if (pthread_create(&a->thread, NULL, reader, a) == 0) {
        a->running = 1;
    } else {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
    }
}

void drift_advisor_free(drift_advisor *a)
{
    if (!a->running)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    a->running = 0;
}

void drift_advisor_at(drift_advisor *a, size_t r)
{
    const drift_data *d = a->data;
    if (!d || !a->rows_per_chunk || !d->n_rows)
        return;
    size_t chunk = r / a->rows_per_chunk, N = d->n_rows;
    if (a->started && chunk == a->chunk)
        return;
    size_t old = a->chunk;
    int started = a->started;
    if (started && old < chunk) {
        release_rows(a, old * a->rows_per_chunk,
                     chunk * a->rows_per_chunk < N ? chunk * a->rows_per_chunk
                                                   : N);
    } else if (started && chunk < old && old * a->rows_per_chunk < N) {
        /* Wrapped to a new pass: drop the tail of the last one. */
        release_rows(a, old * a->rows_per_chunk, N);
    }
    if (a->running) {
        pthread_mutex_lock(&a->mu);
        a->chunk = chunk;
        /* Read from just ahead of the chain (a jump or a new pass). */
        if (a->next_read <= chunk || a->next_read > chunk + AHEAD_CHUNKS + 1)
            a->next_read = chunk + 1;
        pthread_cond_signal(&a->cv);
        pthread_mutex_unlock(&a->mu);
    } else {
        for (size_t k = started && chunk == old + 1 ? chunk + AHEAD_CHUNKS
                                                    : chunk + 1;
             k <= chunk + AHEAD_CHUNKS; k++)
            fetch_chunk(a, k, NULL);
        a->chunk = chunk;
    }
    a->started = 1;
}
