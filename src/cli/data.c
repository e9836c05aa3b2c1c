/* data.c: `drift data convert` and `drift data info`: turning CSV and
 * LIBSVM files into binary row stores (streaming, atomic) and describing a
 * row store's header.  Not for reading data for runs (engine table.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rowstore.h"
#include "util.h"

enum { O_COLUMNS, O_HELP };

static const cli_opt convert_opts[] = {
    [O_COLUMNS] = {"--columns", 1,
                   "A,B,...  keep only these CSV columns, in this order"},
    [O_HELP] = {"--help", 0, "show this help"},
};

typedef struct convert_args {
    const char *pos[3];
    int n_pos, help;
    const char *columns;
} convert_args;

static int on_convert(void *user, int idx, const char *v)
{
    convert_args *a = user;
    switch (idx) {
    case -2:
    case O_HELP: a->help = 1; return 0;
    case -1:
        if (a->n_pos == 2) {
            fprintf(stderr, "drift data convert: unexpected argument '%s' "
                            "(expected IN OUT)\n",
                    v);
            return EXIT_USAGE;
        }
        a->pos[a->n_pos++] = v;
        return 0;
    case O_COLUMNS: a->columns = v; return 0;
    }
    return 0;
}

static int cmd_convert(int argc, char **argv)
{
    convert_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("data convert", convert_opts, 2, argc, argv,
                       on_convert, &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift data convert IN OUT [--columns A,B,...]",
                  "Converts a CSV or LIBSVM file (.libsvm, .svm, .svmlight) "
                  "into drift's binary row\nstore, which runs memory-map "
                  "instead of loading.  Reads the input as a stream\n(memory "
                  "use does not grow with its size); writes OUT under a "
                  "temporary name\nand renames it when complete.",
                  convert_opts, 2);
        return 0;
    }
    if (a.n_pos != 2) {
        fprintf(stderr, "drift data convert: expected IN and OUT files; see "
                        "'drift data convert --help'\n");
        return EXIT_USAGE;
    }
    char *buf = NULL;
    const char **keep = NULL;
    if (a.columns) {
        buf = strdup(a.columns);
        size_t n = 1;
        for (const char *p = a.columns; *p; p++)
            n += *p == ',';
        keep = calloc(n + 1, sizeof *keep);
        if (!buf || !keep) {
            free(buf);
            free(keep);
            return EXIT_RUN_FAILED;
        }
        size_t k = 0;
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
            keep[k++] = t;
        if (k == 0) {
            fprintf(stderr, "drift data convert: --columns '%s' names no "
                            "column\n",
                    a.columns);
            free(buf);
            free(keep);
            return EXIT_USAGE;
        }
    }
    drift_err e;
    uint64_t rows = 0;
    double t0 = drift_now();
    rc = drift_rowstore_convert(a.pos[0], a.pos[1], keep, &rows, &e);
    free(buf);
    free(keep);
    if (rc) {
        fprintf(stderr, "drift data convert: %s\n", e.msg);
        return rc == DRIFT_EIO || rc == DRIFT_ENOMEM ? EXIT_RUN_FAILED
                                                     : EXIT_USAGE;
    }
    fprintf(stderr, "drift: %s -> %s: %llu rows in %.3g s\n", a.pos[0],
            a.pos[1], (unsigned long long)rows, drift_now() - t0);
    return 0;
}

static const cli_opt info_opts[] = {{"--help", 0, "show this help"}};

static int on_info(void *user, int idx, const char *v)
{
    convert_args *a = user;
    if (idx == -1) {
        if (a->n_pos == 1) {
            fprintf(stderr, "drift data info: unexpected argument '%s'\n", v);
            return EXIT_USAGE;
        }
        a->pos[a->n_pos++] = v;
    } else {
        a->help = 1;
    }
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    convert_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("data info", info_opts, 1, argc, argv, on_info, &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift data info FILE",
                  "Prints a row store's header: format version, byte order, "
                  "rows, columns and\ntheir types, sparse variables, sizes "
                  "and the header checksum (verified).",
                  info_opts, 1);
        return 0;
    }
    if (a.n_pos != 1) {
        fprintf(stderr, "drift data info: expected one FILE\n");
        return EXIT_USAGE;
    }
    drift_err e;
    if (drift_rowstore_info(a.pos[0], stdout, &e)) {
        fprintf(stderr, "drift data info: %s\n", e.msg);
        return EXIT_USAGE;
    }
    return 0;
}

int cmd_data(int argc, char **argv)
{
    if (argc >= 1 && !strcmp(argv[0], "convert"))
        return cmd_convert(argc - 1, argv + 1);
    if (argc >= 1 && !strcmp(argv[0], "info"))
        return cmd_info(argc - 1, argv + 1);
    FILE *f = argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))
                  ? stdout
                  : stderr;
    fprintf(f, "usage: drift data convert IN OUT [--columns A,B,...]\n"
               "       drift data info FILE\n\n"
               "convert  CSV or LIBSVM to a binary row store (streaming, "
               "atomic)\n"
               "info     print a row store's header\n");
    if (f == stdout)
        return 0;
    if (argc >= 1)
        fprintf(stderr, "drift data: unknown subcommand '%s'\n", argv[0]);
    return EXIT_USAGE;
}
