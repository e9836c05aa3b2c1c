/* data.c: `drift data convert` and `drift data info`: turning CSV and
 * LIBSVM files into binary row stores (streaming, atomic) and describing a
 * row store's header.  Not for reading data for runs (engine table.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mapguard.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "engine/data/rowstore.h"
#include "parser/ast.h"
#include "parser/diag.h"
#include "parser/parse.h"

enum { O_COLUMNS, O_SCHEMA, O_HELP };

static const cli_opt convert_opts[] = {
    [O_COLUMNS] = {"--columns", 1,
                   "A,B,...  keep only these CSV columns, in this order"},
    [O_SCHEMA] = {"--rows-schema", 1,
                  "MODEL.drift  keep only the columns of the model's rows "
                  "block, checking its int variables"},
    [O_HELP] = {"--help", 0, "show this help"},
};

typedef struct convert_args {
    const char *pos[3];
    int n_pos, help;
    const char *columns, *schema;
} convert_args;

/* The rows variables of a model file (parsed only: sizes bind from the
 * data when it is sampled).  Syntax errors are reported with caret on
 * standard error.  Returns the count, or -1. */
static long rows_schema(const char *path, drift_schema_var **out)
{
    drift_err e = {{0}};
    drift_source *src;
    *out = NULL;
    if (drift_source_read(path, &src, &e)) {
        fprintf(stderr, "drift data convert: --rows-schema %s\n", e.msg);
        return -1;
    }
    drift_diag d;
    drift_diag_init(&d, stderr);
    drift_program *p = drift_parse(src, &d);
    long n = -1;
    if (p && d.n_errors == 0) {
        n = 0;
        for (drift_block *b = p->blocks; b; b = b->next)
            if (b->kind == DRIFT_BLOCK_ROWS)
                for (drift_decl *dc = b->decls; dc; dc = dc->next)
                    n++;
        drift_schema_var *v = calloc(n ? (size_t)n : 1, sizeof *v);
        if (!v) {
            n = -1;
        } else {
            long k = 0;
            for (drift_block *b = p->blocks; b; b = b->next)
                if (b->kind == DRIFT_BLOCK_ROWS)
                    for (drift_decl *dc = b->decls; dc; dc = dc->next) {
                        v[k].name = strdup(dc->name);
                        v[k].is_int = dc->type && dc->type->kind == DRIFT_T_INT;
                        if (!v[k++].name)
                            n = -1;
                    }
            *out = v;
        }
        if (n == 0)
            fprintf(stderr, "drift data convert: --rows-schema %s: the model "
                            "has no rows block, so no column would be kept\n",
                    path);
    } else if (d.n_errors) {
        fprintf(stderr, "drift data convert: --rows-schema %s: %zu error%s, "
                        "reported above\n",
                path, d.n_errors, d.n_errors == 1 ? "" : "s");
    }
    drift_program_free(p);
    drift_source_free(src);
    return n > 0 ? n : -1;
}

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
    case O_SCHEMA: a->schema = v; return 0;
    }
    return 0;
}

static int cmd_convert(int argc, char **argv)
{
    convert_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("data convert", convert_opts, 3, argc, argv,
                       on_convert, &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift data convert IN OUT [--columns A,B,... | "
                  "--rows-schema MODEL.drift]",
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
    if (a.columns && a.schema) {
        fprintf(stderr, "drift data convert: give --columns or "
                        "--rows-schema, not both\n");
        return EXIT_USAGE;
    }
    /* OUT may be written and is none of the inputs: checked before any
     * work (the converter checks IN again). */
    const char *inputs[2] = {a.pos[0], a.schema};
    drift_err ce;
    if (drift_writer_check(a.pos[1], inputs, 2, &ce)) {
        fprintf(stderr, "drift data convert: %s\n", ce.msg);
        return EXIT_USAGE;
    }
    char *buf = NULL;
    const char **keep = NULL;
    drift_schema_var *vars = NULL;
    long n_vars = 0;
    if (a.schema && (n_vars = rows_schema(a.schema, &vars)) < 0)
        return EXIT_USAGE;
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
    /* Signals as in drift sample: the first stops the conversion at the
     * next row (nothing is written under OUT), a second ends the process
     * at once; neither leaves a temporary file. */
    drift_stop_catch();
    if (vars)
        rc = drift_rowstore_convert_schema(a.pos[0], a.pos[1], vars,
                                           (size_t)n_vars, &rows, &e);
    else
        rc = drift_rowstore_convert(a.pos[0], a.pos[1], keep, &rows, &e);
    drift_stop_uncatch();
    free(buf);
    free(keep);
    for (long k = 0; k < n_vars; k++)
        free((char *)vars[k].name);
    free(vars);
    if (rc == DRIFT_ESTOP) {
        fprintf(stderr, "drift: %s; %s not written\n", e.msg, a.pos[1]);
        return 128 + drift_stop_requested();
    }
    if (rc) {
        fprintf(stderr, "drift data convert: %s\n", e.msg);
        return rc == DRIFT_EIO || rc == DRIFT_ENOMEM || drift_mapguard_any()
                   ? EXIT_RUN_FAILED
                   : EXIT_USAGE;
    }
    fprintf(stderr, "drift: %s -> %s: %llu rows in %.3g s\n", a.pos[0],
            a.pos[1], (unsigned long long)rows, drift_now() - t0);
    return 0;
}

static const cli_opt info_opts[] = {{"--help", 0, "show this help", NULL}};

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
    fprintf(f, "usage: drift data convert IN OUT [--columns A,B,... | "
               "--rows-schema MODEL.drift]\n"
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
