/* advise.h: read-ahead and drop-behind advice for memory-mapped data read
 * in row order (cyclic access, full passes): the kernel is told to fetch
 * the stretch ahead and may drop the stretch behind, so a pass over a row
 * store larger than memory streams at the disk's sequential speed without
 * filling memory.  Not for random access (nothing to predict). */
#ifndef DRIFT_ADVISE_H
#define DRIFT_ADVISE_H

#include <stddef.h>

#include <drift/common.h>

typedef struct drift_advisor {
    const drift_data *data;
    size_t rows_per_chunk;  /* rows in one ~32 MiB stretch of dense data */
    size_t chunk;           /* the stretch last advised */
    int started;
} drift_advisor;

/* Prepares advice for data (a no-op later when data is NULL). */
void drift_advisor_init(drift_advisor *a, const drift_data *data);
/* The reader is at row r, moving forward. */
void drift_advisor_at(drift_advisor *a, size_t r);

#endif
