/* oracle.c: the services a sampler calls to learn about the target: full,
 * minibatch and per-row gradients of U, directional derivatives and the
 * generalised-linear shortcuts, each counted in per-datum evaluations, and
 * the chain's random numbers.  Models work in log densities; everything
 * here is turned into the potential U = -log density.  Not for output
 * (output.c) or Poisson events (poisson.c). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "base/lapack.h"
#include "base/msg.h"
#include "base/stop.h"
#include "base/util.h"
#include "chain.h"
#include "precond.h"
#include "ckptio.h"
#include "emit.h"
#include "oracle.h"
#include "poisson.h"
#include "shard.h"
#include "watch.h"

/* Rows evaluated per model call during full passes: small enough that a
 * chunk of rows stays in cache between the forward and backward products. */
#define FULL_CHUNK 256
/* ... unless a call's own O(d) work (the model zeroes the gradient it
 * returns, the pass adds it in) would outweigh its rows': sparse rows of a
 * long parameter vector.  Then chunks grow up to this. */
#define FULL_CHUNK_MAX 65536

/* The point theta has no finite density (or gradient): records why, for
 * the chain's failure message should the sampler give up, and returns
 * DRIFT_ENONFINITE.  The chain itself does not fail: samplers with an
 * accept step reject such points.  The message names the coordinate of
 * largest magnitude, the likeliest culprit. */
static int nonfinite(drift_chain *c, const double *theta, const char *fmt,
                     ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int nonfinite(drift_chain *c, const double *theta, const char *fmt,
                     ...)
{
    char what[400], where[64], name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t big = 0;
    for (size_t j = 1; j < c->d; j++)
        if (fabs(theta[j]) > fabs(theta[big]) || isnan(theta[j]))
            big = j;
    drift_chain_where(c, where, sizeof where);
    if (c->d)
        drift_chain_param_name(c, big, name, sizeof name);
    snprintf(c->nonfinite, sizeof c->nonfinite,
             "%.60s: the log density is not finite at this point (largest "
             "parameter: %.80s = %g unconstrained; %.180s); the sampler "
             "diverged or left the model's support (try a smaller step "
             "size)%s",
             where, c->d ? name : "none", c->d ? theta[big] : 0.0, what,
             drift_watch_note(c));
    return DRIFT_ENONFINITE;
}

/* A model's failure at theta: an overflow (DRIFT_ENUMERIC, or the ABI-2
 * status) is a point without a finite density; anything else fails the
 * chain with the model's message. */
static int model_error(drift_chain *c, const double *theta, int rc,
                       const drift_err *me)
{
    const char *msg = me->msg[0] ? me->msg : "the model failed";
    if (rc == DRIFT_ENUMERIC || rc == DRIFT_ENONFINITE)
        return nonfinite(c, theta, "%s", msg);
    return drift_chain_fail(c, rc ? rc : DRIFT_EINTERNAL, "%s", msg);
}

/* DRIFT_ENONFINITE when v (length d, computed at theta) holds a
 * non-finite entry. */
static int check_finite(drift_chain *c, const double *theta, const double *v,
                        const char *what)
{
    for (size_t k = 0; k < c->d; k++)
        if (!isfinite(v[k])) {
            char name[128];
            drift_chain_param_name(c, k, name, sizeof name);
            return nonfinite(c, theta, "the %s for %s is %g", what, name,
                             v[k]);
        }
    return DRIFT_OK;
}

/* DRIFT_ENONFINITE when one of the n values computed at theta (a
 * potential U, its minibatch estimate, per-row terms, directional
 * derivatives) is NaN or infinite: the model overflowed there.  The
 * message shows sign * value. */
static int check_values(drift_chain *c, const double *theta,
                        const double *U, size_t n, const char *what,
                        double sign)
{
    for (size_t k = 0; U && k < n; k++)
        if (!isfinite(U[k]))
            return nonfinite(c, theta, "the %s is %g", what, sign * U[k]);
    return DRIFT_OK;
}

/* Potentials are reported as the log densities users know. */
static int check_potential(drift_chain *c, const double *theta,
                           const double *U, size_t n, const char *what)
{
    return check_values(c, theta, U, n, what, -1.0);
}

/* check_finite over n gradient vectors (n x d, row-major). */
static int check_finite_rows(drift_chain *c, const double *theta,
                             const double *g, size_t n, const char *what)
{
    for (size_t r = 0; g && r < n; r++) {
        int rc = check_finite(c, theta, g + r * c->d, what);
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}

/* Where an oracle's point has no finite density, its U outputs read
 * +INFINITY (a NaN log density is no density either). */
static void set_infinite(double *U, size_t n)
{
    for (size_t k = 0; U && k < n; k++)
        if (!(U[k] < INFINITY))
            U[k] = INFINITY;
}

/* In setup and init, the oracles watch the budget and stop requests that
 * the step loop watches between steps: a sampler's preparation cannot
 * overrun --passes or --seconds, nor outlast a signal.  The sampler gets
 * DRIFT_ESTOP; the chain fails as stopped by the signal, or, for a budget
 * too small to prepare the sampler, as a usage error. */
static int check_budget(drift_chain *c)
{
    if (c->phase == DRIFT_CHAIN_STEPPING)
        return DRIFT_OK;
    const drift_run_config *cfg = c->cfg;
    const char *what = c->phase == DRIFT_CHAIN_SETUP
                           ? "sampler's run-level setup"
                       : c->phase == DRIFT_CHAIN_MODE
                           ? "mode search of --gradient cv"
                           : "sampler's initialisation";
    if (c->ext.shard) {
        /* Across ranks the group's agreement decides (each oracle's sum
         * carried it), so that every rank stops at the same call: the
         * signal or the --seconds budget of the group's rank 0. */
        int why = drift_shard_stopped(c);
        if (why == 1 && c->stop)
            return drift_chain_fail(c, DRIFT_ESTOP,
                                    "chain %u: stopped by a signal during "
                                    "the %s, before any draw",
                                    c->id, what);
        if (why == 2) {
            drift_chain_fail(c, DRIFT_EINVAL,
                             "chain %u: the %s spent the whole budget of "
                             "--seconds %g before any draw; give a larger "
                             "budget",
                             c->id, what, cfg->budget.seconds);
            return DRIFT_ESTOP;
        }
    } else if (c->stop && drift_stop_requested())
        return drift_chain_fail(c, DRIFT_ESTOP,
                                "chain %u: stopped by a signal during the "
                                "%s, before any draw",
                                c->id, what);
    if (cfg->budget.passes > 0 && c->N &&
        (double)c->grads > cfg->budget.passes * (double)c->N) {
        drift_chain_fail(c, DRIFT_EINVAL,
                         "chain %u: the %s spent the whole budget "
                         "of --passes %g before any draw; give a larger "
                         "budget",
                         c->id, what, cfg->budget.passes);
        return DRIFT_ESTOP;
    }
    if (!c->ext.shard && cfg->budget.seconds > 0 &&
        drift_now() - c->t_start > cfg->budget.seconds) {
        drift_chain_fail(c, DRIFT_EINVAL,
                         "chain %u: the %s spent the whole budget "
                         "of --seconds %g before any draw; give a larger "
                         "budget",
                         c->id, what, cfg->budget.seconds);
        return DRIFT_ESTOP;
    }
    return DRIFT_OK;
}

/* The common ending of a counted oracle: a point without a finite density
 * gets U = +INFINITY in its n outputs; then the budget of setup and
 * init. */
static int finish_eval(drift_chain *c, int rc, double *U, size_t n)
{
    if (rc == DRIFT_ENONFINITE)
        set_infinite(U, n);
    int brc = check_budget(c);
    return rc ? rc : brc;
}

static void advise_at(drift_chain *c, size_t r);

/* Rows a sampler lists itself: each must exist.  A run of at least this
 * many consecutive rows in order is a walk over the data (a total
 * refresh of per-datum snapshots, say), which moves read-ahead as a
 * cyclic stream does: without it, on a store larger than the memory
 * allowed, the walk leaves every page it read mapped and the reads after
 * it thrash the page cache. */
#define WALK_ROWS 32

static int check_rows(drift_chain *c, const size_t *rows, size_t n)
{
    if (n && !rows)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler passed no row indices");
    int walk = n >= WALK_ROWS;
    for (size_t k = 0; k < n; k++) {
        if (rows[k] >= c->N)
            return drift_chain_fail(c, DRIFT_EINVAL,
                                    "sampler asked for row %zu, but the data "
                                    "has %zu rows",
                                    rows[k], c->N);
        walk &= k == 0 || rows[k] == rows[k - 1] + 1;
    }
    if (walk)
        advise_at(c, rows[0]);
    return DRIFT_OK;
}

/* Touches the cache lines of the data rows listed, so that the model's
 * reads of them later find them in cache. */
static void prefetch_rows(const drift_chain *c, const size_t *rows, size_t n)
{
    const drift_data *data = c->cfg->problem.data;
    if (!data || !data->values)
        return;
    size_t bytes = data->n_cols * sizeof(double);
    for (size_t k = 0; k < n; k++) {
        const char *p = (const char *)(data->values + rows[k] * data->row_stride);
        for (size_t off = 0; off < bytes; off += 64)
            __builtin_prefetch(p + off, 0, 1);
    }
}

/* Sum over the rows of l_i and (grad != NULL) grad l_i, in chunks that
 * fit the workspace ws.  grad is overwritten. */
static int sum_rows(drift_chain *c, void *ws, const double *theta,
                    const size_t *rows, size_t first, size_t n, size_t chunk,
                    double *grad, double *ll)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    double total = 0;
    if (grad && n == 0)
        memset(grad, 0, c->d * sizeof *grad);
    for (size_t done = 0; done < n; done += chunk) {
        size_t k = n - done < chunk ? n - done : chunk;
        drift_rows b = {rows ? rows + done : NULL, first + done, k};
        if (!rows)
            drift_advisor_at(&c->access.advisor, first + done);
        double part = 0;
        /* The first chunk writes grad directly; later ones add to it. */
        double *out = grad ? (done == 0 ? grad : c->scratch.g2) : NULL;
        int rc = m->log_lik(m->self, ws, theta, &b, NULL, &part, out, NULL,
                            &me);
        if (rc)
            return model_error(c, theta, rc, &me);
        total += part;
        if (grad && done > 0)
            for (size_t j = 0; j < c->d; j++)
                grad[j] += c->scratch.g2[j];
    }
    if (ll)
        *ll = total;
    return DRIFT_OK;
}

static int prior(drift_chain *c, const double *theta, double *grad,
                 double *lp)
{
    drift_err me = {{0}};
    int rc = c->model->log_prior(c->model->self, c->scratch.ws, theta, lp,
                                 grad, &me);
    return rc ? model_error(c, theta, rc, &me) : DRIFT_OK;
}

static void add_noise(drift_chain *c, double *grad)
{
    if (c->noise.sd > 0)
        for (size_t k = 0; k < c->d; k++)
            grad[k] += c->noise.sd * drift_rng_normal(&c->noise.rng);
}

/* ---- full passes, optionally split across threads ---------------------- */

/* Rows below which a full pass is not worth splitting across threads. */
#define PARALLEL_MIN_ROWS 8192

/* One helper thread's share of a full pass. */
typedef struct full_part {
    const drift_model *m;
    void *ws;
    const double *theta;
    size_t first, n, d, chunk;
    double *grad, *tmp;     /* d each */
    int want_grad;          /* 0: only the sum of l_i is wanted */
    double ll;
    int rc;
    drift_err err;
} full_part;

/* Sums l_i and grad l_i over rows [first, first + n) in chunks of
 * p->chunk rows: the same chunking, so the same arithmetic, as the
 * single-thread pass. */
static void *full_part_run(void *arg)
{
    full_part *p = arg;
    p->ll = 0;
    p->rc = DRIFT_OK;
    for (size_t done = 0; done < p->n; done += p->chunk) {
        size_t k = p->n - done < p->chunk ? p->n - done : p->chunk;
        drift_rows b = {NULL, p->first + done, k};
        double part = 0;
        double *out = p->want_grad ? (done == 0 ? p->grad : p->tmp) : NULL;
        p->rc = p->m->log_lik(p->m->self, p->ws, p->theta, &b, NULL, &part,
                              out, NULL, &p->err);
        if (p->rc)
            return NULL;
        p->ll += part;
        if (p->want_grad && done > 0)
            for (size_t j = 0; j < p->d; j++)
                p->grad[j] += p->tmp[j];
    }
    if (p->want_grad && p->n == 0)
        memset(p->grad, 0, p->d * sizeof *p->grad);
    return NULL;
}

/* The helper threads' workspaces and buffers, made on first use. */
static int full_threads_ready(drift_chain *c, unsigned T)
{
    if (c->full.parts)
        return DRIFT_OK;
    full_part *parts = drift_calloc(T, sizeof *parts);
    if (!parts)
        return DRIFT_ENOMEM;
    c->full.parts = parts;
    c->full.n_parts = T;
    for (unsigned t = 1; t < T; t++) {
        parts[t].ws = c->model->workspace_new(c->model->self, c->full.chunk);
        parts[t].grad = drift_calloc(c->d, sizeof(double));
        parts[t].tmp = drift_calloc(c->d, sizeof(double));
        if (!parts[t].ws || !parts[t].grad || !parts[t].tmp)
            return DRIFT_ENOMEM;
    }
    return DRIFT_OK;
}

static void vr_free(drift_chain *c);

void drift_oracle_release(drift_chain *c)
{
    full_part *parts = c->full.parts;
    for (unsigned t = 1; parts && t < c->full.n_parts; t++) {
        if (parts[t].ws)
            c->model->workspace_free(c->model->self, parts[t].ws);
        drift_free(parts[t].grad);
        drift_free(parts[t].tmp);
    }
    drift_free(parts);
    c->full.parts = NULL;
    c->full.n_parts = 0;
    drift_free(c->cv.x);
    drift_free(c->cv.s);
    drift_free(c->cv.delta);
    c->cv.x = c->cv.s = c->cv.l = c->cv.xd = c->cv.delta = NULL;
    c->cv.x_cap = 0;
    vr_free(c);
    if (c->full.ws)
        c->model->workspace_free(c->model->self, c->full.ws);
    c->full.ws = NULL;
    c->full.chunk = 0;
}

/* Rows per model call in full passes (c->full.chunk), and the workspace
 * that holds them: FULL_CHUNK rows in the chain's own workspace, or, when
 * the parameter vector is long next to what a row reads (taken as the
 * doubles and sparse entries it holds), enough rows that the call's O(d)
 * is an eighth of their work, in a workspace of their own (if it cannot be
 * had, FULL_CHUNK it is). */
static void *full_chunk_ready(drift_chain *c)
{
    if (c->full.chunk)
        return c->full.ws ? c->full.ws : c->scratch.ws;
    const drift_data *data = c->cfg->problem.data;
    double per_row = 1;
    if (data && data->n_rows) {
        per_row = (double)data->n_cols;
        for (size_t k = 0; k < data->n_sparse; k++)
            per_row += 1.5 * (double)data->sparse[k].nnz / (double)data->n_rows;
        if (per_row < 1)
            per_row = 1;
    }
    double want = 8.0 * (double)c->d / per_row;
    if (want > (double)c->N)
        want = (double)c->N;
    if (want > FULL_CHUNK_MAX)
        want = FULL_CHUNK_MAX;
    c->full.chunk = c->scratch.cap < FULL_CHUNK ? c->scratch.cap : FULL_CHUNK;
    if (want > (double)c->scratch.cap) {
        c->full.ws = c->model->workspace_new(c->model->self, (size_t)want);
        if (c->full.ws)
            c->full.chunk = (size_t)want;
    }
    return c->full.ws ? c->full.ws : c->scratch.ws;
}

/* Sum over all N rows of l_i and (grad != NULL) grad l_i.  With --threads
 * T > 1 the rows are cut into T contiguous parts summed in parallel and
 * combined in part order: deterministic for a given T, but in another
 * order than T = 1, so the last bits of the sums differ between them. */
static int full_sum(drift_chain *c, const double *theta, double *grad,
                    double *ll)
{
    void *ws = full_chunk_ready(c);
    size_t chunk = c->full.chunk;
    unsigned T = c->cfg->step.full_threads;
    /* Across ranks, the rows of this rank's share (the model's own). */
    size_t N = c->ext.shard ? c->ext.shard->n : c->N;
    if (T <= 1 || N < PARALLEL_MIN_ROWS)
        return sum_rows(c, ws, theta, NULL, 0, N, chunk, grad, ll);
    if (full_threads_ready(c, T))
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for --threads %u", T);
    full_part *parts = c->full.parts;
    size_t per = N / T;
    pthread_t tid[64];
    unsigned char live[64] = {0};
    for (unsigned t = 1; t < T && t < 64; t++) {
        full_part *p = &parts[t];
        p->m = c->model;
        p->theta = theta;
        p->d = c->d;
        p->first = t * per;
        p->n = t + 1 == T ? N - p->first : per;
        p->chunk = chunk;
        p->want_grad = grad != NULL;
        if (pthread_create(&tid[t], NULL, full_part_run, p) == 0)
            live[t] = 1;
        else
            full_part_run(p); /* no thread: do it here, same result */
    }
    /* This thread takes the first part, with the chain's own workspace. */
    int rc = sum_rows(c, ws, theta, NULL, 0, per, chunk, grad, ll);
    for (unsigned t = 1; t < T && t < 64; t++)
        if (live[t])
            pthread_join(tid[t], NULL);
    if (rc)
        return rc;
    for (unsigned t = 1; t < T && t < 64; t++) {
        full_part *p = &parts[t];
        if (p->rc)
            return model_error(c, theta, p->rc, &p->err);
        *ll += p->ll;
        if (p->want_grad)
            for (size_t j = 0; j < c->d; j++)
                grad[j] += p->grad[j];
    }
    return DRIFT_OK;
}

/* Across ranks: this rank's partial sums of grad l_i (d values, or none
 * when grad is NULL) and of l_i become the group's, with the ranks'
 * statuses agreed (rc is this rank's). */
static int across(drift_chain *c, double *grad, double *ll, int rc)
{
    double *v = c->ext.shard->sums;
    size_t n = grad ? c->d : 0;
    if (grad)
        memcpy(v, grad, c->d * sizeof *v);
    v[n] = *ll;
    rc = drift_shard_combine(c, v, n + 1, rc);
    if (grad)
        memcpy(grad, v, c->d * sizeof *v);
    *ll = v[n];
    return rc;
}

static int svc_grad_full(drift_chain *c, const double *theta, double *grad,
                         double *U)
{
    double ll = 0, lp = 0, u;
    c->grads += c->N;
    int rc = full_sum(c, theta, grad, &ll);
    if (c->ext.shard)
        rc = across(c, grad, &ll, rc);
    if (!rc)
        rc = prior(c, theta, c->scratch.g, &lp);
    if (!rc) {
        for (size_t k = 0; k < c->d; k++)
            grad[k] = -(grad[k] + c->scratch.g[k]);
        u = -(ll + lp);
        if (U)
            *U = u;
        if (!(rc = check_finite(c, theta, grad, "gradient")) &&
            !(rc = check_potential(c, theta, &u, 1, "log density")))
            add_noise(c, grad);
    }
    return finish_eval(c, rc, U, 1);
}

static int svc_U_full(drift_chain *c, const double *theta, double *U)
{
    double ll = 0, lp = 0;
    c->grads += c->N;
    int rc = full_sum(c, theta, NULL, &ll);
    if (c->ext.shard)
        rc = across(c, NULL, &ll, rc);
    if (!rc)
        rc = prior(c, theta, NULL, &lp);
    if (!rc) {
        *U = -(ll + lp);
        rc = check_potential(c, theta, U, 1, "log density");
    }
    return finish_eval(c, rc, U, 1);
}

/* Cyclic access reaches row r (of the N): read-ahead follows it, over
 * this rank's rows when the run spans ranks. */
static void advise_at(drift_chain *c, size_t r)
{
    size_t local = r;
    if (!c->ext.shard || drift_shard_owns(c->ext.shard, r, &local))
        drift_advisor_at(&c->access.advisor, local);
}

static int svc_next_batch(drift_chain *c, size_t n, size_t *rows)
{
    c->access.used = 1;
    if (c->N == 0)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "next_batch: the model has no data rows");
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_stream_take(&c->access.stream, k, rows + done);
        if (c->access.stream.mode == DRIFT_ACCESS_CA)
            advise_at(c, rows[done]);
    }
    return DRIFT_OK;
}

