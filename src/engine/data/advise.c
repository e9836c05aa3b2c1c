/* advise.c: read-ahead for sequential passes over mapped data (dense rows
 * and sparse row sections alike): a thread that pread()s the stretches
 * ahead of the chain into the page cache (those not already there), and,
 * for stores larger than the memory available, madvise() to drop those
 * behind.  Reads and hints only: nothing here changes what is read. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "advise.h"

/* A stretch: 1/16 of a pass, between 1 and 32 MiB, so that a small store
 * is read ahead in pieces too. */
#define CHUNK_MAX ((size_t)32 << 20)
#define CHUNK_MIN ((size_t)1 << 20)
#define AHEAD_CHUNKS 4  /* stretches read ahead of the chain */
#define READ_BYTES ((size_t)1 << 20)

/* Byte ranges [lo, hi) of rows [r0, r1) in each section of d. */
static int row_ranges(const drift_data *d, size_t r0, size_t r1,
                      uintptr_t lo[4], uintptr_t hi[4])
{
    int n = 0;
    lo[n] = (uintptr_t)(d->values + r0 * d->row_stride);
    hi[n++] = (uintptr_t)(d->values + r1 * d->row_stride);
    if (d->n_sparse) {
        const drift_sparse *s = &d->sparse[0];
        lo[n] = (uintptr_t)(s->row_ptr + r0);
        hi[n++] = (uintptr_t)(s->row_ptr + r1 + (r1 == d->n_rows));
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
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo[4], hi[4];
    int n = row_ranges(a->data, r0, r1, lo, hi);
    for (int k = 0; k < n; k++) {
        uintptr_t b = (lo[k] + page - 1) & ~(page - 1), e = hi[k] & ~(page - 1);
        if (e > b) {
            madvise((void *)b, e - b, MADV_DONTNEED);
            if (a->evict && a->fd >= 0)
                posix_fadvise(a->fd, (off_t)(b - (uintptr_t)a->map),
                              (off_t)(e - b), POSIX_FADV_DONTNEED);
        }
    }
}

/* Whether every page of [p, p + n) is in the page cache, by mincore (for a
 * file this process may not write to, the kernel reports only the pages
 * mapped here: others count as absent, and are read again, harmlessly).
 * vec holds READ_BYTES / page entries; n is at most READ_BYTES. */
static int resident(uintptr_t p, size_t n, unsigned char *vec)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t b = p & ~(page - 1), e = (p + n + page - 1) & ~(page - 1);
    if (!vec || mincore((void *)b, e - b, vec) != 0)
        return 0;
    for (size_t k = 0; k < (e - b) / page; k++)
        if (!(vec[k] & 1))
            return 0;
    return 1;
}

/* Reads stretch k's bytes into the page cache (or hints, without a file),
 * skipping, when the store stays in memory, pieces already there: it is
 * read once, however many passes are made over it.  Returns 1 when it
 * read nothing (every piece was there). */
static int fetch_chunk(const drift_advisor *a, size_t k, char *buf,
                       unsigned char *vec)
{
    size_t r0, nr = chunk_rows(a, k, &r0);
    int read_any = 0;
    if (!nr)
        return 1;
    uintptr_t lo[4], hi[4];
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
            /* Only for a store that stays in memory: under the memory
             * pressure of one that does not, pages the kernel has only
             * begun to read ahead are the first it reclaims, unless this
             * read touches them (seen: 9x the page faults, 2.5x the time
             * of a cold pass in a 256 MB cgroup). */
            if (!a->drop &&
                resident((uintptr_t)a->map + (uintptr_t)off, want, vec)) {
                off += (off_t)want;
                left -= want;
                continue;
            }
            ssize_t got = pread(a->fd, buf, want, off);
            read_any = 1;
            if (got <= 0)
                break; /* a hint only: the chain's own reads report errors */
            off += got;
            left -= (size_t)got;
        }
    }
    return !read_any;
}

/* The process's major page faults so far (every thread's). */
static long major_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : -1;
}

/* Whether the reader may skip stretch checks: the store stays in memory,
 * a whole pass of stretches was found resident, and no page has been
 * read from disk since (a major fault anywhere in the process, from the
 * store or not, ends it, and the stretches are checked again).  The
 * checks (mincore over every page) cost a pass 0.5-1 ns/datum of CPU,
 * which a pass at 2 threads on 2 cores pays in time. */
static int stays_quiet(drift_advisor *a)
{
    if (!a->quiet)
        return 0;
    long now = major_faults();
    if (now >= 0 && now == a->quiet_majflt)
        return 1;
    a->quiet = 0;
    a->resident_run = 0;
    return 0;
}

