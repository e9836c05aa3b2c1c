/* mpirun.h: `drift sample` as one rank of a run across MPI ranks (issue
 * 19; engine/run/ranks.h): what the command does besides a one-process
 * run.  Its steps, in sample.c's order:
 *   cli_mpi_detect   before the options are read: started by mpirun?
 *   cli_mpi_plan     the options read: which chains this rank runs; the
 *                    guard's fork comes next, before any MPI call
 *   cli_mpi_capture  from there on, what the command says on stderr is
 *                    kept, to be said once, by rank 0, for all
 *   cli_mpi_gate1    before the data: join the job and check that every
 *                    rank runs the same drift, command, plugins and files
 *   cli_mpi_gate2    after the model and data: every rank opened its
 *                    share, and their models agree
 *   cli_mpi_report   after the run: the chains' lines, by rank 0
 *   cli_mpi_end      on every way out: a rank that failed before a gate
 *                    still meets the others there, so that none waits
 * Not for the run itself (engine/run/run.c). */
#ifndef DRIFT_CLI_MPIRUN_H
#define DRIFT_CLI_MPIRUN_H

#include <stdio.h>

#include "engine/data/table.h"
#include "engine/run/chain.h"
#include "engine/run/problem.h"
#include "engine/run/ranks.h"

typedef struct cli_mpi {
    int on;                 /* started by an MPI launcher */
    unsigned P, rank;       /* the job's size, this rank (from the
                               environment) */
    int quiet;              /* not rank 0: say nothing until a gate */
    int saved_fd;           /* stderr while it is silenced or captured */
    FILE *capture;          /* what stderr said since cli_mpi_capture */
    int inited;             /* joined the job (gate 1 reached) */
    int gated;              /* both gates passed */
    int over;               /* a gate failed: every rank leaves */
    char who[96];           /* "rank R on HOST" */
    drift_ranks_layout L;
    drift_ranks_group *group;
    drift_ranks_chan **chans;   /* L.count */
    drift_table_share share;
    drift_run_ranks run;
    uint64_t data_print;    /* gate 1's print of the data files */
    char header[3][96];     /* lines for the draws files' headers */
} cli_mpi;

/* Whether an MPI launcher started this process (MPI or not in this
 * build); rank 0 aside, stderr is silenced until cli_mpi_plan. */
void cli_mpi_detect(cli_mpi *m);

/* With the options read: refuses what a run across ranks cannot do and
 * plans the chains (K chains, R ranks per chain: 0 for the default).
 * Returns 0, or an exit status (the message said by rank 0). */
int cli_mpi_plan(cli_mpi *m, unsigned K, unsigned R, int checkpoint,
                 int resume);

/* Keeps what stderr says from now on (in the guard's child). */
void cli_mpi_capture(cli_mpi *m);

/* Joins the job and checks every rank against rank 0: the drift
 * executable, the command (argv after "sample"), the sampler plugin and
 * the model file, the data files (size, first and last bytes), and that
 * each rank got this far (status; its message is what it said on
 * stderr).  *seed gets rank 0's when have_seed is 0.  Makes the rank
 * groups and the chains' channels.  Returns 0 or the exit status every
 * rank ends with (the message said by rank 0). */
int cli_mpi_gate1(cli_mpi *m, int status, int argc, char **argv,
                  const char *sampler_path, const char *model_path,
                  const char *const *data, uint64_t *seed, int have_seed);

/* After the model and data: every rank's status (and stderr), the
 * model's shape and rows against rank 0's.  Fills m->run for the run's
 * configuration.  Returns 0 or the exit status. */
int cli_mpi_gate2(cli_mpi *m, int status, const drift_problem *prob);

/* After the run: rank 0 prints a line per chain of the job (the groups'
 * writers send them) through print(user, results, K); returns the exit
 * status every rank ends with (the largest). */
int cli_mpi_report(cli_mpi *m, const drift_chain_result *mine, int rc,
                   void (*print)(void *user, const drift_chain_result *res,
                                 unsigned K),
                   void *user);

/* On the way out with status rc: a rank that failed before a gate meets
 * the others there (with rc); then leaves the job.  Returns the exit
 * status. */
int cli_mpi_end(cli_mpi *m, int rc);

#endif
