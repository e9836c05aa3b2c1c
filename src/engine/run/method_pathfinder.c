/* method_pathfinder.c: the pathfinder method, as CmdStan's: approximate
 * draws by Pathfinder (pathfinder.h) with CmdStan's option names and
 * defaults, its rows CmdStan's pathfinder CSV's (lp_approx__, lp__, the
 * parameters and the derived and generated quantities of each draw), with
 * the constraint Jacobians as CmdStan. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "logdensity.h"
#include "method.h"
#include "pathfinder.h"

typedef struct pf_args {
    const char *init;           /* a file of inits, or NULL */
    double init_radius;
    int save_single, have_draws, have_single;
    drift_pathfinder_opts o;
} pf_args;

#define OFF(f) offsetof(pf_args, f)

static int set_init(void *args, const char *v, drift_err *e)
{
    pf_args *a = args;
    double r;
    if (!drift_parse_double(v, &r)) {
        if (!(r >= 0) || !isfinite(r))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--init %s: expected a radius >= 0 or a "
                                 "file",
                                 v);
        a->init = NULL;
        a->init_radius = r;
    } else if (!*v) {
        return drift_err_set(e, DRIFT_EINVAL, "--init: an empty file name");
    } else {
        a->init = v;
    }
    return DRIFT_OK;
}

/* --num-draws and --num-single-draws are one option (CmdStanPy's name). */
static int set_draws(pf_args *a, const char *name, int single,
                     const char *v, drift_err *e)
{
    uint64_t u;
    if (drift_parse_u64(v, &u) || u == 0 || u > 100000000u)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--%s %s: expected an integer from 1 to "
                             "100000000",
                             name, v);
    int other = single ? a->have_draws : a->have_single;
    if (other && u != a->o.num_draws)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--%s %s: --num-draws and --num-single-draws "
                             "are one option: give one",
                             name, v);
    *(single ? &a->have_single : &a->have_draws) = 1;
    a->o.num_draws = (unsigned)u;
    return DRIFT_OK;
}

static int set_num_draws(void *args, const char *v, drift_err *e)
{
    return set_draws(args, "num-draws", 0, v, e);
}

static int set_single_draws(void *args, const char *v, drift_err *e)
{
    return set_draws(args, "num-single-draws", 1, v, e);
}

static const drift_mopt opts[] = {
    {"init", DRIFT_MOPT_CUSTOM, 0,
     "FILE|R  initial values of every path (JSON or CSV), or a radius: "
     "random inits uniform(-R, R) on the unconstrained scale, 0 for zeros "
     "(default 2)", 0, NULL, set_init},
    {"init-alpha", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.init_alpha),
     "A  L-BFGS's first line search step (default 0.001)", 0, NULL, NULL},
    {"tol-obj", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.tol_obj),
     "T  L-BFGS: absolute change of the objective (default 1e-12)", 0, NULL,
     NULL},
    {"tol-rel-obj", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.tol_rel_obj),
     "T  L-BFGS: relative change of the objective, in epsilons (default "
     "1e4)", 0, NULL, NULL},
    {"tol-grad", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.tol_grad),
     "T  L-BFGS: gradient norm (default 1e-8)", 0, NULL, NULL},
    {"tol-rel-grad", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.tol_rel_grad),
     "T  L-BFGS: relative gradient magnitude, in epsilons (default 1e7)", 0,
     NULL, NULL},
    {"tol-param", DRIFT_MOPT_POSITIVE, OFF(o.lbfgs.tol_param),
     "T  L-BFGS: change of the parameters (default 1e-8)", 0, NULL, NULL},
    {"history-size", DRIFT_MOPT_UCOUNT, OFF(o.lbfgs.history_size),
     "N  L-BFGS pairs kept, the approximations' rank 2N (default 5)", 1000,
     NULL, NULL},
    {"num-psis-draws", DRIFT_MOPT_UCOUNT, OFF(o.num_psis_draws),
     "N  draws resampled from the pooled paths (default 1000; CmdStanPy's "
     "draws)", 100000000u, NULL, NULL},
    {"num-paths", DRIFT_MOPT_UCOUNT, OFF(o.num_paths),
     "N  independent paths from independent inits (default 4; 1: no "
     "resampling)", 10000, NULL, NULL},
    {"max-lbfgs-iters", DRIFT_MOPT_UCOUNT, OFF(o.lbfgs.iter),
     "N  L-BFGS iterations of a path at most (default 1000)", 0, NULL, NULL},
    {"num-draws", DRIFT_MOPT_CUSTOM, 0,
     "N  draws of each path's approximation (default 1000; with one path, "
     "the output's)", 0, NULL, set_num_draws},
    {"num-single-draws", DRIFT_MOPT_CUSTOM, 0,
     "N  CmdStanPy's name of --num-draws", 0, NULL, set_single_draws},
    {"num-elbo-draws", DRIFT_MOPT_UCOUNT, OFF(o.num_elbo_draws),
     "N  draws of each ELBO estimate (default 25)", 1000000u, NULL, NULL},
    {"save-single-paths", DRIFT_MOPT_BOOL, OFF(save_single),
     "0|1  also write each path's draws, as OUT_path_K.csv (default 0)", 0,
     NULL, NULL},
    {"psis-resample", DRIFT_MOPT_BOOL, OFF(o.psis_resample),
     "0|1  resample the pooled paths' draws by PSIS (default 1); 0 writes "
     "every path's draws", 0, NULL, NULL},
    {"calculate-lp", DRIFT_MOPT_BOOL, OFF(o.calculate_lp),
     "0|1  the log density lp__ of every draw (default 1); 0: NaN, and no "
     "resampling", 0, NULL, NULL},
};

