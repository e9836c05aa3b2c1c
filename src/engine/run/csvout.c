/* csvout.c: a chain's draws file laid out as CmdStan lays out its output,
 * so that the readers of Stan CSV accept it (doc/stan-csv.md says which
 * reader needs what).  Header, column row, adaptation block and trailer
 * are written here; the rows between them by emit.c.  When the run ends,
 * a file is cut to the draw counts of the run's other chains and its
 * counts are written in place.  Not for deciding when a chain ends
 * (run.c). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/util.h"
#include "base/writer.h"
#include "ckptio.h"
#include "csvout.h"
#include "heldout.h"
#include "hparam.h"
#include "score.h"

struct drift_csvout {
    off_t at_num_samples, at_num_warmup, at_save_warmup, at_engaged;
                            /* where reserved fields start; -1: none */
    off_t off_rows;         /* the first row, after the column row */
    off_t off_warm_end;     /* the end of the warmup rows, where the
                               adaptation block starts (-1: not yet) */
    off_t off_samp;         /* the first row after the block */
    int add_treedepth, add_divergent; /* columns the engine adds */
    long stepsize_col;      /* stepsize__ among the diagnostic values, or
                               -1 */
    int block_written;
    /* What drift_csvout_close needs once the chain is gone. */
    uint64_t warm_offered, samp_offered, warm_iters;
    uint64_t own_warm_iters;  /* warm_iters before the run's common count */
    uint64_t thin;          /* rows per offered draw: --thin, or 1 for a
                               continuous sampler */
    int save_warmup, engaged;
    char *trailer;          /* from drift_csvout_finish */
    size_t trailer_len;
};

static int has_column(const drift_sampler *s, const char *name)
{
    for (size_t k = 0; k < s->n_columns; k++)
        if (!strcmp(s->columns[k], name))
            return 1;
    return 0;
}

static int is_continuous(const drift_chain *c)
{
    return (c->cfg->step.sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
}

/* Where the stream stands in the file (its buffer flushed); -1 after a
 * failed write. */
static off_t pos(drift_writer *w)
{
    if (fflush(drift_writer_file(w)) != 0)
        return -1;
    return lseek(drift_writer_fd(w), 0, SEEK_CUR);
}

uint64_t drift_csvout_warm_count(const struct drift_csvout *o)
{
    return o->save_warmup ? o->warm_offered : 0;
}

uint64_t drift_csvout_warm_iters(const struct drift_csvout *o)
{
    return o->warm_iters;
}

void drift_csvout_common_warm_iters(struct drift_csvout *o, uint64_t n)
{
    if (n < o->warm_iters) {
        o->own_warm_iters = o->warm_iters;
        o->warm_iters = n;
    }
}

uint64_t drift_csvout_samp_count(const struct drift_csvout *o)
{
    return o->samp_offered;
}

/* The header's num_warmup as the chain stands: with --save-warmup the
 * warmup draws offered (else the warmup iterations run). */
static uint64_t num_warmup(const struct drift_csvout *o)
{
    return o->save_warmup ? o->warm_offered : o->warm_iters;
}

/* What the header says of warmup.  CmdStanPy 1.2 refuses num_warmup = 0
 * (it assumes adaptation, which needs warmup), so a chain without warmup
 * draws says num_warmup = 1 and save_warmup = 0: no reader then looks for
 * warmup rows, and the trailer says why (drift_csvout_finish). */
static uint64_t header_num_warmup(const struct drift_csvout *o)
{
    uint64_t w = num_warmup(o);
    return w ? w : 1;
}

static int header_save_warmup(const struct drift_csvout *o)
{
    return o->save_warmup && o->warm_offered > 0;
}

/* "name = " and a reserved field of `width` characters holding v; records
 * where the field starts. */
static void reserve(drift_writer *w, const char *prefix, uint64_t v,
                    int width, off_t *at)
{
    FILE *f = drift_writer_file(w);
    fputs(prefix, f);
    *at = pos(w);
    fprintf(f, "%-*llu\n", width, (unsigned long long)v);
}

int drift_csvout_patch(int fd, off_t at, uint64_t v, int width)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%-*llu", width, (unsigned long long)v);
    if (at < 0)
        return 0;
    return pwrite(fd, buf, (size_t)n, at) == n ? 0 : -1;
}

static const char *metric_name(drift_metric_kind kind)
{
    return kind == DRIFT_METRIC_DIAG    ? "diag_e"
           : kind == DRIFT_METRIC_DENSE ? "dense_e"
                                        : "unit_e";
}

