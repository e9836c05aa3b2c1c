/* pathfinder.c: `drift pathfinder`, as CmdStan's pathfinder method:
 * approximate draws by Pathfinder (engine/run/pathfinder.h), with
 * CmdStan's option names and defaults, written as CmdStan's pathfinder
 * CSV (lp_approx__, lp__, the parameters and the derived and generated
 * quantities of each draw), with the constraint Jacobians as CmdStan. */
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
#include "engine/run/pathfinder.h"

enum { F_MODEL = CLI_PB_MODEL, F_MODEL_SET, F_DATA, F_DATA_SET,
       F_INIT = CLI_PB_N, F_SEED, F_ALPHA, F_TOL_OBJ, F_TOL_REL_OBJ,
       F_TOL_GRAD, F_TOL_REL_GRAD, F_TOL_PARAM, F_HISTORY, F_PSIS_DRAWS,
       F_PATHS, F_MAX_ITERS, F_DRAWS, F_SINGLE_DRAWS, F_ELBO_DRAWS,
       F_SAVE_SINGLE, F_PSIS_RESAMPLE, F_CALC_LP, F_OUT, F_HELP };

static const cli_opt pf_opts[] = {
    CLI_PROBLEM_OPTS,
    [F_INIT] = {"--init", 1,
                "FILE|R  initial values of every path (JSON or CSV), or a "
                "radius: random inits uniform(-R, R) on the unconstrained "
                "scale, 0 for zeros (default 2)"},
    [F_SEED] = {"--seed", 1, "S  seed of the inits, the draws and the "
                             "generated quantities (default: clock)"},
    [F_ALPHA] = {"--init-alpha", 1,
                 "A  L-BFGS's first line search step (default 0.001)"},
    [F_TOL_OBJ] = {"--tol-obj", 1,
                   "T  L-BFGS: absolute change of the objective (default "
                   "1e-12)"},
    [F_TOL_REL_OBJ] = {"--tol-rel-obj", 1,
                       "T  L-BFGS: relative change of the objective, in "
                       "epsilons (default 1e4)"},
    [F_TOL_GRAD] = {"--tol-grad", 1,
                    "T  L-BFGS: gradient norm (default 1e-8)"},
    [F_TOL_REL_GRAD] = {"--tol-rel-grad", 1,
                        "T  L-BFGS: relative gradient magnitude, in "
                        "epsilons (default 1e7)"},
    [F_TOL_PARAM] = {"--tol-param", 1,
                     "T  L-BFGS: change of the parameters (default 1e-8)"},
    [F_HISTORY] = {"--history-size", 1,
                   "N  L-BFGS pairs kept, the approximations' rank 2N "
                   "(default 5)"},
    [F_PSIS_DRAWS] = {"--num-psis-draws", 1,
                      "N  draws resampled from the pooled paths (default "
                      "1000; CmdStanPy's draws)"},
    [F_PATHS] = {"--num-paths", 1,
                 "N  independent paths from independent inits (default "
                 "4; 1: no resampling)"},
    [F_MAX_ITERS] = {"--max-lbfgs-iters", 1,
                     "N  L-BFGS iterations of a path at most (default "
                     "1000)"},
    [F_DRAWS] = {"--num-draws", 1,
                 "N  draws of each path's approximation (default 1000; "
                 "with one path, the output's)"},
    [F_SINGLE_DRAWS] = {"--num-single-draws", 1,
                        "N  CmdStanPy's name of --num-draws"},
    [F_ELBO_DRAWS] = {"--num-elbo-draws", 1,
                      "N  draws of each ELBO estimate (default 25)"},
    [F_SAVE_SINGLE] = {"--save-single-paths", 1,
                       "0|1  also write each path's draws, as "
                       "OUT_path_K.csv (default 0)"},
    [F_PSIS_RESAMPLE] = {"--psis-resample", 1,
                         "0|1  resample the pooled paths' draws by PSIS "
                         "(default 1); 0 writes every path's draws"},
    [F_CALC_LP] = {"--calculate-lp", 1,
                   "0|1  the log density lp__ of every draw (default 1); "
                   "0: NaN, and no resampling"},
    [F_OUT] = {"--out", 1, "FILE  output (default pathfinder.csv)"},
    [F_HELP] = {"--help", 0, "show this help"},
};
#define N_PF_OPTS (sizeof pf_opts / sizeof pf_opts[0])

