/* method_optimize.c: the optimize method, as CmdStan's: the posterior
 * mode on the unconstrained scale by L-BFGS (optimize.h), without the
 * constraint Jacobians by default (CmdStan's jacobian=0: the mode of the
 * constrained values' density; jacobian gives the mode on the
 * unconstrained scale), its row CmdStan's optimize CSV's: lp__, the
 * parameters, the derived and generated quantities at the mode.  Not for
 * the mode search of control variates (mode.c). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "logdensity.h"
#include "method.h"
#include "optimize.h"

typedef struct opt_args {
    const char *init;
    int jacobian;
    uint64_t iter;              /* 0: not given (L-BFGS: 2000; adam, sgd:
                                   by the passes) */
    uint64_t history, batch;    /* batch 0: drift_logdensity_batch's */
    drift_optimize_opts o;
    const char *algo;           /* "lbfgs", "adam", "sgd" */
    drift_optimize_sg_opts sg;
    double passes;              /* 0: none given */
} opt_args;

#define OFF(f) offsetof(opt_args, f)

static int set_algorithm(void *args, const char *v, drift_err *e)
{
    opt_args *a = args;
    if (strcmp(v, "lbfgs") && strcmp(v, "adam") && strcmp(v, "sgd"))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--algorithm %s: expected lbfgs, adam or sgd",
                             v);
    a->algo = !strcmp(v, "lbfgs") ? "lbfgs" : !strcmp(v, "adam") ? "adam"
                                                                 : "sgd";
    a->sg.adam = !strcmp(v, "adam");
    return DRIFT_OK;
}

static int set_passes(void *args, const char *v, drift_err *e)
{
    double x;
    if (drift_parse_double(v, &x) || !(x > 0) || !(x <= 1e6))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--passes %s: expected a positive number (at "
                             "most 10^6)",
                             v);
    ((opt_args *)args)->passes = x;
    return DRIFT_OK;
}

static int set_step_b(void *args, const char *v, drift_err *e)
{
    double x;
    if (drift_parse_double(v, &x) || !(x >= 0) || !isfinite(x))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--step-b %s: expected a non-negative number",
                             v);
    ((opt_args *)args)->sg.b = x;
    return DRIFT_OK;
}

static int set_step_gamma(void *args, const char *v, drift_err *e)
{
    double x;
    if (drift_parse_double(v, &x) || !(x > 0.5) || !(x <= 1))
        return drift_err_set(e, DRIFT_EINVAL,
                             "--step-gamma %s: expected a number in (0.5, "
                             "1] (Robbins-Monro)",
                             v);
    ((opt_args *)args)->sg.gamma = x;
    return DRIFT_OK;
}

static const drift_mopt opts[] = {
    {"init", DRIFT_MOPT_FILE, OFF(init),
     "FILE  initial values (JSON or CSV; default: uniform(-2, 2) on the "
     "unconstrained scale)", 0, NULL, NULL},
    {"jacobian", DRIFT_MOPT_SET, OFF(jacobian),
     "include the constraint transforms' log-Jacobians (default: not, as "
     "CmdStan's jacobian=0)", 0, NULL, NULL},
    {"iter", DRIFT_MOPT_COUNT, OFF(iter),
     "N  iterations at most (default 2000)", 0, NULL, NULL},
    {"tol-obj", DRIFT_MOPT_POSITIVE, OFF(o.tol_obj),
     "T  absolute change of the objective (default 1e-12)", 0, NULL, NULL},
    {"tol-rel-obj", DRIFT_MOPT_POSITIVE, OFF(o.tol_rel_obj),
     "T  relative change of the objective, in epsilons (default 1e4)", 0,
     NULL, NULL},
    {"tol-grad", DRIFT_MOPT_POSITIVE, OFF(o.tol_grad),
     "T  gradient norm (default 1e-8)", 0, NULL, NULL},
    {"tol-rel-grad", DRIFT_MOPT_POSITIVE, OFF(o.tol_rel_grad),
     "T  relative gradient magnitude, in epsilons (default 1e7)", 0, NULL, NULL},
    {"tol-param", DRIFT_MOPT_POSITIVE, OFF(o.tol_param),
     "T  change of the parameters (default 1e-8)", 0, NULL, NULL},
    {"history-size", DRIFT_MOPT_COUNT, OFF(history),
     "N  L-BFGS pairs kept (default 5)", 1000, NULL, NULL},
    {"init-alpha", DRIFT_MOPT_POSITIVE, OFF(o.init_alpha),
     "A  first line search's step (default 0.001)", 0, NULL, NULL},
    {"polish", DRIFT_MOPT_BOOL, OFF(o.polish),
     "0|1  lbfgs: Newton's steps (finite-difference Hessian) once a "
     "tolerance is met, to the mode within 1e-5 posterior sd (default 1; 0: "
     "CmdStan's L-BFGS alone)", 0, NULL, NULL},
    {"algorithm", DRIFT_MOPT_CUSTOM, 0,
     "A  lbfgs (default: full-data L-BFGS), or the minibatch optimisers "
     "adam or sgd", 0, NULL, set_algorithm},
    {"batch", DRIFT_MOPT_COUNT, OFF(batch),
     "B  adam, sgd: rows per step (default: all when N <= 10^4, else "
     "max(1000, N/1000))", 0, NULL, NULL},
    {"passes", DRIFT_MOPT_CUSTOM, 0,
     "P  adam, sgd: steps enough for P passes over the data (default: "
     "max(2000 steps, 50 passes); --iter counts steps)", 0, NULL,
     set_passes},
    {"learning-rate", DRIFT_MOPT_POSITIVE, OFF(sg.alpha),
     "A  adam: alpha, decayed as alpha / sqrt(1 + t/100) (default 0.01)", 0,
     NULL, NULL},
    {"step-a", DRIFT_MOPT_POSITIVE, OFF(sg.a),
     "A  sgd: the step a (b + t)^-gamma on the per-row mean gradient "
     "(default 1)", 0, NULL, NULL},
    {"step-b", DRIFT_MOPT_CUSTOM, 0, "B  sgd: b (default 10)", 0, NULL,
     set_step_b},
    {"step-gamma", DRIFT_MOPT_CUSTOM, 0,
     "G  sgd: gamma, in (0.5, 1] (default 0.6)", 0, NULL, set_step_gamma},
    {"tol-grad-sds", DRIFT_MOPT_POSITIVE, OFF(sg.tol_grad_sds),
     "T  adam, sgd: the final full-data gradient within T of its sampling "
     "sd (default 0.5)", 0, NULL, NULL},
};

