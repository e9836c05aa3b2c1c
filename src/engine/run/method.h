/* method.h: drift's methods other than sampling (optimize, laplace,
 * log_prob, ...) as kinds of run plan.  A method declares its options by
 * long name with the type and bounds of their values, the columns of its
 * rows, and a run over an opened model whose rows go to the plan's CSV
 * file and draws callback.  The plan (plan.h) parses a spec's options
 * with these tables, opens the model and data, checks and locks the
 * output and runs the method; the CLI's method commands are argv -> spec
 * -> plan, as drift sample is.  Not for sampling (run.h). */
#ifndef DRIFT_METHOD_H
#define DRIFT_METHOD_H

#include <stdint.h>
#include <stdio.h>

#include <drift/drift.h>
#include <drift/model.h>

#include "engine/stats/psis.h"

/* How an option's value is read into the method's argument struct. */
typedef enum drift_mopt_type {
    DRIFT_MOPT_SET,         /* flag: the int is set to 1 */
    DRIFT_MOPT_CLEAR,       /* flag: the int is set to 0 */
    DRIFT_MOPT_COUNT,       /* uint64_t in [1, max] */
    DRIFT_MOPT_UCOUNT,      /* unsigned in [1, max] (max 0: 10^9) */
    DRIFT_MOPT_BOOL,        /* int: 0 or 1 from 0, 1, false, true */
    DRIFT_MOPT_CUSTOM,      /* read by the option's set */
    DRIFT_MOPT_FILES,       /* drift_mfiles: files the method reads, the
                               option repeated (at most max) */
    DRIFT_MOPT_POSITIVE,    /* double, finite and > 0 */
    DRIFT_MOPT_FILE,        /* const char *: a file the method reads (the
                               output may not be it) */
    DRIFT_MOPT_CHOICE       /* const char *: one of choices */
} drift_mopt_type;

/* Most files an option of type FILES takes. */
#define DRIFT_MFILES_MAX 256

typedef struct drift_mfiles {
    const char *v[DRIFT_MFILES_MAX];
    size_t n;
} drift_mfiles;

typedef struct drift_mopt {
    const char *name;       /* long name without dashes: "tol-obj" */
    drift_mopt_type type;
    size_t offset;          /* of the field in the argument struct */
    const char *help;       /* "T  absolute change ... (default 1e-12)" */
    uint64_t max;           /* COUNT: at most this (0: 10^9) */
    const char *const *choices;     /* CHOICE: NULL-terminated */
    int (*set)(void *args, const char *value, drift_err *e);  /* CUSTOM */
} drift_mopt;

/* A method's run: what the plan opened and where its rows go. */
typedef struct drift_method_run {
    const drift_model *m;
    const char *model;              /* as given (header lines) */
    const char *const *data;        /* files, n_data of them */
    size_t n_data;
    uint64_t seed;                  /* given, or drawn by the plan */
    int seed_given;
    const char *out;                /* the output's name (NULL: stdout or
                                       none) */
    const char *const *inputs;      /* every file the run reads (data,
                                       model, the method's files) */
    size_t n_inputs;
    FILE *f;                        /* the CSV being written, or NULL */
    FILE *diag;                     /* notes and warnings: stderr */
    const char *who;                /* "drift optimize": messages' prefix */
    char *const *columns;           /* the rows' names (the method's
                                       columns callback) */
    size_t n_columns;
    drift_draw_fn on_draw;          /* NULL: none */
    void *on_draw_user;
    uint64_t rows;                  /* rows delivered so far */
    int keep;                       /* set by a run that failed after
                                       writing what the user should see
                                       (optimize's iteration limit): its
                                       file is put in place */
} drift_method_run;

typedef struct drift_method {
    const char *name;               /* "optimize" */
    const char *summary;            /* a line for drift --help */
    const char *synopsis, *about;   /* --help */
    const drift_mopt *opts;
    size_t n_opts;
    size_t args_size;
    const char *default_out;        /* NULL: stdout (the CLI) or none */
    const char *seed_help;          /* what the seed draws, for --help
                                       (NULL: the method draws nothing) */
    const char *out_help;           /* --help's line for out (NULL: the
                                       default name) */
    /* The method writes its own files, named from out (NULL: not given),
     * each checked by check_outputs against the run's inputs (in, n_in:
     * data, model and the method's files) before anything is opened; the
     * plan opens no file for it. */
    int own_outputs;
    int no_params_ok;               /* runs a model without parameters */
    int (*check_outputs)(const void *args, const char *out,
                         const char *const *in, size_t n_in, drift_err *e);
    void (*defaults)(void *args);
    /* Files read that no option of type FILE names (NULL: none), into in
     * (max): their count. */
    size_t (*inputs)(const void *args, const char **in, size_t max);
    /* The checks across options (NULL: none). */
    int (*check)(void *args, drift_err *e);
    /* The rows' column names for model m, appended with
     * drift_method_column (each run's first rows' names). */
    int (*columns)(const void *args, const drift_model *m,
                   char ***names, size_t *n, drift_err *e);
    /* The work: rows through drift_method_row.  Errors of the user's
     * input are DRIFT_EINVAL or DRIFT_EDATA; any other code is a run that
     * failed. */
    int (*run)(const void *args, drift_method_run *r, drift_err *e);
} drift_method;

