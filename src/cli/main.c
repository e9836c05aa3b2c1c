/* main.c: the `drift` command: dispatches subcommands.  Not for any
 * subcommand's logic. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stop.h"
#include "base/util.h"
#include "cli.h"
#include "engine/run/plugin.h"

/* OpenBLAS starts its thread pool when it is loaded, before main: each
 * worker allocates a buffer (128 MiB), and under an address-space limit
 * (ulimit -v, common on clusters) a worker retries the failing allocation
 * for ever; the guard's fork, and the library's own exit, then wait on it
 * in OpenBLAS's handlers, and the run hangs with no word.  drift keeps
 * BLAS single-threaded anyway (the chains are the parallelism:
 * engine/run/run.c), so the pool is asked for no workers through the
 * variable OpenBLAS reads when it is loaded: set here, and the program
 * started again with it (once: it is then set), before anything else is
 * done.  A value the user set is kept; where the program cannot be
 * started again (no /proc), it goes on as it is. */
static void blas_single_threaded(char **argv)
{
    if (getenv("OPENBLAS_NUM_THREADS"))
        return;
    if (setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        execv("/proc/self/exe", argv);
}

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"sample", cmd_sample, "run a sampler on a model and data set"},
    {"samplers", cmd_samplers,
     "list the sampler plugins found, with their hyperparameters"},
    {"models", cmd_models, "list the C model plugins found"},
    {"data", cmd_data,
     "convert CSV/LIBSVM to a binary row store; describe a row store"},
    {"summary", cmd_summary,
     "summarise draws files: mean, MCSE, sd, quantiles, ESS, R-hat"},
    {"check", cmd_check,
     "parse and type-check a .drift model (and its data, if given)"},
    {"translate", cmd_translate,
     "write a Stan program as the equivalent .drift program"},
    {"diagnose", cmd_diagnose,
     "compare a model's gradients with finite differences"},
    {"optimize", cmd_optimize,
     "the posterior mode by L-BFGS (CmdStan's optimize)"},
    {"laplace", cmd_laplace,
     "draws from the Gaussian approximation at the mode (CmdStan's laplace)"},
    {"pathfinder", cmd_pathfinder,
     "variational draws by Pathfinder (CmdStan's pathfinder)"},
    {"variational", cmd_variational,
     "ADVI over minibatches (CmdStan's variational)"},
    {"generate", cmd_generate,
     "the generated quantities at every draw of existing draws files"},
    {"log-prob", cmd_log_prob,
     "log density and gradient at given draws or a point"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f,
            "usage: drift COMMAND [options]   (drift COMMAND --help for "
            "more)\n\n"
            "Bayesian inference with stochastic-gradient and "
            "piecewise-deterministic samplers.\n\ncommands:\n");
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(f, "  %-10s %s\n", commands[k].name, commands[k].summary);
    char dir[4096];
    drift_registry_install_dir(dir, sizeof dir);
    fprintf(f, "\nenvironment:\n"
               "  DRIFT_PLUGIN_PATH  colon-separated directories searched "
               "for plugins after the\n"
               "                     install's plugin directory (%s)\n"
               "\nSee also: man drift; drift COMMAND --help.\n",
            dir);
}

int main(int argc, char **argv)
{
    /* A write past the file size limit (ulimit -f) fails with EFBIG and
     * is reported like a full disk, instead of killing the process with
     * SIGXFSZ and a core. */
    signal(SIGXFSZ, SIG_IGN);
    /* The stop signals the caller started drift with ignored (nohup's
     * SIGHUP, a background job's SIGINT) stay ignored (base/stop.h). */
    drift_stop_note_start();
    blas_single_threaded(argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") ||
        !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("drift %s\nLicence: MIT (the LICENSE file, installed with "
               "the documentation)\n",
               PACKAGE_VERSION);
        return 0;
    }
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (!strcmp(commands[k].name, name))
            return commands[k].run(argc - 2, argv + 2);
    const char *names[N_COMMANDS];
    for (size_t k = 0; k < N_COMMANDS; k++)
        names[k] = commands[k].name;
    const char *near = drift_closest(name, names, N_COMMANDS);
    fprintf(stderr, "drift: unknown command '%s'", name);
    if (near)
        fprintf(stderr, " (did you mean '%s'?)", near);
    fprintf(stderr, "; see 'drift --help'\n");
    return EXIT_USAGE;
}
