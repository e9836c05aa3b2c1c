/* method_logprob.c: the log_prob method, as CmdStan's: the log density
 * and its gradient on the unconstrained scale at given points (the draws
 * of a Stan CSV file, or one point in JSON), with the constraint
 * Jacobians (the default, as CmdStan's jacobian=1) or without.  Not for
 * checking gradients (drift diagnose). */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "inits.h"
#include "logdensity.h"
#include "method.h"
#include "points.h"

typedef struct lp_args {
    const char *draws, *point;
    int jacobian;
} lp_args;

#define OFF(f) offsetof(lp_args, f)

static const drift_mopt opts[] = {
    {"draws", DRIFT_MOPT_FILE, OFF(draws),
     "FILE  a Stan CSV file: every kept draw, parameters read by column "
     "name", 0, NULL, NULL},
    {"point", DRIFT_MOPT_FILE, OFF(point),
     "FILE  one point: CmdStan JSON of the parameters' constrained values",
     0, NULL, NULL},
    {"jacobian", DRIFT_MOPT_SET, OFF(jacobian),
     "include the constraint transforms' log-Jacobians (the default)", 0,
     NULL, NULL},
    {"no-jacobian", DRIFT_MOPT_CLEAR, OFF(jacobian),
     "the density of the constrained values, without them", 0, NULL, NULL},
};

static void defaults(void *args)
{
    ((lp_args *)args)->jacobian = 1;
}

static int check(void *args, drift_err *e)
{
    const lp_args *a = args;
    if (!a->draws == !a->point)
        return drift_err_set(e, DRIFT_EINVAL,
                             "give one of --draws FILE (a Stan CSV file) and "
                             "--point FILE (JSON)");
    return DRIFT_OK;
}

/* The name of unconstrained coordinate j. */
static const char *theta_name(const drift_model *m, size_t j)
{
    return m->theta_names ? m->theta_names[j] : m->out_names[j];
}

static int columns(const void *args, const drift_model *m, char ***names,
                   size_t *n, drift_err *e)
{
    (void)args;
    int rc = drift_method_column(names, n, "lp__", e);
    for (size_t j = 0; !rc && j < m->dim; j++) {
        char name[512];
        snprintf(name, sizeof name, "g_%s", theta_name(m, j));
        rc = drift_method_column(names, n, name, e);
    }
    return rc;
}

static int run(const void *args, drift_method_run *r, drift_err *e)
{
    const lp_args *a = args;
    const drift_model *m = r->m;
    size_t d = m->dim, no = m->n_out, n = 0;
    double *vals = NULL;
    int rc;
    const char *src = a->draws ? a->draws : a->point;
    if (a->draws) {
        rc = drift_points_from_draws(a->draws, m, 0, &vals, &n, NULL, e);
    } else {
        n = 1;
        vals = drift_malloc_array(no ? no : 1, sizeof *vals);
        rc = vals ? drift_inits_read(a->point, m, vals, e)
                  : drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    if (rc) {
        drift_free(vals);
        return rc == DRIFT_ENOMEM ? rc : DRIFT_EINVAL;
    }
    drift_logdensity *ld;
    if ((rc = drift_logdensity_new(&ld, m, a->jacobian, NULL, e))) {
        drift_free(vals);
        return rc;
    }
    double *theta = drift_malloc_array(2 * d + 1, sizeof *theta);
    if (!theta) {
        drift_logdensity_free(ld);
        drift_free(vals);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    double *row = theta + d;
    if (r->f) {
        fprintf(r->f, "# method = log_prob\n# log_prob\n#   jacobian = %d\n"
                      "# model = %s\n# %s = %s\n",
                a->jacobian, r->model, a->draws ? "constrained_params"
                                                : "point",
                src);
        drift_method_header_names(r);
    }
    for (size_t k = 0; k < n; k++) {
        if ((rc = m->unconstrain(m->self, vals + k * no, theta, e)) ||
            (rc = drift_logdensity_eval(ld, theta, &row[0], row + 1, e))) {
            if (n > 1)
                drift_err_prefix(e, "%s, draw %zu", src, k + 1);
            else
                drift_err_prefix(e, "%s", src);
            if (rc != DRIFT_ENUMERIC)
                rc = DRIFT_EINVAL;
            break;
        }
        drift_method_row(r, row);
    }
    drift_free(theta);
    drift_logdensity_free(ld);
    drift_free(vals);
    return rc;
}

const drift_method drift_method_log_prob = {
    .name = "log_prob",
    .summary = "the log density and its gradient at given points "
               "(CmdStan's log_prob)",
    .synopsis = "drift log-prob MODEL.drift|--model NAME --data FILE "
                "(--draws FILE | --point FILE) [--no-jacobian]",
    .about = "Prints the log density (lp__) and its gradient on the "
             "unconstrained scale\n(g_NAME) at every draw of a Stan "
             "CSV file or at one point, as CmdStan's\nlog_prob method "
             "does: with the constraint transforms' log-Jacobians by\n"
             "default, without them given --no-jacobian.  Parameters "
             "are read by name on the\nconstrained scale; the density "
             "includes every normalising constant.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof opts[0],
    .args_size = sizeof(lp_args),
    .default_out = NULL,
    .out_help = "FILE  write the CSV there (default: stdout)",
    .defaults = defaults,
    .check = check,
    .columns = columns,
    .run = run,
};