/* The method named name, or NULL. */
const drift_method *drift_method_find(const char *name);
/* Every method, NULL-terminated. */
const drift_method *const *drift_method_all(void);

/* Reads value into args for option name of mt (its message names the
 * option as --NAME).  Options every method takes (out, seed, model-set,
 * data-set) are the plan's; this is for the method's own. */
int drift_method_set(const drift_method *mt, void *args, const char *name,
                     const char *value, drift_err *e);
/* The option of mt named name, or NULL. */
const drift_mopt *drift_method_opt(const drift_method *mt,
                                   const char *name);
/* The files mt's options given in args name (its FILE options), into
 * in (max entries, NULL entries skipped by the caller): their count. */
size_t drift_method_inputs(const drift_method *mt, const void *args,
                           const char **in, size_t max);

/* Appends a copy of name to *names. */
int drift_method_column(char ***names, size_t *n, const char *name,
                        drift_err *e);
/* The model's constrained outputs and generated quantities' names after
 * first (n_first fixed columns such as lp__). */
int drift_method_model_columns(const char *const *first, size_t n_first,
                               const drift_model *m, char ***names,
                               size_t *n, drift_err *e);

/* Checks path, a file the run writes beside out, as out was checked
 * (none of the run's inputs nor out itself, nothing but a regular file
 * at it): DRIFT_OK, or DRIFT_EINVAL with the message after what. */
int drift_method_check_file(const drift_method_run *r, const char *path,
                            const char *what, drift_err *e);
/* Ends a file the run wrote: removed when failed is set (DRIFT_OK: the
 * run's own error stands) or a write failed (that error, in e), else put
 * in place whole (DRIFT_OK or the error of doing so). */
struct drift_writer;
int drift_method_file_end(struct drift_writer *w, int failed, drift_err *e);

struct drift_logdensity;
/* theta's constrained values and generated quantities into out (the
 * model's n_out values, then its n_gen), the generated ones drawn from
 * seed: DRIFT_OK, or DRIFT_ENUMERIC with the model's message after
 * "generated quantities at draw K" (draw > 0), "... at the mode" (draw
 * 0) or "generated quantities" (draw < 0). */
int drift_method_values(const drift_method_run *r,
                        struct drift_logdensity *ld, const double *theta,
                        uint64_t seed, long long draw, double *out,
                        drift_err *e);
/* The seed of the generated quantities of a method's n-th value (n from
 * 1): the run's seed and n mixed, so that draws get unrelated streams. */
uint64_t drift_method_seed(uint64_t seed, uint64_t n);

/* The checks of draws from an approximation of the posterior (variational,
 * laplace): the Pareto k of their ratios log_p - log_g (psis.h), and how
 * far weighting by those ratios moves the parameters' means (k can be
 * small while the approximation sits off the posterior's centre). */
typedef struct drift_method_approx {
    double *lr;                 /* the draws' log ratios */
    size_t n, cap;
    drift_is_means means;       /* of the parameters' constrained values */
} drift_method_approx;

/* For draws draws of the model's n_out parameter values (k from the first
 * 10^6 of them): DRIFT_OK or DRIFT_ENOMEM. */
int drift_method_approx_init(drift_method_approx *c, size_t draws,
                             size_t n_out, drift_err *e);
/* A draw: its log density, its approximation's, its n_out values. */
void drift_method_approx_add(drift_method_approx *c, double log_p,
                             double log_g, const double *values);
/* The file's closing comments (Pareto k, the largest weighted shift of a
 * mean) and, on r->diag, a warning for each that says the draws are
 * unreliable, ending with what to do (advice).  *khat gets k (INFINITY
 * when under 10 draws); 1 when a warning was given, else 0. */
int drift_method_approx_report(drift_method_run *r, drift_method_approx *c,
                               const char *advice, double *khat);
void drift_method_approx_free(drift_method_approx *c);

/* The header's first lines (drift_version, model, model_file). */
void drift_method_header(drift_method_run *r);
/* The data files' and output's lines ("# data", "#   file = ..."). */
void drift_method_header_io(drift_method_run *r);
/* The column names' line, ending the header. */
void drift_method_header_names(drift_method_run *r);
/* One row of n_columns values: to the CSV (%.17g, NaN as nan) and the
 * callback. */
void drift_method_row(drift_method_run *r, const double *row);

#endif
