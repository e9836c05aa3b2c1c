/* advise.h: read-ahead and drop-behind for memory-mapped data read in row
 * order (cyclic access, full passes).  A reader thread pulls the next
 * stretches of the file into the page cache while the chain computes on
 * the current one, skipping what is already there.  When the store is
 * larger than the memory available, stretches already passed are
 * released, so a pass streams at the disk's sequential speed without
 * filling memory; when it fits they stay mapped, and the second and later
 * passes neither read the file nor fault a page.  Not for random access
 * (nothing to predict). */
#ifndef DRIFT_ADVISE_H
#define DRIFT_ADVISE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <drift/common.h>

typedef struct drift_advisor {
    const drift_data *data;
    int fd;                 /* the mapped file (-1: advise the map only) */
    const char *map;        /* where it is mapped, for file offsets */
    size_t rows_per_chunk;  /* rows in one stretch (1/16 of a pass, 1 to
                               32 MiB) */
    size_t chunk;           /* the stretch the chain is in */
    int started;
    int drop;               /* release passed stretches (the store does
                               not fit in the memory available) */
    int evict;              /* with drop: release them from the page
                               cache as well (POSIX_FADV_DONTNEED), not
                               only from this mapping.  For a chain that
                               is alone on the store: a chain behind it
                               would have to read them again.  Under a
                               memory limit this spares the kernel the
                               reclaim of what was passed (a cold cyclic
                               pass of 3.5 GB in 1 GB: 1.85 -> 1.57 s,
                               faster than cat); 0 from init */
    /* the reader thread (when fd >= 0) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_read;       /* the next stretch it will read */
    int running, stop;
    /* A store that stays in memory: stretches found wholly resident in a
     * row, and the process's major faults when that reached a whole pass
     * (quiet: nothing is checked until that count moves). */
    size_t resident_run;
    long run_majflt;        /* major faults when that run of checks began */
    long quiet_majflt;
    int quiet;
} drift_advisor;

/* Prepares read-ahead for data mapped from fd at map (nothing happens
 * later when data is NULL; with fd -1 only madvise hints are given), and
 * decides from the store's size and the memory available whether passed
 * stretches are dropped (drift_advise_should_drop). */
void drift_advisor_init(drift_advisor *a, const drift_data *data, int fd,
                        const void *map);
/* drift_advisor_init in two steps: the decisions, then the reader thread
 * (between them a test may change the decisions). */
void drift_advisor_prepare(drift_advisor *a, const drift_data *data,
                           int fd, const void *map);
void drift_advisor_start(drift_advisor *a);
/* The chain is at row r, moving forward. */
void drift_advisor_at(drift_advisor *a, size_t r);
/* Stops the reader thread. */
void drift_advisor_free(drift_advisor *a);

/* The bytes a full pass over data reads (dense rows and sparse sections). */
uint64_t drift_advise_pass_bytes(const drift_data *data);

/* Memory this process may still fill with page cache: the system's
 * MemAvailable (/proc/meminfo; else free pages from sysconf), bounded by
 * the room left under a memory cgroup's limit (v2 memory.max, v1
 * memory.limit_in_bytes), counting the cgroup's own page cache as room.
 * UINT64_MAX when nothing can be read. */
uint64_t drift_advise_memory_available(void);

/* Whether passes over a store of `bytes` should drop what they passed,
 * given `avail` bytes of memory: only when the store takes more than half
 * of it.  A store that fits stays mapped between passes; dropping it
 * would make every pass fault every page in again (and read it again). */
int drift_advise_should_drop(uint64_t bytes, uint64_t avail);

#endif
