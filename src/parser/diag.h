/* diag.h: source text and error reports for the model language and its
 * data files.  A report reads "file:line:col: error: message", followed by
 * the offending line and a caret under the place, as compilers print
 * them.  Reports go to a stream the caller chooses, so the CLI prints them
 * and tests capture them.  Not for errors that have no place in a text
 * (those are drift_err messages). */
#ifndef DRIFT_DIAG_H
#define DRIFT_DIAG_H

#include <stdio.h>

#include <drift/common.h>

#include "ast.h"

/* A model file's text with its line starts. */
typedef struct drift_source {
    char *name;             /* as given (a path) */
    char *text;             /* len bytes, NUL-terminated; may hold NULs */
    size_t len;
    size_t *line_start;     /* n_lines offsets into text */
    size_t n_lines;
} drift_source;

/* Reads a model file.  Fails with a message naming the path. */
int drift_source_read(const char *path, drift_source **out, drift_err *e);
/* A source from memory (copied). */
int drift_source_new(const char *name, const char *text, size_t len,
                     drift_source **out, drift_err *e);
void drift_source_free(drift_source *s);

/* Line `line` (1-based) of s as [*b, *b + *n), without its newline;
 * returns 0, or -1 when there is no such line. */
int drift_source_line(const drift_source *s, int line, const char **b,
                      size_t *n);

typedef struct drift_diag {
    FILE *out;          /* NULL: reports are counted, not printed */
    size_t n_errors;
    size_t max_errors;  /* reports printed at most (then one line saying
                           so); 0 means 20 */
    char first[400];    /* the first error's first line, for drift_err */
} drift_diag;

void drift_diag_init(drift_diag *d, FILE *out);

/* An error at loc in a model source. */
void drift_diag_error(drift_diag *d, const drift_source *src, drift_loc loc,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A warning at loc (not counted as an error). */
void drift_diag_warning(drift_diag *d, const drift_source *src, drift_loc loc,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A note attached to the previous error (not counted). */
void drift_diag_note(drift_diag *d, const drift_source *src, drift_loc loc,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* An error at line:col of a text file (a data file) whose line text is
 * given (it may be NULL when unknown); width is the caret's width. */
void drift_diag_error_at(drift_diag *d, const char *file, size_t line,
                         size_t col, size_t width, const char *text,
                         size_t text_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 8, 9)))
#endif
    ;

/* An error with no position in a file: "file: error: message". */
void drift_diag_error_file(drift_diag *d, const char *file, const char *fmt,
                           ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Sets e to a one-line summary of d's errors and returns code: "FILE: N
 * errors, reported above" when they were printed, else the first error
 * (with the count when there were more). */
int drift_diag_summary(const drift_diag *d, const char *file, int code,
                       drift_err *e);

#endif
