/* ranks.h: one run over several processes, the ranks mpirun starts.
 * The only view the engine has of MPI: ranks_mpi.c
 * implements it over MPI when configure found it, ranks_none.c (built
 * otherwise) says this drift has none.  Everything ranks exchange goes
 * through here: the layout of chains over rank groups, the row counts of
 * the data shares, the start-up check, the sums behind the oracles and the
 * agreements on failures and stops that keep every rank of a chain on the
 * same path.  Not for what is summed (shard.c) nor for the run (run.c). */
#ifndef DRIFT_RANKS_H
#define DRIFT_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

/* ---- the process ---------------------------------------------------- */

/* 1 when this drift was built with MPI (configure --with-mpi). */
int drift_ranks_built(void);

/* 1 when an MPI launcher (mpirun, mpiexec, srun) started this process,
 * with the job's size and this process's rank read from the environment
 * before any MPI call (so that a process may fork before MPI_Init);
 * DRIFT_MPI=0 in the environment says 0 whatever the launcher. */
int drift_ranks_launched(unsigned *size, unsigned *rank);

/* Joins the job (MPI_Init_thread, asking for MPI_THREAD_MULTIPLE) and
 * learns every rank's host name.  Call once, before anything below. */
int drift_ranks_init(drift_err *e);

/* Leaves the job: MPI_Finalize when the job is whole, nothing when a
 * failure abandoned it (mpirun then ends every process). */
void drift_ranks_finalize(void);

/* The job's ranks and this one's (0 and 1 before init). */
unsigned drift_ranks_size(void);
unsigned drift_ranks_rank(void);

/* "rank R on HOST", for messages about rank r of the job. */
void drift_ranks_who(unsigned r, char *buf, size_t cap);

/* The ranks of the job on this rank's node (itself included; 1 before
 * init), which share its processor cores. */
unsigned drift_ranks_node_size(void);

/* How many chains of this process may call into MPI at once: 0 when only
 * the thread that called init may (MPI_THREAD_FUNNELED), 1 when any one
 * thread at a time (SERIALIZED), else as many as there are
 * (MULTIPLE). */
unsigned drift_ranks_threads(void);

/* ---- the layout: which ranks run which chains over which rows -------- */

typedef struct drift_ranks_layout {
    unsigned P;         /* ranks in the job */
    unsigned rank;      /* this one */
    unsigned R;         /* ranks per group: a group runs its chains over R
                           shares of the rows, one share per rank */
    unsigned G;         /* groups, P / R */
    unsigned group;     /* this rank's group, rank / R */
    unsigned grank;     /* its place in the group and its share, rank % R;
                           0 writes the group's files */
    unsigned K;         /* chains in the run */
    unsigned first;     /* the group's chains: indices first .. first +
                           count - 1 of the run's 0 .. K-1 */
    unsigned count;
} drift_ranks_layout;

/* Plans P ranks for K chains with R ranks per chain group (R = 0: P /
 * gcd(K, P), so that every group runs the same number of chains, over
 * as many shares of the rows as it has ranks: --chains 4 on 8 ranks is 4
 * groups of 2).  Group g runs chains floor(g K / G) .. floor((g+1) K / G)
 * - 1.  Pure arithmetic, for this rank: fails (e says why) when R does
 * not divide P or leaves a group without a chain. */
int drift_ranks_plan(unsigned P, unsigned rank, unsigned K, unsigned R,
                     drift_ranks_layout *L, drift_err *e);

/* ---- the job as a whole (start-up and end) ---------------------------- */

/* Rank 0's n values to every rank. */
int drift_ranks_bcast_u64(uint64_t *v, size_t n, drift_err *e);

/* What a rank brings to the start-up check. */
typedef struct drift_ranks_print {
    int32_t status;         /* 0, or the exit status of a rank that cannot
                               run */
    int32_t reserved;
    uint64_t build;         /* the drift executable's bytes */
    uint64_t command;       /* the options after "sample" */
    uint64_t plugin;        /* the sampler plugin and model (file bytes) */
    uint64_t model;         /* the model's shape: dimension, names */
    uint64_t data;          /* the data's header, size, first and last
                               bytes, and the rows of the group */
    uint64_t n_gen;         /* generated quantities per draw */
    uint64_t rows_total;    /* rows in the data (of the rank's group) */
} drift_ranks_print;

/* Every rank's print and status to every rank: DRIFT_OK when all ran
 * and all prints are rank 0's; otherwise every rank returns DRIFT_EINVAL
 * with the same message, naming the first rank at fault, its host, and
 * what differs or failed (msg: this rank's message when its status is
 * not 0), and *status gets that rank's status (0 when the ranks ran but
 * differ). */
