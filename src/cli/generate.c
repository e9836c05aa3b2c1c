/* generate.c: `drift generate`, CmdStan's standalone generated
 * quantities: the model's derived and generated blocks evaluated at every
 * draw of existing Stan CSV files (parameters read by column name), one
 * output file per input file.  Each output is the input with those
 * columns recomputed: its comment lines (configuration, adaptation,
 * timing) and method columns kept in place, so that whatever read the
 * fit reads the output.  Not for sampling. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "methods.h"
#include "engine/lang/lang_model.h"
#include "engine/run/plugin.h"
#include "engine/run/points.h"
#include "engine/stats/stancsv.h"

enum { G_MODEL = CLI_PB_MODEL, G_MODEL_SET, G_DATA, G_DATA_SET,
       G_DRAWS = CLI_PB_N, G_OUT, G_SEED, G_HELP };

static const cli_opt gen_opts[] = {
    CLI_PROBLEM_OPTS,
    [G_DRAWS] = {"--draws", 1,
                 "FILE...  Stan CSV files of a fit (one per chain; every "
                 "argument up to the next option)"},
    [G_OUT] = {"--out", 1,
               "FILE  output: FILE for one input, FILE_1.csv ... for "
               "several (default: each input's name with _gq)"},
    [G_SEED] = {"--seed", 1, "S  random seed of the _rng draws (default: "
                             "clock)"},
    [G_HELP] = {"--help", 0, "show this help"},
};
#define N_GEN_OPTS (sizeof gen_opts / sizeof gen_opts[0])

#define MAX_DRAWS_FILES 256

typedef struct gen_args {
    cli_problem_args pb;
    const char *draws[MAX_DRAWS_FILES];
    size_t n_draws;
    int in_draws;               /* positionals after --draws are files */
    const char *out;
    uint64_t seed;
    int have_seed, help;
} gen_args;

static int bad(const char *opt, const char *v, const char *want)
{
    fprintf(stderr, "drift generate: %s %s: %s\n", opt, v, want);
    return EXIT_USAGE;
}

static int on_opt(void *user, int idx, const char *v)
{
    gen_args *a = user;
    if (idx != -1)
        a->in_draws = idx == G_DRAWS;
    switch (idx) {
    case -2:
    case G_HELP: a->help = 1; return 0;
    case -1:
        if (a->in_draws) {
            if (a->n_draws >= MAX_DRAWS_FILES)
                return bad("--draws", v, "too many files");
            a->draws[a->n_draws++] = v;
            return 0;
        }
        if (a->pb.model || !drift_lang_is_model_file(v))
            break;
        return cli_problem_opt(&a->pb, "generate", idx, v);
    case G_MODEL:
    case G_MODEL_SET:
    case G_DATA:
    case G_DATA_SET: return cli_problem_opt(&a->pb, "generate", idx, v);
    case G_DRAWS:
        if (a->n_draws >= MAX_DRAWS_FILES)
            return bad("--draws", v, "too many files");
        a->draws[a->n_draws++] = v;
        return 0;
    case G_OUT: a->out = v; return 0;
    case G_SEED:
        if (drift_parse_u64(v, &a->seed))
            return bad("--seed", v, "expected a non-negative integer");
        a->have_seed = 1;
        return 0;
    default: return 0;
    }
    fprintf(stderr,
            "drift generate: unexpected argument '%s' (a model is a .drift "
            "or .stan file or --model NAME; draws files follow --draws)\n",
            v);
    return EXIT_USAGE;
}

/* The _rng draws' seed of row r of file k: the seed, the file and the row
 * mixed (splitmix64's finaliser), so that files and rows get unrelated
 * streams. */
