/* logprob.c: `drift log-prob`, as CmdStan's log_prob method: the log
 * density and its gradient on the unconstrained scale at given points (the
 * draws of a Stan CSV file, or one point in JSON), with the constraint
 * Jacobians (the default, as CmdStan's jacobian=1) or without.  Not for
 * checking gradients (diagnose.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "methods.h"
#include "engine/run/inits.h"
#include "engine/run/logdensity.h"
#include "engine/run/points.h"

enum { L_MODEL = CLI_PB_MODEL, L_MODEL_SET, L_DATA, L_DATA_SET,
       L_DRAWS = CLI_PB_N, L_POINT, L_JAC,
       L_NOJAC, L_OUT, L_HELP };

static const cli_opt lp_opts[] = {
    CLI_PROBLEM_OPTS,
    [L_DRAWS] = {"--draws", 1,
                 "FILE  a Stan CSV file: every kept draw, parameters read "
                 "by column name"},
    [L_POINT] = {"--point", 1,
                 "FILE  one point: CmdStan JSON of the parameters' "
                 "constrained values"},
    [L_JAC] = {"--jacobian", 0,
               "include the constraint transforms' log-Jacobians (the "
               "default)"},
    [L_NOJAC] = {"--no-jacobian", 0,
                 "the density of the constrained values, without them"},
    [L_OUT] = {"--out", 1, "FILE  write the CSV there (default: stdout)"},
    [L_HELP] = {"--help", 0, "show this help"},
};
#define N_LP_OPTS (sizeof lp_opts / sizeof lp_opts[0])

typedef struct lp_args {
    cli_problem_args pb;
    const char *draws, *point, *out;
    int jacobian, help;
} lp_args;

static int on_opt(void *user, int idx, const char *v)
{
    lp_args *a = user;
    int taken = cli_problem_opt(&a->pb, "log-prob", idx, v);
    if (taken != 1)
        return taken;
    switch (idx) {
    case -2:
    case L_HELP: a->help = 1; return 0;
    case L_DRAWS: a->draws = v; return 0;
    case L_POINT: a->point = v; return 0;
    case L_JAC: a->jacobian = 1; return 0;
    case L_NOJAC: a->jacobian = 0; return 0;
    case L_OUT: a->out = v; return 0;
    }
    return 0;
}

/* The name of unconstrained coordinate j. */
static const char *theta_name(const drift_model *m, size_t j)
{
    return m->theta_names ? m->theta_names[j] : m->out_names[j];
}

static int run(const lp_args *a, const drift_model *m, FILE *out)
{
    drift_err e = {{0}};
    size_t d = m->dim, no = m->n_out, n = 0;
    double *vals = NULL;
    int rc;
    const char *src = a->draws ? a->draws : a->point;
    if (a->draws) {
        rc = drift_points_from_draws(a->draws, m, 0, &vals, &n, NULL, &e);
    } else {
        n = 1;
        vals = drift_malloc_array(no ? no : 1, sizeof *vals);
        rc = vals ? drift_inits_read(a->point, m, vals, &e)
                  : drift_err_set(&e, DRIFT_ENOMEM, "out of memory");
    }
    if (rc) {
        fprintf(stderr, "drift log-prob: %s\n", e.msg);
        drift_free(vals);
        return EXIT_USAGE;
    }
    drift_logdensity *ld;
    if ((rc = drift_logdensity_new(&ld, m, a->jacobian, "drift log-prob",
                                   &e))) {
        fprintf(stderr, "%s\n", e.msg);
        drift_free(vals);
        return EXIT_USAGE;
    }
    double *theta = drift_malloc_array(2 * d, sizeof *theta);
    if (!theta) {
        drift_logdensity_free(ld);
        drift_free(vals);
        fprintf(stderr, "drift log-prob: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    double *grad = theta + d;
    fprintf(out, "# method = log_prob\n# log_prob\n#   jacobian = %d\n"
                 "# model = %s\n# %s = %s\n",
            a->jacobian, a->pb.model, a->draws ? "constrained_params" : "point",
            src);
    fprintf(out, "lp__");
    for (size_t j = 0; j < d; j++)
        fprintf(out, ",g_%s", theta_name(m, j));
    fputc('\n', out);
    int status = 0;
    for (size_t r = 0; r < n && !status; r++) {
        double lp;
        if ((rc = m->unconstrain(m->self, vals + r * no, theta, &e)) ||
            (rc = drift_logdensity_eval(ld, theta, &lp, grad, &e))) {
            if (n > 1)
                fprintf(stderr, "drift log-prob: %s, draw %zu: %s\n", src,
                        r + 1, e.msg);
            else
                fprintf(stderr, "drift log-prob: %s: %s\n", src, e.msg);
            status = rc == DRIFT_ENUMERIC ? EXIT_RUN_FAILED : EXIT_USAGE;
            break;
        }
        fprintf(out, "%.17g", lp);
        for (size_t j = 0; j < d; j++)
            fprintf(out, ",%.17g", grad[j]);
        fputc('\n', out);
    }
    drift_free(theta);
    drift_logdensity_free(ld);
    drift_free(vals);
    return status;
}

/* The rows to stdout or the --out file, put in place whole. */
static int work(void *user, const drift_model *m)
{
    const lp_args *a = user;
    FILE *out = stdout;
    drift_writer *w = NULL;
    if (a->out && !(out = cli_out_open("log-prob", a->out, &w)))
        return EXIT_RUN_FAILED;
    int rc = run(a, m, out);
    if (w && rc)
        drift_writer_abort(w);
    else if (w)
        rc = cli_out_commit("log-prob", w);
    else if (fflush(out) && !rc) {
        fprintf(stderr, "drift log-prob: stdout: write failed\n");
        rc = EXIT_RUN_FAILED;
    }
    return rc;
}

int cmd_log_prob(int argc, char **argv)
{
    lp_args a;
    memset(&a, 0, sizeof a);
    a.jacobian = 1;
    int rc = cli_parse("log-prob", lp_opts, N_LP_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift log-prob MODEL.drift|--model NAME --data FILE "
                  "(--draws FILE | --point FILE) [--no-jacobian]",
                  "Prints the log density (lp__) and its gradient on the "
                  "unconstrained scale\n(g_NAME) at every draw of a Stan "
                  "CSV file or at one point, as CmdStan's\nlog_prob method "
                  "does: with the constraint transforms' log-Jacobians by\n"
                  "default, without them given --no-jacobian.  Parameters "
                  "are read by name on the\nconstrained scale; the density "
                  "includes every normalising constant.",
                  lp_opts, N_LP_OPTS);
        return 0;
    }
    if (!a.draws == !a.point) {
        fprintf(stderr, "drift log-prob: give one of --draws FILE (a Stan "
                        "CSV file) and --point FILE (JSON)\n");
        return EXIT_USAGE;
    }
    if (a.out) {
        const char *inputs[20] = {a.draws, a.point};
        size_t n_in = 2 + cli_problem_inputs(&a.pb, inputs + 2);
        int bad_out = cli_out_check("log-prob", a.out, inputs, n_in);
        if (bad_out)
            return bad_out;
    }
    return cli_with_problem("log-prob", &a.pb, work, &a);
}
