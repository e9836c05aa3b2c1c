/* variational.c: `drift variational`, as CmdStan's variational method:
 * ADVI's Gaussian approximation on the unconstrained scale
 * (engine/run/variational.h), its gradients from minibatches when the
 * data is large, written as CmdStan's variational CSV (lp__ = 0, log_p__,
 * log_g__, the parameters and generated quantities; the first row the
 * approximation's mean), with the Pareto k diagnostic of its draws
 * (engine/stats/psis.h) in the file's closing comments and a warning
 * above 0.7. */
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
#include "engine/run/variational.h"
#include "engine/stats/psis.h"

enum { V_MODEL = CLI_PB_MODEL, V_MODEL_SET, V_DATA, V_DATA_SET,
       V_ALGO = CLI_PB_N, V_INIT, V_SEED, V_ITER, V_GRAD_SAMPLES,
       V_ELBO_SAMPLES, V_ETA, V_ADAPT_ENGAGED, V_ADAPT_ITER, V_TOL_REL_OBJ,
       V_EVAL_ELBO, V_OUTPUT_SAMPLES, V_BATCH, V_ELBO_ROWS, V_WARM, V_QUIET, V_OUT,
       V_HELP };

static const cli_opt vi_opts[] = {
    CLI_PROBLEM_OPTS,
    [V_ALGO] = {"--algorithm", 1,
                "A  meanfield (default: a diagonal Gaussian) or fullrank"},
    [V_INIT] = {"--init", 1,
                "FILE  initial mean (JSON or CSV; default: uniform(-2, 2) "
                "on the unconstrained scale)"},
    [V_SEED] = {"--seed", 1, "S  seed (default: clock)"},
    [V_ITER] = {"--iter", 1, "N  iterations at most (default 10000)"},
    [V_GRAD_SAMPLES] = {"--grad-samples", 1,
                        "N  draws per ELBO gradient (default 1)"},
    [V_ELBO_SAMPLES] = {"--elbo-samples", 1,
                        "N  draws per ELBO estimate (default 100)"},
    [V_ETA] = {"--eta", 1,
               "E  step-size scale (default: chosen by adaptation; given, "
               "adaptation is off)"},
    [V_ADAPT_ENGAGED] = {"--adapt-engaged", 1,
                         "0|1  choose eta over 100, 10, 1, 0.1, 0.01 "
                         "(default 1; 0: eta as given, 1 if not)"},
    [V_ADAPT_ITER] = {"--adapt-iter", 1,
                      "N  iterations per eta tried (default 50)"},
    [V_TOL_REL_OBJ] = {"--tol-rel-obj", 1,
                       "T  relative ELBO change, mean or median of recent "
                       "ones (default 0.01)"},
    [V_EVAL_ELBO] = {"--eval-elbo", 1,
                     "N  iterations between ELBO estimates (default 100)"},
    [V_OUTPUT_SAMPLES] = {"--output-samples", 1,
                          "N  draws written (default 1000)"},
    [V_BATCH] = {"--batch", 1,
                 "B  rows per gradient (default: all when N <= 10^4, else "
                 "max(1000, N/1000))"},
    [V_ELBO_ROWS] = {"--elbo-rows", 1,
                     "R  rows of each ELBO estimate, drawn once (default: "
                     "all when N <= 10^4, else 10^4)"},
    [V_WARM] = {"--warm-start", 1,
                "0|1  start from the minibatch mode (adam) with scales from "
                "the rows' gradient spread, and take the mean's steps in the "
                "approximation's scale (default: 1 when gradients are from "
                "minibatches; 0: Stan's start and steps exactly)"},
    [V_QUIET] = {"--quiet", 0, "no progress lines"},
    [V_OUT] = {"--out", 1, "FILE  output (default variational.csv)"},
    [V_HELP] = {"--help", 0, "show this help"},
};
#define N_VI_OPTS (sizeof vi_opts / sizeof vi_opts[0])

typedef struct vi_args {
    cli_problem_args pb;
    const char *init, *out;
    uint64_t seed, output_samples;
    int have_seed, have_eta, have_adapt, quiet, help;
    int warm;                   /* -1: by the batch, 0, 1 */
    drift_vi_opts o;
} vi_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift variational: %s %s: %s\n", opt, v, want);
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
        return bad(opt, v, "expected a positive integer (at most 10^9)");
    *out = (unsigned)u;
    return 0;
}

