/* writer.c: files written safely: under a temporary name beside the
 * target, renamed into place only when complete, so no reader ever sees a
 * torn file under the requested name.  Not for what goes into the files. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "writer.h"

struct drift_writer {
    FILE *f;
    char *tmp;
    char *final;
};

int drift_writer_open(const char *path, drift_writer **out, drift_err *e)
{
    *out = NULL;
    drift_writer *w = drift_calloc(1, sizeof *w);
    size_t len = strlen(path);
    if (!w)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    w->final = drift_strdup(path);
    w->tmp = drift_malloc(len + 16);
    if (!w->final || !w->tmp) {
        drift_free(w->final);
        drift_free(w->tmp);
        drift_free(w);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    memcpy(w->tmp, path, len);
    memcpy(w->tmp + len, ".tmp.XXXXXX", 12);
    int fd = mkstemp(w->tmp);
    if (fd < 0) {
        int err = errno;
        drift_free(w->final);
        drift_free(w->tmp);
        drift_free(w);
        return drift_err_set(e, DRIFT_EIO, "%s: cannot create output file: %s",
                             path, strerror(err));
    }
    w->f = fdopen(fd, "w");
    if (!w->f) {
        close(fd);
        unlink(w->tmp);
        drift_free(w->final);
        drift_free(w->tmp);
        drift_free(w);
        return drift_err_set(e, DRIFT_EIO, "%s: cannot open output file",
                             path);
    }
    /* mkstemp creates 0600; draws files are ordinary files. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    setvbuf(w->f, NULL, _IOFBF, 1 << 16);
    *out = w;
    return DRIFT_OK;
}

FILE *drift_writer_file(drift_writer *w) { return w->f; }

static void writer_free(drift_writer *w)
{
    drift_free(w->tmp);
    drift_free(w->final);
    drift_free(w);
}

int drift_writer_commit(drift_writer *w, drift_err *e)
{
    int bad = ferror(w->f);
    if (fclose(w->f) != 0)
        bad = 1;
    if (bad) {
        unlink(w->tmp);
        drift_err_set(e, DRIFT_EIO, "%s: write error (disk full?)", w->final);
        writer_free(w);
        return DRIFT_EIO;
    }
    if (rename(w->tmp, w->final) != 0) {
        int err = errno;
        unlink(w->tmp);
        drift_err_set(e, DRIFT_EIO, "%s: cannot rename output into place: %s",
                      w->final, strerror(err));
        writer_free(w);
        return DRIFT_EIO;
    }
    writer_free(w);
    return DRIFT_OK;
}

void drift_writer_abort(drift_writer *w)
{
    if (!w)
        return;
    fclose(w->f);
    unlink(w->tmp);
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

