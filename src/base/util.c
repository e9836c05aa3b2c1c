/* util.c: error formatting, the fault-injecting allocator and string
 * helpers shared by the engine.  Not for numerics. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util.h"

int drift_err_set(drift_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void drift_err_prefix(drift_err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char out[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, sizeof out, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used > sizeof out - 1)
        used = sizeof out - 1;
    /* Append ": " and the old message, truncating at the buffer's end. */
    const char *parts[2] = {": ", e->msg};
    for (int p = 0; p < 2; p++)
        for (const char *q = parts[p]; *q && used < sizeof out - 1; q++)
            out[used++] = *q;
    out[used] = '\0';
    memcpy(e->msg, out, used + 1);
}

/* Fault injection state: atomics, because chains allocate from their
 * own threads (relaxed: counts, not ordering, are what matter). */
static _Atomic uint64_t fail_countdown;
static _Atomic uint64_t alloc_count;

uint64_t drift_fail_alloc(uint64_t k)
{
    uint64_t n = atomic_exchange_explicit(&alloc_count, 0,
                                          memory_order_relaxed);
    atomic_store_explicit(&fail_countdown, k, memory_order_relaxed);
    return n;
}

static int injected_failure(void)
{
    atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed);
    uint64_t left = atomic_load_explicit(&fail_countdown,
                                         memory_order_relaxed);
    /* Exactly one allocation takes the count from 1 to 0 and fails. */
    while (left) {
        if (atomic_compare_exchange_weak_explicit(&fail_countdown, &left,
                                                  left - 1,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
            return left == 1;
    }
    return 0;
}

void *drift_malloc(size_t n)
{
    if (injected_failure())
        return NULL;
    return malloc(n ? n : 1);
}

void *drift_calloc(size_t count, size_t size)
{
    if (injected_failure())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *drift_realloc(void *p, size_t n)
{
    if (injected_failure())
        return NULL;
    return realloc(p, n ? n : 1);
}

void drift_free(void *p) { free(p); }

void drift_advise_huge(void *p, size_t n)
{
#if defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!p || n < ((size_t)32 << 20))
        return;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

char *drift_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = drift_malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

void *drift_malloc_array(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return drift_malloc(count * size);
}

size_t drift_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (up + 1 < best)
                best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *drift_closest(const char *name, const char *const *cands,
                          size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t k = 0; k < n; k++) {
        size_t dist = drift_edit_distance(name, cands[k]);
        if (dist < best_d) {
            best_d = dist;
            best = cands[k];
        }
    }
    /* Close enough: at most a third of the name's length, at least 2. */
    size_t limit = strlen(name) / 3;
    if (limit < 2)
        limit = 2;
    return best_d <= limit ? best : NULL;
}

int drift_parse_double(const char *s, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || end == s || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int drift_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

double drift_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A limit in bytes from a cgroup file ("max" or absent: none). */
static uint64_t cgroup_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return UINT64_MAX;
    unsigned long long v;
    int got = fscanf(f, "%llu", &v);
    fclose(f);
    return got == 1 ? (uint64_t)v : UINT64_MAX;
}

uint64_t drift_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t lim = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size
                                         : UINT64_MAX;
    uint64_t cg = cgroup_limit("/sys/fs/cgroup/memory.max");
    if (cg < lim)
        lim = cg;
    cg = cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    if (cg < lim)
        lim = cg;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (uint64_t)rl.rlim_cur < lim)
        lim = (uint64_t)rl.rlim_cur;
    return lim;
}

const char *drift_format_bytes(double n, char *buf, size_t cap)
{
    static const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB",
                                 "EiB"};
    int k = 0;
    while (n >= 1024 && k < 6) {
        n /= 1024;
        k++;
    }
    if (k == 0)
        snprintf(buf, cap, "%.0f bytes", n);
    else
        snprintf(buf, cap, "%.3g %s", n, unit[k]);
    return buf;
}

const char *drift_path_brief(const char *path, char *buf)
{
    size_t n = strlen(path);
    if (n < DRIFT_PATH_BRIEF)
        return path;
    /* 40 + 3 + 84 + NUL: the end, which tells files of a set apart
     * (NAME_1.csv, NAME_2.csv), is kept longer. */
    snprintf(buf, DRIFT_PATH_BRIEF, "%.40s...%s", path, path + n - 84);
    return buf;
}

int drift_files_reserve(uint64_t need, uint64_t *limit)
{
    /* What is open now: the descriptors in /proc/self/fd (less the one
     * that reads it), or a generous guess without /proc. */
    uint64_t open_now = 64;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        open_now = 0;
        while (readdir(d))
            open_now++;
        closedir(d);
    }
    uint64_t want = open_now + need;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0; /* nothing known: the opens will say */
    if (rl.rlim_cur == RLIM_INFINITY || want <= rl.rlim_cur)
        return 0;
    if (rl.rlim_max == RLIM_INFINITY || want <= rl.rlim_max) {
        struct rlimit up = {(rlim_t)want, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            return 0;
    }
    *limit = rl.rlim_max == RLIM_INFINITY ? rl.rlim_cur : rl.rlim_max;
    return -1;
}
