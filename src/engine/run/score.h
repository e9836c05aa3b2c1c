/* score.h: the score grad log p(theta | data) of a model at a point, over
 * all its rows and its prior (Jacobians included: the model's log
 * density is on the unconstrained scale), for the kernel Stein
 * discrepancy: the columns --save-gradients writes, and
 * `drift summary --ksd` recomputing them from the model and data.  Works
 * on the model ABI alone, so it serves a chain (its workspace) and a
 * reader of files (workspaces of its own) alike.  Not an oracle: nothing
 * here is counted against a budget. */
#ifndef DRIFT_SCORE_H
#define DRIFT_SCORE_H

#include <stddef.h>

#include <drift/model.h>

/* score (d values) = grad log p(theta) + sum_i grad l_i(theta) over the
 * model's N rows, in chunks of at most cap rows through ws (a workspace
 * of m for cap rows); tmp holds d values of scratch.  *lp (may be NULL)
 * gets log p(theta | data) up to a constant.  Returns DRIFT_OK,
 * DRIFT_ENUMERIC when a value is not finite (score and *lp then as
 * computed), or the model's error, with a message in e. */
int drift_score_at(const drift_model *m, void *ws, size_t cap,
                   const double *theta, double *score, double *tmp,
                   double *lp, drift_err *e);

/* The scores of n points (row-major n x d in theta, into scores), on up
 * to `threads` threads (each its own workspace; 0 or 1: this one).
 * Returns DRIFT_OK or the first failure, naming the point (1-based). */
int drift_score_points(const drift_model *m, const double *theta, size_t n,
                       double *scores, unsigned threads, drift_err *e);

/* 1 when m's first d output values are its unconstrained coordinates
 * (constrain is the identity on them: no constrained parameter, no
 * reordering), checked on three points; 0 otherwise or when out of
 * memory. */
int drift_score_coordinates_are_outputs(const drift_model *m);

#endif
