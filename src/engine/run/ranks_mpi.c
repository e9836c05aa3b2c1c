/* ranks_mpi.c: ranks.h over MPI (Open MPI on Debian; any MPI-3 library
 * should do).  Errors of MPI calls return to drift (MPI_ERRORS_RETURN):
 * the first one marks the job broken, every later exchange fails at
 * once with the same message, and the process ends its chains with their
 * files completed instead of being aborted inside MPI.  The only file of
 * drift that includes mpi.h. */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/stop.h"
#include "base/util.h"
#include "ranks.h"

#define HOST_MAX 64
#define MSG_MAX 480

/* Slots every sum carries after its numbers. */
enum { S_FAIL, S_NONFINITE, S_SIGNAL, S_DEADLINE, S_DEFER, N_SLOTS };

static int inited, broken;
static char broken_msg[400];
static int world_rank, world_size = 1, thread_level, node_size = 1;
static char *hosts; /* world_size x HOST_MAX */
static int verify;  /* DRIFT_MPI_VERIFY=1: check that every rank got the
                       same bits from each sum (for the tests) */
/* DRIFT_MPI_STATS=1: the chains' sums, counted and timed (the time spent
 * in MPI_Allreduce, waits for slower ranks included), said at the end by
 * every rank (for bench/bench_mpi.sh). */
static int stats;
static atomic_ullong stat_sums, stat_values, stat_ns;

int drift_ranks_built(void) { return 1; }

unsigned drift_ranks_size(void) { return (unsigned)world_size; }
unsigned drift_ranks_rank(void) { return (unsigned)world_rank; }

void drift_ranks_who(unsigned r, char *buf, size_t cap)
{
    if (hosts && r < (unsigned)world_size)
        snprintf(buf, cap, "rank %u on %s", r, hosts + (size_t)r * HOST_MAX);
    else
        snprintf(buf, cap, "rank %u", r);
}

unsigned drift_ranks_node_size(void) { return (unsigned)node_size; }

unsigned drift_ranks_threads(void)
{
    if (thread_level >= MPI_THREAD_MULTIPLE)
        return 1u << 20;
    return thread_level >= MPI_THREAD_SERIALIZED ? 1 : 0;
}

/* Records the first failed MPI call (the job is then broken) and returns
 * DRIFT_EIO. */
static int mpi_failed(int rc, const char *what)
{
    if (!broken) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
            snprintf(s, sizeof s, "error %d", rc);
        snprintf(broken_msg, sizeof broken_msg,
                 "MPI %s failed on %s (%.200s): another rank of the job "
                 "has probably ended",
                 what, hosts ? hosts + (size_t)world_rank * HOST_MAX : "?",
                 s);
        broken = 1;
    }
    return DRIFT_EIO;
}

static int broken_err(drift_err *e)
{
    return drift_err_set(e, DRIFT_EIO, "%s", broken_msg);
}

int drift_ranks_init(drift_err *e)
{
    if (inited)
        return DRIFT_OK;
    /* Open MPI's own handlers of SIGSEGV and the like would take over
     * the guard's (guard.c), which name the chain and keep its draws. */
    setenv("OMPI_MCA_opal_signal", "", 0);
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
        return drift_err_set(e, DRIFT_EIO,
                             "MPI_Init_thread failed (status %d): run "
                             "drift under mpirun, or without it for one "
                             "process",
                             rc);
    inited = 1;
    thread_level = provided;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const char *v = getenv("DRIFT_MPI_VERIFY");
    verify = v && !strcmp(v, "1");
    v = getenv("DRIFT_MPI_STATS");
    stats = v && !strcmp(v, "1");
    char me[HOST_MAX] = "";
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    if (MPI_Get_processor_name(name, &len) == MPI_SUCCESS)
        snprintf(me, sizeof me, "%.*s", len, name);
    hosts = drift_calloc((size_t)world_size, HOST_MAX);
    if (!hosts)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    rc = MPI_Allgather(me, HOST_MAX, MPI_CHAR, hosts, HOST_MAX, MPI_CHAR,
                       MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        mpi_failed(rc, "Allgather");
        return broken_err(e);
    }
    for (int r = 0; r < world_size; r++)
        hosts[(size_t)r * HOST_MAX + HOST_MAX - 1] = '\0';
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
    }
    return DRIFT_OK;
}

