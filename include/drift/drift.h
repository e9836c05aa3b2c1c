/* SPDX-License-Identifier: MIT (drift; see LICENSE) */
/* drift.h: libdrift's public API for running drift from a program: a run
 * asked for as plain data (a spec), made into a checked plan, run, its
 * draws delivered to a callback and/or written as Stan CSV files.  What
 * `drift sample` does, without its command line.  Not for writing plugins
 * (sampler.h, model.h).
 *
 * Build with `pkg-config --cflags --libs drift`.  Every type here but the
 * spec and its parts is opaque; a program checks at run time that the
 * library it loaded has the API it was compiled against:
 *     if (drift_api_version() != DRIFT_API_VERSION) ...                  */
#ifndef DRIFT_DRIFT_H
#define DRIFT_DRIFT_H

#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API: raised when a declaration here changes in a
 * way a compiled program could notice. */
#define DRIFT_API_VERSION 2

/* The loaded library's DRIFT_API_VERSION, and its release ("0.1.0"). */
unsigned drift_api_version(void);
const char *drift_version(void);

/* One option of the run, named as drift sample's long option without its
 * dashes ({"chains", "4"}, {"set", "h=1e-3"}); value NULL for a flag
 * ({"save-warmup", NULL}).  Names may repeat where drift sample's may
 * (set, model-set, data-set). */
typedef struct drift_option {
    const char *name;
    const char *value;
} drift_option;

/* A column of in-memory rows: row r's value at values[r * stride] (stride
 * in elements; 0: 1, the column contiguous) for r below the spec's n_rows,
 * typed by type.  Column j of a C-ordered N x D array X is {values =
 * X + j, stride = D}.  A column named "x.1" is element 1 of a row vector
 * x, as in a CSV file's header.
 *
 * drift reads rows from row-major tables of doubles.  The plan borrows a
 * caller's array as such a table, copying nothing, when columns are
 * DRIFT_COLUMN_DOUBLE columns of one array in order: column k of them at
 * the first's values + k, all with one stride S >= their number (the
 * columns of a C-ordered array with S columns, or its first ones).  For
 * a .drift or .stan model that is judged a variable at a time: the
 * consecutive columns of one name before the dot (y; x.1 ... x.D); a
 * variable whose columns are not all consecutive is copied.  A C model
 * reads one table: borrowed when all the columns are one such array.
 * The columns not borrowed are copied, read in place through their
 * strides, into one table of the plan's own (n_rows doubles each), once,
 * when the plan is made.  A borrowed array is read as the run reads it:
 * it must not change until the plan is freed. */
enum {
    DRIFT_COLUMN_DOUBLE = 0,    /* const double * */
    DRIFT_COLUMN_INT = 1,       /* const int * */
    DRIFT_COLUMN_INT64 = 2      /* const int64_t * */
};
typedef struct drift_column {
    const char *name;
    int type;                   /* DRIFT_COLUMN_* */
    const void *values;
    size_t stride;              /* elements between rows (0: 1) */
} drift_column;

/* A row of draws: chain chain_id's row of n values, in the order of
 * drift_plan_column_name (lp__, grads__, the sampler's columns, the
 * model's values), flags DRIFT_DRAW_*.  Called from the chains' threads,
 * one call at a time; warmup rows come too when the option save-warmup is
 * given, flagged DRIFT_DRAW_WARMUP. */
#define DRIFT_DRAW_WARMUP 1u    /* a row drawn during warmup */
typedef void (*drift_draw_fn)(void *user, unsigned chain_id, unsigned flags,
                              const double *values, size_t n);

/* A line the run would print on standard error, without its newline:
 * progress ("Chain 1 Iteration:  200 / 2000 [ 10%]  (Warmup)", a line
 * per tenth of each chain's run, as drift sample prints when stderr is
 * not a terminal), a note ("drift: ...") or a warning ("drift: warning:
 * ..."), by kind.  Called one line at a time, from whichever thread wrote
 * it; nothing of the run is printed then.  The engine's messages are the
 * process's: while a plan with a message callback is made or run, those
 * of every run in the process go to it. */
