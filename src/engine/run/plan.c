/* plan.c: a run asked for as a spec, made into a plan: the options parsed
 * by name, drift sample's defaults and checks applied once, the model,
 * data and sampler opened, the run's configuration filled and checked;
 * then run in process, guarded, or as one rank of a run across ranks.
 * The drift command, the tests and libdrift's users all come through
 * here.  Not for the chains themselves (run.c), nor for what a command
 * prints of a run (src/cli). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/mapguard.h"
#include "base/msg.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "engine/data/table.h"
#include "engine/lang/lang_model.h"
#include "engine/stats/checks.h"
#include "emit.h"
#include "guard.h"
#include "hparam.h"
#include "inits.h"
#include "method.h"
#include "pathfinder.h"
#include "plan.h"
#include "progress.h"
#include "run.h"

/* ---- options by name ---------------------------------------------------- */

enum {
    O_MODEL_SET, O_DATA_SET, O_SET, O_BATCH, O_ACCESS, O_PASSES, O_ITER,
    O_SECONDS, O_THIN, O_WARMUP, O_SAVE_WARMUP, O_SEED, O_OUT, O_CHAINS,
    O_GRAD_NOISE, O_MAX_MEMORY, O_INIT, O_QUIET, O_CHAIN_ID, O_TEST,
    O_EVAL_EVERY, O_EMIT, O_THREADS, O_GENERATED_EVERY, O_STEP_TIMEOUT,
    O_CHECKPOINT_EVERY, O_RANKS_PER_CHAIN, O_GRADIENT, O_SAVE_GRADIENTS,
    N_OPTIONS
};

/* drift sample's options that a spec carries, by their long names. */
static const struct {
    const char *name;
    int takes_value;
} options[N_OPTIONS] = {
    [O_MODEL_SET] = {"model-set", 1},
    [O_DATA_SET] = {"data-set", 1},
    [O_SET] = {"set", 1},
    [O_BATCH] = {"batch", 1},
    [O_ACCESS] = {"access", 1},
    [O_PASSES] = {"passes", 1},
    [O_ITER] = {"iter", 1},
    [O_SECONDS] = {"seconds", 1},
    [O_THIN] = {"thin", 1},
    [O_WARMUP] = {"warmup", 1},
    [O_SAVE_WARMUP] = {"save-warmup", 0},
    [O_SEED] = {"seed", 1},
    [O_OUT] = {"out", 1},
    [O_CHAINS] = {"chains", 1},
    [O_GRAD_NOISE] = {"grad-noise", 1},
    [O_MAX_MEMORY] = {"max-memory", 1},
    [O_INIT] = {"init", 1},
    [O_QUIET] = {"quiet", 0},
    [O_CHAIN_ID] = {"chain-id", 1},
    [O_TEST] = {"test", 1},
    [O_EVAL_EVERY] = {"eval-every", 1},
    [O_EMIT] = {"emit", 1},
    [O_THREADS] = {"threads", 1},
    [O_GENERATED_EVERY] = {"generated-every", 1},
    [O_STEP_TIMEOUT] = {"step-timeout", 1},
    [O_CHECKPOINT_EVERY] = {"checkpoint-every", 1},
    [O_RANKS_PER_CHAIN] = {"ranks-per-chain", 1},
    [O_GRADIENT] = {"gradient", 1},
    [O_SAVE_GRADIENTS] = {"save-gradients", 0},
};

static int bad_value(drift_err *e, const char *opt, const char *value,
                     const char *want)
{
    return drift_err_set(e, DRIFT_EINVAL, "%s %s: %s", opt, value, want);
}

static int parse_u64_opt(drift_err *e, const char *opt, const char *v,
                         uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x;
    if (drift_parse_u64(v, &x) || x < lo || x > hi) {
        char want[96];
        snprintf(want, sizeof want, "expected an integer in [%llu, %llu]",
                 (unsigned long long)lo, (unsigned long long)hi);
        return bad_value(e, opt, v, want);
    }
    *out = x;
    return DRIFT_OK;
}

static int parse_pos_double(drift_err *e, const char *opt, const char *v,
                            double *out)
{
    double x;
    if (drift_parse_double(v, &x) || !(x > 0))
        return bad_value(e, opt, v, "expected a positive number");
    *out = x;
    return DRIFT_OK;
}

static int parse_bytes(drift_err *e, const char *opt, const char *v,
                       size_t *out)
{
    char *end;
    double x = strtod(v, &end);
    double mult = 1;
    if (end != v && *end) {
        switch (*end) {
        case 'k': case 'K': mult = 1024.0; break;
        case 'm': case 'M': mult = 1024.0 * 1024; break;
        case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
        default: mult = -1;
        }
        if (end[1] && !(end[1] == 'B' && !end[2]) &&
            !(end[1] == 'i' && end[2] == 'B' && !end[3]))
            mult = -1;
    }
    if (end == v || mult < 0 || !(x > 0) || x * mult > 1e18)
        return bad_value(e, opt, v,
                         "expected a positive size in bytes, e.g. 512M or "
                         "2G");
    *out = (size_t)(x * mult);
    return DRIFT_OK;
}

static int push(drift_err *e, char ***arr, size_t *n, const char *v)
{
    char **p = realloc(*arr, (*n + 1) * sizeof **arr);
    if (!p)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    p[(*n)++] = (char *)v;
    *arr = p;
    return DRIFT_OK;
}

static int gradient_parse(const char *v, int *out)
{
    static const struct { const char *name; int g; } names[] = {
        {"plain", DRIFT_GRADIENT_PLAIN}, {"cv", DRIFT_GRADIENT_CV},
        {"svrg", DRIFT_GRADIENT_SVRG},   {"saga", DRIFT_GRADIENT_SAGA},
        {"tmu", DRIFT_GRADIENT_TMU}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(v, names[k].name)) {
            *out = names[k].g;
            return 0;
        }
    return -1;
}

/* Option idx with value v into a (its message as drift sample's, with
 * the option's dashes). */