void drift_ranks_finalize(void)
{
    if (inited && stats)
        fprintf(stderr,
                "drift: rank %d on %s: %llu sums of %llu values in all, "
                "%.6f s in MPI_Allreduce\n",
                world_rank, hosts ? hosts + (size_t)world_rank * HOST_MAX : "?",
                (unsigned long long)atomic_load(&stat_sums),
                (unsigned long long)atomic_load(&stat_values),
                1e-9 * (double)atomic_load(&stat_ns));
    /* After a signal mpirun is ending the job: its finalisation would
     * wait for ranks it is killing. */
    if (inited && !broken && !drift_stop_requested())
        MPI_Finalize();
    drift_free(hosts);
    hosts = NULL;
    inited = 0;
}

/* ---- the job as a whole ------------------------------------------------ */

int drift_ranks_bcast_u64(uint64_t *v, size_t n, drift_err *e)
{
    if (broken)
        return broken_err(e);
    int rc = MPI_Bcast(v, (int)n, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        mpi_failed(rc, "Bcast");
        return broken_err(e);
    }
    return DRIFT_OK;
}

int drift_ranks_min_u64(uint64_t *v, size_t n)
{
    if (broken)
        return DRIFT_EIO;
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MIN,
                           MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? DRIFT_OK : mpi_failed(rc, "Allreduce");
}

int drift_ranks_max_int(int v)
{
    int out = v;
    if (broken ||
        MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
        return v;
    return out;
}

int drift_ranks_gather(const void *mine, size_t n, size_t size, void **all,
                       size_t *n_all, drift_err *e)
{
    *all = NULL;
    *n_all = 0;
    if (broken)
        return broken_err(e);
    int cnt = (int)(n * size), rc;
    int *counts = NULL, *displs = NULL;
    char *buf = NULL;
    if (world_rank == 0) {
        counts = drift_calloc((size_t)world_size, sizeof *counts);
        displs = drift_calloc((size_t)world_size, sizeof *displs);
        if (!counts || !displs) {
            drift_free(counts);
            drift_free(displs);
            counts = displs = NULL;
        }
    }
    /* Rank 0 gathers the counts even without memory, so that no rank
     * waits for it; it then fails alone. */
    int dummy = 0;
    rc = MPI_Gather(&cnt, 1, MPI_INT, counts ? counts : &dummy, 1, MPI_INT,
                    0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        drift_free(counts);
        drift_free(displs);
        mpi_failed(rc, "Gather");
        return broken_err(e);
    }
    size_t total = 0;
    if (world_rank == 0 && counts) {
        for (int r = 0; r < world_size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        buf = drift_malloc(total ? total : 1);
    }
    int ok = world_rank != 0 || buf;
    rc = MPI_Gatherv(mine, cnt, MPI_BYTE, buf, counts, displs, MPI_BYTE, 0,
                     MPI_COMM_WORLD);
    drift_free(counts);
    drift_free(displs);
    if (rc != MPI_SUCCESS) {
        drift_free(buf);
        mpi_failed(rc, "Gatherv");
        return broken_err(e);
    }
    if (!ok)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if (world_rank == 0) {
        *all = buf;
        *n_all = size ? total / size : 0;
    }
    return DRIFT_OK;
}

/* A message and status from rank `from` of comm to all of its ranks. */
typedef struct said {
    int32_t code;
    char msg[MSG_MAX];
} said;

static int spread(MPI_Comm comm, int from, int code, const char *msg,
                  said *s)
{
    int me;
    MPI_Comm_rank(comm, &me);
    memset(s, 0, sizeof *s);
    if (me == from) {
        s->code = code;
        snprintf(s->msg, sizeof s->msg, "%s", msg ? msg : "");
    }
    int rc = MPI_Bcast(s, (int)sizeof *s, MPI_BYTE, from, comm);
    return rc == MPI_SUCCESS ? DRIFT_OK : mpi_failed(rc, "Bcast");
}

/* What the start-up check says of the first rank whose print differs
 * from rank 0's. */
static int differs(const drift_ranks_print *p, int r, drift_err *e)
{
    const drift_ranks_print *a = &p[0], *b = &p[r];
    char w0[96], wr[96];
    drift_ranks_who(0, w0, sizeof w0);
    drift_ranks_who((unsigned)r, wr, sizeof wr);
    if (a->build != b->build)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s runs another drift than %s (the "
                             "executables differ): install the same build "
                             "of drift on every node",
                             wr, w0);
    if (a->command != b->command)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s was given other options than %s: every "
                             "rank of mpirun must run the same drift "
                             "sample command",
                             wr, w0);
    if (a->plugin != b->plugin)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s loaded another sampler plugin or model "
                             "than %s (their files differ): make the plugin "
                             "search path (DRIFT_PLUGIN_PATH) and the model "
                             "file the same on every node",
                             wr, w0);
    if (a->n_gen != b->n_gen)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model writes %llu generated values per "
                             "draw on %s but %llu on %s: its generated "
                             "quantities have one value per data row, which "
                             "cannot be computed when the rows are split "
                             "across ranks; drop them from the model, or "
                             "run with --ranks-per-chain 1",
                             (unsigned long long)a->n_gen, w0,
                             (unsigned long long)b->n_gen, wr);
    if (a->model != b->model)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model built on %s differs from the one on "
                             "%s (its parameters or their names): give "
                             "every rank the same model and data",
                             wr, w0);
    if (a->rows_total != b->rows_total)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s reads other data than %s (%llu rows there, "
                             "%llu here): give every rank the same data file",
                             wr, w0, (unsigned long long)b->rows_total,
                             (unsigned long long)a->rows_total);
    if (a->data != b->data)
        return drift_err_set(e, DRIFT_EINVAL,
                             "%s reads other data than %s (the data files' "
                             "sizes or contents differ): give every rank "
                             "the same data files",
                             wr, w0);
    return DRIFT_OK;
}

