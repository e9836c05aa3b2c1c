/* laplace.c: `drift laplace`, as CmdStan's laplace method: draws from the
 * Gaussian approximation at the posterior mode on the unconstrained scale
 * (engine/run/laplace.h), the mode given as an optimize CSV file (--mode)
 * or found here by L-BFGS; with the constraint Jacobians by default
 * (CmdStan's jacobian=1).  Writes log_p__ (the log density at the draw),
 * log_g__ (the approximation's, up to its constant), the parameters and
 * the generated quantities of each draw. */
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
#include "engine/run/laplace.h"
#include "engine/run/logdensity.h"
#include "engine/run/optimize.h"
#include "engine/run/points.h"

enum { L_MODEL = CLI_PB_MODEL, L_MODEL_SET, L_DATA, L_DATA_SET,
       L_MODE = CLI_PB_N, L_INIT, L_SEED,
       L_JAC, L_NO_JAC, L_DRAWS, L_OUT, L_HELP };

static const cli_opt lap_opts[] = {
    CLI_PROBLEM_OPTS,
    [L_MODE] = {"--mode", 1,
                "FILE  the mode: a CSV file of drift optimize or CmdStan's "
                "optimize (default: found here by L-BFGS)"},
    [L_INIT] = {"--init", 1,
                "FILE  the mode search's initial values (JSON or CSV)"},
    [L_SEED] = {"--seed", 1, "S  seed of the draws (default: clock)"},
    [L_JAC] = {"--jacobian", 0,
               "include the constraint transforms' log-Jacobians (the "
               "default, as CmdStan's jacobian=1)"},
    [L_NO_JAC] = {"--no-jacobian", 0,
                  "the approximation of the constrained values' density "
                  "(its mode: drift optimize's default)"},
    [L_DRAWS] = {"--draws", 1, "N  draws (default 1000)"},
    [L_OUT] = {"--out", 1, "FILE  output (default laplace.csv)"},
    [L_HELP] = {"--help", 0, "show this help"},
};
#define N_LAP_OPTS (sizeof lap_opts / sizeof lap_opts[0])

typedef struct lap_args {
    cli_problem_args pb;
    const char *mode, *init, *out;
    uint64_t seed, draws;
    int have_seed, jacobian, help;
} lap_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift laplace: %s %s: %s\n", opt, v, want);
    return EXIT_USAGE;
}

static int on_opt(void *user, int idx, const char *v)
{
    lap_args *a = user;
    int taken = cli_problem_opt(&a->pb, "laplace", idx, v);
    if (taken != 1)
        return taken;
    switch (idx) {
    case -2:
    case L_HELP: a->help = 1; return 0;
    case L_MODE: a->mode = v; return 0;
    case L_INIT: a->init = v; return 0;
    case L_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    case L_JAC: a->jacobian = 1; return 0;
    case L_NO_JAC: a->jacobian = 0; return 0;
    case L_DRAWS:
        if (drift_parse_u64(v, &a->draws) || a->draws == 0 ||
            a->draws > 100000000u)
            return bad("--draws", v, "expected a positive integer (at most "
                                     "10^8)");
        return 0;
    case L_OUT: a->out = v; return 0;
    }
    return 0;
}

/* The mode into theta: the --mode file's one row, or L-BFGS's. */
static int find_mode(const lap_args *a, const drift_model *m,
                     drift_logdensity *ld, double *theta, drift_err *e)
{
    if (a->mode) {
        double *vals = NULL;
        size_t n = 0;
        int rc = drift_points_from_draws(a->mode, m, 0, &vals, &n, NULL, e);
        if (rc) /* a file the user gave: bad input */
            return drift_err_set(e, DRIFT_EINVAL, "--mode %s: %s", a->mode,
                                 e->msg);
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
            return drift_err_set(e, DRIFT_EINVAL, "--mode %s: %s", a->mode,
                                 e->msg);
        return DRIFT_OK;
    }
    int rc = drift_optimize_start(ld, m, a->init, a->seed, theta, e);
    if (rc)
        return rc;
    drift_optimize_opts o;
    drift_optimize_defaults(&o);
    drift_optimize_result r;
    if ((rc = drift_optimize_lbfgs(ld, m->dim, &o, theta, &r, e)))
        return rc;
    if (!r.converged)
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "the mode search did not converge (%s after %u "
                             "iterations): run drift optimize and give its "
                             "file with --mode",
                             r.why, r.iterations);
    fprintf(stderr, "drift laplace: the mode: %s after %u iterations, lp__ = "
                    "%.10g\n",
            r.why, r.iterations, r.lp);
    return DRIFT_OK;
}