typedef struct pf_args {
    cli_problem_args pb;
    const char *init, *out;
    double init_radius;
    uint64_t seed;
    int have_seed, help, save_single, have_draws, have_single;
    drift_pathfinder_opts o;
} pf_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift pathfinder: %s %s: %s\n", opt, v, want);
    return EXIT_USAGE;
}

static int positive(const char *opt, const char *v, double *out)
{
    if (drift_parse_double(v, out) || !(*out > 0) || !isfinite(*out))
        return bad(opt, v, "expected a positive number");
    return 0;
}

static int count(const char *opt, const char *v, unsigned max,
                 unsigned *out)
{
    uint64_t u;
    if (drift_parse_u64(v, &u) || u == 0 || u > max) {
        char want[64];
        snprintf(want, sizeof want, "expected an integer from 1 to %u", max);
        return bad(opt, v, want);
    }
    *out = (unsigned)u;
    return 0;
}

static int boolean(const char *opt, const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false"))
        *out = 0;
    else
        return bad(opt, v, "expected 0 or 1 (false or true)");
    return 0;
}

static int on_opt(void *user, int idx, const char *v)
{
    pf_args *a = user;
    drift_pathfinder_opts *o = &a->o;
    int taken = cli_problem_opt(&a->pb, "pathfinder", idx, v);
    if (taken != 1)
        return taken;
    switch (idx) {
    case -2:
    case F_HELP: a->help = 1; return 0;
    case F_INIT: {
        double r;
        if (!drift_parse_double(v, &r)) {
            if (!(r >= 0) || !isfinite(r))
                return bad("--init", v, "expected a radius >= 0 or a file");
            a->init = NULL;
            a->init_radius = r;
        } else {
            a->init = v;
        }
        return 0;
    }
    case F_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    case F_ALPHA: return positive("--init-alpha", v, &o->lbfgs.init_alpha);
    case F_TOL_OBJ: return positive("--tol-obj", v, &o->lbfgs.tol_obj);
    case F_TOL_REL_OBJ:
        return positive("--tol-rel-obj", v, &o->lbfgs.tol_rel_obj);
    case F_TOL_GRAD: return positive("--tol-grad", v, &o->lbfgs.tol_grad);
    case F_TOL_REL_GRAD:
        return positive("--tol-rel-grad", v, &o->lbfgs.tol_rel_grad);
    case F_TOL_PARAM: return positive("--tol-param", v, &o->lbfgs.tol_param);
    case F_HISTORY:
        return count("--history-size", v, 1000, &o->lbfgs.history_size);
    case F_PSIS_DRAWS:
        return count("--num-psis-draws", v, 100000000u, &o->num_psis_draws);
    case F_PATHS: return count("--num-paths", v, 10000, &o->num_paths);
    case F_MAX_ITERS:
        return count("--max-lbfgs-iters", v, 1000000000u, &o->lbfgs.iter);
    case F_DRAWS:
    case F_SINGLE_DRAWS: {
        const char *name = idx == F_DRAWS ? "--num-draws"
                                          : "--num-single-draws";
        unsigned n;
        int rc = count(name, v, 100000000u, &n);
        if (rc)
            return rc;
        int *mine = idx == F_DRAWS ? &a->have_draws : &a->have_single;
        int other = idx == F_DRAWS ? a->have_single : a->have_draws;
        if (other && n != o->num_draws)
            return bad(name, v, "--num-draws and --num-single-draws are "
                                "one option: give one");
        *mine = 1;
        o->num_draws = n;
        return 0;
    }
    case F_ELBO_DRAWS:
        return count("--num-elbo-draws", v, 1000000u, &o->num_elbo_draws);
    case F_SAVE_SINGLE:
        return boolean("--save-single-paths", v, &a->save_single);
    case F_PSIS_RESAMPLE:
        return boolean("--psis-resample", v, &o->psis_resample);
    case F_CALC_LP: return boolean("--calculate-lp", v, &o->calculate_lp);
    case F_OUT: a->out = v; return 0;
    }
    return 0;
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

static void write_header(FILE *f, const pf_args *a, const drift_model *m,
                         const drift_pathfinder_result *r, const char *file,
                         int single)
{
    const drift_pathfinder_opts *o = &a->o;
    const char *name = strrchr(a->pb.model, '/');
    name = name ? name + 1 : a->pb.model;
    size_t len = strcspn(name, ".");
    fprintf(f, "# drift_version = %s\n# model = %.*s\n# model_file = %s\n",
            PACKAGE_VERSION, (int)len, name, a->pb.model);
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
    fprintf(f, "# id = 1\n# data\n");
    for (size_t k = 0; k < a->pb.n_data; k++)
        fprintf(f, "#   file = %s\n", a->pb.data[k]);
    if (a->init)
        fprintf(f, "# init = %s\n", a->init);
    else
        fprintf(f, "# init = %g\n", a->init_radius);
    fprintf(f, "# random\n#   seed = %llu\n# output\n#   file = %s\n",
            (unsigned long long)a->seed, file);
    for (unsigned q = 0; q < r->n_paths; q++) {
        const drift_pathfinder_path *p = &r->paths[q];
        if (single && single != (int)q + 1)
            continue;
        if (p->status)
            fprintf(f, "# path %u: failed: %s\n", q + 1, p->message);
        else
            fprintf(f, "# path %u: %u L-BFGS iterations (%s); ELBO %.6g "
                       "at iteration %u\n",
                    q + 1, p->iterations, p->why, p->elbo, p->best_iter);
    }
    if (!single && !isnan(r->pareto_k))
        fprintf(f, "# pareto_k = %.4g\n", r->pareto_k);
    fprintf(f, "lp_approx__,lp__");
    for (size_t j = 0; j < m->n_out; j++)
        fprintf(f, ",%s", m->out_names[j]);
    for (size_t j = 0; j < m->n_gen; j++)
        fprintf(f, ",%s", m->gen_names[j]);
    fputc('\n', f);
}

static void put_num(FILE *f, double v, int comma)
{
    if (comma)
        fputc(',', f);
    if (isnan(v))
        fputs("nan", f);
    else
        fprintf(f, "%.17g", v);
}

/* Pool rows rows[0..n) (NULL: first..first+n) into path's file f. */
static int write_rows(FILE *f, const pf_args *a, const drift_model *m,
                      drift_logdensity *ld, const drift_pathfinder_result *r,
                      const size_t *rows, size_t first, size_t n,
                      double *out)
{
    drift_err e = {{0}};
    for (size_t k = 0; k < n; k++) {
        size_t i = rows ? rows[k] : first + k;
        const double *theta = r->theta + i * r->d;
        m->constrain(m->self, theta, out);
        /* the generated quantities' stream: the pool row's, so a draw
         * resampled twice repeats its values, as its parameters */
        if (m->n_gen &&
            m->generate(m->self, drift_logdensity_ws(ld), theta,
                        a->seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)), 1,
                        out + m->n_out, &e)) {
            fprintf(stderr, "drift pathfinder: generated quantities at draw "
                            "%zu: %s\n",
                    k + 1, e.msg);
            return EXIT_RUN_FAILED;
        }
        put_num(f, r->lp_approx[i], 0);
        put_num(f, r->lp[i], 1);
        for (size_t j = 0; j < m->n_out + m->n_gen; j++)
            put_num(f, out[j], 1);
        fputc('\n', f);
    }
    return 0;
}