/* A buffer of what every rank sends, or the end of the job: a rank that
 * cannot take part in an exchange would leave the others waiting. */
static void no_memory(void)
{
    fprintf(stderr, "drift: rank %d: out of memory for an exchange between "
                    "ranks; ending the job\n",
            world_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *need(size_t n, size_t size)
{
    void *p = drift_calloc(n ? n : 1, size);
    if (!p)
        no_memory();
    return p;
}

int drift_ranks_startup(const drift_ranks_print *mine, const char *msg,
                        int *status, drift_err *e)
{
    *status = 0;
    if (broken)
        return broken_err(e);
    drift_ranks_print *all = need((size_t)world_size, sizeof *all);
    int rc = MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all,
                           (int)sizeof *mine, MPI_BYTE, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        drift_free(all);
        mpi_failed(rc, "Allgather");
        return broken_err(e);
    }
    /* Every rank sees the same prints, so reaches the same verdict. */
    int first = -1, out = DRIFT_OK;
    for (int r = 0; r < world_size && first < 0; r++)
        if (all[r].status)
            first = r;
    if (first >= 0) {
        said s;
        if (spread(MPI_COMM_WORLD, first, mine->status, msg, &s)) {
            drift_free(all);
            return broken_err(e);
        }
        char who[96];
        drift_ranks_who((unsigned)first, who, sizeof who);
        *status = s.code;
        out = drift_err_set(e, DRIFT_EINVAL, "%s: %s", who, s.msg);
    } else {
        for (int r = 1; r < world_size && !out; r++)
            out = differs(all, r, e);
    }
    drift_free(all);
    return out;
}

/* ---- rank groups ---------------------------------------------------------- */

struct drift_ranks_group {
    MPI_Comm comm;
    int grank, size;
    int *world;             /* the world rank of each of its ranks */
};

/* The world ranks of comm's ranks, in its order. */
static int *world_of(MPI_Comm comm, int size)
{
    int *w = drift_calloc((size_t)size, sizeof *w);
    if (!w)
        return NULL;
    if (MPI_Allgather(&world_rank, 1, MPI_INT, w, 1, MPI_INT, comm) !=
        MPI_SUCCESS) {
        drift_free(w);
        return NULL;
    }
    return w;
}

int drift_ranks_group_new(const drift_ranks_layout *L,
                          drift_ranks_group **out, drift_err *e)
{
    *out = NULL;
    if (broken)
        return broken_err(e);
    drift_ranks_group *g = drift_calloc(1, sizeof *g);
    if (!g)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc = MPI_Comm_split(MPI_COMM_WORLD, (int)L->group, (int)L->rank,
                            &g->comm);
    if (rc != MPI_SUCCESS) {
        drift_free(g);
        mpi_failed(rc, "Comm_split");
        return broken_err(e);
    }
    MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(g->comm, &g->grank);
    MPI_Comm_size(g->comm, &g->size);
    if (!(g->world = world_of(g->comm, g->size))) {
        drift_ranks_group_free(g);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    *out = g;
    return DRIFT_OK;
}

void drift_ranks_group_free(drift_ranks_group *g)
{
    if (!g)
        return;
    if (!broken && g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    drift_free(g->world);
    drift_free(g);
}

int drift_ranks_share_agree(void *user, int status, const char *msg,
                            uint64_t rows, uint64_t dim, uint64_t *first,
                            uint64_t *total, uint64_t *dim_all,
                            drift_err *e)
{
    drift_ranks_group *g = user;
    *first = *total = *dim_all = 0;
    if (broken)
        return broken_err(e);
    uint64_t mine[3] = {(uint64_t)(status != 0), rows, dim};
    uint64_t *all = need((size_t)g->size, sizeof mine);
    int rc = MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T,
                           g->comm);
    if (rc != MPI_SUCCESS) {
        drift_free(all);
        mpi_failed(rc, "Allgather");
        return broken_err(e);
    }
    int bad = g->size;
    for (int r = g->size - 1; r >= 0; r--)
        if (all[3 * r])
            bad = r;
    if (bad < g->size) {
        said s;
        drift_free(all);
        if (spread(g->comm, bad, status, msg, &s))
            return broken_err(e);
        char who[96];
        drift_ranks_who((unsigned)g->world[bad], who, sizeof who);
        return drift_err_set(e, s.code ? s.code : DRIFT_EINTERNAL, "%s: %s",
                             who, s.msg);
    }
    for (int r = 0; r < g->size; r++) {
        if (r < g->grank)
            *first += all[3 * r + 1];
        *total += all[3 * r + 1];
        if (all[3 * r + 2] > *dim_all)
            *dim_all = all[3 * r + 2];
    }
    drift_free(all);
    return DRIFT_OK;
}

/* ---- a chain's channel ---------------------------------------------------- */

struct drift_ranks_chan {
    MPI_Comm comm;
    int grank, size;
    int *world;
    double deadline;
    int stopped, failed;
    int defer_code;
    char defer_msg[512];
    double *buf;            /* n + N_SLOTS scratch */
    size_t cap;
};

int drift_ranks_chan_new(drift_ranks_group *g, drift_ranks_chan **out,
                         drift_err *e)
{
    *out = NULL;
    if (broken)
        return broken_err(e);
    drift_ranks_chan *ch = drift_calloc(1, sizeof *ch);
    if (!ch)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    ch->comm = MPI_COMM_NULL;
    ch->deadline = INFINITY;
    int rc = MPI_Comm_dup(g->comm, &ch->comm);
    if (rc != MPI_SUCCESS) {
        drift_free(ch);
        mpi_failed(rc, "Comm_dup");
        return broken_err(e);
    }
    MPI_Comm_set_errhandler(ch->comm, MPI_ERRORS_RETURN);
    ch->grank = g->grank;
    ch->size = g->size;
    ch->world = drift_calloc((size_t)g->size, sizeof *ch->world);
    if (!ch->world) {
        drift_ranks_chan_free(ch);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    memcpy(ch->world, g->world, (size_t)g->size * sizeof *ch->world);
    *out = ch;
    return DRIFT_OK;
}

void drift_ranks_chan_free(drift_ranks_chan *ch)
{
    if (!ch)
        return;
    if (!broken && ch->comm != MPI_COMM_NULL)
        MPI_Comm_free(&ch->comm);
    drift_free(ch->world);
    drift_free(ch->buf);
    drift_free(ch);
}

unsigned drift_ranks_chan_grank(const drift_ranks_chan *ch)
{
    return (unsigned)ch->grank;
}

unsigned drift_ranks_chan_size(const drift_ranks_chan *ch)
{
    return (unsigned)ch->size;
}

void drift_ranks_chan_deadline(drift_ranks_chan *ch, double t)
{
    ch->deadline = t;
}

void drift_ranks_defer(drift_ranks_chan *ch, int code, const char *msg)
{
    if (ch->defer_code)
        return;
    ch->defer_code = code ? code : DRIFT_EINTERNAL;
    snprintf(ch->defer_msg, sizeof ch->defer_msg, "%s", msg ? msg : "");
}

int drift_ranks_stopped(const drift_ranks_chan *ch) { return ch->stopped; }
int drift_ranks_failed(const drift_ranks_chan *ch) { return ch->failed; }

/* The status and message of the lowest rank of the chain's group for
 * which `mine` holds, to every rank; out gets the message, with the
 * rank's name before it when it is another rank's. */
static int pick(drift_ranks_chan *ch, int mine, int code, const char *msg,
                char *out, size_t cap)
{
    int lowest = mine ? ch->grank : ch->size;
    int rc = MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN,
                           ch->comm);
    if (rc != MPI_SUCCESS)
        return mpi_failed(rc, "Allreduce");
    if (lowest >= ch->size) /* none: cannot happen after a count > 0 */
        lowest = 0;
    said s;
    if (spread(ch->comm, lowest, code, msg, &s))
        return DRIFT_EIO;
    if (lowest == ch->grank) {
        snprintf(out, cap, "%s", msg ? msg : "");
    } else {
        char who[96];
        drift_ranks_who((unsigned)ch->world[lowest], who, sizeof who);
        snprintf(out, cap, "%s: %s", who, s.msg);
    }
    return s.code ? s.code : DRIFT_EINTERNAL;
}

/* FNV-1a over n doubles' bytes. */
static uint64_t hash_doubles(const double *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t k = 0; k < n * sizeof *v; k++)
        h = (h ^ p[k]) * 1099511628211ull;
    return h;
}

int drift_ranks_sum(drift_ranks_chan *ch, double *v, size_t n, int rc,
                    const char *msg, char *out, size_t cap)
{
    if (broken) {
        snprintf(out, cap, "%s", broken_msg);
        return DRIFT_EIO;
    }
    if (ch->cap < n + N_SLOTS) {
        double *nb = drift_realloc(ch->buf, (n + N_SLOTS) * sizeof *nb);
        if (!nb)
            no_memory();
        ch->buf = nb;
        ch->cap = n + N_SLOTS;
    }
    double *b = ch->buf;
    if (n)
        memcpy(b, v, n * sizeof *v);
    int hard = rc != DRIFT_OK && rc != DRIFT_ENONFINITE;
    b[n + S_FAIL] = hard;
    b[n + S_NONFINITE] = rc == DRIFT_ENONFINITE;
    b[n + S_SIGNAL] = drift_stop_requested() != 0;
    b[n + S_DEADLINE] = drift_now() >= ch->deadline;
    b[n + S_DEFER] = ch->defer_code != 0;
    struct timespec t0, t1;
    if (stats)
        clock_gettime(CLOCK_MONOTONIC, &t0);
    int mrc = MPI_Allreduce(MPI_IN_PLACE, b, (int)(n + N_SLOTS), MPI_DOUBLE,
                            MPI_SUM, ch->comm);
    if (stats) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        atomic_fetch_add(&stat_ns,
                         (unsigned long long)((t1.tv_sec - t0.tv_sec) *
                                                  1000000000LL +
                                              (t1.tv_nsec - t0.tv_nsec)));
        atomic_fetch_add(&stat_sums, 1);
        atomic_fetch_add(&stat_values, (unsigned long long)n);
    }
    if (mrc != MPI_SUCCESS) {
        mpi_failed(mrc, "Allreduce");
        snprintf(out, cap, "%s", broken_msg);
        return DRIFT_EIO;
    }
    if (n)
        memcpy(v, b, n * sizeof *v);
    if (!ch->stopped && b[n + S_SIGNAL] > 0)
        ch->stopped = 1;
    if (!ch->stopped && b[n + S_DEADLINE] > 0)
        ch->stopped = 2;
    if (b[n + S_DEFER] > 0)
        ch->failed = 1;
    if (verify && n) {
        /* Every rank must hold the same bits, or the replicated samplers
         * part ways. */
        uint64_t h[2];
        h[0] = hash_doubles(v, n);
        h[1] = ~h[0];
        mrc = MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MAX,
                            ch->comm);
        if (mrc != MPI_SUCCESS) {
            mpi_failed(mrc, "Allreduce");
            snprintf(out, cap, "%s", broken_msg);
            return DRIFT_EIO;
        }
        if (h[0] != ~h[1]) {
            snprintf(out, cap,
                     "DRIFT_MPI_VERIFY: the ranks of a chain got different "
                     "bits from one sum of %zu values",
                     n);
            return DRIFT_EINTERNAL;
        }
    }
    if (b[n + S_FAIL] > 0)
        return pick(ch, hard, rc, msg, out, cap);
    if (b[n + S_NONFINITE] > 0)
        return pick(ch, rc == DRIFT_ENONFINITE, rc, msg, out, cap);
    return DRIFT_OK;
}

int drift_ranks_agree(drift_ranks_chan *ch)
{
    char out[8];
    return drift_ranks_sum(ch, NULL, 0, DRIFT_OK, NULL, out, sizeof out);
}

int drift_ranks_failure(drift_ranks_chan *ch, char *out, size_t cap)
{
    if (broken) {
        snprintf(out, cap, "%s", broken_msg);
        return DRIFT_EIO;
    }
    return pick(ch, ch->defer_code != 0, ch->defer_code, ch->defer_msg, out,
                cap);
}