/* CmdStan's configuration block, with the values of this run. */
static void write_cmdstan_config(drift_chain *c, FILE *f)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    struct drift_csvout *o = c->output.csv;
    fputs("# method = sample (Default)\n#   sample\n", f);
    reserve(c->output.w, "#     num_samples = ", 0, DRIFT_CSVOUT_COUNT_WIDTH,
            &o->at_num_samples);
    reserve(c->output.w,
            "#     num_warmup = ", cfg->budget.warmup ? cfg->budget.warmup : 1,
            DRIFT_CSVOUT_COUNT_WIDTH, &o->at_num_warmup);
    reserve(c->output.w,
            "#     save_warmup = ", (uint64_t)cfg->output.save_warmup, 1,
            &o->at_save_warmup);
    fprintf(f, "#     thin = %llu\n", (unsigned long long)o->thin);
    fputs("#     adapt\n", f);
    reserve(c->output.w, "#       engaged = ", 0, 1, &o->at_engaged);
    /* CmdStan's own name for NUTS, so that rstan names the sampler. */
    int nuts = !strcmp(s->name, "nuts");
    if (nuts)
        fputs("#     algorithm = hmc\n#       engine = nuts\n", f);
    else
        fprintf(f, "#     algorithm = %s\n", s->name);
    for (size_t k = 0; k < s->n_hparams; k++) {
        char v[64];
        drift_hparam_format(&s->hparams[k], c->hp[k], v, sizeof v);
        /* A step size the run chose is not the default: no suffix. */
        int chosen = c->hp != cfg->step.hp && isnan(cfg->step.hp[k]);
        /* A sampler's metric (unit, diag, dense) in CmdStan's spelling,
         * which CmdStanPy needs to read the adaptation block. */
        int is_metric = !strcmp(s->hparams[k].name, "metric");
        int metric = is_metric && (!strcmp(v, "unit") ||
                                   !strcmp(v, "diag") || !strcmp(v, "dense"));
        const char *dflt = (cfg->step.hp_set && cfg->step.hp_set[k]) || chosen
                               ? ""
                               : " (Default)";
        if (is_metric && !metric) {
            /* Another estimate of a metric of CmdStan's kinds (grad: a
             * diagonal one from draws and gradients): the kind in use,
             * which is what CmdStanPy reads, then how it was estimated. */
            fprintf(f, "#       metric = %s%s\n",
                    metric_name(c->adapt.metric.kind), dflt);
            fprintf(f, "#       metric_estimate = %s\n", v);
            continue;
        }
        fprintf(f, "#       %s = %s%s%s\n", s->hparams[k].name, v,
                metric ? "_e" : "", dflt);
    }
    if (drift_hparams_find(s->hparams, s->n_hparams, "metric") < 0)
        fprintf(f, "#     metric = %s\n", metric_name(c->adapt.metric.kind));
    if (drift_hparams_find(s->hparams, s->n_hparams, "max_depth") < 0)
        fputs("#     max_depth = 10\n", f);
    fprintf(f, "#     num_chains = %u\n",
            cfg->launch.chains ? cfg->launch.chains : 1);
    fprintf(f, "# id = %u\n", c->id);
    fprintf(f, "# data\n#   file = %s\n",
            cfg->problem.path ? cfg->problem.path : "");
    switch (cfg->init.mode) {
    case DRIFT_INIT_RANDOM:
        fprintf(f, "# init = %.10g\n",
                cfg->init.radius > 0 ? cfg->init.radius : 2.0);
        break;
    case DRIFT_INIT_VALUES:
        fprintf(f, "# init = %s\n", cfg->init.path ? cfg->init.path : "");
        break;
    case DRIFT_INIT_MODE:
        fputs("# init = mode\n", f);
        break;
    case DRIFT_INIT_POINTS:
        fputs("# init = pathfinder\n", f);
        break;
    default:
        fputs("# init = 0\n", f);
    }
    fprintf(f, "# random\n#   seed = %llu\n",
            (unsigned long long)cfg->launch.seed);
    char path[4096];
    drift_chain_path(cfg->output.path ? cfg->output.path : "",
                     cfg->launch.chains, c->id, path, sizeof path);
    fprintf(f, "# output\n#   file = %s\n", path);
}