/* Counts stretch k's check: resident or not, and a whole pass of them. */
static void note_resident(drift_advisor *a, int resident_all)
{
    size_t N = a->data->n_rows;
    size_t per_pass = (N + a->rows_per_chunk - 1) / a->rows_per_chunk;
    if (a->drop || !resident_all) {
        a->resident_run = 0;
        return;
    }
    /* The count from before the run's first check: a page read from disk
     * while the run was checked (the reader may lag the chain) ends the
     * quiet at once, as one read after it does. */
    if (++a->resident_run >= per_pass) {
        a->quiet = 1;
        a->quiet_majflt = a->run_majflt;
    }
}

static void *reader(void *arg)
{
    drift_advisor *a = arg;
    char *buf = malloc(READ_BYTES);
    /* One mincore entry per page of a read, plus one for a read that
     * straddles pages. */
    unsigned char *vec =
        malloc(READ_BYTES / (size_t)sysconf(_SC_PAGESIZE) + 2);
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        size_t k = a->next_read, r0, nr = 0;
        if (buf && k <= a->chunk + AHEAD_CHUNKS &&
            (nr = chunk_rows(a, k, &r0))) {
            a->next_read++;
            if (stays_quiet(a))
                continue;
            if (a->resident_run == 0)
                a->run_majflt = major_faults();
            pthread_mutex_unlock(&a->mu);
            int all = fetch_chunk(a, k, buf, vec);
            pthread_mutex_lock(&a->mu);
            note_resident(a, all);
            /* The chain passed stretch k while it was read (a reader that
             * lags, as under a sanitizer): what the chain released, the
             * read brought back; release it again. */
            if (a->drop && k < a->chunk) {
                pthread_mutex_unlock(&a->mu);
                release_rows(a, r0, r0 + nr);
                pthread_mutex_lock(&a->mu);
            }
        } else {
            pthread_cond_wait(&a->cv, &a->mu);
        }
    }
    pthread_mutex_unlock(&a->mu);
    free(buf);
    free(vec);
    return NULL;
}

void drift_advisor_prepare(drift_advisor *a, const drift_data *data,
                           int fd, const void *map)
{
    a->data = data;
    a->fd = fd;
    a->map = map;
    a->chunk = 0;
    a->started = 0;
    a->running = 0;
    a->stop = 0;
    a->next_read = 0;
    a->evict = 0;
    a->resident_run = 0;
    a->run_majflt = 0;
    a->quiet_majflt = 0;
    a->quiet = 0;
    size_t row_bytes = data ? data->row_stride * sizeof(double) : 0;
    if (data && data->n_sparse && data->n_rows)
        row_bytes += (size_t)(data->sparse[0].nnz / data->n_rows) * 12 + 8;
    uint64_t pass = drift_advise_pass_bytes(data);
    size_t chunk = pass / 16 < CHUNK_MIN   ? CHUNK_MIN
                   : pass / 16 > CHUNK_MAX ? CHUNK_MAX
                                           : (size_t)(pass / 16);
    a->rows_per_chunk = row_bytes ? chunk / row_bytes + 1 : 0;
    a->drop = data && drift_advise_should_drop(pass,
                                               drift_advise_memory_available());
}

void drift_advisor_start(drift_advisor *a)
{
    if (!a->data || !a->rows_per_chunk || a->fd < 0 || !a->map)
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

void drift_advisor_init(drift_advisor *a, const drift_data *data, int fd,
                        const void *map)
{
    drift_advisor_prepare(a, data, fd, map);
    drift_advisor_start(a);
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
    if (!a->drop) {
        /* The store stays in memory: nothing passed is released. */
    } else if (started && old < chunk) {
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
            fetch_chunk(a, k, NULL, NULL);
        a->chunk = chunk;
    }
    a->started = 1;
}

uint64_t drift_advise_pass_bytes(const drift_data *data)
{
    if (!data || !data->n_rows)
        return 0;
    uintptr_t lo[4], hi[4];
    int n = row_ranges(data, 0, data->n_rows, lo, hi);
    uint64_t bytes = 0;
    for (int k = 0; k < n; k++)
        bytes += hi[k] - lo[k];
    return bytes;
}

/* The first number after "key" on a line of file path that starts with
 * key, times scale; 0 when there is none. */
static uint64_t file_field(const char *path, const char *key, uint64_t scale)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[256];
    size_t n = strlen(key);
    unsigned long long v = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && sscanf(line + n, "%llu", &v) == 1)
            break;
    fclose(f);
    return (uint64_t)v * scale;
}

