/* checkpoint.c: saving a chain between two steps and restoring it in
 * another process.  The engine's part is everything a later step or the
 * output depends on: the point, the four random streams, the access
 * stream, the counters, a continuous trajectory's moments, the metric and
 * the output file's layout; the sampler adds its own through
 * drift_sampler.checkpoint.  The draws written so far are copied, as they
 * grow, into a file of their own, so that what happens to the draws file
 * after the save (cut to other chains' counts, completed as incomplete by
 * the guard, lost with its process) does not matter.  The checkpoint
 * extension (ext.h) decides when: every ckpt_iters iterations or
 * ckpt_seconds seconds, and when the step loop ends.  Not for checking
 * that a checkpoint belongs to the run (the CLI's manifest). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "base/writer.h"
#include "checkpoint.h"
#include "ckptio.h"
#include "csvout.h"
#include "ext.h"
#include "guard.h"
#include "oracle.h"
#include "precond.h"

/* "DRIFTCK" and the format's version, then blocks (a 64-bit length and
 * its bytes), then the FNV-1a hash of the blocks.  Version 2: the core
 * holds the hash of the draws file's bytes (chain_ID.rows), which become
 * the resumed output and are checked as the state is.  Version 3: the
 * core counts the gradients a diagonal metric's window has seen. */
static const char MAGIC[8] = {'D', 'R', 'I', 'F', 'T', 'C', 'K', '3'};

#define FNV_BASIS 0xcbf29ce484222325ULL

#define COPY_CHUNK (1u << 20)

/* The engine's scalars, in one block. */
typedef struct core {
    uint64_t d, N, id;
    uint64_t iter, grads, draws_written, gen_seen, warm_offered,
        samp_offered, grid_k, proposals, violations, welford_n, grad_n;
    double t_traj, t_mom, t_next_out, adapted_step;
    double elapsed;         /* seconds since the chain started */
    double warm_elapsed;    /* seconds to the end of warmup, or -1 */
    int64_t rows_bytes;     /* the draws file's length (-1: no file) */
    uint64_t rows_hash;     /* FNV-1a of those bytes */
    int32_t stream_used, metric_kind;
    drift_rng rng, noise_rng, access_rng, lp_rng;
    int32_t s_mode;
    uint64_t s_pos, s_head, s_len, s_cap, s_passes;
    drift_rng s_rng, s_pass_rng;
} core;

static uint64_t fnv_step(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    return fnv_step(FNV_BASIS, p, n);
}

static void chain_file_path(const drift_chain *c, const char *ext, char *buf,
                            size_t cap)
{
    snprintf(buf, cap, "%s/chain_%u.%s", c->cfg->ckpt.dir, c->id, ext);
}

/* The blocks after the core, in both directions: theta, the stream's
 * look-ahead, a continuous trajectory's moments, the metric, the output
 * layout, then the sampler's. */
static int blocks(drift_chain *c, double *theta, const core *k)
{
    int rc = drift_ckpt_block(c, theta, c->d * sizeof *theta);
    if (!rc && k->s_cap)
        rc = drift_ckpt_block(c, c->access.stream.ahead,
                              (size_t)k->s_cap *
                                  sizeof *c->access.stream.ahead);
    if (!rc && c->traj.m1) {
        rc = drift_ckpt_block(c, c->traj.m1, c->d * sizeof(double));
        if (!rc)
            rc = drift_ckpt_block(c, c->traj.m2, c->d * sizeof(double));
    }
    size_t nm = drift_adapt_metric_doubles(c->adapt.metric.kind, c->d);
    if (!rc && nm)
        rc = drift_ckpt_block(c, c->adapt.metric.inv, nm * sizeof(double));
    if (!rc)
        rc = drift_run_ext_ckpt(c);
    if (!rc)
        rc = drift_csvout_ckpt(c);
    if (!rc) {
        const drift_sampler *s = c->cfg->step.sampler;
        if (!s->checkpoint)
            return drift_chain_fail(c, DRIFT_EINVAL,
                                    "sampler %s cannot be checkpointed "
                                    "(it has no checkpoint callback)",
                                    s->name);
        drift_guard_call(c->ext.guard, DRIFT_GUARD_STEP, c->iter);
        rc = s->checkpoint(c->state, &drift_services_table, c);
        drift_guard_call(c->ext.guard, DRIFT_GUARD_IDLE, c->iter);
        if (!rc)
            rc = drift_precond_ckpt(c);
        if (!rc)
            rc = drift_oracle_estimator_ckpt(c);
        if (rc && !c->failed)
            drift_chain_fail(c, rc, "chain %u: sampler %s failed to %s its "
                             "checkpoint (status %d)",
                             c->id, s->name,
                             c->ext.ckpt->io->restoring ? "restore" : "save", rc);
    }
    return rc ? rc : c->failed;
}