static void defaults(void *args)
{
    opt_args *a = args;
    drift_optimize_defaults(&a->o);
    drift_optimize_sg_defaults(&a->sg);
    a->history = a->o.history_size;
}

static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    (void)args;
    static const char *const first[] = {"lp__"};
    return drift_method_model_columns(first, 1, m, names, n, e);
}

static void write_header(drift_method_run *r, const opt_args *a,
                         const drift_optimize_opts *o,
                         const drift_optimize_result *res)
{
    drift_method_header(r);
    if (!r->f)
        return;
    if (!a->algo || !strcmp(a->algo, "lbfgs")) {
        fprintf(r->f, "# method = optimize\n#   optimize\n"
                      "#     algorithm = lbfgs\n#       lbfgs\n"
                      "#         init_alpha = %g\n#         tol_obj = %g\n"
                      "#         tol_rel_obj = %g\n#         tol_grad = %g\n"
                      "#         tol_rel_grad = %g\n"
                      "#         tol_param = %g\n"
                      "#         history_size = %u\n#     jacobian = %d\n"
                      "#     iter = %u\n#     save_iterations = 0\n",
                o->init_alpha, o->tol_obj, o->tol_rel_obj, o->tol_grad,
                o->tol_rel_grad, o->tol_param, o->history_size,
                a->jacobian, o->iter);
    } else {
        const drift_optimize_sg_opts *sg = &a->sg;
        fprintf(r->f, "# method = optimize\n#   optimize\n"
                      "#     algorithm = %s\n#       %s\n",
                a->algo, a->algo);
        if (sg->adam)
            fprintf(r->f, "#         learning_rate = %g\n", sg->alpha);
        else
            fprintf(r->f, "#         step_a = %g\n#         step_b = %g\n"
                          "#         step_gamma = %g\n",
                    sg->a, sg->b, sg->gamma);
        fprintf(r->f, "#         batch = %zu\n#         tol_grad_sds = %g\n"
                      "#     jacobian = %d\n#     iter = %u\n"
                      "#     save_iterations = 0\n",
                a->batch ? (size_t)a->batch
                         : drift_logdensity_batch(r->m->n_rows),
                sg->tol_grad_sds, a->jacobian, res->iterations);
    }
    drift_method_header_io(r);
    fprintf(r->f, "# init = %s\n# random\n#   seed = %llu\n# output\n"
                  "#   file = %s\n",
            a->init ? a->init : "2", (unsigned long long)r->seed,
            r->out ? r->out : "(none)");
    fprintf(r->f, "# iterations = %u\n# converged = %d (%s)\n",
            res->iterations, res->converged, res->why);
    if (a->algo && strcmp(a->algo, "lbfgs"))
        fprintf(r->f, "# grad_sds = %g\n", res->grad_sds);
    else if (o->polish)
        fprintf(r->f, "# newton_steps = %u (Newton decrement %.3g)\n",
                res->newton_steps, res->newton_decrement);
    drift_method_header_names(r);
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const opt_args *a = args;
    const drift_model *m = r->m;
    drift_optimize_opts o = a->o;
    if (a->iter)
        o.iter = (unsigned)a->iter;
    o.history_size = (unsigned)a->history;
    drift_logdensity *ld;
    int rc = drift_logdensity_new(&ld, m, a->jacobian, NULL, e);
    if (rc)
        return rc;
    size_t d = m->dim;
    double *theta = drift_malloc_array(d + r->n_columns + 1, sizeof *theta);
    if (!theta) {
        drift_logdensity_free(ld);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    double *row = theta + d, *out = row + 1;
    drift_optimize_result res;
    if ((rc = drift_optimize_start(ld, m, a->init, r->seed, theta, e)))
        goto done;
    int sgd = a->algo && strcmp(a->algo, "lbfgs");
    if (sgd) {
        drift_optimize_sg_opts sg = a->sg;
        sg.batch = (size_t)a->batch;
        size_t b = sg.batch ? sg.batch : drift_logdensity_batch(m->n_rows);
        if (a->iter)
            sg.iter = (unsigned)a->iter;
        else if (a->passes > 0 && b)
            sg.iter = (unsigned)fmin(4e9, ceil(a->passes * (double)m->n_rows /
                                               (double)b));
        sg.seed = r->seed;
        rc = drift_optimize_sg(ld, m, &sg, theta, &res, e);
    } else if ((rc = drift_optimize_lbfgs(ld, d, &o, theta, &res, e)) &&
               rc == DRIFT_EINVAL) {
        rc = DRIFT_ENUMERIC; /* not the user's input: the run failed */
    }
    if (rc)
        goto done;
    if ((rc = drift_method_values(r, ld, theta, r->seed, 0, out, e)))
        goto done;
    row[0] = res.lp;
    write_header(r, a, &o, &res);
    drift_method_row(r, row);
    if (res.converged) {
        char newton[64] = "";
        if (res.newton_steps)
            snprintf(newton, sizeof newton, " and %u Newton step%s",
                     res.newton_steps, res.newton_steps > 1 ? "s" : "");
        fprintf(r->diag, "%s: %s after %u iterations%s; lp__ = %.10g%s%s\n",
                r->who, res.why, res.iterations, newton, res.lp,
                r->out ? " -> " : "", r->out ? r->out : "");
    } else {
        r->keep = 1;
        if (sgd)
            rc = drift_err_set(e, DRIFT_ENUMERIC,
                               "warning: %s (%u steps; the full-data "
                               "gradient is %.3g of its sampling sd; the "
                               "point is in %s): the density may have no "
                               "mode, or raise --iter or --passes, or lower "
                               "the step",
                               res.why, res.iterations, res.grad_sds,
                               r->out ? r->out : "the output");
        else
            rc = drift_err_set(e, DRIFT_ENUMERIC,
                               "warning: %s (%u iterations; the last point "
                               "is in %s): the density may have no mode, or "
                               "raise --iter",
                               res.why, res.iterations,
                               r->out ? r->out : "the output");
    }
done:
    drift_free(theta);
    drift_logdensity_free(ld);
    return rc;
}

const drift_method drift_method_optimize = {
    .name = "optimize",
    .summary = "the posterior mode by L-BFGS (CmdStan's optimize)",
    .synopsis = "drift optimize MODEL.drift|--model NAME --data FILE "
                "[--jacobian] [options]",
    .about = "Finds the posterior mode by L-BFGS on the unconstrained "
             "scale, as CmdStan's\noptimize method: without the "
             "constraint transforms' log-Jacobians by default\n(the "
             "mode of the constrained values' density), with them "
             "given --jacobian.\nWrites CmdStan's optimize CSV: lp__, "
             "the parameters and the generated\nquantities at the "
             "mode.  Exit status 1 when the iteration limit is hit.\n"
             "--algorithm adam or sgd: minibatch stochastic gradients "
             "(--batch rows a step,\nthe prior plus N/b times their "
             "sum) with a decaying step, for data too\nlarge for a "
             "pass per step; the point returned is the average of "
             "the last\nhalf of the steps, and one full pass then "
             "checks its gradient against the\ngradient's sampling "
             "sd (--tol-grad-sds; exit status 1 when it fails).",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(opt_args),
    .default_out = "optimize.csv",
    .seed_help = "S  seed of the random inits and of the generated quantities (default: clock)",
    .defaults = defaults,
    .columns = columns,
    .run = run,
};