static void defaults(void *args)
{
    pf_args *a = args;
    drift_pathfinder_defaults(&a->o);
    a->init_radius = a->o.init_radius;
}

static size_t inputs(const void *args, const char **in, size_t max)
{
    const pf_args *a = args;
    if (!a->init || !max)
        return 0;
    in[0] = a->init;
    return 1;
}

static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    (void)args;
    static const char *const first[] = {"lp_approx__", "lp__"};
    return drift_method_model_columns(first, 2, m, names, n, e);
}

/* OUT_path_K.ext (OUT's stem and extension, CmdStan's names of the
 * single paths' files). */
static void single_name(const char *out, unsigned k, char *buf, size_t cap)
{
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    if (!dot || (slash && dot < slash))
        dot = out + strlen(out);
    snprintf(buf, cap, "%.*s_path_%u%s", (int)(dot - out), out, k, dot);
}

static void write_header(drift_method_run *r, const pf_args *a,
                         const drift_pathfinder_result *res, int single)
{
    const drift_pathfinder_opts *o = &a->o;
    FILE *f = r->f;
    drift_method_header(r);
    if (!f)
        return;
    fprintf(f, "# method = pathfinder\n#   pathfinder\n"
               "#     init_alpha = %g\n#     tol_obj = %g\n"
               "#     tol_rel_obj = %g\n#     tol_grad = %g\n"
               "#     tol_rel_grad = %g\n#     tol_param = %g\n"
               "#     history_size = %u\n#     num_psis_draws = %u\n"
               "#     num_paths = %u\n#     save_single_paths = %d\n"
               "#     psis_resample = %d\n#     calculate_lp = %d\n"
               "#     max_lbfgs_iters = %u\n#     num_draws = %u\n"
               "#     num_elbo_draws = %u\n",
            o->lbfgs.init_alpha, o->lbfgs.tol_obj, o->lbfgs.tol_rel_obj,
            o->lbfgs.tol_grad, o->lbfgs.tol_rel_grad, o->lbfgs.tol_param,
            o->lbfgs.history_size, o->num_psis_draws,
            single ? 1 : o->num_paths, a->save_single, o->psis_resample,
            o->calculate_lp, o->lbfgs.iter, o->num_draws,
            o->num_elbo_draws);
    drift_method_header_io(r);
    if (a->init)
        fprintf(f, "# init = %s\n", a->init);
    else
        fprintf(f, "# init = %g\n", a->init_radius);
    fprintf(f, "# random\n#   seed = %llu\n# output\n#   file = %s\n",
            (unsigned long long)r->seed, r->out ? r->out : "(none)");
    for (unsigned q = 0; q < res->n_paths; q++) {
        const drift_pathfinder_path *p = &res->paths[q];
        if (single && single != (int)q + 1)
            continue;
        if (p->status)
            fprintf(f, "# path %u: failed: %s\n", q + 1, p->message);
        else
            fprintf(f, "# path %u: %u L-BFGS iterations (%s); ELBO %.6g "
                       "at iteration %u\n",
                    q + 1, p->iterations, p->why, p->elbo, p->best_iter);
    }
    if (!single && !isnan(res->pareto_k))
        fprintf(f, "# pareto_k = %.4g\n", res->pareto_k);
    drift_method_header_names(r);
}

