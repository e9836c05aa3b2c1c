/* util.h: small services every engine file uses: error formatting, the
 * engine's allocator (with fault injection for tests), string helpers.
 * Not for anything numerical or anything a plugin sees. */
#ifndef DRIFT_UTIL_H
#define DRIFT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

#if defined(__GNUC__)
#define DRIFT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define DRIFT_API __attribute__((visibility("default")))
#else
#define DRIFT_PRINTF(a, b)
#define DRIFT_API
#endif

/* Writes a message into e (when e != NULL) and returns code. */
int drift_err_set(drift_err *e, int code, const char *fmt, ...)
    DRIFT_PRINTF(3, 4);
/* Prefixes e's message with "prefix: ". */
void drift_err_prefix(drift_err *e, const char *fmt, ...) DRIFT_PRINTF(2, 3);

/* The engine's allocator: every allocation on the engine's paths goes
 * through these so that tests can fail the k-th one (drift_fail_alloc). */
void *drift_malloc(size_t n);
void *drift_calloc(size_t count, size_t size);
void *drift_realloc(void *p, size_t n);
void drift_free(void *p);
char *drift_strdup(const char *s);
/* Allocates count*size bytes, failing (NULL) on overflow. */
void *drift_malloc_array(size_t count, size_t size);

/* Asks the kernel to back [p, p + n) with huge pages where it can (the
 * 2 MB-aligned part of it; transparent huge pages in "madvise" mode, as
 * Debian ships them): for the data tables a full pass streams through,
 * where a translation miss on every 4 KB page cost a pass over a 256 MB
 * table 1.1-1.2x on a virtual machine.  Call it before the memory is
 * first written.  Does nothing for n below 32 MB or where the system has
 * no such advice; never fails. */
void drift_advise_huge(void *p, size_t n);

/* Fault injection: the k-th allocation from now (1 = the next) fails;
 * 0 disables.  Returns the number of allocations made since the last call
 * to drift_fail_alloc (so a test can count a path's allocations). */
uint64_t drift_fail_alloc(uint64_t k);

/* Levenshtein distance, for "did you mean" suggestions. */
size_t drift_edit_distance(const char *a, const char *b);
/* The candidate closest to name (NULL when none is close enough). */
const char *drift_closest(const char *name, const char *const *cands,
                          size_t n);

/* Parses a whole string as a finite double / a non-negative integer.
 * Returns 0 on success. */
int drift_parse_double(const char *s, double *out);
int drift_parse_u64(const char *s, uint64_t *out);

/* Monotonic seconds. */
double drift_now(void);

/* The most memory this process can have, in bytes: the machine's
 * physical memory, or less where a cgroup limit or an address-space
 * limit (ulimit -v) says so.  For refusing, with the size asked for, what
 * could never fit, before allocating it. */
uint64_t drift_memory_limit(void);

/* "1.5 GiB", "300 MiB", "12 KiB" or "100 bytes" for n bytes, into buf. */
const char *drift_format_bytes(double n, char *buf, size_t cap);

/* Makes sure this process may hold need more files open than it holds
 * now, raising its soft limit (RLIMIT_NOFILE) towards the hard one when
 * it must.  0, or -1 with *limit the most it may hold (the hard limit). */
int drift_files_reserve(uint64_t need, uint64_t *limit);

/* A path for a message: itself when short, else its first and last bytes
 * around "..." (into buf, DRIFT_PATH_BRIEF bytes), so that what a message
 * says after a long path (the reason) is never cut off by its buffer. */
#define DRIFT_PATH_BRIEF 128
const char *drift_path_brief(const char *path, char *buf);

#endif