static int parse_option(drift_plan_args *a, int idx, const char *v,
                        drift_err *e)
{
    uint64_t x;
    int rc;
    char opt[40];
    snprintf(opt, sizeof opt, "--%s", options[idx].name);
    switch (idx) {
    case O_MODEL_SET: return push(e, &a->model_set, &a->n_model_set, v);
    case O_DATA_SET: return push(e, &a->data_set, &a->n_data_set, v);
    case O_SET: return push(e, &a->set, &a->n_set, v);
    case O_BATCH:
        if ((rc = parse_u64_opt(e, opt, v, 1, (uint64_t)1 << 40, &x)))
            return rc;
        a->batch = (size_t)x;
        return DRIFT_OK;
    case O_ACCESS:
        if (drift_access_parse(v, &a->access))
            return bad_value(e, opt, v, "expected ra, rr or ca");
        return DRIFT_OK;
    case O_PASSES: return parse_pos_double(e, opt, v, &a->passes);
    case O_ITER:
        if ((rc = parse_u64_opt(e, opt, v, 0, (uint64_t)1 << 62, &a->iters)))
            return rc;
        a->warmup_only = a->iters == 0;
        return DRIFT_OK;
    case O_SECONDS: return parse_pos_double(e, opt, v, &a->seconds);
    case O_STEP_TIMEOUT: return parse_pos_double(e, opt, v, &a->step_timeout);
    case O_THIN:
        if ((rc = parse_pos_double(e, opt, v, &a->thin_time)))
            return rc;
        a->have_thin = 1;
        return DRIFT_OK;
    case O_WARMUP:
        a->have_warmup = 1;
        return parse_u64_opt(e, opt, v, 0, (uint64_t)1 << 62, &a->warmup);
    case O_SAVE_WARMUP: a->save_warmup = 1; return DRIFT_OK;
    case O_SAVE_GRADIENTS: a->save_gradients = 1; return DRIFT_OK;
    case O_SEED:
        if ((rc = parse_u64_opt(e, opt, v, 0, UINT64_MAX, &a->seed)))
            return rc;
        a->have_seed = 1;
        return DRIFT_OK;
    case O_OUT: a->out = v; return DRIFT_OK;
    case O_CHAINS:
        if ((rc = parse_u64_opt(e, opt, v, 1, 1024, &x)))
            return rc;
        a->chains = (unsigned)x;
        return DRIFT_OK;
    case O_GRAD_NOISE: {
        double b;
        if (drift_parse_double(v, &b) || b < 0)
            return bad_value(e, opt, v, "expected a non-negative number");
        a->grad_noise = b;
        return DRIFT_OK;
    }
    case O_MAX_MEMORY: return parse_bytes(e, opt, v, &a->max_memory);
    case O_INIT: {
        double r;
        a->init = v;
        a->init_radius = 0;
        if (!drift_parse_double(v, &r)) {
            if (r < 0)
                return bad_value(e, opt, v,
                                 "expected zero, random, a radius >= 0 or "
                                 "a file");
            a->init_radius = r;
        } else if (strcmp(v, "zero") && strcmp(v, "random") &&
                   strcmp(v, "mode") && strcmp(v, "pathfinder") &&
                   access(v, F_OK) != 0) {
            return bad_value(e, opt, v,
                             "no such file; expected zero, random, mode, "
                             "pathfinder, a radius or a JSON/CSV file of "
                             "initial values");
        }
        return DRIFT_OK;
    }
    case O_QUIET: a->quiet = 1; return DRIFT_OK;
    case O_CHAIN_ID:
        if ((rc = parse_u64_opt(e, opt, v, 1, 1u << 30, &x)))
            return rc;
        a->chain_id = (unsigned)x;
        return DRIFT_OK;
    case O_TEST: a->test = v; return DRIFT_OK;
    case O_EVAL_EVERY: return parse_pos_double(e, opt, v, &a->eval_every);
    case O_THREADS:
        if ((rc = parse_u64_opt(e, opt, v, 1, 64, &x)))
            return rc;
        a->threads = (unsigned)x;
        return DRIFT_OK;
    case O_GENERATED_EVERY:
        return parse_u64_opt(e, opt, v, 1, (uint64_t)1 << 62,
                             &a->generated_every);
    case O_CHECKPOINT_EVERY: {
        char *end;
        double t = strtod(v, &end);
        double unit = !*end ? 0 : !strcmp(end, "s") ? 1 : !strcmp(end, "m")
                               ? 60 : !strcmp(end, "h") ? 3600 : -1;
        if (end == v || unit < 0 || !(t > 0) || !isfinite(t))
            return bad_value(e, opt, v,
                             "expected a number of iterations (500) or a "
                             "time (30s, 10m, 1h)");
        if (unit == 0) {
            if (t != floor(t) || t > 1e18)
                return bad_value(e, opt, v,
                                 "expected a whole number of iterations, or "
                                 "a time with its unit (30s, 10m, 1h)");
            a->ckpt_iters = (uint64_t)t;
        } else {
            a->ckpt_seconds = t * unit;
        }
        return DRIFT_OK;
    }
    case O_RANKS_PER_CHAIN:
        if ((rc = parse_u64_opt(e, opt, v, 1, 1u << 20, &x)))
            return rc;
        a->ranks_per_chain = (unsigned)x;
        return DRIFT_OK;
    case O_GRADIENT:
        a->have_gradient = 1;
        if (gradient_parse(v, &a->gradient))
            return bad_value(e, opt, v,
                             "expected plain, cv, svrg, saga or tmu");
        return DRIFT_OK;
    case O_EMIT:
        if (!strcmp(v, "segments"))
            a->emit_segments = 1;
        else if (!strcmp(v, "draws"))
            a->emit_segments = 0;
        else
            return bad_value(e, opt, v, "expected draws or segments");
        return DRIFT_OK;
    }
    return drift_err_set(e, DRIFT_EINTERNAL, "option %d unknown", idx);
}

/* The option named name (its long name, without dashes): its index, or
 * -1 with the message in e. */
static int find_option(const char *name, const char *value, drift_err *e)
{
    if (!name)
        return drift_err_set(e, DRIFT_EINVAL, "an option without a name"),
               -1;
    for (int k = 0; k < N_OPTIONS; k++) {
        if (strcmp(options[k].name, name))
            continue;
        if (options[k].takes_value && !value)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "option --%s needs a value", name),
                   -1;
        if (!options[k].takes_value && value && *value)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "option --%s takes no value (given '%s')",
                                 name, value),
                   -1;
        return k;
    }
    drift_err_set(e, DRIFT_EINVAL,
                  "unknown option --%s (drift sample --help lists them)%s",
                  name,
                  !strcmp(name, "model") || !strcmp(name, "data") ||
                          !strcmp(name, "sampler")
                      ? "; the model, data and sampler are the spec's own "
                        "fields"
                      : "");
    return -1;
}

static void args_free(drift_plan_args *a)
{
    free(a->set);
    free(a->model_set);
    free(a->data_set);
    a->set = a->model_set = a->data_set = NULL;
}

DRIFT_API int drift_spec_check_option(const char *name, const char *value,
                                      drift_err *e)
{
    int idx = find_option(name, value, e);
    if (idx < 0)
        return DRIFT_EINVAL;
    drift_plan_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_option(&a, idx, value, e);
    args_free(&a);
    return rc;
}

/* ---- in-memory rows ----------------------------------------------------- */

