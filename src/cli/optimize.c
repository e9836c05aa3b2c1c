/* optimize.c: `drift optimize`, as CmdStan's optimize method: the
 * posterior mode on the unconstrained scale by L-BFGS, without the
 * constraint Jacobians by default (CmdStan's jacobian=0: the mode of the
 * constrained values' density; --jacobian gives the mode on the
 * unconstrained scale), written as CmdStan's optimize CSV (lp__, the
 * parameters, the derived and generated quantities at the mode).  Not for
 * the mode search of control variates (engine/run/mode.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "methods.h"
#include "engine/run/logdensity.h"
#include "engine/run/optimize.h"

enum { P_MODEL = CLI_PB_MODEL, P_MODEL_SET, P_DATA, P_DATA_SET,
       P_INIT = CLI_PB_N, P_SEED, P_JAC,
       P_ITER, P_TOL_OBJ, P_TOL_REL_OBJ, P_TOL_GRAD, P_TOL_REL_GRAD,
       P_TOL_PARAM, P_HISTORY, P_ALPHA, P_ALGO, P_BATCH, P_PASSES,
       P_LR, P_STEP_A, P_STEP_B, P_STEP_GAMMA, P_TOL_GRAD_SDS, P_OUT,
       P_HELP };

static const cli_opt opt_opts[] = {
    CLI_PROBLEM_OPTS,
    [P_INIT] = {"--init", 1,
                "FILE  initial values (JSON or CSV; default: uniform(-2, "
                "2) on the unconstrained scale)"},
    [P_SEED] = {"--seed", 1, "S  seed of the random inits and of the "
                             "generated quantities (default: clock)"},
    [P_JAC] = {"--jacobian", 0,
               "include the constraint transforms' log-Jacobians (default: "
               "not, as CmdStan's jacobian=0)"},
    [P_ITER] = {"--iter", 1, "N  iterations at most (default 2000)"},
    [P_TOL_OBJ] = {"--tol-obj", 1,
                   "T  absolute change of the objective (default 1e-12)"},
    [P_TOL_REL_OBJ] = {"--tol-rel-obj", 1,
                       "T  relative change of the objective, in epsilons "
                       "(default 1e4)"},
    [P_TOL_GRAD] = {"--tol-grad", 1, "T  gradient norm (default 1e-8)"},
    [P_TOL_REL_GRAD] = {"--tol-rel-grad", 1,
                        "T  relative gradient magnitude, in epsilons "
                        "(default 1e7)"},
    [P_TOL_PARAM] = {"--tol-param", 1,
                     "T  change of the parameters (default 1e-8)"},
    [P_HISTORY] = {"--history-size", 1,
                   "N  L-BFGS pairs kept (default 5)"},
    [P_ALPHA] = {"--init-alpha", 1,
                 "A  first line search's step (default 0.001)"},
    [P_ALGO] = {"--algorithm", 1,
                "A  lbfgs (default: full-data L-BFGS), or the minibatch "
                "optimisers adam or sgd"},
    [P_BATCH] = {"--batch", 1,
                 "B  adam, sgd: rows per step (default: all when N <= "
                 "10^4, else max(1000, N/1000))"},
    [P_PASSES] = {"--passes", 1,
                  "P  adam, sgd: steps enough for P passes over the data "
                  "(default: max(2000 steps, 50 passes); --iter counts "
                  "steps)"},
    [P_LR] = {"--learning-rate", 1,
              "A  adam: alpha, decayed as alpha / sqrt(1 + t/100) "
              "(default 0.01)"},
    [P_STEP_A] = {"--step-a", 1,
                  "A  sgd: the step a (b + t)^-gamma on the per-row mean "
                  "gradient (default 1)"},
    [P_STEP_B] = {"--step-b", 1, "B  sgd: b (default 10)"},
    [P_STEP_GAMMA] = {"--step-gamma", 1,
                      "G  sgd: gamma, in (0.5, 1] (default 0.6)"},
    [P_TOL_GRAD_SDS] = {"--tol-grad-sds", 1,
                        "T  adam, sgd: the final full-data gradient within "
                        "T of its sampling sd (default 0.5)"},
    [P_OUT] = {"--out", 1, "FILE  output (default optimize.csv)"},
    [P_HELP] = {"--help", 0, "show this help"},
};
#define N_OPT_OPTS (sizeof opt_opts / sizeof opt_opts[0])

typedef struct opt_args {
    cli_problem_args pb;
    const char *init, *out;
    uint64_t seed;
    int have_seed, jacobian, help, have_iter;
    drift_optimize_opts o;
    const char *algo;           /* "lbfgs", "adam", "sgd" */
    drift_optimize_sg_opts sg;
    double passes;              /* 0: none given */
} opt_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift optimize: %s %s: %s\n", opt, v, want);
    return EXIT_USAGE;
}

