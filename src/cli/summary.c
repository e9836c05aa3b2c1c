/* summary.c: `drift summary FILE...`: reads Stan CSV files (drift's or
 * CmdStan's), one chain per file, and prints the posterior summary table
 * (mean, MCSE, sd, quantiles, bulk/tail ESS, R-hat), the sampler's `__`
 * columns apart, and the held-out metrics of a --test run.  Not for the
 * statistics themselves (engine summary.c) or the file format (stancsv.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "base/writer.h"
#include "cli.h"
#include "engine/stats/checks.h"
#include "engine/stats/stancsv.h"
#include "engine/stats/summary.h"

enum { S_CSV, S_HELP };

static const cli_opt summary_opts[] = {
    [S_CSV] = {"--csv", 1,
               "FILE  also write the table as CSV (name,mean,mcse,sd,q5,q50,"
               "q95,ess_bulk,ess_tail,rhat)"},
    [S_HELP] = {"--help", 0, "show this help"},
};
#define N_SUMMARY_OPTS (sizeof summary_opts / sizeof summary_opts[0])

typedef struct summary_args {
    const char **files;
    size_t n_files;
    const char *csv;
    int help;
} summary_args;

static int on_summary_opt(void *user, int idx, const char *v)
{
    summary_args *a = user;
    switch (idx) {
    case -2:
    case S_HELP: a->help = 1; return 0;
    case -1: {
        const char **p = realloc(a->files, (a->n_files + 1) * sizeof *p);
        if (!p)
            return EXIT_RUN_FAILED;
        p[a->n_files++] = v;
        a->files = p;
        return 0;
    }
    case S_CSV: a->csv = v; return 0;
    }
    return 0;
}

static int is_sampler_col(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && !strcmp(name + n - 2, "__") && strcmp(name, "lp__");
}

static int is_metrics(const drift_stancsv *f)
{
    return f->n_cols > 0 && !strcmp(f->names[0], "passes");
}

/* A number in `width` columns: 4 significant digits, no exponent for
 * ordinary magnitudes. */
static void put_num(FILE *o, double v, int width)
{
    char buf[64];
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, sizeof buf, "NA");
    else if (isinf(v))
        snprintf(buf, sizeof buf, v < 0 ? "-inf" : "inf");
    else if (a >= 1e4 && a < 1e10)
        snprintf(buf, sizeof buf, "%.0f", v);
    else
        snprintf(buf, sizeof buf, "%.4g", v);
    fprintf(o, " %*s", width, buf);
}

static void put_count(FILE *o, double v, int width)
{
    if (isnan(v))
        fprintf(o, " %*s", width, "NA");
    else
        fprintf(o, " %*.0f", width, v);
}

/* The metrics file recorded in a draws file's header, resolved beside the
 * draws file.  Returns 0 and fills buf when one is named and readable. */
static int metrics_beside(const drift_stancsv *f, char *buf, size_t cap)
{
    const char *m = drift_stancsv_meta(f, "metrics_file");
    if (!m || !*m)
        return -1;
    const char *slash = strrchr(f->path, '/');
    if (m[0] == '/' || !slash)
        snprintf(buf, cap, "%s", m);
    else
        snprintf(buf, cap, "%.*s/%s", (int)(slash - f->path), f->path, m);
    return access(buf, R_OK) == 0 ? 0 : -1;
}

static void print_metrics(FILE *o, const drift_stancsv *const *mf,
                          const char *const *labels, size_t n)
{
    if (!n)
        return;
    const drift_stancsv *first = mf[0];
    const char *test = drift_stancsv_meta(first, "test");
    fprintf(o, "\nheld-out metrics%s%s (last evaluation of each chain):\n",
            test ? " on " : "", test ? test : "");
    fprintf(o, "  %-24s", "chain");
    for (size_t c = 0; c < first->n_cols; c++)
        fprintf(o, " %10s", first->names[c]);
    fputc('\n', o);
    for (size_t k = 0; k < n; k++) {
        const drift_stancsv *f = mf[k];
        fprintf(o, "  %-24.24s", labels[k]);
        if (f->n_rows == 0) {
            fprintf(o, " (no evaluations)\n");
            continue;
        }
        const double *row = f->values + (f->n_rows - 1) * f->n_cols;
        for (size_t c = 0; c < f->n_cols; c++)
            put_num(o, row[c], 10);
        fputc('\n', o);
    }
}

