/* emit.c: what samplers emit becomes rows of the draws file: emit_draw
 * applies warmup and thinning, emit_segment discretises a continuous
 * trajectory at fixed time steps (or writes its skeleton) and integrates its
 * exact moments.  Counts the draws offered (the header's num_warmup and
 * num_samples) and stops writing at a chain's cap.  Not for the header's
 * content (csvout.c) nor for how files are written (base/writer.c). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "chain.h"
#include "csvout.h"
#include "emit.h"
#include "heldout.h"

/* lp__ when the sampler has none (NaN: continuous samplers, which know
 * no log density along a segment): log p(theta) + (N/n) sum_{i in B}
 * log p(row_i | theta) over n = --batch rows B drawn uniformly with
 * replacement from the chain's own lp stream, so the sampler's streams
 * and draws are those it would make without it; all N rows, exactly,
 * when N <= n.  An unbiased estimate of -U(theta) (up to the constant
 * that lp__ leaves out anyway), costing n evaluations of the log
 * likelihood without gradients, which grads__ does not count (like
 * --test's).  NaN when the model cannot evaluate it. */
static double lp_estimate(drift_chain *c, const double *theta)
{
    const drift_model *m = c->model;
    drift_err me = {{0}};
    double lp = 0, ll = 0;
    if (m->log_prior(m->self, c->ws, theta, &lp, NULL, &me))
        return NAN;
    if (c->N == 0)
        return lp;
    size_t n = c->batch ? c->batch : 1;
    if (n > c->ws_cap)
        n = c->ws_cap;
    if (c->N <= n) {
        /* Every row, in workspace-sized pieces. */
        for (size_t first = 0; first < c->N; first += c->ws_cap) {
            size_t k = c->N - first < c->ws_cap ? c->N - first : c->ws_cap;
            drift_rows b = {NULL, first, k};
            double part = 0;
            if (m->log_lik(m->self, c->ws, theta, &b, NULL, &part, NULL, NULL,
                           &me))
                return NAN;
            ll += part;
        }
        return lp + ll;
    }
    for (size_t k = 0; k < n; k++)
        c->rows_buf[k] = (size_t)drift_rng_below(&c->lp_rng, c->N);
    drift_rows b = {c->rows_buf, 0, n};
    if (m->log_lik(m->self, c->ws, theta, &b, NULL, &ll, NULL, NULL, &me))
        return NAN;
    return lp + ll * ((double)c->N / (double)n);
}

/* Before the first row after warmup: CmdStan's adaptation block. */
static void before_row(drift_chain *c, const double *diag)
{
    if (!c->in_warmup && !c->adapt.written && c->w && c->out)
        drift_csvout_adaptation(c, diag);
}

/* One output row: lp__, grads__, the sampler's columns, the model's
 * constrained values of theta. */
static void write_row(drift_chain *c, const double *theta, double lp,
                      const double *diag)
{
    size_t nc = c->cfg->sampler->n_columns, n_out = c->model->n_out;
    double *row = c->row_buf;
    if (isnan(lp))
        lp = lp_estimate(c, theta);
    row[0] = lp;
    row[1] = (double)c->grads;
    for (size_t k = 0; k < nc; k++)
        row[2 + k] = diag ? diag[k] : NAN;
    c->model->constrain(c->model->self, theta, row + 2 + nc);
    if (c->cfg->on_row)
        c->cfg->on_row(c->cfg->on_row_user, c->id, row, c->row_len);
    if (c->w) {
        before_row(c, diag);
        FILE *f = drift_writer_file(c->w);
        drift_writer_real(f, lp);
        fprintf(f, ",%llu", (unsigned long long)c->grads);
        for (size_t k = 2; k < 2 + nc; k++) {
            fputc(',', f);
            drift_writer_real(f, row[k]);
        }
        if (c->out)
            drift_csvout_compat_values(c, f);
        for (size_t k = 2 + nc; k < 2 + nc + n_out; k++) {
            fputc(',', f);
            drift_writer_real(f, row[k]);
        }
        fputc('\n', f);
    }
    c->draws_written++;
    /* --test: every draw kept after warmup enters the held-out metrics. */
    if (c->heldout && !c->in_warmup) {
        drift_err he = {{0}};
        int rc = drift_heldout_add(c->heldout, theta, &he);
        if (rc)
            drift_chain_fail(c, rc, "chain %u, iteration %llu: --test: %s",
                             c->id, (unsigned long long)c->iter, he.msg);
    }
}

/* Counts one offered draw in the current phase; 0 when the phase's cap
 * is reached or warmup draws are not kept (the draw is then dropped),
 * else 1 with its 0-based index in the phase in *k. */