/* One file: its header and rows, put in place whole. */
static int write_file(const pf_args *a, const drift_model *m,
                      drift_logdensity *ld, const drift_pathfinder_result *r,
                      const char *path, int single, double *out)
{
    drift_writer *w;
    FILE *f = cli_out_open("pathfinder", path, &w);
    if (!f)
        return EXIT_RUN_FAILED;
    write_header(f, a, m, r, path, single);
    int rc;
    if (single) {
        size_t first = 0;
        for (size_t i = 0; i < r->pool_n && r->path[i] != (unsigned)single - 1;
             i++)
            first++;
        rc = write_rows(f, a, m, ld, r, NULL, first, a->o.num_draws, out);
    } else {
        rc = write_rows(f, a, m, ld, r, r->idx, 0, r->n, out);
    }
    if (rc) {
        drift_writer_abort(w);
        return rc;
    }
    return cli_out_commit("pathfinder", w);
}

/* The command's work on its opened model (cli_with_problem). */
static int run(void *user, const drift_model *m)
{
    const pf_args *a = user;
    drift_err e = {{0}};
    drift_logdensity *ld;
    if (drift_logdensity_new(&ld, m, 1, "drift pathfinder", &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return EXIT_USAGE;
    }
    size_t d = m->dim;
    double *theta = drift_calloc(d + m->n_out + m->n_gen + 1, sizeof *theta);
    drift_pathfinder_result *r = NULL;
    int status = 0, rc;
    if (!theta) {
        fprintf(stderr, "drift pathfinder: out of memory\n");
        status = EXIT_RUN_FAILED;
        goto done;
    }
    double *out = theta + d;
    drift_pathfinder_opts o = a->o;
    o.init_radius = a->init_radius;
    const double *init = NULL;
    if (a->init || a->init_radius == 0) {
        if (a->init &&
            (rc = drift_optimize_start(ld, m, a->init, a->seed, theta, &e))) {
            fprintf(stderr, "drift pathfinder: %s\n", e.msg);
            status = rc == DRIFT_ENUMERIC ? EXIT_RUN_FAILED : EXIT_USAGE;
            goto done;
        }
        init = theta;
    }
    drift_rng rng;
    drift_rng_seed(&rng, a->seed, 0);
    if ((rc = drift_pathfinder_run(ld, d, &o, init, &rng, &r, &e))) {
        fprintf(stderr, "drift pathfinder: %s\n", e.msg);
        status = EXIT_RUN_FAILED;
        goto done;
    }
    for (unsigned q = 0; q < r->n_paths; q++) {
        const drift_pathfinder_path *p = &r->paths[q];
        if (p->status) {
            fprintf(stderr, "drift pathfinder: path %u failed: %s\n", q + 1,
                    p->message);
            continue;
        }
        fprintf(stderr, "drift pathfinder: path %u: %u L-BFGS iterations "
                        "(%s); best ELBO %.6g at iteration %u\n",
                q + 1, p->iterations, p->why, p->elbo, p->best_iter);
        if (!p->converged)
            fprintf(stderr, "drift pathfinder: warning: path %u: L-BFGS did "
                            "not converge: the density may have no mode "
                            "(an improper posterior?), or raise "
                            "--max-lbfgs-iters\n",
                    q + 1);
    }
    if ((status = write_file(a, m, ld, r, a->out, 0, out)))
        goto done;
    if (a->save_single) {
        char name[4200];
        for (unsigned q = 0; q < r->n_paths; q++) {
            if (r->paths[q].status)
                continue;
            single_name(a->out, q + 1, name, sizeof name);
            if ((status = write_file(a, m, ld, r, name, (int)q + 1, out)))
                goto done;
        }
    }
    if (!isnan(r->pareto_k)) {
        fprintf(stderr, "drift pathfinder: PSIS over %zu draws of %u paths: "
                        "Pareto k = %.3g%s\n",
                r->pool_n, r->paths_ok, r->pareto_k,
                r->pareto_k == -INFINITY ? " (equal weights: the "
                                           "approximations match the "
                                           "density)"
                                         : "");
        if (!(r->pareto_k <= DRIFT_PSIS_K_WARN))
            fprintf(stderr, "drift pathfinder: warning: Pareto k %.3g > %g: "
                            "the approximation is too far from the posterior "
                            "for importance resampling to correct; use drift "
                            "sample (or its --init pathfinder)\n",
                    r->pareto_k, DRIFT_PSIS_K_WARN);
    }
    fprintf(stderr, "drift pathfinder: %zu draws -> %s\n", r->n, a->out);
done:
    drift_pathfinder_result_free(r);
    drift_free(theta);
    drift_logdensity_free(ld);
    return status;
}

int cmd_pathfinder(int argc, char **argv)
{
    pf_args a;
    memset(&a, 0, sizeof a);
    drift_pathfinder_defaults(&a.o);
    a.init_radius = a.o.init_radius;
    int rc = cli_parse("pathfinder", pf_opts, N_PF_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift pathfinder MODEL.drift|--model NAME --data FILE "
                  "[options]",
                  "Approximate posterior draws by Pathfinder (Zhang, "
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
                  pf_opts, N_PF_OPTS);
        return 0;
    }
    if (!a.out)
        a.out = "pathfinder.csv";
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    const char *inputs[20] = {a.init};
    size_t n_in = 1 + cli_problem_inputs(&a.pb, inputs + 1);
    if ((rc = cli_out_check("pathfinder", a.out, inputs, n_in)))
        return rc;
    if (a.save_single) {
        char name[4200];
        for (unsigned q = 1; q <= a.o.num_paths; q++) {
            single_name(a.out, q, name, sizeof name);
            if ((rc = cli_out_check("pathfinder", name, inputs, n_in)))
                return rc;
        }
    }
    return cli_with_problem("pathfinder", &a.pb, run, &a);
}
