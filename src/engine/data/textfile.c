/* textfile.c: memory-mapped line reading for the text data loaders (CSV,
 * LIBSVM), with sequential read-ahead advice and release of passed pages.
 * Not for binary row stores (rowstore.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/mapguard.h"
#include "base/util.h"
#include "textfile.h"

/* Records why the file cannot be read on; returns -1 for next. */
static int fail(drift_textfile *f, int code, const char *why)
{
    if (!f->failed)
        drift_err_set(&f->err, code, "%s:%zu: error: %s", f->path,
                      f->lineno + 1, why);
    f->failed = code;
    return -1;
}

static int too_long(drift_textfile *f)
{
    char why[160];
    snprintf(why, sizeof why,
             "a line longer than %zu MiB (no line end in sight): not a "
             "text data file",
             DRIFT_TEXTFILE_MAX_LINE >> 20);
    return fail(f, DRIFT_EDATA, why);
}

int drift_textfile_open(drift_textfile *f, const char *path, int streaming,
                        drift_err *e)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->fd = f->map_fd = f->guard = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open data file: %s",
                             path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return drift_err_set(e, DRIFT_EIO, "%s: cannot read: %s", path,
                             strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return drift_err_set(e, DRIFT_EIO,
                             "%s: is a directory, expected a data file",
                             path);
    }
    if (S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            close(fd);
            f->p = f->end = f->cur = f->released = "";
            return DRIFT_OK;
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            /* The descriptor stays open for the guard's polls. */
            f->map_fd = fd;
            f->guard = drift_mapguard_add(m, (size_t)st.st_size, fd, path);
            madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
            f->map = m;
            f->map_len = (size_t)st.st_size;
            f->p = f->cur = f->released = m;
            f->end = f->p + st.st_size;
            return DRIFT_OK;
        }
    }
    if (streaming) {
        f->fd = fd;
        f->buf_cap = (size_t)1 << 20;
        f->heap = drift_malloc(f->buf_cap);
        if (!f->heap) {
            close(fd);
            f->fd = -1;
            return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
        }
        f->p = f->cur = f->end = f->released = f->heap;
        return DRIFT_OK;
    }
    /* Pipes and other streams: read everything, but no line longer than
     * the bound (a device such as /dev/zero never ends one). */
    size_t cap = 1 << 16, len = 0, line_start = 0;
    char *buf = drift_malloc(cap);
    if (!buf) {
        close(fd);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (len == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : drift_realloc(buf, cap * 2);
            if (!nb) {
                drift_free(buf);
                close(fd);
                return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory",
                                     path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            drift_free(buf);
            close(fd);
            return drift_err_set(e, DRIFT_EIO, "%s: read error: %s", path,
                                 strerror(err));
        }
        if (got == 0)
            break;
        const char *nl = memrchr(buf + len, '\n', (size_t)got);
        len += (size_t)got;
        if (nl)
            line_start = (size_t)(nl - buf) + 1;
        if (len - line_start > DRIFT_TEXTFILE_MAX_LINE) {
            size_t lines = 0;
            for (const char *q = buf; (q = memchr(q, '\n', (size_t)(buf + line_start - q)));
                 q++)
                lines++;
            drift_free(buf);
            close(fd);
            return drift_err_set(e, DRIFT_EDATA,
                                 "%s:%zu: error: a line longer than %zu MiB "
                                 "(no line end in sight): not a text data "
                                 "file",
                                 path, lines + 1,
                                 DRIFT_TEXTFILE_MAX_LINE >> 20);
        }
    }
    close(fd);
    f->heap = buf;
    f->p = f->cur = f->released = buf;
    f->end = buf + len;
    return DRIFT_OK;
}

void drift_textfile_close(drift_textfile *f)
{
    drift_mapguard_remove(f->guard);
    if (f->map)
        munmap(f->map, f->map_len);
    if (f->map_fd >= 0)
        close(f->map_fd);
    if (f->fd >= 0)
        close(f->fd);
    drift_free(f->heap);
    memset(f, 0, sizeof *f);
    f->fd = f->map_fd = f->guard = -1;
}

int drift_textfile_status(drift_textfile *f, int poll, drift_err *e)
{
    if (f->failed) {
        if (e)
            *e = f->err;
        return f->failed;
    }
    if (f->guard >= 0 && (poll || drift_mapguard_any()))
        return drift_mapguard_check_one(f->guard, poll, e);
    return DRIFT_OK;
}

/* Streaming mode: makes sure a whole line (or the end of input) lies in
 * the buffer after cur, moving what is left to the front and reading
 * more as needed.  Returns -1 on a read error. */
