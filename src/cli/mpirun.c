/* mpirun.c: `drift sample` as one rank of a run across MPI ranks
 * (mpirun.h).  Rank 0 speaks for the job: before the run, the other
 * ranks' stderr is kept and said only when one of them is the first to
 * fail; after it, rank 0 prints every chain's line.  Not for the run. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli.h"
#include "engine/lang/lang_model.h"
#include "mpirun.h"

/* ---- FNV-1a prints -------------------------------------------------------- */

#define FNV_START 1469598103934665603ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

static uint64_t fnv_u64(uint64_t h, uint64_t v) { return fnv(h, &v, sizeof v); }

/* A whole file's bytes into h; -1 when it cannot be read. */
static int fnv_file(uint64_t *h, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[1 << 16];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0)
        *h = fnv(*h, buf, (size_t)got);
    close(fd);
    return got < 0 ? -1 : 0;
}

/* A data file's size and its first and last 64 KiB into h: enough to
 * tell two files apart, without reading a file of terabytes.  -1 (errno
 * set) when it cannot be opened. */
static int fnv_data(uint64_t *h, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0; /* not a regular file: the open reports it */
    }
    *h = fnv_u64(*h, (uint64_t)st.st_size);
    char buf[1 << 16];
    off_t at[2] = {0, st.st_size > (off_t)sizeof buf
                          ? st.st_size - (off_t)sizeof buf
                          : 0};
    for (int k = 0; k < 2; k++) {
        ssize_t got = pread(fd, buf, sizeof buf, at[k]);
        if (got > 0)
            *h = fnv(*h, buf, (size_t)got);
    }
    close(fd);
    return 0;
}

/* ---- stderr: silenced, kept, said ---------------------------------------- */

static void silence(cli_mpi *m)
{
    fflush(stderr);
    m->saved_fd = dup(STDERR_FILENO);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (m->saved_fd < 0 || null < 0) {
        if (null >= 0)
            close(null);
        return;
    }
    dup2(null, STDERR_FILENO);
    close(null);
}

static void unsilence(cli_mpi *m)
{
    if (m->saved_fd < 0)
        return;
    fflush(stderr);
    dup2(m->saved_fd, STDERR_FILENO);
    close(m->saved_fd);
    m->saved_fd = -1;
}

void cli_mpi_capture(cli_mpi *m)
{
    if (!m->on || m->capture)
        return;
    fflush(stderr);
    m->capture = tmpfile();
    if (!m->capture)
        return;
    m->saved_fd = dup(STDERR_FILENO);
    if (m->saved_fd < 0) {
        fclose(m->capture);
        m->capture = NULL;
        return;
    }
    dup2(fileno(m->capture), STDERR_FILENO);
}

/* Ends the capture: what stderr said into text (at most cap - 1 bytes,
 * the first ones), and to stderr itself when say is set. */
static void captured(cli_mpi *m, char *text, size_t cap, int say)
{
    text[0] = '\0';
    if (!m->capture)
        return;
    fflush(stderr);
    dup2(m->saved_fd, STDERR_FILENO);
    close(m->saved_fd);
    m->saved_fd = -1;
    rewind(m->capture);
    size_t got = fread(text, 1, cap - 1, m->capture);
    text[got] = '\0';
    if (say) {
        rewind(m->capture);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, m->capture)) > 0)
            fwrite(buf, 1, n, stderr);
        fflush(stderr);
    }
    fclose(m->capture);
    m->capture = NULL;
}

/* The first line of what a rank said, without "drift sample: ", as the
 * message the others read. */
static void first_line(const char *text, char *msg, size_t cap)
{
    const char *p = text;
    if (!strncmp(p, "drift sample: ", 14))
        p += 14;
    size_t n = strcspn(p, "\n");
    snprintf(msg, cap, "%.*s", (int)n, p);
    if (!msg[0])
        snprintf(msg, cap, "failed before the run (no message)");
}

/* ---- the steps ------------------------------------------------------------ */

void cli_mpi_detect(cli_mpi *m)
{
    memset(m, 0, sizeof *m);
    m->saved_fd = -1;
    m->on = drift_ranks_launched(&m->P, &m->rank);
    if (!m->on)
        return;
    char host[64] = "?";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(m->who, sizeof m->who, "rank %u on %s", m->rank, host);
    /* Every rank reads the same options: rank 0 alone says what is
     * wrong with them. */
    m->quiet = m->rank != 0;
    if (m->quiet)
        silence(m);
}

