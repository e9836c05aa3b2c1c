/* methods.c: the model and data options of the method commands, and
 * their model opened over its data (see methods.h). */
#include "config.h"

#include <stdio.h>

#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "methods.h"

int cli_problem_opt(cli_problem_args *p, const char *cmd, int idx,
                    const char *v)
{
    switch (idx) {
    case -1:
        if (p->model || !drift_lang_is_model_file(v)) {
            fprintf(stderr,
                    "drift %s: unexpected argument '%s' (a model is a "
                    ".drift or .stan file or --model NAME)\n",
                    cmd, v);
            return EXIT_USAGE;
        }
        p->model = v;
        return 0;
    case CLI_PB_MODEL: p->model = v; return 0;
    case CLI_PB_MODEL_SET:
    case CLI_PB_DATA_SET: {
        char **arr = idx == CLI_PB_MODEL_SET ? p->model_set : p->data_set;
        size_t *n = idx == CLI_PB_MODEL_SET ? &p->n_model_set
                                            : &p->n_data_set;
        if (*n >= 64) {
            fprintf(stderr, "drift %s: %s %s: given too many times\n", cmd,
                    idx == CLI_PB_MODEL_SET ? "--model-set" : "--data-set",
                    v);
            return EXIT_USAGE;
        }
        arr[(*n)++] = (char *)v;
        return 0;
    }
    case CLI_PB_DATA:
        if (p->n_data + 1 >= sizeof p->data / sizeof p->data[0]) {
            fprintf(stderr, "drift %s: --data %s: too many data files\n", cmd,
                    v);
            return EXIT_USAGE;
        }
        p->data[p->n_data++] = v;
        return 0;
    }
    return 1;
}

size_t cli_problem_inputs(const cli_problem_args *p, const char **inputs)
{
    size_t n = 0;
    inputs[n++] = p->model;
    for (size_t k = 0; k < p->n_data; k++)
        inputs[n++] = p->data[k];
    return n;
}

int cli_with_problem(const char *cmd, cli_problem_args *p,
                     int (*work)(void *user, const drift_model *m),
                     void *user)
{
    if (!p->model) {
        fprintf(stderr, "drift %s: no model given: give a model file "
                        "(model.drift) or use --model NAME\n",
                cmd);
        return EXIT_USAGE;
    }
    p->data[p->n_data] = NULL;
    drift_registry *reg = drift_registry_new();
    if (!reg) {
        fprintf(stderr, "drift %s: out of memory\n", cmd);
        return EXIT_RUN_FAILED;
    }
    drift_problem prob;
    drift_problem_spec spec = {.model = p->model,
                               .data = p->data,
                               .model_set = p->model_set,
                               .n_model_set = p->n_model_set,
                               .data_set = p->data_set,
                               .n_data_set = p->n_data_set,
                               .diag = stderr,
                               .share = NULL};
    drift_err e = {{0}};
    int rc;
    if (drift_problem_open(&prob, reg, &spec, &e)) {
        fprintf(stderr, "drift %s: %s\n", cmd, e.msg);
        rc = EXIT_USAGE;
    } else {
        rc = work(user, &prob.model);
    }
    drift_problem_close(&prob);
    drift_registry_free(reg);
    return rc;
}
