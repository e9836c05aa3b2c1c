/* method.c: the method commands that are kinds of run plan (optimize,
 * laplace, log-prob, pathfinder, generate, variational;
 * engine/run/method.h):
 * argv -> spec -> plan -> run, as drift sample is, with each method's
 * options and help from its table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli.h"
#include "engine/run/method.h"
#include "engine/run/plan.h"

/* The common options' places: the problem's first, the method's own
 * (from M_N), then seed, out and help (after them). */
enum { M_MODEL, M_MODEL_SET, M_DATA, M_DATA_SET, M_N };

/* The command's options: the common ones, then the method's. */
typedef struct method_cli {
    const drift_method *mt;
    const char *cmd;
    cli_opt *opts;
    char **names;           /* "--NAME" of the method's options */
    size_t n_opts;
    const char *model;
    const char *data[DRIFT_PLAN_MAX_DATA + 1];
    size_t n_data;
    drift_option *spec_opts;
    size_t n_spec;
    int help, out_given;
    int i_seed, i_out, i_help;  /* their places (i_seed -1: none) */
    const char *files;          /* the FILES option just given: the
                                   arguments after it are its values */
} method_cli;

static int push_opt(method_cli *c, const char *name, const char *v)
{
    drift_option *o = realloc(c->spec_opts, (c->n_spec + 1) * sizeof *o);
    if (!o) {
        fprintf(stderr, "drift %s: out of memory\n", c->cmd);
        return EXIT_RUN_FAILED;
    }
    c->spec_opts = o;
    o[c->n_spec++] = (drift_option){name, v};
    return 0;
}

static int on_opt(void *user, int idx, const char *v)
{
    method_cli *c = user;
    if (idx == -1 && c->files)
        return push_opt(c, c->files, v);
    if (idx != -1)
        c->files = idx >= M_N && idx < (int)(M_N + c->mt->n_opts) &&
                           c->mt->opts[idx - M_N].type == DRIFT_MOPT_FILES
                       ? c->names[idx - M_N] + 2
                       : NULL;
    if (c->i_seed >= 0 && idx == c->i_seed)
        return push_opt(c, "seed", v);
    if (idx == c->i_out) {
        c->out_given = 1;
        return push_opt(c, "out", v);
    }
    if (idx == c->i_help)
        idx = -2;
    else if (idx >= M_N)
        return push_opt(c, c->names[idx - M_N] + 2, v);
    switch (idx) {
    case -2: c->help = 1; return 0;
    case -1:
    case M_MODEL:
        if (c->model) {
            fprintf(stderr, "drift %s: %s: the model is given already (%s)"
                            "\n",
                    c->cmd, v, c->model);
            return EXIT_USAGE;
        }
        c->model = v;
        return 0;
    case M_DATA:
        if (c->n_data == DRIFT_PLAN_MAX_DATA) {
            fprintf(stderr, "drift %s: --data %s: at most %d data files\n",
                    c->cmd, v, DRIFT_PLAN_MAX_DATA);
            return EXIT_USAGE;
        }
        c->data[c->n_data++] = v;
        return 0;
    case M_MODEL_SET: return push_opt(c, "model-set", v);
    case M_DATA_SET: return push_opt(c, "data-set", v);
    }
    return 0;
}