/* The end of a minibatch estimate once the batch's sums are known (acc,
 * of grad l_i; ll, of l_i): scaled by N/n, with the prior's part added,
 * into grad and *U_est. */
static int batch_finish(drift_chain *c, const double *theta, double scale,
                        const double *acc, double ll, double *grad,
                        double *U_est)
{
    double lp;
    int rc = prior(c, theta, grad, &lp);
    if (rc)
        return rc;
    int finite = 1;
    for (size_t k = 0; k < c->d; k++) {
        double g = -(scale * acc[k] + grad[k]);
        grad[k] = g;
        finite &= isfinite(g);
    }
    *U_est = -(scale * ll + lp);
    return finite ? DRIFT_OK : check_finite(c, theta, grad, "gradient");
}

/* grad_batch across ranks: the stream's rows are drawn on every rank
 * alike; each rank sums the rows of its share, and the sums are combined
 * before the prior is added, as one process adds it. */
static int batch_across(drift_chain *c, const double *theta, size_t n,
                        double scale, double *grad, double *U_est,
                        size_t *rows_out)
{
    drift_shard *s = c->ext.shard;
    double *acc = c->scratch.g, ll = 0;
    int rc = DRIFT_OK, any = 0;
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_stream_take(&c->access.stream, k, c->scratch.rows);
        if (c->access.stream.mode == DRIFT_ACCESS_CA)
            advise_at(c, c->scratch.rows[0]);
        if (rows_out)
            memcpy(rows_out + done, c->scratch.rows, k * sizeof(size_t));
        if (rc)
            continue; /* the stream is drawn to its end all the same */
        size_t m = drift_shard_pick(s, c->scratch.rows, k);
        if (m == SIZE_MAX) {
            rc = drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
            continue;
        }
        /* The next minibatch's rows of this share towards the cache. */
        size_t ahead_n, local;
        const size_t *ahead =
            drift_stream_peek(&c->access.stream, k, &ahead_n);
        for (size_t j = 0; j < ahead_n; j++)
            if (drift_shard_owns(s, ahead[j], &local))
                prefetch_rows(c, &local, 1);
        if (m == 0)
            continue;
        double part;
        if ((rc = sum_rows(c, c->scratch.ws, theta, s->local, 0, m, m,
                           any ? grad : acc, &part)))
            continue;
        if (any)
            for (size_t j = 0; j < c->d; j++)
                acc[j] += grad[j];
        any = 1;
        ll += part;
    }
    if (!any)
        memset(acc, 0, c->d * sizeof *acc);
    if ((rc = across(c, acc, &ll, rc)))
        return rc;
    return batch_finish(c, theta, scale, acc, ll, grad, U_est);
}