/* drift's own keys: what CmdStan has no key for. */
static void write_drift_config(drift_chain *c, FILE *f)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    fprintf(f, "# sampler = %s\n", s->name);
    if (cfg->step.sampler_path)
        fprintf(f, "# sampler_file = %s\n", cfg->step.sampler_path);
    fprintf(f, "# batch = %zu\n", c->batch);
    fprintf(f, "# access = %s\n", drift_access_name(c->access.stream.mode));
    if (cfg->budget.iters)
        fprintf(f, "# iterations = %llu\n",
                (unsigned long long)cfg->budget.iters);
    if (cfg->budget.passes > 0)
        fprintf(f, "# passes = %.10g\n", cfg->budget.passes);
    if (cfg->budget.seconds > 0)
        fprintf(f, "# seconds = %.10g\n", cfg->budget.seconds);
    fprintf(f, "# warmup_iterations = %llu\n",
            (unsigned long long)cfg->budget.warmup);
    if (cfg->output.emit_segments)
        fputs("# emit = segments\n"
              "#   one row per linear segment x0 + v s of the trajectory, "
              "s from 0 to\n"
              "#   duration__, starting at trajectory time time__; the "
              "model's columns\n"
              "#   hold the constrained values at x0; x0_k__ and v_k__ are "
              "x0 and v on\n"
              "#   the unconstrained scale (k from 1 to dim); drift summary "
              "uses the\n"
              "#   exact trajectory moments at the end of the file\n",
              f);
    else if (is_continuous(c))
        fprintf(f, "# thin_time = %.10g\n",
                cfg->budget.thin_time > 0 ? cfg->budget.thin_time : 1.0);
    if (cfg->step.grad_noise > 0)
        fprintf(f, "# grad_noise = %.10g\n", cfg->step.grad_noise);
    if (cfg->step.full_threads > 1)
        fprintf(f, "# threads = %u\n", cfg->step.full_threads);
    if (cfg->heldout.model) {
        /* Where the held-out metrics go: beside this file. */
        char path[4096], mpath[4200];
        drift_chain_path(cfg->output.path, cfg->launch.chains, c->id, path,
                         sizeof path);
        drift_heldout_path(path, mpath, sizeof mpath);
        const char *base = strrchr(mpath, '/');
        fprintf(f, "# test = %s\n",
                cfg->heldout.path ? cfg->heldout.path : "");
        fprintf(f, "# eval_every = %.10g\n", cfg->heldout.every);
        fprintf(f, "# metrics_file = %s\n", base ? base + 1 : mpath);
    }
    fprintf(f, "# N = %zu\n", c->N);
    fprintf(f, "# dim = %zu\n", c->d);
    fprintf(f, "# sampler_memory_bytes = %zu\n", c->mem.used);
    if (s->setup && c->run)
        fprintf(f, "# setup_grads = %llu\n",
                (unsigned long long)c->run->setup_grads);
    if (!(s->flags & (DRIFT_SAMPLER_FULL_DATA |
                      DRIFT_SAMPLER_OWN_ESTIMATES))) {
        drift_gradient g = c->est.kind;
        fprintf(f, "# gradient = %s\n", drift_gradient_name(g));
        if (g == DRIFT_GRADIENT_SVRG || g == DRIFT_GRADIENT_TMU)
            fprintf(f, "# gradient_period = %llu\n",
                    (unsigned long long)drift_estimator_period(c, c->batch));
        if (g == DRIFT_GRADIENT_SVRG && c->est.snapshot_rows &&
            c->est.snapshot_rows < c->N)
            fprintf(f, "# gradient_snapshot_rows = %llu\n",
                    (unsigned long long)c->est.snapshot_rows);
    }
    if (cfg->step.gradient == DRIFT_GRADIENT_CV && c->run &&
        c->run->cv.ready) {
        const drift_cv *cv = &c->run->cv;
        fprintf(f, "# mode_method = %s\n", cv->method);
        fprintf(f, "# mode_grads = %llu\n", (unsigned long long)cv->grads);
        fprintf(f, "# mode_passes = %.6g\n",
                c->N ? (double)cv->grads / (double)c->N : 0.0);
        fprintf(f, "# mode_iterations = %llu\n",
                (unsigned long long)cv->iterations);
        fprintf(f, "# mode_converged = %d\n", cv->converged);
        fputs("# mode_lp = ", f);
        drift_writer_real(f, -cv->U);
        fputs("\n# mode_decrement = ", f);
        drift_writer_real(f, cv->decrement);
        fprintf(f, "\n# mode_store = %s\n",
                cv->s ? "glm_scalars" : "recomputed");
        fputs("# drift: gradient = cv: grad_batch returns grad U at the "
              "mode plus (N/n) times the\n"
              "#   minibatch's sum of grad U_i(theta) - grad U_i(mode), "
              "plus the prior's; lp__ is\n"
              "#   the same control-variate estimate of log p(theta | "
              "data), unbiased, up to\n"
              "#   the constant lp__ leaves out; the mode search (chain "
              "1's, before any draw)\n"
              "#   is counted in chain 1's grads__ (mode_grads)\n",
              f);
    }
    /* How the run chose the sampler's step size (run.c writes the
     * lines). */
    if (c->run && c->run->tune_header[0])
        fputs(c->run->tune_header, f);
    if (cfg->output.save_gradients)
        fprintf(f,
                "# save_gradients = 1\n"
                "# grad_lp_coordinates = %s\n"
                "# drift: grad_lp_k__ is d log p(theta | data) / d theta_k "
                "at the draw, theta the\n"
                "#   model's %zu unconstrained coordinates (Jacobians "
                "included), over all N rows:\n"
                "#   one full-data gradient per row written, not counted in "
                "grads__; %s\n"
                "#   drift summary --ksd reads them\n",
                drift_score_coordinates_are_outputs(c->model) ? "columns"
                                                              : "model",
                c->d,
                drift_score_coordinates_are_outputs(c->model)
                    ? "theta is the\n#   model's first columns;"
                    : "theta is the\n#   model's unconstrained transform "
                      "of its columns;");
    if (c->output.csv->add_treedepth || c->output.csv->add_divergent)
        fprintf(f,
                "# drift: metric, max_depth, treedepth__ and divergent__ "
                "are there for CmdStanPy,\n"
                "#   which reads saved warmup draws, the step size and the "
                "metric only from\n"
                "#   files that have them: %s builds no tree (treedepth__ "
                "0) and drift\n"
                "#   stops a chain at a divergence (divergent__ 0)\n",
                s->name);
    if (is_continuous(c))
        fputs("# drift: lp__ is an unbiased minibatch estimate of the log "
              "density at the\n"
              "#   written point (--batch rows, drawn apart from the "
              "sampler's; exact when N\n"
              "#   is at most --batch)\n",
              f);
}