static void fill_core(const drift_chain *c, core *k, double t_start,
                      double t_warm_end, int64_t rows_bytes)
{
    memset(k, 0, sizeof *k);
    k->d = c->d;
    k->N = c->N;
    k->id = c->id;
    k->iter = c->iter;
    k->grads = c->grads;
    k->draws_written = c->output.draws_written;
    k->gen_seen = c->output.gen_seen;
    k->warm_offered = c->output.warm_offered;
    k->samp_offered = c->output.samp_offered;
    k->grid_k = c->traj.grid_k;
    k->proposals = c->proposals;
    k->violations = c->violations;
    k->welford_n = c->adapt.metric.est.n;
    k->grad_n = c->adapt.metric.grad.n;
    k->t_traj = c->traj.t;
    k->t_mom = c->traj.t_mom;
    k->t_next_out = c->traj.t_next_out;
    k->adapted_step = c->adapt.step;
    double now = drift_now();
    k->elapsed = now - t_start;
    k->warm_elapsed = t_warm_end >= 0 ? t_warm_end - t_start : -1;
    k->rows_bytes = rows_bytes;
    k->rows_hash = c->ext.ckpt->rows_hash;
    k->stream_used = c->access.used;
    k->metric_kind = (int32_t)c->adapt.metric.kind;
    k->rng = c->rng;
    k->noise_rng = c->noise.rng;
    k->access_rng = c->access.rng;
    k->lp_rng = c->output.lp_rng;
    k->s_mode = (int32_t)c->access.stream.mode;
    k->s_pos = c->access.stream.pos;
    k->s_head = c->access.stream.head;
    k->s_len = c->access.stream.len;
    k->s_cap = c->access.stream.cap;
    k->s_passes = c->access.stream.passes;
    k->s_rng = c->access.stream.rng;
    k->s_pass_rng = c->access.stream.pass_rng;
}

/* Appends bytes [from, to) of fd to out at offset from, hashing them
 * into *h. */