/* Scratch of --gradient cv, made on first use: theta - theta-hat (d)
 * and, for a generalised linear model whose scalars at the mode are kept,
 * cv.x_cap rows of the design (at most 8 MiB of them), their scalars, terms
 * and products x_i . (theta - theta-hat).  0 when out of memory. */
static int cv_scratch(drift_chain *c, const drift_cv *cv)
{
    if (c->cv.delta)
        return 1;
    size_t rows = 0;
    if (cv->s) {
        rows = ((size_t)8 << 20) / (c->d * sizeof(double));
        rows = rows < 1 ? 1 : rows > c->scratch.cap ? c->scratch.cap : rows;
        c->cv.x = drift_malloc_array(rows, c->d * sizeof(double));
        c->cv.s = drift_malloc_array(rows, 3 * sizeof(double));
        if (!c->cv.x || !c->cv.s)
            return 0;
        c->cv.l = c->cv.s + rows;
        c->cv.xd = c->cv.l + rows;
    }
    c->cv.x_cap = rows;
    c->cv.delta = drift_malloc_array(c->d, sizeof(double));
    return c->cv.delta != NULL;
}

/* The control-variate part of a minibatch of k rows (rows[k]): adds
 * sum_i grad l_i(theta) - grad l_i(theta-hat) to acc and returns in *dll
 * sum_i l_i(theta) - l_i(theta-hat) - grad l_i(theta-hat) . delta, delta =
 * theta - theta-hat: the terms' second-order remainder, whose sum over
 * all rows, added to the first-order term known exactly, estimates U with
 * a variance of order |delta|^4 rather than |delta|^2.  A generalised
 * linear model with the mode's scalars kept needs one evaluation per row,
 * s_i(theta), the gradients' difference being x_i (s_i(theta) -
 * s_i(theta-hat)); any other model two, each row's gradient at theta and
 * at the mode. */
static int cv_rows(drift_chain *c, const drift_cv *cv, const double *theta,
                   const size_t *rows, size_t k, double *acc, double *dll)
{
    const drift_model *m = c->model;
    const double *delta = c->cv.delta;
    drift_err me = {{0}};
    double sum = 0;
    int rc;
    if (cv->s) {
        size_t cap = c->cv.x_cap;
        for (size_t done = 0; done < k; done += cap) {
            size_t j = k - done < cap ? k - done : cap;
            drift_rows b = {rows + done, 0, j};
            if ((rc = m->glm_scalars(m->self, c->scratch.ws, theta, &b,
                                     c->cv.s, c->cv.l, &me)))
                return model_error(c, theta, rc, &me);
            if ((rc = m->glm_design(m->self, &b, c->cv.x, &me)))
                return drift_chain_fail(c, rc, "%s",
                                        me.msg[0] ? me.msg
                                                  : "the model failed");
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)j, (int)c->d, 1.0,
                        c->cv.x, (int)c->d, delta, 1, 0.0, c->cv.xd, 1);
            for (size_t q = 0; q < j; q++) {
                size_t i = rows[done + q];
                sum += c->cv.l[q] - cv->l[i] - cv->s[i] * c->cv.xd[q];
                c->cv.s[q] -= cv->s[i];
            }
            cblas_dgemv(CblasRowMajor, CblasTrans, (int)j, (int)c->d, 1.0,
                        c->cv.x, (int)c->d, c->cv.s, 1, 1.0, acc, 1);
        }
        *dll = sum;
        return DRIFT_OK;
    }
    double at, at_mode;
    if ((rc = sum_rows(c, c->scratch.ws, theta, rows, 0, k, k, c->scratch.g2,
                       &at)))
        return rc;
    for (size_t j = 0; j < c->d; j++)
        acc[j] += c->scratch.g2[j];
    if ((rc = sum_rows(c, c->scratch.ws, cv->mode, rows, 0, k, k,
                       c->scratch.g2, &at_mode)))
        return rc;
    double first = 0;
    for (size_t j = 0; j < c->d; j++) {
        acc[j] -= c->scratch.g2[j];
        first += c->scratch.g2[j] * delta[j];
    }
    *dll = at - at_mode - first;
    return DRIFT_OK;
}

/* grad_batch's work under --gradient cv (centre cv: the run's mode) or
 * svrg (the chain's snapshot): on the next n rows B of the stream,
 * grad U(theta-hat) + (N/n) sum_B (grad U_i(theta) - grad U_i(theta-hat))
 * + grad U_prior(theta), and the same estimate of U. */
static int batch_estimate_cv(drift_chain *c, const drift_cv *cv,
                             const double *theta, size_t n, double *grad,
                             double *U_est, size_t *rows_out)
{
    double scale = (double)c->N / (double)n, lp, dll = 0, first = 0;
    double *acc = c->scratch.g;
    int rc;
    if (!cv_scratch(c, cv))
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for --gradient cv");
    for (size_t k = 0; k < c->d; k++) {
        c->cv.delta[k] = theta[k] - cv->mode[k];
        first += cv->lik_grad[k] * c->cv.delta[k];
    }
    memset(acc, 0, c->d * sizeof *acc);
    c->access.used = 1;
    c->grads += cv->s ? n : 2 * n;
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_stream_take(&c->access.stream, k, c->scratch.rows);
        if (c->access.stream.mode == DRIFT_ACCESS_CA)
            drift_advisor_at(&c->access.advisor, c->scratch.rows[0]);
        if (rows_out)
            memcpy(rows_out + done, c->scratch.rows, k * sizeof(size_t));
        size_t ahead_n;
        const size_t *ahead =
            drift_stream_peek(&c->access.stream, k, &ahead_n);
        prefetch_rows(c, ahead, ahead_n);
        double part;
        if ((rc = cv_rows(c, cv, theta, c->scratch.rows, k, acc, &part)))
            return rc;
        dll += part;
    }
    if ((rc = prior(c, theta, grad, &lp)))
        return rc;
    int finite = 1;
    for (size_t k = 0; k < c->d; k++) {
        double g = -(cv->lik_grad[k] + scale * acc[k] + grad[k]);
        grad[k] = g;
        finite &= isfinite(g);
    }
    *U_est = -(cv->lik_sum + first + scale * dll + lp);
    return finite ? DRIFT_OK : check_finite(c, theta, grad, "gradient");
}

/* ---- --gradient svrg, saga and tmu: estimators with a chain's own
 * state (drift/sampler.h, drift_estimator_services) ---- */

/* What they keep for a chain (made by the estimator service's use, or on
 * the first estimate; freed with the chain). */
struct drift_vr {
    uint64_t count;         /* estimates made */
    uint64_t renewed;       /* the estimate that last renewed the state */
    double age;             /* the last estimate's oldest entry, or -1 */
    int ready;              /* a snapshot taken or a table filled */
    /* svrg: the snapshot point (snap.mode), the likelihood's gradient and
     * value summed over the rows there (or estimated from B of them) */
    drift_cv snap;
    /* saga, tmu: each row's log-likelihood term and gradient (glm: its
     * scalar s_i, grad l_i = s_i x_i) at its last visit, their sums, and
     * with track_age the estimate each entry was taken at */
    int glm;
    double *alpha;          /* N x d, or N scalars (glm) */
    double *alpha_l;        /* N */
    uint64_t *stamp;        /* N, or NULL */
    int accounted;          /* alpha, alpha_l and stamp are the chain's
                               accounted allocations (use()): not freed
                               here */
    double *sum, lsum;      /* d, and the terms' sum */
    double *acc;            /* d scratch */
    double *snew, *lnew, *w, *x; /* scratch.cap each, x scratch.cap x d
                               (the general path's per-row gradients) */
    size_t *brows, bcap;    /* the minibatch's rows, their new scalars or */
    double *bs, *bl, *bg, *bw; /* gradients and terms, the table's changes */
};

static void vr_free(drift_chain *c)
{
    struct drift_vr *v = c->vr;
    if (!v)
        return;
    drift_free(v->snap.mode);
    drift_free(v->snap.lik_grad);
    if (!v->accounted) {
        drift_free(v->alpha);
        drift_free(v->alpha_l);
        drift_free(v->stamp);
    }
    drift_free(v->sum);
    drift_free(v->acc);
    drift_free(v->snew);
    drift_free(v->lnew);
    drift_free(v->w);
    drift_free(v->x);
    drift_free(v->brows);
    drift_free(v->bs);
    drift_free(v->bl);
    drift_free(v->bg);
    drift_free(v->bw);
    drift_free(v);
    c->vr = NULL;
}

static struct drift_vr *vr_of(drift_chain *c)
{
    if (!c->vr && (c->vr = drift_calloc(1, sizeof *c->vr)))
        c->vr->age = -1;
    return c->vr;
}


static int est_oom(drift_chain *c)
{
    return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory for --gradient %s",
                            drift_gradient_name(c->est.kind));
}

static int keeps_table(const drift_chain *c)
{
    return c->est.kind == DRIFT_GRADIENT_SAGA ||
           c->est.kind == DRIFT_GRADIENT_TMU;
}


/* The table's bytes: N scalars and terms (glm) or N x d gradients and N
 * terms, and N stamps with track_age. */
static double table_bytes(const drift_chain *c, int glm)
{
    double N = (double)c->N, per_row = glm ? 1.0 : (double)c->d;
    return 8.0 * N * (per_row + 1 + (c->est.track_age ? 1 : 0));
}

static int model_is_glm(const drift_chain *c)
{
    const drift_model *m = c->model;
    return (m->flags & DRIFT_MODEL_GLM) && m->glm_scalars && m->glm_design;
}

static void *svc_alloc(drift_chain *c, size_t bytes);

/* Everything the estimator keeps but the snapshot point: with accounted,
 * the table through the sampler's accounted memory (so --max-memory
 * refuses it before the first step), else from the heap. */
