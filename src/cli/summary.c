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
#include "engine/stats/trajectory.h"

enum { S_CSV, S_VARS, S_PERCENTILES, S_KSD, S_KSD_DRAWS, S_MODEL, S_DATA,
       S_HELP };

static const cli_opt summary_opts[] = {
    [S_CSV] = {"--csv", 1,
               "FILE  also write the table as CSV (name,mean,mcse,sd,q5,q50,"
               "q95,ess_bulk,ess_tail,rhat; the q columns follow "
               "--percentiles)", NULL},
    [S_VARS] = {"--vars", 1,
                "LIST  only these columns: names (w.1, or w[1]) or a "
                "variable's name for all its elements (w), comma-separated",
                NULL},
    [S_PERCENTILES] = {"--percentiles", 1,
                       "P,...  percentiles to print, as stansummary's -p "
                       "(default 5,50,95; also -p)",
                       "-p"},
    [S_KSD] = {"--ksd", 0,
               "also the kernel Stein discrepancy of the draws (IMQ kernel, "
               "c = 1, beta = -1/2, unconstrained scale): scores from the "
               "files' grad_lp columns (drift sample --save-gradients), "
               "else recomputed from the model and data, one full-data "
               "gradient per draw used; a ksd column gives each "
               "coordinate's part",
               NULL},
    [S_KSD_DRAWS] = {"--ksd-draws", 1,
                     "K  --ksd uses at most K draws, evenly spaced in each "
                     "chain (default 1000; its kernel sum costs K^2 d / 2)",
                     NULL},
    [S_MODEL] = {"--model", 1,
                 "FILE|NAME  --ksd: the model to recompute scores with "
                 "(default: the header's model_file)",
                 NULL},
    [S_DATA] = {"--data", 1,
                "FILE  --ksd: its data (repeatable; default: the header's)",
                NULL},
    [S_HELP] = {"--help", 0, "show this help", NULL},
};
#define N_SUMMARY_OPTS (sizeof summary_opts / sizeof summary_opts[0])
#define MAX_PERCENTILES 16

typedef struct summary_args {
    const char **files;
    size_t n_files;
    const char *csv, *vars;
    double pct[MAX_PERCENTILES];
    size_t n_pct;
    int help;
    int ksd;                /* --ksd */
    size_t ksd_draws;       /* --ksd-draws (0: the default) */
    const char *model;      /* --model */
    const char *data[8];    /* --data */
    size_t n_data;
} summary_args;

/* "2.5,50,97.5": percentiles in [0, 100]. */
static int parse_percentiles(const char *v, summary_args *a)
{
    a->n_pct = 0;
    const char *p = v;
    for (;;) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x >= 0 && x <= 100) || (*end && *end != ',') ||
            a->n_pct == MAX_PERCENTILES) {
            fprintf(stderr,
                    "drift summary: --percentiles %s: expected up to %d "
                    "numbers from 0 to 100, comma-separated (e.g. "
                    "2.5,50,97.5)\n",
                    v, MAX_PERCENTILES);
            return EXIT_USAGE;
        }
        a->pct[a->n_pct++] = x;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

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
    case S_VARS: a->vars = v; return 0;
    case S_PERCENTILES: return parse_percentiles(v, a);
    case S_KSD: a->ksd = 1; return 0;
    case S_KSD_DRAWS: {
        uint64_t k;
        if (drift_parse_u64(v, &k) || k < 2 || k > 1000000) {
            fprintf(stderr, "drift summary: --ksd-draws %s: expected an "
                            "integer from 2 to 1000000\n",
                    v);
            return EXIT_USAGE;
        }
        a->ksd_draws = (size_t)k;
        return 0;
    }
    case S_MODEL: a->model = v; return 0;
    case S_DATA:
        if (a->n_data == sizeof a->data / sizeof a->data[0]) {
            fprintf(stderr, "drift summary: --data %s: at most %zu data "
                            "files\n",
                    v, sizeof a->data / sizeof a->data[0]);
            return EXIT_USAGE;
        }
        a->data[a->n_data++] = v;
        return 0;
    }
    return 0;
}