int cli_mpi_plan(cli_mpi *m, unsigned K, unsigned R, int checkpoint,
                 int resume)
{
    if (!m->on)
        return 0;
    if (m->quiet)
        unsilence(m);
    int say = m->rank == 0;
    if (!drift_ranks_built()) {
        if (m->P == 1) {
            m->on = 0; /* mpirun -n 1: one process, as without mpirun */
            return 0;
        }
        drift_err e = {{0}};
        drift_ranks_init(&e);
        if (say)
            fprintf(stderr, "drift sample: mpirun -n %u: %s\n", m->P, e.msg);
        m->on = 0;
        return EXIT_USAGE;
    }
    if (checkpoint || resume) {
        if (say)
            fprintf(stderr,
                    "drift sample: %s: a run across MPI ranks (mpirun -n "
                    "%u) is not checkpointed; run it without, or as one "
                    "process\n",
                    resume ? "--resume" : "--checkpoint-every", m->P);
        m->on = 0;
        return EXIT_USAGE;
    }
    drift_err e = {{0}};
    if (drift_ranks_plan(m->P, m->rank, K, R, &m->L, &e)) {
        if (say)
            fprintf(stderr, "drift sample: mpirun -n %u: %s\n", m->P, e.msg);
        m->on = 0;
        return EXIT_USAGE;
    }
    snprintf(m->header[0], sizeof m->header[0], "mpi_ranks = %u", m->P);
    snprintf(m->header[1], sizeof m->header[1], "mpi_ranks_per_chain = %u",
             m->L.R);
    return 0;
}

/* A gate the job did not pass: rank 0 says why (its own failure in its
 * own words, whole; another rank's in one line, with its name); every
 * rank ends with the failing rank's exit status (2 when the ranks ran but
 * differ). */
static int gate_failed(cli_mpi *m, const drift_ranks_print *p,
                       const char *text, int status, const drift_err *e)
{
    m->over = 1;
    if (drift_ranks_rank() == 0) {
        if (p->status && status &&
            !strncmp(e->msg, m->who, strlen(m->who)))
            fputs(text, stderr);
        else
            fprintf(stderr, "drift sample: %s\n", e->msg);
        fflush(stderr);
    }
    return status ? status : EXIT_USAGE;
}

int cli_mpi_gate1(cli_mpi *m, int status, int argc, char **argv,
                  const char *sampler_path, const char *model_path,
                  const char *const *data, uint64_t *seed, int have_seed)
{
    char text[4096], msg[480];
    captured(m, text, sizeof text, 0);
    drift_err e = {{0}};
    if (drift_ranks_init(&e)) {
        fprintf(stderr, "drift sample: %s: %s\n", m->who, e.msg);
        m->over = 1;
        return EXIT_RUN_FAILED;
    }
    m->inited = 1;
    drift_ranks_who(drift_ranks_rank(), m->who, sizeof m->who);
    drift_ranks_print p;
    memset(&p, 0, sizeof p);
    p.status = status;
    first_line(text, msg, sizeof msg);
    if (!status) {
        /* What every rank must share with rank 0. */
        p.build = FNV_START;
        if (fnv_file(&p.build, "/proc/self/exe"))
            p.build = fnv_str(FNV_START, PACKAGE_VERSION);
        p.command = FNV_START;
        for (int k = 0; k < argc; k++)
            p.command = fnv_str(p.command, argv[k]);
        p.plugin = FNV_START;
        if (sampler_path && fnv_file(&p.plugin, sampler_path))
            p.plugin = fnv_str(p.plugin, sampler_path);
        if (model_path && fnv_file(&p.plugin, model_path))
            p.plugin = fnv_str(p.plugin, model_path);
        p.data = FNV_START;
        for (const char *const *d = data; d && *d && !p.status; d++)
            if (fnv_data(&p.data, *d)) {
                p.status = EXIT_USAGE;
                snprintf(msg, sizeof msg, "%s: cannot open data file: %s",
                         *d, strerror(errno));
                snprintf(text, sizeof text, "drift sample: %s\n", msg);
            }
        m->data_print = p.data;
    }
    int st = 0;
    if (drift_ranks_startup(&p, msg, &st, &e))
        return gate_failed(m, &p, text, st, &e);
    if (drift_ranks_rank() == 0)
        fputs(text, stderr); /* the warnings, once */
    fflush(stderr);
    if (!have_seed && drift_ranks_bcast_u64(seed, 1, &e))
        goto broken;
    if (drift_ranks_group_new(&m->L, &m->group, &e))
        goto broken;
    m->chans = drift_calloc(m->L.count ? m->L.count : 1, sizeof *m->chans);
    if (!m->chans) {
        fprintf(stderr, "drift sample: %s: out of memory\n", m->who);
        m->over = 1;
        return EXIT_RUN_FAILED;
    }
    for (unsigned k = 0; k < m->L.count; k++)
        if (drift_ranks_chan_new(m->group, &m->chans[k], &e))
            goto broken;
    m->share.index = m->L.grank;
    m->share.count = m->L.R;
    m->share.agree = drift_ranks_share_agree;
    m->share.user = m->group;
    cli_mpi_capture(m);
    return 0;
broken:
    fprintf(stderr, "drift sample: %s: %s\n", m->who, e.msg);
    m->over = 1;
    return EXIT_RUN_FAILED;
}

