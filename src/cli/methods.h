/* methods.h: what the method commands (optimize, laplace, log-prob,
 * generate) share: the model and data options (--model, --model-set,
 * --data, --data-set, a model file as the first argument), and opening
 * the model over its data around a command's work.  Their outputs:
 * cli_out_* (cli.h).  Not for drift sample, whose options are the run
 * plan's (engine/run/plan.h). */
#ifndef DRIFT_CLI_METHODS_H
#define DRIFT_CLI_METHODS_H

#include <drift/model.h>

#include "cli.h"

typedef struct cli_problem_args {
    const char *model;
    const char *data[16];       /* NULL-terminated when opened */
    size_t n_data;
    char *model_set[64], *data_set[64];
    size_t n_model_set, n_data_set;
} cli_problem_args;

/* The four options, first in a command's table (its enum starts with
 * CLI_PB_MODEL ... and its own options from CLI_PB_N). */
enum { CLI_PB_MODEL, CLI_PB_MODEL_SET, CLI_PB_DATA, CLI_PB_DATA_SET,
       CLI_PB_N };
#define CLI_PROBLEM_OPTS                                                   \
    {"--model", 1, "NAME|PATH  a C model plugin", NULL},                   \
    {"--model-set", 1, "K=V  set a model option (repeatable)", NULL},      \
    {"--data", 1, "FILE  data: CSV rows or CmdStan JSON (repeatable)",     \
     NULL},                                                                \
    {"--data-set", 1, "NAME=V  set a data scalar (repeatable)", NULL}

/* Takes option idx (CLI_PB_*, or -1: an argument, taken as the model
 * file) of command cmd: 0 when taken, EXIT_USAGE (said) when its value
 * is refused, 1 when idx is none of these. */
int cli_problem_opt(cli_problem_args *p, const char *cmd, int idx,
                    const char *v);

/* The model and data files into inputs (at least 17 entries), for
 * cli_out_check: their count. */
size_t cli_problem_inputs(const cli_problem_args *p, const char **inputs);

/* Opens p's model over its data (refused without a model, or when it
 * does not open: said, EXIT_USAGE), calls work(user, model) and closes
 * it: work's status. */
int cli_with_problem(const char *cmd, cli_problem_args *p,
                     int (*work)(void *user, const drift_model *m),
                     void *user);

#endif
