/* method_optimize.c: the optimize method, as CmdStan's: the posterior
 * mode on the unconstrained scale by L-BFGS (optimize.h), without the
 * constraint Jacobians by default (CmdStan's jacobian=0: the mode of the
 * constrained values' density; jacobian gives the mode on the
 * unconstrained scale), its row CmdStan's optimize CSV's: lp__, the
 * parameters, the derived and generated quantities at the mode.  Not for
 * the mode search of control variates (mode.c). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#include "base/util.h"
#include "logdensity.h"
#include "method.h"
#include "optimize.h"

typedef struct opt_args {
    const char *init;
    int jacobian;
    uint64_t iter, history;
    drift_optimize_opts o;
} opt_args;

#define OFF(f) offsetof(opt_args, f)

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
};

static void defaults(void *args)
{
    opt_args *a = args;
    drift_optimize_defaults(&a->o);
    a->iter = a->o.iter;
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
    fprintf(r->f, "# method = optimize\n#   optimize\n"
                  "#     algorithm = lbfgs\n#       lbfgs\n"
                  "#         init_alpha = %g\n#         tol_obj = %g\n"
                  "#         tol_rel_obj = %g\n#         tol_grad = %g\n"
                  "#         tol_rel_grad = %g\n#         tol_param = %g\n"
                  "#         history_size = %u\n#     jacobian = %d\n"
                  "#     iter = %u\n#     save_iterations = 0\n",
            o->init_alpha, o->tol_obj, o->tol_rel_obj, o->tol_grad,
            o->tol_rel_grad, o->tol_param, o->history_size, a->jacobian,
            o->iter);
    drift_method_header_io(r);
    fprintf(r->f, "# init = %s\n# random\n#   seed = %llu\n# output\n"
                  "#   file = %s\n",
            a->init ? a->init : "2", (unsigned long long)r->seed,
            r->out ? r->out : "(none)");
    fprintf(r->f, "# iterations = %u\n# converged = %d (%s)\n",
            res->iterations, res->converged, res->why);
    drift_method_header_names(r);
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const opt_args *a = args;
    const drift_model *m = r->m;
    drift_optimize_opts o = a->o;
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
    if ((rc = drift_optimize_lbfgs(ld, d, &o, theta, &res, e))) {
        if (rc == DRIFT_EINVAL) /* not the user's input: the run failed */
            rc = DRIFT_ENUMERIC;
        goto done;
    }
    m->constrain(m->self, theta, out);
    if (m->n_gen &&
        (rc = m->generate(m->self, drift_logdensity_ws(ld), theta, r->seed, 1,
                          out + m->n_out, e))) {
        drift_err_prefix(e, "generated quantities at the mode");
        rc = DRIFT_ENUMERIC;
        goto done;
    }
    row[0] = res.lp;
    write_header(r, a, &o, &res);
    drift_method_row(r, row);
    if (res.converged) {
        fprintf(r->diag, "%s: %s after %u iterations; lp__ = %.10g%s%s\n",
                r->who, res.why, res.iterations, res.lp, r->out ? " -> " : "",
                r->out ? r->out : "");
    } else {
        r->keep = 1;
        rc = drift_err_set(e, DRIFT_ENUMERIC,
                           "warning: %s (%u iterations; the last point is in "
                           "%s): the density may have no mode, or raise "
                           "--iter",
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
             "mode.  Exit status 1 when the iteration limit is hit.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(opt_args),
    .default_out = "optimize.csv",
    .seed_help = "S  seed of the random inits and of the generated quantities (default: clock)",
    .defaults = defaults,
    .columns = columns,
    .run = run,
};