static int refill(drift_textfile *f)
{
    for (;;) {
        if (memchr(f->cur, '\n', (size_t)(f->end - f->cur)) || f->eof)
            return 0;
        size_t left = (size_t)(f->end - f->cur);
        memmove(f->heap, f->cur, left);
        f->cur = f->p = f->released = f->heap;
        f->end = f->heap + left;
        if (left == f->buf_cap) { /* a line longer than the buffer */
            if (left > DRIFT_TEXTFILE_MAX_LINE)
                return -2;
            size_t nc = f->buf_cap * 2;
            char *nb = drift_realloc(f->heap, nc);
            if (!nb)
                return -1;
            f->heap = nb;
            f->buf_cap = nc;
            f->cur = f->p = f->released = nb;
            f->end = nb + left;
        }
        ssize_t got = read(f->fd, f->heap + left, f->buf_cap - left);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            f->eof = 1;
        f->end += got;
    }
}

int drift_textfile_next(drift_textfile *f, drift_line *ln)
{
    if (f->failed)
        return -1;
    if (f->fd >= 0) {
        int rc = refill(f);
        if (rc == -2)
            return too_long(f);
        if (rc)
            return fail(f, DRIFT_EIO, strerror(errno));
    }
    if (f->cur >= f->end)
        return 0;
    /* Never past the bound: a mapped file of one endless line is not
     * scanned to its end. */
    size_t rest = (size_t)(f->end - f->cur);
    size_t scan = rest < DRIFT_TEXTFILE_MAX_LINE + 2 ? rest
                                                     : DRIFT_TEXTFILE_MAX_LINE + 2;
    const char *nl = memchr(f->cur, '\n', scan);
    if (!nl && scan < rest)
        return too_long(f);
    const char *stop = nl ? nl : f->end;
    if ((size_t)(stop - f->cur) > DRIFT_TEXTFILE_MAX_LINE + 1)
        return too_long(f);
    ln->b = f->cur;
    ln->e = stop;
    if (ln->e > ln->b && ln->e[-1] == '\r')
        ln->e--;
    f->cur = nl ? nl + 1 : f->end;
    f->lineno++;
    return 1;
}

void drift_textfile_release(drift_textfile *f)
{
    if (!f->map)
        return;
    /* Give back whole 64 MiB stretches behind the read position. */
    const size_t chunk = (size_t)64 << 20;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    while ((size_t)(f->cur - f->released) > 2 * chunk) {
        uintptr_t lo = ((uintptr_t)f->released + page - 1) & ~(page - 1);
        uintptr_t hi = ((uintptr_t)f->released + chunk) & ~(page - 1);
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
        f->released += chunk;
    }
}

int drift_textfile_rewind(drift_textfile *f)
{
    if (f->fd >= 0)
        return -1;
    f->cur = f->released = f->p;
    f->lineno = 0;
    return 0;
}

/* The first line start at or after offset off of the map: off itself
 * when the byte before it ends a line (or off is 0). */
static const char *line_start_at(const drift_textfile *f, size_t off)
{
    size_t len = (size_t)(f->file_end - (const char *)f->map);
    if (off >= len)
        return f->file_end;
    const char *p = (const char *)f->map + off;
    if (off == 0 || p[-1] == '\n')
        return p;
    const char *nl = memchr(p, '\n', (size_t)(f->file_end - p));
    return nl ? nl + 1 : f->file_end;
}

int drift_textfile_limit(drift_textfile *f, size_t from, size_t to)
{
    if (!f->map)
        return -1;
    if (!f->in_share)
        f->file_end = f->end;
    const char *a = line_start_at(f, from), *b = line_start_at(f, to);
    if (b < a)
        b = a;
    f->p = f->cur = f->released = a;
    f->end = b;
    f->lineno = 0;
    f->in_share = 1;
    return 0;
}

size_t drift_textfile_line_base(const drift_textfile *f)
{
    if (!f->in_share || !f->map)
        return 0;
    size_t lines = 0;
    const char *q = f->map;
    while (q < f->p && (q = memchr(q, '\n', (size_t)(f->p - q)))) {
        lines++;
        q++;
    }
    return lines;
}

int drift_line_blank(const drift_line *ln)
{
    for (const char *q = ln->b; q < ln->e; q++)
        if (*q != ' ' && *q != '\t')
            return 0;
    return 1;
}

int drift_line_comment(const drift_line *ln)
{
    const char *q = ln->b;
    while (q < ln->e && (*q == ' ' || *q == '\t'))
        q++;
    return q < ln->e && *q == '#';
}

void drift_trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

void drift_describe(const char *b, const char *e, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *q = b; q < e && n + 5 < cap && n < 40; q++) {
        unsigned char ch = (unsigned char)*q;
        if (ch >= 32 && ch < 127)
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
    }
    if (e - b > 40 && n + 4 < cap) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}
