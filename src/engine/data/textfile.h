/* textfile.h: a text data file read line by line, memory-mapped when it is
 * a regular file (so a file larger than memory streams through the page
 * cache) and read whole otherwise (pipes).  Lines passed can be released
 * so a sequential read keeps its resident memory small.  Not a parser. */
#ifndef DRIFT_TEXTFILE_H
#define DRIFT_TEXTFILE_H

#include <stddef.h>

#include <drift/common.h>

typedef struct drift_textfile {
    const char *path;
    const char *p, *end;  /* the whole file */
    const char *cur;      /* start of the next line */
    size_t lineno;        /* number of the line last returned (1-based) */
    void *map;
    size_t map_len;
    char *heap;
    const char *released; /* pages before this were given back */
    /* streaming mode (a pipe read forward only): */
    int fd;               /* >= 0 while streaming */
    size_t buf_len, buf_cap;
    int eof;
    /* a mapped file: its descriptor and its guard against truncation
     * (base/mapguard.h) */
    int map_fd, guard;
    int failed;           /* next returned -1: err says why */
    drift_err err;
    /* A share of the file (drift_textfile_limit): its lines are read,
     * from p to end; file_end is the file's own end, and line numbers
     * count from the share's first line until drift_textfile_line_base
     * says where it lies. */
    const char *file_end;
    int in_share;
} drift_textfile;

/* The longest line read (bytes, without its end): input with a longer
 * line, such as /dev/zero or a binary file, is refused with a message
 * instead of growing memory without bound. */
#define DRIFT_TEXTFILE_MAX_LINE ((size_t)64 << 20)

/* A line [b, e), without its terminator (\n or \r\n). */
typedef struct drift_line {
    const char *b, *e;
} drift_line;

/* Opens path.  A regular file is mapped (every function works); anything
 * else is read whole into memory, or, when streaming is set, read forward
 * through a buffer (then only next/release work, and a returned line is
 * valid until the next call). */
int drift_textfile_open(drift_textfile *f, const char *path, int streaming,
                        drift_err *e);
void drift_textfile_close(drift_textfile *f);
/* The next line: 1; 0 at the end of the file; -1 when the file cannot be
 * read on (a line longer than DRIFT_TEXTFILE_MAX_LINE, a read error, a
 * mapped file that changed size under the map): drift_textfile_status
 * says why. */
int drift_textfile_next(drift_textfile *f, drift_line *ln);
/* DRIFT_OK, or why the file cannot be read on (copied into e): a failed
 * next, or a map whose file changed (with poll set, an fstat also
 * compares its size and modification time with those at open). */
int drift_textfile_status(drift_textfile *f, int poll, drift_err *e);
/* Lines before the current position will not be read again: their pages
 * may be dropped (cheap; call as often as convenient). */
void drift_textfile_release(drift_textfile *f);
/* Rewinds to the first line; fails (returns -1) in streaming mode. */
int drift_textfile_rewind(drift_textfile *f);

/* A share of a mapped file for a run across ranks: of the lines that
 * begin at or after `from` (a byte offset), those that begin before
 * `to` are this share's, counted from the first line start at or after
 * `from` (the line that `from` falls inside belongs to the share before).
 * Cuts at the same offsets give the same line to exactly one share.
 * Reading then starts at the share's first line and ends with its last
 * (rewind goes back to the share's start).  Returns -1 when the file is
 * not mapped. */
int drift_textfile_limit(drift_textfile *f, size_t from, size_t to);

/* The number of lines before the share's first (a scan of the file up to
 * it, for messages only: a share's line numbers count from 1 until then
 * with this added). */
size_t drift_textfile_line_base(const drift_textfile *f);

int drift_line_blank(const drift_line *ln);
int drift_line_comment(const drift_line *ln); /* first non-blank is '#' */
void drift_trim(const char **b, const char **e);
/* Printable rendering of [b, e) for messages (at most 40 bytes). */
void drift_describe(const char *b, const char *e, char *out, size_t cap);

#endif
