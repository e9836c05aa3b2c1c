/* langtest.h: what the model language's tests share: opening a model
 * from text and data written to temporary files (with its error reports
 * captured), and the standard battery of derivative checks every model
 * must pass (gradient against central finite differences, per-row
 * gradients against differences of each row's term and against the
 * summed gradient, jvp against per-row gradients, and generalised linear
 * form against per-row gradients).  Not for production code. */
#ifndef DRIFT_LANGTEST_H
#define DRIFT_LANGTEST_H

#include <stddef.h>
#include <stdint.h>

#include <drift/model.h>

/* A model opened from text. */
typedef struct lt_model {
    drift_model m;
    int rc;             /* drift_lang_open's status */
    char *report;       /* everything reported (errors), NUL-terminated */
    char *summary;      /* drift_err's message */
    char *paths[9];     /* temporary files (model first) */
    size_t n_paths;
} lt_model;

/* Writes model_text to a .drift file and each data text to a file with
 * the suffix before it ("csv:..." or "json:..."), then opens the model
 * (sets NULL-terminated, may be NULL).  Never fails the test itself:
 * rc and report say what happened. */
void lt_open(lt_model *lm, const char *model_text, const char *const *data,
             char *const *sets, size_t n_sets);
/* As lt_open, and fails the test (showing the report) unless it opened. */
void lt_open_ok(lt_model *lm, const char *model_text,
                const char *const *data, char *const *sets, size_t n_sets);
void lt_close(lt_model *lm);

/* log p(theta) + sum of every row's term (workspace for all rows). */
double lt_log_density(const drift_model *m, void *ws, const double *theta);

/* The battery of derivative checks at `trials` random points drawn
 * N(0, sd^2) per coordinate (seeded); relative errors below 1e-6 for
 * finite differences, 1e-9 for identities. */
void lt_check_derivatives(const drift_model *m, uint64_t seed, int trials,
                          double sd);

#endif