static int positive(const char *opt, const char *v, double *out)
{
    if (drift_parse_double(v, out) || !(*out > 0) || !isfinite(*out))
        return bad(opt, v, "expected a positive number");
    return 0;
}

static int count(const char *opt, const char *v, unsigned *out)
{
    uint64_t u;
    if (drift_parse_u64(v, &u) || u == 0 || u > 1000000000u)
        return bad(opt, v, "expected a positive integer");
    *out = (unsigned)u;
    return 0;
}

static int on_opt(void *user, int idx, const char *v)
{
    opt_args *a = user;
    int taken = cli_problem_opt(&a->pb, "optimize", idx, v);
    if (taken != 1)
        return taken;
    switch (idx) {
    case -2:
    case P_HELP: a->help = 1; return 0;
    case P_INIT: a->init = v; return 0;
    case P_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    case P_JAC: a->jacobian = 1; return 0;
    case P_ITER:
        a->have_iter = 1;
        return count("--iter", v, &a->o.iter);
    case P_ALGO:
        if (strcmp(v, "lbfgs") && strcmp(v, "adam") && strcmp(v, "sgd"))
            return bad("--algorithm", v, "expected lbfgs, adam or sgd");
        a->algo = v;
        a->sg.adam = !strcmp(v, "adam");
        return 0;
    case P_BATCH: {
        unsigned b;
        if (count("--batch", v, &b))
            return EXIT_USAGE;
        a->sg.batch = b;
        return 0;
    }
    case P_PASSES:
        if (positive("--passes", v, &a->passes))
            return EXIT_USAGE;
        if (a->passes > 1e6)
            return bad("--passes", v, "at most 10^6");
        return 0;
    case P_LR: return positive("--learning-rate", v, &a->sg.alpha);
    case P_STEP_A: return positive("--step-a", v, &a->sg.a);
    case P_STEP_B:
        if (drift_parse_double(v, &a->sg.b) || !(a->sg.b >= 0) ||
            !isfinite(a->sg.b))
            return bad("--step-b", v, "expected a non-negative number");
        return 0;
    case P_STEP_GAMMA:
        if (drift_parse_double(v, &a->sg.gamma) || !(a->sg.gamma > 0.5) ||
            !(a->sg.gamma <= 1))
            return bad("--step-gamma", v,
                       "expected a number in (0.5, 1] (Robbins-Monro)");
        return 0;
    case P_TOL_GRAD_SDS:
        return positive("--tol-grad-sds", v, &a->sg.tol_grad_sds);
    case P_TOL_OBJ: return positive("--tol-obj", v, &a->o.tol_obj);
    case P_TOL_REL_OBJ:
        return positive("--tol-rel-obj", v, &a->o.tol_rel_obj);
    case P_TOL_GRAD: return positive("--tol-grad", v, &a->o.tol_grad);
    case P_TOL_REL_GRAD:
        return positive("--tol-rel-grad", v, &a->o.tol_rel_grad);
    case P_TOL_PARAM: return positive("--tol-param", v, &a->o.tol_param);
    case P_HISTORY:
        return count("--history-size", v, &a->o.history_size);
    case P_ALPHA: return positive("--init-alpha", v, &a->o.init_alpha);
    case P_OUT: a->out = v; return 0;
    }
    return 0;
}

