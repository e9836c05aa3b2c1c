/* writer.h: files (draws, metrics, summaries, row stores) written safely:
 * never over anything but a regular file, never over an input of the same
 * run, in an unnamed temporary file that becomes the target only when
 * complete, so no reader ever sees a torn file under the requested name
 * and a killed process leaves nothing behind. */
#ifndef DRIFT_WRITER_H
#define DRIFT_WRITER_H

#include <stdint.h>
#include <stdio.h>

#include <drift/common.h>

typedef struct drift_writer drift_writer;

/* Whether path may be written: not empty, not ending in '/', and when it
 * exists a regular file (a directory, device node, FIFO or socket is
 * refused: the writer would replace it).  When inputs (n paths, NULL
 * entries skipped) is given, path must not be the same file as any of
 * them (compared by device and inode, so links and other spellings are
 * caught).  Returns DRIFT_OK or DRIFT_EINVAL with a message naming path. */
int drift_writer_check(const char *path, const char *const *inputs, size_t n,
                       drift_err *e);
/* Beside what is there, the name itself is checked, before any work:
 * its directory exists and may be written in, and the name with the
 * temporary suffix (".tmp.XXXXXX") fits the file system's limit on a
 * name (pathconf _PC_NAME_MAX), so that a run never ends unable to put a
 * finished file in place.  drift_writer_check_kind checks what is there
 * alone (for a name that is not itself written, such as --out of several
 * chains, whose files are named from it). */
int drift_writer_check_kind(const char *path, const char *const *inputs,
                            size_t n, drift_err *e);

/* Renames from to to, both in the directory open as dir, replacing a
 * regular file at to (or a link that resolves to one) but nothing else,
 * with no moment between the look at to and the replacement: the names
 * are exchanged in one step (renameat2 RENAME_EXCHANGE) and what came out
 * is put back when it is not a regular file.  Returns 0, or an errno:
 * EEXIST with *now_is naming what is at to ("a FIFO (named pipe)", "a
 * directory", ...) when that was refused; from is then left as it was.
 * On a file system without renameat2's flags, a plain rename. */
int drift_rename_over_file(int dir, const char *from, const char *to,
                           const char **now_is);

/* An advisory lock on the set of files a run writes under the name out
 * (each chain's draws file, its metrics file), to hold from before the
 * run's work until every one of them is in place: a second run on the
 * same name is refused while it is held, so that one run's files never
 * mix with another's.  The lock is an empty hidden file beside out
 * (".NAME.lock", or ".drift-HASH.lock" when that name would be too long);
 * the descriptor is kept open across fork (a child holds the lock as
 * well).  *fd gets it; DRIFT_OK, or DRIFT_EINVAL (another process holds
 * it; the message says so) or DRIFT_EIO, with a message naming out. */
int drift_writer_lock_set(const char *out, int *fd, drift_err *e);
/* The same, shared (shared != 0) or exclusive: the writers of one run
 * across MPI ranks each hold it shared, each with exclusive locks on its
 * own chains' names, which refuses a run in one process on the same name
 * and another job writing any of those chains.  A holder killed outright
 * (SIGKILL) leaves the empty lock file behind: it holds nothing, and the
 * next run on the name takes it and removes it. */
int drift_writer_lock_set_mode(const char *out, int shared, int *fd,
                               drift_err *e);
/* Releases the lock: the process that took it removes the file (when it
 * is still the one locked, and of a shared lock when no other process
 * still holds it), any other (a forked child) only closes its
 * descriptor.  fd < 0 is a no-op. */
void drift_writer_unlock_set(const char *out, int fd);
/* Releases every lock this process still holds, as drift_writer_unlock_set
 * would: for a process about to end by a signal it re-raises. */
void drift_writer_unlock_all(void);

/* Opens a temporary file for path after drift_writer_check (no inputs).
 * Where the file system allows it the file has no name until commit
 * (O_TMPFILE); elsewhere it is PATH.tmp.XXXXXX beside path, removed by
 * abort, by drift_writer_cleanup_signal, or by a later writer of path once
 * no process holds it (see writer.c). */
int drift_writer_open(const char *path, drift_writer **out, drift_err *e);

/* A writer for a temporary file that another process opened for path
 * (guard.c's parent completes the files of a child that died): fd, open
 * for reading and writing, becomes w's (commit or abort closes it; on a
 * failure it stays the caller's); writing goes on at fd's offset.  tmp is
 * the file's temporary name, or NULL when it has none (O_TMPFILE: commit
 * links it in through /proc/self/fd). */
int drift_writer_adopt(int fd, const char *path, const char *tmp,
                       drift_writer **out, drift_err *e);

/* The temporary file's name, or NULL when it has none. */
const char *drift_writer_temp_name(const drift_writer *w);

/* Makes buf (n bytes, owned by the caller, alive until commit or abort)
 * the stream's buffer, before anything is written, and *written the count
 * of the stream's bytes in the file (set to 0 here).  Each write to the
 * file zeroes the bytes it took from buf, then adds them to *written, so
 * that another process sharing buf and written (guard.c's parent) can
 * complete the file after this one died: buf holds, up to its first NUL,
 * what was written to the stream and not to the file, but for its first
 * (file size - *written) bytes when the file is longer than the count (a
 * death between the write and the zeroing).  The text written must hold
 * no NUL byte. */
int drift_writer_buffer(drift_writer *w, char *buf, size_t n,
                        uint64_t *written);

/* The stream to write to; its write errors are recorded (see
 * drift_writer_failed).  Buffered: call drift_writer_failed after a unit
 * of output to learn of them. */
FILE *drift_writer_file(drift_writer *w);
/* The descriptor, for writers that pwrite (row stores); do not mix with
 * the stream. */
int drift_writer_fd(drift_writer *w);
/* Non-zero (DRIFT_EIO, message in e naming the file) once a write to the
 * stream has failed (disk full, file size limit, I/O error). */
int drift_writer_failed(drift_writer *w, drift_err *e);

/* Flushes, syncs and puts the file in place under its name, replacing
 * what was there atomically; frees w.  On any error nothing is put in
 * place (the previous file is kept) and the message names the file. */
int drift_writer_commit(drift_writer *w, drift_err *e);
/* Discards the temporary file; frees w.  NULL is a no-op. */
void drift_writer_abort(drift_writer *w);

/* For signal handlers (async-signal-safe): removes the named temporary
 * files of every writer still open, before the process dies of a signal.
 * Unnamed ones need nothing: they vanish with the process. */
void drift_writer_cleanup_signal(void);

/* Writes v as drift writes every real in output: %.10g; "nan", "inf". */
void drift_writer_real(FILE *f, double v);

#endif
