/* translate.c: `drift translate MODEL.stan [--data FILE]... [--out
 * FILE]`: writes the drift program a Stan program is lowered into (its
 * data split into rows and data, its loops and functions inlined), as a
 * .drift file to go on from in drift's own language.  The text written is
 * parsed and checked again before it is written out.  Not for running the
 * model. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/writer.h"
#include "cli.h"
#include "engine/lang/lang_model.h"
#include "engine/lang/langdata.h"
#include "parser/front.h"
#include "parser/parse.h"
#include "parser/print.h"
#include "parser/stan.h"

enum { T_DATA, T_OUT, T_HELP };

static const cli_opt translate_opts[] = {
    [T_DATA] = {"--data", 1,
                "FILE  open the program over these data first "
                "(repeatable)"},
    [T_OUT] = {"--out", 1, "FILE  write the .drift program here "
                           "(default: standard output)"},
    [T_HELP] = {"--help", 0, "show this help"},
};
#define N_TRANSLATE_OPTS (sizeof translate_opts / sizeof translate_opts[0])

typedef struct translate_args {
    const char *model;
    const char *data[16];
    size_t n_data;
    const char *out;
    int help;
} translate_args;

static int on_opt(void *user, int idx, const char *v)
{
    translate_args *a = user;
    switch (idx) {
    case -2:
    case T_HELP: a->help = 1; return 0;
    case -1:
        if (a->model) {
            fprintf(stderr, "drift translate: unexpected argument '%s' (one "
                            "Stan program)\n",
                    v);
            return EXIT_USAGE;
        }
        a->model = v;
        return 0;
    case T_DATA:
        if (a->n_data + 1 >= sizeof a->data / sizeof a->data[0]) {
            fprintf(stderr, "drift translate: too many --data files\n");
            return EXIT_USAGE;
        }
        a->data[a->n_data++] = v;
        return 0;
    case T_OUT: a->out = v; return 0;
    }
    return 0;
}

/* The program as text (malloc'd), with a heading comment; NULL with the
 * message printed when it has no spelling in drift's language. */
static char *render(const drift_program *p, const char *model, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) {
        fprintf(stderr, "drift translate: out of memory\n");
        return NULL;
    }
    fprintf(f, "// %s, translated from the Stan program by drift translate\n",
            model);
    if (p->origin && *p->origin) {
        /* The decomposition, one comment line per line of it. */
        fputs("// ", f);
        for (const char *c = p->origin; *c; c++) {
            fputc(*c, f);
            if (*c == '\n' && c[1])
                fputs("// ", f);
        }
        if (p->origin[strlen(p->origin) - 1] != '\n')
            fputc('\n', f);
    }
    char why[512];
    int rc = drift_program_print(p, f, why, sizeof why);
    if (fclose(f) || rc) {
        if (rc)
            fprintf(stderr, "drift translate: %s:%s\n", model, why);
        else
            fprintf(stderr, "drift translate: out of memory\n");
        free(text);
        return NULL;
    }
    return text;
}

/* The text parses, resolves and type-checks as a .drift program. */
static int reparse(const char *text, size_t len)
{
    drift_source *src = NULL;
    drift_err e = {{0}};
    if (drift_source_new("translation.drift", text, len, &src, &e)) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        return -1;
    }
    drift_diag diag;
    drift_diag_init(&diag, stderr);
    drift_program *p = drift_parse(src, &diag);
    int ok = p && !diag.n_errors && !drift_resolve(p, &diag) &&
             !drift_typecheck(p, &diag);
    if (p)
        drift_program_free(p);
    drift_source_free(src);
    return ok ? 0 : -1;
}

int cmd_translate(int argc, char **argv)
{
    translate_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("translate", translate_opts, N_TRANSLATE_OPTS, argc,
                       argv, on_opt, &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift translate MODEL.stan [--data FILE]... [--out "
                  "FILE.drift]",
                  "Writes the drift program a Stan program runs as: its "
                  "data split into rows\nand data, its loops, functions and "
                  "transformed blocks lowered into drift's\nblocks.  The "
                  "result reads back to the same log density and gradient.",
                  translate_opts, N_TRANSLATE_OPTS);
        return 0;
    }
    if (!a.model) {
        fprintf(stderr, "drift translate: no Stan program given: drift "
                        "translate MODEL.stan [--out FILE.drift]\n");
        return EXIT_USAGE;
    }
    if (!drift_stan_is_file(a.model)) {
        fprintf(stderr, "drift translate: '%s' is not a Stan program (its "
                        "name must end in .stan)\n",
                a.model);
        return EXIT_USAGE;
    }
    drift_err e = {{0}};
    const char *inputs[17];
    size_t n_inputs = 0;
    inputs[n_inputs++] = a.model;
    for (size_t k = 0; k < a.n_data; k++)
        inputs[n_inputs++] = a.data[k];
    if (a.out && drift_writer_check(a.out, inputs, n_inputs, &e)) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        return EXIT_USAGE;
    }
    if (a.n_data) {
        a.data[a.n_data] = NULL;
        drift_lang_spec spec = {.path = a.model, .data = a.data,
                                .diag = stderr};
        drift_model m;
        if (drift_lang_open(&spec, &m, &e)) {
            fprintf(stderr, "drift translate: %s\n", e.msg);
            return EXIT_USAGE;
        }
        m.free(m.self);
    }
    drift_source *src = NULL;
    drift_diag diag;
    drift_diag_init(&diag, stderr);
    /* the data's ints, with which loops over data sizes unroll */
    drift_langdata *ld = NULL;
    if (a.n_data &&
        drift_langdata_load_share((const char *const *)a.data, NULL, 0, NULL,
                                  &ld, &diag)) {
        drift_langdata_free(ld);
        fprintf(stderr, "drift translate: %s: the data could not be read\n",
                a.model);
        return EXIT_USAGE;
    }
    drift_known_ints ki = {ld, drift_langdata_int};
    drift_program *p = drift_front_load_known(a.model, ld ? &ki : NULL, &src,
                                              &diag, &e);
    drift_langdata_free(ld);
    if (!p) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        drift_source_free(src);
        return EXIT_USAGE;
    }
    size_t len = 0;
    char *text = render(p, a.model, &len);
    drift_program_free(p);
    drift_source_free(src);
    if (!text)
        return EXIT_USAGE;
    if (reparse(text, len)) {
        fprintf(stderr, "drift translate: the translation of %s does not "
                        "read back as a drift program (a fault in drift "
                        "translate)\n",
                a.model);
        free(text);
        return EXIT_RUN_FAILED;
    }
    if (!a.out) {
        fwrite(text, 1, len, stdout);
        free(text);
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "drift translate: writing standard output "
                            "failed\n");
            return EXIT_RUN_FAILED;
        }
        return 0;
    }
    drift_writer *w = NULL;
    if (drift_writer_open(a.out, &w, &e)) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        free(text);
        return EXIT_RUN_FAILED;
    }
    fwrite(text, 1, len, drift_writer_file(w));
    free(text);
    if (drift_writer_failed(w, &e)) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        drift_writer_abort(w);
        return EXIT_RUN_FAILED;
    }
    if (drift_writer_commit(w, &e)) {
        fprintf(stderr, "drift translate: %s\n", e.msg);
        return EXIT_RUN_FAILED;
    }
    return 0;
}