/* The model's shape: what every rank's model must share. */
static uint64_t model_print(const drift_model *m)
{
    uint64_t h = FNV_START;
    h = fnv_u64(h, m->dim);
    h = fnv_u64(h, m->n_out);
    h = fnv_u64(h, m->flags);
    h = fnv_u64(h, m->outcome);
    h = fnv_u64(h, m->n_gen_derived);
    for (size_t k = 0; m->out_names && k < m->n_out; k++)
        h = fnv_str(h, m->out_names[k]);
    return h;
}

int cli_mpi_gate2(cli_mpi *m, int status, const drift_problem *prob)
{
    char text[4096], msg[480];
    captured(m, text, sizeof text, 0);
    drift_ranks_print p;
    memset(&p, 0, sizeof p);
    first_line(text, msg, sizeof msg);
    p.status = status;
    if (!status && prob && prob->have_model) {
        const drift_model *mod = &prob->model;
        /* Generated quantities per row need every row: with the rows in
         * shares they cannot be had (a C model's are taken to need them,
         * having no way to say). */
        int per_row = prob->lang_path ? drift_lang_gen_per_row(mod)
                                      : mod->n_gen > mod->n_gen_derived;
        if (m->L.R > 1 && per_row) {
            snprintf(msg, sizeof msg,
                     "the model's generated quantities need every data "
                     "row, but with --ranks-per-chain %u each rank holds "
                     "a share of them: drop those quantities, or run with "
                     "one rank per chain (--ranks-per-chain 1)",
                     m->L.R);
            snprintf(text, sizeof text, "drift sample: %s\n", msg);
            p.status = EXIT_USAGE;
        }
        p.model = model_print(mod);
        p.n_gen = mod->n_gen;
        p.rows_total = prob->rows_total;
        p.data = m->data_print;
        p.build = p.command = p.plugin = 0;
    }
    drift_err e = {{0}};
    int st = 0;
    m->gated = 1;
    if (drift_ranks_startup(&p, msg, &st, &e))
        return gate_failed(m, &p, text, st, &e);
    if (drift_ranks_rank() == 0)
        fputs(text, stderr);
    fflush(stderr);
    m->run.first = m->L.first;
    m->run.count = m->L.count;
    m->run.chans = m->chans;
    m->run.rows_first = prob->rows_first;
    m->run.rows_total = prob->rows_total;
    m->run.writer = m->L.grank == 0;
    return 0;
}

int cli_mpi_report(cli_mpi *m, const drift_chain_result *mine, int rc,
                   void (*print)(void *user, const drift_chain_result *res,
                                 unsigned K),
                   void *user)
{
    /* The groups' writers send their chains; the others nothing. */
    size_t n = m->run.writer ? m->L.count : 0;
    void *all = NULL;
    size_t n_all = 0;
    drift_err e = {{0}};
    if (drift_ranks_gather(mine, n, sizeof *mine, &all, &n_all, &e))
        fprintf(stderr, "drift sample: %s: %s\n", m->who, e.msg);
    else if (drift_ranks_rank() == 0 && print)
        print(user, all, (unsigned)n_all);
    drift_free(all);
    return drift_ranks_max_int(rc);
}

int cli_mpi_end(cli_mpi *m, int rc)
{
    if (!m->on)
        return rc;
    if (m->quiet && m->saved_fd >= 0 && !m->capture)
        unsilence(m);
    if (rc && !m->over && !m->inited) {
        /* Failed before gate 1: meet the others there with the failure. */
        uint64_t seed = 0;
        rc = cli_mpi_gate1(m, rc, 0, NULL, NULL, NULL, NULL, &seed, 1);
        if (!rc)
            rc = EXIT_USAGE; /* cannot be: this rank failed */
    } else if (rc && !m->over && !m->gated) {
        int r2 = cli_mpi_gate2(m, rc, NULL);
        rc = r2 ? r2 : rc;
    }
    if (m->capture) {
        char text[4096];
        captured(m, text, sizeof text, drift_ranks_rank() == 0);
    }
    for (unsigned k = 0; m->chans && k < m->L.count; k++)
        drift_ranks_chan_free(m->chans[k]);
    drift_free(m->chans);
    m->chans = NULL;
    drift_ranks_group_free(m->group);
    m->group = NULL;
    if (m->inited)
        drift_ranks_finalize();
    m->on = 0;
    return rc;
}