static void write_columns(drift_chain *c, FILE *f)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->step.sampler;
    fputs("lp__,grads__", f);
    for (size_t k = 0; k < s->n_columns; k++) {
        const char *name = s->columns[k];
        if (!drift_chain_column_is_vector(name)) {
            fprintf(f, ",%s", name);
            continue;
        }
        /* "xi.#__" -> xi_1__ ... xi_d__: no dot, or rstan would read
         * xi.1__ as element 1 of a parameter xi ("subscript out of
         * bounds"). */
        int stem = (int)(strlen(name) - 4);
        for (size_t j = 0; j < c->d; j++)
            fprintf(f, ",%.*s_%zu__", stem, name, j + 1);
    }
    if (c->output.csv->add_treedepth)
        fputs(",treedepth__", f);
    if (c->output.csv->add_divergent)
        fputs(",divergent__", f);
    if (cfg->output.emit_segments)
        fputs(",time__,duration__", f);
    for (size_t k = 0; k < c->model->n_out; k++)
        fprintf(f, ",%s", c->model->out_names[k]);
    if (!cfg->output.emit_segments)
        for (size_t k = 0; k < c->model->n_gen; k++)
            fprintf(f, ",%s", c->model->gen_names[k]);
    /* No dot here either (rstan). */
    if (cfg->output.save_gradients && !cfg->output.emit_segments)
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, ",grad_lp_%zu__", k + 1);
    /* No dot in these names: rstan would read x0.1__ as element 1 of a
     * parameter x0. */
    if (cfg->output.emit_segments) {
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, ",x0_%zu__", k + 1);
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, ",v_%zu__", k + 1);
    }
    fputc('\n', f);
}

static double block_stepsize(const drift_chain *c, const double *diag);

/* The file's layout as far as it is written, for the guard (c->layout). */
static void publish_layout(drift_chain *c)
{
    const struct drift_csvout *o = c->output.csv;
    drift_csvout_layout *g = c->output.layout;
    if (!g)
        return;
    g->at_num_samples = o->at_num_samples;
    g->at_num_warmup = o->at_num_warmup;
    g->at_save_warmup = o->at_save_warmup;
    g->at_engaged = o->at_engaged;
    g->thin = o->thin;
    g->save_warmup = o->save_warmup;
    g->metric_kind = c->adapt.metric.kind;
    g->d = c->d;
    g->step = block_stepsize(c, NULL);
    g->warmup = c->cfg->budget.warmup;
    g->off_rows = o->off_rows;
    if (o->off_warm_end >= 0) {
        g->off_warm_end = o->off_warm_end;
        g->off_samp = o->off_samp;
        g->engaged = isfinite(c->adapt.step);
    }
}

/* The layout's fields that follow from the run's sampler and options. */
static void derived_fields(const drift_chain *c, struct drift_csvout *o)
{
    const drift_sampler *s = c->cfg->step.sampler;
    o->add_treedepth = !has_column(s, "treedepth__");
    o->add_divergent = !has_column(s, "divergent__");
    o->thin = is_continuous(c) ? 1 : c->cfg->budget.thin;
    o->save_warmup = c->cfg->output.save_warmup;
    o->stepsize_col = -1;
    /* stepsize__ among the diagnostic values, vector columns counting d */
    size_t at = 0;
    for (size_t k = 0; k < s->n_columns; k++) {
        if (!strcmp(s->columns[k], "stepsize__"))
            o->stepsize_col = (long)at;
        at += drift_chain_column_is_vector(s->columns[k]) ? c->d : 1;
    }
}