/* The length of a column's variable name: "x" of "x.2", "y" of "y". */
static size_t var_len(const char *name)
{
    const char *dot = strchr(name, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

static int same_var(const char *a, const char *b)
{
    size_t n = var_len(a);
    return n == var_len(b) && !strncmp(a, b, n);
}

/* A run of columns of one variable, and whether the variable has columns
 * elsewhere too (given in pieces). */
typedef struct var_run {
    const char *name;
    size_t first, n;
    int pieces;
} var_run;

static int by_var(const void *a, const void *b)
{
    const var_run *x = *(const var_run *const *)a;
    const var_run *y = *(const var_run *const *)b;
    size_t nx = var_len(x->name), ny = var_len(y->name);
    int c = strncmp(x->name, y->name, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

/* Marks the runs whose variable has another run too. */
static void mark_pieces(var_run *runs, size_t n)
{
    var_run **sorted = drift_calloc(n ? n : 1, sizeof *sorted);
    if (!sorted) { /* out of memory: every run copied */
        for (size_t k = 0; k < n; k++)
            runs[k].pieces = 1;
        return;
    }
    for (size_t k = 0; k < n; k++)
        sorted[k] = &runs[k];
    qsort(sorted, n, sizeof *sorted, by_var);
    for (size_t k = 1; k < n; k++)
        if (!by_var(&sorted[k - 1], &sorted[k]))
            sorted[k - 1]->pieces = sorted[k]->pieces = 1;
    drift_free(sorted);
}

/* Whether columns idx[0..n) are one row-major array of doubles, in order
 * (column k at the first's values + k, one stride S >= n): that array is
 * then their table, borrowed; *stride is S. */
static int columns_are_rows(const drift_spec *s, const size_t *idx, size_t n,
                            size_t *stride)
{
    const drift_column *first = &s->columns[idx[0]];
    const double *base = first->values;
    size_t S = first->stride ? first->stride : 1;
    if (S < n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        const drift_column *col = &s->columns[idx[k]];
        if (col->type != DRIFT_COLUMN_DOUBLE || !col->values ||
            (col->stride ? col->stride : 1) != S ||
            (const double *)col->values != base + k)
            return 0;
    }
    *stride = S;
    return 1;
}

/* Copies columns idx[0..n) into a row-major table of n columns, each read
 * through its stride. */
static void copy_table(const drift_spec *s, const size_t *idx, size_t n,
                       double *to)
{
    size_t N = s->n_rows;
    for (size_t k = 0; k < n; k++) {
        const drift_column *col = &s->columns[idx[k]];
        size_t S = col->stride ? col->stride : 1;
        double *t = to + k;
        switch (col->type) {
        case DRIFT_COLUMN_DOUBLE: {
            const double *v = col->values;
            for (size_t r = 0; r < N; r++)
                t[r * n] = v[r * S];
            break;
        }
        case DRIFT_COLUMN_INT: {
            const int *v = col->values;
            for (size_t r = 0; r < N; r++)
                t[r * n] = v[r * S];
            break;
        }
        default: {
            const int64_t *v = col->values;
            for (size_t r = 0; r < N; r++)
                t[r * n] = (double)v[r * S];
            break;
        }
        }
    }
}

/* Table t over columns idx[0..n) (their names at mem_order + at). */
static void add_table(drift_plan *p, const drift_spec *s, const size_t *idx,
                      size_t n, size_t at, const double *values,
                      size_t stride)
{
    for (size_t k = 0; k < n; k++)
        p->mem_order[at + k] = p->mem_names[idx[k]];
    drift_data *d = &p->mem_views[p->n_mem_tables];
    d->struct_size = (uint32_t)sizeof *d;
    d->n_rows = s->n_rows;
    d->n_cols = n;
    d->col_names = p->mem_order + at;
    d->values = values;
    d->row_stride = stride;
    d->source = "(memory)";
    p->mem_tables[p->n_mem_tables++] = d;
}

/* A column of doubles holds finite numbers in its N rows, as a data
 * file's must (NaN and Inf are not data). */
static int check_finite(const drift_column *col, size_t N, drift_err *e)
{
    const double *v = col->values;
    size_t S = col->stride ? col->stride : 1;
    for (size_t r = 0; r < N; r++)
        if (!isfinite(v[r * S]))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "columns: '%s' in row %zu is %g: data must "
                                 "be finite numbers (NaN and Inf are not "
                                 "allowed in data)",
                                 col->name, r + 1, v[r * S]);
    return DRIFT_OK;
}

/* The spec's columns as row-major tables, read like CSV files' rows.  A
 * .drift or .stan model reads each variable's columns (x.1 ... x.D) from
 * the caller's array itself when they are one (columns_are_rows); a C
 * model reads one table, the caller's when all the columns are one array.
 * The other columns are copied into one table, read through their
 * strides. */
static int copy_columns(drift_plan *p, const drift_spec *s, drift_err *e)
{
    size_t C = s->n_columns, N = s->n_rows;
    if (!C)
        return DRIFT_OK;
    if (!s->columns)
        return drift_err_set(e, DRIFT_EINVAL, "columns: %zu columns given "
                                              "without their array", C);
    p->mem_names = drift_calloc(C, sizeof *p->mem_names);
    p->mem_order = drift_calloc(C, sizeof *p->mem_order);
    p->mem_views = drift_calloc(C + 1, sizeof *p->mem_views);
    p->mem_tables = drift_calloc(C + 1, sizeof *p->mem_tables);
    size_t *idx = drift_calloc(2 * C, sizeof *idx);
    if (!p->mem_names || !p->mem_order || !p->mem_views || !p->mem_tables ||
        !idx) {
        drift_free(idx);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    size_t *rest = idx + C; /* the columns copied */
    p->n_mem = C;
    int rc = DRIFT_OK;
    for (size_t c = 0; c < C && !rc; c++) {
        const drift_column *col = &s->columns[c];
        if (!col->name || !*col->name) {
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "columns: column %zu has no name", c + 1);
            break;
        }
        for (size_t k = 0; k < c && !rc; k++)
            if (!strcmp(s->columns[k].name, col->name))
                rc = drift_err_set(e, DRIFT_EINVAL,
                                   "columns: '%s' is given twice (columns "
                                   "%zu and %zu)",
                                   col->name, k + 1, c + 1);
        if (rc)
            break;
        if (!col->values && N)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "columns: column '%s' has no values",
                               col->name);
        else if (col->type != DRIFT_COLUMN_DOUBLE &&
                 col->type != DRIFT_COLUMN_INT &&
                 col->type != DRIFT_COLUMN_INT64)
            rc = drift_err_set(e, DRIFT_EINVAL,
                               "columns: column '%s' has type %d; "
                               "expected DRIFT_COLUMN_DOUBLE, _INT or "
                               "_INT64",
                               col->name, col->type);
        else if (col->type == DRIFT_COLUMN_DOUBLE &&
                 (rc = check_finite(col, N, e)))
            break;
        else if (!(p->mem_names[c] = drift_strdup(col->name)))
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    size_t at = 0, n_rest = 0, stride;
    if (!rc && N && !drift_lang_is_model_file(s->model)) {
        /* a C model: one table */
        for (size_t c = 0; c < C; c++)
            idx[c] = c;
        if (columns_are_rows(s, idx, C, &stride)) {
            add_table(p, s, idx, C, 0, s->columns[0].values, stride);
        } else {
            memcpy(rest, idx, C * sizeof *idx);
            n_rest = C;
        }
    } else if (!rc && N) {
        /* a variable's columns (a run of columns of one name before the
         * dot) at a time; a variable given in pieces is copied whole */
        var_run *runs = drift_calloc(C, sizeof *runs);
        size_t n_runs = 0;
        if (!runs)
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        for (size_t c = 0, n; !rc && c < C; c += n) {
            for (n = 1; c + n < C && same_var(s->columns[c + n].name,
                                              s->columns[c].name);)
                n++;
            runs[n_runs++] = (var_run){s->columns[c].name, c, n, 0};
        }
        if (!rc)
            mark_pieces(runs, n_runs);
        for (size_t r = 0; !rc && r < n_runs; r++) {
            size_t c = runs[r].first, n = runs[r].n;
            for (size_t k = 0; k < n; k++)
                idx[k] = c + k;
            if (!runs[r].pieces && columns_are_rows(s, idx, n, &stride)) {
                add_table(p, s, idx, n, at, s->columns[c].values, stride);
                at += n;
            } else {
                memcpy(rest + n_rest, idx, n * sizeof *idx);
                n_rest += n;
            }
        }
        drift_free(runs);
    } else if (!rc) {
        for (size_t c = 0; c < C; c++)
            rest[c] = c;
        n_rest = C;
    }
    if (!rc && n_rest) {
        if (N && n_rest > SIZE_MAX / sizeof(double) / N)
            rc = drift_err_set(e, DRIFT_ENOMEM, "columns: %zu x %zu values "
                                                "do not fit in memory",
                               N, n_rest);
        else if (!(p->mem_values =
                       drift_malloc((N ? N : 1) * n_rest * sizeof(double))))
            rc = drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        else {
            copy_table(s, rest, n_rest, p->mem_values);
            add_table(p, s, rest, n_rest, at, p->mem_values, n_rest);
        }
    }
    drift_free(idx);
    return rc;
}

/* ---- parse -------------------------------------------------------------- */

/* The options every method takes, read as drift sample reads them. */
static int method_common(const char *name)
{
    static const char *const common[] = {"out", "seed", "model-set",
                                         "data-set"};
    for (size_t k = 0; name && k < sizeof common / sizeof common[0]; k++)
        if (!strcmp(name, common[k]))
            return 1;
    return 0;
}

int drift_plan_parse(const drift_spec *s, drift_plan **out, drift_err *e)
{
    *out = NULL;
    drift_plan *p = drift_calloc(1, sizeof *p);
    if (!p)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    p->out_lock = -1;
    p->diag = stderr;
    p->a.chains = 4;
    p->a.model = s->model;
    p->a.sampler = s->sampler;
    p->method = s->method ? s->method : "sample";
    p->on_draw = s->on_draw;
    p->on_draw_user = s->on_draw_user;
    *out = p;
    if (s->on_message) {
        p->on_message = s->on_message;
        p->on_message_user = s->on_message_user;
        if (!(p->msg = drift_msg_open(s->on_message, s->on_message_user)))
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        p->diag = p->msg;
    }
    if (strcmp(p->method, "sample")) {
        if (!(p->mt = drift_method_find(p->method)))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "method '%s': unknown (the methods: sample, "
                                 "optimize, laplace, log_prob, pathfinder, "
                                 "generate, variational)",
                                 p->method);
        if (s->sampler)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "sampler %s: method %s takes no sampler",
                                 s->sampler, p->mt->name);
        if (!(p->margs = drift_calloc(1, p->mt->args_size)))
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        if (p->mt->defaults)
            p->mt->defaults(p->margs);
    }
    if (s->n_data && !s->data)
        return drift_err_set(e, DRIFT_EINVAL,
                             "data: %zu files given without their array",
                             s->n_data);
    for (size_t k = 0; k < s->n_data; k++) {
        if (p->a.n_data + 1 > DRIFT_PLAN_MAX_DATA)
            return bad_value(e, "--data", s->data[k], "too many data files");
        p->a.data[p->a.n_data++] = s->data[k];
    }
    if (s->n_options && !s->options)
        return drift_err_set(e, DRIFT_EINVAL,
                             "options: %zu given without their array",
                             s->n_options);
    for (size_t k = 0; k < s->n_options; k++) {
        if (p->mt && !method_common(s->options[k].name)) {
            int rc = drift_method_set(p->mt, p->margs, s->options[k].name,
                                      s->options[k].value, e);
            if (rc)
                return rc;
            continue;
        }
        int idx = find_option(s->options[k].name, s->options[k].value, e);
        int rc = idx < 0 ? DRIFT_EINVAL
                         : parse_option(&p->a, idx, s->options[k].value, e);
        if (rc)
            return rc;
        p->out_given |= idx == O_OUT;
    }
    return copy_columns(p, s, e);
}

int drift_plan_check_args(drift_plan *p, drift_err *e)
{
    drift_plan_args *a = &p->a;
    if (p->checked)
        return DRIFT_OK;
    p->checked = 1;
    p->sampler_given = a->sampler != NULL;
    if (!a->sampler)
        a->sampler = "nuts";
    for (size_t k = 0; k < a->n_set; k++)
        if (!strncmp(a->set[k], "batch=", 6))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--set %s: the minibatch size is the "
                                 "engine's option: use --batch %s",
                                 a->set[k], a->set[k] + 6);
    if (a->out && !*a->out)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--out: an empty file name; give the name of "
                             "the draws file");
    /* Draws to a callback alone unless out was given. */
    if (!a->out && !p->on_draw)
        a->out = "output.csv";
    return DRIFT_OK;
}

