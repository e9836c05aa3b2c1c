/* method_variational.c: the variational method, as CmdStan's: ADVI's
 * Gaussian approximation on the unconstrained scale (variational.h), its
 * gradients from minibatches when the data is large; its rows CmdStan's
 * variational CSV's (lp__ = 0, log_p__, log_g__, the parameters and
 * generated quantities; the first row the approximation's mean), with the
 * checks of its draws (the Pareto k and the importance-weighted shift of
 * the means, drift_method_approx) in the file's closing comments and
 * warnings. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "engine/stats/psis.h"
#include "logdensity.h"
#include "method.h"
#include "optimize.h"
#include "variational.h"

typedef struct vi_args {
    const char *init;
    uint64_t output_samples;
    int have_eta, have_adapt, quiet;
    int warm;                   /* -1: by the batch, 0, 1 */
    drift_vi_opts o;
} vi_args;

#define OFF(f) offsetof(vi_args, f)

static int set_algorithm(void *args, const char *v, drift_err *e)
{
    vi_args *a = args;
    if (!strcmp(v, "meanfield"))
        a->o.fullrank = 0;
    else if (!strcmp(v, "fullrank"))
        a->o.fullrank = 1;
    else
        return drift_err_set(e, DRIFT_EINVAL,
                             "--algorithm %s: expected meanfield or "
                             "fullrank",
                             v);
    return DRIFT_OK;
}

static int set_eta(void *args, const char *v, drift_err *e)
{
    vi_args *a = args;
    if (drift_parse_double(v, &a->o.eta) || !(a->o.eta > 0) ||
        !isfinite(a->o.eta))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--eta %s: expected a positive number", v);
    a->have_eta = 1;
    return DRIFT_OK;
}

static int zero_one(const char *name, const char *v, int *out, drift_err *e)
{
    if (strcmp(v, "0") && strcmp(v, "1"))
        return drift_err_set(e, DRIFT_EINVAL, "--%s %s: expected 0 or 1",
                             name, v);
    *out = v[0] == '1';
    return DRIFT_OK;
}

static int set_adapt(void *args, const char *v, drift_err *e)
{
    vi_args *a = args;
    a->have_adapt = 1;
    return zero_one("adapt-engaged", v, &a->o.adapt_engaged, e);
}

static int set_warm(void *args, const char *v, drift_err *e)
{
    return zero_one("warm-start", v, &((vi_args *)args)->warm, e);
}

static int rows(const char *name, const char *v, size_t *out, drift_err *e)
{
    uint64_t u;
    if (drift_parse_u64(v, &u) || u == 0 || u > 1000000000u)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--%s %s: expected a positive integer (at most "
                             "10^9)",
                             name, v);
    *out = (size_t)u;
    return DRIFT_OK;
}

static int set_batch(void *args, const char *v, drift_err *e)
{
    return rows("batch", v, &((vi_args *)args)->o.batch, e);
}

static int set_elbo_rows(void *args, const char *v, drift_err *e)
{
    return rows("elbo-rows", v, &((vi_args *)args)->o.elbo_rows, e);
}

static const drift_mopt opts[] = {
    {"algorithm", DRIFT_MOPT_CUSTOM, 0,
     "A  meanfield (default: a diagonal Gaussian) or fullrank", 0, NULL,
     set_algorithm},
    {"init", DRIFT_MOPT_FILE, OFF(init),
     "FILE  initial mean (JSON or CSV; default: uniform(-2, 2) on the "
     "unconstrained scale)", 0, NULL, NULL},
    {"iter", DRIFT_MOPT_UCOUNT, OFF(o.iter),
     "N  iterations at most (default 10000)", 0, NULL, NULL},
    {"grad-samples", DRIFT_MOPT_UCOUNT, OFF(o.grad_samples),
     "N  draws per ELBO gradient (default 1)", 0, NULL, NULL},
    {"elbo-samples", DRIFT_MOPT_UCOUNT, OFF(o.elbo_samples),
     "N  draws per ELBO estimate (default 100)", 0, NULL, NULL},
    {"eta", DRIFT_MOPT_CUSTOM, 0,
     "E  step-size scale (default: chosen by adaptation; given, adaptation "
     "is off)", 0, NULL, set_eta},
    {"adapt-engaged", DRIFT_MOPT_CUSTOM, 0,
     "0|1  choose eta over 100, 10, 1, 0.1, 0.01 (default 1; 0: eta as "
     "given, 1 if not)", 0, NULL, set_adapt},
    {"adapt-iter", DRIFT_MOPT_UCOUNT, OFF(o.adapt_iter),
     "N  iterations per eta tried (default 50)", 0, NULL, NULL},
    {"tol-rel-obj", DRIFT_MOPT_POSITIVE, OFF(o.tol_rel_obj),
     "T  relative ELBO change, mean or median of recent ones (default "
     "0.01)", 0, NULL, NULL},
    {"eval-elbo", DRIFT_MOPT_UCOUNT, OFF(o.eval_elbo),
     "N  iterations between ELBO estimates (default 100)", 0, NULL, NULL},
    {"output-samples", DRIFT_MOPT_COUNT, OFF(output_samples),
     "N  draws written (default 1000)", 100000000u, NULL, NULL},
    {"batch", DRIFT_MOPT_CUSTOM, 0,
     "B  rows per gradient (default: all when N <= 10^4, else max(1000, "
     "N/1000))", 0, NULL, set_batch},
    {"elbo-rows", DRIFT_MOPT_CUSTOM, 0,
     "R  rows of each ELBO estimate, drawn once (default: all when N <= "
     "10^4, else 10^4)", 0, NULL, set_elbo_rows},
    {"warm-start", DRIFT_MOPT_CUSTOM, 0,
     "0|1  start from the minibatch mode (adam) with scales from the rows' "
     "gradient spread, and take the mean's steps in the approximation's "
     "scale (default: 1 when gradients are from minibatches; 0: Stan's "
     "start and steps exactly)", 0, NULL, set_warm},
    {"quiet", DRIFT_MOPT_SET, OFF(quiet), "no progress lines", 0, NULL,
     NULL},
};