/* The whole of file path as one number ("max" and absent: none). */
static int file_number(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long x;
    int ok = fscanf(f, "%llu", &x) == 1;
    fclose(f);
    if (ok)
        *v = (uint64_t)x;
    return ok;
}

/* Room under a cgroup's limit: limit - usage + its page cache (which the
 * kernel reclaims before it fails anything); UINT64_MAX without a limit. */
static uint64_t cgroup_room(uint64_t limit, uint64_t usage, uint64_t cache)
{
    /* v1 writes "no limit" as the largest page-aligned long. */
    if (limit >= ((uint64_t)1 << 62))
        return UINT64_MAX;
    uint64_t used = usage > cache ? usage - cache : 0;
    return limit > used ? limit - used : 0;
}

/* The smallest room over the v2 cgroup dir and its ancestors. */
static uint64_t cgroup2_room(const char *dir)
{
    char path[4096], file[4200];
    uint64_t room = UINT64_MAX;
    snprintf(path, sizeof path, "%s", dir);
    for (;;) {
        uint64_t limit, usage = 0;
        snprintf(file, sizeof file, "%s/memory.max", path);
        if (file_number(file, &limit)) {
            snprintf(file, sizeof file, "%s/memory.current", path);
            file_number(file, &usage);
            snprintf(file, sizeof file, "%s/memory.stat", path);
            uint64_t r = cgroup_room(limit, usage,
                                     file_field(file, "file ", 1));
            if (r < room)
                room = r;
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash == path || !strcmp(path, "/sys/fs/cgroup"))
            break;
        *slash = '\0';
    }
    return room;
}

/* The room left in this process's memory cgroup (v2 or v1). */
static uint64_t cgroup_available(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return UINT64_MAX;
    char line[1024], v1[1024] = "", v2[1024] = "";
    int have1 = 0, have2 = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "0::", 3)) {
            snprintf(v2, sizeof v2, "%s", line + 3);
            have2 = 1;
        } else {
            /* "id:controllers:path", memory among the controllers */
            char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
            if (c && p) {
                *p = '\0';
                char *tok, *save = NULL;
                for (tok = strtok_r(c + 1, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save))
                    if (!strcmp(tok, "memory")) {
                        snprintf(v1, sizeof v1, "%s", p + 1);
                        have1 = 1;
                    }
            }
        }
    }
    fclose(f);
    uint64_t room = UINT64_MAX;
    char dir[2200], file[2300];
    if (have1) {
        /* The hierarchy's own limit counts the ancestors' too.  Inside a
         * cgroup namespace the path may not exist: its root is ours. */
        const char *bases[2] = {"/sys/fs/cgroup/memory%s",
                                "/sys/fs/cgroup/memory"};
        for (int k = 0; k < 2; k++) {
            snprintf(dir, sizeof dir, bases[k], v1);
            snprintf(file, sizeof file, "%s/memory.usage_in_bytes", dir);
            uint64_t usage;
            if (!file_number(file, &usage))
                continue;
            snprintf(file, sizeof file, "%s/memory.stat", dir);
            uint64_t limit = file_field(file, "hierarchical_memory_limit ", 1);
            if (!limit) {
                snprintf(file, sizeof file, "%s/memory.limit_in_bytes", dir);
                if (!file_number(file, &limit))
                    break;
            }
            snprintf(file, sizeof file, "%s/memory.stat", dir);
            uint64_t cache = file_field(file, "total_cache ", 1);
            if (!cache)
                cache = file_field(file, "cache ", 1);
            room = cgroup_room(limit, usage, cache);
            break;
        }
    }
    if (have2) {
        const char *bases[3] = {"/sys/fs/cgroup%s", "/sys/fs/cgroup/unified%s",
                                "/sys/fs/cgroup"};
        for (int k = 0; k < 3; k++) {
            snprintf(dir, sizeof dir, bases[k], strcmp(v2, "/") ? v2 : "");
            snprintf(file, sizeof file, "%s/cgroup.controllers", dir);
            if (access(file, R_OK) != 0)
                continue;
            uint64_t r = cgroup2_room(dir);
            if (r < room)
                room = r;
            break;
        }
    }
    return room;
}

uint64_t drift_advise_memory_available(void)
{
    uint64_t avail = file_field("/proc/meminfo", "MemAvailable:", 1024);
    if (!avail) {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page
                                      : UINT64_MAX;
    }
    uint64_t cg = cgroup_available();
    return cg < avail ? cg : avail;
}

int drift_advise_should_drop(uint64_t bytes, uint64_t avail)
{
    return bytes > avail / 2;
}
