/* method_laplace.c: the laplace method, as CmdStan's: draws from the
 * Gaussian approximation at the posterior mode on the unconstrained scale
 * (laplace.h), the mode read from an optimize CSV file (mode) or found
 * here by L-BFGS; with the constraint Jacobians by default (CmdStan's
 * jacobian=1).  Its rows: log_p__ (the log density at the draw), log_g__
 * (the approximation's, up to its constant), the parameters and the
 * generated quantities of each draw; with the Jacobians, the checks of
 * the draws (Pareto k, the importance-weighted shift of the means:
 * drift_method_approx) close the file, with a warning when they fail. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "laplace.h"
#include "logdensity.h"
#include "method.h"
#include "optimize.h"
#include "points.h"

typedef struct lap_args {
    const char *mode, *init;
    int jacobian;
    uint64_t draws;
} lap_args;

#define OFF(f) offsetof(lap_args, f)

static const drift_mopt opts[] = {
    {"mode", DRIFT_MOPT_FILE, OFF(mode),
     "FILE  the mode: a CSV file of drift optimize or CmdStan's optimize "
     "(default: found here by L-BFGS)", 0, NULL, NULL},
    {"init", DRIFT_MOPT_FILE, OFF(init),
     "FILE  the mode search's initial values (JSON or CSV)", 0, NULL, NULL},
    {"jacobian", DRIFT_MOPT_SET, OFF(jacobian),
     "include the constraint transforms' log-Jacobians (the default, as "
     "CmdStan's jacobian=1)", 0, NULL, NULL},
    {"no-jacobian", DRIFT_MOPT_CLEAR, OFF(jacobian),
     "the approximation of the constrained values' density (its mode: "
     "drift optimize's default)", 0, NULL, NULL},
    {"draws", DRIFT_MOPT_COUNT, OFF(draws), "N  draws (default 1000)",
     100000000u, NULL, NULL},
};

static void defaults(void *args)
{
    lap_args *a = args;
    a->jacobian = 1;
    a->draws = 1000;
}

static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    (void)args;
    static const char *const first[] = {"log_p__", "log_g__"};
    return drift_method_model_columns(first, 2, m, names, n, e);
}

/* The mode into theta: the mode file's one row, or L-BFGS's. */
static int find_mode(const lap_args *a, drift_method_run *r,
                     drift_logdensity *ld, double *theta, drift_err *e)
{
    const drift_model *m = r->m;
    if (a->mode) {
        double *vals = NULL;
        size_t n = 0;
        int rc = drift_points_from_draws(a->mode, m, 0, &vals, &n, NULL, e);
        if (rc) /* a file the user gave: bad input */
            return drift_err_prefix(e, "--mode %s", a->mode), DRIFT_EINVAL;
        if (n != 1) {
            free(vals);
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--mode %s: %zu rows; an optimize file has "
                                 "one (the mode)",
                                 a->mode, n);
        }
        rc = m->unconstrain(m->self, vals, theta, e);
        free(vals);
        if (rc)
            return drift_err_prefix(e, "--mode %s", a->mode), DRIFT_EINVAL;
        return DRIFT_OK;
    }
    int rc = drift_optimize_start(ld, m, a->init, r->seed, theta, e);
    if (rc)
        return rc;
    drift_optimize_opts o;
    drift_optimize_defaults(&o);
    drift_optimize_result res;
    if ((rc = drift_optimize_lbfgs(ld, m->dim, &o, theta, &res, e)))
        return rc == DRIFT_EINVAL ? DRIFT_ENUMERIC : rc;
    if (!res.converged)
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "the mode search did not converge (%s after %u "
                             "iterations): run drift optimize and give its "
                             "file with --mode",
                             res.why, res.iterations);
    fprintf(r->diag, "%s: the mode: %s after %u iterations, lp__ = %.10g%s\n",
            r->who, res.why, res.iterations, res.lp,
            r->out ? " (written beside the draws, as _mode.csv)" : "");
    return DRIFT_OK;
}

static void write_header(drift_method_run *r, const lap_args *a,
                         const char *mode)
{
    drift_method_header(r);
    if (!r->f)
        return;
    fprintf(r->f, "# method = laplace\n#   laplace\n#     mode = %s\n"
                  "#     jacobian = %d\n#     draws = %llu\n",
            mode, a->jacobian,
            (unsigned long long)a->draws);
    drift_method_header_io(r);
    fprintf(r->f, "# random\n#   seed = %llu\n# output\n#   file = %s\n",
            (unsigned long long)r->seed, r->out ? r->out : "(none)");
    drift_method_header_names(r);
}

/* Where the mode found here is written, beside out: OUT's name less its
 * ".csv", then "_mode.csv" (CmdStan's laplace names its mode file, and
 * CmdStanPy reads the mode from it). */
static void mode_path(const char *out, char *path, size_t size)
{
    size_t len = strlen(out);
    if (len >= 4 && !strcmp(out + len - 4, ".csv"))
        len -= 4;
    snprintf(path, size, "%.*s_mode.csv", (int)len, out);
}

/* The mode found here as CmdStan's optimize CSV, at path: lp__ (the
 * log density there, with the Jacobians as the draws'), the parameters
 * and the generated quantities at it. */