static int is_sampler_col(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && !strcmp(name + n - 2, "__") && strcmp(name, "lp__");
}

/* A score column of --save-gradients: input to --ksd, not a sampler
 * diagnostic to tabulate. */
static int is_score_col(const char *name)
{
    return !strncmp(name, "grad_lp_", 8);
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

/* ---- column selection (--vars) ---------------------------------------- */

/* "w[1,2]" -> "w.1.2": the names drift and CmdStan write. */
static void dot_name(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        if (*p == ']' || *p == ' ')
            continue;
        out[n++] = *p == '[' || *p == ',' ? '.' : *p;
    }
    out[n] = '\0';
}

/* Does column `name` match selector `sel` (its name, or a variable whose
 * element it is)? */
static int matches(const char *name, const char *sel)
{
    size_t n = strlen(sel);
    return !strcmp(name, sel) || (!strncmp(name, sel, n) && name[n] == '.');
}

/* Marks in keep[nc] the columns --vars selects (all without it).  Returns
 * 0, or EXIT_USAGE naming a selector that matches nothing. */
static int select_columns(const char *vars, const drift_stancsv *f,
                          unsigned char *keep)
{
    memset(keep, vars ? 0 : 1, f->n_cols);
    if (!vars)
        return 0;
    char *list = drift_strdup(vars);
    if (!list)
        return EXIT_RUN_FAILED;
    int rc = 0;
    /* Commas inside brackets belong to the name: w[1,2]. */
    char *p = list;
    while (*p && !rc) {
        char *q = p;
        int depth = 0;
        while (*q && (depth || *q != ',')) {
            depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
            q++;
        }
        int last = !*q;
        *q = '\0';
        char sel[256];
        dot_name(p, sel, sizeof sel);
        int any = 0;
        for (size_t c = 0; c < f->n_cols; c++)
            if (*sel && matches(f->names[c], sel))
                keep[c] = 1, any = 1;
        if (!any) {
            fprintf(stderr,
                    "drift summary: --vars: no column '%s' (nor '%s.*') in "
                    "%s\n",
                    p, sel, f->path);
            rc = EXIT_USAGE;
        }
        p = last ? q : q + 1;
    }
    drift_free(list);
    return rc;
}

/* ---- segment files (--emit segments) ------------------------------------ */

/* A file of a continuous trajectory's segments: its columns. */
typedef struct seg_cols {
    long dur;           /* duration__ */
    long *x0, *v;       /* x0_k__, v_k__ (dim each) */
    size_t dim;
} seg_cols;