static int vr_ready(drift_chain *c, int accounted)
{
    struct drift_vr *v = vr_of(c);
    if (!v)
        return est_oom(c);
    size_t N = c->N, d = c->d, cap = c->scratch.cap;
    if (!v->sum) {
        v->sum = drift_calloc(d, sizeof(double));
        v->acc = drift_calloc(d, sizeof(double));
        v->snew = drift_malloc_array(cap, sizeof(double));
        v->lnew = drift_malloc_array(cap, sizeof(double));
        v->w = drift_malloc_array(cap, sizeof(double));
        if (!v->sum || !v->acc || !v->snew || !v->lnew || !v->w)
            return est_oom(c);
    }
    if (!keeps_table(c) || v->alpha)
        return DRIFT_OK;
    v->glm = model_is_glm(c);
    double bytes = table_bytes(c, v->glm);
    if (bytes > (double)drift_memory_limit() / 4)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "--gradient %s keeps each row's gradient: "
                                "%zu rows x %.0f values need %.3g GB a "
                                "chain, more than a quarter of the memory "
                                "this machine allows; use --gradient svrg "
                                "or cv, which keep none",
                                drift_gradient_name(c->est.kind), N, v->glm ? 1.0 : (double)d,
                                bytes / 1e9);
    size_t per_row = v->glm ? 1 : d;
    if (!v->glm && !(v->x = drift_malloc_array(cap, d * sizeof(double))))
        return est_oom(c);
    if (accounted) {
        /* One block, so that a refusal names the whole size. */
        char *p = svc_alloc(c, (size_t)bytes);
        if (!p)
            return c->failed ? c->failed : DRIFT_ENOMEM;
        v->alpha = (double *)p;
        v->alpha_l = v->alpha + N * per_row;
        v->stamp = c->est.track_age ? (uint64_t *)(v->alpha_l + N) : NULL;
        v->accounted = 1;
        return DRIFT_OK;
    }
    v->alpha = drift_malloc_array(N, per_row * sizeof(double));
    v->alpha_l = drift_malloc_array(N, sizeof(double));
    v->stamp = c->est.track_age ? drift_malloc_array(N, sizeof(uint64_t))
                                : NULL;
    if (!v->alpha || !v->alpha_l || (c->est.track_age && !v->stamp))
        return est_oom(c);
    return DRIFT_OK;
}

/* The log-likelihood terms of k rows at theta into v->lnew and their
 * gradients into v->x (k x d), or for a generalised linear model their
 * scalars into v->snew. */
static int rows_at(drift_chain *c, struct drift_vr *v, const double *theta,
                   const size_t *rows, size_t k)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int rc;
    drift_rows b = {rows, 0, k};
    if (v->glm)
        rc = m->glm_scalars(m->self, c->scratch.ws, theta, &b, v->snew,
                            v->lnew, &me);
    else
        rc = m->log_lik(m->self, c->scratch.ws, theta, &b, v->lnew, NULL, NULL,
                        v->x, &me);
    return rc ? model_error(c, theta, rc, &me) : DRIFT_OK;
}

static int add_design(drift_chain *c, const size_t *rows, size_t n,
                      const double *w, const size_t *pos, double *out);

/* svrg's renewal: the snapshot at theta, its sums over all rows (counted
 * N) or estimated from the next B rows of the stream (counted B). */
static int svrg_renew(drift_chain *c, struct drift_vr *v, const double *theta)
{
    size_t d = c->d, N = c->N, B = (size_t)c->est.snapshot_rows;
    if (!v->snap.mode) {
        v->snap.d = d;
        v->snap.mode = drift_malloc_array(d, sizeof(double));
        v->snap.lik_grad = drift_malloc_array(d, sizeof(double));
        if (!v->snap.mode || !v->snap.lik_grad)
            return est_oom(c);
    }
    memcpy(v->snap.mode, theta, d * sizeof *theta);
    int rc;
    if (B == 0 || B >= N) {
        c->grads += N;
        rc = full_sum(c, theta, v->snap.lik_grad, &v->snap.lik_sum);
    } else {
        double scale = (double)N / (double)B, ll = 0;
        memset(v->snap.lik_grad, 0, d * sizeof(double));
        c->access.used = 1;
        c->grads += B;
        rc = DRIFT_OK;
        for (size_t done = 0; done < B && !rc; done += c->scratch.cap) {
            size_t k = B - done < c->scratch.cap ? B - done : c->scratch.cap;
            double part;
            drift_stream_take(&c->access.stream, k, c->scratch.rows);
            if (!(rc = sum_rows(c, c->scratch.ws, theta, c->scratch.rows, 0, k,
                                k, v->acc, &part))) {
                ll += part;
                for (size_t j = 0; j < d; j++)
                    v->snap.lik_grad[j] += v->acc[j];
            }
        }
        for (size_t j = 0; j < d; j++)
            v->snap.lik_grad[j] *= scale;
        v->snap.lik_sum = scale * ll;
    }
    if (rc)
        return rc;
    v->snap.ready = 1;
    return check_finite(c, theta, v->snap.lik_grad, "gradient");
}

/* saga's and tmu's renewal: every row's term and gradient at theta (one
 * full pass, counted N). */
static int table_renew(drift_chain *c, struct drift_vr *v,
                       const double *theta)
{
    size_t N = c->N, d = c->d, cap = c->scratch.cap;
    int rc = DRIFT_OK;
    v->lsum = 0;
    memset(v->sum, 0, d * sizeof(double));
    v->ready = 0;
    c->grads += N;
    for (size_t first = 0; first < N && !rc; first += cap) {
        size_t k = N - first < cap ? N - first : cap;
        for (size_t q = 0; q < k; q++)
            c->scratch.rows[q] = first + q;
        if ((rc = rows_at(c, v, theta, c->scratch.rows, k)))
            break;
        for (size_t q = 0; q < k; q++) {
            v->alpha_l[first + q] = v->lnew[q];
            v->lsum += v->lnew[q];
        }
        if (v->glm) {
            memcpy(v->alpha + first, v->snew, k * sizeof(double));
            rc = add_design(c, c->scratch.rows, k, v->snew, NULL, v->sum);
        } else {
            memcpy(v->alpha + first * d, v->x, k * d * sizeof(double));
            for (size_t q = 0; q < k; q++)
                for (size_t j = 0; j < d; j++)
                    v->sum[j] += v->x[q * d + j];
        }
    }
    if (v->stamp)
        for (size_t i = 0; i < N; i++)
            v->stamp[i] = v->count;
    return rc;
}

/* The minibatch's rows and their new values, kept until the estimate is
 * made (n rows; glm: scalars, else n x d gradients). */
static int saga_batch_room(drift_chain *c, struct drift_vr *v, size_t n)
{
    if (n <= v->bcap)
        return DRIFT_OK;
    drift_free(v->brows);
    drift_free(v->bs);
    drift_free(v->bl);
    drift_free(v->bg);
    drift_free(v->bw);
    v->bcap = 0;
    v->brows = drift_malloc_array(n, sizeof(size_t));
    v->bs = drift_malloc_array(n, sizeof(double));
    v->bl = drift_malloc_array(n, sizeof(double));
    v->bw = drift_malloc_array(n, sizeof(double));
    v->bg = v->glm ? NULL : drift_malloc_array(n, c->d * sizeof(double));
    if (!v->brows || !v->bs || !v->bl || !v->bw || (!v->glm && !v->bg))
        return est_oom(c);
    v->bcap = n;
    return DRIFT_OK;
}

/* The oldest table entry's age, in estimates (-1: not kept). */
static double table_age(const drift_chain *c, const struct drift_vr *v)
{
    if (!v->stamp)
        return -1;
    uint64_t oldest = v->count;
    for (size_t i = 0; i < c->N; i++)
        if (v->stamp[i] < oldest)
            oldest = v->stamp[i];
    return (double)(v->count - oldest);
}

/* saga's and tmu's ordinary estimate: on the next n rows B,
 * sum_i alpha_i + (N/n) sum_B (grad l_i(theta) - alpha_i) with the prior,
 * as minus U's gradient, and the same estimate of U from the terms, every
 * alpha as it was before the minibatch (so that the estimate is
 * unbiased); then each row of B takes its new gradient as its alpha (a
 * row drawn twice changes the sums once). */
static int table_estimate(drift_chain *c, struct drift_vr *v,
                          const double *theta, size_t n, double *grad,
                          double *U_est, size_t *rows_out)
{
    int rc;
    if ((rc = saga_batch_room(c, v, n)))
        return rc;
    size_t d = c->d;
    double scale = (double)c->N / (double)n, dl = 0, lp;
    double *acc = v->acc; /* sum_B (grad l_i - alpha_i) */
    memset(acc, 0, d * sizeof *acc);
    c->access.used = 1;
    c->grads += n;
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_stream_take(&c->access.stream, k, c->scratch.rows);
        if (c->access.stream.mode == DRIFT_ACCESS_CA)
            drift_advisor_at(&c->access.advisor, c->scratch.rows[0]);
        if (rows_out)
            memcpy(rows_out + done, c->scratch.rows, k * sizeof(size_t));
        memcpy(v->brows + done, c->scratch.rows, k * sizeof(size_t));
        if ((rc = rows_at(c, v, theta, c->scratch.rows, k)))
            return rc;
        const size_t *rows = c->scratch.rows;
        for (size_t q = 0; q < k; q++) {
            v->bl[done + q] = v->lnew[q];
            dl += v->lnew[q] - v->alpha_l[rows[q]];
        }
        if (v->glm) {
            for (size_t q = 0; q < k; q++) {
                v->bs[done + q] = v->snew[q];
                v->w[q] = v->snew[q] - v->alpha[rows[q]];
            }
            if ((rc = add_design(c, rows, k, v->w, NULL, acc)))
                return rc;
        } else {
            memcpy(v->bg + done * d, v->x, k * d * sizeof(double));
            for (size_t q = 0; q < k; q++) {
                const double *al = v->alpha + rows[q] * d;
                for (size_t j = 0; j < d; j++)
                    acc[j] += v->x[q * d + j] - al[j];
            }
        }
    }
    if ((rc = prior(c, theta, grad, &lp)))
        return rc;
    int finite = 1;
    for (size_t k = 0; k < d; k++) {
        double g = -(v->sum[k] + scale * acc[k] + grad[k]);
        grad[k] = g;
        finite &= isfinite(g);
    }
    *U_est = -(v->lsum + scale * dl + lp);
    if (!finite)
        return check_finite(c, theta, grad, "gradient");
    /* The table's update, row by row (a repeated row's second change is
     * zero). */
    for (size_t q = 0; q < n; q++) {
        size_t i = v->brows[q];
        v->lsum += v->bl[q] - v->alpha_l[i];
        v->alpha_l[i] = v->bl[q];
        if (v->stamp)
            v->stamp[i] = v->count;
    }
    if (v->glm) {
        for (size_t q = 0; q < n; q++) {
            size_t i = v->brows[q];
            v->bw[q] = v->bs[q] - v->alpha[i];
            v->alpha[i] = v->bs[q];
        }
        return add_design(c, v->brows, n, v->bw, NULL, v->sum);
    }
    for (size_t q = 0; q < n; q++) {
        double *al = v->alpha + v->brows[q] * d;
        const double *gn = v->bg + q * d;
        for (size_t j = 0; j < d; j++) {
            v->sum[j] += gn[j] - al[j];
            al[j] = gn[j];
        }
    }
    return DRIFT_OK;
}

