/* emit.c: what samplers emit becomes rows of the draws file: emit_draw
 * applies warmup and thinning, emit_segment discretises a continuous
 * trajectory at fixed time steps (or writes its skeleton) and integrates its
 * exact moments.  Counts the draws offered (the header's num_warmup and
 * num_samples).  Not for the header's content (csvout.c) nor for how
 * files are written (base/writer.c). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/mapguard.h"
#include "base/util.h"
#include "base/writer.h"
#include "chain.h"
#include "csvout.h"
#include "emit.h"
#include "plancheck.h"
#include "heldout.h"
#include "shard.h"
#include "watch.h"
#include "score.h"

/* Whether the step being taken is one of warmup's. */
static int in_warmup(const drift_chain *c)
{
    return c->iter < c->cfg->budget.warmup;
}

/* lp__ when the sampler has none (NaN: continuous samplers, which know
 * no log density along a segment): log p(theta) + (N/n) sum_{i in B}
 * log p(row_i | theta) over n = --batch rows B drawn uniformly with
 * replacement from the chain's own lp stream, so the sampler's streams
 * and draws are those it would make without it; all N rows, exactly,
 * when N <= n.  An unbiased estimate of -U(theta) (up to the constant
 * that lp__ leaves out anyway), costing n evaluations of the log
 * likelihood without gradients, which grads__ does not count (like
 * --test's).  NaN when the model cannot evaluate it.
 *
 * When the data is a store larger than the memory available (the chain's
 * read-ahead drops what it has passed), the n rows are instead a block of
 * consecutive rows from a uniform start, wrapping at N: each row is in it
 * with probability n/N, so the estimate stays unbiased, and it reads one
 * stretch of the store instead of n random pages (10^4 random rows of a
 * 4.9 GB store in a 1 GB memory cgroup took 150 s a draw, the whole run's
 * time for samplers without an lp of their own: ppu, tmu, sbps). */
static double lp_across(drift_chain *c, const double *theta);

/* lp_estimate's n rows (n < N) into scratch.rows: a block (see above) or
 * uniform draws with replacement. */
static void lp_rows(drift_chain *c, size_t n, int block)
{
    if (block) {
        size_t start = (size_t)drift_rng_below(&c->output.lp_rng, c->N);
        for (size_t k = 0; k < n; k++)
            c->scratch.rows[k] =
                start + k < c->N ? start + k : start + k - c->N;
        return;
    }
    for (size_t k = 0; k < n; k++)
        c->scratch.rows[k] = (size_t)drift_rng_below(&c->output.lp_rng, c->N);
}

static double lp_estimate(drift_chain *c, const double *theta)
{
    if (c->ext.shard)
        return lp_across(c, theta);
    return drift_emit_lp_estimate(c, theta, c->access.advisor.drop);
}

double drift_emit_lp_estimate(drift_chain *c, const double *theta, int block)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    double lp = 0, ll = 0;
    if (m->log_prior(m->self, c->scratch.ws, theta, &lp, NULL, &me))
        return NAN;
    if (c->N == 0)
        return lp;
    size_t n = c->batch ? c->batch : 1;
    if (n > c->scratch.cap)
        n = c->scratch.cap;
    if (c->N <= n) {
        /* Every row, in workspace-sized pieces. */
        for (size_t first = 0; first < c->N; first += c->scratch.cap) {
            size_t k =
                c->N - first < c->scratch.cap ? c->N - first : c->scratch.cap;
            drift_rows b = {NULL, first, k};
            double part = 0;
            if (m->log_lik(m->self, c->scratch.ws, theta, &b, NULL, &part,
                           NULL, NULL, &me))
                return NAN;
            ll += part;
        }
        return lp + ll;
    }
    lp_rows(c, n, block);
    drift_rows b = {c->scratch.rows, 0, n};
    if (m->log_lik(m->self, c->scratch.ws, theta, &b, NULL, &ll, NULL, NULL,
                   &me))
        return NAN;
    return lp + ll * ((double)c->N / (double)n);
}

/* lp_estimate across ranks: the same rows (the lp stream is drawn alike
 * on every rank), each rank summing those of its share, the sums
 * combined; NaN on every rank when one rank's model could not. */