static uint64_t row_seed(uint64_t seed, size_t k, size_t r)
{
    uint64_t z = seed ^ ((uint64_t)(k + 1) << 40) ^
                 ((uint64_t)r * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Output path of input k of n. */
static void out_path(const gen_args *a, size_t k, char *buf, size_t cap)
{
    const char *in = a->draws[k];
    if (!a->out) {
        size_t len = strlen(in);
        if (len > 4 && !strcmp(in + len - 4, ".csv"))
            len -= 4;
        snprintf(buf, cap, "%.*s_gq.csv", (int)len, in);
        return;
    }
    if (a->n_draws == 1) {
        snprintf(buf, cap, "%s", a->out);
        return;
    }
    size_t len = strlen(a->out);
    if (len > 4 && !strcmp(a->out + len - 4, ".csv"))
        len -= 4;
    snprintf(buf, cap, "%.*s_%zu.csv", (int)len, a->out, k + 1);
}

/* Whether column name is one of the model's derived or generated values
 * (recomputed, so the input's copy is dropped). */
static int is_gen(const drift_model *m, const char *name)
{
    for (size_t j = 0; j < m->n_gen; j++)
        if (!strcmp(m->gen_names[j], name))
            return 1;
    return 0;
}

/* Writes row text's fields (comma-separated, n_cols of them) whose keep
 * flag is set. */
static int copy_fields(FILE *out, char *line, const unsigned char *keep,
                       size_t n_cols)
{
    size_t c = 0;
    int first = 1;
    char *p = line;
    while (c < n_cols) {
        char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strcspn(p, "\r\n");
        if (keep[c]) {
            if (!first)
                fputc(',', out);
            fwrite(p, 1, len, out);
            first = 0;
        }
        c++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return first;
}

static int gen_file(const gen_args *a, size_t k, const drift_model *m,
                    void *ws, double *theta, double *gen)
{
    const char *in = a->draws[k];
    drift_err e = {{0}};
    double *vals;
    size_t n;
    drift_stancsv *csv;
    if (drift_points_from_draws(in, m, 1, &vals, &n, &csv, &e)) {
        fprintf(stderr, "drift generate: %s\n", e.msg);
        return EXIT_USAGE;
    }
    size_t nc = csv->n_cols;
    unsigned char *keep = drift_malloc_array(nc ? nc : 1, 1);
    FILE *f = fopen(in, "r");
    char path[4096];
    out_path(a, k, path, sizeof path);
    drift_writer *w = NULL;
    FILE *out = NULL;
    int status = 0;
    if (!keep || !f) {
        fprintf(stderr, "drift generate: %s: cannot %s it\n",
                !keep ? "memory" : in, !keep ? "allocate" : "read");
        status = !keep ? EXIT_RUN_FAILED : EXIT_USAGE;
        goto done;
    }
    if (!(out = cli_out_open("generate", path, &w))) {
        status = EXIT_RUN_FAILED;
        goto done;
    }
    for (size_t c = 0; c < nc; c++)
        keep[c] = !is_gen(m, csv->names[c]);
    char *line = NULL;
    size_t cap = 0, r = 0;
    int header_done = 0;
    ssize_t got;
    while (!status && (got = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#') {
            fputs(line, out);
            continue;
        }
        if (strspn(line, " \t\r\n") == (size_t)got)
            continue;
        if (!header_done) {
            fprintf(out, "# generate_quantities\n"
                         "#   fitted_params = %s\n"
                         "#   model = %s\n"
                         "#   seed = %llu\n",
                    in, a->pb.model, (unsigned long long)a->seed);
            int none = copy_fields(out, line, keep, nc);
            for (size_t j = 0; j < m->n_gen; j++)
                fprintf(out, "%s%s", none && j == 0 ? "" : ",",
                        m->gen_names[j]);
            fputc('\n', out);
            header_done = 1;
            continue;
        }
        if (r >= n) {
            fprintf(stderr, "drift generate: %s: more rows than it was "
                            "read with\n", in);
            status = EXIT_RUN_FAILED;
            break;
        }
        if (m->unconstrain(m->self, vals + r * m->n_out, theta, &e) ||
            m->generate(m->self, ws, theta, row_seed(a->seed, k, r), 1, gen,
                        &e)) {
            fprintf(stderr, "drift generate: %s, draw %zu: %s\n", in, r + 1,
                    e.msg);
            status = EXIT_RUN_FAILED;
            break;
        }
        int none = copy_fields(out, line, keep, nc);
        for (size_t j = 0; j < m->n_gen; j++)
            fprintf(out, "%s%.10g", none && j == 0 ? "" : ",", gen[j]);
        fputc('\n', out);
        r++;
    }
    free(line);
done:
    if (f)
        fclose(f);
    if (w && status) /* nothing of a failed file is put in place */
        drift_writer_abort(w);
    else if (w)
        status = cli_out_commit("generate", w);
    if (!status)
        fprintf(stderr, "drift generate: %zu draws of %s -> %s\n", n, in,
                path);
    drift_free(keep);
    drift_free(vals);
    drift_stancsv_free(csv);
    return status;
}

/* The command's work on its opened model (cli_with_problem). */
static int run(void *user, const drift_model *m)
{
    const gen_args *a = user;
    if (!m->n_gen) {
        fprintf(stderr, "drift generate: %s has no derived or generated "
                        "quantities: nothing to compute\n",
                a->pb.model);
        return EXIT_USAGE;
    }
    size_t cap = m->n_rows < 1024 ? (m->n_rows ? m->n_rows : 1) : 1024;
    void *ws = m->workspace_new(m->self, cap);
    double *theta = drift_malloc_array(m->dim + m->n_gen, sizeof(double));
    if (!ws || !theta) {
        if (ws)
            m->workspace_free(m->self, ws);
        drift_free(theta);
        fprintf(stderr, "drift generate: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    int status = 0;
    for (size_t k = 0; k < a->n_draws && !status; k++)
        status = gen_file(a, k, m, ws, theta, theta + m->dim);
    m->workspace_free(m->self, ws);
    drift_free(theta);
    return status;
}

int cmd_generate(int argc, char **argv)
{
    gen_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("generate", gen_opts, N_GEN_OPTS, argc, argv, on_opt,
                       &a);
    if (rc)
        return rc;
    if (a.help) {
        cli_usage("drift generate MODEL.drift|--model NAME --data FILE "
                  "--draws FIT_1.csv [FIT_2.csv ...] [--out FILE] [--seed S]",
                  "Evaluates the model's derived and generated blocks at "
                  "every draw of existing\nStan CSV files, as CmdStan's "
                  "standalone generated quantities: parameters are\nread by "
                  "column name, one output per input, each the input with "
                  "those columns\nrecomputed (its comment lines and other "
                  "columns kept).",
                  gen_opts, N_GEN_OPTS);
        return 0;
    }
    if (!a.n_draws) {
        fprintf(stderr, "drift generate: no draws given: --draws "
                        "FIT_1.csv [FIT_2.csv ...]\n");
        return EXIT_USAGE;
    }
    if (!a.have_seed)
        a.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    /* Every output checked before any work: none may be an input (a
     * draws file read while its output is written would be lost). */
    const char *inputs[1 + 16 + MAX_DRAWS_FILES];
    size_t n_in = 0;
    n_in += cli_problem_inputs(&a.pb, inputs);
    for (size_t k = 0; k < a.n_draws; k++)
        inputs[n_in++] = a.draws[k];
    for (size_t k = 0; k < a.n_draws; k++) {
        char path[4096];
        out_path(&a, k, path, sizeof path);
        if ((rc = cli_out_check("generate", path, inputs, n_in)))
            return rc;
    }
    return cli_with_problem("generate", &a.pb, run, &a);
}
