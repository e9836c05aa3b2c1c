/* writer.c: files written safely.  The target must be a regular file (or
 * not exist) and no input of the run; the content goes to a temporary
 * file in the target's directory that becomes the target only when
 * complete and synced.  Not for what goes into the files.
 *
 * The temporary file, and what is left when a process dies:
 * - Where the file system supports O_TMPFILE (ext4, xfs, btrfs, tmpfs...)
 *   it has no name at all until commit, which links it in through
 *   /proc/self/fd: directly under the target's name when there is none,
 *   else as PATH.tmp.XXXXXX renamed over the target (rename is atomic).
 *   A process killed in any way, SIGKILL included, leaves nothing, but for
 *   the microseconds between that link and the rename.
 * - Elsewhere (no O_TMPFILE, no /proc) it is PATH.tmp.XXXXXX from the
 *   start.  Abort and commit remove or rename it; a fatal signal caught
 *   by the command's handlers removes it (drift_writer_cleanup_signal);
 *   after a SIGKILL it stays until the next writer of the same PATH,
 *   which removes every PATH.tmp.XXXXXX that no live writer holds.
 * The environment variable DRIFT_WRITER_NAMED_TEMP=1 forces the second
 * way (for its tests).
 * Every temporary file is held with flock(LOCK_EX) by its writer for its
 * whole life, which is how a later writer tells a leftover (no lock, and
 * older than two seconds) from a file in use, also across processes. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "writer.h"

struct drift_writer {
    FILE *f;
    int fd;
    int err;            /* the first write error (an errno), 0 if none */
    char *final;        /* the target */
    char *tmp;          /* the named temporary file, or NULL (unnamed) */
    int dfd;            /* the target's directory, opened with the file:
                           the commit links and renames relative to it,
                           so the file lands where the checks looked even
                           if the directory is moved or replaced by a
                           link meanwhile (-1: by path) */
    int slot;           /* tmp's entry in the cleanup table, or -1 */
    char *buf;          /* the stream's buffer when the caller gave one */
    size_t buf_len;     /* (drift_writer_buffer), else NULL, 0 */
    uint64_t *written;  /* and where the stream's bytes in the file are
                           counted, or NULL */
};

/* ---- named temporaries a signal handler may remove ---- */

#define TEMP_SLOTS 256
enum { SLOT_FREE, SLOT_FILLING, SLOT_LIVE, SLOT_DYING };
static char temp_names[TEMP_SLOTS][PATH_MAX];
static atomic_int temp_state[TEMP_SLOTS];

/* Records name for drift_writer_cleanup_signal; -1 when the table is
 * full or the name too long (the file is then only removed by abort or
 * by a later writer's sweep). */
static int slot_take(const char *name)
{
    size_t len = strlen(name);
    if (len >= PATH_MAX)
        return -1;
    for (int k = 0; k < TEMP_SLOTS; k++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&temp_state[k], &expect,
                                           SLOT_FILLING)) {
            memcpy(temp_names[k], name, len + 1);
            atomic_store(&temp_state[k], SLOT_LIVE);
            return k;
        }
    }
    return -1;
}

static void slot_give(int k)
{
    if (k < 0)
        return;
    /* A handler that took the slot (SLOT_DYING) keeps it: the process is
     * going away. */
    int expect = SLOT_LIVE;
    atomic_compare_exchange_strong(&temp_state[k], &expect, SLOT_FREE);
}

void drift_writer_cleanup_signal(void)
{
    for (int k = 0; k < TEMP_SLOTS; k++) {
        int expect = SLOT_LIVE;
        if (atomic_compare_exchange_strong(&temp_state[k], &expect,
                                           SLOT_DYING))
            unlink(temp_names[k]);
    }
}

/* ---- checks ---- */

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISSOCK(m) ? "a socket"
           : S_ISLNK(m)  ? "a symbolic link"
                         : "not a regular file";
}

