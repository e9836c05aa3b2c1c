/* inits.h: user-given initial values (--init FILE) on the constrained
 * scale, from a CmdStan-style JSON object ({"w": [0.1, 0.2], "tau": 1,
 * "M": [[1, 2], [3, 4]]}) or a CSV file whose header names the model's
 * outputs (w.1, w.2, tau, M.1.1 ...; a Stan CSV of draws works: its last
 * row is used and other columns are ignored).  Not for checking
 * constraints: the model's unconstrain() does that when a chain starts. */
#ifndef DRIFT_INITS_H
#define DRIFT_INITS_H

#include <drift/model.h>

/* Fills values[m->n_out] from path, in m's output order.  A name missing
 * from the file, an index out of range, a value that is not a finite
 * number: an error naming the file and the value. */
int drift_inits_read(const char *path, const drift_model *m, double *values,
                     drift_err *e);

/* The largest init file read (a regular file, no bigger: a value per
 * output of a model of millions of parameters fits many times over). */
#define DRIFT_INITS_MAX_BYTES (256 << 20)

/* As drift_inits_read, but a name missing from the file is no error:
 * given[k] (n_out flags) says which values the file held; the chain draws
 * the others at random (Stan's partial inits). */
int drift_inits_read_partial(const char *path, const drift_model *m,
                             double *values, unsigned char *given,
                             drift_err *e);

#endif
