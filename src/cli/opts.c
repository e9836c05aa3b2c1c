/* opts.c: the option parser shared by drift's subcommands: --name value,
 * --name=value, flags, positionals, and "did you mean" for typos.  Not for
 * validating values (each subcommand does, naming the option). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "cli.h"

/* A value or argument holding a control character (a line end, a
 * tab...): refused, as drift writes names and values into the '#' lines
 * of its output files and into a checkpoint's manifest, where one would
 * end the line and break the file.  0, or EXIT_USAGE with the message. */
static int control_char(const char *cmd, const char *opt, const char *v)
{
    const unsigned char *p = (const unsigned char *)v;
    for (; *p && *p >= 0x20 && *p != 0x7f; p++)
        ;
    if (!*p)
        return 0;
    char shown[200];
    size_t n = 0;
    for (const unsigned char *q = (const unsigned char *)v;
         *q && n + 5 < sizeof shown; q++)
        n += (size_t)(*q < 0x20 || *q == 0x7f
                          ? snprintf(shown + n, sizeof shown - n, "\\x%02x",
                                     *q)
                          : snprintf(shown + n, sizeof shown - n, "%c", *q));
    fprintf(stderr,
            "drift %s: %s '%s' holds %s (byte %zu); drift writes names and "
            "values into its output files' '#' header lines, which it would "
            "break: rename the file, or give it through a link with a plain "
            "name\n",
            cmd, opt, shown,
            *p == '\n'   ? "a line end"
            : *p == '\r' ? "a carriage return"
            : *p == '\t' ? "a tab"
                         : "a control character",
            (size_t)(p - (const unsigned char *)v) + 1);
    return EXIT_USAGE;
}

/* CmdStan's and CmdStanPy's names for what drift names otherwise: a user
 * coming from Stan types these first, and "did you mean" by spelling
 * cannot find --iter from --num-samples. */
static const struct {
    const char *name, *hint;
} stan_names[] = {
    {"--num-samples", "--iter N (draws after warmup)"},
    {"--num_samples", "--iter N (draws after warmup)"},
    {"--iter-sampling", "--iter N (draws after warmup)"},
    {"--iter_sampling", "--iter N (draws after warmup)"},
    {"--num-warmup", "--warmup N"},
    {"--num_warmup", "--warmup N"},
    {"--iter-warmup", "--warmup N"},
    {"--iter_warmup", "--warmup N"},
    {"--num-chains", "--chains K"},
    {"--num_chains", "--chains K"},
    {"--adapt-delta", "--set delta=D"},
    {"--adapt_delta", "--set delta=D"},
    {"--max-treedepth", "--set max_depth=N"},
    {"--max_treedepth", "--set max_depth=N"},
    {"--output-file", "--out FILE"},
    {"--output_file", "--out FILE"},
};

int cli_parse(const char *cmd, const cli_opt *opts, size_t n_opts, int argc,
              char **argv, cli_cb cb, void *user)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        long alias = -1;
        for (size_t k = 0; k < n_opts && arg[0] == '-' && arg[1] != '-'; k++)
            if (opts[k].alias && !strcmp(opts[k].alias, arg))
                alias = (long)k;
        if (alias >= 0) {
            const char *value = NULL;
            if (opts[alias].takes_value) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "drift %s: option %s needs a value\n",
                            cmd, arg);
                    return EXIT_USAGE;
                }
                value = argv[++i];
            }
            if (value && control_char(cmd, arg, value))
                return EXIT_USAGE;
            int rc = cb(user, (int)alias, value);
            if (rc)
                return rc;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-' &&
                strcmp(arg, "-h") != 0) {
                fprintf(stderr,
                        "drift %s: unknown option '%s' (options are long, "
                        "e.g. --seed 1; see 'drift %s --help')\n",
                        cmd, arg, cmd);
                return EXIT_USAGE;
            }
            if (control_char(cmd, "the argument", arg))
                return EXIT_USAGE;
            int rc = cb(user, strcmp(arg, "-h") == 0 ? -2 : -1, arg);
            if (rc)
                return rc;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        long found = -1;
        for (size_t k = 0; k < n_opts; k++)
            if (strlen(opts[k].name) == len &&
                strncmp(opts[k].name, arg, len) == 0)
                found = (long)k;
        if (found < 0) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63),
                     arg);
            const char *names[64];
            size_t m = n_opts < 64 ? n_opts : 64;
            for (size_t k = 0; k < m; k++)
                names[k] = opts[k].name;
            const char *near = drift_closest(name, names, m);
            const char *stan = NULL;
            for (size_t k = 0; k < sizeof stan_names / sizeof stan_names[0];
                 k++)
                if (!strcmp(name, stan_names[k].name))
                    stan = stan_names[k].hint;
            fprintf(stderr, "drift %s: unknown option '%s'", cmd, name);
            if (stan)
                fprintf(stderr, " (CmdStan's name; drift's is %s)", stan);
            else if (near)
                fprintf(stderr, " (did you mean '%s'?)", near);
            fprintf(stderr, "; see 'drift %s --help'\n", cmd);
            return EXIT_USAGE;
        }
        const cli_opt *o = &opts[found];
        const char *value = NULL;
        if (o->takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else {
                fprintf(stderr, "drift %s: option %s needs a value\n", cmd,
                        o->name);
                return EXIT_USAGE;
            }
        } else if (eq) {
            fprintf(stderr, "drift %s: option %s takes no value\n", cmd,
                    o->name);
            return EXIT_USAGE;
        }
        if (value && control_char(cmd, o->name, value))
            return EXIT_USAGE;
        int rc = cb(user, (int)found, value);
        if (rc)
            return rc;
    }
    return 0;
}

void cli_usage(const char *synopsis, const char *about, const cli_opt *opts,
               size_t n_opts)
{
    printf("usage: %s\n\n%s\n", synopsis, about);
    if (n_opts)
        printf("\noptions:\n");
    for (size_t k = 0; k < n_opts; k++) {
        const char *h = opts[k].help;
        /* help is "ARG  text" for options with a value, else "text". */
        if (opts[k].takes_value) {
            const char *sp = strstr(h, "  ");
            int arglen = sp ? (int)(sp - h) : 0;
            char left[64];
            snprintf(left, sizeof left, "%s %.*s", opts[k].name, arglen, h);
            printf("  %-26s %s\n", left, sp ? sp + 2 : h);
        } else {
            printf("  %-26s %s\n", opts[k].name, h);
        }
    }
}