/* ---- open --------------------------------------------------------------- */

int drift_plan_check_outputs(const drift_plan *p, drift_err *e)
{
    const drift_plan_args *a = &p->a;
    const char *out = a->out;
    if (!out)
        return DRIFT_OK;
    const char *inputs[16];
    size_t n = 0;
    for (size_t k = 0; k < a->n_data; k++)
        inputs[n++] = a->data[k];
    inputs[n++] = a->model;
    inputs[n++] = a->sampler;
    inputs[n++] = a->init;
    inputs[n++] = a->test;
    /* The name as given, too, where the chains' files are derived from
     * it (out_1.csv ...): out /dev/full, a FIFO or a directory is a
     * mistake however many chains there are, and out_1 beside a device
     * would land in /dev.  That name is not written itself, so it may be
     * an input's: out lin.csv beside data lin.csv writes lin_1.csv ...
     * (each checked against the inputs below). */
    if (a->chains > 1 && drift_writer_check_kind(out, NULL, 0, e)) {
        drift_err_prefix(e, "--out");
        return DRIFT_EINVAL;
    }
    unsigned first = a->chain_id ? a->chain_id : 1;
    for (unsigned k = 0; k < a->chains; k++) {
        char path[4096], mpath[4200];
        drift_chain_path(out, a->chains, first + k, path, sizeof path);
        int rc = drift_writer_check(path, inputs, n, e);
        if (!rc && a->test) {
            drift_heldout_path(path, mpath, sizeof mpath);
            rc = drift_writer_check(mpath, inputs, n, e);
        }
        if (rc) {
            drift_err_prefix(e, "--out");
            return DRIFT_EINVAL;
        }
    }
    return DRIFT_OK;
}

/* Whether a sampler adapts in warmup (so that warmup is more than
 * burn-in): one with a phase callback, or one of the ABI-1 samplers that
 * adapt on in_warmup alone (their hyperparameter adapt_delta says so). */
static int sampler_adapts(const drift_sampler *s)
{
    return drift_hparams_find(s->hparams, s->n_hparams, "adapt_delta") >= 0 ||
           drift_hparams_find(s->hparams, s->n_hparams, "delta") >= 0;
}

/* A chain of the engine's plan spends at most this many data passes; a
 * continuous sampler's (sbps, psbps) more: their effective draws cost
 * several times a discrete integrator's rows (at N = 10^6, d = 50 about
 * 130 passes a chain reach the plan's target, where 100 left them at a
 * third of it, the largest mean error 0.13 sd), and the cap is only a
 * guard against a pilot's autocorrelation time gone wild. */
#define PLAN_MAX_PASSES 100.0
#define PLAN_MAX_PASSES_CONTINUOUS 400.0

/* Whether the engine plans the run (see drift_plan_open): a minibatch
 * sampler (not full-data) on a model with rows, in one process, whose
 * step size the user left to the engine (hp holds NaN there), or, for a
 * continuous one, whose budget and output step the user left to it. */
static int plan_applies(const drift_sampler *s, const double *hp,
                        size_t n_rows, int ranks_on, int budget_given,
                        int thin_given)
{
    if (s->flags & DRIFT_SAMPLER_FULL_DATA)
        return 0;
    if (n_rows == 0 || ranks_on)
        return 0;
    /* A continuous sampler has no step size: the plan is its length and
     * output time step, and takes the run when neither was given. */
    if (s->flags & DRIFT_SAMPLER_CONTINUOUS)
        return !budget_given && !thin_given;
    long k = drift_hparams_step_size(s->hparams, s->n_hparams);
    return k >= 0 && isnan(hp[k]);
}

/* Whether a step size the user gave is checked (see drift_run_config's
 * plan): a discrete minibatch sampler on a model with rows, in one
 * process, with its step size given. */
static int check_applies(const drift_sampler *s, const double *hp,
                         size_t n_rows, int ranks_on)
{
    if (s->flags & (DRIFT_SAMPLER_FULL_DATA | DRIFT_SAMPLER_CONTINUOUS))
        return 0;
    if (n_rows == 0 || ranks_on)
        return 0;
    long k = drift_hparams_step_size(s->hparams, s->n_hparams);
    return k >= 0 && !isnan(hp[k]);
}

/* Prints the registry's problems from *from on, and moves *from past
 * them (lookups add problems as they open files). */
static void print_problems_from(drift_plan *p, size_t *from)
{
    size_t k = *from;
    for (; k < drift_registry_n_problems(p->reg); k++)
        fprintf(p->diag, "drift: warning: %s\n",
                drift_registry_problem(p->reg, k));
    *from = k;
}

/* The names of the rows on_row delivers (emit.c's write_row: lp__,
 * grads__, the sampler's columns, the model's values, its generated
 * quantities, the scores). */