static void seg_cols_free(seg_cols *s)
{
    free(s->x0);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Fills s when f holds segments (emit = segments, duration__, x0_k__ and
 * v_k__ for k = 1..dim); returns 1 then, else 0. */
static int seg_cols_of(const drift_stancsv *f, seg_cols *s)
{
    memset(s, 0, sizeof *s);
    const char *emit = drift_stancsv_meta(f, "emit");
    const char *dim = drift_stancsv_meta(f, "dim");
    uint64_t d;
    if (!emit || strcmp(emit, "segments") || !dim || drift_parse_u64(dim, &d) ||
        d == 0 || d > f->n_cols)
        return 0;
    s->dur = drift_stancsv_column(f, "duration__");
    s->x0 = calloc(d, sizeof *s->x0);
    s->v = calloc(d, sizeof *s->v);
    s->dim = (size_t)d;
    if (s->dur < 0 || !s->x0 || !s->v) {
        seg_cols_free(s);
        return 0;
    }
    for (size_t k = 0; k < s->dim; k++) {
        char name[64];
        snprintf(name, sizeof name, "x0_%zu__", k + 1);
        s->x0[k] = drift_stancsv_column(f, name);
        snprintf(name, sizeof name, "v_%zu__", k + 1);
        s->v[k] = drift_stancsv_column(f, name);
        if (s->x0[k] < 0 || s->v[k] < 0) {
            seg_cols_free(s);
            return 0;
        }
    }
    return 1;
}

/* The unconstrained coordinate column c holds, when its value is x0_k__'s
 * on every row (an unconstrained parameter), else -1. */
static long coordinate_of(drift_stancsv *const *draws, size_t C,
                          const seg_cols *s, size_t c)
{
    const char *name = draws[0]->names[c];
    if (is_sampler_col(name) || !strcmp(name, "lp__"))
        return -1;
    /* The model's columns come in coordinate order. */
    size_t j = 0;
    for (size_t i = 0; i < c; i++)
        j += !is_sampler_col(draws[0]->names[i]) &&
             strcmp(draws[0]->names[i], "lp__") != 0;
    if (j >= s->dim)
        return -1;
    for (size_t k = 0; k < C; k++) {
        const drift_stancsv *f = draws[k];
        for (size_t r = 0; r < f->n_rows; r++)
            if (f->values[r * f->n_cols + c] !=
                f->values[r * f->n_cols + (size_t)s->x0[j]])
                return -1;
    }
    return (long)j;
}

/* The exact moments of coordinate k pooled over the chains: from the
 * footers drift writes (trajectory_time, trajectory_mean, trajectory_var
 * on the unconstrained scale), else by integrating the rows. */
static void seg_moments(drift_stancsv *const *draws, size_t C,
                        const drift_trajectory *tr, size_t k, double *mean,
                        double *var)
{
    double T = 0, s1 = 0, s2 = 0;
    int footers = 1;
    for (size_t c = 0; c < C && footers; c++) {
        const char *t = drift_stancsv_footer(draws[c], "trajectory_time");
        const char *m =
            drift_stancsv_footer(draws[c], "trajectory_mean (unconstrained)");
        const char *v =
            drift_stancsv_footer(draws[c], "trajectory_var (unconstrained)");
        double tc, mc = NAN, vc = NAN;
        footers = t && m && v && !drift_parse_double(t, &tc) && tc > 0;
        for (size_t j = 0; footers && j <= k; j++) {
            char *end;
            mc = strtod(m, &end);
            footers = end != m;
            m = *end == ',' ? end + 1 : end;
            vc = strtod(v, &end);
            footers = footers && end != v;
            v = *end == ',' ? end + 1 : end;
        }
        if (footers) {
            T += tc;
            s1 += tc * mc;
            s2 += tc * (vc + mc * mc);
        }
    }
    if (footers && T > 0) {
        *mean = s1 / T;
        double e2 = s2 / T - *mean * *mean;
        *var = e2 > 0 ? e2 : 0;
        return;
    }
    drift_trajectory_moments(tr, C, mean, var, &T);
}

/* What readers that take segments for draws would report: the quantity
 * whose mean over rows is furthest (in its own sd) from its time average,
 * both printed, so that the difference is seen before anyone trusts such
 * a reader on these files. */
static void segments_note(FILE *o, drift_stancsv *const *draws, size_t C,
                          const seg_cols *s)
{
    const drift_stancsv *f0 = draws[0];
    long best = -1;
    double best_gap = -1, best_rows = 0, best_time = 0;
    for (size_t c = 0; c < f0->n_cols; c++) {
        const char *name = f0->names[c];
        if (is_sampler_col(name) || !strcmp(name, "lp__"))
            continue;
        double n = 0, sx = 0, sxx = 0, T = 0, tx = 0;
        for (size_t k = 0; k < C; k++) {
            const drift_stancsv *f = draws[k];
            for (size_t r = f->n_warmup; r < f->n_rows; r++) {
                const double *row = f->values + r * f->n_cols;
                double x = row[c], d = row[s->dur];
                n++, sx += x, sxx += x * x;
                T += d, tx += d * x;
            }
        }
        if (n < 2 || !(T > 0))
            continue;
        double mean = sx / n, sd = sqrt(fmax(sxx / n - mean * mean, 0));
        /* The value at a segment's start, weighted by its duration: the
         * time average of the step function, which is what a reader
         * weighting rows by duration__ gets. */
        double gap = sd > 0 ? fabs(mean - tx / T) / sd : 0;
        if (gap > best_gap) {
            best = (long)c;
            best_gap = gap;
            best_rows = mean;
            best_time = tx / T;
        }
    }
    fprintf(o, "note: the rows are segments of unequal duration, not "
               "draws: weight each by duration__.\n"
               "  Readers that take rows for draws (ArviZ, rstan, posterior, "
               "CmdStanPy) weigh them alike");
    if (best >= 0)
        fprintf(o, ":\n  their mean of %s is %.4g, weighted by duration "
                   "%.4g (the table below integrates\n  the trajectory "
                   "exactly)",
                f0->names[best], best_rows, best_time);
    fputs(", and their ESS and R-hat of rows mean nothing.\n", o);
}

/* ---- the command --------------------------------------------------------- */

int cmd_summary(int argc, char **argv)
{
    summary_args a;
    memset(&a, 0, sizeof a);
    a.pct[0] = 5, a.pct[1] = 50, a.pct[2] = 95;
    a.n_pct = 3;
    int rc = cli_parse("summary", summary_opts, N_SUMMARY_OPTS, argc, argv,
                       on_summary_opt, &a);
    if (rc) {
        free(a.files);
        return rc;
    }
    if (a.help) {
        cli_usage("drift summary [--csv FILE] [--vars LIST] [-p P,...] "
                  "[--ksd [--ksd-draws K] [--model M --data D]] FILE...",
                  "Summarises the draws of one or more chains (one Stan CSV "
                  "file each, drift's or\nCmdStan's; warmup draws saved with "
                  "save_warmup are skipped): for lp__ and every\nparameter "
                  "the mean, its Monte Carlo standard error, sd, quantiles "
                  "(5%, 50%, 95%\nunless --percentiles), bulk and tail "
                  "effective sample sizes and rank-normalised\nsplit R-hat "
                  "(Vehtari et al. 2021, as R's posterior package computes "
                  "them); the\nsampler's __ columns apart; and the held-out "
                  "metrics of a run with --test.\nFiles of a continuous "
                  "trajectory's segments (--emit segments) are summarised\n"
                  "by exact time averages.  With --ksd, the kernel Stein "
                  "discrepancy of the draws\n(Gorham and Mackey 2017), "
                  "which sees the bias that ESS and R-hat cannot:\n"
                  "O(K^2 d) for K draws, plus one full-data gradient per "
                  "draw when the files\nhold no scores.",
                  summary_opts, N_SUMMARY_OPTS);
        free(a.files);
        return 0;
    }
    if (!a.ksd && (a.model || a.n_data || a.ksd_draws)) {
        fprintf(stderr, "drift summary: %s is for --ksd (the model and data "
                        "it recomputes scores with, the draws it uses); "
                        "add --ksd\n",
                a.model ? "--model" : a.n_data ? "--data" : "--ksd-draws");
        free(a.files);
        return EXIT_USAGE;
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
    double *x = NULL, *q = NULL, *p01 = NULL;
    drift_summary_stats *stats = NULL;
    unsigned char *keep = NULL;
    drift_trajectory *tr = NULL;
    seg_cols seg;
    memset(&seg, 0, sizeof seg);
    cli_ksd_out kout;
    memset(&kout, 0, sizeof kout);
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
        size_t nc = draws[0]->n_cols;
        keep = malloc(nc);
        if (!keep) {
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        if ((rc = select_columns(a.vars, draws[0], keep)))
            goto out;
        if (a.ksd) {
            cli_ksd_opts ko = {a.model, a.data, a.n_data, a.ksd_draws};
            if ((rc = cli_ksd(draws, C, n, &ko, &kout)))
                goto out;
        }
        /* Segments: every file of the trajectory's segments. */
        int segments = 1;
        for (size_t k = 0; k < C && segments; k++) {
            seg_cols_free(&seg);
            segments = seg_cols_of(draws[k], &seg);
        }
        size_t warm = draws[0]->n_warmup;
        if (segments)
            fprintf(o, "%zu chain%s, %zu segments each (%zu in all) of a "
                       "continuous trajectory",
                    C, C > 1 ? "s" : "", n, n * C);
        else
            fprintf(o, "%zu chain%s, %zu draws each (%zu in all)", C,
                    C > 1 ? "s" : "", n, n * C);
        if (warm)
            fprintf(o, "; %zu warmup %s per chain skipped", warm,
                    segments ? "segments" : "draws");
        fputc('\n', o);
        for (size_t k = 0; k < C; k++) {
            const drift_stancsv *f = draws[k];
            const char *smp = drift_stancsv_meta(f, "sampler");
            if (!smp)
                smp = drift_stancsv_meta(f, "engine");
            fprintf(o, "  %s: %zu %s", f->path, f->n_rows - f->n_warmup,
                    segments ? "segments" : "draws");
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

        x = malloc(C * n * sizeof *x);
        stats = calloc(nc, sizeof *stats);
        q = malloc(nc * a.n_pct * sizeof *q);
        p01 = malloc(a.n_pct * sizeof *p01);
        tr = calloc(C, sizeof *tr);
        if (!x || !stats || !q || !p01 || !tr) {
            fprintf(stderr, "drift summary: out of memory\n");
            rc = EXIT_RUN_FAILED;
            goto out;
        }
        for (size_t j = 0; j < a.n_pct; j++)
            p01[j] = a.pct[j] / 100.0;
        if (segments)
            segments_note(o, draws, C, &seg);
        if (segments)
            fprintf(o, "(the trajectory after warmup: mean, sd and "
                       "quantiles of its unconstrained coordinates are exact "
                       "time averages;\n the rest, and every ESS and R-hat, "
                       "are of the trajectory at %zu equally spaced times "
                       "per chain)\n",
                    n);
        int width = 8;
        for (size_t c = 0; c < nc; c++) {
            int len = (int)strlen(draws[0]->names[c]);
            if (keep[c] && len > width)
                width = len < 30 ? len : 30;
        }
        /* The posterior table: lp__ and the model's quantities. */
        fprintf(o, "\n%-*s %9s %9s %9s", width, "", "mean", "mcse", "sd");
        for (size_t j = 0; j < a.n_pct; j++) {
            char h[32];
            snprintf(h, sizeof h, "%g%%", a.pct[j]);
            fprintf(o, " %9s", h);
        }
        fprintf(o, " %9s %9s %7s", "ess_bulk", "ess_tail", "rhat");
        if (a.ksd)
            fprintf(o, " %9s", "ksd");
        fputc('\n', o);
        for (size_t c = 0; c < nc; c++) {
            const char *name = draws[0]->names[c];
            int sampler_col = is_sampler_col(name);
            if (!keep[c])
                continue;
            double *qc = q + c * a.n_pct;
            long coord = -1;
            if (segments && !sampler_col) {
                /* The trajectory at n equally spaced times of each chain:
                 * exact for a coordinate, a step function otherwise. */
                coord = coordinate_of(draws, C, &seg, c);
                for (size_t k = 0; k < C; k++) {
                    const drift_stancsv *f = draws[k];
                    const double *base = f->values + f->n_warmup * f->n_cols;
                    size_t xc = coord >= 0 ? (size_t)seg.x0[coord] : c;
                    tr[k] = (drift_trajectory){
                        base + xc,
                        coord >= 0 ? base + (size_t)seg.v[coord] : NULL,
                        base + (size_t)seg.dur, f->n_rows - f->n_warmup,
                        f->n_cols};
                    drift_trajectory_grid(&tr[k], n, x + k * n);
                }
            } else {
                for (size_t k = 0; k < C; k++) {
                    const drift_stancsv *f = draws[k];
                    for (size_t i = 0; i < n; i++)
                        x[k * n + i] = f->values[(f->n_warmup + i) * nc + c];
                }
            }
            if (drift_summary_compute(x, n, C, &stats[c], &e) ||
                drift_summary_quantiles(x, n * C, p01, a.n_pct, qc)) {
                fprintf(stderr, "drift summary: %s\n",
                        e.msg[0] ? e.msg : "out of memory");
                rc = EXIT_RUN_FAILED;
                goto out;
            }
            if (coord >= 0) {
                double mean, var;
                seg_moments(draws, C, tr, (size_t)coord, &mean, &var);
                stats[c].mean = mean;
                stats[c].sd = sqrt(var);
                for (size_t j = 0; j < a.n_pct; j++)
                    qc[j] = drift_trajectory_quantile(tr, C, p01[j]);
            }
            if (sampler_col)
                continue;
            const drift_summary_stats *s = &stats[c];
            fprintf(o, "%-*.*s", width, width, name);
            put_num(o, s->mean, 9);
            put_num(o, s->mcse, 9);
            put_num(o, s->sd, 9);
            for (size_t j = 0; j < a.n_pct; j++)
                put_num(o, qc[j], 9);
            put_count(o, s->ess_bulk, 9);
            put_count(o, s->ess_tail, 9);
            if (isnan(s->rhat))
                fprintf(o, " %7s", "NA");
            else
                fprintf(o, " %7.3f", s->rhat);
            if (a.ksd)
                put_num(o, kout.part[c], 9);
            fputc('\n', o);
        }
        /* The sampler's diagnostic columns, apart. */
        int any_sampler = 0;
        for (size_t c = 0; c < nc; c++)
            any_sampler |= keep[c] && is_sampler_col(draws[0]->names[c]) &&
                           !is_score_col(draws[0]->names[c]);
        if (any_sampler) {
            fprintf(o, "\nsampler columns:\n%-*s %9s %9s %9s %9s %9s\n",
                    width, "", "mean", "sd", "min", "50%", "max");
            for (size_t c = 0; c < nc; c++) {
                if (!keep[c] || !is_sampler_col(draws[0]->names[c]) ||
                    is_score_col(draws[0]->names[c]))
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
        if (a.ksd) {
            fprintf(o, "\nkernel Stein discrepancy (IMQ kernel, c = 1, beta "
                       "= -1/2, on the %zu unconstrained coordinates): "
                       "%.4g\n",
                    kout.d, kout.ksd);
            fprintf(o, "  %zu of the %zu draws (%zu per chain, evenly "
                       "spaced); %s",
                    kout.used, kout.total, kout.used / C, kout.how);
            if (kout.recomputed)
                fprintf(o, " (%zu full-data gradients, %.3g s)", kout.used,
                        kout.t_scores);
            fprintf(o, "; kernel sum over %.0f pairs, %.3g s\n",
                    (double)kout.used * (double)(kout.used - 1) / 2,
                    kout.t_kernel);
            fprintf(o, "  the ksd column: each coordinate's part (KSD^2 is "
                       "the sum of their squares); lp__'s row: the KSD\n");
        }
        /* What to act on, as CmdStan's diagnose says it, about the
         * quantities shown: stats holds nothing for the others. */
        drift_checks chk;
        if (drift_checks_run_selected((const drift_stancsv *const *)draws, C,
                                      n, stats, keep, &chk, &e)) {
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
            fputs("name,mean,mcse,sd", cf);
            for (size_t j = 0; j < a.n_pct; j++)
                fprintf(cf, ",q%g", a.pct[j]);
            fputs(a.ksd ? ",ess_bulk,ess_tail,rhat,ksd\n"
                        : ",ess_bulk,ess_tail,rhat\n",
                  cf);
            for (size_t c = 0; c < nc; c++) {
                if (!keep[c] || is_sampler_col(draws[0]->names[c]))
                    continue;
                const drift_summary_stats *s = &stats[c];
                double v[3 + MAX_PERCENTILES + 4];
                size_t m = 0;
                v[m++] = s->mean;
                v[m++] = s->mcse;
                v[m++] = s->sd;
                for (size_t j = 0; j < a.n_pct; j++)
                    v[m++] = q[c * a.n_pct + j];
                v[m++] = s->ess_bulk;
                v[m++] = s->ess_tail;
                v[m++] = s->rhat;
                if (a.ksd)
                    v[m++] = kout.part[c];
                fputs(draws[0]->names[c], cf);
                for (size_t j = 0; j < m; j++) {
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
    seg_cols_free(&seg);
    free(kout.part);
    free(draws);
    free(metrics);
    free(mlabels);
    free(x);
    free(q);
    free(p01);
    free(tr);
    free(keep);
    free(stats);
    free(a.files);
    return rc;
}
