/* advise.h: read-ahead and drop-behind for memory-mapped data read in row
 * order (cyclic access, full passes).  A reader thread pulls the next
 * stretches of the file into the page cache while the chain computes on
 * the current one, and stretches already passed are released, so a pass
 * over a row store larger than memory streams at the disk's sequential
 * speed without filling memory.  Not for random access (nothing to
 * predict). */
#ifndef DRIFT_ADVISE_H
#define DRIFT_ADVISE_H

#include <pthread.h>
#include <stddef.h>

#include <drift/common.h>

typedef struct drift_advisor {
    const drift_data *data;
    int fd;                 /* the mapped file (-1: advise the map only) */
    const char *map;        /* where it is mapped, for file offsets */
    size_t rows_per_chunk;  /* rows in one ~32 MiB stretch of dense data */
    size_t chunk;           /* the stretch the chain is in */
    int started;
    /* the reader thread (when fd >= 0) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_read;       /* the next stretch it will read */
    int running, stop;
} drift_advisor;

/* Prepares read-ahead for data mapped from fd at map (nothing happens
 * later when data is NULL; with fd -1 only madvise hints are given). */
void drift_advisor_init(drift_advisor *a, const drift_data *data, int fd,
                        const void *map);
/* The chain is at row r, moving forward. */
void drift_advisor_at(drift_advisor *a, size_t r);
/* Stops the reader thread. */
void drift_advisor_free(drift_advisor *a);

#endif