static int on_opt(void *user, int idx, const char *v)
{
    vi_args *a = user;
    int taken = cli_problem_opt(&a->pb, "variational", idx, v);
    if (taken != 1)
        return taken;
    unsigned u;
    switch (idx) {
    case -2:
    case V_HELP: a->help = 1; return 0;
    case V_ALGO:
        if (!strcmp(v, "meanfield"))
            a->o.fullrank = 0;
        else if (!strcmp(v, "fullrank"))
            a->o.fullrank = 1;
        else
            return bad("--algorithm", v, "expected meanfield or fullrank");
        return 0;
    case V_INIT: a->init = v; return 0;
    case V_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    case V_ITER: return count("--iter", v, &a->o.iter);
    case V_GRAD_SAMPLES:
        return count("--grad-samples", v, &a->o.grad_samples);
    case V_ELBO_SAMPLES:
        return count("--elbo-samples", v, &a->o.elbo_samples);
    case V_ETA:
        a->have_eta = 1;
        return positive("--eta", v, &a->o.eta);
    case V_ADAPT_ENGAGED:
        if (strcmp(v, "0") && strcmp(v, "1"))
            return bad("--adapt-engaged", v, "expected 0 or 1");
        a->o.adapt_engaged = v[0] == '1';
        a->have_adapt = 1;
        return 0;
    case V_ADAPT_ITER: return count("--adapt-iter", v, &a->o.adapt_iter);
    case V_TOL_REL_OBJ:
        return positive("--tol-rel-obj", v, &a->o.tol_rel_obj);
    case V_EVAL_ELBO: return count("--eval-elbo", v, &a->o.eval_elbo);
    case V_OUTPUT_SAMPLES:
        if (count("--output-samples", v, &u))
            return EXIT_USAGE;
        if (u > 100000000u)
            return bad("--output-samples", v, "at most 10^8");
        a->output_samples = u;
        return 0;
    case V_BATCH:
        if (count("--batch", v, &u))
            return EXIT_USAGE;
        a->o.batch = u;
        return 0;
    case V_ELBO_ROWS:
        if (count("--elbo-rows", v, &u))
            return EXIT_USAGE;
        a->o.elbo_rows = u;
        return 0;
    case V_WARM:
        if (strcmp(v, "0") && strcmp(v, "1"))
            return bad("--warm-start", v, "expected 0 or 1");
        a->warm = v[0] == '1';
        return 0;
    case V_QUIET: a->quiet = 1; return 0;
    case V_OUT: a->out = v; return 0;
    }
    return 0;
}

static void write_header(FILE *f, const vi_args *a, const drift_model *m,
                         const drift_vi_result *r)
{
    const drift_vi_opts *o = &a->o;
    const char *name = strrchr(a->pb.model, '/');
    name = name ? name + 1 : a->pb.model;
    size_t len = strcspn(name, ".");
    const char *algo = o->fullrank ? "fullrank" : "meanfield";
    fprintf(f, "# drift_version = %s\n# model = %.*s\n# model_file = %s\n",
            PACKAGE_VERSION, (int)len, name, a->pb.model);
    fprintf(f, "# method = variational\n#   variational\n"
               "#     algorithm = %s\n#       %s\n#     iter = %u\n"
               "#     grad_samples = %u\n#     elbo_samples = %u\n"
               "#     eta = %g\n#     adapt\n#       engaged = %d\n"
               "#       iter = %u\n#     tol_rel_obj = %g\n"
               "#     eval_elbo = %u\n#     output_samples = %llu\n"
               "#     batch = %zu\n#     elbo_rows = %zu\n",
            algo, algo, o->iter, o->grad_samples, o->elbo_samples, o->eta,
            o->adapt_engaged, o->adapt_iter, o->tol_rel_obj, o->eval_elbo,
            (unsigned long long)a->output_samples, r->batch, r->elbo_rows);
    fprintf(f, "# id = 1\n# data\n");
    for (size_t k = 0; k < a->pb.n_data; k++)
        fprintf(f, "#   file = %s\n", a->pb.data[k]);
    fprintf(f, "#   rows = %zu\n# init = %s\n# random\n#   seed = %llu\n"
               "# output\n#   file = %s\n",
            m->n_rows, a->init ? a->init : "2", (unsigned long long)a->seed,
            a->out);
    fprintf(f, "lp__,log_p__,log_g__");
    for (size_t j = 0; j < m->n_out; j++)
        fprintf(f, ",%s", m->out_names[j]);
    for (size_t j = 0; j < m->n_gen; j++)
        fprintf(f, ",%s", m->gen_names[j]);
    fputc('\n', f);
    if (o->adapt_engaged)
        fprintf(f, "# Stepsize adaptation complete.\n# eta = %g\n", r->eta);
}

