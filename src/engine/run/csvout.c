/* csvout.c: a chain's draws file laid out as CmdStan lays out its output,
 * so that the readers of Stan CSV accept it (doc/stan-csv.md says which
 * reader needs what).  Header, column row, adaptation block and trailer
 * are written here; the rows between them by emit.c.  Not for deciding
 * when a chain ends (run.c). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "base/util.h"
#include "base/writer.h"
#include "csvout.h"
#include "heldout.h"
#include "hparam.h"

/* Width of the fields num_samples and num_warmup are written into once a
 * chain ends: any uint64_t fits, and the readers strip the spaces. */
#define COUNT_WIDTH 20

struct drift_csvout {
    off_t at_num_samples, at_num_warmup, at_save_warmup, at_engaged;
                            /* where reserved fields start; -1: none */
    int add_treedepth, add_divergent; /* columns the engine adds */
    long stepsize_col;      /* the sampler's stepsize__ column, or -1 */
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
    return (c->cfg->sampler->flags & DRIFT_SAMPLER_CONTINUOUS) != 0;
}

uint64_t drift_csvout_num_warmup(const drift_chain *c)
{
    return c->cfg->save_warmup ? c->warm_offered : c->warm_iters;
}

uint64_t drift_csvout_num_samples(const drift_chain *c)
{
    return c->samp_offered;
}

/* What the header says of warmup.  CmdStanPy 1.2 refuses num_warmup = 0
 * (it assumes adaptation, which needs warmup), so a chain without warmup
 * draws says num_warmup = 1 and save_warmup = 0: no reader then looks for
 * warmup rows, and the trailer says why (drift_csvout_finish). */
static uint64_t header_num_warmup(const drift_chain *c)
{
    uint64_t w = drift_csvout_num_warmup(c);
    return w ? w : 1;
}

static int header_save_warmup(const drift_chain *c)
{
    return c->cfg->save_warmup && drift_csvout_num_warmup(c) > 0;
}

/* "name = " and a reserved field of `width` characters holding v; records
 * where the field starts. */
static void reserve(FILE *f, const char *prefix, uint64_t v, int width,
                    off_t *at)
{
    fputs(prefix, f);
    *at = ftello(f);
    fprintf(f, "%-*llu\n", width, (unsigned long long)v);
}

static void patch(FILE *f, off_t at, uint64_t v, int width)
{
    if (at < 0 || fseeko(f, at, SEEK_SET) != 0)
        return;
    fprintf(f, "%-*llu", width, (unsigned long long)v);
    fseeko(f, 0, SEEK_END);
}

static const char *metric_name(int kind)
{
    return kind == 1 ? "diag_e" : kind == 2 ? "dense_e" : "unit_e";
}

/* CmdStan's configuration block, with the values of this run. */
static void write_cmdstan_config(drift_chain *c, FILE *f)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->sampler;
    struct drift_csvout *o = c->out;
    fputs("# method = sample (Default)\n#   sample\n", f);
    reserve(f, "#     num_samples = ", drift_csvout_num_samples(c),
            COUNT_WIDTH, &o->at_num_samples);
    reserve(f, "#     num_warmup = ", header_num_warmup(c), COUNT_WIDTH,
            &o->at_num_warmup);
    reserve(f, "#     save_warmup = ", (uint64_t)cfg->save_warmup, 1,
            &o->at_save_warmup);
    fprintf(f, "#     thin = %llu\n",
            is_continuous(c) ? 1ULL : (unsigned long long)cfg->thin);
    fputs("#     adapt\n", f);
    reserve(f, "#       engaged = ", 0, 1, &o->at_engaged);
    /* CmdStan's own name for NUTS, so that rstan names the sampler. */
    int nuts = !strcmp(s->name, "nuts");
    if (nuts)
        fputs("#     algorithm = hmc\n#       engine = nuts\n", f);
    else
        fprintf(f, "#     algorithm = %s\n", s->name);
    for (size_t k = 0; k < s->n_hparams; k++) {
        char v[64];
        drift_hparam_format(&s->hparams[k], cfg->hp[k], v, sizeof v);
        fprintf(f, "#       %s = %s%s\n", s->hparams[k].name, v,
                cfg->hp_set && cfg->hp_set[k] ? "" : " (Default)");
    }
    if (drift_hparams_find(s->hparams, s->n_hparams, "metric") < 0)
        fprintf(f, "#     metric = %s\n", metric_name(c->adapt.metric_kind));
    if (drift_hparams_find(s->hparams, s->n_hparams, "max_depth") < 0)
        fputs("#     max_depth = 10\n", f);
    fprintf(f, "#     num_chains = %u\n", cfg->chains ? cfg->chains : 1);
    fprintf(f, "# id = %u\n", c->id);
    fprintf(f, "# data\n#   file = %s\n",
            cfg->data_path ? cfg->data_path : "");
    switch (cfg->init_mode) {
    case DRIFT_INIT_RANDOM:
        fprintf(f, "# init = %.10g\n",
                cfg->init_radius > 0 ? cfg->init_radius : 2.0);
        break;
    case DRIFT_INIT_VALUES:
        fprintf(f, "# init = %s\n", cfg->init_path ? cfg->init_path : "");
        break;
    default:
        fputs("# init = 0\n", f);
    }
    fprintf(f, "# random\n#   seed = %llu\n", (unsigned long long)cfg->seed);
    char path[4096];
    drift_chain_path(cfg->out_path ? cfg->out_path : "", cfg->chains, c->id,
                     path, sizeof path);
    fprintf(f, "# output\n#   file = %s\n", path);
}