static int copy_range(int fd, int out, off_t from, off_t to, uint64_t *h)
{
    static __thread unsigned char buf[1 << 16];
    while (from < to) {
        size_t want = (size_t)(to - from) < sizeof buf ? (size_t)(to - from)
                                                       : sizeof buf;
        ssize_t r = pread(fd, buf, want, from);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? (errno = EIO, -1) : -1;
        *h = fnv_step(*h, buf, (size_t)r);
        for (ssize_t w = 0; w < r;) {
            ssize_t x = pwrite(out, buf + w, (size_t)(r - w), from + w);
            if (x < 0 && errno == EINTR)
                continue;
            if (x < 0)
                return -1;
            w += x;
        }
        from += r;
    }
    return 0;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* The draws file's bytes since the last save, into chain_ID.rows. */
static int save_rows(drift_chain *c, int64_t *len)
{
    *len = -1;
    if (!c->output.w)
        return DRIFT_OK;
    char path[4200];
    chain_file_path(c, "rows", path, sizeof path);
    FILE *f = drift_writer_file(c->output.w);
    int fd = drift_writer_fd(c->output.w);
    off_t L;
    if (fflush(f) != 0 || (L = lseek(fd, 0, SEEK_CUR)) < 0)
        return drift_chain_fail(c, DRIFT_EIO, "%s: %s", path,
                                strerror(errno));
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
    drift_ckpt_chain *ck = c->ext.ckpt;
    if (ck->rows < 0) /* the first save of a chain started afresh */
        flags |= O_TRUNC;
    int out = open(path, flags, 0644);
    if (out < 0)
        return drift_chain_fail(c, DRIFT_EIO, "checkpoint: %s: %s", path,
                                strerror(errno));
    off_t from = ck->rows < 0 ? 0 : (off_t)ck->rows;
    uint64_t h = ck->rows < 0 ? FNV_BASIS : ck->rows_hash;
    int rc = copy_range(fd, out, from, L, &h);
    if (!rc)
        rc = fdatasync(out);
    int err = errno;
    close(out);
    if (rc)
        return drift_chain_fail(c, DRIFT_EIO, "checkpoint: %s: %s", path,
                                strerror(err));
    ck->rows = L;
    ck->rows_hash = h;
    *len = L;
    return DRIFT_OK;
}

static int write_all(int fd, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

int drift_ckpt_save(drift_chain *c)
{
    int64_t rows_len;
    int rc = save_rows(c, &rows_len);
    if (rc)
        return rc;
    char path[4200], tmp[4220];
    chain_file_path(c, "state", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    drift_ckpt_io io = {0, NULL, 0, 0, 0, path};
    core k;
    fill_core(c, &k, c->t_start, c->t_warm_end, rows_len);
    c->ext.ckpt->io = &io;
    rc = drift_ckpt_put(&io, MAGIC, sizeof MAGIC) ? DRIFT_ENOMEM
                                       : drift_ckpt_block(c, &k, sizeof k);
    if (!rc)
        rc = blocks(c, c->theta, &k);
    c->ext.ckpt->io = NULL;
    if (rc) {
        drift_free(io.buf);
        return c->failed ? c->failed : drift_chain_fail(c, rc, "checkpoint: "
                                                        "out of memory");
    }
    uint64_t h = fnv1a(io.buf + sizeof MAGIC, io.len - sizeof MAGIC);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0 && !write_all(fd, io.buf, io.len) &&
             !write_all(fd, &h, sizeof h) && !fsync(fd);
    int err = errno;
    if (fd >= 0)
        close(fd);
    drift_free(io.buf);
    if (!ok || rename(tmp, path) != 0 || sync_dir(c->cfg->ckpt.dir) != 0) {
        if (ok)
            err = errno;
        unlink(tmp);
        return drift_chain_fail(c, DRIFT_EIO, "checkpoint: %s: %s", path,
                                strerror(err));
    }
    c->ext.ckpt->at = drift_now();
    c->ext.ckpt->saved_at = c->iter;
    return DRIFT_OK;
}

/* Reads all of path into io; 1 when there is no such file. */
static int read_state(drift_chain *c, const char *path, drift_ckpt_io *io)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return drift_chain_fail(c, DRIFT_EIO, "--resume: %s: %s", path,
                                strerror(err));
    }
    size_t n = (size_t)st.st_size;
    io->buf = drift_malloc(n ? n : 1);
    if (!io->buf) {
        close(fd);
        return drift_chain_fail(c, DRIFT_ENOMEM, "--resume: %s: out of "
                                "memory", path);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, io->buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    uint64_t h;
    if (got != n || n < sizeof MAGIC + sizeof h ||
        memcmp(io->buf, MAGIC, sizeof MAGIC) != 0)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "--resume: %s is not a drift checkpoint of "
                                "this format",
                                path);
    memcpy(&h, io->buf + n - sizeof h, sizeof h);
    if (fnv1a(io->buf + sizeof MAGIC, n - sizeof MAGIC - sizeof h) != h)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "--resume: %s is damaged (its checksum does "
                                "not match); remove it to run chain %u "
                                "again from the start",
                                path, c->id);
    io->len = n - sizeof h;
    io->at = sizeof MAGIC;
    return 0;
}

/* Whether bytes [0, len) of fd hash to want (-1: a read error). */
static int rows_match(int fd, int64_t len, uint64_t want)
{
    static __thread unsigned char buf[1 << 16];
    uint64_t h = FNV_BASIS;
    for (off_t at = 0; at < len;) {
        size_t n = (size_t)(len - at) < sizeof buf ? (size_t)(len - at)
                                                   : sizeof buf;
        ssize_t r = pread(fd, buf, n, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        h = fnv_step(h, buf, (size_t)r);
        at += r;
    }
    return h == want;
}

/* The saved rows into the chain's (new, empty) draws file, once they are
 * found to be the bytes the state was saved with; the rows file is cut
 * to them (a save that died after copying rows left more). */
static int restore_rows(drift_chain *c, int64_t len, uint64_t hash)
{
    char path[4200];
    chain_file_path(c, "rows", path, sizeof path);
    c->ext.ckpt->rows = len;
    if (len < 0)
        return c->output.w
                   ? drift_chain_fail(c, DRIFT_EINVAL,
                                      "--resume: %s: the checkpoint has no "
                                      "draws file",
                                      path)
                   : DRIFT_OK;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < len) {
        int err = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "--resume: %s: %s", path,
                                err ? strerror(err)
                                    : "shorter than its state says: the "
                                      "checkpoint is damaged");
    }
    /* These bytes become the output: a flipped digit must not. */
    int match = rows_match(fd, len, hash);
    if (match != 1) {
        int err = errno;
        close(fd);
        if (match < 0)
            return drift_chain_fail(c, DRIFT_EIO, "--resume: %s: %s", path,
                                    strerror(err));
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "--resume: %s is damaged (its checksum "
                                "does not match the one its state "
                                "recorded); remove chain_%u.state and "
                                "chain_%u.rows to run chain %u again from "
                                "the start",
                                path, c->id, c->id, c->id);
    }
    c->ext.ckpt->rows_hash = hash;
    FILE *f = drift_writer_file(c->output.w);
    static __thread unsigned char buf[1 << 16];
    off_t at = 0;
    int rc = 0;
    while (at < len && !rc) {
        size_t want = (size_t)(len - at) < sizeof buf ? (size_t)(len - at)
                                                      : sizeof buf;
        ssize_t r = pread(fd, buf, want, at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || fwrite(buf, 1, (size_t)r, f) != (size_t)r)
            rc = -1;
        else
            at += r;
    }
    if (!rc)
        rc = ftruncate(fd, len);
    int err = errno;
    close(fd);
    if (rc)
        return drift_chain_fail(c, DRIFT_EIO, "--resume: %s: %s", path,
                                strerror(err));
    return DRIFT_OK;
}

