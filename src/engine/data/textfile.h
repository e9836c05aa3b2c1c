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
} drift_textfile;

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
/* The next line; 0 at end of file. */
int drift_textfile_next(drift_textfile *f, drift_line *ln);
/* Lines before the current position will not be read again: their pages
 * may be dropped (cheap; call as often as convenient). */
void drift_textfile_release(drift_textfile *f);
/* Rewinds to the first line; fails (returns -1) in streaming mode. */
int drift_textfile_rewind(drift_textfile *f);

int drift_line_blank(const drift_line *ln);
int drift_line_comment(const drift_line *ln); /* first non-blank is '#' */
void drift_trim(const char **b, const char **e);
/* Printable rendering of [b, e) for messages (at most 40 bytes). */
void drift_describe(const char *b, const char *e, char *out, size_t cap);

#endif
