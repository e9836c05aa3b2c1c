/* csvout.h: the layout of a chain's draws file as CmdStan writes it, so
 * that rstan, cmdstanr, CmdStanPy, ArviZ, posterior and bayesplot read it
 * (doc/stan-csv.md): the configuration header with drift's own keys
 * beside CmdStan's, the column row, the adaptation block, and the trailer
 * (notes, trajectory moments, elapsed times).  The counts num_samples and
 * num_warmup are known only when a run ends; the header reserves a
 * fixed-width field for each and drift_csvout_close writes them in place
 * (the file is a temporary one until it is committed), after bringing the
 * file to the draw counts of the run's other chains.  Not for the rows
 * themselves (emit.c) nor for when a chain ends (run.c). */
#ifndef DRIFT_CSVOUT_H
#define DRIFT_CSVOUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "chain.h"

/* Width of the reserved fields num_samples and num_warmup: any uint64_t
 * fits, and the readers strip the spaces. */
#define DRIFT_CSVOUT_COUNT_WIDTH 20

/* Where a draws file's parts lie, as written so far (offsets in bytes, -1
 * where not yet written), and what another process needs to complete the
 * file without the chain (guard.c): the run's settings, a step size and
 * metric kind for an adaptation block, the times.  drift_csvout_begin and
 * drift_csvout_adaptation keep c->layout up to date when it is set. */
typedef struct drift_csvout_layout {
    int64_t at_num_samples, at_num_warmup, at_save_warmup, at_engaged;
    int64_t off_rows;      /* the first row, after the column row */
    int64_t off_warm_end;  /* where the adaptation block starts */
    int64_t off_samp;      /* the first row after the block */
    uint64_t thin;         /* rows per offered draw */
    int save_warmup, engaged;
    int metric_kind;       /* drift_metric_kind of the chain */
    size_t d;              /* unconstrained dimension */
    double step;           /* the block's step size if the parent writes it */
    uint64_t warmup;       /* warmup iterations asked for */
    double t_start;        /* drift_now() when the chain started */
    double t_warm_end;     /* drift_now() at the end of warmup, or -1 */
} drift_csvout_layout;

/* Prepares chain c's layout (the columns CmdStanPy needs that the sampler
 * does not write, the step-size column) and, when the chain has a file,
 * writes the header and the column row.  Call after the sampler's init.
 * Returns DRIFT_OK or DRIFT_ENOMEM (recorded on the chain). */
int drift_csvout_begin(drift_chain *c);

/* Frees c->out (NULL: nothing). */
void drift_csvout_free(struct drift_csvout *o);

/* The layout's part of a checkpoint (checkpoint.c): saved, or restored
 * in place of drift_csvout_begin (the header is among the rows that the
 * checkpoint gives back). */
int drift_csvout_ckpt(drift_chain *c);

/* Writes, after the sampler's columns of a row, the values of the columns
 * the engine adds for CmdStanPy (treedepth__ 0 and divergent__ 0 for a
 * sampler that has no such column): ",0" each. */
void drift_csvout_compat_values(const drift_chain *c, FILE *f);

/* Writes the adaptation block ("# Adaptation terminated", "# Step size =
 * h", the inverse metric) once: before the first draw after warmup, or at
 * the end of a chain that wrote none.  The step size is the one the
 * sampler gave the set_adapted service; without one, the stepsize__
 * column of diag (the sampler's diagnostic values of that first draw, may
 * be NULL), then the sampler's step-size hyperparameter (h or eta), then
 * 1.  The metric is what the metric_get service returns. */
void drift_csvout_adaptation(drift_chain *c, const double *diag);

/* How a chain ended, for its trailer. */
typedef struct drift_csvout_end {
    double warmup_seconds, sampling_seconds;
    const char *note;           /* a "# drift: ..." line's text (may be
                                   NULL) */
    const double *traj_mean;    /* continuous samplers: the trajectory's */
    const double *traj_var;     /* exact moments (d each), or NULL */
    double traj_time;
} drift_csvout_end;

/* Ends chain c's part of its file: the adaptation block if not yet
 * written, and the trailer (note, trajectory moments, elapsed times) kept
 * aside for drift_csvout_close.  c->out then holds all the file needs
 * after the chain is released. */
void drift_csvout_finish(drift_chain *c, const drift_csvout_end *end);

/* The draws a chain's file holds, as the header counts them: draws
 * offered before --thin in warmup (0 without --save-warmup) and after. */
uint64_t drift_csvout_warm_count(const struct drift_csvout *o);
uint64_t drift_csvout_samp_count(const struct drift_csvout *o);

/* The warmup iterations a chain ran, which the header gives as
 * num_warmup without --save-warmup; common_warm_iters lowers it to the
 * run's common count n (chains interrupted in warmup ran different
 * counts, and rstan, CmdStanPy, ArviZ and posterior refuse files whose
 * num_warmup differ), and drift_csvout_close then notes the chain's own. */
uint64_t drift_csvout_warm_iters(const struct drift_csvout *o);
void drift_csvout_common_warm_iters(struct drift_csvout *o, uint64_t n);

/* Completes the file of a finished chain: keeps only the first warm and
 * samp offered draws (at most its own counts; the draws beyond them are
 * dropped and a note says how many), writes the trailer, and writes
 * num_samples, num_warmup, save_warmup and engaged into their reserved
 * fields; *dropped gets the rows dropped.  The caller then commits w.
 * Returns DRIFT_OK or DRIFT_EIO. */
int drift_csvout_close(struct drift_csvout *o, drift_writer *w,
                       uint64_t warm, uint64_t samp, uint64_t *dropped,
                       drift_err *e);

/* The pieces of a file, for a writer that completes a file without its
 * chain (guard.c): the adaptation block with step size `step` and metric
 * `kind` (a drift_metric_kind) of dimension d, m its inverse (d or d * d
 * values; NULL: the identity); the Elapsed Time trailer; and v written
 * into a reserved field of `width` characters at `at` (-1: none) by
 * pwrite.  drift_csvout_patch returns 0 or -1 (errno set). */
void drift_csvout_write_block(FILE *f, double step, int kind, size_t d,
                              const double *m);
void drift_csvout_write_elapsed(FILE *f, double warmup, double sampling);
int drift_csvout_patch(int fd, off_t at, uint64_t v, int width);

/* The file beside a chain's draws file that holds the draws with their
 * generated quantities when these are computed on some draws only
 * (--generated-every K > 1): "fit_1.csv" -> "fit_1_generated.csv". */
void drift_csvout_generated_path(const char *chain_path, char *buf,
                                 size_t cap);

/* Moves the generated quantities out of the committed draws file path:
 * the count columns from the one named first_name, which hold values on
 * every every-th row of each phase and NaN on the others (a NaN that
 * bayesplot refuses, and rstan warns about column by column).  The draws
 * file keeps its other columns on every row; the generated file (above)
 * gets every every-th row of each phase whole, with a header whose thin
 * and saved warmup count are those rows', so both are Stan CSV files
 * that readers take whole.  Both are replaced atomically.  Returns
 * DRIFT_OK or DRIFT_EIO (the draws file is then left as it was). */
int drift_csvout_split_generated(const char *path, const char *first_name,
                                 size_t count, uint64_t every, drift_err *e);

#endif
