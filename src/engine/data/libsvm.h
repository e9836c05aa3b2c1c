/* libsvm.h: a streaming reader of LIBSVM/SVMlight files, one row per line:
 * "label index:value index:value ..." with 1-based, increasing indices
 * ('#' starts a comment).  Rows come one at a time, so files larger than
 * memory can be converted.  Not for "qid:" ranking files. */
#ifndef DRIFT_LIBSVM_H
#define DRIFT_LIBSVM_H

#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

#include "textfile.h"

typedef struct drift_libsvm {
    drift_textfile f;
    uint32_t *idx;      /* the last row's 0-based indices */
    double *val;        /* and values */
    size_t nnz, cap;
    double label;
} drift_libsvm;

int drift_libsvm_open(drift_libsvm *s, const char *path, drift_err *e);
void drift_libsvm_close(drift_libsvm *s);
/* Reads the next row into s->label, s->idx, s->val, s->nnz: returns 1, 0
 * at the end, or a negative value with e set (file:line:col). */
int drift_libsvm_next(drift_libsvm *s, drift_err *e);

/* True when path's name says LIBSVM (.libsvm, .svm, .svmlight). */
int drift_libsvm_path(const char *path);

#endif