int drift_csvout_begin(drift_chain *c)
{
    struct drift_csvout *o = drift_calloc(1, sizeof *o);
    if (!o)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for the output file");
    c->output.csv = o;
    o->at_num_samples = o->at_num_warmup = o->at_save_warmup =
        o->at_engaged = o->off_rows = o->off_warm_end = o->off_samp = -1;
    derived_fields(c, o);
    if (!c->output.w)
        return DRIFT_OK;
    FILE *f = drift_writer_file(c->output.w);
    const drift_run_config *cfg = c->cfg;
    fprintf(f, "# drift_version = %s\n", PACKAGE_VERSION);
    /* First, where anyone opening the file sees it: readers of Stan CSV
     * take these rows for equally weighted draws, which they are not. */
    if (cfg->output.emit_segments)
        fputs("# drift: SEGMENTS, NOT DRAWS (--emit segments).  Each row is "
              "a straight piece\n"
              "#   of a continuous trajectory, lasting duration__: weight "
              "each row by\n"
              "#   duration__ (a mean is sum(x * duration__) / "
              "sum(duration__)).  ArviZ,\n"
              "#   rstan, posterior and CmdStanPy weigh every row alike: "
              "their means, ESS\n"
              "#   and R-hat of these rows are wrong.  drift summary reads "
              "them right.\n",
              f);
    for (const char *const *h = cfg->output.header; h && *h; h++)
        fprintf(f, "# %s\n", *h);
    write_cmdstan_config(c, f);
    write_drift_config(c, f);
    write_columns(c, f);
    o->off_rows = pos(c->output.w);
    publish_layout(c);
    return DRIFT_OK;
}

int drift_csvout_ckpt(drift_chain *c)
{
    if (!drift_ckpt_restoring(c)) {
        struct drift_csvout o = *c->output.csv;
        o.trailer = NULL;
        o.trailer_len = 0;
        return drift_ckpt_block(c, &o, sizeof o);
    }
    struct drift_csvout *o = drift_calloc(1, sizeof *o);
    if (!o)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for the output file");
    int rc = drift_ckpt_block(c, o, sizeof *o);
    o->trailer = NULL;
    o->trailer_len = 0;
    /* What follows from the run must be what the run gives now (the
     * stepsize__ column indexes each draw's diagnostics), and the
     * offsets into the draws file at least -1. */
    struct drift_csvout want = {0};
    derived_fields(c, &want);
    if (!rc && (o->add_treedepth != want.add_treedepth ||
                o->add_divergent != want.add_divergent ||
                o->thin != want.thin || o->save_warmup != want.save_warmup ||
                o->stepsize_col != want.stepsize_col ||
                o->at_num_samples < -1 || o->at_num_warmup < -1 ||
                o->at_save_warmup < -1 || o->at_engaged < -1 ||
                o->off_rows < -1 || o->off_warm_end < -1 ||
                o->off_samp < -1))
        rc = drift_chain_fail(c, DRIFT_EINVAL,
                              "--resume: chain %u's state is damaged: its "
                              "output file's layout is not this run's",
                              c->id);
    drift_csvout_free(c->output.csv);
    c->output.csv = o;
    if (!rc && c->output.w)
        publish_layout(c);
    return rc;
}

void drift_csvout_free(struct drift_csvout *o)
{
    if (!o)
        return;
    free(o->trailer);
    drift_free(o);
}

void drift_csvout_compat_values(const drift_chain *c, FILE *f)
{
    if (c->output.csv->add_treedepth)
        fputs(",0", f);
    if (c->output.csv->add_divergent)
        fputs(",0", f);
}

/* The step size the block reports (see drift_csvout_adaptation). */
static double block_stepsize(const drift_chain *c, const double *diag)
{
    if (isfinite(c->adapt.step))
        return c->adapt.step;
    if (diag && c->output.csv && c->output.csv->stepsize_col >= 0 &&
        isfinite(diag[c->output.csv->stepsize_col]))
        return diag[c->output.csv->stepsize_col];
    const drift_sampler *s = c->cfg->step.sampler;
    long k = drift_hparams_find(s->hparams, s->n_hparams, "h");
    if (k < 0)
        k = drift_hparams_find(s->hparams, s->n_hparams, "eta");
    if (k >= 0 && isfinite(c->hp[k]) && c->hp[k] > 0)
        return c->hp[k];
    return 1.0;
}

static void write_values(FILE *f, const double *v, size_t n, double dflt)
{
    fputs("# ", f);
    for (size_t k = 0; k < n; k++) {
        if (k)
            fputs(", ", f);
        drift_writer_real(f, v ? v[k] : dflt);
    }
    fputc('\n', f);
}

void drift_csvout_write_block(FILE *f, double step, int kind, size_t d,
                              const double *m)
{
    fputs("# Adaptation terminated\n# Step size = ", f);
    drift_writer_real(f, step);
    fputc('\n', f);
    switch (kind) {
    case DRIFT_METRIC_DIAG:
        fputs("# Diagonal elements of inverse mass matrix:\n", f);
        write_values(f, m, d, 1.0);
        break;
    case DRIFT_METRIC_DENSE:
        fputs("# Elements of inverse mass matrix:\n", f);
        for (size_t i = 0; i < d; i++) {
            if (m) {
                write_values(f, m + i * d, d, 0);
            } else { /* the identity */
                fputs("# ", f);
                for (size_t j = 0; j < d; j++)
                    fprintf(f, "%s%d", j ? ", " : "", i == j);
                fputc('\n', f);
            }
        }
        break;
    default:
        fputs("# No free parameters for unit metric\n", f);
    }
}