/* drift's own keys: what CmdStan has no key for. */
static void write_drift_config(drift_chain *c, FILE *f)
{
    const drift_run_config *cfg = c->cfg;
    const drift_sampler *s = cfg->sampler;
    fprintf(f, "# sampler = %s\n", s->name);
    if (cfg->sampler_path)
        fprintf(f, "# sampler_file = %s\n", cfg->sampler_path);
    fprintf(f, "# batch = %zu\n", c->batch);
    fprintf(f, "# access = %s\n", drift_access_name(c->stream.mode));
    if (cfg->iters)
        fprintf(f, "# iterations = %llu\n", (unsigned long long)cfg->iters);
    if (cfg->passes > 0)
        fprintf(f, "# passes = %.10g\n", cfg->passes);
    if (cfg->seconds > 0)
        fprintf(f, "# seconds = %.10g\n", cfg->seconds);
    fprintf(f, "# warmup_iterations = %llu\n",
            (unsigned long long)cfg->warmup);
    if (cfg->emit_segments)
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
                cfg->thin_time > 0 ? cfg->thin_time : 1.0);
    if (cfg->grad_noise > 0)
        fprintf(f, "# grad_noise = %.10g\n", cfg->grad_noise);
    if (cfg->full_threads > 1)
        fprintf(f, "# threads = %u\n", cfg->full_threads);
    if (cfg->test_model) {
        /* Where the held-out metrics go: beside this file. */
        char path[4096], mpath[4200];
        drift_chain_path(cfg->out_path, cfg->chains, c->id, path, sizeof path);
        drift_heldout_path(path, mpath, sizeof mpath);
        const char *base = strrchr(mpath, '/');
        fprintf(f, "# test = %s\n", cfg->test_path ? cfg->test_path : "");
        fprintf(f, "# eval_every = %.10g\n", cfg->eval_every);
        fprintf(f, "# metrics_file = %s\n", base ? base + 1 : mpath);
    }
    fprintf(f, "# N = %zu\n", c->N);
    fprintf(f, "# dim = %zu\n", c->d);
    fprintf(f, "# sampler_memory_bytes = %zu\n", c->mem_used);
    if (c->out->add_treedepth || c->out->add_divergent)
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
    const drift_sampler *s = cfg->sampler;
    fputs("lp__,grads__", f);
    for (size_t k = 0; k < s->n_columns; k++)
        fprintf(f, ",%s", s->columns[k]);
    if (c->out->add_treedepth)
        fputs(",treedepth__", f);
    if (c->out->add_divergent)
        fputs(",divergent__", f);
    if (cfg->emit_segments)
        fputs(",time__,duration__", f);
    for (size_t k = 0; k < c->model->n_out; k++)
        fprintf(f, ",%s", c->model->out_names[k]);
    /* No dot in these names: rstan would read x0.1__ as element 1 of a
     * parameter x0. */
    if (cfg->emit_segments) {
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, ",x0_%zu__", k + 1);
        for (size_t k = 0; k < c->d; k++)
            fprintf(f, ",v_%zu__", k + 1);
    }
    fputc('\n', f);
}

int drift_csvout_begin(drift_chain *c)
{
    const drift_sampler *s = c->cfg->sampler;
    struct drift_csvout *o = drift_calloc(1, sizeof *o);
    if (!o)
        return drift_chain_fail(c, DRIFT_ENOMEM,
                                "out of memory for the output file");
    c->out = o;
    o->at_num_samples = o->at_num_warmup = o->at_save_warmup =
        o->at_engaged = -1;
    o->add_treedepth = !has_column(s, "treedepth__");
    o->add_divergent = !has_column(s, "divergent__");
    o->stepsize_col = -1;
    for (size_t k = 0; k < s->n_columns; k++)
        if (!strcmp(s->columns[k], "stepsize__"))
            o->stepsize_col = (long)k;
    if (!c->w)
        return DRIFT_OK;
    FILE *f = drift_writer_file(c->w);
    const drift_run_config *cfg = c->cfg;
    fprintf(f, "# drift_version = %s\n", PACKAGE_VERSION);
    for (const char *const *h = cfg->header; h && *h; h++)
        fprintf(f, "# %s\n", *h);
    write_cmdstan_config(c, f);
    write_drift_config(c, f);
    write_columns(c, f);
    return DRIFT_OK;
}

