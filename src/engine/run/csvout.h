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

#include <stdio.h>

#include "chain.h"

/* Prepares chain c's layout (the columns CmdStanPy needs that the sampler
 * does not write, the step-size column) and, when the chain has a file,
 * writes the header and the column row.  Call after the sampler's init.
 * Returns DRIFT_OK or DRIFT_ENOMEM (recorded on the chain). */
int drift_csvout_begin(drift_chain *c);

/* Frees c->out (NULL: nothing). */
void drift_csvout_free(struct drift_csvout *o);

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

/* Completes the file of a finished chain: keeps only the first warm and
 * samp offered draws (at most its own counts; the draws beyond them are
 * dropped and a note says how many), writes the trailer, and writes
 * num_samples, num_warmup, save_warmup and engaged into their reserved
 * fields; *dropped gets the rows dropped.  The caller then commits w.
 * Returns DRIFT_OK or DRIFT_EIO. */
int drift_csvout_close(struct drift_csvout *o, drift_writer *w,
                       uint64_t warm, uint64_t samp, uint64_t *dropped,
                       drift_err *e);

#endif