static int name_columns(drift_plan *p, drift_err *e)
{
    const drift_sampler *s = &p->sampler;
    const drift_model *m = &p->prob.model;
    size_t d = m->dim;
    size_t n = 2 + drift_chain_n_diag(s, d) + m->n_out + m->n_gen +
               (p->a.save_gradients ? d : 0);
    p->columns = drift_calloc(n, sizeof *p->columns);
    if (!p->columns)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    size_t k = 0;
    char buf[256];
#define NAME(...)                                                         \
    do {                                                                  \
        snprintf(buf, sizeof buf, __VA_ARGS__);                           \
        if (!(p->columns[k++] = drift_strdup(buf)))                       \
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");       \
    } while (0)
    p->n_columns = n;
    NAME("lp__");
    NAME("grads__");
    for (size_t c = 0; c < s->n_columns; c++) {
        const char *name = s->columns[c];
        if (!drift_chain_column_is_vector(name)) {
            NAME("%s", name);
            continue;
        }
        int stem = (int)(strlen(name) - 4);
        for (size_t j = 0; j < d; j++)
            NAME("%.*s_%zu__", stem, name, j + 1);
    }
    for (size_t c = 0; c < m->n_out; c++)
        NAME("%s", m->out_names[c]);
    for (size_t c = 0; c < m->n_gen; c++)
        NAME("%s", m->gen_names[c]);
    for (size_t c = 0; p->a.save_gradients && c < d; c++)
        NAME("grad_lp_%zu__", c + 1);
#undef NAME
    return DRIFT_OK;
}

/* The user's callback, one row at a time. */
static pthread_mutex_t draw_lock = PTHREAD_MUTEX_INITIALIZER;

static void deliver_row(void *user, unsigned chain_id, int warmup,
                        const double *row, size_t n)
{
    drift_plan *p = user;
    unsigned flags = warmup ? DRIFT_DRAW_WARMUP : 0;
    pthread_mutex_lock(&draw_lock);
    p->on_draw(p->on_draw_user, chain_id, flags, row, n);
    pthread_mutex_unlock(&draw_lock);
}

/* An allocation failed: a failed run, said by its status alone. */
static int oom(drift_plan *p, drift_err *e)
{
    p->failed_run = 1;
    if (e)
        e->msg[0] = 0;
    return DRIFT_ENOMEM;
}

/* A hook's failure: its status, a message set unless the hook said it. */
static int hook_failed(int rc)
{
    return rc ? rc : DRIFT_EINVAL;
}

/* Opens a method's plan: its checks, its output checked and locked, the
 * model over its data, its rows' names. */
static int method_open(drift_plan *p, drift_err *e)
{
    drift_plan_args *a = &p->a;
    const drift_method *mt = p->mt;
    int rc;
    if (mt->check && (rc = mt->check(p->margs, e)))
        return rc;
    if (!a->model)
        return drift_err_set(e, DRIFT_EINVAL,
                             "no model given: give a model file "
                             "(model.drift) or --model NAME");
    size_t n = 0;
    for (size_t k = 0; k < a->n_data; k++)
        p->method_inputs[n++] = a->data[k];
    p->method_inputs[n++] = a->model;
    n += drift_method_inputs(mt, p->margs, p->method_inputs + n,
                             DRIFT_MFILES_MAX + 16);
    p->n_method_inputs = n;
    if (mt->own_outputs &&
        (rc = mt->check_outputs(p->margs, a->out, p->method_inputs, n, e)))
        return rc;
    if (a->out) {
        if (!mt->own_outputs &&
            drift_writer_check(a->out, p->method_inputs, n, e)) {
            drift_err_prefix(e, "--out");
            return DRIFT_EINVAL;
        }
        /* One run at a time writes an output. */
        if (drift_writer_lock_set(a->out, &p->out_lock, e)) {
            drift_err_prefix(e, "--out");
            return DRIFT_EINVAL;
        }
    }
    if (!(p->reg = drift_registry_new())) {
        p->failed_run = 1;
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    a->data[a->n_data] = NULL;
    if (!a->have_seed)
        a->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    drift_problem_spec spec = {
        .model = a->model, .data = a->data, .model_set = a->model_set,
        .n_model_set = a->n_model_set, .data_set = a->data_set,
        .n_data_set = a->n_data_set, .diag = p->diag, .share = NULL,
        .tables = p->n_mem_tables ? p->mem_tables : NULL,
        .n_tables = p->n_mem_tables};
    size_t shown = 0;
    rc = drift_problem_open(&p->prob, p->reg, &spec, e);
    print_problems_from(p, &shown);
    if (rc) {
        p->failed_run = drift_mapguard_any();
        return rc;
    }
    if (p->prob.model.dim == 0 && !mt->no_params_ok)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model has no parameters: nothing for %s "
                             "to do; drift sample draws its generated "
                             "quantities (with fixed_param)",
                             mt->name);
    return mt->columns(p->margs, &p->prob.model, &p->columns, &p->n_columns,
                       e);
}

int drift_plan_run_method(drift_plan *p, drift_err *e)
{
    if (!p->mt || !p->opened || p->ran)
        return drift_err_set(e, DRIFT_EINVAL, p->ran ? "the plan has run "
                                                       "already"
                                                     : "the plan is not "
                                                       "open");
    p->ran = 1;
    char who[64];
    snprintf(who, sizeof who, "drift %s",
             strcmp(p->mt->name, "log_prob") ? p->mt->name : "log-prob");
    drift_method_run r = {.m = &p->prob.model,
                          .model = p->a.model,
                          .data = p->a.data,
                          .n_data = p->a.n_data,
                          .seed = p->a.seed,
                          .seed_given = p->a.have_seed,
                          .out = p->a.out,
                          .inputs = p->method_inputs,
                          .n_inputs = p->n_method_inputs,
                          .diag = p->diag,
                          .who = who,
                          .columns = p->columns,
                          .n_columns = p->n_columns,
                          .on_draw = p->on_draw,
                          .on_draw_user = p->on_draw_user};
    drift_writer *w = NULL;
    int rc;
    if (p->mt->own_outputs) {
        /* its files its own */
    } else if (p->a.out) {
        if ((rc = drift_writer_open(p->a.out, &w, e))) {
            p->failed_run = 1;
            return rc;
        }
        r.f = drift_writer_file(w);
    } else if (p->to_stdout) {
        r.f = stdout;
    }
    rc = p->mt->run(p->margs, &r, e);
    if (w) {
        /* a run that failed has its file put in place only when it kept
         * it; the run's error is told before the file's */
        drift_err we = {{0}};
        int wrc = drift_method_file_end(w, rc && !r.keep, &we);
        if (wrc && !rc) {
            *e = we;
            rc = wrc;
        }
    } else if (r.f && fflush(r.f) && !rc) {
        rc = drift_err_set(e, DRIFT_EIO, "stdout: write failed");
    }
    p->failed_run = rc && rc != DRIFT_EINVAL && rc != DRIFT_EDATA;
    p->run_rc = rc;
    p->method_rows = r.rows;
    return rc;
}

/* The sampler p->sampler (copied from se) made the run's: its path, and
 * its hyperparameters from the set options (those of a sampler used
 * before are dropped). */
static int use_sampler(drift_plan *p, const drift_sampler_entry *se,
                       drift_err *e)
{
    const drift_sampler *sampler = &p->sampler;
    snprintf(p->sampler_path, sizeof p->sampler_path, "%s", se->path);
    drift_free(p->hp);
    drift_free(p->hp_set);
    p->hp = drift_calloc(sampler->n_hparams + 1, sizeof *p->hp);
    p->hp_set = drift_calloc(sampler->n_hparams + 1, 1);
    if (!p->hp || !p->hp_set)
        return oom(p, e);
    char who[96];
    snprintf(who, sizeof who, "sampler %s", sampler->name);
    return drift_hparams_apply(sampler->hparams, sampler->n_hparams, "--set",
                               who, p->a.set, p->a.n_set, p->hp, p->hp_set,
                               e);
}

/* An in-process caller's opened problem and hooks (below). */
static int internal_problem(drift_plan *p, drift_err *e);
static int internal_config(drift_plan *p, drift_err *e);

int drift_plan_open(drift_plan *p, const drift_plan_hooks *h, drift_err *e)
{
    static const drift_plan_hooks none = {0};
    drift_plan_args *a = &p->a;
    int rc;
    if (!h)
        h = &none;
    if (p->opened)
        return drift_err_set(e, DRIFT_EINVAL, "the plan is opened already");
    p->opened = 1;
    if (p->mt)
        return method_open(p, e);
    if ((rc = drift_plan_check_args(p, e)))
        return rc;
    if (a->ranks_per_chain && !p->ranks_on)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--ranks-per-chain %u: for a run across MPI "
                             "ranks (mpirun -n P drift sample ...)",
                             a->ranks_per_chain);
    /* Across ranks, the groups' writers alone write files. */
    if ((!p->ranks_on || p->ranks_writer) &&
        (rc = drift_plan_check_outputs(p, e)))
        return rc;
    /* One run at a time writes an output set, from here until its files
     * are in place (a run across ranks has several writers of one set). */
    if (!p->ranks_on && a->out &&
        drift_writer_lock_set(a->out, &p->out_lock, e)) {
        drift_err_prefix(e, "--out");
        return DRIFT_EINVAL;
    }
    p->reg = p->internal ? p->in.reg : drift_registry_new();
    if (!p->reg) {
        p->failed_run = 1;
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    /* A plugin given by path is vetted before it is loaded. */
    if (h->vet_plugin &&
        ((rc = h->vet_plugin(h->user, p, "sampler", a->sampler, e)) ||
         (a->model && !drift_lang_is_model_file(a->model) &&
          (rc = h->vet_plugin(h->user, p, "model", a->model, e)))))
        return hook_failed(rc);
    /* No scan: the sampler and model are looked up by name, which opens
     * NAME.so alone when it exists (plugin.h). */
    size_t shown = 0;
    const drift_sampler_entry *se;
    rc = drift_registry_sampler(p->reg, a->sampler, &se, e);
    print_problems_from(p, &shown);
    if (rc)
        return rc;
    /* Copy what we need: later loads may move the registry's arrays. */
    p->sampler = se->s;
    drift_sampler *sampler = &p->sampler;
    /* A continuous sampler's time step, before any work (emit.h): a
     * tiny one flooded the disk, or (1e-300) could not advance the
     * trajectory's clock, and failed only once the run was under way. */
    if ((sampler->flags & DRIFT_SAMPLER_CONTINUOUS) && a->have_thin &&
        !a->emit_segments && a->thin_time < DRIFT_EMIT_MIN_TIME_STEP)
        return drift_err_set(
            e, DRIFT_EINVAL,
            "--thin %g: sampler %s is continuous, and --thin is its output "
            "time step, which must be at least %g: the sampler moves at "
            "about one posterior sd per unit of time, so draws closer "
            "together are all but the same draw, and a smaller step writes "
            "more than %.0f rows per unit of time; give a larger --thin, or "
            "--emit segments for the trajectory itself",
            a->thin_time, sampler->name, DRIFT_EMIT_MIN_TIME_STEP,
            1 / DRIFT_EMIT_MIN_TIME_STEP);
    if ((rc = use_sampler(p, se, e)))
        return rc;
    a->data[a->n_data] = NULL;
    if (!a->have_seed)
        a->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (h->before_data && (rc = h->before_data(h->user, p, e)))
        return hook_failed(rc);
    drift_problem_spec spec = {
        .model = a->model, .data = a->data, .model_set = a->model_set,
        .n_model_set = a->n_model_set, .data_set = a->data_set,
        .n_data_set = a->n_data_set, .diag = p->diag, .share = p->share,
        .tables = p->n_mem_tables ? p->mem_tables : NULL,
        .n_tables = p->n_mem_tables};
    rc = p->internal ? internal_problem(p, e)
                     : drift_problem_open(&p->prob, p->reg, &spec, e);
    print_problems_from(p, &shown);
    if (rc) {
        /* A data file that changed while it was read is a failed run,
         * not bad input. */
        p->failed_run = drift_mapguard_any();
        return rc;
    }
    drift_problem *prob = &p->prob;
    /* A model without parameters only simulates: fixed_param draws its
     * generated block at every iteration.  It is the default there, as in
     * CmdStan; another sampler named is refused. */
    if (prob->model.dim == 0 && !(sampler->flags & DRIFT_SAMPLER_FIXED)) {
        if (p->sampler_given)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "sampler %s: the model has no parameters, "
                                 "so there is nothing to sample: use "
                                 "--sampler fixed_param, which draws its "
                                 "generated quantities at every iteration",
                                 sampler->name);
        if ((rc = drift_registry_sampler(p->reg, "fixed_param", &se, e)))
            return rc;
        p->sampler = se->s;
        a->sampler = "fixed_param";
        if ((rc = use_sampler(p, se, e)))
            return rc;
        if (!a->quiet)
            fprintf(p->diag, "drift: the model has no parameters: sampling "
                             "with fixed_param (its generated quantities "
                             "at every iteration), as CmdStan does\n");
    }
    if (a->have_thin) {
        if (sampler->flags & DRIFT_SAMPLER_CONTINUOUS)
            a->thin = 1;
        else if (a->thin_time != floor(a->thin_time))
            return bad_value(e, "--thin", "",
                             "expected a whole number of draws for a "
                             "discrete-time sampler");
        else
            a->thin = (uint64_t)a->thin_time;
    } else {
        a->thin = 1;
        a->thin_time = 0;
    }
    /* A Stan program whose rows could not be found was lowered whole:
     * a minibatch sampler would "subsample" its one datum, a
     * full-gradient run without the full-gradient samplers' exactness. */
    const char *whole = prob->lang_path ? drift_lang_whole_why(&prob->model)
                                        : NULL;
    if (whole && !(sampler->flags & DRIFT_SAMPLER_FULL_DATA))
        return drift_err_set(
            e, DRIFT_EINVAL,
            "--sampler %s subsamples rows, but %s has none: its data are "
            "one datum because %s; use a full-gradient sampler (nuts, the "
            "default, or mala), or write the model so that each row's "
            "terms stand alone (doc/from-stan.md)",
            sampler->name, prob->lang_path, whole);
    /* A minibatch sampler whose step size is left to the engine runs by
     * the engine's plan (engine/run/biascheck.h): the mode first (the
     * chains start from a draw of its Laplace approximation, and the
     * step-size check measures in its units), control variates there
     * unless the sampler builds its own estimates or --gradient was
     * given, the step size by the bias check, and whatever of the
     * burn-in, iterations and thinning the user did not give sized for
     * the target effective sample size. */
    int unplanned = p->ranks_on || (p->internal && p->in.unplanned);
    int planned = plan_applies(sampler, p->hp, prob->model.n_rows,
                               unplanned,
                               a->iters || a->passes > 0 || a->seconds > 0 ||
                                   a->warmup_only,
                               a->have_thin);
    int plan_budget = planned && !a->iters && a->passes <= 0 &&
                      a->seconds <= 0 && !a->warmup_only;
    /* The plan runs minibatches of at least DRIFT_DEFAULT_BATCH rows: a
     * sampler whose own default is smaller (ewsg's single index, the
     * paper's b = 1) pays a step's fixed cost for each row, and ewsg's
     * index selection biases its draws in proportion to the minibatch
     * noise, 1/b (N = 10^5, d = 20: sds 8-14 % narrow at b = 1, warned;
     * right at b = 10 in a fifteenth of the time).  --batch overrides. */
    if (planned && !a->batch && sampler->default_batch &&
        sampler->default_batch < DRIFT_DEFAULT_BATCH)
        a->batch = DRIFT_DEFAULT_BATCH;
    if (planned && !a->have_gradient &&
        !(sampler->flags & (DRIFT_SAMPLER_OWN_ESTIMATES |
                            DRIFT_SAMPLER_PICKS_ESTIMATOR)))
        a->gradient = DRIFT_GRADIENT_CV;
    /* CmdStan's defaults: 1000 warmup iterations, then 1000 draws.  A
     * budget in data passes or seconds is the minibatch samplers' way of
     * running, and their warmup stays 0 there unless the sampler adapts. */
    int iter_budget = a->passes <= 0 && a->seconds <= 0;
    if (!a->iters && iter_budget && !a->warmup_only)
        a->iters = 1000;
    if (!a->have_warmup)
        a->warmup = sampler->flags & DRIFT_SAMPLER_FIXED              ? 0
                    : iter_budget || sampler_adapts(sampler) ? 1000
                                                             : 0;
    /* Under --gradient cv, or the plan, chains start near the mode unless
     * told. */
    p->init_mode = (a->gradient == DRIFT_GRADIENT_CV || planned) && !a->init
                       ? DRIFT_INIT_MODE
                       : DRIFT_INIT_RANDOM;
    if (a->init && !strcmp(a->init, "mode")) {
        if (a->gradient != DRIFT_GRADIENT_CV && !planned)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--init mode: needs --gradient cv (the "
                                 "mode it starts from is cv's)");
        p->init_mode = DRIFT_INIT_MODE;
    } else if (a->init && !strcmp(a->init, "pathfinder")) {
        /* chain id k starts at draw k - 1 of one Pathfinder run */
        p->init_mode = DRIFT_INIT_POINTS;
        size_t ids = (size_t)(a->chain_id ? a->chain_id : 1) + a->chains - 1;
        if ((rc = drift_pathfinder_inits(&prob->model, a->seed, ids,
                                         &p->init_points, e))) {
            char why[sizeof e->msg];
            snprintf(why, sizeof why, "%s", e->msg);
            return drift_err_set(e, rc, "--init pathfinder: %s (give --init "
                                        "random or a file)",
                                 why);
        }
    } else if (a->init && (!strcmp(a->init, "zero") ||
                           (a->init_radius == 0 &&
                            !drift_parse_double(a->init, &(double){0})))) {
        p->init_mode = DRIFT_INIT_ZERO;
    } else if (a->init && strcmp(a->init, "random") &&
               drift_parse_double(a->init, &(double){0})) {
        p->init_mode = DRIFT_INIT_VALUES;
        p->init_values = drift_calloc(prob->model.n_out + 1,
                                      sizeof *p->init_values);
        p->init_given = drift_calloc(prob->model.n_out + 1, 1);
        if (!p->init_values || !p->init_given)
            return oom(p, e);
        if ((rc = drift_inits_read_partial(a->init, &prob->model,
                                           p->init_values, p->init_given,
                                           e))) {
            char why[sizeof e->msg];
            snprintf(why, sizeof why, "%s", e->msg);
            return drift_err_set(e, rc, "--init %s", why);
        }
    }
    if (a->eval_every > 0 && !a->test)
        return drift_err_set(e, DRIFT_EINVAL,
                             "--eval-every needs --test FILE");
    /* Across ranks, the groups' writers alone evaluate the held-out set. */
    int writer = !p->ranks_on || p->ranks_writer;
    if (a->test && writer &&
        (rc = drift_heldout_set_open(&p->test, prob, a->test, e)))
        return rc;
    if (h->after_data && (rc = h->after_data(h->user, p, e)))
        return hook_failed(rc);
    /* A checkpoint's directory and manifest are the front end's (the
     * drift command's, which resumes from them). */
    if ((a->ckpt_iters || a->ckpt_seconds > 0) && !p->ckpt_dir[0])
        return drift_err_set(e, DRIFT_EINVAL,
                             "--checkpoint-every: checkpoints are resumed "
                             "by the drift command (drift sample --resume "
                             "DIR); run it there");

    /* This process's chains: all, or its rank group's. */
    unsigned K_here = p->ranks_on ? p->ranks_count : a->chains;
    p->n_results = K_here;
    p->results = drift_calloc(K_here ? K_here : 1, sizeof *p->results);
    if (!p->results)
        return oom(p, e);
    size_t nh = 0;
    for (size_t k = 0; k < prob->n_header && nh < 20; k++)
        p->header[nh++] = prob->header[k];
    for (size_t k = 0; p->ranks_on && k < 2; k++)
        if (p->ranks_header[k])
            p->header[nh++] = p->ranks_header[k];
    p->header[nh] = NULL;
    if ((rc = name_columns(p, e)))
        return oom(p, e);

    p->cfg = (drift_run_config){
        .problem.model = &prob->model,
        .problem.data = drift_problem_data(prob),
        .step.sampler = sampler,
        .step.sampler_path = p->sampler_path,
        .step.hp = p->hp,
        .step.hp_set = p->hp_set,
        .step.batch = a->batch,
        .step.access = a->access,
        .budget.iters = a->iters,
        .budget.passes = a->passes,
        .budget.seconds = a->seconds,
        .budget.thin = a->thin,
        .budget.thin_time = a->thin_time,
        .output.generated_every = a->generated_every,
        .budget.warmup = a->warmup,
        .output.save_warmup = a->save_warmup,
        .launch.seed = a->seed,
        .launch.chains = a->chains,
        .step.grad_noise = a->grad_noise,
        .step.max_memory = a->max_memory,
        .launch.first_chain_id = a->chain_id ? a->chain_id : 1,
        .init.mode = p->init_mode,
        .init.values = p->init_values,
        .init.points = p->init_points,
        .init.given = p->init_given,
        .init.radius = a->init_radius,
        .init.path = p->init_mode == DRIFT_INIT_VALUES ? a->init : NULL,
        .output.path = a->out,
        .output.header = p->header,
        .output.quiet = a->quiet,
        .output.progress = a->quiet ? 0
                    : !p->msg && isatty(STDERR_FILENO) ? DRIFT_PROGRESS_LINE
                                                       : DRIFT_PROGRESS_LOG,
        .output.on_row = p->on_draw ? deliver_row : NULL,
        .output.on_row_user = p,
        .heldout.model = a->test && writer ? &p->test.model : NULL,
        .heldout.path = a->test,
        .heldout.every = a->eval_every,
        .output.emit_segments = a->emit_segments,
        .problem.path = a->n_data ? a->data[0] : NULL,
        .step.full_threads = a->threads,
        .budget.warmup_only = a->warmup_only,
        .ckpt.dir = p->ckpt_dir[0] ? p->ckpt_dir : NULL,
        .ckpt.iters = a->ckpt_iters,
        .ckpt.seconds = a->ckpt_seconds,
        .ckpt.resume = p->resume,
        .ranks = p->ranks_on ? p->ranks : NULL,
        .step.gradient = a->gradient,
        .output.save_gradients = a->save_gradients,
        .plan = {planned, planned, plan_budget, planned && !a->have_warmup,
                 planned && !a->have_thin,
                 check_applies(sampler, p->hp, prob->model.n_rows,
                               unplanned),
                 (sampler->flags & DRIFT_SAMPLER_CONTINUOUS)
                     ? PLAN_MAX_PASSES_CONTINUOUS
                     : PLAN_MAX_PASSES},
    };
    /* A mapped row store (read by a C plugin, or by a .drift model as its
     * rows): tell the kernel how it will be read, and read ahead. */
    const drift_table *rows_table =
        prob->table ? prob->table
                    : prob->lang_path ? drift_lang_rows_table(&prob->model)
                                      : NULL;
    if (rows_table && rows_table->kind == DRIFT_TABLE_ROWSTORE) {
        p->cfg.problem.mapped = 1;
        p->cfg.problem.fd = rows_table->rs.fd;
        p->cfg.problem.map = rows_table->rs.map;
        drift_table_advise(rows_table, a->access == DRIFT_ACCESS_CA);
    }
    if (p->internal && (rc = internal_config(p, e)))
        return rc;
    /* Every refusal of the run, before anything starts; a rank's are
     * made by drift_run, after the job's gates, so that the ranks stay
     * together. */
    return p->ranks_on ? DRIFT_OK : drift_run_check(&p->cfg, e);
}