/* grad_batch's work under svrg, saga and tmu: a renewal (the first
 * estimate, and for svrg and tmu every period-th) takes the snapshot or
 * the table at theta and returns the sum it made, drawing no minibatch;
 * any other estimate corrects the kept sums on the next n rows. */
static int batch_estimate_vr(drift_chain *c, const double *theta, size_t n,
                             double *grad, double *U_est, size_t *rows_out)
{
    int rc;
    if ((rc = vr_ready(c, 0)))
        return rc;
    struct drift_vr *v = c->vr;
    int table = keeps_table(c);
    int renew = !v->ready ||
                (c->est.kind != DRIFT_GRADIENT_SAGA &&
                 v->count - v->renewed >= drift_estimator_period(c, n));
    if (renew) {
        v->renewed = v->count;
        v->ready = 0;
        rc = table ? table_renew(c, v, theta) : svrg_renew(c, v, theta);
        if (rc)
            return rc;
        v->ready = 1;
        v->age = 0;
        double lp;
        if ((rc = prior(c, theta, grad, &lp)))
            return rc;
        const double *sum = table ? v->sum : v->snap.lik_grad;
        for (size_t k = 0; k < c->d; k++)
            grad[k] = -(sum[k] + grad[k]);
        *U_est = -((table ? v->lsum : v->snap.lik_sum) + lp);
        if (rows_out)
            for (size_t q = 0; q < n; q++)
                rows_out[q] = SIZE_MAX;
        v->count++;
        return check_finite(c, theta, grad, "gradient");
    }
    if (table) {
        v->age = table_age(c, v);
        rc = table_estimate(c, v, theta, n, grad, U_est, rows_out);
    } else {
        v->age = (double)(v->count - v->renewed);
        rc = batch_estimate_cv(c, &v->snap, theta, n, grad, U_est, rows_out);
    }
    v->count++;
    return rc;
}

/* The estimator's part of a chain's checkpoint, both directions: its
 * counters, the snapshot, the table and its stamps (as made; a chain that
 * has made no estimate yet has none). */
int drift_oracle_estimator_ckpt(drift_chain *c)
{
    if (c->est.kind != DRIFT_GRADIENT_SVRG && !keeps_table(c))
        return DRIFT_OK;
    int rc = vr_ready(c, 0);
    if (rc)
        return rc;
    struct drift_vr *v = c->vr;
    size_t d = c->d, N = c->N;
    if (!v->snap.mode && c->est.kind == DRIFT_GRADIENT_SVRG) {
        v->snap.d = d;
        v->snap.mode = drift_calloc(d, sizeof(double));
        v->snap.lik_grad = drift_calloc(d, sizeof(double));
        if (!v->snap.mode || !v->snap.lik_grad)
            return est_oom(c);
    }
    int64_t head[3] = {(int64_t)v->count, (int64_t)v->renewed, v->ready};
    if ((rc = drift_ckpt_block(c, head, sizeof head)))
        return rc;
    v->count = (uint64_t)head[0];
    v->renewed = (uint64_t)head[1];
    v->ready = (int)head[2];
    if (c->est.kind == DRIFT_GRADIENT_SVRG) {
        double sum = v->snap.lik_sum;
        if ((rc = drift_ckpt_block(c, v->snap.mode, d * sizeof(double))) ||
            (rc = drift_ckpt_block(c, v->snap.lik_grad, d * sizeof(double))) ||
            (rc = drift_ckpt_block(c, &sum, sizeof sum)))
            return rc;
        v->snap.lik_sum = sum;
        v->snap.ready = v->ready;
        return DRIFT_OK;
    }
    double lsum = v->lsum;
    if ((rc = drift_ckpt_block(c, v->alpha,
                               N * (v->glm ? 1 : d) * sizeof(double))) ||
        (rc = drift_ckpt_block(c, v->alpha_l, N * sizeof(double))) ||
        (rc = drift_ckpt_block(c, v->sum, d * sizeof(double))) ||
        (rc = drift_ckpt_block(c, &lsum, sizeof lsum)))
        return rc;
    v->lsum = lsum;
    if (v->stamp)
        rc = drift_ckpt_block(c, v->stamp, N * sizeof(uint64_t));
    return rc;
}

/* Whether grad_batch centres its estimates at the run's mode. */
static int cv_active(const drift_chain *c)
{
    return c->run && c->run->cv.ready && c->est.kind == DRIFT_GRADIENT_CV;
}

/* Whether the run found a mode (under cv, or for the engine's plan): its
 * curvature is where a metric starts. */
static int mode_known(const drift_chain *c)
{
    return c->run && c->run->cv.ready;
}

/* grad_batch's work: the estimate of grad U (and U) on the next n rows
 * of the stream. */
static int batch_estimate(drift_chain *c, const double *theta, size_t n,
                          double *grad, double *U_est, size_t *rows_out)
{
    int rc;
    double lp, ll = 0;
    if (c->N > 0 && n > 0 && cv_active(c))
        return batch_estimate_cv(c, &c->run->cv, theta, n, grad, U_est,
                                 rows_out);
    if (c->N > 0 && n > 0 && (c->est.kind == DRIFT_GRADIENT_SVRG ||
                              keeps_table(c)))
        return batch_estimate_vr(c, theta, n, grad, U_est, rows_out);
    if (c->N == 0 || n == 0) {
        /* A data-free target: the prior is the whole potential. */
        if ((rc = prior(c, theta, grad, &lp)))
            return rc;
        for (size_t k = 0; k < c->d; k++)
            grad[k] = -grad[k];
        *U_est = -lp;
        return check_finite(c, theta, grad, "gradient");
    }
    double scale = (double)c->N / (double)n;
    double *acc = c->scratch.g; /* sum of grad l_i over the minibatch */
    c->access.used = 1;
    c->grads += n;
    if (c->ext.shard)
        return batch_across(c, theta, n, scale, grad, U_est, rows_out);
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_stream_take(&c->access.stream, k, c->scratch.rows);
        if (c->access.stream.mode == DRIFT_ACCESS_CA)
            drift_advisor_at(&c->access.advisor, c->scratch.rows[0]);
        if (rows_out)
            memcpy(rows_out + done, c->scratch.rows, k * sizeof(size_t));
        /* Bring the next minibatch's rows towards the cache while this
         * one is evaluated. */
        size_t ahead_n;
        const size_t *ahead =
            drift_stream_peek(&c->access.stream, k, &ahead_n);
        prefetch_rows(c, ahead, ahead_n);
        double part;
        if (done == 0) {
            if ((rc = sum_rows(c, c->scratch.ws, theta, c->scratch.rows, 0, k,
                               k, acc, &part)))
                return rc;
        } else {
            if ((rc = sum_rows(c, c->scratch.ws, theta, c->scratch.rows, 0, k,
                               k, grad, &part)))
                return rc;
            for (size_t j = 0; j < c->d; j++)
                acc[j] += grad[j];
        }
        ll += part;
    }
    if ((rc = prior(c, theta, grad, &lp)))
        return rc;
    int finite = 1;
    for (size_t k = 0; k < c->d; k++) {
        double g = -(scale * acc[k] + grad[k]);
        grad[k] = g;
        finite &= isfinite(g);
    }
    *U_est = -(scale * ll + lp);
    return finite ? DRIFT_OK : check_finite(c, theta, grad, "gradient");
}

static int svc_grad_batch(drift_chain *c, const double *theta, size_t n,
                          double *grad, double *U_est, size_t *rows_out)
{
    double u = 0;
    int rc = batch_estimate(c, theta, n, grad, &u, rows_out);
    if (!rc)
        rc = check_potential(c, theta, &u, 1,
                             "minibatch estimate of the log density");
    if (!rc)
        add_noise(c, grad);
    if (U_est)
        *U_est = u;
    return finish_eval(c, rc, U_est, 1);
}

static void svc_warn(drift_chain *c, const char *msg);

/* --grad-noise perturbs the estimates of grad U (grad_full, grad_batch);
 * per-row gradients are left exact, since the noise's scale is defined for
 * the whole estimate.  Say so once to a sampler that uses them. */
static void note_rows_exact(drift_chain *c)
{
    if (c->noise.sd > 0)
        svc_warn(c, "--grad-noise applies to grad_full and grad_batch only; "
                    "this sampler's per-row gradients (grad_rows, grad_sum) "
                    "carry no injected noise");
}

/* --gradient cv centres grad_batch's estimates only: a sampler (without
 * DRIFT_SAMPLER_OWN_ESTIMATES, so a third party's) that also builds
 * estimates from per-row values is told once that those stay plain. */
static void note_rows_plain(drift_chain *c, const char *service)
{
    if (cv_active(c) && c->phase == DRIFT_CHAIN_STEPPING) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "--gradient cv centres grad_batch's estimates only; what "
                 "this sampler builds from %s stays the plain estimate",
                 service);
        svc_warn(c, msg);
    }
}

static int svc_grad_prior(drift_chain *c, const double *theta, double *grad,
                          double *U0)
{
    double lp;
    int rc = prior(c, theta, grad, &lp);
    if (!rc) {
        if (grad)
            for (size_t k = 0; k < c->d; k++)
                grad[k] = -grad[k];
        double u = -lp;
        if (U0)
            *U0 = u;
        if (!(rc = check_potential(c, theta, &u, 1, "log prior density")) &&
            grad)
            rc = check_finite(c, theta, grad, "gradient of the prior");
    }
    if (rc == DRIFT_ENONFINITE)
        set_infinite(U0, 1);
    return rc;
}

/* ---- per-row services across ranks ---------------------------------------
 * Each rank evaluates the requested rows of its share into the front of
 * the output, moves them to their places and fills the other places with
 * -0.0 (drift_shard_scatter); the sum over the group then puts every
 * row's own value, unchanged, on every rank. */

/* The rows of rows[0 .. n) in this rank's share (shard pick), or SIZE_MAX
 * with the chain failed when out of memory. */
static size_t pick_rows(drift_chain *c, const size_t *rows, size_t n)
{
    size_t k = drift_shard_pick(c->ext.shard, rows, n);
    if (k == SIZE_MAX)
        drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    return k;
}

/* After a local failure: the rank's rows read NaN, so that they read
 * +INFINITY as terms once combined (a failed model call knows no term of
 * its rows; the other ranks' rows keep theirs). */
static void nan_rows(const drift_shard *s, double *U, size_t k)
{
    for (size_t j = 0; U && j < k; j++)
        U[s->pos[j]] = NAN;
}

