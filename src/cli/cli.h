/* cli.h: the `drift` command's subcommands and the small option parser
 * they share.  Exit status: 0 success, 1 a run that failed, 2 bad input
 * (options, model, data, plugins), 130 stopped by a signal. */
#ifndef DRIFT_CLI_H
#define DRIFT_CLI_H

#include <stddef.h>
#include <stdio.h>

enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2, EXIT_SIGNAL = 130 };

/* One option a subcommand accepts. */
typedef struct cli_opt {
    const char *name;     /* "--batch" */
    int takes_value;
    const char *help;     /* "N  minibatch size (default: sampler's)" */
    const char *alias;    /* a short form ("-p"), or NULL */
} cli_opt;

/* Walks argv: for each option (or its short alias, "-p VALUE") calls back
 * with its index in opts and its value (NULL for flags); positional
 * arguments get index -1.  Unknown
 * options and missing values are reported (with the closest option) and
 * make it return EXIT_USAGE; else 0.  The callback returns 0 to go on or
 * an exit status to stop. */
typedef int (*cli_cb)(void *user, int idx, const char *value);
int cli_parse(const char *cmd, const cli_opt *opts, size_t n_opts, int argc,
              char **argv, cli_cb cb, void *user);

/* Prints usage text: a synopsis line, a paragraph, then the options. */
void cli_usage(const char *synopsis, const char *about, const cli_opt *opts,
               size_t n_opts);

int cmd_sample(int argc, char **argv);
int cmd_samplers(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_data(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_check(int argc, char **argv);     /* check.c */
int cmd_translate(int argc, char **argv); /* translate.c */

struct drift_stancsv;

/* `drift summary --ksd` (ksd.c): the kernel Stein discrepancy of the kept
 * draws of C chains of n draws each (files of one model). */
typedef struct cli_ksd_opts {
    const char *model;          /* --model (NULL: the header's) */
    const char *const *data;    /* --data files (n_data 0: the header's) */
    size_t n_data;
    size_t max_draws;           /* --ksd-draws (0: 1000) */
} cli_ksd_opts;

typedef struct cli_ksd_out {
    double ksd;                 /* the discrepancy of the draws used */
    double *part;               /* per file column: sqrt of its
                                   coordinate's part of KSD^2, KSD itself
                                   for lp__, NaN elsewhere (malloc'd; the
                                   caller frees) */
    size_t used, total, d;      /* draws used of all kept; coordinates */
    int recomputed;             /* scores recomputed from the model */
    double grads;               /* per-datum gradients that took */
    double t_scores, t_kernel;  /* seconds for the scores, the kernel sum */
    char how[4300];             /* where the scores came from */
} cli_ksd_out;

/* Returns 0, or an exit status with the message printed. */
int cli_ksd(struct drift_stancsv *const *draws, size_t C, size_t n,
            const cli_ksd_opts *o, cli_ksd_out *out);
int cmd_diagnose(int argc, char **argv);  /* diagnose.c */
/* The methods that are kinds of run plan (method.c): optimize, laplace,
 * log-prob, pathfinder, generate, variational. */
int cli_method(const char *name, int argc, char **argv);
int cmd_log_prob(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_laplace(int argc, char **argv);
int cmd_pathfinder(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_variational(int argc, char **argv);


#endif
