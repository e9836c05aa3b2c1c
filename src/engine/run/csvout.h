/* csvout.h: the layout of a chain's draws file as CmdStan writes it, so
 * that rstan, cmdstanr, CmdStanPy, ArviZ, posterior and bayesplot read it
 * (doc/stan-csv.md): the configuration header with drift's own keys
 * beside CmdStan's, the column row, the adaptation block, and the trailer
 * (notes, trajectory moments, elapsed times).  The counts num_samples and
 * num_warmup are known only when a chain ends; the header reserves a
 * fixed-width field for each and drift_csvout_finish writes them in
 * place (the file is a temporary one until it is committed).  Not for the
 * rows themselves (emit.c) nor for when a chain ends (run.c). */
#ifndef DRIFT_CSVOUT_H
#define DRIFT_CSVOUT_H

#include <stdio.h>

#include "chain.h"

/* Prepares chain c's layout (the columns CmdStanPy needs that the sampler
 * does not write, the step-size column) and, when the chain has a file,
 * writes the header and the column row.  Call after the sampler's init.
 * Returns DRIFT_OK or DRIFT_ENOMEM (recorded on the chain). */
int drift_csvout_begin(drift_chain *c);

/* Frees what drift_csvout_begin and drift_csvout_set_adapted allocated. */
void drift_csvout_free(drift_chain *c);

/* Writes, after the sampler's columns of a row, the values of the columns
 * the engine adds for CmdStanPy (treedepth__ 0 and divergent__ 0 for a
 * sampler that has no such column): ",0" each. */
void drift_csvout_compat_values(const drift_chain *c, FILE *f);

/* The adapted step size and inverse metric of the chain, for the
 * adaptation block (the ABI-2 set_adapted service calls this with what
 * metric_get returns).  metric_kind 0 unit (inv_metric unused), 1
 * diagonal (n == d values), 2 dense (n == d*d, row-major).  Copies
 * inv_metric.  Returns DRIFT_OK or DRIFT_ENOMEM. */
int drift_csvout_set_adapted(drift_chain *c, double stepsize,
                             int metric_kind, const double *inv_metric,
                             size_t n);

/* Writes the adaptation block ("# Adaptation terminated", "# Step size =
 * h", the inverse metric) once: before the first draw after warmup, or at
 * the end of a chain that wrote none.  diag is the sampler's diagnostic
 * values of that first draw (may be NULL): without a step size from
 * drift_csvout_set_adapted, its stepsize__ column is used, then the
 * sampler's step-size hyperparameter (h or eta), then 1. */
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

/* Completes chain c's file: the adaptation block if not yet written, the
 * note, the trajectory moments, the elapsed times, and num_samples,
 * num_warmup, save_warmup and engaged written into their reserved fields.
 * Write errors show when the file is committed (base/writer.c). */
void drift_csvout_finish(drift_chain *c, const drift_csvout_end *end);

/* The header's num_warmup and num_samples for chain c as it stands: with
 * --save-warmup the warmup draws offered (else the warmup iterations run),
 * and the draws offered after warmup. */
uint64_t drift_csvout_num_warmup(const drift_chain *c);
uint64_t drift_csvout_num_samples(const drift_chain *c);

#endif