static void write_header(FILE *f, const opt_args *a, const drift_model *m,
                         const drift_optimize_result *r)
{
    const drift_optimize_opts *o = &a->o;
    const char *name = strrchr(a->pb.model, '/');
    name = name ? name + 1 : a->pb.model;
    size_t len = strcspn(name, ".");
    fprintf(f, "# drift_version = %s\n# model = %.*s\n# model_file = %s\n",
            PACKAGE_VERSION, (int)len, name, a->pb.model);
    if (!a->algo || !strcmp(a->algo, "lbfgs")) {
        fprintf(f, "# method = optimize\n#   optimize\n"
                   "#     algorithm = lbfgs\n#       lbfgs\n"
                   "#         init_alpha = %g\n#         tol_obj = %g\n"
                   "#         tol_rel_obj = %g\n#         tol_grad = %g\n"
                   "#         tol_rel_grad = %g\n#         tol_param = %g\n"
                   "#         history_size = %u\n#     jacobian = %d\n"
                   "#     iter = %u\n#     save_iterations = 0\n",
                o->init_alpha, o->tol_obj, o->tol_rel_obj, o->tol_grad,
                o->tol_rel_grad, o->tol_param, o->history_size, a->jacobian,
                o->iter);
    } else {
        const drift_optimize_sg_opts *sg = &a->sg;
        fprintf(f, "# method = optimize\n#   optimize\n"
                   "#     algorithm = %s\n#       %s\n",
                a->algo, a->algo);
        if (sg->adam)
            fprintf(f, "#         learning_rate = %g\n", sg->alpha);
        else
            fprintf(f, "#         step_a = %g\n#         step_b = %g\n"
                       "#         step_gamma = %g\n",
                    sg->a, sg->b, sg->gamma);
        fprintf(f, "#         batch = %zu\n#         tol_grad_sds = %g\n"
                   "#     jacobian = %d\n#     iter = %u\n"
                   "#     save_iterations = 0\n",
                sg->batch ? sg->batch : drift_logdensity_batch(m->n_rows),
                sg->tol_grad_sds, a->jacobian, r->iterations);
    }
    fprintf(f, "# id = 1\n# data\n");
    for (size_t k = 0; k < a->pb.n_data; k++)
        fprintf(f, "#   file = %s\n", a->pb.data[k]);
    fprintf(f, "# init = %s\n# random\n#   seed = %llu\n# output\n"
               "#   file = %s\n",
            a->init ? a->init : "2", (unsigned long long)a->seed, a->out);
    fprintf(f, "# iterations = %u\n# converged = %d (%s)\n", r->iterations,
            r->converged, r->why);
    if (a->algo && strcmp(a->algo, "lbfgs"))
        fprintf(f, "# grad_sds = %g\n", r->grad_sds);
    fprintf(f, "lp__");
    for (size_t j = 0; j < m->n_out; j++)
        fprintf(f, ",%s", m->out_names[j]);
    for (size_t j = 0; j < m->n_gen; j++)
        fprintf(f, ",%s", m->gen_names[j]);
    fputc('\n', f);
}

