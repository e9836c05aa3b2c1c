/* guard.h: a sampling run watched from a parent process, so that a sampler
 * that crashes, aborts, calls exit or stops answering loses no draws.  The
 * parent holds every draws file the run writes and, when the process that
 * writes them dies, completes each as a valid Stan CSV marked incomplete.
 * Not for what goes into the files of a run that ends normally (csvout.c,
 * run.c commit those themselves). */
#ifndef DRIFT_GUARD_H
#define DRIFT_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

#include "base/writer.h"
#include "csvout.h"

/* The plugin call a chain is in, as the parent reports it. */
enum {
    DRIFT_GUARD_IDLE = 0,
    DRIFT_GUARD_SETUP,
    DRIFT_GUARD_INIT,
    DRIFT_GUARD_STEP,
    DRIFT_GUARD_FINISH
};


/* One chain's place in the shared page; NULL (every hook a no-op) when the
 * run is not guarded. */
typedef struct drift_guard_slot drift_guard_slot;

typedef struct drift_guard_config {
    unsigned chains;       /* chains of the run */
    unsigned first_id;     /* the first chain's id */
    const char *sampler;   /* its name, for messages */
    double step_timeout;   /* seconds a plugin call may take; 0: no limit */
    /* ---- a rank of a run across MPI ranks ---- */
    const char *who;       /* "rank 3 on node2", before every message
                              (NULL: none) */
    double term_grace;     /* after a SIGTERM (mpirun ending the job), the
                              seconds the child has to stop on its own
                              before it is killed and its files completed
                              here (0: it has all the time it needs) */
} drift_guard_config;

/* Forks the run.  In the child (the process that samples) returns 0 and
 * sets *parent to 0; the hooks below then report to the parent.  In the
 * parent, supervises the child until it ends, completes the files of a
 * child that died, and returns 0 with *parent = 1 and *status the exit
 * status the command must end with.  Where no child can be made (fork or
 * socket failed) returns non-zero with a message in e and the run goes on
 * unguarded in the calling process (*parent = 0).  DRIFT_GUARD=0 in the
 * environment turns the guard off (for debuggers). */
int drift_guard_start(const drift_guard_config *g, int *parent, int *status,
                      drift_err *e);

/* The slot of the chain at index k (0-based), or NULL when unguarded. */
drift_guard_slot *drift_guard_slot_at(unsigned k);
/* The layout the chain's csvout keeps up to date, or NULL. */
drift_csvout_layout *drift_guard_layout_of(drift_guard_slot *s);

/* The chain's thread: installs the fault handler's alternate stack and
 * records which chain the thread runs (for the parent's message).  Call
 * drift_guard_thread_end before the thread leaves the chain. */
void drift_guard_thread_begin(drift_guard_slot *s);
void drift_guard_thread_end(drift_guard_slot *s);

/* Around every call into the sampler plugin: what (DRIFT_GUARD_*), at
 * which iteration; DRIFT_GUARD_IDLE after it returns. */
void drift_guard_call(drift_guard_slot *s, int what, uint64_t iter);

/* Hands the parent the chain's draws file, just opened (nothing written
 * yet): its descriptor (passed over a socket, so the parent holds the file
 * even after the child is gone), its final name path and its temporary
 * name; the stream's buffer moves into the shared page, so that rows not
 * yet in the file are not lost either. */
void drift_guard_file(drift_guard_slot *s, drift_writer *w, const char *path);
/* The child committed or discarded the file itself: the parent leaves it. */
void drift_guard_file_settled(drift_guard_slot *s);
/* The child has ended its run and reported it, with this exit status:
 * whatever happens to it after (a thread a plugin left running crashing
 * it, a plugin's code at exit), the parent passes this status on, with a
 * warning, instead of judging the run failed. */
void drift_guard_child_done(int status);

#endif
