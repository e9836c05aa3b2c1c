/* heldout.h: posterior-predictive metrics on held-out rows (--test FILE).
 * The test rows get their own drift_model, built by the training model's
 * plugin over the test file and sharing its parameter vector; every draw a
 * chain keeps after warmup is evaluated on every test row, and at chosen
 * points (--eval-every P data passes, and at the end) one row of metrics
 * over the draws so far goes to the chain's metrics CSV:
 *
 *   lpd       (1/n) sum_i log( (1/S) sum_s p(y_i | theta_s) ), the mean
 *             log pointwise predictive density (per-row terms from the
 *             model's log_lik, which must then be normalised densities)
 *   accuracy  BINARY: mean_s P(y=1|theta_s) > 1/2 matches y_i;
 *             CATEGORICAL: the class of largest mean probability (the
 *             first on ties) matches y_i
 *   mse       REAL: mean over rows of (mean_s E[y|theta_s] - y_i)^2
 *
 * Not for the training data's oracles (oracle.c). */
#ifndef DRIFT_HELDOUT_H
#define DRIFT_HELDOUT_H

#include <stdint.h>

#include <drift/model.h>

#include "engine/data/table.h"
#include "problem.h"

/* The test rows of a run: their table and the model over them. */
typedef struct drift_heldout_set {
    drift_table *table;
    drift_model model;
    int have_model;
    char *path;
} drift_heldout_set;

/* Reads path (same rows schema as the training data) and builds the test
 * model with train's plugin and options; checks that it has the same
 * parameters (dimension and names) as train's model.  On failure s needs
 * only drift_heldout_set_close. */
int drift_heldout_set_open(drift_heldout_set *s, const drift_problem *train,
                           const char *path, drift_err *e);
void drift_heldout_set_close(drift_heldout_set *s);

/* Path of a chain's metrics file beside its draws file chain_path:
 * "stem_metrics.ext" ("out.csv" -> "out_metrics.csv", "out_2.csv" ->
 * "out_2_metrics.csv"). */
void drift_heldout_path(const char *chain_path, char *buf, size_t cap);

/* One chain's evaluator. */
typedef struct drift_heldout drift_heldout;

/* An evaluator of test model m for chain chain_id; writes its metrics to
 * metrics_path (NULL: keeps them in memory only) under a temporary name
 * until drift_heldout_close commits it.  test_path is recorded in the
 * file's header. */
int drift_heldout_new(drift_heldout **out, const drift_model *m,
                      const char *test_path, const char *metrics_path,
                      unsigned chain_id, drift_err *e);

/* Adds one draw (unconstrained theta) to the running sums.  Fails with a
 * message naming the test row when the model fails or a term is NaN or
 * +inf. */
int drift_heldout_add(drift_heldout *h, const double *theta, drift_err *e);

/* The metrics over the draws so far: lpd and, by outcome kind, accuracy
 * or mse (NaN when the model has no outcome); *draws gets S.  With S == 0
 * every metric is NaN. */
void drift_heldout_metrics(const drift_heldout *h, double *lpd,
                           double *second, uint64_t *draws);

/* Appends a metrics row (passes, seconds, iteration, draws, metrics). */
int drift_heldout_write(drift_heldout *h, double passes, double seconds,
                        uint64_t iteration, drift_err *e);

/* Commits the metrics file (commit != 0) or removes it, and frees h. */
int drift_heldout_close(drift_heldout *h, int commit, drift_err *e);

#endif