int drift_rename_over_file(int dir, const char *from, const char *to,
                           const char **now_is)
{
    *now_is = NULL;
    for (int tries = 0; tries < 100; tries++) {
        if (renameat2(dir, from, dir, to, RENAME_NOREPLACE) == 0)
            return 0;
        int err = errno;
        if (err == EINVAL || err == ENOSYS) /* a file system without */
            return renameat(dir, from, dir, to) == 0 ? 0 : errno;
        if (err != EEXIST)
            return err;
        /* Something is at to: swap it with from in one step, then look
         * at what came out; anything but a regular file goes back. */
        if (renameat2(dir, from, dir, to, RENAME_EXCHANGE) != 0) {
            err = errno;
            if (err == ENOENT)
                continue; /* it went away: take the free name again */
            if (err == EINVAL || err == ENOSYS)
                return renameat(dir, from, dir, to) == 0 ? 0 : errno;
            return err;
        }
        struct stat st;
        if (fstatat(dir, from, &st, 0) == 0 && !S_ISREG(st.st_mode)) {
            *now_is = file_kind(st.st_mode);
            if (renameat2(dir, from, dir, to, RENAME_EXCHANGE) != 0)
                return errno;
            return EEXIST;
        }
        unlinkat(dir, from, 0); /* the file it replaces */
        return 0;
    }
    return EEXIST;
}

/* Bytes a temporary name adds to the target's: ".tmp.XXXXXX". */
#define TMP_SUFFIX 11

static char *dir_of(const char *path);

/* Whether path's name can be created where it points: its directory
 * exists, is a directory this process may write in, and the name, with
 * the temporary suffix, fits the file system's limit on a name. */
static int check_name(const char *path, drift_err *e)
{
    if (strlen(path) + TMP_SUFFIX >= PATH_MAX)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%.200s...: the path is %zu bytes, more than "
                             "the %d a path may have (with the %d of a "
                             "temporary name beside it)",
                             path, strlen(path), PATH_MAX - TMP_SUFFIX - 1,
                             TMP_SUFFIX);
    char *dir = dir_of(path);
    if (!dir)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    struct stat st;
    int rc = DRIFT_OK;
    if (stat(dir, &st) != 0) {
        rc = drift_err_set(e, DRIFT_EINVAL, "%s: its directory %s: %s", path,
                           dir, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = drift_err_set(e, DRIFT_EINVAL, "%s: %s is not a directory",
                           path, dir);
    } else if (access(dir, W_OK | X_OK) != 0) {
        rc = drift_err_set(e, DRIFT_EINVAL,
                           "%s: cannot create files in its directory %s: %s",
                           path, dir, strerror(errno));
    } else {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        long max = pathconf(dir, _PC_NAME_MAX);
        if (max <= 0)
            max = NAME_MAX;
        size_t len = strlen(base);
        if (len + TMP_SUFFIX > (size_t)max)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "%.60s...%s: the name is %zu bytes; with the "
                               "temporary name drift writes beside it "
                               "(NAME.tmp.XXXXXX) it passes the %ld bytes "
                               "this file system allows in a name: give a "
                               "name of at most %ld bytes",
                               base, len > 20 ? base + len - 20 : "", len,
                               max, max - TMP_SUFFIX);
    }
    drift_free(dir);
    return rc;
}

int drift_writer_check(const char *path, const char *const *inputs, size_t n,
                       drift_err *e)
{
    int rc = drift_writer_check_kind(path, inputs, n, e);
    return rc ? rc : check_name(path, e);
}

int drift_writer_check_kind(const char *path, const char *const *inputs,
                            size_t n, drift_err *e)
{
    if (!path || !*path)
        return drift_err_set(e, DRIFT_EINVAL,
                             "an empty file name; give the name of the file "
                             "to write");
    if (path[strlen(path) - 1] == '/')
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: names a directory; give the name of the "
                             "file to write",
                             path);
    struct stat st;
    if (stat(path, &st) != 0)
        return DRIFT_OK; /* nothing there (creating it says what fails) */
    if (!S_ISREG(st.st_mode))
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s: is %s; drift writes its output under a "
                             "temporary name and renames it into place, "
                             "which would replace it: give the name of a "
                             "regular file",
                             path, file_kind(st.st_mode));
    for (size_t k = 0; k < n; k++) {
        struct stat in;
        if (inputs[k] && stat(inputs[k], &in) == 0 &&
            in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: is the same file as the input %s of "
                                 "this run; writing it would destroy the "
                                 "input: give another output name",
                                 path, inputs[k]);
    }
    return DRIFT_OK;
}

/* ---- the lock on a run's output set ---- */