static double lp_across(drift_chain *c, const double *theta)
{
    const drift_model *m = c->model;
    drift_shard *s = c->ext.shard;
    drift_err me = {{0}};
    double lp = 0, ll = 0;
    /* The prior is the same on every rank: its failure is everyone's. */
    if (m->log_prior(m->self, c->scratch.ws, theta, &lp, NULL, &me))
        return NAN;
    size_t n = c->batch ? c->batch : 1;
    if (n > c->scratch.cap)
        n = c->scratch.cap;
    int rc = DRIFT_OK, all = c->N <= n;
    size_t k = 0;
    if (!all) {
        /* iid rows: whether a rank's share fits in its memory may differ
         * between ranks, which must draw the same rows. */
        lp_rows(c, n, 0);
        k = drift_shard_pick(s, c->scratch.rows, n);
        if (k == SIZE_MAX)
            rc = DRIFT_ENOMEM, k = 0;
    }
    /* Every row of the share, or the picked ones, in pieces. */
    size_t total = all ? s->n : k;
    for (size_t first = 0; first < total && !rc; first += c->scratch.cap) {
        size_t q =
            total - first < c->scratch.cap ? total - first : c->scratch.cap;
        drift_rows b = {all ? NULL : s->local + first, all ? first : 0, q};
        double part = 0;
        if (m->log_lik(m->self, c->scratch.ws, theta, &b, NULL, &part, NULL,
                       NULL, &me))
            rc = DRIFT_ENUMERIC;
        ll += part;
    }
    if (drift_shard_sum(c, &ll, 1, rc ? DRIFT_ENONFINITE : DRIFT_OK))
        return NAN;
    return all ? lp + ll : lp + ll * ((double)c->N / (double)n);
}

/* Before the first row after warmup: CmdStan's adaptation block. */
static void before_row(drift_chain *c, const double *diag)
{
    if (!in_warmup(c) && c->output.csv)
        drift_csvout_adaptation(c, diag);
}

/* Counts one offered draw in the current phase; 0 when warmup draws are
 * not kept (the draw is then dropped), else 1 with its 0-based index in
 * the phase in *k (thinning restarts after warmup, so the kept draws
 * after warmup do not depend on --save-warmup). */
static int offer(drift_chain *c, uint64_t *k)
{
    if (in_warmup(c)) {
        if (!c->cfg->output.save_warmup)
            return 0;
        *k = c->output.warm_offered++;
        return 1;
    }
    *k = c->output.samp_offered++;
    return 1;
}

/* The seed of a draw's generated quantities: the run's seed, the chain
 * and the iteration, mixed (splitmix64's finaliser), so that they do not
 * depend on the sampler's own stream. */