int drift_ckpt_restore(drift_chain *c, int *found)
{
    double *theta = c->theta;
    char path[4200];
    chain_file_path(c, "state", path, sizeof path);
    drift_ckpt_io io = {1, NULL, 0, 0, 0, path};
    *found = 0;
    int rc = read_state(c, path, &io);
    if (rc == 1) {
        drift_free(io.buf);
        c->ext.ckpt->rows = -1;
        return DRIFT_OK;
    }
    if (rc) {
        drift_free(io.buf);
        return rc;
    }
    core k;
    c->ext.ckpt->io = &io;
    rc = drift_ckpt_block(c, &k, sizeof k);
    if (!rc && (k.d != c->d || k.N != c->N || k.id != c->id ||
                k.s_cap != c->access.stream.cap ||
                k.metric_kind != (int32_t)c->adapt.metric.kind ||
                k.s_mode != (int32_t)c->access.stream.mode))
        rc = drift_chain_fail(c, DRIFT_EINVAL,
                              "--resume: %s does not belong to this chain "
                              "(chain %llu, %llu parameters, %llu rows; "
                              "this chain: %u, %zu, %zu)",
                              path, (unsigned long long)k.id,
                              (unsigned long long)k.d,
                              (unsigned long long)k.N, c->id, c->d, c->N);
    /* The stream's place, as indices into the data and the ring: a
     * state forged with a matching checksum must not reach past them. */
    if (!rc && (k.s_pos > c->access.stream.N || k.s_len > k.s_cap ||
                (k.s_cap ? k.s_head >= k.s_cap : k.s_head != 0)))
        rc = drift_chain_fail(c, DRIFT_EINVAL,
                              "--resume: %s is damaged: its data stream's "
                              "place (position %llu of %zu rows, %llu of "
                              "%llu look-ahead slots from %llu) is not one "
                              "a run could reach",
                              path, (unsigned long long)k.s_pos,
                              c->access.stream.N, (unsigned long long)k.s_len,
                              (unsigned long long)k.s_cap,
                              (unsigned long long)k.s_head);
    if (!rc) {
        c->iter = k.iter;
        c->grads = k.grads;
        c->output.draws_written = k.draws_written;
        c->output.gen_seen = k.gen_seen;
        c->output.warm_offered = k.warm_offered;
        c->output.samp_offered = k.samp_offered;
        c->traj.grid_k = k.grid_k;
        c->proposals = k.proposals;
        c->violations = k.violations;
        c->adapt.metric.est.n = k.welford_n;
        c->adapt.metric.grad.n = k.grad_n;
        c->traj.t = k.t_traj;
        c->traj.t_mom = k.t_mom;
        c->traj.t_next_out = k.t_next_out;
        c->adapt.step = k.adapted_step;
        c->access.used = k.stream_used;
        c->rng = k.rng;
        c->noise.rng = k.noise_rng;
        c->access.rng = k.access_rng;
        c->output.lp_rng = k.lp_rng;
        c->access.stream.mode = (drift_access)k.s_mode;
        c->access.stream.pos = k.s_pos;
        c->access.stream.head = k.s_head;
        c->access.stream.len = k.s_len;
        c->access.stream.passes = k.s_passes;
        c->access.stream.pass_rng = k.s_pass_rng;
        drift_stream_rebuild(&c->access.stream);
        c->access.stream.rng = k.s_rng;
        rc = restore_rows(c, k.rows_bytes, k.rows_hash);
    }
    if (!rc)
        rc = blocks(c, theta, &k);
    /* The look-ahead's rows, read as soon as the chain steps. */
    for (uint64_t j = 0; !rc && j < k.s_len; j++) {
        size_t row = c->access.stream.ahead[(k.s_head + j) % k.s_cap];
        if (row >= c->access.stream.N)
            rc = drift_chain_fail(c, DRIFT_EINVAL,
                                  "--resume: %s is damaged: its data "
                                  "stream's look-ahead holds row %zu of a "
                                  "data set of %zu rows",
                                  path, row, c->access.stream.N);
    }
    if (!rc && io.at != io.len)
        rc = drift_chain_fail(c, DRIFT_EINVAL,
                              "--resume: %s holds more than this build "
                              "reads: it was written by another build",
                              path);
    c->ext.ckpt->io = NULL;
    drift_free(io.buf);
    if (rc)
        return c->failed ? c->failed : rc;
    double now = drift_now();
    c->t_start = now - k.elapsed;
    c->t_warm_end = k.warm_elapsed >= 0 ? c->t_start + k.warm_elapsed : -1;
    c->ext.ckpt->at = now;
    c->ext.ckpt->saved_at = c->iter;
    if (c->output.layout) {
        c->output.layout->t_start = c->t_start;
        c->output.layout->t_warm_end = c->t_warm_end;
    }
    *found = 1;
    return DRIFT_OK;
}