void drift_csvout_adaptation(drift_chain *c, const double *diag)
{
    struct drift_csvout *o = c->output.csv;
    if (!o || o->block_written || !c->output.w)
        return;
    o->block_written = 1;
    o->off_warm_end = pos(c->output.w);
    size_t d = c->d;
    /* The metric the metric_get service hands samplers (oracle.c copies
     * it from c->adapt.metric; read here directly, as oracle sits above). */
    drift_metric_kind kind = c->adapt.metric.kind;
    size_t n = kind == DRIFT_METRIC_DENSE ? d * d
               : kind == DRIFT_METRIC_DIAG ? d
                                           : 0;
    const double *m = n ? c->adapt.metric.inv : NULL;
    drift_csvout_write_block(drift_writer_file(c->output.w),
                             block_stepsize(c, diag), kind, d, m);
    o->off_samp = pos(c->output.w);
    drift_csvout_layout *g = c->output.layout;
    if (g) {
        g->off_warm_end = o->off_warm_end;
        g->off_samp = o->off_samp;
        g->engaged = isfinite(c->adapt.step);
        g->t_warm_end = drift_now();
    }
}

void drift_csvout_write_elapsed(FILE *f, double warmup, double sampling)
{
    double w = warmup > 0 ? warmup : 0, s = sampling > 0 ? sampling : 0;
    fprintf(f,
            "# \n"
            "#  Elapsed Time: %.6f seconds (Warm-up)\n"
            "#                %.6f seconds (Sampling)\n"
            "#                %.6f seconds (Total)\n"
            "# \n",
            w, s, w + s);
}

void drift_csvout_finish(drift_chain *c, const drift_csvout_end *end)
{
    struct drift_csvout *o = c->output.csv;
    if (!o)
        return;
    o->warm_offered = c->output.warm_offered;
    o->samp_offered = c->output.samp_offered;
    o->warm_iters =
        c->iter < c->cfg->budget.warmup ? c->iter : c->cfg->budget.warmup;
    o->engaged = isfinite(c->adapt.step);
    if (!c->output.w)
        return;
    drift_csvout_adaptation(c, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return; /* no trailer: readers that need it say so */
    if (end->note && *end->note)
        fprintf(f, "# drift: %s\n", end->note);
    if (end->traj_mean && end->traj_var) {
        fprintf(f, "# trajectory_time = %.17g\n", end->traj_time);
        fputs("# trajectory_mean (unconstrained) =", f);
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, "%c%.17g", k ? ',' : ' ', end->traj_mean[k]);
        fputs("\n# trajectory_var (unconstrained) =", f);
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, "%c%.17g", k ? ',' : ' ', end->traj_var[k]);
        fputc('\n', f);
    }
    drift_csvout_write_elapsed(f, end->warmup_seconds, end->sampling_seconds);
    if (fclose(f) == 0) {
        o->trailer = buf;
        o->trailer_len = len;
    } else {
        free(buf);
    }
}

/* The offset after n more lines from `from`; -1 on a read error or when
 * the file has fewer. */
static off_t skip_lines(int fd, off_t from, uint64_t n)
{
    char buf[1 << 16];
    off_t at = from;
    while (n) {
        ssize_t k = pread(fd, buf, sizeof buf, at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        for (ssize_t i = 0; i < k; i++)
            if (buf[i] == '\n' && --n == 0)
                return at + i + 1;
        at += k;
    }
    return at;
}

/* Removes bytes [a, b) of the file (size `size`), moving the rest down. */
static int cut(int fd, off_t a, off_t b, off_t size)
{
    char buf[1 << 16];
    off_t from = b, to = a;
    while (from < size) {
        size_t want = (size_t)(size - from) < sizeof buf
                          ? (size_t)(size - from)
                          : sizeof buf;
        ssize_t k = pread(fd, buf, want, from);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 || pwrite(fd, buf, (size_t)k, to) != k)
            return -1;
        from += k;
        to += k;
    }
    return ftruncate(fd, size - (b - a));
}

/* Rows that n offered draws leave with a thinning of `thin`. */
static uint64_t rows_of(uint64_t n, uint64_t thin)
{
    return thin > 1 ? (n + thin - 1) / thin : n;
}