/* Pool rows rows[0..n) (NULL: first..first+n) as r's rows. */
static int put_rows(drift_method_run *r, drift_logdensity *ld,
                    const drift_pathfinder_result *res, const size_t *rows,
                    size_t first, size_t n, double *row, drift_err *e)
{
    for (size_t k = 0; k < n; k++) {
        size_t i = rows ? rows[k] : first + k;
        const double *theta = res->theta + i * res->d;
        row[0] = res->lp_approx[i];
        row[1] = res->lp[i];
        /* the generated quantities' stream: the pool row's, so a draw
         * resampled twice repeats its values, as its parameters */
        int rc = drift_method_values(r, ld, theta,
                                     drift_method_seed(r->seed, i + 1),
                                     (long long)k + 1, row + 2, e);
        if (rc)
            return rc;
        drift_method_row(r, row);
    }
    return DRIFT_OK;
}

/* Path q's own draws in a file of their own, put in place whole. */
static int write_single(drift_method_run *r, const pf_args *a,
                        drift_logdensity *ld,
                        const drift_pathfinder_result *res, unsigned q,
                        const char *path, double *row, drift_err *e)
{
    drift_writer *w;
    int rc = drift_writer_open(path, &w, e);
    if (rc)
        return rc;
    drift_method_run sr = *r;
    sr.f = drift_writer_file(w);
    sr.out = path;
    sr.on_draw = NULL;
    write_header(&sr, a, res, (int)q);
    size_t first = 0;
    while (first < res->pool_n && res->path[first] != q - 1)
        first++;
    rc = put_rows(&sr, ld, res, NULL, first, a->o.num_draws, row, e);
    int wrc = drift_method_file_end(w, rc, e);
    return rc ? rc : wrc;
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const pf_args *a = args;
    const drift_model *m = r->m;
    /* The single paths' files are checked before any work. */
    if (a->save_single && r->out) {
        char name[4200];
        for (unsigned q = 1; q <= a->o.num_paths; q++) {
            single_name(r->out, q, name, sizeof name);
            int rc = drift_method_check_file(r, name, "--out", e);
            if (rc)
                return rc;
        }
    }
    drift_logdensity *ld;
    int rc = drift_logdensity_new(&ld, m, 1, NULL, e);
    if (rc)
        return rc;
    size_t d = m->dim;
    double *theta = drift_calloc(d + r->n_columns + 1, sizeof *theta);
    drift_pathfinder_result *res = NULL;
    if (!theta) {
        rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        goto done;
    }
    double *row = theta + d;
    drift_pathfinder_opts o = a->o;
    o.init_radius = a->init_radius;
    const double *init = NULL;
    if (a->init || a->init_radius == 0) {
        if (a->init &&
            (rc = drift_optimize_start(ld, m, a->init, r->seed, theta, e))) {
            if (rc != DRIFT_ENUMERIC)
                rc = DRIFT_EINVAL;
            goto done;
        }
        init = theta;
    }
    drift_rng rng;
    drift_rng_seed(&rng, r->seed, 0);
    if ((rc = drift_pathfinder_run(ld, d, &o, init, &rng, &res, e))) {
        if (rc == DRIFT_EINVAL) /* the model's, not the user's input */
            rc = DRIFT_ENUMERIC;
        goto done;
    }
    for (unsigned q = 0; q < res->n_paths; q++) {
        const drift_pathfinder_path *p = &res->paths[q];
        if (p->status) {
            fprintf(r->diag, "%s: path %u failed: %s\n", r->who, q + 1,
                    p->message);
            continue;
        }
        fprintf(r->diag, "%s: path %u: %u L-BFGS iterations (%s); best "
                         "ELBO %.6g at iteration %u\n",
                r->who, q + 1, p->iterations, p->why, p->elbo, p->best_iter);
        if (!p->converged)
            fprintf(r->diag, "%s: warning: path %u: L-BFGS did not "
                             "converge: the density may have no mode (an "
                             "improper posterior?), or raise "
                             "--max-lbfgs-iters\n",
                    r->who, q + 1);
    }
    write_header(r, a, res, 0);
    if ((rc = put_rows(r, ld, res, res->idx, 0, res->n, row, e)))
        goto done;
    if (a->save_single && r->out) {
        char name[4200];
        for (unsigned q = 0; q < res->n_paths; q++) {
            if (res->paths[q].status)
                continue;
            single_name(r->out, q + 1, name, sizeof name);
            if ((rc = write_single(r, a, ld, res, q + 1, name, row, e)))
                goto done;
        }
    }
    if (!isnan(res->pareto_k)) {
        fprintf(r->diag, "%s: PSIS over %zu draws of %u paths: Pareto k = "
                         "%.3g%s\n",
                r->who, res->pool_n, res->paths_ok, res->pareto_k,
                res->pareto_k == -INFINITY ? " (equal weights: the "
                                             "approximations match the "
                                             "density)"
                                           : "");
        if (!(res->pareto_k <= DRIFT_PSIS_K_WARN))
            fprintf(r->diag, "%s: warning: Pareto k %.3g > %g: the "
                             "approximation is too far from the posterior "
                             "for importance resampling to correct; use "
                             "drift sample (or its --init pathfinder)\n",
                    r->who, res->pareto_k, DRIFT_PSIS_K_WARN);
    }
    fprintf(r->diag, "%s: %zu draws%s%s\n", r->who, res->n,
            r->out ? " -> " : "", r->out ? r->out : "");
done:
    drift_pathfinder_result_free(res);
    drift_free(theta);
    drift_logdensity_free(ld);
    return rc;
}

