/* shard.c: the rows of a rank's share and the combination of the ranks'
 * results into what one process would have computed (shard.h).  Not for
 * the arithmetic of the oracles (oracle.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "ext.h"
#include "shard.h"

drift_shard *drift_shard_new(drift_ranks_chan *chan, size_t first, size_t n,
                             size_t d)
{
    drift_shard *s = drift_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->chan = chan;
    s->first = first;
    s->n = n;
    s->writer = drift_ranks_chan_grank(chan) == 0;
    s->sums = drift_calloc(d + 1, sizeof *s->sums);
    if (!s->sums) {
        drift_free(s);
        return NULL;
    }
    return s;
}

void drift_shard_free(drift_shard *s)
{
    if (!s)
        return;
    drift_free(s->local);
    drift_free(s->pos);
    drift_free(s->sums);
    drift_free(s);
}

size_t drift_shard_pick(drift_shard *s, const size_t *rows, size_t n)
{
    if (n > s->cap) {
        size_t *l = drift_realloc(s->local, n * sizeof *l);
        if (!l)
            return SIZE_MAX;
        s->local = l;
        size_t *p = drift_realloc(s->pos, n * sizeof *p);
        if (!p)
            return SIZE_MAX;
        s->pos = p;
        s->cap = n;
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        size_t r = rows[k] - s->first;
        /* Unsigned: a row before the share wraps past n. */
        if (r < s->n) {
            s->local[m] = r;
            s->pos[m++] = k;
        }
    }
    return m;
}

void drift_shard_scatter(const drift_shard *s, double *out, size_t n,
                         size_t k, size_t w)
{
    /* From the last owned row back: its place is at or after its
     * compact slot, so no slot is overwritten before it is moved. */
    size_t next = n; /* places >= next are final */
    for (size_t j = k; j-- > 0;) {
        size_t p = s->pos[j];
        for (size_t q = p + 1; q < next; q++)
            for (size_t i = 0; i < w; i++)
                out[q * w + i] = -0.0;
        if (p != j)
            memmove(out + p * w, out + j * w, w * sizeof *out);
        next = p;
    }
    for (size_t q = 0; q < next; q++)
        for (size_t i = 0; i < w; i++)
            out[q * w + i] = -0.0;
}

/* This rank's message for its status rc. */
static const char *own_message(const drift_chain *c, int rc)
{
    if (rc == DRIFT_OK)
        return "";
    if (rc == DRIFT_ENONFINITE)
        return c->nonfinite;
    return c->failed ? c->message : "failed";
}

int drift_shard_sum(drift_chain *c, double *v, size_t n, int rc)
{
    char out[512];
    return drift_ranks_sum(c->ext.shard->chan, v, n, rc, own_message(c, rc),
                           out, sizeof out);
}

int drift_shard_combine(drift_chain *c, double *v, size_t n, int rc)
{
    char out[512];
    int arc = drift_ranks_sum(c->ext.shard->chan, v, n, rc, own_message(c, rc),
                              out, sizeof out);
    if (arc == DRIFT_OK)
        return DRIFT_OK;
    if (arc == DRIFT_ENONFINITE) {
        if (rc != DRIFT_ENONFINITE)
            snprintf(c->nonfinite, sizeof c->nonfinite, "%s", out);
        return arc;
    }
    if (!c->failed)
        drift_chain_fail(c, arc, "%s", out);
    return c->failed;
}

void drift_shard_defer(drift_chain *c)
{
    if (!c->ext.shard || !c->failed)
        return;
    drift_ranks_defer(c->ext.shard->chan, c->failed, c->message);
    c->failed = 0;
    c->message[0] = '\0';
}

int drift_shard_step_end(drift_chain *c, int ask)
{
    drift_shard *s = c->ext.shard;
    if (ask) {
        int rc = drift_ranks_agree(s->chan);
        if (rc && !c->failed) {
            char out[512];
            snprintf(out, sizeof out,
                     "the ranks of chain %u could not agree: status %d",
                     c->id, rc);
            drift_chain_fail(c, rc, "%s", out);
        }
    }
    if (!c->failed && drift_ranks_failed(s->chan)) {
        char out[512];
        int rc = drift_ranks_failure(s->chan, out, sizeof out);
        drift_chain_fail(c, rc, "%s", out);
    }
    return c->failed || drift_ranks_stopped(s->chan);
}

int drift_shard_stopped(const drift_chain *c)
{
    return drift_ranks_stopped(c->ext.shard->chan);
}

/* ---- chains across ranks as a run extension (ext.h) --------------------- */

/* What runs in one process only. */
static int shard_check(const drift_run_config *cfg, drift_err *e)
{
    if (!cfg->ranks)
        return DRIFT_OK;
    if (cfg->step.gradient == DRIFT_GRADIENT_CV)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--gradient cv under mpirun: the mode search "
                             "and the control variates run in one process "
                             "only; drop --gradient cv, or run without "
                             "mpirun");
    if (cfg->output.save_gradients)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--save-gradients under mpirun: the scores "
                             "are computed over the rows in one process "
                             "only; drop --save-gradients (drift summary "
                             "--ksd recomputes them from the model and "
                             "data)");
    if (cfg->step.gradient == DRIFT_GRADIENT_SVRG ||
        cfg->step.gradient == DRIFT_GRADIENT_SAGA ||
        cfg->step.gradient == DRIFT_GRADIENT_TMU) {
        const char *name = drift_gradient_name(cfg->step.gradient);
        return drift_err_set(e, DRIFT_EINVAL,
                             "--gradient %s under mpirun: its snapshots "
                             "are kept in one process; drop it, or run "
                             "without mpirun",
                             name);
    }
    return DRIFT_OK;
}

/* This rank's rows and the chain's channel; the group's rank 0 keeps the
 * --seconds clock for all. */
static int shard_open(drift_chain *c, drift_chain_result *res)
{
    (void)res;
    const drift_run_config *cfg = c->cfg;
    const drift_run_ranks *ranks = cfg->ranks;
    if (!ranks)
        return DRIFT_EXT_IDLE;
    drift_ranks_chan *chan = ranks->chans[drift_run_ext_index(c)];
    c->ext.shard = drift_shard_new(chan, ranks->rows_first,
                                   cfg->problem.model->n_rows, c->d);
    if (!c->ext.shard) {
        drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
        return DRIFT_EXT_STOP;
    }
    if (c->ext.shard->writer && cfg->budget.seconds > 0)
        drift_ranks_chan_deadline(chan, c->t_start + cfg->budget.seconds);
    return DRIFT_EXT_ON;
}

/* The gate before the first step: what a rank alone could not do so far
 * (its file, its held-out set, the file's header) fails the chain on
 * every rank. */
static int shard_begin(drift_chain *c)
{
    return drift_shard_step_end(c, 1) && c->failed;
}

/* The end of a step: every DRIFT_EXT_POLL_EVERY steps the group agrees
 * even if the step summed nothing (so that a signal is heard), and a
 * rank's deferred failure fails the chain on every rank. */
static int shard_gate(drift_chain *c)
{
    return drift_shard_step_end(c, c->iter % DRIFT_EXT_POLL_EVERY == 0) &&
           c->failed;
}

static void shard_close(drift_chain *c, drift_chain_result *res, int started)
{
    (void)res;
    (void)started;
    drift_shard_free(c->ext.shard);
    c->ext.shard = NULL;
}

const drift_run_ext drift_shard_ext = {
    .name = "shard",
    .check = shard_check,
    .open = shard_open,
    .begin = shard_begin,
    .gate = shard_gate,
    .close = shard_close,
};
