/* check.c: `drift check MODEL.drift [--data FILE]...`: parses and
 * type-checks a model, prints its parameters with shapes and constraints
 * and the graph's size; with data it also binds and checks them (schema,
 * finite numbers, integers, supports of the distributions that use them,
 * index ranges).  Not for running anything. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mapguard.h"
#include "cli.h"
#include "engine/lang/lang_model.h"

enum { C_DATA, C_DATA_SET, C_HELP };

static const cli_opt check_opts[] = {
    [C_DATA] = {"--data", 1,
                "FILE  data: CSV rows or CmdStan JSON (repeatable)"},
    [C_DATA_SET] = {"--data-set", 1, "NAME=V  set a data scalar (repeatable)"},
    [C_HELP] = {"--help", 0, "show this help"},
};
#define N_CHECK_OPTS (sizeof check_opts / sizeof check_opts[0])

typedef struct check_args {
    const char *model;
    const char *data[16];
    size_t n_data;
    char *sets[64];
    size_t n_sets;
    int help;
} check_args;

static int on_opt(void *user, int idx, const char *v)
{
    check_args *a = user;
    switch (idx) {
    case -2:
    case C_HELP: a->help = 1; return 0;
    case -1:
        if (a->model) {
            fprintf(stderr, "drift check: unexpected argument '%s' (one "
                            "model file; data are given with --data)\n",
                    v);
            return EXIT_USAGE;
        }
        a->model = v;
        return 0;
    case C_DATA:
        if (a->n_data + 1 >= sizeof a->data / sizeof a->data[0]) {
            fprintf(stderr, "drift check: too many --data files\n");
            return EXIT_USAGE;
        }
        a->data[a->n_data++] = v;
        return 0;
    case C_DATA_SET:
        if (a->n_sets >= sizeof a->sets / sizeof a->sets[0]) {
            fprintf(stderr, "drift check: too many --data-set values\n");
            return EXIT_USAGE;
        }
        a->sets[a->n_sets++] = (char *)v;
        return 0;
    }
    return 0;
}

int cmd_check(int argc, char **argv)
{
    check_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("check", check_opts, N_CHECK_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift check MODEL.drift [--data FILE]... [--data-set "
                  "NAME=V]...",
                  "Parses and type-checks a model written in drift's "
                  "language and prints its\nparameters, shapes, constraints "
                  "and graph size.  With data, also checks that\nthe data "
                  "match the rows and data blocks and the distributions "
                  "that use them.",
                  check_opts, N_CHECK_OPTS);
        return 0;
    }
    if (!a.model) {
        fprintf(stderr, "drift check: no model given: drift check "
                        "MODEL.drift [--data FILE]\n");
        return EXIT_USAGE;
    }
    if (!drift_lang_is_model_file(a.model)) {
        fprintf(stderr, "drift check: '%s' is not a model file (its name "
                        "must end in .drift, or .stan for a Stan program)\n",
                a.model);
        return EXIT_USAGE;
    }
    a.data[a.n_data] = NULL;
    drift_lang_spec spec = {.path = a.model,
                            .data = a.data,
                            .data_set = a.sets,
                            .n_data_set = a.n_sets,
                            .diag = stderr,
                            .describe_only = 1,
                            .check_every_row = 1};
    drift_model m;
    drift_err e = {{0}};
    if (drift_lang_open(&spec, &m, &e)) {
        fprintf(stderr, "drift check: %s\n", e.msg);
        /* A data file that changed while it was read: a failed check, not
         * bad input. */
        return drift_mapguard_any() ? EXIT_RUN_FAILED : EXIT_USAGE;
    }
    /* Every row was read; a map that lost pages meanwhile read zeros, and
     * a file rewritten in place is not the file checked. */
    if (drift_mapguard_check(1, &e)) {
        fprintf(stderr, "drift check: %s\n", e.msg);
        m.free(m.self);
        return EXIT_RUN_FAILED;
    }
    drift_lang_describe(&m, stdout);
    if (a.n_data || a.n_sets)
        printf("data: the data match the model (schema, values, supports "
               "and indices checked)\n");
    m.free(m.self);
    return 0;
}