int drift_csvout_close(struct drift_csvout *o, drift_writer *w,
                       uint64_t warm, uint64_t samp, uint64_t *dropped,
                       drift_err *e)
{
    *dropped = 0;
    int fd = drift_writer_fd(w);
    FILE *f = drift_writer_file(w);
    off_t size = pos(w);
    if (size < 0 || o->off_rows < 0 || o->off_samp < 0)
        return DRIFT_OK; /* a failed write: commit reports it */
    if (!o->save_warmup || warm > o->warm_offered)
        warm = o->warm_offered;
    if (samp > o->samp_offered)
        samp = o->samp_offered;
    uint64_t drop_w = rows_of(o->warm_offered, o->thin) - rows_of(warm, o->thin);
    uint64_t drop_s = rows_of(o->samp_offered, o->thin) - rows_of(samp, o->thin);
    int bad = 0;
    if (drop_s) { /* the last rows of the file */
        off_t p = skip_lines(fd, o->off_samp, rows_of(samp, o->thin));
        bad |= p < 0 || ftruncate(fd, p) != 0;
        if (!bad)
            size = p;
    }
    if (drop_w && !bad) { /* warmup rows, before the adaptation block */
        off_t p = skip_lines(fd, o->off_rows, rows_of(warm, o->thin));
        bad |= p < 0 || p > o->off_warm_end ||
               cut(fd, p, o->off_warm_end, size) != 0;
        if (!bad)
            size -= o->off_warm_end - p;
    }
    if (bad || lseek(fd, 0, SEEK_END) != size)
        return drift_err_set(e, DRIFT_EIO,
                             "cannot bring the output file to the run's "
                             "draw counts: %s",
                             strerror(errno));
    *dropped = drop_w + drop_s;
    if (drop_w || drop_s)
        fprintf(f,
                "# drift: dropped from the end of each phase, to the "
                "counts of the run's other\n"
                "#   chains (readers take a run's files together only when "
                "their counts agree):\n"
                "#   draws after warmup %llu, saved warmup draws %llu\n",
                (unsigned long long)drop_s, (unsigned long long)drop_w);
    o->warm_offered = o->save_warmup ? warm : 0;
    o->samp_offered = samp;
    /* Saved warmup cut short (an interrupted warmup): a whole number of
     * --thin steps, so that every reader splits the rows alike (ArviZ
     * rounds num_warmup / thin down, the others up). */
    if (o->save_warmup && o->thin > 1) {
        o->warm_offered = rows_of(warm, o->thin) * o->thin;
        if (o->warm_offered != warm)
            fprintf(f,
                    "# drift: %llu warmup iterations; the header says "
                    "num_warmup %llu, a whole number of\n"
                    "#   --thin %llu steps, so that every reader takes the "
                    "same %llu rows as warmup\n",
                    (unsigned long long)warm,
                    (unsigned long long)o->warm_offered,
                    (unsigned long long)o->thin,
                    (unsigned long long)rows_of(warm, o->thin));
    }
    if (o->own_warm_iters && !o->save_warmup)
        fprintf(f,
                "# drift: this chain ran %llu warmup iterations; the header "
                "says the run's\n"
                "#   common count, %llu (a run interrupted in warmup: "
                "readers take a run's\n"
                "#   files together only when their num_warmup agree)\n",
                (unsigned long long)o->own_warm_iters,
                (unsigned long long)o->warm_iters);
    if (num_warmup(o) == 0)
        fputs("# drift: no warmup; the header says num_warmup 1 and "
              "save_warmup 0 because\n"
              "#   CmdStanPy 1.2 refuses num_warmup 0; no row of this file "
              "is a warmup draw\n",
              f);
    if (o->trailer)
        fwrite(o->trailer, 1, o->trailer_len, f);
    if (fflush(f) != 0)
        return DRIFT_OK; /* commit reports the write error */
    if (drift_csvout_patch(fd, o->at_num_samples, o->samp_offered,
                           DRIFT_CSVOUT_COUNT_WIDTH) ||
        drift_csvout_patch(fd, o->at_num_warmup, header_num_warmup(o),
                           DRIFT_CSVOUT_COUNT_WIDTH) ||
        drift_csvout_patch(fd, o->at_save_warmup,
                           (uint64_t)header_save_warmup(o), 1) ||
        drift_csvout_patch(fd, o->at_engaged, (uint64_t)o->engaged, 1))
        return drift_err_set(e, DRIFT_EIO,
                             "cannot write the counts into the output "
                             "file's header: %s",
                             strerror(errno));
    return DRIFT_OK;
}

/* ---- generated quantities on some rows only ------------------------------ */

void drift_csvout_generated_path(const char *chain_path, char *buf,
                                 size_t cap)
{
    const char *slash = strrchr(chain_path, '/');
    const char *dot = strrchr(chain_path, '.');
    if (dot && (!slash || dot > slash + 1))
        snprintf(buf, cap, "%.*s_generated%s", (int)(dot - chain_path),
                 chain_path, dot);
    else
        snprintf(buf, cap, "%s_generated", chain_path);
}

/* Writes line (n bytes, its newline included) to f, without the fields
 * [first, first + count) of its comma-separated fields. */
static void put_fields_except(FILE *f, const char *line, size_t n,
                              size_t first, size_t count)
{
    size_t field = 0, start = 0;
    int wrote = 0;
    for (size_t i = 0; i <= n; i++) {
        int end = i == n || line[i] == ',' || line[i] == '\n';
        if (!end)
            continue;
        if (field < first || field >= first + count) {
            if (wrote)
                fputc(',', f);
            fwrite(line + start, 1, i - start, f);
            wrote = 1;
        }
        field++;
        start = i + 1;
        if (i == n || line[i] == '\n')
            break;
    }
    fputc('\n', f);
}