/* One row: lp__ = 0, log_p__, log_g__, then theta's constrained values and
 * generated quantities (seeded by k). */
static int write_row(FILE *f, const vi_args *a, const drift_model *m,
                     drift_logdensity *ld, const double *theta, double log_p,
                     double log_g, double *out, uint64_t k, drift_err *e)
{
    m->constrain(m->self, theta, out);
    if (m->n_gen &&
        m->generate(m->self, drift_logdensity_ws(ld), theta,
                    a->seed ^ (0x9e3779b97f4a7c15ULL * (k + 1)), 1,
                    out + m->n_out, e))
        return DRIFT_EINVAL;
    fprintf(f, "0,%.17g,%.17g", log_p, log_g);
    for (size_t j = 0; j < m->n_out + m->n_gen; j++)
        fprintf(f, ",%.17g", out[j]);
    fputc('\n', f);
    return DRIFT_OK;
}

/* The command's work on its opened model (cli_with_problem). */
static int run(void *user, const drift_model *m)
{
    const vi_args *a = user;
    drift_err e = {{0}};
    drift_logdensity *ld;
    if (drift_logdensity_new(&ld, m, 1, "drift variational", &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return EXIT_USAGE;
    }
    size_t d = m->dim, S = (size_t)a->output_samples;
    double *theta = drift_malloc_array(d + m->n_out + m->n_gen + 1,
                                       sizeof *theta);
    double *lr = drift_malloc_array(S, sizeof *lr);
    double *sd = drift_malloc_array(d ? d : 1, sizeof *sd);
    drift_vi *q = NULL;
    drift_writer *w = NULL;
    int status = 0, rc;
    if (!theta || !lr || !sd) {
        fprintf(stderr, "drift variational: out of memory\n");
        status = EXIT_RUN_FAILED;
        goto done;
    }
    double *out = theta + d;
    if ((rc = drift_optimize_start(ld, m, a->init, a->seed, theta, &e))) {
        fprintf(stderr, "drift variational: %s\n", e.msg);
        status = rc == DRIFT_ENUMERIC ? EXIT_RUN_FAILED : EXIT_USAGE;
        goto done;
    }
    drift_vi_opts o = a->o;
    o.log = a->quiet ? NULL : stderr;
    size_t b = o.batch ? o.batch : drift_logdensity_batch(m->n_rows);
    int warm = a->warm >= 0 ? a->warm : b < m->n_rows;
    o.stan_steps = !warm;
    o.control_variates = warm;
    if (warm) {
        drift_optimize_sg_opts sg;
        drift_optimize_result mr;
        drift_optimize_sg_defaults(&sg);
        sg.batch = b;
        sg.seed = a->seed;
        if ((rc = drift_optimize_sg(ld, m, &sg, theta, &mr, &e)) ||
            (rc = drift_optimize_post_sds(m, theta, a->seed, sd, &e))) {
            fprintf(stderr, "drift variational: the warm start: %s\n",
                    e.msg);
            status = rc == DRIFT_EINVAL ? EXIT_USAGE : EXIT_RUN_FAILED;
            goto done;
        }
        if (!a->quiet)
            fprintf(stderr, "drift variational: warm start: the minibatch "
                            "mode after %u adam steps (its gradient %.2g of "
                            "its sampling sd)\n",
                    mr.iterations, mr.grad_sds);
    }
    drift_vi_result r;
    if ((rc = drift_vi_fit(&q, ld, m, &o, theta, warm ? sd : NULL, a->seed,
                           &r, &e))) {
        fprintf(stderr, "drift variational: %s\n", e.msg);
        status = rc == DRIFT_EINVAL ? EXIT_USAGE : EXIT_RUN_FAILED;
        goto done;
    }
    FILE *f = cli_out_open("variational", a->out, &w);
    if (!f) {
        status = EXIT_RUN_FAILED;
        goto done;
    }
    write_header(f, a, m, &r);
    drift_vi_mean(q, theta);
    if (write_row(f, a, m, ld, theta, 0, 0, out, 0, &e))
        goto gq_failed;
    drift_rng rng;
    drift_rng_seed(&rng, a->seed, 1);
    size_t n_bad = 0;
    for (size_t k = 0; k < S; k++) {
        double log_g, log_p;
        drift_vi_draw(q, &rng, theta, &log_g);
        if (drift_logdensity_eval(ld, theta, &log_p, NULL, &e)) {
            log_p = -INFINITY;
            n_bad++;
        }
        lr[k] = log_p - log_g;
        if (write_row(f, a, m, ld, theta, log_p, log_g, out, k + 1, &e))
            goto gq_failed;
    }
    double khat = INFINITY;
    int have_k = S >= 10 && !drift_psis_khat(lr, S, &khat, &e);
    fprintf(f, "# \n# iterations = %u\n# converged = %d (%s)\n"
               "# ELBO = %.10g\n",
            r.iterations, r.converged, r.why, r.elbo);
    if (have_k)
        fprintf(f, "# Pareto k = %.4g (PSIS on log_p__ - log_g__ of the %zu "
                   "draws; above 0.7 the approximation is unreliable)\n",
                khat, S);
    if (n_bad)
        fprintf(f, "# draws with no finite log density: %zu\n", n_bad);
    rc = cli_out_commit("variational", w);
    w = NULL;
    if (rc) {
        status = rc;
        goto done;
    }
    if (have_k && khat > 0.7)
        fprintf(stderr, "drift variational: warning: Pareto k = %.2f > 0.7: "
                        "the approximation is far from the posterior and "
                        "its draws and means may be badly off; try "
                        "--algorithm fullrank, a smaller --tol-rel-obj, or "
                        "drift sample for exact draws\n",
                khat);
    if (r.converged) {
        fprintf(stderr, "drift variational: %s after %u iterations (eta = "
                        "%g, %zu rows per gradient); ELBO %.6g%s%.2f -> %s\n",
                r.why, r.iterations, r.eta, r.batch, r.elbo,
                have_k ? ", Pareto k " : "", have_k ? khat : 0.0, a->out);
    } else {
        fprintf(stderr, "drift variational: warning: %s (%u iterations; the "
                        "approximation reached is in %s): the ELBO may not "
                        "have converged; raise --iter, or give a smaller "
                        "--eta\n",
                r.why, r.iterations, a->out);
        status = EXIT_RUN_FAILED;
    }
    goto done;
gq_failed:
    fprintf(stderr, "drift variational: generated quantities: %s\n", e.msg);
    status = EXIT_RUN_FAILED;
done:
    if (w) /* a run that failed after opening: nothing put in place */
        drift_writer_abort(w);
    drift_vi_free(q);
    drift_free(theta);
    drift_free(lr);
    drift_free(sd);
    drift_logdensity_free(ld);
    return status;
}

int cmd_variational(int argc, char **argv)
{
    vi_args a;
    memset(&a, 0, sizeof a);
    drift_vi_defaults(&a.o);
    a.output_samples = 1000;
    a.warm = -1;
    int rc = cli_parse("variational", vi_opts, N_VI_OPTS, argc, argv,
                       on_opt, &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift variational MODEL.drift|--model NAME --data FILE "
                  "[--algorithm meanfield|fullrank] [options]",
                  "Fits a Gaussian to the posterior on the unconstrained "
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
                  "draws (PSIS) closes the file;\nabove 0.7 a warning says "
                  "the approximation is unreliable.  Exit status 1\nwhen "
                  "the iteration limit is hit.",
                  vi_opts, N_VI_OPTS);
        return 0;
    }
    if (a.have_eta && !a.have_adapt)
        a.o.adapt_engaged = 0;
    if (!a.out)
        a.out = "variational.csv";
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    const char *inputs[20] = {a.init};
    size_t n_in = 1 + cli_problem_inputs(&a.pb, inputs + 1);
    if ((rc = cli_out_check("variational", a.out, inputs, n_in)))
        return rc;
    return cli_with_problem("variational", &a.pb, run, &a);
}