static int grad_rows_across(drift_chain *c, const double *theta,
                            const size_t *rows, size_t n, double *grads,
                            double *U_rows)
{
    drift_shard *s = c->ext.shard;
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int rc = DRIFT_OK;
    size_t k = pick_rows(c, rows, n), mine = k;
    if (k == SIZE_MAX)
        rc = c->failed, k = mine = 0;
    for (size_t done = 0; done < k && !rc; done += c->scratch.cap) {
        size_t q = k - done < c->scratch.cap ? k - done : c->scratch.cap;
        drift_rows b = {s->local + done, 0, q};
        double *g = grads ? grads + done * c->d : NULL;
        double *u = U_rows ? U_rows + done : NULL;
        if ((rc = m->log_lik(m->self, c->scratch.ws, theta, &b, u, NULL, NULL,
                             g, &me))) {
            rc = model_error(c, theta, rc, &me);
            break;
        }
        if (g)
            for (size_t j = 0; j < q * c->d; j++)
                g[j] = -g[j];
        if (u)
            for (size_t j = 0; j < q; j++)
                u[j] = -u[j];
    }
    size_t kept = rc ? 0 : k;
    if (grads)
        drift_shard_scatter(s, grads, n, kept, c->d);
    if (U_rows) {
        drift_shard_scatter(s, U_rows, n, kept, 1);
        if (rc)
            nan_rows(s, U_rows, mine);
    }
    /* The first sum agrees on the status; the second (the terms, when
     * both are asked for) follows unless the chain failed, which every
     * rank then knows alike. */
    if (grads)
        rc = drift_shard_combine(c, grads, n * c->d, rc);
    if (U_rows && (!grads || rc == DRIFT_OK || rc == DRIFT_ENONFINITE)) {
        int urc = drift_shard_combine(c, U_rows, n, grads ? DRIFT_OK : rc);
        if (!grads)
            rc = urc;
    }
    if (!rc && !(rc = check_finite_rows(c, theta, grads, n,
                                        "per-row gradient")))
        rc = check_potential(c, theta, U_rows, n, "per-row log density");
    if (rc == DRIFT_ENONFINITE)
        set_infinite(U_rows, n);
    return finish_eval(c, rc, NULL, 0);
}

static int grad_sum_across(drift_chain *c, const double *theta,
                           const size_t *rows, size_t n, double *grad,
                           double *U_sum)
{
    drift_shard *s = c->ext.shard;
    double ll = 0;
    int rc = DRIFT_OK;
    size_t k = pick_rows(c, rows, n);
    if (k == SIZE_MAX) {
        rc = c->failed;
        memset(grad, 0, c->d * sizeof *grad);
    } else {
        rc = sum_rows(c, c->scratch.ws, theta, s->local, 0, k, c->scratch.cap,
                      grad, &ll);
    }
    if (!(rc = across(c, grad, &ll, rc))) {
        for (size_t j = 0; j < c->d; j++)
            grad[j] = -grad[j];
        double u = -ll;
        if (U_sum)
            *U_sum = u;
        if (!(rc = check_finite(c, theta, grad, "gradient")))
            rc = check_potential(c, theta, &u, 1, "log density of the rows");
    }
    return finish_eval(c, rc, U_sum, 1);
}

/* jvp_rows and glm_scalars across ranks: one value per row, from
 * eval(c, theta, v, b, out) over a chunk of this rank's rows, negated. */
typedef int (*row_eval)(drift_chain *c, const double *theta, const double *v,
                        const drift_rows *b, double *out, drift_err *me);

static int values_across(drift_chain *c, const double *theta, const double *v,
                         const size_t *rows, size_t n, double *out,
                         size_t cap, row_eval eval, const char *what)
{
    drift_shard *s = c->ext.shard;
    drift_err me = {{0}};
    int rc = DRIFT_OK;
    size_t k = pick_rows(c, rows, n);
    if (k == SIZE_MAX)
        rc = c->failed, k = 0;
    for (size_t done = 0; done < k && !rc; done += cap) {
        size_t q = k - done < cap ? k - done : cap;
        drift_rows b = {s->local + done, 0, q};
        if ((rc = eval(c, theta, v, &b, out + done, &me))) {
            rc = model_error(c, theta, rc, &me);
            break;
        }
        for (size_t j = 0; j < q; j++)
            out[done + j] = -out[done + j];
    }
    drift_shard_scatter(s, out, n, rc ? 0 : k, 1);
    rc = drift_shard_combine(c, out, n, rc);
    if (!rc)
        rc = check_values(c, theta, out, n, what, 1.0);
    return finish_eval(c, rc, NULL, 0);
}

/* v . grad l_i of a chunk: the model's jvp, or its per-row gradients. */
static int eval_jvp(drift_chain *c, const double *theta, const double *v,
                    const drift_rows *b, double *out, drift_err *me)
{
    const drift_model *m = c->model;
    if (m->jvp)
        return m->jvp(m->self, c->scratch.ws, theta, v, b, out, NULL, me);
    int rc = m->log_lik(m->self, c->scratch.ws, theta, b, NULL, NULL, NULL,
                        c->scratch.rows_grad, me);
    if (rc)
        return rc;
    for (size_t j = 0; j < b->n; j++) {
        const double *g = c->scratch.rows_grad + j * c->d;
        double acc = 0;
        for (size_t q = 0; q < c->d; q++)
            acc += g[q] * v[q];
        out[j] = acc;
    }
    return DRIFT_OK;
}

static int eval_glm(drift_chain *c, const double *theta, const double *v,
                    const drift_rows *b, double *out, drift_err *me)
{
    (void)v;
    const drift_model *m = c->model;
    return m->glm_scalars(m->self, c->scratch.ws, theta, b, out, NULL, me);
}

static int design_across(drift_chain *c, const size_t *rows, size_t n,
                         double *x)
{
    drift_shard *s = c->ext.shard;
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int rc = DRIFT_OK;
    size_t k = pick_rows(c, rows, n);
    if (k == SIZE_MAX)
        rc = c->failed, k = 0;
    drift_rows b = {s->local, 0, k};
    if (!rc && k && (rc = m->glm_design(m->self, &b, x, &me)))
        rc = drift_chain_fail(c, rc, "%s",
                              me.msg[0] ? me.msg : "the model failed");
    drift_shard_scatter(s, x, n, rc ? 0 : k, c->d);
    return drift_shard_combine(c, x, n * c->d, rc);
}

static int svc_grad_rows(drift_chain *c, const double *theta,
                         const size_t *rows, size_t n, double *grads,
                         double *U_rows)
{
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    note_rows_exact(c);
    note_rows_plain(c, "grad_rows");
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int model_failed = 0;
    c->grads += n;
    if (c->ext.shard)
        return grad_rows_across(c, theta, rows, n, grads, U_rows);
    for (size_t done = 0; done < n && !rc; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_rows b = {rows + done, 0, k};
        double *g = grads ? grads + done * c->d : NULL;
        double *u = U_rows ? U_rows + done : NULL;
        if ((rc = m->log_lik(m->self, c->scratch.ws, theta, &b, u, NULL, NULL,
                             g, &me))) {
            rc = model_error(c, theta, rc, &me);
            model_failed = 1;
            break;
        }
        if (g)
            for (size_t j = 0; j < k * c->d; j++)
                g[j] = -g[j];
        if (u)
            for (size_t j = 0; j < k; j++)
                u[j] = -u[j];
    }
    if (!rc && !(rc = check_finite_rows(c, theta, grads, n,
                                        "per-row gradient")))
        rc = check_potential(c, theta, U_rows, n, "per-row log density");
    /* After a model failure no row's term is known: all read +INFINITY. */
    if (rc == DRIFT_ENONFINITE && U_rows && model_failed)
        for (size_t k = 0; k < n; k++)
            U_rows[k] = INFINITY;
    else if (rc == DRIFT_ENONFINITE)
        set_infinite(U_rows, n);
    return finish_eval(c, rc, NULL, 0);
}

static int svc_grad_sum(drift_chain *c, const double *theta,
                        const size_t *rows, size_t n, double *grad,
                        double *U_sum)
{
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    note_rows_exact(c);
    note_rows_plain(c, "grad_sum");
    double ll = 0;
    c->grads += n;
    if (c->ext.shard)
        return grad_sum_across(c, theta, rows, n, grad, U_sum);
    if (!(rc = sum_rows(c, c->scratch.ws, theta, rows, 0, n, c->scratch.cap,
                        grad, &ll))) {
        for (size_t k = 0; k < c->d; k++)
            grad[k] = -grad[k];
        double u = -ll;
        if (U_sum)
            *U_sum = u;
        if (!(rc = check_finite(c, theta, grad, "gradient")))
            rc = check_potential(c, theta, &u, 1, "log density of the rows");
    }
    return finish_eval(c, rc, U_sum, 1);
}

/* Scratch for per-row gradients in the jvp fallback: at most 64 MiB, so
 * wide models evaluate fewer rows at a time. */
static size_t jvp_chunk(drift_chain *c)
{
    if (!c->scratch.rows_grad) {
        size_t rows = ((size_t)64 << 20) / (c->d * sizeof(double));
        if (rows < 1)
            rows = 1;
        if (rows > c->scratch.cap)
            rows = c->scratch.cap;
        c->scratch.rows_grad = drift_malloc_array(rows, c->d * sizeof(double));
        if (!c->scratch.rows_grad)
            return 0;
        c->scratch.rows_grad_cap = rows;
    }
    return c->scratch.rows_grad_cap;
}

static int svc_jvp_rows(drift_chain *c, const double *theta, const double *v,
                        const size_t *rows, size_t n, double *out)
{
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    note_rows_plain(c, "jvp_rows");
    const drift_model *m = c->model;
    drift_err me = {{0}};
    size_t cap = m->jvp ? c->scratch.cap : jvp_chunk(c);
    if (cap == 0)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for per-row gradients");
    c->grads += n;
    if (c->ext.shard)
        return values_across(c, theta, v, rows, n, out, cap, eval_jvp,
                             "directional derivative");
    for (size_t done = 0; done < n; done += cap) {
        size_t k = n - done < cap ? n - done : cap;
        drift_rows b = {rows + done, 0, k};
        if (m->jvp) {
            if ((rc = m->jvp(m->self, c->scratch.ws, theta, v, &b, out + done,
                             NULL, &me)))
                return finish_eval(c, model_error(c, theta, rc, &me), NULL,
                                   0);
            for (size_t j = 0; j < k; j++)
                out[done + j] = -out[done + j];
        } else {
            if ((rc = m->log_lik(m->self, c->scratch.ws, theta, &b, NULL, NULL,
                                 NULL, c->scratch.rows_grad, &me)))
                return finish_eval(c, model_error(c, theta, rc, &me), NULL,
                                   0);
            for (size_t j = 0; j < k; j++) {
                const double *g = c->scratch.rows_grad + j * c->d;
                double s = 0;
                for (size_t q = 0; q < c->d; q++)
                    s += g[q] * v[q];
                out[done + j] = -s;
            }
        }
    }
    rc = check_values(c, theta, out, n, "directional derivative", 1.0);
    return finish_eval(c, rc, NULL, 0);
}