/* "#     name = 12   " -> 1 and the value, for CmdStan's indented keys. */
static int header_count(const char *line, const char *name, uint64_t *v)
{
    const char *p = line + 1;
    while (*p == ' ')
        p++;
    size_t n = strlen(name);
    if (strncmp(p, name, n) || strncmp(p + n, " = ", 3))
        return 0;
    char *end;
    unsigned long long x = strtoull(p + n + 3, &end, 10);
    if (end == p + n + 3)
        return 0;
    *v = (uint64_t)x;
    return 1;
}

int drift_csvout_split_generated(const char *path, const char *first_name,
                                 size_t count, uint64_t every, drift_err *e)
{
    char gpath[4096];
    drift_csvout_generated_path(path, gpath, sizeof gpath);
    const char *gname = strrchr(gpath, '/') ? strrchr(gpath, '/') + 1 : gpath;
    FILE *in = fopen(path, "r");
    if (!in)
        return drift_err_set(e, DRIFT_EIO, "%s: %s", path, strerror(errno));
    drift_writer *wm = NULL, *wg = NULL;
    int rc = drift_writer_open(path, &wm, e);
    if (!rc && (rc = drift_writer_open(gpath, &wg, e)))
        drift_writer_abort(wm);
    if (rc) {
        fclose(in);
        return rc;
    }
    FILE *fm = drift_writer_file(wm), *fg = drift_writer_file(wg);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long first = -1;
    int columns_seen = 0;
    uint64_t thin = 1, row = 0, warm_rows = 0, v;
    /* First pass: the saved warmup rows (those before the adaptation
     * block; none without --save-warmup). */
    while ((n = getline(&line, &cap, in)) > 0) {
        if (line[0] != '#')
            row += columns_seen++ > 0;
        else if (columns_seen && !strcmp(line, "# Adaptation terminated\n"))
            break;
        else if (!columns_seen && header_count(line, "thin", &v))
            thin = v ? v : 1;
    }
    warm_rows = n > 0 ? row : 0;
    row = 0;
    columns_seen = 0;
    rewind(in);
    /* The counts readers split rows by, rewritten for the generated
     * file's thinning of thin * every: its saved warmup rows a whole
     * number of such steps (ArviZ rounds num_warmup / thin down, the
     * others up), its draws ceil(num_samples / (thin * every)) as the
     * rows every-th row of the draws leaves. */
    while ((n = getline(&line, &cap, in)) > 0) {
        if (line[0] == '#') {
            fwrite(line, 1, (size_t)n, fm);
            if (!columns_seen && header_count(line, "thin", &v)) {
                fprintf(fg, "#     thin = %llu\n",
                        (unsigned long long)(thin * every));
                continue;
            }
            if (!columns_seen && warm_rows &&
                header_count(line, "num_warmup", &v)) {
                fprintf(fg, "#     num_warmup = %llu\n",
                        (unsigned long long)((warm_rows + every - 1) /
                                             every * thin * every));
                continue;
            }
            if (columns_seen && !strcmp(line, "# Adaptation terminated\n"))
                row = 0;
            fwrite(line, 1, (size_t)n, fg);
            continue;
        }
        if (!columns_seen) {
            columns_seen = 1;
            size_t field = 0, len = strlen(first_name);
            for (ssize_t i = 0, start = 0; i < n; i++)
                if (line[i] == ',' || line[i] == '\n') {
                    if ((size_t)(i - start) == len &&
                        !strncmp(line + start, first_name, len))
                        first = (long)field;
                    field++;
                    start = i + 1;
                }
            if (first < 0)
                break;
            fprintf(fm, "# drift: the generated quantities, computed on "
                        "every %llu%s draw (--generated-every),\n"
                        "#   are in %s with those draws\n",
                    (unsigned long long)every,
                    every == 2 ? "nd" : every == 3 ? "rd" : "th", gname);
            fprintf(fg, "# drift: every %llu%s draw of %s with its "
                        "generated quantities (--generated-every);\n"
                        "#   thin and the counts above are those of these "
                        "rows\n",
                    (unsigned long long)every,
                    every == 2 ? "nd" : every == 3 ? "rd" : "th",
                    strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
            put_fields_except(fm, line, (size_t)n, (size_t)first, count);
            fwrite(line, 1, (size_t)n, fg);
            continue;
        }
        put_fields_except(fm, line, (size_t)n, (size_t)first, count);
        if (row++ % every == 0)
            fwrite(line, 1, (size_t)n, fg);
    }
    free(line);
    int bad = ferror(in);
    fclose(in);
    if (bad || first < 0) {
        drift_writer_abort(wm);
        drift_writer_abort(wg);
        return drift_err_set(e, DRIFT_EIO,
                             "%s: cannot move its generated quantities to "
                             "%s: %s",
                             path, gname,
                             bad ? strerror(errno) : "no such column");
    }
    if ((rc = drift_writer_commit(wg, e))) {
        drift_writer_abort(wm);
        return rc;
    }
    return drift_writer_commit(wm, e);
}