static int write_mode(drift_method_run *r, const lap_args *a,
                      const char *path, drift_logdensity *ld,
                      const double *theta, drift_err *e)
{
    size_t w = r->n_columns - 1;
    double *row = drift_malloc_array(w + 1, sizeof *row);
    char **names = drift_calloc(w, sizeof *names);
    drift_writer *wr = NULL;
    int rc = DRIFT_OK;
    if (!row || !names) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    names[0] = "lp__";
    for (size_t j = 1; j < w; j++)
        names[j] = r->columns[j + 1];
    if ((rc = drift_logdensity_eval(ld, theta, &row[0], NULL, e)))
        goto done;
    if ((rc = drift_method_values(r, ld, theta, r->seed, 0, row + 1, e)))
        goto done;
    if ((rc = drift_writer_open(path, &wr, e)))
        goto done;
    drift_method_run mr = *r;
    mr.f = drift_writer_file(wr);
    mr.out = path;
    mr.columns = names;
    mr.n_columns = w;
    mr.on_draw = NULL;
    drift_method_header(&mr);
    fprintf(mr.f, "# method = optimize\n#   optimize\n"
                  "#     algorithm = lbfgs\n#     jacobian = %d\n"
                  "#     iter = 2000\n#     save_iterations = 0\n",
            a->jacobian);
    drift_method_header_io(&mr);
    fprintf(mr.f, "# output\n#   file = %s\n", path);
    drift_method_header_names(&mr);
    drift_method_row(&mr, row);
    rc = drift_method_file_end(wr, 0, e);
done:
    drift_free(names);
    drift_free(row);
    return rc;
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const lap_args *a = args;
    const drift_model *m = r->m;
    drift_logdensity *ld;
    int rc = drift_logdensity_new(&ld, m, a->jacobian, NULL, e);
    if (rc)
        return rc;
    size_t d = m->dim;
    double *theta = drift_malloc_array(d + r->n_columns + 1, sizeof *theta);
    drift_laplace *la = NULL;
    drift_method_approx chk = {0};
    if (!theta) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    double *row = theta + d, *out = row + 2;
    /* The mode found here goes to a file of its own beside out, checked
     * before the search. */
    char mpath[4200];
    const char *mode = a->mode;
    if (!mode && r->out) {
        mode_path(r->out, mpath, sizeof mpath);
        if ((rc = drift_method_check_file(r, mpath,
                                          "the mode's file (from --out)",
                                          e)))
            goto done;
    }
    if ((rc = find_mode(a, r, ld, theta, e)))
        goto done;
    if (!mode && r->out) {
        if ((rc = write_mode(r, a, mpath, ld, theta, e)))
            goto done;
        mode = mpath;
    }
    if ((rc = drift_laplace_new(&la, ld, d, theta, e))) {
        if (rc == DRIFT_EINVAL) /* the model's, not the user's input */
            rc = DRIFT_ENUMERIC;
        goto done;
    }
    /* The draws' ratios target the posterior only with the Jacobians. */
    if (a->jacobian &&
        (rc = drift_method_approx_init(&chk, a->draws, m->n_out, e)))
        goto done;
    write_header(r, a, mode ? mode : "(found by drift laplace)");
    drift_rng rng;
    drift_rng_seed(&rng, r->seed, 0);
    for (uint64_t k = 0; k < a->draws; k++) {
        double log_g, log_p;
        drift_laplace_draw(la, &rng, theta, &log_g);
        if (drift_logdensity_eval(ld, theta, &log_p, NULL, e))
            log_p = -INFINITY;
        if ((rc = drift_method_values(r, ld, theta,
                                      drift_method_seed(r->seed, k + 1),
                                      (long long)k + 1, out, e)))
            goto done;
        row[0] = log_p;
        row[1] = log_g;
        drift_method_row(r, row);
        if (a->jacobian)
            drift_method_approx_add(&chk, log_p, log_g, out);
    }
    double khat = INFINITY;
    if (a->jacobian) {
        if (r->f)
            fprintf(r->f, "# \n");
        drift_method_approx_report(r, &chk,
                                   "the posterior is far from a Gaussian "
                                   "at the mode used, or that is not its "
                                   "mode; use drift sample for exact draws",
                                   &khat);
    }
    if (isfinite(khat))
        fprintf(r->diag, "%s: %llu draws, Pareto k %.2f%s%s\n", r->who,
                (unsigned long long)a->draws, khat, r->out ? " -> " : "",
                r->out ? r->out : "");
    else
        fprintf(r->diag, "%s: %llu draws%s%s\n", r->who,
                (unsigned long long)a->draws, r->out ? " -> " : "",
                r->out ? r->out : "");
done:
    drift_method_approx_free(&chk);
    drift_laplace_free(la);
    drift_free(theta);
    drift_logdensity_free(ld);
    return rc;
}

const drift_method drift_method_laplace = {
    .name = "laplace",
    .summary = "draws from the Gaussian approximation at the mode "
               "(CmdStan's laplace)",
    .synopsis = "drift laplace MODEL.drift|--model NAME --data FILE "
                "[--mode FILE] [options]",
    .about = "Draws from the Laplace approximation at the posterior "
             "mode, as CmdStan's\nlaplace method: the Gaussian on the "
             "unconstrained scale with the mode as mean\nand the "
             "inverse of the negative Hessian there as covariance, "
             "with the\nconstraint transforms' log-Jacobians by "
             "default.  The mode is read from an\noptimize CSV file "
             "(--mode) or found here by L-BFGS.  Columns: log_p__ (the\n"
             "log density at the draw), log_g__ (the approximation's, "
             "up to its constant),\nthe parameters and the generated "
             "quantities.  With the Jacobians, the Pareto k of the\n"
             "draws (PSIS) and the largest shift of a parameter's mean "
             "when the draws are\nweighted by posterior / approximation "
             "close the file; a warning says when\nk is above 0.7 or a "
             "mean moves by more than half its sd.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(lap_args),
    .default_out = "laplace.csv",
    .seed_help = "S  seed of the draws (default: clock)",
    .defaults = defaults,
    .columns = columns,
    .run = run,
};