int cmd_summary(int argc, char **argv)
{
    summary_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse("summary", summary_opts, N_SUMMARY_OPTS, argc, argv,
                       on_summary_opt, &a);
    if (rc) {
        free(a.files);
        return rc;
    }
    if (a.help) {
        cli_usage("drift summary [--csv FILE] FILE...",
                  "Summarises the draws of one or more chains (one Stan CSV "
                  "file each, drift's or\nCmdStan's; warmup draws saved with "
                  "save_warmup are skipped): for lp__ and every\nparameter "
                  "the mean, its Monte Carlo standard error, sd, 5/50/95% "
                  "quantiles, bulk\nand tail effective sample sizes and "
                  "rank-normalised split R-hat (Vehtari et al.\n2021, as R's "
                  "posterior package computes them); the sampler's __ "
                  "columns apart;\nand the held-out metrics of a run with "
                  "--test.",
                  summary_opts, N_SUMMARY_OPTS);
        free(a.files);
        return 0;
    }
    if (a.n_files == 0) {
        fprintf(stderr, "drift summary: no files given: drift summary "
                        "output_1.csv output_2.csv ...\n");
        free(a.files);
        return EXIT_USAGE;
    }
    drift_err e = {{0}};
    /* --csv FILE may be written and is none of the files summarised:
     * checked before any work. */
    if (a.csv && drift_writer_check(a.csv, a.files, a.n_files, &e)) {
        fprintf(stderr, "drift summary: --csv: %s\n", e.msg);
        free(a.files);
        return EXIT_USAGE;
    }
    drift_stancsv **draws = calloc(a.n_files, sizeof *draws);
    drift_stancsv **metrics = calloc(2 * a.n_files, sizeof *metrics);
    char **mlabels = calloc(2 * a.n_files, sizeof *mlabels);
    double *x = NULL;
    drift_summary_stats *stats = NULL;
    size_t n_draws = 0, n_metrics = 0;
    if (!draws || !metrics || !mlabels) {
        rc = EXIT_RUN_FAILED;
        goto out;
    }
    for (size_t k = 0; k < a.n_files; k++) {
        drift_stancsv *f;
        if (drift_stancsv_read(a.files[k], &f, &e)) {
            fprintf(stderr, "drift summary: %s\n", e.msg);
            rc = EXIT_USAGE;
            goto out;
        }
        if (is_metrics(f)) {
            mlabels[n_metrics] = drift_strdup(a.files[k]);
            metrics[n_metrics++] = f;
        } else {
            draws[n_draws++] = f;
        }
    }
    if (n_draws == 0 && n_metrics == 0) {
        rc = EXIT_USAGE;
        goto out;
    }
    /* Metrics files named in the draws files' headers, unless given. */
    for (size_t k = 0; k < n_draws && n_metrics < 2 * a.n_files; k++) {
        char path[4096];
        if (metrics_beside(draws[k], path, sizeof path))
            continue;
        int given = 0;
        for (size_t j = 0; j < n_metrics; j++)
            given |= !strcmp(metrics[j]->path, path);
        if (given)
            continue;
        drift_stancsv *f = NULL;
        int bad = drift_stancsv_read(path, &f, &e);
        if (bad || !is_metrics(f)) {
            fprintf(stderr, "drift summary: warning: %s%s\n",
                    bad ? "" : path, bad ? e.msg : ": not a metrics file");
            drift_stancsv_free(f);
            continue;
        }
        mlabels[n_metrics] = drift_strdup(draws[k]->path);
        metrics[n_metrics++] = f;
    }

    FILE *o = stdout;
    size_t C = n_draws, n = SIZE_MAX, most = 0;
    for (size_t k = 0; k < C; k++) {
        const drift_stancsv *f = draws[k];
        if (f->n_cols != draws[0]->n_cols) {
            fprintf(stderr,
                    "drift summary: %s has %zu columns, %s has %zu: "
                    "summarise chains of one model and sampler together\n",
                    f->path, f->n_cols, draws[0]->path, draws[0]->n_cols);
            rc = EXIT_USAGE;
            goto out;
        }
        for (size_t c = 0; c < f->n_cols; c++)
            if (strcmp(f->names[c], draws[0]->names[c])) {
                fprintf(stderr,
                        "drift summary: %s: column %zu is '%s', but in %s "
                        "it is '%s': summarise chains of one model "
                        "together\n",
                        f->path, c + 1, f->names[c], draws[0]->path,
                        draws[0]->names[c]);
                rc = EXIT_USAGE;
                goto out;
            }
        size_t kept = f->n_rows - f->n_warmup;
        if (kept < n)
            n = kept;
        if (kept > most)
            most = kept;
    }
    if (C) {
        if (n == 0) {
            for (size_t k = 0; k < C; k++)
                if (draws[k]->n_rows == draws[k]->n_warmup)
                    fprintf(stderr, "drift summary: %s: no draws after "
                                    "warmup\n",
                            draws[k]->path);
            rc = EXIT_USAGE;
            goto out;
        }
        size_t warm = draws[0]->n_warmup;
        fprintf(o, "%zu chain%s, %zu draws each (%zu in all)", C,
                C > 1 ? "s" : "", n, n * C);
        if (warm)
            fprintf(o, "; %zu warmup draws per chain skipped", warm);
        fputc('\n', o);
        for (size_t k = 0; k < C; k++) {
            const drift_stancsv *f = draws[k];
            const char *smp = drift_stancsv_meta(f, "sampler");
            if (!smp)
                smp = drift_stancsv_meta(f, "engine");
            fprintf(o, "  %s: %zu draws", f->path, f->n_rows - f->n_warmup);
            if (smp)
                fprintf(o, ", sampler %s", smp);
            long g = drift_stancsv_column(f, "grads__");
            const char *Ns = drift_stancsv_meta(f, "N");
            uint64_t N;
            if (g >= 0 && Ns && !drift_parse_u64(Ns, &N) && N && f->n_rows)
                fprintf(o, ", %.4g data passes",
                        f->values[(f->n_rows - 1) * f->n_cols + (size_t)g] /
                            (double)N);
            fputc('\n', o);
        }
        if (most != n)
            fprintf(stderr,
                    "drift summary: warning: the chains have different "
                    "lengths (%zu to %zu draws); using the first %zu draws "
                    "of each\n",
                    n, most, n);

        size_t nc = draws[0]->n_cols;
        x = malloc(C * n * sizeof *x);
        stats = calloc(nc, sizeof *stats);
        if (!x || !stats) {
            fprintf(stderr, "drift summary: out of memory\n");
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        int width = 8;
        for (size_t c = 0; c < nc; c++) {
            int len = (int)strlen(draws[0]->names[c]);
            if (len > width)
                width = len < 30 ? len : 30;
        }
        /* The posterior table: lp__ and the model's quantities. */
        fprintf(o, "\n%-*s %9s %9s %9s %9s %9s %9s %9s %9s %7s\n", width, "",
                "mean", "mcse", "sd", "5%", "50%", "95%", "ess_bulk",
                "ess_tail", "rhat");
        for (size_t c = 0; c < nc; c++) {
            const char *name = draws[0]->names[c];
            int sampler_col = is_sampler_col(name);
            for (size_t k = 0; k < C; k++) {
                const drift_stancsv *f = draws[k];
                for (size_t i = 0; i < n; i++)
                    x[k * n + i] = f->values[(f->n_warmup + i) * nc + c];
            }
            if (drift_summary_compute(x, n, C, &stats[c], &e)) {
                fprintf(stderr, "drift summary: %s\n", e.msg);
                rc = EXIT_RUN_FAILED;
                goto out;
            }
            if (sampler_col)
                continue;
            const drift_summary_stats *s = &stats[c];
            fprintf(o, "%-*.*s", width, width, name);
            put_num(o, s->mean, 9);
            put_num(o, s->mcse, 9);
            put_num(o, s->sd, 9);
            put_num(o, s->q5, 9);
            put_num(o, s->q50, 9);
            put_num(o, s->q95, 9);
            put_count(o, s->ess_bulk, 9);
            put_count(o, s->ess_tail, 9);
            if (isnan(s->rhat))
                fprintf(o, " %7s\n", "NA");
            else
                fprintf(o, " %7.3f\n", s->rhat);
        }
        /* The sampler's diagnostic columns, apart. */
        int any_sampler = 0;
        for (size_t c = 0; c < nc; c++)
            any_sampler |= is_sampler_col(draws[0]->names[c]);
        if (any_sampler) {
            fprintf(o, "\nsampler columns:\n%-*s %9s %9s %9s %9s %9s\n",
                    width, "", "mean", "sd", "min", "50%", "max");
            for (size_t c = 0; c < nc; c++) {
                if (!is_sampler_col(draws[0]->names[c]))
                    continue;
                double lo = INFINITY, hi = -INFINITY;
                for (size_t k = 0; k < C; k++)
                    for (size_t i = 0; i < n; i++) {
                        double v = draws[k]->values[(draws[k]->n_warmup + i) *
                                                        nc + c];
                        if (v < lo)
                            lo = v;
                        if (v > hi)
                            hi = v;
                    }
                fprintf(o, "%-*.*s", width, width, draws[0]->names[c]);
                put_num(o, stats[c].mean, 9);
                put_num(o, stats[c].sd, 9);
                put_num(o, lo, 9);
                put_num(o, stats[c].q50, 9);
                put_num(o, hi, 9);
                fputc('\n', o);
            }
        }
        /* What to act on, as CmdStan's diagnose says it. */
        drift_checks chk;
        if (drift_checks_run((const drift_stancsv *const *)draws, C, n, stats,
                             &chk, &e)) {
            fprintf(stderr, "drift summary: %s\n", e.msg);
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        for (size_t k = 0; k < chk.n; k++)
            fprintf(o, "%swarning: %s\n", k ? "" : "\n", chk.lines[k]);
        drift_checks_free(&chk);
        if (a.csv) {
            drift_writer *w;
            if (drift_writer_open(a.csv, &w, &e)) {
                fprintf(stderr, "drift summary: --csv: %s\n", e.msg);
                rc = EXIT_RUN_FAILED;
                goto out;
            }
            FILE *cf = drift_writer_file(w);
            fputs("name,mean,mcse,sd,q5,q50,q95,ess_bulk,ess_tail,rhat\n", cf);
            for (size_t c = 0; c < nc; c++) {
                if (is_sampler_col(draws[0]->names[c]))
                    continue;
                const drift_summary_stats *s = &stats[c];
                double v[9] = {s->mean, s->mcse, s->sd, s->q5, s->q50,
                               s->q95, s->ess_bulk, s->ess_tail, s->rhat};
                fputs(draws[0]->names[c], cf);
                for (int j = 0; j < 9; j++) {
                    if (isnan(v[j]))
                        fputs(",NA", cf);
                    else
                        fprintf(cf, ",%.10g", v[j]);
                }
                fputc('\n', cf);
            }
            if (drift_writer_commit(w, &e)) {
                fprintf(stderr, "drift summary: --csv: %s\n", e.msg);
                rc = EXIT_RUN_FAILED;
                goto out;
            }
        }
    }
    print_metrics(o, (const drift_stancsv *const *)metrics,
                  (const char *const *)mlabels, n_metrics);
    rc = 0;
out:
    for (size_t k = 0; k < n_draws; k++)
        drift_stancsv_free(draws[k]);
    for (size_t k = 0; k < n_metrics; k++) {
        drift_stancsv_free(metrics[k]);
        drift_free(mlabels[k]);
    }
    free(draws);
    free(metrics);
    free(mlabels);
    free(x);
    free(stats);
    free(a.files);
    return rc;
}