void drift_csvout_free(drift_chain *c)
{
    drift_free(c->out);
    c->out = NULL;
    drift_free(c->adapt.inv_metric);
    c->adapt.inv_metric = NULL;
    c->adapt.n_inv_metric = 0;
}

void drift_csvout_compat_values(const drift_chain *c, FILE *f)
{
    if (c->out->add_treedepth)
        fputs(",0", f);
    if (c->out->add_divergent)
        fputs(",0", f);
}

int drift_csvout_set_adapted(drift_chain *c, double stepsize,
                             int metric_kind, const double *inv_metric,
                             size_t n)
{
    double *copy = NULL;
    if (metric_kind != 0 && n) {
        copy = drift_malloc_array(n, sizeof *copy);
        if (!copy)
            return drift_chain_fail(c, DRIFT_ENOMEM,
                                    "out of memory for the metric");
        memcpy(copy, inv_metric, n * sizeof *copy);
    }
    drift_free(c->adapt.inv_metric);
    c->adapt.inv_metric = copy;
    c->adapt.n_inv_metric = copy ? n : 0;
    c->adapt.metric_kind = metric_kind;
    c->adapt.stepsize = stepsize;
    c->adapt.set = 1;
    return DRIFT_OK;
}

/* The step size the block reports (see drift_csvout_adaptation). */
static double block_stepsize(const drift_chain *c, const double *diag)
{
    if (c->adapt.set && isfinite(c->adapt.stepsize))
        return c->adapt.stepsize;
    if (diag && c->out && c->out->stepsize_col >= 0 &&
        isfinite(diag[c->out->stepsize_col]))
        return diag[c->out->stepsize_col];
    const drift_sampler *s = c->cfg->sampler;
    long k = drift_hparams_find(s->hparams, s->n_hparams, "h");
    if (k < 0)
        k = drift_hparams_find(s->hparams, s->n_hparams, "eta");
    if (k >= 0 && isfinite(c->cfg->hp[k]) && c->cfg->hp[k] > 0)
        return c->cfg->hp[k];
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

void drift_csvout_adaptation(drift_chain *c, const double *diag)
{
    if (c->adapt.written || !c->w)
        return;
    c->adapt.written = 1;
    FILE *f = drift_writer_file(c->w);
    fputs("# Adaptation terminated\n# Step size = ", f);
    drift_writer_real(f, block_stepsize(c, diag));
    fputc('\n', f);
    size_t d = c->d;
    const double *m = c->adapt.inv_metric;
    switch (c->adapt.metric_kind) {
    case 1:
        fputs("# Diagonal elements of inverse mass matrix:\n", f);
        write_values(f, c->adapt.n_inv_metric == d ? m : NULL, d, 1.0);
        break;
    case 2:
        fputs("# Elements of inverse mass matrix:\n", f);
        for (size_t i = 0; i < d; i++) {
            if (m && c->adapt.n_inv_metric == d * d) {
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

void drift_csvout_finish(drift_chain *c, const drift_csvout_end *end)
{
    if (!c->w)
        return;
    FILE *f = drift_writer_file(c->w);
    drift_csvout_adaptation(c, NULL);
    if (end->note && *end->note)
        fprintf(f, "# drift: %s\n", end->note);
    if (drift_csvout_num_warmup(c) == 0)
        fputs("# drift: no warmup; the header says num_warmup 1 and "
              "save_warmup 0 because\n"
              "#   CmdStanPy 1.2 refuses num_warmup 0; no row of this file "
              "is a warmup draw\n",
              f);
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
    double w = end->warmup_seconds > 0 ? end->warmup_seconds : 0;
    double s = end->sampling_seconds > 0 ? end->sampling_seconds : 0;
    fprintf(f,
            "# \n"
            "#  Elapsed Time: %.6f seconds (Warm-up)\n"
            "#                %.6f seconds (Sampling)\n"
            "#                %.6f seconds (Total)\n"
            "# \n",
            w, s, w + s);
    struct drift_csvout *o = c->out;
    if (o) {
        patch(f, o->at_num_samples, drift_csvout_num_samples(c), COUNT_WIDTH);
        patch(f, o->at_num_warmup, header_num_warmup(c), COUNT_WIDTH);
        patch(f, o->at_save_warmup, (uint64_t)header_save_warmup(c), 1);
        patch(f, o->at_engaged, c->adapt.set ? 1 : 0, 1);
    }
}