static int build_opts(method_cli *c)
{
    const drift_method *mt = c->mt;
    int tail = (int)(M_N + mt->n_opts);
    c->i_seed = mt->seed_help ? tail++ : -1;
    c->i_out = tail++;
    c->i_help = tail++;
    c->n_opts = (size_t)tail;
    c->opts = drift_calloc(c->n_opts, sizeof *c->opts);
    c->names = drift_calloc(mt->n_opts + 1, sizeof *c->names);
    if (!c->opts || !c->names)
        return -1;
    static char out_help[160];
    snprintf(out_help, sizeof out_help, "FILE  output (default %s)",
             mt->default_out ? mt->default_out : "stdout");
    c->opts[M_MODEL] = (cli_opt){"--model", 1,
                                 "NAME|PATH  a C model plugin", NULL};
    c->opts[M_MODEL_SET] = (cli_opt){"--model-set", 1,
                                     "K=V  set a model option (repeatable)",
                                     NULL};
    c->opts[M_DATA] = (cli_opt){"--data", 1,
                                "FILE  data: CSV rows or CmdStan JSON "
                                "(repeatable)",
                                NULL};
    c->opts[M_DATA_SET] = (cli_opt){"--data-set", 1,
                                    "NAME=V  set a data scalar (repeatable)",
                                    NULL};
    /* A method that draws nothing takes no seed. */
    if (c->i_seed >= 0)
        c->opts[c->i_seed] = (cli_opt){"--seed", 1, mt->seed_help, NULL};
    c->opts[c->i_out] =
        (cli_opt){"--out", 1, mt->out_help ? mt->out_help : out_help, NULL};
    c->opts[c->i_help] = (cli_opt){"--help", 0, "show this help", NULL};
    for (size_t k = 0; k < mt->n_opts; k++) {
        const drift_mopt *o = &mt->opts[k];
        size_t len = strlen(o->name) + 3;
        if (!(c->names[k] = drift_malloc(len)))
            return -1;
        snprintf(c->names[k], len, "--%s", o->name);
        c->opts[M_N + k] =
            (cli_opt){c->names[k],
                      o->type != DRIFT_MOPT_SET && o->type != DRIFT_MOPT_CLEAR,
                      o->help, NULL};
    }
    return 0;
}

static void cli_free(method_cli *c)
{
    for (size_t k = 0; c->names && k < c->mt->n_opts; k++)
        drift_free(c->names[k]);
    drift_free(c->names);
    drift_free(c->opts);
    free(c->spec_opts);
}

int cli_method(const char *name, int argc, char **argv)
{
    method_cli c;
    memset(&c, 0, sizeof c);
    c.cmd = name;
    if (!(c.mt = drift_method_find(name))) {
        fprintf(stderr, "drift %s: no such method\n", name);
        return EXIT_USAGE;
    }
    int status = 0;
    drift_plan *p = NULL;
    drift_err e = {{0}};
    if (build_opts(&c)) {
        fprintf(stderr, "drift %s: out of memory\n", name);
        status = EXIT_RUN_FAILED;
        goto done;
    }
    if ((status = cli_parse(name, c.opts, c.n_opts, argc, argv, on_opt,
                            &c)))
        goto done;
    if (c.help) {
        cli_usage(c.mt->synopsis, c.mt->about, c.opts, c.n_opts);
        goto done;
    }
    if (!c.out_given && c.mt->default_out &&
        (status = push_opt(&c, "out", c.mt->default_out)))
        goto done;
    drift_spec spec = {.method = c.mt->name,
                       .model = c.model,
                       .data = c.data,
                       .n_data = c.n_data,
                       .options = c.spec_opts,
                       .n_options = c.n_spec};
    int rc = drift_plan_parse(&spec, &p, &e);
    if (!rc) {
        p->to_stdout = !c.mt->default_out;
        rc = drift_plan_open(p, NULL, &e);
    }
    if (!rc)
        rc = drift_plan_run_method(p, &e);
    if (rc) {
        if (e.msg[0])
            fprintf(stderr, "drift %s: %s\n", name, e.msg);
        status = p && p->failed_run ? EXIT_RUN_FAILED : EXIT_USAGE;
    }
done:
    drift_plan_free(p);
    cli_free(&c);
    return status;
}

int cmd_optimize(int argc, char **argv)
{
    return cli_method("optimize", argc, argv);
}

int cmd_laplace(int argc, char **argv)
{
    return cli_method("laplace", argc, argv);
}

int cmd_log_prob(int argc, char **argv)
{
    return cli_method("log-prob", argc, argv);
}

int cmd_pathfinder(int argc, char **argv)
{
    return cli_method("pathfinder", argc, argv);
}

int cmd_generate(int argc, char **argv)
{
    return cli_method("generate", argc, argv);
}

int cmd_variational(int argc, char **argv)
{
    return cli_method("variational", argc, argv);
}
