/* ranks.c: what a run over several ranks needs before, and besides, MPI:
 * whether a launcher started this process (from its environment) and the
 * plan of chains over rank groups.  Built with and without MPI; the
 * exchanges are in ranks_mpi.c (or ranks_none.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "ranks.h"

/* A non-negative decimal integer from the environment, or -1. */
static long env_uint(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 ? -1 : x;
}

int drift_ranks_launched(unsigned *size, unsigned *rank)
{
    *size = 1;
    *rank = 0;
    const char *off = getenv("DRIFT_MPI");
    if (off && !strcmp(off, "0"))
        return 0;
    /* Open MPI's, MPICH's (and Intel MPI's), Slurm's. */
    static const char *const names[][2] = {
        {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
        {"PMI_SIZE", "PMI_RANK"},
        {"PMIX_SIZE", "PMIX_RANK"},
        {"SLURM_NTASKS", "SLURM_PROCID"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        long n = env_uint(names[k][0]), r = env_uint(names[k][1]);
        if (n >= 1 && r >= 0 && r < n) {
            *size = (unsigned)n;
            *rank = (unsigned)r;
            return 1;
        }
    }
    return 0;
}

static unsigned gcd(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int drift_ranks_plan(unsigned P, unsigned rank, unsigned K, unsigned R,
                     drift_ranks_layout *L, drift_err *e)
{
    memset(L, 0, sizeof *L);
    if (P == 0 || K == 0 || rank >= P)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "rank %u of %u ranks, %u chains: no plan", rank,
                             P, K);
    if (R == 0)
        R = P / gcd(K, P);
    if (R > P || P % R)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--ranks-per-chain %u: it must divide the %u "
                             "ranks of the job (mpirun -n %u)",
                             R, P, P);
    unsigned G = P / R;
    if (G > K)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--ranks-per-chain %u: %u ranks make %u groups "
                             "for %u chain%s, so %u group%s would have no "
                             "chain; use --ranks-per-chain %u or more, or "
                             "--chains %u",
                             R, P, G, K, K == 1 ? "" : "s", G - K,
                             G - K == 1 ? "" : "s", (P + K - 1) / K, G);
    L->P = P;
    L->rank = rank;
    L->R = R;
    L->G = G;
    L->group = rank / R;
    L->grank = rank % R;
    L->K = K;
    L->first = (unsigned)((uint64_t)L->group * K / G);
    L->count = (unsigned)((uint64_t)(L->group + 1) * K / G) - L->first;
    return DRIFT_OK;
}