static int svc_glm_scalars(drift_chain *c, const double *theta,
                           const size_t *rows, size_t n, double *s)
{
    const drift_model *m = c->model;
    if (!(m->flags & DRIFT_MODEL_GLM) || !m->glm_scalars)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "glm_scalars: the model is not in "
                                "generalised linear form");
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    note_rows_plain(c, "glm_scalars");
    drift_err me = {{0}};
    c->grads += n;
    if (c->ext.shard)
        return values_across(c, theta, NULL, rows, n, s, c->scratch.cap,
                             eval_glm, "per-row gradient scalar");
    for (size_t done = 0; done < n; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_rows b = {rows + done, 0, k};
        if ((rc = m->glm_scalars(m->self, c->scratch.ws, theta, &b, s + done,
                                 NULL, &me)))
            return finish_eval(c, model_error(c, theta, rc, &me), NULL, 0);
        for (size_t j = 0; j < k; j++)
            s[done + j] = -s[done + j];
    }
    rc = check_values(c, theta, s, n, "per-row gradient scalar", 1.0);
    return finish_eval(c, rc, NULL, 0);
}

static int svc_glm_design(drift_chain *c, const size_t *rows, size_t n,
                          double *x)
{
    const drift_model *m = c->model;
    if (!(m->flags & DRIFT_MODEL_GLM) || !m->glm_design)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "glm_design: the model is not in "
                                "generalised linear form");
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    if (c->ext.shard)
        return design_across(c, rows, n, x);
    drift_err me = {{0}};
    drift_rows b = {rows, 0, n};
    if ((rc = m->glm_design(m->self, &b, x, &me)))
        return drift_chain_fail(c, rc, "%s",
                                me.msg[0] ? me.msg : "the model failed");
    return DRIFT_OK;
}

/* out += sum_j w[pos_j] x_{rows[j]} over the n rows: pos NULL reads w in
 * order, else w[pos[j]] (a shard's rows, picked from a request).  Through
 * the model's glm_design_sum, or else one design row at a time in the
 * chain's d scratch. */
static int add_design(drift_chain *c, const size_t *rows, size_t n,
                      const double *w, const size_t *pos, double *out)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int rc = DRIFT_OK;
    if (m->glm_design_sum && !pos) {
        drift_rows b = {rows, 0, n};
        rc = m->glm_design_sum(m->self, &b, w, out, &me);
    } else {
        for (size_t j = 0; j < n && !rc; j++) {
            drift_rows b = {rows + j, 0, 1};
            double wj = w[pos ? pos[j] : j];
            if (m->glm_design_sum) {
                rc = m->glm_design_sum(m->self, &b, &wj, out, &me);
            } else if (!(rc = m->glm_design(m->self, &b, c->scratch.g, &me))) {
                for (size_t i = 0; i < c->d; i++)
                    out[i] += wj * c->scratch.g[i];
            }
        }
    }
    if (rc)
        return drift_chain_fail(c, rc, "%s",
                                me.msg[0] ? me.msg : "the model failed");
    return DRIFT_OK;
}

static int svc_glm_design_sum(drift_chain *c, const size_t *rows, size_t n,
                              const double *w, double *out)
{
    const drift_model *m = c->model;
    if (!(m->flags & DRIFT_MODEL_GLM) || !m->glm_design)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "glm_design_sum: the model is not in "
                                "generalised linear form");
    int rc = check_rows(c, rows, n);
    if (rc)
        return rc;
    if (!c->ext.shard)
        return add_design(c, rows, n, w, NULL, out);
    /* Each rank sums its own rows; the group adds the sums. */
    drift_shard *s = c->ext.shard;
    size_t k = pick_rows(c, rows, n);
    if (k == SIZE_MAX)
        rc = c->failed, k = 0;
    memset(s->sums, 0, c->d * sizeof *s->sums);
    if (!rc)
        rc = add_design(c, s->local, k, w, s->pos, s->sums);
    if ((rc = drift_shard_combine(c, s->sums, c->d, rc)))
        return rc;
    for (size_t i = 0; i < c->d; i++)
        out[i] += s->sums[i];
    return DRIFT_OK;
}

/* ---- facts, random numbers, accounting ---- */

static size_t svc_dim(drift_chain *c) { return c->d; }
static size_t svc_n_rows(drift_chain *c) { return c->N; }
static size_t svc_batch(drift_chain *c) { return c->batch; }
static drift_access svc_access(drift_chain *c) {
    return c->access.stream.mode;
}
static int svc_is_glm(drift_chain *c)
{
    return (c->model->flags & DRIFT_MODEL_GLM) && c->model->glm_scalars &&
           c->model->glm_design;
}
static uint64_t svc_iteration(drift_chain *c) { return c->iter; }
static int svc_in_warmup(drift_chain *c)
{
    return c->iter < c->cfg->budget.warmup;
}
static unsigned svc_chain_id(drift_chain *c) { return c->id; }

static double svc_uniform(drift_chain *c) { return drift_rng_uniform(&c->rng); }
static double svc_normal(drift_chain *c) { return drift_rng_normal(&c->rng); }
static void svc_normal_fill(drift_chain *c, size_t n, double *out)
{
    drift_rng_normal_fill(&c->rng, n, out);
}
static double svc_exponential(drift_chain *c)
{
    return drift_rng_exponential(&c->rng);
}
static uint64_t svc_discrete(drift_chain *c, uint64_t n)
{
    return n ? drift_rng_below(&c->rng, n) : 0;
}

static void svc_count(drift_chain *c, uint64_t n) { c->grads += n; }
static uint64_t svc_grads(drift_chain *c) { return c->grads; }

/* Appends p to a list of blocks (*list, *n, *cap); -1 when out of
 * memory. */
static int remember(void ***list, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        void **q = drift_realloc(*list, nc * sizeof *q);
        if (!q)
            return -1;
        *list = q;
        *cap = nc;
    }
    (*list)[(*n)++] = p;
    return 0;
}

static void *svc_alloc(drift_chain *c, size_t bytes)
{
    size_t limit = c->cfg->step.max_memory;
    if (limit && (bytes > limit || c->mem.used > limit - bytes)) {
        drift_chain_fail(c, DRIFT_ENOMEM,
                         "the sampler needs %zu bytes (%zu so far), more "
                         "than --max-memory %zu allows",
                         c->mem.used + bytes, c->mem.used, limit);
        return NULL;
    }
    void *p = drift_calloc(1, bytes);
    if (!p) {
        drift_chain_fail(c, DRIFT_ENOMEM,
                         "out of memory allocating %zu bytes for the "
                         "sampler",
                         bytes);
        return NULL;
    }
    /* What setup allocates outlives chain 1: every chain reads it. */
    drift_run_shared *run = c->phase == DRIFT_CHAIN_SETUP ? c->run : NULL;
    if (run ? remember(&run->allocs, &run->n_allocs, &run->cap_allocs, p)
            : remember(&c->mem.allocs, &c->mem.n, &c->mem.cap, p)) {
        drift_free(p);
        drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
        return NULL;
    }
    c->mem.used += bytes;
    return p;
}

static int svc_fail(drift_chain *c, const char *msg)
{
    return drift_chain_fail(c, DRIFT_EINVAL, "%s", msg ? msg : "failed");
}

/* A sampler's message, once per distinct text: kind "warning: " or "" (a
 * note). */
static void say(drift_chain *c, const char *kind, const char *msg)
{
    if (c->ext.shard && !c->ext.shard->writer)
        return; /* the group's writer says it once for all its ranks */
    if (c->mute)
        return;
    for (size_t k = 0; k < c->n_warned; k++)
        if (!strncmp(c->warned[k], msg, sizeof c->warned[k] - 1))
            return;
    if (c->n_warned < sizeof c->warned / sizeof c->warned[0])
        snprintf(c->warned[c->n_warned++], sizeof c->warned[0], "%s", msg);
    fprintf(drift_msg_stream(), "drift: %schain %u: %s\n", kind, c->id, msg);
}

static void svc_warn(drift_chain *c, const char *msg)
{
    say(c, "warning: ", msg);
}

static int svc_set_access(drift_chain *c, drift_access a)
{
    if (a != DRIFT_ACCESS_RA && a != DRIFT_ACCESS_RR && a != DRIFT_ACCESS_CA)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "set_access: unknown access strategy %d",
                                (int)a);
    if (c->iter > 0 || c->access.used)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "set_access: only allowed in init, before "
                                "any row is drawn");
    if (a == c->access.stream.mode)
        return DRIFT_OK;
    drift_stream fresh;
    if (drift_stream_init(&fresh, a, c->N, &c->access.rng, c->scratch.cap))
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    drift_stream_free(&c->access.stream);
    c->access.stream = fresh;
    return DRIFT_OK;
}

/* ---- ABI 2: the run, adaptation, the metric, setup's result ---- */

static const drift_run_info *svc_run_info(drift_chain *c) { return &c->info; }

static void svc_da_restart(drift_chain *c, drift_dual_avg *da, double h0,
                           double delta)
{
    (void)c;
    drift_adapt_da_restart(da, h0, delta);
}

static double svc_da_update(drift_chain *c, drift_dual_avg *da,
                            double accept_stat)
{
    (void)c;
    return drift_adapt_da_update(da, accept_stat);
}

static double svc_da_final(drift_chain *c, const drift_dual_avg *da)
{
    (void)c;
    return drift_adapt_da_final(da);
}

static int svc_metric_use(drift_chain *c, drift_metric_kind kind)
{
    if (kind != DRIFT_METRIC_UNIT && kind != DRIFT_METRIC_DIAG &&
        kind != DRIFT_METRIC_DENSE)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric_use: unknown metric kind %d",
                                (int)kind);
    if (c->phase != DRIFT_CHAIN_INIT)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric_use: only allowed in init");
    if (kind == c->adapt.metric.kind)
        return DRIFT_OK;
    /* d x d doubles must not overflow a size_t. */
    if (kind == DRIFT_METRIC_DENSE && c->d > ((size_t)1 << 26))
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "metric_use: a dense metric over %zu "
                                "coordinates does not fit in memory",
                                c->d);
    if (kind == DRIFT_METRIC_DENSE && !drift_blas_buffer_fits())
        return drift_chain_fail(
            c, DRIFT_ENOMEM,
            "metric_use: a dense metric is factored by OpenBLAS, whose "
            "routines need a %zu MiB work buffer that this process's "
            "address-space limit (ulimit -v) cannot hold; raise the limit, "
            "or use a diagonal metric (--set metric=diag)",
            DRIFT_BLAS_BUFFER_BYTES >> 20);
    size_t n = drift_adapt_metric_doubles(kind, c->d);
    double *mem = n ? svc_alloc(c, n * sizeof(double)) : NULL;
    if (n && !mem)
        return c->failed ? c->failed : DRIFT_ENOMEM;
    drift_adapt_metric_init(&c->adapt.metric, kind, c->d, mem);
    /* Where the run found a mode (under cv, or for the engine's plan) a
     * metric starts from the curvature there. */
    if (kind == DRIFT_METRIC_DIAG && mode_known(c))
        for (size_t k = 0; k < c->d; k++) {
            c->adapt.metric.inv[k] = c->run->cv.inv_metric[k];
            c->adapt.metric.factor[k] = sqrt(c->adapt.metric.inv[k]);
        }
    if (kind == DRIFT_METRIC_DENSE && mode_known(c)) {
        const drift_cv *cv = &c->run->cv;
        size_t d = c->d;
        if (!cv->inv_dense ||
            drift_adapt_metric_set_dense(&c->adapt.metric, cv->inv_dense))
            for (size_t k = 0; k < d; k++) {
                c->adapt.metric.inv[k * d + k] = cv->inv_metric[k];
                c->adapt.metric.factor[k * d + k] = sqrt(cv->inv_metric[k]);
            }
    }
    return DRIFT_OK;
}

