/* score.c: the model's score grad log p(theta | data) at given points
 * (score.h), one at a time through a caller's workspace or many on
 * threads of their own.  Not for estimates from minibatches (the
 * oracles) nor for the discrepancy itself (stats/ksd.c). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "score.h"

/* Rows per model call when this file makes its own workspaces. */
#define SCORE_CHUNK 1024

int drift_score_at(const drift_model *m, void *ws, size_t cap,
                   const double *theta, double *score, double *tmp,
                   double *lp, drift_err *e)
{
    size_t d = m->dim;
    double lp0 = 0, ll = 0;
    int rc = m->log_prior(m->self, ws, theta, &lp0, score, e);
    if (rc)
        return rc;
    if (cap == 0)
        cap = 1;
    for (size_t first = 0; first < m->n_rows; first += cap) {
        size_t k = m->n_rows - first < cap ? m->n_rows - first : cap;
        drift_rows b = {NULL, first, k};
        double part = 0;
        if ((rc = m->log_lik(m->self, ws, theta, &b, NULL, &part, tmp, NULL,
                             e)))
            return rc;
        ll += part;
        for (size_t j = 0; j < d; j++)
            score[j] += tmp[j];
    }
    if (lp)
        *lp = lp0 + ll;
    for (size_t j = 0; j < d; j++)
        if (!isfinite(score[j]))
            return drift_err_set(e, DRIFT_ENUMERIC,
                                 "the gradient of the log density is %g in "
                                 "coordinate %zu",
                                 score[j], j + 1);
    return isfinite(lp0 + ll)
               ? DRIFT_OK
               : drift_err_set(e, DRIFT_ENUMERIC, "the log density is %g",
                               lp0 + ll);
}

/* One thread's share of drift_score_points: points first, first + step,
 * first + 2 step ... */
typedef struct score_part {
    const drift_model *m;
    const double *theta;
    double *scores;
    size_t n, first, step;
    int rc;
    size_t at;              /* the point that failed */
    drift_err err;
} score_part;

static void *score_part_run(void *arg)
{
    score_part *p = arg;
    const drift_model *m = p->m;
    size_t d = m->dim;
    size_t cap = m->n_rows < SCORE_CHUNK ? m->n_rows : SCORE_CHUNK;
    void *ws = m->workspace_new(m->self, cap ? cap : 1);
    double *tmp = drift_calloc(d ? d : 1, sizeof(double));
    p->rc = DRIFT_OK;
    if (!ws || !tmp) {
        p->rc = drift_err_set(&p->err, DRIFT_ENOMEM,
                              "out of memory for a workspace");
        p->at = p->first;
    }
    for (size_t i = p->first; !p->rc && i < p->n; i += p->step) {
        p->rc = drift_score_at(m, ws, cap, p->theta + i * d,
                               p->scores + i * d, tmp, NULL, &p->err);
        p->at = i;
    }
    if (ws)
        m->workspace_free(m->self, ws);
    drift_free(tmp);
    return NULL;
}

int drift_score_points(const drift_model *m, const double *theta, size_t n,
                       double *scores, unsigned threads, drift_err *e)
{
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    if (threads > n)
        threads = n ? (unsigned)n : 1;
    score_part parts[64];
    pthread_t tid[64];
    unsigned char live[64] = {0};
    for (unsigned t = 0; t < threads; t++)
        parts[t] = (score_part){m, theta, scores, n, t, threads, 0, 0,
                                {{0}}};
    for (unsigned t = 1; t < threads; t++)
        if (pthread_create(&tid[t], NULL, score_part_run, &parts[t]) == 0)
            live[t] = 1;
        else
            score_part_run(&parts[t]);
    score_part_run(&parts[0]);
    for (unsigned t = 1; t < threads; t++)
        if (live[t])
            pthread_join(tid[t], NULL);
    /* The failure of the earliest point, whichever thread met it. */
    const score_part *bad = NULL;
    for (unsigned t = 0; t < threads; t++)
        if (parts[t].rc && (!bad || parts[t].at < bad->at))
            bad = &parts[t];
    if (bad)
        return drift_err_set(e, bad->rc, "draw %zu: %s", bad->at + 1,
                             bad->err.msg);
    return DRIFT_OK;
}

int drift_score_coordinates_are_outputs(const drift_model *m)
{
    size_t d = m->dim;
    if (m->n_out < d)
        return 0;
    double *theta = drift_calloc(d ? d : 1, sizeof(double));
    double *out = drift_calloc(m->n_out ? m->n_out : 1, sizeof(double));
    int same = theta && out;
    for (int trial = 0; same && trial < 3; trial++) {
        for (size_t k = 0; k < d; k++)
            theta[k] = trial == 0 ? 0.0
                       : trial == 1 ? 0.37 + 0.11 * (double)k
                                    : -1.3 - 0.07 * (double)k;
        m->constrain(m->self, theta, out);
        for (size_t k = 0; k < d; k++)
            same &= out[k] == theta[k];
    }
    drift_free(theta);
    drift_free(out);
    return same;
}