enum {
    DRIFT_MESSAGE_PROGRESS = 0,
    DRIFT_MESSAGE_NOTE = 1,
    DRIFT_MESSAGE_WARNING = 2
};
typedef void (*drift_message_fn)(void *user, int kind, const char *line);

/* A run asked for.  Every pointer is borrowed: what it points to must
 * outlive the plan made from it.  Zero is the default of every field. */
typedef struct drift_spec {
    const char *method;             /* "sample" (NULL: "sample"),
                                       "optimize", "laplace" or "log_prob":
                                       options by the command's long
                                       names (drift optimize --help), rows
                                       to out and the callback (chain 1) */
    const char *model;              /* a model file (.drift, .stan), or a C
                                       model plugin's name or path */
    const char *const *data;        /* data files */
    size_t n_data;
    const drift_column *columns;    /* rows in memory, read as a CSV
                                       file's would be (a .drift model's
                                       rows, or a C model's data) */
    size_t n_columns;
    size_t n_rows;
    const char *sampler;            /* name or path (NULL: nuts) */
    const drift_option *options;
    size_t n_options;
    drift_draw_fn on_draw;          /* NULL: none */
    void *on_draw_user;
    drift_message_fn on_message;    /* NULL: lines to stderr */
    void *on_message_user;
} drift_spec;

/* Whether drift sample takes option name with value (as the spec would
 * carry it): DRIFT_OK, or DRIFT_EINVAL with a message naming both.  Says
 * nothing of how options combine (drift_plan_new does). */
int drift_spec_check_option(const char *name, const char *value,
                            drift_err *e);

typedef struct drift_plan drift_plan;

/* Makes spec into a plan: applies drift sample's defaults (nuts, 4
 * chains, 1000 warmup iterations then 1000 draws, its warmup, thinning
 * and init rules, the engine's plan for minibatch samplers), refuses what
 * cannot run, and opens the model, the data and the sampler.  Draws go to
 * Stan CSV files as drift sample writes them (option out; default
 * output.csv), but with on_draw and no out option to the callback alone.
 * Without a seed option the seed is drawn from the clock.  The options
 * of the drift command alone are refused: checkpoint-every (drift sample
 * --resume continues such a run) and ranks-per-chain (mpirun).  Returns
 * DRIFT_OK with *out a plan to run and free, or an error with its message
 * in e (*out NULL). */
int drift_plan_new(const drift_spec *spec, drift_plan **out, drift_err *e);

/* The columns of the rows the run delivers. */
size_t drift_plan_n_columns(const drift_plan *p);
const char *drift_plan_column_name(const drift_plan *p, size_t k);
/* The chains the plan runs, and the first one's id (chain ids follow it). */
unsigned drift_plan_chains(const drift_plan *p);
unsigned drift_plan_first_chain_id(const drift_plan *p);

/* How a plan runs. */
enum {
    /* the chains run in threads of the calling process */
    DRIFT_LAUNCH_IN_PROCESS = 0,
    /* the chains run in a child process watched from this one, so that a
     * sampler that crashes or hangs loses no draws written to files; the
     * callbacks are not called in this process (refused with
     * on_draw or on_message) */
    DRIFT_LAUNCH_GUARDED = 1
};

/* Runs the plan (once).  Returns DRIFT_OK when every chain ran to its
 * end, DRIFT_ESTOP when drift_request_stop ended it (the draws so far
 * delivered and written), or the first failure with its message in e. */
int drift_plan_run(drift_plan *p, int launcher, drift_err *e);

/* The draws chain k (0-based) kept, after the run. */
uint64_t drift_plan_chain_draws(const drift_plan *p, unsigned k);

void drift_plan_free(drift_plan *p);

/* Asks every running chain to stop after its current step
 * (async-signal-safe: a signal handler may call it).  A stop asked before
 * drift_plan_run begins does not carry into that run. */
void drift_request_stop(void);

#ifdef __cplusplus
}
#endif

#endif
