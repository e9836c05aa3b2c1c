/* points.h: points of a model read from files the user gives by name: the
 * constrained values of every draw in a Stan CSV file (drift's or
 * CmdStan's), matched to the model's outputs by column name.  What the
 * methods that evaluate a model at existing draws read (log_prob,
 * generated quantities over a fit).  Not for initial values (inits.c),
 * which take one point and allow partial ones. */
#ifndef DRIFT_POINTS_H
#define DRIFT_POINTS_H

#include <drift/model.h>

struct drift_stancsv;

/* The draws of path (its kept rows: warmup rows saved with save_warmup
 * are skipped unless with_warmup) as m's n_out constrained values each: *vals (malloc'd, n
 * x n_out row-major, the caller frees), *n rows.  A column of m missing
 * from the file is refused naming it and the file (a draws file of
 * another model); extra columns are ignored.  When csv is not NULL the
 * file read is handed back too (the caller frees it with
 * drift_stancsv_free). */
int drift_points_from_draws(const char *path, const drift_model *m,
                            int with_warmup, double **vals, size_t *n,
                            struct drift_stancsv **csv, drift_err *e);

#endif