static void defaults(void *args)
{
    vi_args *a = args;
    drift_vi_defaults(&a->o);
    a->output_samples = 1000;
    a->warm = -1;
}

static int check(void *args, drift_err *e)
{
    (void)e;
    vi_args *a = args;
    if (a->have_eta && !a->have_adapt)
        a->o.adapt_engaged = 0;
    return DRIFT_OK;
}

static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    (void)args;
    static const char *const first[] = {"lp__", "log_p__", "log_g__"};
    return drift_method_model_columns(first, 3, m, names, n, e);
}

static void write_header(drift_method_run *r, const vi_args *a,
                         const drift_vi_result *res)
{
    const drift_vi_opts *o = &a->o;
    FILE *f = r->f;
    drift_method_header(r);
    if (!f)
        return;
    const char *algo = o->fullrank ? "fullrank" : "meanfield";
    fprintf(f, "# method = variational\n#   variational\n"
               "#     algorithm = %s\n#       %s\n#     iter = %u\n"
               "#     grad_samples = %u\n#     elbo_samples = %u\n"
               "#     eta = %g\n#     adapt\n#       engaged = %d\n"
               "#       iter = %u\n#     tol_rel_obj = %g\n"
               "#     eval_elbo = %u\n#     output_samples = %llu\n"
               "#     batch = %zu\n#     elbo_rows = %zu\n",
            algo, algo, o->iter, o->grad_samples, o->elbo_samples, o->eta,
            o->adapt_engaged, o->adapt_iter, o->tol_rel_obj, o->eval_elbo,
            (unsigned long long)a->output_samples, res->batch,
            res->elbo_rows);
    drift_method_header_io(r);
    fprintf(f, "#   rows = %zu\n# init = %s\n# random\n#   seed = %llu\n"
               "# output\n#   file = %s\n",
            r->m->n_rows, a->init ? a->init : "2",
            (unsigned long long)r->seed, r->out ? r->out : "(none)");
    drift_method_header_names(r);
    if (o->adapt_engaged)
        fprintf(f, "# Stepsize adaptation complete.\n# eta = %g\n",
                res->eta);
}

/* One row: lp__ = 0, log_p__, log_g__, then theta's constrained values and
 * generated quantities (seeded by k). */
