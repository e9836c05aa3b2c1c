/* output.c: the files the point and method commands write (optimize,
 * laplace, log-prob, generate), as drift sample writes its own: the name
 * checked before any work (not one of the run's inputs, nothing but a
 * regular file at it, its directory writable), the file written under a
 * temporary name and put in place whole, or not at all (base/writer.h). */
#include "config.h"

#include <stdio.h>

#include "base/writer.h"
#include "cli.h"

int cli_out_check(const char *cmd, const char *path,
                  const char *const *inputs, size_t n)
{
    drift_err e = {{0}};
    if (drift_writer_check(path, inputs, n, &e)) {
        fprintf(stderr, "drift %s: --out: %s\n", cmd, e.msg);
        return EXIT_USAGE;
    }
    return 0;
}

FILE *cli_out_open(const char *cmd, const char *path, drift_writer **w)
{
    drift_err e = {{0}};
    *w = NULL;
    if (drift_writer_open(path, w, &e)) {
        fprintf(stderr, "drift %s: %s\n", cmd, e.msg);
        return NULL;
    }
    return drift_writer_file(*w);
}

int cli_out_commit(const char *cmd, drift_writer *w)
{
    drift_err e = {{0}};
    if (drift_writer_failed(w, &e)) {
        fprintf(stderr, "drift %s: %s\n", cmd, e.msg);
        drift_writer_abort(w);
        return EXIT_RUN_FAILED;
    }
    if (drift_writer_commit(w, &e)) {
        fprintf(stderr, "drift %s: %s\n", cmd, e.msg);
        return EXIT_RUN_FAILED;
    }
    return 0;
}