/* ---- in-process callers holding an opened problem ----------------------- */

/* The caller's opened problem made the plan's (a copy of the struct; what
 * it points to stays the caller's, and drift_plan_free leaves it open). */
static int internal_problem(drift_plan *p, drift_err *e)
{
    if (!p->in.prob || !p->in.prob->have_model)
        return drift_err_set(e, DRIFT_EINVAL, "no opened problem given");
    p->prob = *p->in.prob;
    return DRIFT_OK;
}

/* A plan from spec, over in's opened problem when in is not NULL: parsed,
 * then opened with the spec's message callback (if any) taking the
 * messages; *out the plan, or NULL with the error in e. */
static int plan_new(const drift_spec *spec, const drift_plan_internal *in,
                    drift_plan **out, drift_err *e)
{
    drift_plan *p;
    int rc = drift_plan_parse(spec, &p, e);
    if (p && in) {
        p->internal = 1;
        p->in = *in;
    }
    if (!rc) {
        FILE *was = p->msg ? drift_msg_set(p->msg) : NULL;
        rc = drift_plan_open(p, NULL, e);
        if (p->msg) {
            fflush(p->msg);
            drift_msg_set(was);
        }
    }
    if (rc) {
        if (!e->msg[0])
            drift_err_set(e, rc, "out of memory");
        drift_plan_free(p);
        return rc;
    }
    *out = p;
    return DRIFT_OK;
}