/* The lock file's name for out, into buf. */
static int lock_name(const char *out, char *buf, size_t cap)
{
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    int dlen = slash ? (int)(slash - out + 1) : 0;
    long name_max = NAME_MAX;
    if (strlen(base) + 7 <= (size_t)name_max)
        return snprintf(buf, cap, "%.*s.%s.lock", dlen, out, base) >=
               (int)cap;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)base; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return snprintf(buf, cap, "%.*s.drift-%016llx.lock", dlen, out,
                    (unsigned long long)h) >= (int)cap;
}

static pid_t lock_owner;
/* The locks this process took and holds, for drift_writer_unlock_all (a
 * process that ends by a signal: the guard's parent). */
static struct {
    char path[PATH_MAX];
    int fd;
} held[64];
static size_t n_held;

int drift_writer_lock_set(const char *out, int *fd, drift_err *e)
{
    return drift_writer_lock_set_mode(out, 0, fd, e);
}

int drift_writer_lock_set_mode(const char *out, int shared, int *fd,
                               drift_err *e)
{
    *fd = -1;
    char path[PATH_MAX];
    if (lock_name(out, path, sizeof path))
        return drift_err_set(e, DRIFT_EINVAL, "%s: the name is too long",
                             out);
    /* A lock file removed by its run between our open and our lock is
     * no lock: take it again until the file locked is the one named. */
    for (int tries = 0; tries < 100; tries++) {
        int f = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f < 0)
            return drift_err_set(e, DRIFT_EIO,
                                 "%s: cannot create the lock %s of the "
                                 "run's output files: %s",
                                 out, path, strerror(errno));
        struct stat a, b;
        if (fstat(f, &a) != 0 || !S_ISREG(a.st_mode) || a.st_size != 0) {
            close(f);
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s: %s is not an empty file, so not a "
                                 "lock drift made: remove it or give "
                                 "another output name",
                                 out, path);
        }
        if (flock(f, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
            int err = errno;
            close(f);
            if (err == EWOULDBLOCK)
                return drift_err_set(e, DRIFT_EINVAL,
                                     "%s: another drift run is writing "
                                     "this output set (it holds %s); wait "
                                     "for it to end or give another "
                                     "output name",
                                     out, path);
            return drift_err_set(e, DRIFT_EIO, "%s: cannot lock %s: %s",
                                 out, path, strerror(err));
        }
        if (stat(path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            *fd = f;
            lock_owner = getpid();
            if (n_held < sizeof held / sizeof *held) {
                snprintf(held[n_held].path, sizeof held[n_held].path, "%s",
                         path);
                held[n_held++].fd = f;
            }
            return DRIFT_OK;
        }
        close(f);
    }
    return drift_err_set(e, DRIFT_EIO, "%s: cannot lock %s: it keeps "
                                       "changing",
                         out, path);
}