static void write_header(FILE *f, const lap_args *a, const drift_model *m)
{
    const char *name = strrchr(a->pb.model, '/');
    name = name ? name + 1 : a->pb.model;
    size_t len = strcspn(name, ".");
    fprintf(f, "# drift_version = %s\n# model = %.*s\n# model_file = %s\n",
            PACKAGE_VERSION, (int)len, name, a->pb.model);
    fprintf(f, "# method = laplace\n#   laplace\n#     mode = %s\n"
               "#     jacobian = %d\n#     draws = %llu\n",
            a->mode ? a->mode : "(found by drift laplace)", a->jacobian,
            (unsigned long long)a->draws);
    fprintf(f, "# id = 1\n# data\n");
    for (size_t k = 0; k < a->pb.n_data; k++)
        fprintf(f, "#   file = %s\n", a->pb.data[k]);
    fprintf(f, "# random\n#   seed = %llu\n# output\n#   file = %s\n",
            (unsigned long long)a->seed, a->out);
    fprintf(f, "log_p__,log_g__");
    for (size_t j = 0; j < m->n_out; j++)
        fprintf(f, ",%s", m->out_names[j]);
    for (size_t j = 0; j < m->n_gen; j++)
        fprintf(f, ",%s", m->gen_names[j]);
    fputc('\n', f);
}

/* The command's work on its opened model (cli_with_problem). */
static int run(void *user, const drift_model *m)
{
    const lap_args *a = user;
    drift_err e = {{0}};
    drift_logdensity *ld;
    if (drift_logdensity_new(&ld, m, a->jacobian, "drift laplace", &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return EXIT_USAGE;
    }
    size_t d = m->dim;
    double *theta = drift_malloc_array(d + m->n_out + m->n_gen + 1,
                                       sizeof *theta);
    drift_laplace *la = NULL;
    drift_writer *w = NULL;
    FILE *f = NULL;
    int status = 0, rc;
    if (!theta) {
        fprintf(stderr, "drift laplace: out of memory\n");
        status = EXIT_RUN_FAILED;
        goto done;
    }
    double *out = theta + d;
    if ((rc = find_mode(a, m, ld, theta, &e)) ||
        (rc = drift_laplace_new(&la, ld, d, theta, &e))) {
        fprintf(stderr, "drift laplace: %s\n", e.msg);
        status = rc == DRIFT_EINVAL ? EXIT_USAGE : EXIT_RUN_FAILED;
        goto done;
    }
    if (!(f = cli_out_open("laplace", a->out, &w))) {
        status = EXIT_RUN_FAILED;
        goto done;
    }
    write_header(f, a, m);
    drift_rng rng;
    drift_rng_seed(&rng, a->seed, 0);
    for (uint64_t k = 0; k < a->draws; k++) {
        double log_g, log_p;
        drift_laplace_draw(la, &rng, theta, &log_g);
        if (drift_logdensity_eval(ld, theta, &log_p, NULL, &e))
            log_p = -INFINITY;
        m->constrain(m->self, theta, out);
        if (m->n_gen &&
            m->generate(m->self, drift_logdensity_ws(ld), theta,
                        a->seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)), 1,
                        out + m->n_out, &e)) {
            fprintf(stderr, "drift laplace: generated quantities at draw "
                            "%llu: %s\n",
                    (unsigned long long)k + 1, e.msg);
            status = EXIT_RUN_FAILED;
            goto done;
        }
        fprintf(f, "%.17g,%.17g", log_p, log_g);
        for (size_t j = 0; j < m->n_out + m->n_gen; j++)
            fprintf(f, ",%.17g", out[j]);
        fputc('\n', f);
    }
    rc = cli_out_commit("laplace", w);
    w = NULL;
    if (rc) {
        status = rc;
        goto done;
    }
    fprintf(stderr, "drift laplace: %llu draws -> %s\n",
            (unsigned long long)a->draws, a->out);
done:
    if (w) /* a run that failed after opening: nothing put in place */
        drift_writer_abort(w);
    drift_laplace_free(la);
    drift_free(theta);
    drift_logdensity_free(ld);
    return status;
}

int cmd_laplace(int argc, char **argv)
{
    lap_args a;
    memset(&a, 0, sizeof a);
    a.jacobian = 1;
    a.draws = 1000;
    int rc = cli_parse("laplace", lap_opts, N_LAP_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift laplace MODEL.drift|--model NAME --data FILE "
                  "[--mode FILE] [options]",
                  "Draws from the Laplace approximation at the posterior "
                  "mode, as CmdStan's\nlaplace method: the Gaussian on the "
                  "unconstrained scale with the mode as mean\nand the "
                  "inverse of the negative Hessian there as covariance, "
                  "with the\nconstraint transforms' log-Jacobians by "
                  "default.  The mode is read from an\noptimize CSV file "
                  "(--mode) or found here by L-BFGS.  Columns: log_p__ (the\n"
                  "log density at the draw), log_g__ (the approximation's, "
                  "up to its constant),\nthe parameters and the generated "
                  "quantities.",
                  lap_opts, N_LAP_OPTS);
        return 0;
    }
    if (!a.out)
        a.out = "laplace.csv";
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    const char *inputs[20] = {a.init, a.mode};
    size_t n_in = 2 + cli_problem_inputs(&a.pb, inputs + 2);
    if ((rc = cli_out_check("laplace", a.out, inputs, n_in)))
        return rc;
    return cli_with_problem("laplace", &a.pb, run, &a);
}
