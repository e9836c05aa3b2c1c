/* writer.h: files (draws, metrics, summaries, stores) written safely: under a temporary name
 * in the target's directory, renamed into place only when complete, so no
 * reader ever sees a torn file under the requested name. */
#ifndef DRIFT_WRITER_H
#define DRIFT_WRITER_H

#include <stdio.h>

#include <drift/common.h>

typedef struct drift_writer drift_writer;

/* Opens a temporary file beside path. */
int drift_writer_open(const char *path, drift_writer **out, drift_err *e);
FILE *drift_writer_file(drift_writer *w);
/* Flushes, closes and renames to the final name; frees w. */
int drift_writer_commit(drift_writer *w, drift_err *e);
/* Closes and removes the temporary file; frees w. */
void drift_writer_abort(drift_writer *w);

/* Writes v as drift writes every real in output: %.10g; "nan", "inf". */
void drift_writer_real(FILE *f, double v);

#endif