static uint64_t generated_seed(const drift_chain *c)
{
    uint64_t z = c->cfg->launch.seed ^ ((uint64_t)c->id << 40) ^
                 (c->iter * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The model's derived values, and its generated quantities on every
 * generated_every-th row of each phase, saved warmup included (as CmdStan
 * computes them for warmup draws too: a NaN in a draw row makes bayesplot
 * refuse the file and rstan warn once per column).  With generated_every
 * above 1 the other rows get NaN here, and the run moves the generated
 * columns to a file of their own when it ends
 * (drift_csvout_split_generated), so no reader meets them. */
static void write_generated(drift_chain *c, const double *theta, double *out)
{
    const drift_model *m = c->model;
    if (!m->n_gen)
        return;
    uint64_t every =
        c->cfg->output.generated_every ? c->cfg->output.generated_every : 1;
    uint64_t row;
    if (in_warmup(c)) { /* this row's index among the phase's rows */
        int grid =
            (c->cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
        row = (c->output.warm_offered - 1) / (grid ? 1 : c->cfg->budget.thin);
    } else {
        row = c->output.gen_seen++;
    }
    int all = row % every == 0;
    if (!all)
        for (size_t k = m->n_gen_derived; k < m->n_gen; k++)
            out[k] = NAN;
    drift_err e = {{0}};
    if (m->generate(m->self, c->scratch.ws, theta, generated_seed(c), all, out,
                    &e))
        drift_chain_fail(c, DRIFT_ENUMERIC,
                         "chain %u, iteration %llu: generated quantities: %s",
                         c->id, (unsigned long long)c->iter, e.msg);
}

/* Whether a row may be written: not when an input map lost pages since
 * the run began (the row may have been computed from the zeros that
 * replaced them: base/mapguard.c), so that every row in the file comes
 * from the data as they were. */
static int row_allowed(drift_chain *c)
{
    if (!drift_mapguard_any())
        return DRIFT_OK;
    drift_err ge = {{0}};
    int rc = drift_mapguard_check(0, &ge);
    if (!rc) /* a map since closed: not this run's rows */
        return DRIFT_OK;
    return drift_chain_fail(c, rc, "%s", ge.msg);
}

/* After a row: the first failed write of the draws file stops the chain
 * (disk full, file size limit); the file is then not put in place. */
static int row_written(drift_chain *c)
{
    drift_err we = {{0}};
    int rc = drift_writer_failed(c->output.w, &we);
    if (!rc)
        return DRIFT_OK;
    c->output.write_failed = 1;
    return drift_chain_fail(c, rc, "%s", we.msg);
}

/* One output row: lp__, grads__, the sampler's columns, the model's
 * constrained values of theta, its derived and generated values. */
/* Across ranks, a failure of this rank alone (rc, just recorded on the
 * chain: its input map, its file) waits for the group (shard.h): 1 when
 * it was deferred so, the row then being skipped. */
static int deferred(drift_chain *c, int rc)
{
    if (!rc || !c->ext.shard)
        return 0;
    drift_shard_defer(c);
    return 1;
}

static int write_row(drift_chain *c, const double *theta, double lp,
                     const double *diag)
{
    /* lp__'s estimate first: across ranks it is a sum over the group,
     * which every rank takes part in whatever befalls it alone below. */
    if (isnan(lp))
        lp = lp_estimate(c, theta);
    int rc = row_allowed(c);
    if (rc)
        return deferred(c, rc) ? DRIFT_OK : rc;
    size_t nc = c->n_diag, n_out = c->model->n_out;
    size_t n_gen = c->model->n_gen;
    double *row = c->output.row;
    row[0] = lp;
    row[1] = (double)c->grads;
    for (size_t k = 0; k < nc; k++)
        row[2 + k] = diag ? diag[k] : NAN;
    c->model->constrain(c->model->self, theta, row + 2 + nc);
    write_generated(c, theta, row + 2 + nc + n_out);
    size_t n_score = c->cfg->output.save_gradients ? c->d : 0;
    if (n_score) {
        /* --save-gradients: the score over all rows, exact (no
         * --grad-noise), not counted; NaN where it is not finite. */
        double *score = row + 2 + nc + n_out + n_gen;
        drift_err se = {{0}};
        if (drift_score_at(c->model, c->scratch.ws, c->scratch.cap, theta,
                           score, c->scratch.g2, NULL, &se))
            for (size_t k = 0; k < c->d; k++)
                if (!isfinite(score[k]))
                    score[k] = NAN;
    }
    if (c->cfg->output.on_row)
        c->cfg->output.on_row(c->cfg->output.on_row_user, c->id,
                              in_warmup(c), row, c->output.row_len);
    if (c->output.w) {
        int was = c->failed;
        before_row(c, diag);
        if (!was && c->failed && deferred(c, c->failed))
            return DRIFT_OK;
        FILE *f = drift_writer_file(c->output.w);
        drift_writer_real(f, lp);
        fprintf(f, ",%llu", (unsigned long long)c->grads);
        for (size_t k = 2; k < 2 + nc; k++) {
            fputc(',', f);
            drift_writer_real(f, row[k]);
        }
        if (c->output.csv)
            drift_csvout_compat_values(c, f);
        for (size_t k = 2 + nc; k < 2 + nc + n_out + n_gen + n_score; k++) {
            fputc(',', f);
            drift_writer_real(f, row[k]);
        }
        fputc('\n', f);
        if ((rc = row_written(c)))
            return deferred(c, rc) ? DRIFT_OK : rc;
    }
    c->output.draws_written++;
    if (!in_warmup(c))
        drift_plancheck_add(c, theta);
    /* --test: every draw kept after warmup enters the held-out metrics. */
    if (c->ext.heldout && !in_warmup(c)) {
        drift_err he = {{0}};
        rc = drift_heldout_add(c->ext.heldout, theta, &he);
        if (rc) {
            rc = drift_chain_fail(c, rc,
                                  "chain %u, iteration %llu: --test: %s",
                                  c->id, (unsigned long long)c->iter, he.msg);
            return deferred(c, rc) ? DRIFT_OK : rc;
        }
    }
    return DRIFT_OK;
}

static int check_state(drift_chain *c, const double *theta)
{
    for (size_t k = 0; k < c->d; k++)
        if (!isfinite(theta[k])) {
            char name[128];
            drift_chain_param_name(c, k, name, sizeof name);
            return drift_chain_fail(c, DRIFT_ENUMERIC,
                                    "chain %u, iteration %llu: parameter %s "
                                    "is %g; the sampler diverged (try a "
                                    "smaller step size)%s",
                                    c->id, (unsigned long long)c->iter, name,
                                    theta[k], drift_watch_note(c));
        }
    return DRIFT_OK;
}

/* An infinite log density (NaN means "none" by the ABI) is a divergence
 * too; it names the coordinate of largest magnitude, the likeliest
 * culprit. */
static int check_lp(drift_chain *c, const double *theta, double lp)
{
    if (!isinf(lp))
        return DRIFT_OK;
    size_t big = 0;
    for (size_t k = 1; k < c->d; k++)
        if (fabs(theta[k]) > fabs(theta[big]))
            big = k;
    char name[128];
    drift_chain_param_name(c, big, name, sizeof name);
    return drift_chain_fail(c, DRIFT_ENUMERIC,
                            "chain %u, iteration %llu: the log density is "
                            "%g (largest parameter: %s = %g); the sampler "
                            "diverged (try a smaller step size)%s",
                            c->id, (unsigned long long)c->iter, lp, name,
                            theta[big], drift_watch_note(c));
}

int drift_emit_draw(drift_chain *c, const double *theta, double lp,
                    const double *diag)
{
    int rc = check_state(c, theta);
    if (!rc)
        rc = check_lp(c, theta, lp);
    if (rc)
        return rc;
    drift_watch_draw(c, theta, lp);
    uint64_t k;
    if (c->cfg->output.discard_draws)
        return DRIFT_OK;
    if (offer(c, &k) && k % c->cfg->budget.thin == 0)
        return write_row(c, theta, lp, diag);
    return DRIFT_OK;
}

/* One skeleton row (--emit segments): lp__, grads__, the sampler's
 * columns, time__, duration__, the constrained values at x0, then x0 and
 * v on the unconstrained scale. */
static int write_segment_row(drift_chain *c, const double *x0,
                             const double *v, double duration, double lp,
                             const double *diag)
{
    if (isnan(lp))
        lp = lp_estimate(c, x0);
    int rc = row_allowed(c);
    if (rc)
        return deferred(c, rc) ? DRIFT_OK : rc;
    size_t nc = c->n_diag, n_out = c->model->n_out;
    double *row = c->output.row;
    size_t k = 0;
    row[k++] = lp;
    row[k++] = (double)c->grads;
    for (size_t j = 0; j < nc; j++)
        row[k++] = diag ? diag[j] : NAN;
    row[k++] = c->traj.t;
    row[k++] = duration;
    c->model->constrain(c->model->self, x0, row + k);
    k += n_out;
    memcpy(row + k, x0, c->d * sizeof *row);
    k += c->d;
    memcpy(row + k, v, c->d * sizeof *row);
    k += c->d;
    if (c->cfg->output.on_row)
        c->cfg->output.on_row(c->cfg->output.on_row_user, c->id,
                              in_warmup(c), row, k);
    if (c->output.w) {
        int was = c->failed;
        before_row(c, diag);
        if (!was && c->failed && deferred(c, c->failed))
            return DRIFT_OK;
        FILE *f = drift_writer_file(c->output.w);
        drift_writer_real(f, lp);
        fprintf(f, ",%llu", (unsigned long long)c->grads);
        for (size_t j = 2; j < k; j++) {
            if (j == 2 + nc && c->output.csv)
                drift_csvout_compat_values(c, f);
            fputc(',', f);
            /* Times and positions need every digit to rebuild the path. */
            if (j >= 2 + nc)
                fprintf(f, "%.17g", row[j]);
            else
                drift_writer_real(f, row[j]);
        }
        fputc('\n', f);
        if ((rc = row_written(c)))
            return deferred(c, rc) ? DRIFT_OK : rc;
    }
    c->output.draws_written++;
    return DRIFT_OK;
}

int drift_emit_segment(drift_chain *c, const double *x0, const double *v,
                       double duration, double lp, const double *diag)
{
    if (!c->traj.seg)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s emitted a segment but does not "
                                "declare DRIFT_SAMPLER_CONTINUOUS in its "
                                "flags",
                                c->cfg->step.sampler->name);
    int rc = check_state(c, x0);
    if (!rc)
        rc = check_lp(c, x0, lp);
    if (rc)
        return rc;
    for (size_t k = 0; k < c->d; k++)
        if (!isfinite(v[k]))
            return drift_chain_fail(c, DRIFT_ENUMERIC,
                                    "chain %u, iteration %llu: the sampler "
                                    "emitted a segment whose velocity is %g "
                                    "in coordinate %zu",
                                    c->id, (unsigned long long)c->iter, v[k],
                                    k + 1);
    if (!(duration >= 0) || !isfinite(duration))
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "chain %u: emit_segment given duration %g",
                                c->id, duration);
    int warm = in_warmup(c);
    if (c->cfg->output.discard_draws) {
        /* a pilot: its clock, and its points on the time grid for the
         * plan's measures */
        double dt = c->cfg->budget.thin_time, t0 = c->traj.t;
        c->traj.t += duration;
        if (c->cfg->output.on_point && dt > 0)
            while (c->traj.t_next_out < c->traj.t) {
                double s = c->traj.t_next_out - t0;
                for (size_t k = 0; k < c->d; k++)
                    c->traj.seg[k] = x0[k] + v[k] * s;
                c->cfg->output.on_point(c->cfg->output.on_point_user,
                                        c->traj.seg);
                c->traj.grid_k++;
                c->traj.t_next_out = dt * (double)c->traj.grid_k;
            }
        return DRIFT_OK;
    }
    if (warm && !c->cfg->output.save_warmup)
        return DRIFT_OK;
    double t0 = c->traj.t, t1 = c->traj.t + duration;
    uint64_t k_offer;
    if (c->cfg->output.emit_segments) {
        if (duration > 0 && offer(c, &k_offer) &&
            (rc = write_segment_row(c, x0, v, duration, lp, diag)))
            return rc;
    } else {
        double dt =
            c->cfg->budget.thin_time > 0 ? c->cfg->budget.thin_time : 1.0;
        /* The draws of one segment are bounded by what a reader can use:
         * a step so small that they would not advance the grid (1e-300),
         * or would flood the disk (1e-9 on segments of length 1), fails
         * the chain with the numbers instead of looping on. */
        double rows = (t1 - c->traj.t_next_out) / dt;
        if (c->traj.t_next_out < t1 &&
            (rows > DRIFT_EMIT_MAX_SEGMENT_DRAWS ||
             !(dt * (double)(c->traj.grid_k + 1) > c->traj.t_next_out)))
            return drift_chain_fail(c, DRIFT_EINVAL,
                                    "chain %u, iteration %llu: --thin %g "
                                    "(a time step) would write %.3g draws "
                                    "for this segment of duration %g, more "
                                    "than the %.0f drift writes for one "
                                    "segment; give a larger --thin",
                                    c->id, (unsigned long long)c->iter, dt,
                                    rows, duration,
                                    (double)DRIFT_EMIT_MAX_SEGMENT_DRAWS);
        while (c->traj.t_next_out < t1) {
            if (offer(c, &k_offer)) {
                double s = c->traj.t_next_out - t0;
                for (size_t k = 0; k < c->d; k++)
                    c->traj.seg[k] = x0[k] + v[k] * s;
                /* The sampler's lp (if any) is x0's, not this point's. */
                if ((rc = write_row(c, c->traj.seg, NAN, diag)))
                    return rc;
            }
            /* Multiples of dt, not repeated sums: no drift over 1e9 steps;
             * counted across warmup, so the grid runs on after it.  The
             * grid is 0, dt, 2 dt, ...: after grid_k points the next is
             * at grid_k dt. */
            c->traj.grid_k++;
            c->traj.t_next_out = dt * (double)c->traj.grid_k;
        }
    }
    if (!warm) {
        /* Exact integrals of theta and theta^2 along the segment. */
        double T = duration;
        for (size_t k = 0; k < c->d; k++) {
            c->traj.m1[k] += x0[k] * T + 0.5 * v[k] * T * T;
            c->traj.m2[k] += x0[k] * x0[k] * T + x0[k] * v[k] * T * T +
                             v[k] * v[k] * T * T * T / 3.0;
        }
        c->traj.t_mom += T;
    }
    c->traj.t = t1;
    return DRIFT_OK;
}