/* The caller's hooks into the filled configuration: what no option
 * says. */
static int internal_config(drift_plan *p, drift_err *e)
{
    const drift_plan_internal *in = &p->in;
    drift_run_config *cfg = &p->cfg;
    if (in->init_values) {
        if (p->a.init)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "--init %s: initial values are given in "
                                 "memory too; give one or the other",
                                 p->a.init);
        cfg->init.mode = DRIFT_INIT_VALUES;
        cfg->init.values = in->init_values;
        cfg->init.given = in->init_given;
        cfg->init.path = NULL;
    }
    cfg->output.on_trajectory = in->on_trajectory;
    cfg->output.on_trajectory_user = in->on_trajectory_user;
    cfg->launch.parallel = in->parallel;
    return DRIFT_OK;
}

int drift_plan_new_internal(const drift_spec *spec,
                            const drift_plan_internal *in, drift_plan **out,
                            drift_err *e)
{
    *out = NULL;
    if (!spec || !in || !in->reg || !in->prob)
        return drift_err_set(e, DRIFT_EINVAL,
                             "no spec, registry or opened problem given");
    if (spec->model || spec->n_data || spec->n_columns ||
        (spec->method && strcmp(spec->method, "sample")))
        return drift_err_set(e, DRIFT_EINVAL,
                             "a plan over an opened problem takes no model, "
                             "data or method of its own");
    return plan_new(spec, in, out, e);
}