/* Releases the lock at path held by fd (see drift_writer_unlock_set). */
static void release(const char *path, int fd)
{
    struct stat a, b;
    /* Removed while held, so that a later run never finds it taken; by
     * the taker alone (a child's exit must not remove the parent's), and
     * of a shared lock by its last holder (while others hold it, the
     * exclusive lock is refused). */
    if (lock_owner == getpid() && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        fstat(fd, &a) == 0 &&
        stat(path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        unlink(path);
    close(fd);
}

void drift_writer_unlock_set(const char *out, int fd)
{
    if (fd < 0)
        return;
    char path[PATH_MAX];
    for (size_t k = 0; k < n_held; k++)
        if (held[k].fd == fd) {
            held[k] = held[--n_held];
            break;
        }
    if (lock_name(out, path, sizeof path))
        close(fd);
    else
        release(path, fd);
}

void drift_writer_unlock_all(void)
{
    while (n_held > 0) {
        n_held--;
        release(held[n_held].path, held[n_held].fd);
    }
}

/* ---- the stream ---- */

static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    drift_writer *w = cookie;
    size_t done = 0;
    if (w->err)
        return -1;
    while (done < n) {
        ssize_t k = write(w->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            w->err = k < 0 ? errno : ENOSPC;
            return -1;
        }
        done += (size_t)k;
    }
    /* What is in the file leaves the caller's buffer, then the count says
     * so: a process that dies between the two leaves a file longer than
     * the count by what the buffer still holds (see drift_writer_buffer). */
    if (w->buf && buf >= w->buf && buf < w->buf + w->buf_len) {
        size_t room = (size_t)(w->buf + w->buf_len - buf);
        memset(w->buf + (buf - w->buf), 0, n < room ? n : room);
    }
    if (w->written)
        *w->written += n;
    return (ssize_t)n;
}

static int cookie_close(void *cookie)
{
    (void)cookie; /* the writer closes its descriptor itself */
    return 0;
}

/* ---- temporary files ---- */

/* "dir" of path ("." when it has none), in a fresh string. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return drift_strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = drift_malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* Six characters for a temporary name, different at every call. */
static void tmp_suffix(char out[7])
{
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
                 (uint64_t)ts.tv_nsec * 0xbf58476d1ce4e5b9ull ^
                 (atomic_fetch_add(&counter, 1) + 1) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    static const char abc[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int k = 0; k < 6; k++, x /= 62)
        out[k] = abc[x % 62];
    out[6] = '\0';
}

/* Removes the leftovers PATH.tmp.XXXXXX of dead writers of path: files
 * nobody holds locked, older than two seconds (a live writer locks its
 * file right after creating it). */
static void sweep_stale(const char *dir, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    int dfd = dirfd(d);
    time_t now = time(NULL);
    for (struct dirent *ent; (ent = readdir(d));) {
        const char *nm = ent->d_name;
        if (strlen(nm) != blen + 11 || strncmp(nm, base, blen) ||
            strncmp(nm + blen, ".tmp.", 5))
            continue;
        int fd = openat(dfd, nm, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
                                     O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            now - st.st_mtime >= 2 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dfd, nm, 0);
        close(fd);
    }
    closedir(d);
}

/* An unnamed file in dir, open for reading too (csvout.c reads a draws
 * file back to cut it), or -1 (no O_TMPFILE there, or no /proc to link
 * it from). */
static int open_unnamed(int dfd)
{
#ifdef O_TMPFILE
    /* Tests take the named path on any file system with this. */
    const char *named = getenv("DRIFT_WRITER_NAMED_TEMP");
    if (named && *named && strcmp(named, "0"))
        return -1;
    int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    struct stat a, b;
    if (stat(proc, &a) != 0 || fstat(fd, &b) != 0 || a.st_ino != b.st_ino ||
        a.st_dev != b.st_dev) {
        close(fd);
        return -1;
    }
    return fd;
#else
    (void)dfd;
    return -1;
#endif
}

static void writer_free(drift_writer *w)
{
    if (w->dfd >= 0)
        close(w->dfd);
    drift_free(w->tmp);
    drift_free(w->final);
    drift_free(w);
}

/* The last component of path. */
static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Where w's target is: its directory's descriptor and its name there, or
 * by path when the directory could not be opened. */
static int at_dir(const drift_writer *w)
{
    return w->dfd >= 0 ? w->dfd : AT_FDCWD;
}
static const char *at_name(const drift_writer *w, const char *path)
{
    return w->dfd >= 0 ? base_of(path) : path;
}

int drift_writer_open(const char *path, drift_writer **out, drift_err *e)
{
    *out = NULL;
    int rc = drift_writer_check(path, NULL, 0, e);
    if (rc)
        return rc;
    drift_writer *w = drift_calloc(1, sizeof *w);
    if (w)
        w->dfd = -1;
    char *dir = dir_of(path);
    if (!w || !dir || !(w->final = drift_strdup(path))) {
        drift_free(dir);
        if (w)
            writer_free(w);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    w->slot = -1;
    w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->dfd < 0) {
        int err = errno;
        char brief[DRIFT_PATH_BRIEF];
        drift_err_set(e, DRIFT_EIO, "%s: cannot open its directory %s: %s",
                      drift_path_brief(path, brief), dir, strerror(err));
        drift_free(dir);
        writer_free(w);
        return DRIFT_EIO;
    }
    w->fd = open_unnamed(w->dfd);
    if (w->fd < 0) {
        size_t len = strlen(path);
        w->tmp = drift_malloc(len + 12);
        if (!w->tmp) {
            drift_free(dir);
            writer_free(w);
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        }
        memcpy(w->tmp, path, len);
        memcpy(w->tmp + len, ".tmp.XXXXXX", 12);
        w->fd = mkostemp(w->tmp, O_CLOEXEC);
        if (w->fd < 0) {
            int err = errno;
            drift_free(dir);
            writer_free(w);
            char brief[DRIFT_PATH_BRIEF];
            return drift_err_set(e, DRIFT_EIO,
                                 "%s: cannot create output file: %s",
                                 drift_path_brief(path, brief),
                                 strerror(err));
        }
        w->slot = slot_take(w->tmp);
        /* mkstemp creates 0600; output files are ordinary files. */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(w->fd, 0666 & ~mask);
    }
    flock(w->fd, LOCK_EX | LOCK_NB);
    sweep_stale(dir, path);
    drift_free(dir);
    cookie_io_functions_t io = {NULL, cookie_write, NULL, cookie_close};
    w->f = fopencookie(w, "w", io);
    if (!w->f) {
        drift_writer_abort(w);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 16);
    *out = w;
    return DRIFT_OK;
}

int drift_writer_adopt(int fd, const char *path, const char *tmp,
                       drift_writer **out, drift_err *e)
{
    *out = NULL;
    drift_writer *w = drift_calloc(1, sizeof *w);
    if (w)
        w->dfd = -1;
    if (!w || !(w->final = drift_strdup(path)) ||
        (tmp && !(w->tmp = drift_strdup(tmp)))) {
        if (w)
            writer_free(w);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    char *dir = dir_of(path);
    if (dir)
        w->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    drift_free(dir);
    w->fd = fd;
    w->slot = tmp ? slot_take(tmp) : -1;
    cookie_io_functions_t io = {NULL, cookie_write, NULL, cookie_close};
    w->f = fopencookie(w, "w", io);
    if (!w->f) {
        w->fd = -1; /* the caller keeps fd */
        drift_writer_abort(w);
        return drift_err_set(e, DRIFT_ENOMEM, "%s: out of memory", path);
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 16);
    *out = w;
    return DRIFT_OK;
}

const char *drift_writer_temp_name(const drift_writer *w) { return w->tmp; }

int drift_writer_buffer(drift_writer *w, char *buf, size_t n,
                        uint64_t *written)
{
    if (setvbuf(w->f, buf, _IOFBF, n) != 0)
        return DRIFT_EINVAL;
    memset(buf, 0, n);
    w->buf = buf;
    w->buf_len = n;
    w->written = written;
    *written = 0;
    return DRIFT_OK;
}

FILE *drift_writer_file(drift_writer *w) { return w->f; }

int drift_writer_fd(drift_writer *w) { return w->fd; }

int drift_writer_failed(drift_writer *w, drift_err *e)
{
    if (!w->err && !ferror(w->f))
        return DRIFT_OK;
    char brief[DRIFT_PATH_BRIEF];
    return drift_err_set(e, DRIFT_EIO,
                         "%s: write error: %s; the file is not written (a "
                         "previous file of that name is kept)",
                         drift_path_brief(w->final, brief),
                         strerror(w->err ? w->err : EIO));
}

/* Links the unnamed file of w in under its final name, atomically
 * replacing a regular file there (never anything else: *now_is then names
 * it).  Returns 0 or an errno. */
static int link_in(drift_writer *w, const char **now_is)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", w->fd);
    int D = at_dir(w);
    if (linkat(AT_FDCWD, proc, D, at_name(w, w->final),
               AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno != EEXIST)
        return errno;
    size_t len = strlen(w->final);
    char *tmp = drift_malloc(len + 12);
    if (!tmp)
        return ENOMEM;
    for (int tries = 0; tries < 100; tries++) {
        memcpy(tmp, w->final, len);
        memcpy(tmp + len, ".tmp.", 5);
        tmp_suffix(tmp + len + 5);
        int slot = slot_take(tmp);
        if (linkat(AT_FDCWD, proc, D, at_name(w, tmp), AT_SYMLINK_FOLLOW) !=
            0) {
            int err = errno;
            slot_give(slot);
            if (err == EEXIST)
                continue;
            drift_free(tmp);
            return err;
        }
        int err = drift_rename_over_file(D, at_name(w, tmp),
                                         at_name(w, w->final), now_is);
        if (err)
            unlinkat(D, at_name(w, tmp), 0);
        slot_give(slot);
        drift_free(tmp);
        return err;
    }
    drift_free(tmp);
    return EEXIST;
}

/* When the file cannot be put in place, its content is kept beside the
 * target as NAME.kept.XXXXX (the name into kept, cap bytes): a finished
 * run's draws are never thrown away because of what appeared at their
 * name.  Returns 0, or -1 when even that failed. */
static int keep_aside(drift_writer *w, char *kept, size_t cap)
{
    int D = at_dir(w);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", w->fd);
    for (int tries = 0; tries < 100; tries++) {
        char sfx[7];
        tmp_suffix(sfx);
        if (snprintf(kept, cap, "%s.kept.%.5s", w->final, sfx) >= (int)cap)
            return -1;
        int rc = w->tmp ? renameat2(D, at_name(w, w->tmp), D,
                                    at_name(w, kept), RENAME_NOREPLACE)
                        : linkat(AT_FDCWD, proc, D, at_name(w, kept),
                                 AT_SYMLINK_FOLLOW);
        if (rc == 0) {
            if (w->tmp) {
                drift_free(w->tmp); /* moved: abort must not remove it */
                w->tmp = NULL;
            }
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

int drift_writer_commit(drift_writer *w, drift_err *e)
{
    if (fflush(w->f) != 0 && !w->err)
        w->err = EIO;
    int rc = drift_writer_failed(w, e);
    if (!rc && fsync(w->fd) != 0) {
        int err = errno;
        char brief[DRIFT_PATH_BRIEF];
        if (err != EINVAL && err != EROFS) /* files that cannot sync */
            rc = drift_err_set(e, DRIFT_EIO,
                               "%s: write error: %s; the file is not "
                               "written (a previous file of that name is "
                               "kept)",
                               drift_path_brief(w->final, brief),
                               strerror(err));
    }
    if (rc) {
        drift_writer_abort(w);
        return rc;
    }
    /* What is at the name now, checked again just before it is replaced:
     * a device node, FIFO or directory that appeared during the run is
     * never replaced (drift_writer_check looked at the start); and what
     * appears between this look and the replacement is caught by the
     * replacement itself (drift_rename_over_file). */
    int err = 0;
    const char *now_is = NULL;
    struct stat st;
    if (fstatat(at_dir(w), at_name(w, w->final), &st, 0) == 0 &&
        !S_ISREG(st.st_mode))
        now_is = file_kind(st.st_mode);
    else if (w->tmp)
        err = drift_rename_over_file(at_dir(w), at_name(w, w->tmp),
                                     at_name(w, w->final), &now_is);
    else
        err = link_in(w, &now_is);
    if (now_is || err) {
        char brief[DRIFT_PATH_BRIEF], why[160], kept[PATH_MAX + 16];
        if (now_is)
            snprintf(why, sizeof why, "it is now %s, which drift does not "
                                      "replace (it was not when the run "
                                      "began)",
                     now_is);
        else
            snprintf(why, sizeof why, "%s", strerror(err));
        if (keep_aside(w, kept, sizeof kept) == 0) {
            char kbrief[DRIFT_PATH_BRIEF];
            rc = drift_err_set(e, DRIFT_EIO,
                               "%s: cannot put the output in place: %s; the "
                               "file is kept as %s",
                               drift_path_brief(w->final, brief), why,
                               drift_path_brief(kept, kbrief));
        } else {
            rc = drift_err_set(e, DRIFT_EIO,
                               "%s: cannot put the output in place: %s",
                               drift_path_brief(w->final, brief), why);
        }
        drift_writer_abort(w);
        return rc;
    }
    slot_give(w->slot);
    fclose(w->f);
    close(w->fd);
    writer_free(w);
    return DRIFT_OK;
}

void drift_writer_abort(drift_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    if (w->tmp)
        unlinkat(at_dir(w), at_name(w, w->tmp), 0);
    slot_give(w->slot);
    if (w->fd >= 0)
        close(w->fd);
    writer_free(w);
}

void drift_writer_real(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else if (isinf(v))
        fputs(v < 0 ? "-inf" : "inf", f);
    else
        fprintf(f, "%.10g", v);
}