/* The command's work on its opened model (cli_with_problem). */
static int run(void *user, const drift_model *m)
{
    const opt_args *a = user;
    drift_err e = {{0}};
    drift_logdensity *ld;
    if (drift_logdensity_new(&ld, m, a->jacobian, "drift optimize", &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return EXIT_USAGE;
    }
    size_t d = m->dim;
    double *theta = drift_malloc_array(d + m->n_out + m->n_gen + 1,
                                       sizeof *theta);
    if (!theta) {
        drift_logdensity_free(ld);
        fprintf(stderr, "drift optimize: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    double *out = theta + d;
    int status = 0, rc;
    drift_optimize_result r;
    if ((rc = drift_optimize_start(ld, m, a->init, a->seed, theta, &e))) {
        fprintf(stderr, "drift optimize: %s\n", e.msg);
        status = rc == DRIFT_ENUMERIC ? EXIT_RUN_FAILED : EXIT_USAGE;
        goto done;
    }
    if (a->algo && strcmp(a->algo, "lbfgs")) {
        drift_optimize_sg_opts sg = a->sg;
        size_t b = sg.batch ? sg.batch : drift_logdensity_batch(m->n_rows);
        if (a->have_iter)
            sg.iter = a->o.iter;
        else if (a->passes > 0 && b)
            sg.iter = (unsigned)fmin(4e9, ceil(a->passes *
                                              (double)m->n_rows / (double)b));
        sg.seed = a->seed;
        rc = drift_optimize_sg(ld, m, &sg, theta, &r, &e);
    } else {
        rc = drift_optimize_lbfgs(ld, d, &a->o, theta, &r, &e);
    }
    if (rc) {
        fprintf(stderr, "drift optimize: %s\n", e.msg);
        status = rc == DRIFT_EINVAL ? EXIT_USAGE : EXIT_RUN_FAILED;
        goto done;
    }
    m->constrain(m->self, theta, out);
    if (m->n_gen &&
        m->generate(m->self, drift_logdensity_ws(ld), theta, a->seed, 1,
                    out + m->n_out, &e)) {
        fprintf(stderr, "drift optimize: generated quantities at the mode: "
                        "%s\n",
                e.msg);
        status = EXIT_RUN_FAILED;
        goto done;
    }
    drift_writer *w;
    FILE *f = cli_out_open("optimize", a->out, &w);
    if (!f) {
        status = EXIT_RUN_FAILED;
        goto done;
    }
    write_header(f, a, m, &r);
    fprintf(f, "%.17g", r.lp);
    for (size_t j = 0; j < m->n_out + m->n_gen; j++)
        fprintf(f, ",%.17g", out[j]);
    fputc('\n', f);
    if ((status = cli_out_commit("optimize", w)))
        goto done;
    if (r.converged) {
        fprintf(stderr, "drift optimize: %s after %u iterations; lp__ = %.10g "
                        "-> %s\n",
                r.why, r.iterations, r.lp, a->out);
    } else {
        if (a->algo && strcmp(a->algo, "lbfgs"))
            fprintf(stderr, "drift optimize: warning: %s (%u steps; the "
                            "full-data gradient is %.3g of its sampling "
                            "sd; the point is in %s): the density may have "
                            "no mode, or raise --iter or --passes, or "
                            "lower the step\n",
                    r.why, r.iterations, r.grad_sds, a->out);
        else
            fprintf(stderr, "drift optimize: warning: %s (%u iterations; "
                            "the last point is in %s): the density may "
                            "have no mode, or raise --iter\n",
                    r.why, r.iterations, a->out);
        status = EXIT_RUN_FAILED;
    }
done:
    drift_free(theta);
    drift_logdensity_free(ld);
    return status;
}

int cmd_optimize(int argc, char **argv)
{
    opt_args a;
    memset(&a, 0, sizeof a);
    drift_optimize_defaults(&a.o);
    drift_optimize_sg_defaults(&a.sg);
    int rc = cli_parse("optimize", opt_opts, N_OPT_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift optimize MODEL.drift|--model NAME --data FILE "
                  "[--jacobian] [options]",
                  "Finds the posterior mode by L-BFGS on the unconstrained "
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
                  opt_opts, N_OPT_OPTS);
        return 0;
    }
    if (!a.out)
        a.out = "optimize.csv";
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    const char *inputs[20] = {a.init};
    size_t n_in = 1 + cli_problem_inputs(&a.pb, inputs + 1);
    if ((rc = cli_out_check("optimize", a.out, inputs, n_in)))
        return rc;
    return cli_with_problem("optimize", &a.pb, run, &a);
}