/* ---- run ---------------------------------------------------------------- */

int drift_plan_launch(drift_plan *p, int launcher, int *watched,
                      int *exit_status, drift_err *e)
{
    *watched = 0;
    *exit_status = 0;
    if (!p->opened || !p->results)
        return drift_err_set(e, DRIFT_EINVAL, "the plan is not open");
    if (p->ran)
        return drift_err_set(e, DRIFT_EINVAL, "the plan has run already");
    p->ran = 1;
    if (launcher == DRIFT_LAUNCH_GUARDED && (p->on_draw || p->msg))
        return drift_err_set(e, DRIFT_EINVAL,
                             "a guarded run delivers its draws to files "
                             "and its messages to stderr alone: its chains "
                             "run in a child process; run in process for a "
                             "callback");
    if (launcher != DRIFT_LAUNCH_IN_PROCESS) {
        /* SIGINT, SIGTERM, SIGHUP: the chains stop after their step and
         * the draws so far are committed; a second signal ends the
         * process at once (base/stop.h), leaving no temporary file. */
        drift_stop_catch();
    }
    if (launcher == DRIFT_LAUNCH_GUARDED) {
        /* The run in a child process, watched from this one (guard.h):
         * a sampler that crashes, exits or hangs loses no draws.  The
         * guard's parent receives every chain's draws file too: the
         * limit on open files is raised (drift_run checks it) before the
         * fork, for both. */
        uint64_t max_files;
        drift_files_reserve(4ull * p->a.chains + 16, &max_files);
        drift_guard_config gc = {p->a.chains, p->cfg.launch.first_chain_id,
                                 p->sampler.name, p->a.step_timeout, NULL,
                                 0};
        drift_err ge = {{0}};
        if (drift_guard_start(&gc, watched, exit_status, &ge))
            fprintf(p->diag, "drift: warning: %s\n", ge.msg);
        if (*watched) {
            drift_stop_uncatch();
            return DRIFT_OK;
        }
    }
    p->run_rc = drift_run(&p->cfg, p->results, e);
    /* e is the caller's, read only when the run failed */
    snprintf(p->run_msg, sizeof p->run_msg, "%s", p->run_rc ? e->msg : "");
    if (launcher != DRIFT_LAUNCH_IN_PROCESS)
        drift_stop_uncatch();
    return p->run_rc;
}

void drift_plan_reported(int exit_status)
{
    drift_guard_child_done(exit_status);
}

/* ---- the public calls --------------------------------------------------- */

DRIFT_API unsigned drift_api_version(void)
{
    return DRIFT_API_VERSION;
}

DRIFT_API const char *drift_version(void)
{
    return PACKAGE_VERSION;
}

DRIFT_API int drift_plan_new(const drift_spec *spec, drift_plan **out,
                             drift_err *e)
{
    *out = NULL;
    if (!spec)
        return drift_err_set(e, DRIFT_EINVAL, "no spec given");
    return plan_new(spec, NULL, out, e);
}

DRIFT_API size_t drift_plan_n_columns(const drift_plan *p)
{
    return p->n_columns;
}

DRIFT_API const char *drift_plan_column_name(const drift_plan *p, size_t k)
{
    return k < p->n_columns ? p->columns[k] : NULL;
}

DRIFT_API unsigned drift_plan_chains(const drift_plan *p)
{
    return p->mt ? 1 : p->a.chains;
}

DRIFT_API unsigned drift_plan_first_chain_id(const drift_plan *p)
{
    return p->a.chain_id ? p->a.chain_id : 1;
}

static int plan_run(drift_plan *p, int launcher, drift_err *e);

/* After a run that ran to its end (in process, or in a guarded run's
 * child): the files of the chains
 * that kept draws checked as drift sample checks them (R-hat, ESS,
 * divergences ...), a warning line each to the messages.  Not for a
 * sampler that keeps its initial point (no convergence to check). */
static void check_files(const drift_plan *p)
{
    if (p->sampler.flags & DRIFT_SAMPLER_FIXED)
        return;
    const char **paths = drift_calloc(p->n_results ? p->n_results : 1,
                                      sizeof *paths);
    size_t C = 0;
    if (!paths)
        return;
    for (size_t k = 0; k < p->n_results; k++) {
        const drift_chain_result *r = &p->results[k];
        if (!r->status && r->path[0] && r->draws && !r->interrupted)
            paths[C++] = r->path;
    }
    if (C)
        drift_checks_files(paths, C, drift_msg_stream());
    drift_free(paths);
}

DRIFT_API int drift_plan_run(drift_plan *p, int launcher, drift_err *e)
{
    /* A stop asked for an earlier run does not end this one. */
    drift_stop_clear();
    if (!p->msg)
        return plan_run(p, launcher, e);
    FILE *was = drift_msg_set(p->msg);
    int rc = plan_run(p, launcher, e);
    fflush(p->msg);
    drift_msg_set(was);
    return rc;
}

static int plan_run(drift_plan *p, int launcher, drift_err *e)
{
    if (p->mt)
        return drift_plan_run_method(p, e);
    if (launcher != DRIFT_LAUNCH_IN_PROCESS &&
        launcher != DRIFT_LAUNCH_GUARDED)
        return drift_err_set(e, DRIFT_EINVAL,
                             "launcher %d: expected DRIFT_LAUNCH_IN_PROCESS "
                             "or DRIFT_LAUNCH_GUARDED",
                             launcher);
    int watched, status;
    int rc = drift_plan_launch(p, launcher, &watched, &status, e);
    /* In process, or in the guarded child (the parent, watching, holds
     * no results): the files checked once the run has ended well. */
    if (rc == DRIFT_OK && !watched)
        check_files(p);
    if (launcher != DRIFT_LAUNCH_GUARDED || rc == DRIFT_EINVAL)
        return rc;
    if (!watched) {
        /* The guarded child: its run said, it leaves. */
        drift_plan_reported(rc ? 1 : 0);
        _exit(rc ? 1 : 0);
    }
    return status ? drift_err_set(e, DRIFT_EINTERNAL,
                                  "the guarded run ended with status %d",
                                  status)
                  : DRIFT_OK;
}

DRIFT_API uint64_t drift_plan_chain_draws(const drift_plan *p, unsigned k)
{
    if (p->mt)
        return k == 0 ? p->method_rows : 0;
    return p->results && k < p->n_results ? p->results[k].draws : 0;
}

DRIFT_API void drift_request_stop(void)
{
    drift_run_request_stop();
}

DRIFT_API void drift_plan_free(drift_plan *p)
{
    if (!p)
        return;
    drift_free(p->results);
    drift_free(p->hp);
    drift_free(p->hp_set);
    drift_free(p->init_values);
    drift_free(p->init_given);
    drift_free(p->init_points);
    drift_heldout_set_close(&p->test);
    if (!p->internal) {
        drift_problem_close(&p->prob);
        drift_registry_free(p->reg);
    }
    for (size_t k = 0; k < p->n_columns; k++)
        drift_free(p->columns[k]);
    drift_free(p->columns);
    for (size_t k = 0; k < p->n_mem; k++)
        drift_free(p->mem_names[k]);
    drift_free(p->mem_names);
    drift_free(p->mem_order);
    drift_free(p->mem_views);
    drift_free(p->mem_tables);
    drift_free(p->mem_values);
    if (p->msg)
        fclose(p->msg);
    if (p->a.out && p->out_lock >= 0)
        drift_writer_unlock_set(p->a.out, p->out_lock);
    drift_free(p->margs);
    args_free(&p->a);
    drift_free(p);
}