int drift_ranks_startup(const drift_ranks_print *mine, const char *msg,
                        int *status, drift_err *e);

/* The smallest of each of v[n] over the job's ranks (every rank calls
 * it). */
int drift_ranks_min_u64(uint64_t *v, size_t n);

/* Gathers n records of `size` bytes from every rank to rank 0: *all gets
 * (on rank 0) a block of the records in rank order and *n_all their
 * count, freed with drift_free; other ranks get NULL and 0. */
int drift_ranks_gather(const void *mine, size_t n, size_t size, void **all,
                       size_t *n_all, drift_err *e);

/* The largest exit status of the job's ranks, so that every process ends
 * the same way. */
int drift_ranks_max_int(int v);

/* ---- a rank group: the ranks that run the same chains ---------------- */

typedef struct drift_ranks_group drift_ranks_group;

/* The group of layout L (a split of the job; every rank calls it). */
int drift_ranks_group_new(const drift_ranks_layout *L,
                          drift_ranks_group **out, drift_err *e);
void drift_ranks_group_free(drift_ranks_group *g);

/* The agreement behind a data file read in shares (engine/data/table.h's
 * drift_table_share.agree): every rank of the group brings its status
 * and message, its row count and the largest sparse dimension it read;
 * each gets where its rows begin, the rows in all and the largest
 * dimension.  When a rank failed, every rank returns its error with
 * "rank R on HOST: " before its message.  user is the group. */
int drift_ranks_share_agree(void *user, int status, const char *msg,
                            uint64_t rows, uint64_t dim, uint64_t *first,
                            uint64_t *total, uint64_t *dim_all,
                            drift_err *e);

/* ---- a chain's channel: its sums and agreements ---------------------- */

/* One chain's communicator within its group, and what its ranks have
 * agreed on so far.  Every chain has its own, so the chains of a process
 * may run in parallel threads. */
typedef struct drift_ranks_chan drift_ranks_chan;

/* A channel for the next chain of the group: every rank of the group
 * makes its channels in the same order, from one thread. */
int drift_ranks_chan_new(drift_ranks_group *g, drift_ranks_chan **out,
                         drift_err *e);
void drift_ranks_chan_free(drift_ranks_chan *ch);

/* This rank's place in the chain's group, and the group's size. */
unsigned drift_ranks_chan_grank(const drift_ranks_chan *ch);
unsigned drift_ranks_chan_size(const drift_ranks_chan *ch);

/* From now on this rank asks the group to stop once the clock passes t
 * (drift_now() seconds; only the group's rank 0 should set one, so that
 * one clock decides for all). */
void drift_ranks_chan_deadline(drift_ranks_chan *ch, double t);

/* Sums v[n] over the group's ranks, in place, and agrees on the outcome:
 * each rank brings its own status rc (DRIFT_OK; DRIFT_ENONFINITE, a point
 * without a finite density; any other code, a failure) and, when it is
 * not DRIFT_OK, a message.  Returns on every rank the same status: the
 * worst any rank brought (a failure before ENONFINITE before DRIFT_OK),
 * with the message of the first rank that brought it in out ("rank R on
 * HOST: " before it when that is another rank).  Each sum also carries
 * the ranks' stop requests (a signal, the deadline) and their deferred
 * failures (drift_ranks_defer), which drift_ranks_stopped and
 * drift_ranks_failed report afterwards, the same on every rank. */
int drift_ranks_sum(drift_ranks_chan *ch, double *v, size_t n, int rc,
                    const char *msg, char *out, size_t cap);

/* A sum of nothing: the agreement alone. */
int drift_ranks_agree(drift_ranks_chan *ch);

/* A failure of this rank alone (its file could not be written, its input
 * map lost pages) that must not change its path through the chain before
 * the other ranks know: kept, and carried by the next sums. */
void drift_ranks_defer(drift_ranks_chan *ch, int code, const char *msg);

/* Since the channel was made, the group has agreed to stop: 1 for a
 * signal to some rank, 2 for the deadline; 0 when not. */
int drift_ranks_stopped(const drift_ranks_chan *ch);

/* Whether some rank deferred a failure that the group has learnt of. */
int drift_ranks_failed(const drift_ranks_chan *ch);

/* When drift_ranks_failed: the first deferring rank's status and
 * message to every rank of the group (a collective; out as in
 * drift_ranks_sum). */
int drift_ranks_failure(drift_ranks_chan *ch, char *out, size_t cap);

#endif
