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

#include "base/util.h"
#include "textfile.h"

int drift_textfile_open(drift_textfile *f, const char *path, int streaming,
                        drift_err *e)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->fd = -1;
    int fd = open(path, O_RDONLY);
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
            close(fd);
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
    /* Pipes and other streams: read everything. */
    size_t cap = 1 << 16, len = 0;
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
        len += (size_t)got;
    }
    close(fd);
    f->heap = buf;
    f->p = f->cur = f->released = buf;
    f->end = buf + len;
    return DRIFT_OK;
}

void drift_textfile_close(drift_textfile *f)
{
    if (f->map)
        munmap(f->map, f->map_len);
    if (f->fd >= 0)
        close(f->fd);
    drift_free(f->heap);
    memset(f, 0, sizeof *f);
    f->fd = -1;
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
    if (f->fd >= 0 && refill(f) != 0)
        return 0; /* a read error ends the input; callers see a short file */
    if (f->cur >= f->end)
        return 0;
    const char *nl = memchr(f->cur, '\n', (size_t)(f->end - f->cur));
    const char *stop = nl ? nl : f->end;
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
