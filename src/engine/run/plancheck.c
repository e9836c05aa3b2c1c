/* plancheck.c: the kept draws' spread against the Laplace approximation
 * at the run's centre (plancheck.h says why and what). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "services.h"
#include "plancheck.h"

/* The Hessian's rows: at most BUDGET_ROWS gradient evaluations of rows
 * in all (d + 1 subsample gradients, forward differences), and at most
 * BUDGET_PASSES data passes, but at least MIN_ROWS rows a gradient when N
 * has them: its entries' relative noise is then a few per cent at most. */
#define BUDGET_ROWS 2e6
#define BUDGET_PASSES 5.0
#define MIN_ROWS 5000
/* Forward differences of the gradient at steps of this many sds. */
#define FD_STEP 1e-4

int drift_plancheck_setup(drift_chain *c)
{
    drift_run_shared *run = c->run;
    const drift_cv *cv = &run->cv;
    size_t d = c->d, N = c->N;
    const drift_services *svc = &drift_services_table;
    if (!cv->ready || !cv->mode || d == 0 || d > DRIFT_PLANCHECK_MAX_DIM ||
        N == 0 || c->cfg->ranks)
        return DRIFT_OK;
    double per = fmin(BUDGET_ROWS, BUDGET_PASSES * (double)N) /
                 (double)(d + 1);
    size_t n = per < MIN_ROWS ? MIN_ROWS : (size_t)per;
    if (n > N)
        n = N;
    /* a budget the check could eat into: no check (it is not the run's) */
    const drift_run_config *cfg = c->cfg;
    double cost = (double)(d + 1) * (double)n;
    if (cfg->budget.seconds > 0 ||
        (cfg->budget.passes > 0 &&
         (double)c->grads + cost > 0.5 * cfg->budget.passes * (double)N))
        return DRIFT_OK;
    size_t *rows = drift_malloc_array(n, sizeof *rows);
    double *H = drift_malloc_array(3 * d * d + 4 * d, sizeof *H);
    if (!rows || !H) {
        drift_free(rows);
        drift_free(H);
        return drift_chain_fail(c, DRIFT_ENOMEM, "out of memory");
    }
    double *inv = H + d * d, *scratch = inv + d * d, *x = scratch + d * d;
    double *gp = x + d, *gm = gp + d, *pr = gm + d;
    /* every (N/n)-th row, spread over the whole file */
    for (size_t i = 0; i < n; i++)
        rows[i] = (size_t)((double)i * (double)N / (double)n);
    double scale = (double)N / (double)n;
    /* g at the centre, then at a step along each coordinate */
    int rc = svc->grad_sum(c, cv->mode, rows, n, gm, NULL);
    if (!rc)
        rc = svc->grad_prior(c, cv->mode, pr, NULL);
    for (size_t k = 0; !rc && k < d; k++)
        gm[k] = scale * gm[k] + pr[k];
    for (size_t j = 0; j < d && !rc; j++) {
        double sd = sqrt(cv->inv_metric[j]);
        double e = FD_STEP * (sd > 0 && isfinite(sd) ? sd : 1.0);
        memcpy(x, cv->mode, d * sizeof *x);
        x[j] = cv->mode[j] + e;
        rc = svc->grad_sum(c, x, rows, n, gp, NULL);
        if (!rc)
            rc = svc->grad_prior(c, x, pr, NULL);
        for (size_t k = 0; !rc && k < d; k++)
            H[j * d + k] = (scale * gp[k] + pr[k] - gm[k]) / e;
    }
    drift_free(rows);
    if (rc) {
        drift_free(H);
        /* a point without a finite density near the centre: no check */
        return rc == DRIFT_ENONFINITE ? DRIFT_OK : rc;
    }
    for (size_t j = 0; j < d; j++)
        for (size_t k = 0; k < j; k++)
            H[j * d + k] = H[k * d + j] = 0.5 * (H[j * d + k] + H[k * d + j]);
    double *var = NULL, *mom = NULL;
    unsigned slots = c->cfg->launch.chains ? c->cfg->launch.chains : 1;
    if (!drift_adapt_spd_inverse(H, d, inv, scratch)) {
        var = drift_malloc_array(d, sizeof *var);
        mom = drift_calloc((size_t)slots * DRIFT_PLANCHECK_BATCHES *
                               (1 + 2 * d),
                           sizeof *mom);
        if (var && mom)
            for (size_t j = 0; j < d; j++)
                var[j] = inv[j * d + j];
    }
    drift_free(H);
    if (!var || !mom) {
        drift_free(var);
        drift_free(mom);
        return DRIFT_OK;
    }
    run->check_var = var;
    run->check_mom = mom;
    run->check_slots = slots;
    return DRIFT_OK;
}