/* ---- the checkpoint extension ------------------------------------------- */

static int ckpt_check(const drift_run_config *cfg, drift_err *e)
{
    if (cfg->ranks && (cfg->ckpt.dir || cfg->ckpt.resume))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--checkpoint-every and --resume: a run across "
                             "MPI ranks is not checkpointed; run without "
                             "them");
    if (cfg->ckpt.dir && !cfg->step.sampler->checkpoint)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--checkpoint-every: sampler %s cannot be "
                             "checkpointed (its plugin has no checkpoint "
                             "callback; docs/writing-a-sampler.md)",
                             cfg->step.sampler->name);
    if (cfg->ckpt.dir && cfg->heldout.model)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--checkpoint-every with --test: held-out "
                             "metrics are not checkpointed; run without "
                             "one of them");
    return DRIFT_OK;
}

static int ckpt_open(drift_chain *c, drift_chain_result *res)
{
    (void)res;
    if (!c->cfg->ckpt.dir)
        return DRIFT_EXT_IDLE;
    drift_ckpt_chain *ck = drift_calloc(1, sizeof *ck);
    if (!ck) {
        drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
        return DRIFT_EXT_STOP;
    }
    ck->rows = -1;
    ck->at = c->t_start;
    ck->saved_at = UINT64_MAX;
    c->ext.ckpt = ck;
    return DRIFT_EXT_ON;
}

static int ckpt_restore(drift_chain *c, int *restored)
{
    if (!c->ext.ckpt || !c->cfg->ckpt.resume)
        return DRIFT_OK;
    return drift_ckpt_restore(c, restored);
}

/* A save every ckpt_iters iterations or ckpt_seconds seconds. */
static int ckpt_after_step(drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    int due = (cfg->ckpt.iters && c->iter % cfg->ckpt.iters == 0) ||
              (cfg->ckpt.seconds > 0 &&
               drift_now() - c->ext.ckpt->at >= cfg->ckpt.seconds);
    return due ? drift_ckpt_save(c) : 0;
}

/* A chain at its end, or stopped by a signal, is saved as it stands, so
 * that --resume goes on from here (or only completes the file). */
static void ckpt_stop(drift_chain *c)
{
    if (!c->failed && c->ext.ckpt->saved_at != c->iter)
        drift_ckpt_save(c);
}

static void ckpt_close(drift_chain *c, drift_chain_result *res, int started)
{
    (void)res;
    (void)started;
    drift_free(c->ext.ckpt);
    c->ext.ckpt = NULL;
}

const drift_run_ext drift_ckpt_ext = {
    .name = "checkpoint",
    .check = ckpt_check,
    .open = ckpt_open,
    .restore = ckpt_restore,
    .after_step = ckpt_after_step,
    .stop = ckpt_stop,
    .close = ckpt_close,
};