static int put_row(drift_method_run *r, drift_logdensity *ld,
                   const double *theta, double log_p, double log_g,
                   double *row, uint64_t k, drift_err *e)
{
    row[0] = 0;
    row[1] = log_p;
    row[2] = log_g;
    int rc = drift_method_values(r, ld, theta,
                                 drift_method_seed(r->seed, k + 1), -1,
                                 row + 3, e);
    if (rc)
        return rc;
    drift_method_row(r, row);
    return DRIFT_OK;
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const vi_args *a = args;
    const drift_model *m = r->m;
    drift_logdensity *ld;
    int rc = drift_logdensity_new(&ld, m, 1, NULL, e);
    if (rc)
        return rc;
    size_t d = m->dim, S = (size_t)a->output_samples;
    double *theta = drift_malloc_array(d + r->n_columns + 1, sizeof *theta);
    double *sd = drift_malloc_array(d ? d : 1, sizeof *sd);
    drift_vi *q = NULL;
    drift_method_approx chk = {0};
    if (!theta || !sd) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = drift_method_approx_init(&chk, S, m->n_out, e)))
        goto done;
    double *row = theta + d;
    if ((rc = drift_optimize_start(ld, m, a->init, r->seed, theta, e))) {
        if (rc != DRIFT_ENUMERIC)
            rc = DRIFT_EINVAL;
        goto done;
    }
    drift_vi_opts o = a->o;
    o.log = a->quiet ? NULL : r->diag;
    size_t b = o.batch ? o.batch : drift_logdensity_batch(m->n_rows);
    int warm = a->warm >= 0 ? a->warm : b < m->n_rows;
    o.stan_steps = !warm;
    o.control_variates = warm;
    if (warm) {
        drift_optimize_sg_opts sg;
        drift_optimize_result mr;
        drift_optimize_sg_defaults(&sg);
        sg.batch = b;
        sg.seed = r->seed;
        if ((rc = drift_optimize_sg(ld, m, &sg, theta, &mr, e)) ||
            (rc = drift_optimize_post_sds(m, theta, r->seed, sd, e))) {
            drift_err_prefix(e, "the warm start");
            goto done;
        }
        if (!a->quiet)
            fprintf(r->diag, "%s: warm start: the minibatch mode after %u "
                             "adam steps (its gradient %.2g of its sampling "
                             "sd)\n",
                    r->who, mr.iterations, mr.grad_sds);
    }
    drift_vi_result res;
    if ((rc = drift_vi_fit(&q, ld, m, &o, theta, warm ? sd : NULL, r->seed,
                           &res, e)))
        goto done;
    if (res.n_retries)
        fprintf(r->diag, "%s: note: the adapted eta diverged (%s); the "
                         "ascent ran again from the start with eta %g\n",
                r->who, res.retried, res.eta);
    write_header(r, a, &res);
    drift_vi_mean(q, theta);
    if ((rc = put_row(r, ld, theta, 0, 0, row, 0, e)))
        goto done;
    drift_rng rng;
    drift_rng_seed(&rng, r->seed, 1);
    size_t n_bad = 0;
    for (size_t k = 0; k < S; k++) {
        double log_g, log_p;
        drift_vi_draw(q, &rng, theta, &log_g);
        if (drift_logdensity_eval(ld, theta, &log_p, NULL, e)) {
            log_p = -INFINITY;
            n_bad++;
        }
        if ((rc = put_row(r, ld, theta, log_p, log_g, row, k + 1, e)))
            goto done;
        drift_method_approx_add(&chk, log_p, log_g, row + 3);
    }
    if (r->f) {
        fprintf(r->f, "# \n# iterations = %u\n# converged = %d (%s)\n"
                      "# ELBO = %.10g\n",
                res.iterations, res.converged, res.why, res.elbo);
        if (n_bad)
            fprintf(r->f, "# draws with no finite log density: %zu\n",
                    n_bad);
    }
    double khat;
    drift_method_approx_report(r, &chk,
                               a->o.fullrank
                                   ? "try a smaller --tol-rel-obj (0.001) "
                                     "or more --iter, or drift sample for "
                                     "exact draws"
                                   : "try --algorithm fullrank, a smaller "
                                     "--tol-rel-obj (0.001), or drift "
                                     "sample for exact draws",
                               &khat);
    int have_k = S >= 10;
    if (res.converged) {
        fprintf(r->diag, "%s: %s after %u iterations (eta = %g, %zu rows "
                         "per gradient); ELBO %.6g%s%.2f%s%s\n",
                r->who, res.why, res.iterations, res.eta, res.batch,
                res.elbo, have_k ? ", Pareto k " : "", have_k ? khat : 0.0,
                r->out ? " -> " : "", r->out ? r->out : "");
    } else {
        r->keep = 1;
        rc = drift_err_set(e, DRIFT_ENUMERIC,
                           "warning: %s (%u iterations; the approximation "
                           "reached is in %s): the ELBO may not have "
                           "converged; raise --iter, or give a smaller "
                           "--eta",
                           res.why, res.iterations,
                           r->out ? r->out : "the output");
    }
done:
    drift_vi_free(q);
    drift_method_approx_free(&chk);
    drift_free(theta);
    drift_free(sd);
    drift_logdensity_free(ld);
    return rc;
}

const drift_method drift_method_variational = {
    .name = "variational",
    .summary = "ADVI over minibatches (CmdStan's variational)",
    .synopsis = "drift variational MODEL.drift|--model NAME --data FILE "
                "[--algorithm meanfield|fullrank] [options]",
    .about = "Fits a Gaussian to the posterior on the unconstrained "
             "scale by ADVI, as\nCmdStan's variational method: "
             "reparameterisation gradients of the ELBO,\nStan's "
             "adaptive step sizes (eta chosen over 100, 10, 1, 0.1, "
             "0.01 unless\n--eta is given), stopping when the mean or "
             "median relative change of the\nELBO falls below "
             "--tol-rel-obj.  On large data each gradient is from a\n"
             "minibatch of --batch rows and the ELBO from one fixed "
             "set of --elbo-rows.\nWrites CmdStan's variational CSV: "
             "lp__ (0), log_p__, log_g__, the parameters\nand "
             "generated quantities; the first row the approximation's "
             "mean, then\n--output-samples draws.  The Pareto k of the "
             "draws (PSIS) and the largest\nshift of a parameter's mean "
             "when the draws are weighted by posterior /\napproximation "
             "close the file; a warning says when k is above 0.7 or a "
             "mean\nmoves by more than half its sd.  Exit status 1 when "
             "the iteration limit is hit.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(vi_args),
    .default_out = "variational.csv",
    .seed_help = "S  seed (default: clock)",
    .defaults = defaults,
    .check = check,
    .columns = columns,
    .run = run,
};