const drift_method drift_method_pathfinder = {
    .name = "pathfinder",
    .summary = "approximate draws by Pathfinder (CmdStan's pathfinder)",
    .synopsis = "drift pathfinder MODEL.drift|--model NAME --data FILE "
                "[options]",
    .about = "Approximate posterior draws by Pathfinder (Zhang, "
             "Carpenter, Gelman & Vehtari\n2022), as CmdStan's "
             "pathfinder method, with its option names and "
             "defaults.\nEach path follows L-BFGS from a random init; "
             "at each iterate the Gaussian\nwhose covariance is the "
             "L-BFGS inverse-Hessian estimate is scored by its ELBO\n"
             "(--num-elbo-draws draws), and the best one gives "
             "--num-draws draws.  Several\npaths (--num-paths) are "
             "pooled by Pareto-smoothed importance resampling to\n"
             "--num-psis-draws draws; the Pareto k is reported, with "
             "a warning above 0.7.\nOn the unconstrained scale, with "
             "the constraint transforms' log-Jacobians.\nColumns: "
             "lp_approx__ (the approximation's log density), lp__ "
             "(the model's),\nthe parameters and the generated "
             "quantities.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(pf_args),
    .default_out = "pathfinder.csv",
    .seed_help = "S  seed of the inits, the draws and the generated "
                 "quantities (default: clock)",
    .defaults = defaults,
    .inputs = inputs,
    .columns = columns,
    .run = run,
};
