/* bench_allreduce.c: the cost of the one exchange a run across MPI ranks
 * makes per oracle call, MPI_Allreduce(SUM) of n doubles in place over
 * every rank of the job (what drift's ranks_mpi.c calls, with its 5 slots
 * of status added), for n = 1 ... 2^18.  Rank 0 prints one line per n:
 * "allreduce P n seconds_per_call" (the best of 5 repeats of enough
 * calls to take 0.1 s), for bench/bench_mpi.sh's fit of
 * t(n, P) = alpha log2 P + beta n.  Run under mpirun -n P. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    size_t max = (size_t)1 << 18;
    double *buf = calloc(max + 5, sizeof *buf);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t n = 1; n <= max; n *= 8) {
        int count = (int)n + 5;
        /* Calls per repeat: enough for 0.1 s, agreed on by every rank. */
        int calls = 1;
        for (;;) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int k = 0; k < calls; k++)
                MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE, MPI_SUM,
                              MPI_COMM_WORLD);
            double t = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                          MPI_COMM_WORLD);
            if (t > 0.1 || calls > (1 << 24))
                break;
            calls *= 4;
        }
        double best = 1e300;
        for (int r = 0; r < 5; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int k = 0; k < calls; k++)
                MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE, MPI_SUM,
                              MPI_COMM_WORLD);
            double t = (MPI_Wtime() - t0) / calls;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                          MPI_COMM_WORLD);
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("allreduce %d %zu %.9f\n", P, n, best);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