static void svc_metric_observe_grad(drift_chain *c, const double *theta,
                                    const double *grad)
{
    /* From init: the initial point's gradient sets the start, unless the
     * run's mode already did. */
    if (c->phase == DRIFT_CHAIN_INIT && grad && !mode_known(c)) {
        drift_adapt_metric_start_grad(&c->adapt.metric, grad);
        return;
    }
    if (c->phase == DRIFT_CHAIN_STEPPING &&
        drift_adapt_in_window(&c->adapt.sched, c->iter))
        drift_adapt_metric_observe(&c->adapt.metric, theta, grad);
}

static int svc_metric_set_diag(drift_chain *c, const double *inv)
{
    if (c->adapt.metric.kind != DRIFT_METRIC_DIAG)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric set_diag: the chain's metric is not "
                                "diagonal (call metric_use with "
                                "DRIFT_METRIC_DIAG from init)");
    if (c->phase != DRIFT_CHAIN_INIT && c->iter > c->cfg->budget.warmup)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric set_diag: only allowed in init and "
                                "warmup");
    drift_adapt_metric_set_diag(&c->adapt.metric, inv);
    return DRIFT_OK;
}

static int svc_metric_set_dense(drift_chain *c, const double *inv)
{
    if (c->adapt.metric.kind != DRIFT_METRIC_DENSE)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric set_dense: the chain's metric is not "
                                "dense (call metric_use with "
                                "DRIFT_METRIC_DENSE from init)");
    if (c->phase != DRIFT_CHAIN_INIT && c->iter > c->cfg->budget.warmup)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "metric set_dense: only allowed in init and "
                                "warmup");
    return drift_adapt_metric_set_dense(&c->adapt.metric, inv) ? 1 : DRIFT_OK;
}

static void svc_metric_observe(drift_chain *c, const double *theta)
{
    svc_metric_observe_grad(c, theta, NULL);
}

static void svc_metric_inv_mul(drift_chain *c, const double *v, double *out)
{
    drift_adapt_metric_inv_mul(&c->adapt.metric, v, out);
}

static void svc_metric_draw(drift_chain *c, double *p)
{
    drift_rng_normal_fill(&c->rng, c->d, p);
    drift_adapt_metric_from_normal(&c->adapt.metric, p, p);
}

static void svc_metric_inv_sqrt_mul(drift_chain *c, const double *v,
                                    double *out)
{
    drift_adapt_metric_inv_sqrt_mul(&c->adapt.metric, v, out);
}

static drift_metric_kind svc_metric_kind(drift_chain *c)
{
    return c->adapt.metric.kind;
}

static size_t svc_metric_get(drift_chain *c, double *out)
{
    size_t n = c->adapt.metric.kind == DRIFT_METRIC_DIAG    ? c->d
               : c->adapt.metric.kind == DRIFT_METRIC_DENSE ? c->d * c->d
                                                            : 0;
    if (n)
        memcpy(out, c->adapt.metric.inv, n * sizeof *out);
    return n;
}

static void svc_set_adapted(drift_chain *c, double stepsize)
{
    c->adapt.step = stepsize;
}

static const void *svc_shared(drift_chain *c)
{
    return c->run ? c->run->shared : NULL;
}

/* ---- services version 4: gradient estimators ---- */

static drift_gradient svc_gradient(drift_chain *c)
{
    switch (c->est.kind) {
    case DRIFT_GRADIENT_CV: return DRIFT_GRADIENT_CV;
    case DRIFT_GRADIENT_SVRG: return DRIFT_GRADIENT_SVRG;
    case DRIFT_GRADIENT_SAGA: return DRIFT_GRADIENT_SAGA;
    case DRIFT_GRADIENT_TMU: return DRIFT_GRADIENT_TMU;
    default: return DRIFT_GRADIENT_PLAIN;
    }
}

static int svc_mode(drift_chain *c, double *mode, double *curv)
{
    if (!mode_known(c)) {
        if (!mode && !curv) /* a question, not a request */
            return DRIFT_EINVAL;
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "the mode service: this run has no mode "
                                "(it needs --gradient cv)");
    }
    if (mode)
        memcpy(mode, c->run->cv.mode, c->d * sizeof *mode);
    if (curv)
        memcpy(curv, c->run->cv.curv, c->d * sizeof *curv);
    return DRIFT_OK;
}

/* ---- for the engine's mode search (mode.c) ---- */

int drift_oracle_glm_at(drift_chain *c, const double *theta,
                        const size_t *rows, size_t n, double *s, double *l)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    int rc = DRIFT_OK;
    c->grads += n;
    for (size_t done = 0; done < n && !rc; done += c->scratch.cap) {
        size_t k = n - done < c->scratch.cap ? n - done : c->scratch.cap;
        drift_rows b = {rows + done, 0, k};
        if ((rc = m->glm_scalars(m->self, c->scratch.ws, theta, &b, s + done,
                                 l + done, &me)))
            rc = model_error(c, theta, rc, &me);
    }
    if (!rc)
        rc = check_values(c, theta, s, n, "per-row gradient scalar", 1.0);
    if (!rc)
        rc = check_values(c, theta, l, n, "per-row log density", 1.0);
    return finish_eval(c, rc, NULL, 0);
}

/* The metric's further services (DRIFT_TABLE_METRIC). */
static const drift_metric_services metric_table = {
    .header = {DRIFT_TABLE_METRIC, 2u,
               (uint32_t)sizeof(drift_metric_services)},
    .observe_grad = svc_metric_observe_grad,
    .set_diag = svc_metric_set_diag,
    .set_dense = svc_metric_set_dense,
};

/* The sub-tables by id (drift/sampler.h's drift_table_header). */
/* The estimator's services (DRIFT_TABLE_ESTIMATOR). */
static int est_use(drift_chain *c, const drift_estimator_request *r)
{
    const char *who =
        c->cfg->step.sampler ? c->cfg->step.sampler->name : "sampler";
    if (c->phase != DRIFT_CHAIN_INIT)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s: the estimator service's use "
                                "is for init only",
                                who);
    if (!r || (r->kind != DRIFT_GRADIENT_PLAIN &&
               r->kind != DRIFT_GRADIENT_SVRG &&
               r->kind != DRIFT_GRADIENT_SAGA &&
               r->kind != DRIFT_GRADIENT_TMU))
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s asked for an estimator drift "
                                "does not have (plain, svrg, saga and tmu "
                                "are)",
                                who);
    if (c->vr && c->vr->count)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s: the estimator was chosen after "
                                "its first estimate",
                                who);
    if (r->kind != DRIFT_GRADIENT_PLAIN && c->N == 0)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s needs a model with data rows "
                                "(its estimator keeps per-row gradients); "
                                "this model has none",
                                who);
    if (r->kind != DRIFT_GRADIENT_PLAIN && c->ext.shard)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s under mpirun: its estimator's "
                                "snapshots are kept in one process; run "
                                "without mpirun",
                                who);
    vr_free(c);
    c->est = *r;
    if (r->kind == DRIFT_GRADIENT_PLAIN)
        return DRIFT_OK;
    return vr_ready(c, 1);
}

static double est_age(drift_chain *c)
{
    return c->vr && c->vr->count ? c->vr->age : -1;
}

static const drift_estimator_services estimator_table = {
    .header = {DRIFT_TABLE_ESTIMATOR, 1u,
               (uint32_t)sizeof(drift_estimator_services)},
    .use = est_use,
    .age = est_age,
};

/* The report's services (DRIFT_TABLE_REPORT). */
static void report_note(drift_chain *c, const char *msg)
{
    if (!c->cfg->output.quiet)
        say(c, "", msg);
}

static const drift_report_services report_table = {
    .header = {DRIFT_TABLE_REPORT, 1u,
               (uint32_t)sizeof(drift_report_services)},
    .note = report_note,
};

static const void *svc_table(drift_chain *c, uint32_t id, uint32_t version)
{
    (void)c;
    static const drift_table_header *const tables[] = {
        &drift_precond_table.header,
        &metric_table.header,
        &estimator_table.header,
        &report_table.header,
    };
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
        if (tables[k]->id == id)
            return tables[k]->version >= version ? tables[k] : NULL;
    return NULL;
}

const drift_services drift_services_table = {
    .abi_version = DRIFT_SAMPLER_ABI_VERSION,
    .struct_size = (uint32_t)sizeof(drift_services),
    .dim = svc_dim,
    .n_rows = svc_n_rows,
    .batch = svc_batch,
    .access = svc_access,
    .is_glm = svc_is_glm,
    .iteration = svc_iteration,
    .in_warmup = svc_in_warmup,
    .chain_id = svc_chain_id,
    .grad_full = svc_grad_full,
    .U_full = svc_U_full,
    .grad_batch = svc_grad_batch,
    .grad_prior = svc_grad_prior,
    .next_batch = svc_next_batch,
    .grad_rows = svc_grad_rows,
    .grad_sum = svc_grad_sum,
    .jvp_rows = svc_jvp_rows,
    .glm_scalars = svc_glm_scalars,
    .glm_design = svc_glm_design,
    .glm_design_sum = svc_glm_design_sum,
    .uniform = svc_uniform,
    .normal = svc_normal,
    .normal_fill = svc_normal_fill,
    .exponential = svc_exponential,
    .discrete = svc_discrete,
    .poisson_linear = drift_poisson_linear_svc,
    .poisson_bound = drift_poisson_bound_svc,
    .thin = drift_poisson_thin_svc,
    .emit_draw = drift_emit_draw,
    .emit_segment = drift_emit_segment,
    .count = svc_count,
    .grads = svc_grads,
    .alloc = svc_alloc,
    .fail = svc_fail,
    .warn = svc_warn,
    .set_access = svc_set_access,
    .run_info = svc_run_info,
    .da_restart = svc_da_restart,
    .da_update = svc_da_update,
    .da_final = svc_da_final,
    .metric_use = svc_metric_use,
    .metric_observe = svc_metric_observe,
    .metric_inv_mul = svc_metric_inv_mul,
    .metric_draw = svc_metric_draw,
    .metric_inv_sqrt_mul = svc_metric_inv_sqrt_mul,
    .metric_kind = svc_metric_kind,
    .metric_get = svc_metric_get,
    .set_adapted = svc_set_adapted,
    .shared = svc_shared,
    .ckpt_bytes = drift_ckpt_block,
    .ckpt_restoring = drift_ckpt_restoring,
    .gradient = svc_gradient,
    .mode = svc_mode,
    .table = svc_table,
};
