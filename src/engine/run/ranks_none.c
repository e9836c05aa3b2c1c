/* ranks_none.c: ranks.h in a drift built without MPI (configure found no
 * MPI, or --without-mpi): one process, and a clear refusal where a run
 * across ranks is asked for.  Nothing here is called on a one-process
 * run's paths. */
#include "config.h"

#include <stdio.h>

#include "base/util.h"
#include "ranks.h"

#define NO_MPI                                                             \
    "this drift was built without MPI: install the Debian packages "      \
    "libopenmpi-dev and openmpi-bin, then configure --with-mpi and build " \
    "again (or run it without mpirun, as one process)"

int drift_ranks_built(void) { return 0; }

int drift_ranks_init(drift_err *e)
{
    return drift_err_set(e, DRIFT_EINVAL, NO_MPI);
}

void drift_ranks_finalize(void) {}
unsigned drift_ranks_size(void) { return 1; }
unsigned drift_ranks_rank(void) { return 0; }

void drift_ranks_who(unsigned r, char *buf, size_t cap)
{
    snprintf(buf, cap, "rank %u", r);
}

unsigned drift_ranks_threads(void) { return 1u << 20; }
unsigned drift_ranks_node_size(void) { return 1; }

int drift_ranks_bcast_u64(uint64_t *v, size_t n, drift_err *e)
{
    (void)v;
    (void)n;
    (void)e;
    return DRIFT_OK;
}

int drift_ranks_startup(const drift_ranks_print *mine, const char *msg,
                        int *status, drift_err *e)
{
    *status = mine->status;
    if (mine->status)
        return drift_err_set(e, DRIFT_EINVAL, "%s", msg ? msg : "");
    return DRIFT_OK;
}

int drift_ranks_min_u64(uint64_t *v, size_t n)
{
    (void)v;
    (void)n;
    return DRIFT_OK;
}

int drift_ranks_gather(const void *mine, size_t n, size_t size, void **all,
                       size_t *n_all, drift_err *e)
{
    (void)mine;
    (void)n;
    (void)size;
    *all = NULL;
    *n_all = 0;
    return drift_err_set(e, DRIFT_EINVAL, NO_MPI);
}

int drift_ranks_max_int(int v) { return v; }

int drift_ranks_group_new(const drift_ranks_layout *L,
                          drift_ranks_group **out, drift_err *e)
{
    (void)L;
    *out = NULL;
    return drift_err_set(e, DRIFT_EINVAL, NO_MPI);
}

void drift_ranks_group_free(drift_ranks_group *g) { (void)g; }

int drift_ranks_share_agree(void *user, int status, const char *msg,
                            uint64_t rows, uint64_t dim, uint64_t *first,
                            uint64_t *total, uint64_t *dim_all,
                            drift_err *e)
{
    (void)user;
    *first = 0;
    *total = rows;
    *dim_all = dim;
    if (status)
        return drift_err_set(e, status, "%s", msg ? msg : "");
    return DRIFT_OK;
}

int drift_ranks_chan_new(drift_ranks_group *g, drift_ranks_chan **out,
                         drift_err *e)
{
    (void)g;
    *out = NULL;
    return drift_err_set(e, DRIFT_EINVAL, NO_MPI);
}

void drift_ranks_chan_free(drift_ranks_chan *ch) { (void)ch; }
unsigned drift_ranks_chan_grank(const drift_ranks_chan *ch)
{
    (void)ch;
    return 0;
}
unsigned drift_ranks_chan_size(const drift_ranks_chan *ch)
{
    (void)ch;
    return 1;
}
void drift_ranks_chan_deadline(drift_ranks_chan *ch, double t)
{
    (void)ch;
    (void)t;
}

int drift_ranks_sum(drift_ranks_chan *ch, double *v, size_t n, int rc,
                    const char *msg, char *out, size_t cap)
{
    (void)ch;
    (void)v;
    (void)n;
    (void)rc;
    (void)msg;
    snprintf(out, cap, "%s", NO_MPI);
    return DRIFT_EINTERNAL;
}

int drift_ranks_agree(drift_ranks_chan *ch)
{
    (void)ch;
    return DRIFT_EINTERNAL;
}

void drift_ranks_defer(drift_ranks_chan *ch, int code, const char *msg)
{
    (void)ch;
    (void)code;
    (void)msg;
}

int drift_ranks_stopped(const drift_ranks_chan *ch)
{
    (void)ch;
    return 0;
}

int drift_ranks_failed(const drift_ranks_chan *ch)
{
    (void)ch;
    return 0;
}

int drift_ranks_failure(drift_ranks_chan *ch, char *out, size_t cap)
{
    (void)ch;
    snprintf(out, cap, "%s", NO_MPI);
    return DRIFT_EINTERNAL;
}