static int offer(drift_chain *c, uint64_t *k)
{
    if (c->in_warmup) {
        if (!c->cfg->save_warmup || c->warm_offered >= c->cap_warm)
            return 0;
        *k = c->warm_offered++;
        return 1;
    }
    if (c->samp_offered >= c->cap_samp)
        return 0;
    *k = c->samp_offered++;
    return 1;
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
                                    "smaller step size)",
                                    c->id, (unsigned long long)c->iter, name,
                                    theta[k]);
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
                            "diverged (try a smaller step size)",
                            c->id, (unsigned long long)c->iter, lp, name,
                            theta[big]);
}

int drift_emit_draw(drift_chain *c, const double *theta, double lp,
                    const double *diag)
{
    int rc = check_state(c, theta);
    if (!rc)
        rc = check_lp(c, theta, lp);
    if (rc)
        return rc;
    uint64_t k;
    if (offer(c, &k) && k % c->cfg->thin == 0)
        write_row(c, theta, lp, diag);
    return DRIFT_OK;
}

/* One skeleton row (--emit segments): lp__, grads__, the sampler's
 * columns, time__, duration__, the constrained values at x0, then x0 and
 * v on the unconstrained scale (x0_k__, v_k__). */
static void write_segment_row(drift_chain *c, const double *x0,
                              const double *v, double duration, double lp,
                              const double *diag)
{
    size_t nc = c->cfg->sampler->n_columns, n_out = c->model->n_out;
    double *row = c->row_buf;
    size_t k = 0;
    if (isnan(lp))
        lp = lp_estimate(c, x0);
    row[k++] = lp;
    row[k++] = (double)c->grads;
    for (size_t j = 0; j < nc; j++)
        row[k++] = diag ? diag[j] : NAN;
    row[k++] = c->t_traj;
    row[k++] = duration;
    c->model->constrain(c->model->self, x0, row + k);
    k += n_out;
    memcpy(row + k, x0, c->d * sizeof *row);
    k += c->d;
    memcpy(row + k, v, c->d * sizeof *row);
    k += c->d;
    if (c->cfg->on_row)
        c->cfg->on_row(c->cfg->on_row_user, c->id, row, k);
    if (c->w) {
        before_row(c, diag);
        FILE *f = drift_writer_file(c->w);
        drift_writer_real(f, lp);
        fprintf(f, ",%llu", (unsigned long long)c->grads);
        for (size_t j = 2; j < k; j++) {
            if (j == 2 + nc && c->out)
                drift_csvout_compat_values(c, f);
            fputc(',', f);
            /* Times and positions need every digit to rebuild the path. */
            if (j >= 2 + nc)
                fprintf(f, "%.17g", row[j]);
            else
                drift_writer_real(f, row[j]);
        }
        fputc('\n', f);
    }
    c->draws_written++;
}

int drift_emit_segment(drift_chain *c, const double *x0, const double *v,
                       double duration, double lp, const double *diag)
{
    if (!c->seg_buf)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "sampler %s emitted a segment but does not "
                                "declare DRIFT_SAMPLER_CONTINUOUS in its "
                                "flags",
                                c->cfg->sampler->name);
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
    int warm = c->in_warmup;
    if (warm && !c->cfg->save_warmup)
        return DRIFT_OK;
    double t0 = c->t_traj, t1 = c->t_traj + duration;
    uint64_t k_offer;
    if (c->cfg->emit_segments) {
        if (duration > 0 && offer(c, &k_offer))
            write_segment_row(c, x0, v, duration, lp, diag);
    } else {
        double dt = c->cfg->thin_time > 0 ? c->cfg->thin_time : 1.0;
        while (c->t_next_out < t1) {
            if (offer(c, &k_offer)) {
                double s = c->t_next_out - t0;
                for (size_t k = 0; k < c->d; k++)
                    c->seg_buf[k] = x0[k] + v[k] * s;
                /* The sampler's lp (if any) is x0's, not this point's. */
                write_row(c, c->seg_buf, NAN, diag);
            }
            /* Multiples of dt, not repeated sums: no drift over 1e9 steps;
             * counted across warmup, so the grid runs on after it. */
            c->grid_k++;
            c->t_next_out = dt * (double)(c->grid_k + 1);
        }
    }
    if (!warm) {
        /* Exact integrals of theta and theta^2 along the segment. */
        double T = duration;
        for (size_t k = 0; k < c->d; k++) {
            c->traj_m1[k] += x0[k] * T + 0.5 * v[k] * T * T;
            c->traj_m2[k] += x0[k] * x0[k] * T + x0[k] * v[k] * T * T +
                             v[k] * v[k] * T * T * T / 3.0;
        }
        c->t_mom += T;
    }
    c->t_traj = t1;
    return DRIFT_OK;
}