void drift_plancheck_add(drift_chain *c, const double *theta)
{
    drift_run_shared *run = c->run;
    if (!run || !run->check_mom || c->cfg->output.discard_draws)
        return;
    const drift_run_config *cfg = c->cfg;
    unsigned first =
        cfg->launch.first_chain_id ? cfg->launch.first_chain_id : 1;
    if (c->id < first || c->id - first >= run->check_slots)
        return;
    uint64_t post =
        c->iter > cfg->budget.warmup ? c->iter - cfg->budget.warmup : 0;
    uint64_t total = cfg->budget.iters ? cfg->budget.iters : 1;
    size_t b = (size_t)((double)post * DRIFT_PLANCHECK_BATCHES /
                        (double)total);
    if (b >= DRIFT_PLANCHECK_BATCHES)
        b = DRIFT_PLANCHECK_BATCHES - 1;
    size_t d = c->d, width = 1 + 2 * d;
    double *m = run->check_mom +
                ((size_t)(c->id - first) * DRIFT_PLANCHECK_BATCHES + b) * width;
    m[0] += 1;
    for (size_t k = 0; k < d; k++) {
        m[1 + k] += theta[k];
        m[1 + d + k] += theta[k] * theta[k];
    }
}

void drift_plancheck_report(drift_run_shared *run, const drift_run_config *cfg,
                            unsigned K, char *buf, size_t cap)
{
    buf[0] = 0;
    double *var = run->check_var, *mom = run->check_mom;
    run->check_var = NULL;
    run->check_mom = NULL;
    size_t d = cfg->problem.model->dim, width = 1 + 2 * d;
    size_t nb = (size_t)(K < run->check_slots ? K : run->check_slots) *
                DRIFT_PLANCHECK_BATCHES;
    if (!var || !mom || nb < 4) {
        drift_free(var);
        drift_free(mom);
        return;
    }
    /* batches with draws, and the pooled count */
    size_t used = 0;
    double n_all = 0;
    for (size_t b = 0; b < nb; b++)
        if (mom[b * width] >= 2) {
            used++;
            n_all += mom[b * width];
        }
    if (used < 4) {
        drift_free(var);
        drift_free(mom);
        return;
    }
    /* A coordinate counts when its sd ratio is off by more than the
     * tolerance plus z standard errors (z grows with d, so that about
     * one run in a thousand flags a coordinate by chance). */
    double z = fmax(3.0, sqrt(2.0 * log(2.0 * (double)d)) + 0.5);
    /* The Laplace approximation's own error in a sd shrinks with the
     * rows per parameter: at 500 rows and d = 8 (a logistic regression)
     * the posterior's sds are up to 5 % wider than its; at 10^5 rows and
     * d = 20, a fraction of 1 %. */
    double N = (double)cfg->problem.model->n_rows;
    double tol = DRIFT_PLANCHECK_TOL +
                 (N > 0 ? DRIFT_PLANCHECK_TOL_ROWS * sqrt((double)d / N) : 0);
    size_t flagged = 0, worst = 0;
    double worst_r = 1, worst_se = 0, worst_gap = -1;
    for (size_t k = 0; k < d; k++) {
        double s1 = 0, s2 = 0;
        for (size_t b = 0; b < nb; b++)
            if (mom[b * width] >= 2) {
                s1 += mom[b * width + 1 + k];
                s2 += mom[b * width + 1 + d + k];
            }
        double mean = s1 / n_all;
        double v = s2 / n_all - mean * mean;
        /* each batch's variance about the pooled mean; their spread gives
         * the Monte Carlo error of v */
        double a = 0, q = 0;
        for (size_t b = 0; b < nb; b++) {
            double nk = mom[b * width];
            if (nk < 2)
                continue;
            double mb = mom[b * width + 1 + k] / nk;
            double vb = mom[b * width + 1 + d + k] / nk - 2 * mean * mb +
                        mean * mean;
            a += vb;
            q += vb * vb;
        }
        double u = (double)used, mv = a / u;
        double sv = sqrt(fmax(0, (q / u - mv * mv)) / (u - 1));
        if (!(v > 0) || !(var[k] > 0) || !isfinite(v))
            continue;
        double r = sqrt(v / var[k]);
        double se = 0.5 * r * sv / v;
        double gap = fabs(r - 1) - tol - z * se;
        if (gap > 0) {
            flagged++;
            if (gap > worst_gap) {
                worst_gap = gap;
                worst = k;
                worst_r = r;
                worst_se = se;
            }
        }
    }
    if (flagged) {
        char name[128];
        drift_model_param_name(cfg->problem.model, worst, name, sizeof name);
        snprintf(buf, cap,
                 "the kept draws are spread %s than the posterior's Gaussian "
                 "approximation at its mode (the Laplace approximation, "
                 "with the Hessian there): %zu of %zu parameters differ by "
                 "more than %.0f%% beyond their Monte Carlo error, worst %s "
                 "(unconstrained), whose sd is %.3f +- %.3f times the "
                 "approximation's.  With this many rows a posterior is "
                 "usually close to that Gaussian, so the sampler's bias "
                 "likely shows: check with a smaller step (--set h= a "
                 "quarter of the plan's), with another sampler (sgld, "
                 "sghmc), or with nuts on a subsample of the rows",
                 worst_r < 1 ? "narrower" : "wider", flagged, d,
                 100 * tol, name, worst_r, worst_se);
    }
    drift_free(var);
    drift_free(mom);
}
