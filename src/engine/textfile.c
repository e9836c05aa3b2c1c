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

#include "textfile.h"
#include "util.h"

int drift_textfile_open(drift_textfile *f, const char *path, drift_err *e)
{
    memset(f, 0, sizeof *f);
    f->path = path;
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
    drift_free(f->heap);
    memset(f, 0, sizeof *f);
}

int drift_textfile_next(drift_textfile *f, drift_line *ln)
{
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

void drift_textfile_rewind(drift_textfile *f)
{
    f->cur = f->released = f->p;
    f->lineno = 0;
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
