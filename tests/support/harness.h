/* harness.h: what drift's tests share: loading the build tree's plugins,
 * writing small CSV files, running chains in process with draws kept in
 * memory, and the statistics the statistical tests need (means,
 * covariances, effective sample sizes) computed independently of drift's
 * own summary code.  Not for production code. */
#ifndef DRIFT_TEST_HARNESS_H
#define DRIFT_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <setjmp.h>
#include <cmocka.h>

#include <drift/drift.h>

#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "engine/run/oracle.h"
#include "engine/run/run.h"

/* A registry of the plugins under test (DRIFT_PLUGIN_DIR, set by make
 * check) plus the test plugins' directory; fails the test if empty. */
drift_registry *th_registry(void);

/* Writes a CSV file (header names[cols], rows x cols values) to a fresh
 * temporary path, returned (caller frees and unlinks). */
char *th_write_csv(const char *const *names, size_t cols,
                   const double *values, size_t rows);
/* Writes text to a fresh temporary file; returns its path. */
char *th_write_text(const char *text, const char *suffix);

/* The conjugate Gaussian of the gauss test plugin at its defaults (sigma
 * 1, tau 10, mu0 0): TH_GAUSS_N rows y_i ~ N((1, -2), I) from a fixed seed,
 * written as CSV (y.1, y.2) to a fresh temporary path, returned (caller
 * frees and unlinks); t gets the posterior N(m, I / a), a = 1/100 + N,
 * and each column's mean squared deviation s2y. */
enum { TH_GAUSS_N = 200, TH_GAUSS_D = 2 };
typedef struct th_gauss {
    double m[TH_GAUSS_D], s2y[TH_GAUSS_D], a;
} th_gauss;
char *th_gauss_data(th_gauss *t);

/* A problem (model over data) opened from the registry. */
typedef struct th_problem {
    drift_registry *reg;
    drift_problem p;
} th_problem;
void th_open(th_problem *tp, const char *model, const char *data_path,
             char *const *model_set, size_t n_model_set);
void th_close(th_problem *tp);

/* Opening model over a CSV file holding text must fail with a message
 * naming the file and containing needle. */
void th_expect_model_refusal(const char *model, const char *text,
                             const char *needle);

/* Draws kept in memory: rows of (lp__, grads__, sampler columns, outputs)
 * per chain. */
typedef struct th_draws {
    size_t n, cols, cap;
    double *v;
} th_draws;

/* A run as drift sample's options say it: th_sample gives each field
 * that an option says as that option (a zero warmup as --warmup 0, no
 * thin as --thin 1, init_mode as --init, gradient as --gradient, since
 * the command's defaults differ), the rest (init_values, traj,
 * parallel, row_hook, unplanned) as the plan's hooks. */
typedef struct th_run {
    const char *sampler;
    char *const *set;
    size_t n_set;
    size_t batch;
    drift_access access;
    uint64_t iters, warmup, thin, seed;
    double passes, grad_noise, thin_time;
    unsigned chains;
    const char *out_path;
    int init_mode;                  /* DRIFT_INIT_* */
    double init_radius;
    const double *init_values;
    unsigned first_chain_id;        /* 0: 1 */
    const char *test_path;          /* --test (NULL: none) */
    double eval_every;
    int save_warmup;
    size_t max_memory;              /* --max-memory (0: none) */
    /* Continuous samplers: rows are segments instead of draws. */
    int emit_segments;
    /* When not NULL, chain k's trajectory moments go to traj[k] (chains
     * entries; time 0 when the chain reported none). */
    struct th_traj *traj;
    unsigned parallel;              /* chains at once (0: the cores) */
    const unsigned char *init_given;/* DRIFT_INIT_VALUES: which given */
    int warmup_only;                /* --iter 0 */
    int gradient;                   /* DRIFT_GRADIENT_* (--gradient) */
    int save_gradients;             /* --save-gradients */
    unsigned threads;               /* --threads (0: not given) */
    /* Called with the chain id of every row written, before it is
     * collected (NULL: none). */
    void (*row_hook)(void *user, unsigned chain_id);
    void *row_hook_user;
    /* Run as each rank of a run across MPI ranks runs it, without the
     * engine's plan for minibatch samplers: a step size left to the
     * engine is chosen by the step-size search (tune.h), one given is not
     * checked.  For the tests of that search. */
    int unplanned;
} th_run;

/* A continuous trajectory's exact time averages after warmup, on the
 * unconstrained scale (what the engine writes as the footer). */
typedef struct th_traj {
    double time;
    size_t d;
    double mean[64], var[64];
} th_traj;

/* Runs r on tp through the plan users' runs take (drift_plan_new_internal:
 * drift sample's defaults, checks and minibatch plan, then
 * drift_plan_run in process); draws of chain k (0-based) go to out[k]
 * (chains entries; out may be NULL).  Returns the plan's refusal or the
 * run's status; results, when not NULL, get the per-chain outcomes (on a
 * refusal, every chain's message is the refusal's). */
int th_sample(th_problem *tp, const th_run *r, th_draws *out,
              drift_chain_result *results);
void th_draws_free(th_draws *d);

/* Chain 1 of the plan th_sample would make of r, set up as drift_run
 * sets up its chains (streams, workspaces, sampler state, the initial
 * point into theta), for a test that calls the engine's services or the
 * sampler's functions on it directly; the rows it writes, if any, to
 * rows (NULL: none).  Fails the test when the plan refuses r. */
typedef struct th_chain {
    struct drift_plan *plan;
    drift_chain c;
    const drift_run_config *cfg;    /* the plan's */
    struct th_chain_opts *opts;     /* the plan's options (borrowed by
                                       it) */
} th_chain;
void th_chain_open(th_chain *tc, th_problem *tp, const th_run *r,
                   drift_draw_fn rows, void *rows_user, double *theta);
void th_chain_close(th_chain *tc);

/* Column index of an output name in draws of a run of sampler with
 * n_sampler_cols diagnostic columns: 2 + n_sampler_cols + k. */
double th_mean(const th_draws *d, size_t col, size_t from);
double th_var(const th_draws *d, size_t col, size_t from);
double th_cov(const th_draws *d, size_t a, size_t b, size_t from);
/* Effective sample size of a column (Geyer's initial monotone sequence). */
double th_ess(const th_draws *d, size_t col, size_t from);

/* Kolmogorov-Smirnov statistic of x[n] against cdf. */
double th_ks(double *x, size_t n, double (*cdf)(double, void *), void *arg);

/* ---- the drift command, as users run it ---- */

/* What a run of the drift binary (DRIFT_BIN) left: exit status (128 +
 * the signal when killed), standard output and standard error. */
typedef struct th_cli {
    int status;
    char *out, *err;
} th_cli;

/* Starts drift with args (NULL-terminated), its standard output to fd_out
 * (-1: /dev/null) and standard error to fd_err; returns its pid. */
pid_t th_cli_spawn(const char *const *args, int fd_out, int fd_err);

/* Runs drift with args (NULL-terminated), capturing both streams. */
th_cli th_cli_run(const char *const *args);
void th_cli_free(th_cli *r);

/* A whole file as a string (NULL when it cannot be read); caller frees. */
char *th_slurp(const char *path);

/* A Stan CSV file read whole (the test fails with the reader's message
 * when it cannot be); free with drift_stancsv_free.  th_csv_value: row
 * r's value of the column name (the test fails when there is none). */
struct drift_stancsv;
struct drift_stancsv *th_csv_read(const char *path);
double th_csv_value(const struct drift_stancsv *f, const char *name,
                    size_t r);

/* Standard normal CDF. */
double th_pnorm(double x);

#endif
