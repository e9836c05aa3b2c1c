/* harness.c: shared test machinery (see harness.h). */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

#include "engine/run/rng.h"

extern char **environ;
#include "engine/run/plan.h"
#include "engine/run/stream.h"

drift_registry *th_registry(void)
{
    drift_registry *reg = drift_registry_new();
    assert_non_null(reg);
    drift_err e;
    assert_int_equal(drift_registry_scan(reg, &e), DRIFT_OK);
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (tp && *tp) {
        char path[4096];
        const char *names[] = {"gauss.so", "normmean.so", "catmodel.so",
                               "quartic.so", "corrgauss.so", "doublewell.so",
                               "ridge.so", "mvn.so", "halfgauss.so", NULL};
        for (const char **n = names; *n; n++) {
            snprintf(path, sizeof path, "%s/%s", tp, *n);
            if (access(path, R_OK) == 0 && drift_registry_load(reg, path, &e))
                fail_msg("loading %s: %s", path, e.msg);
        }
    }
    if (drift_registry_n_samplers(reg) == 0)
        fail_msg("no sampler plugins found on %s: run the tests with make "
                 "check",
                 drift_registry_search_path(reg));
    return reg;
}

char *th_write_text(const char *text, const char *suffix)
{
    char tmpl[] = "/tmp/drift-test-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    size_t len = strlen(tmpl) + strlen(suffix) + 1;
    char *path = malloc(len);
    assert_non_null(path);
    snprintf(path, len, "%s%s", tmpl, suffix);
    assert_int_equal(rename(tmpl, path), 0);
    return path;
}

char *th_write_csv(const char *const *names, size_t cols,
                   const double *values, size_t rows)
{
    char tmpl[] = "/tmp/drift-test-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (size_t c = 0; c < cols; c++)
        fprintf(f, "%s%s", c ? "," : "", names[c]);
    fputc('\n', f);
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < cols; c++)
            fprintf(f, "%s%.17g", c ? "," : "", values[r * cols + c]);
        fputc('\n', f);
    }
    fclose(f);
    size_t len = strlen(tmpl) + 5;
    char *path = malloc(len);
    assert_non_null(path);
    snprintf(path, len, "%s.csv", tmpl);
    assert_int_equal(rename(tmpl, path), 0);
    return path;
}

void th_open(th_problem *tp, const char *model, const char *data_path,
             char *const *model_set, size_t n_model_set)
{
    tp->reg = th_registry();
    const char *data[2] = {data_path, NULL};
    drift_problem_spec spec = {.model = model, .data = data_path ? data : NULL,
                               .model_set = model_set, .n_model_set = n_model_set};
    drift_err e = {{0}};
    if (drift_problem_open(&tp->p, tp->reg, &spec, &e))
        fail_msg("opening model %s: %s", model, e.msg);
}

void th_expect_model_refusal(const char *model, const char *text,
                             const char *needle)
{
    char *path = th_write_text(text, ".csv");
    drift_registry *reg = th_registry();
    drift_problem p;
    const char *data[] = {path, NULL};
    drift_problem_spec spec = {.model = model, .data = data};
    drift_err e = {{0}};
    assert_int_not_equal(drift_problem_open(&p, reg, &spec, &e), 0);
    if (!strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s'", e.msg, needle);
    assert_non_null(strstr(e.msg, path));
    drift_problem_close(&p);
    drift_registry_free(reg);
    unlink(path);
    free(path);
}

void th_close(th_problem *tp)
{
    drift_problem_close(&tp->p);
    drift_registry_free(tp->reg);
}

typedef struct collector {
    th_draws *out;
    unsigned first_id;
    const th_run *r;
} collector;

static void on_row(void *user, unsigned id, unsigned flags,
                   const double *row, size_t n)
{
    (void)flags;
    collector *col = user;
    if (col->r->row_hook)
        col->r->row_hook(col->r->row_hook_user, id);
    if (!col->out)
        return;
    th_draws *d = &col->out[id - col->first_id];
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1024;
        d->v = realloc(d->v, d->cap * n * sizeof(double));
        assert_non_null(d->v);
    }
    d->cols = n;
    memcpy(d->v + d->n * n, row, n * sizeof(double));
    d->n++;
}

typedef struct traj_collector {
    th_traj *out;
    unsigned first_id;
} traj_collector;

static void on_trajectory(void *user, unsigned id, double time,
                          const double *mean, const double *var, size_t d)
{
    traj_collector *tc = user;
    th_traj *t = &tc->out[id - tc->first_id];
    assert_true(d <= sizeof t->mean / sizeof t->mean[0]);
    t->time = time;
    t->d = d;
    memcpy(t->mean, mean, d * sizeof *mean);
    memcpy(t->var, var, d * sizeof *var);
}

/* The spec's options, built one by one (values copied). */
typedef struct th_chain_opts {
    drift_option o[64];
    char v[64][64];
    size_t n;
} th_opts;

static void opt(th_opts *o, const char *name, const char *fmt, ...)
{
    assert_true(o->n < 64);
    o->o[o->n].name = name;
    o->o[o->n].value = NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->v[o->n], sizeof o->v[o->n], fmt, ap);
        va_end(ap);
        o->o[o->n].value = o->v[o->n];
    }
    o->n++;
}

/* Every field of r that an option of drift sample says, as that option
 * (a value the harness means, 0 warmup or thin 1, given explicitly, since
 * the command's defaults differ); long values (paths) are borrowed. */
static void run_options(const th_run *r, unsigned K, th_opts *o,
                        const char **init)
{
    static const char *const gradients[] = {
        [DRIFT_GRADIENT_PLAIN] = "plain", [DRIFT_GRADIENT_CV] = "cv",
        [DRIFT_GRADIENT_SVRG] = "svrg",   [DRIFT_GRADIENT_SAGA] = "saga",
        [DRIFT_GRADIENT_TMU] = "tmu"};
    for (size_t k = 0; k < r->n_set; k++) {
        opt(o, "set", NULL);
        o->o[o->n - 1].value = r->set[k];
    }
    if (r->batch)
        opt(o, "batch", "%zu", r->batch);
    opt(o, "access", "%s", drift_access_name(r->access));
    if (r->warmup_only)
        opt(o, "iter", "0");
    else if (r->iters)
        opt(o, "iter", "%llu", (unsigned long long)r->iters);
    if (r->passes > 0)
        opt(o, "passes", "%.17g", r->passes);
    opt(o, "warmup", "%llu", (unsigned long long)r->warmup);
    if (r->save_warmup)
        opt(o, "save-warmup", NULL);
    if (r->thin_time > 0)
        opt(o, "thin", "%.17g", r->thin_time);
    else
        opt(o, "thin", "%llu", (unsigned long long)(r->thin ? r->thin : 1));
    opt(o, "seed", "%llu", (unsigned long long)r->seed);
    opt(o, "chains", "%u", K);
    if (r->first_chain_id)
        opt(o, "chain-id", "%u", r->first_chain_id);
    if (r->grad_noise > 0)
        opt(o, "grad-noise", "%.17g", r->grad_noise);
    if (r->max_memory)
        opt(o, "max-memory", "%zu", r->max_memory);
    assert_true(r->gradient >= 0 &&
                (size_t)r->gradient < sizeof gradients / sizeof *gradients);
    opt(o, "gradient", "%s", gradients[r->gradient]);
    if (r->save_gradients)
        opt(o, "save-gradients", NULL);
    if (r->threads)
        opt(o, "threads", "%u", r->threads);
    if (r->emit_segments)
        opt(o, "emit", "segments");
    if (r->out_path) {
        opt(o, "out", NULL);
        o->o[o->n - 1].value = r->out_path;
    }
    if (r->test_path) {
        opt(o, "test", NULL);
        o->o[o->n - 1].value = r->test_path;
    }
    if (r->eval_every > 0)
        opt(o, "eval-every", "%.17g", r->eval_every);
    opt(o, "quiet", NULL);
    /* The initial point: values in memory are the plan's hook, the rest
     * the init option. */
    *init = NULL;
    switch (r->init_mode) {
    case DRIFT_INIT_ZERO: *init = "zero"; break;
    case DRIFT_INIT_RANDOM:
        if (r->init_radius > 0)
            opt(o, "init", "%.17g", r->init_radius);
        else
            *init = "random";
        break;
    case DRIFT_INIT_MODE: *init = "mode"; break;
    case DRIFT_INIT_VALUES: assert_non_null(r->init_values); break;
    default: fail_msg("init_mode %d: no option says it", r->init_mode);
    }
    if (*init) {
        opt(o, "init", NULL);
        o->o[o->n - 1].value = *init;
    }
}

/* What the plan takes of a run besides its options: the opened problem
 * and registry, the in-memory initial values, and whether the engine
 * plans the run. */
static drift_plan_internal problem_hooks(th_problem *tp, const th_run *r)
{
    return (drift_plan_internal){
        .reg = tp->reg,
        .prob = &tp->p,
        .init_values = r->init_mode == DRIFT_INIT_VALUES ? r->init_values
                                                         : NULL,
        .init_given = r->init_given,
        .unplanned = r->unplanned,
    };
}

int th_sample(th_problem *tp, const th_run *r, th_draws *out,
              drift_chain_result *results)
{
    unsigned K = r->chains ? r->chains : 1;
    if (out)
        memset(out, 0, K * sizeof *out);
    unsigned first = r->first_chain_id ? r->first_chain_id : 1;
    collector col = {out, first, r};
    traj_collector tcol = {r->traj, first};
    if (r->traj)
        memset(r->traj, 0, K * sizeof *r->traj);
    th_opts o;
    const char *init;
    memset(&o, 0, sizeof o);
    run_options(r, K, &o, &init);
    drift_spec spec = {.sampler = r->sampler, .options = o.o,
                       .n_options = o.n, .on_draw = on_row,
                       .on_draw_user = &col};
    drift_plan_internal in = problem_hooks(tp, r);
    in.on_trajectory = r->traj ? on_trajectory : NULL;
    in.on_trajectory_user = &tcol;
    in.parallel = r->parallel;
    drift_chain_result local[16];
    drift_chain_result *res = results ? results : local;
    assert_true(results || K <= 16);
    memset(res, 0, K * sizeof *res);
    drift_err e = {{0}};
    drift_plan *p;
    int rc = drift_plan_new_internal(&spec, &in, &p, &e);
    if (rc) {
        /* refused before any chain started: every chain says why */
        for (unsigned k = 0; k < K; k++) {
            res[k].id = first + k;
            res[k].status = rc;
            snprintf(res[k].message, sizeof res[k].message, "%s", e.msg);
        }
        return rc;
    }
    rc = drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e);
    assert_true(p->n_results == K);
    memcpy(res, p->results, K * sizeof *res);
    drift_plan_free(p);
    return rc;
}

/* Rows of a chain set up alone, dropped. */
static void chain_row(void *user, unsigned id, unsigned flags,
                      const double *row, size_t n)
{
    (void)user, (void)id, (void)flags, (void)row, (void)n;
}

void th_chain_open(th_chain *tc, th_problem *tp, const th_run *r,
                   drift_draw_fn rows, void *rows_user, double *theta)
{
    memset(tc, 0, sizeof *tc);
    tc->opts = calloc(1, sizeof *tc->opts);
    assert_non_null(tc->opts);
    const char *init;
    run_options(r, 1, tc->opts, &init);
    drift_spec spec = {.sampler = r->sampler, .options = tc->opts->o,
                       .n_options = tc->opts->n,
                       .on_draw = rows ? rows : chain_row,
                       .on_draw_user = rows_user};
    drift_plan_internal in = problem_hooks(tp, r);
    drift_err e = {{0}};
    if (drift_plan_new_internal(&spec, &in, &tc->plan, &e))
        fail_msg("sampler %s: %s", r->sampler, e.msg);
    tc->cfg = &tc->plan->cfg;
    if (drift_run_chain_setup(&tc->c, tc->cfg, tc->cfg->launch.first_chain_id,
                              theta))
        fail_msg("chain: %s", tc->c.message);
}

void th_chain_close(th_chain *tc)
{
    drift_run_chain_release(&tc->c);
    drift_plan_free(tc->plan);
    free(tc->opts);
    memset(tc, 0, sizeof *tc);
}

void th_draws_free(th_draws *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

double th_mean(const th_draws *d, size_t col, size_t from)
{
    double s = 0;
    for (size_t i = from; i < d->n; i++)
        s += d->v[i * d->cols + col];
    return s / (double)(d->n - from);
}

double th_cov(const th_draws *d, size_t a, size_t b, size_t from)
{
    double ma = th_mean(d, a, from), mb = th_mean(d, b, from), s = 0;
    for (size_t i = from; i < d->n; i++)
        s += (d->v[i * d->cols + a] - ma) * (d->v[i * d->cols + b] - mb);
    return s / (double)(d->n - from - 1);
}

double th_var(const th_draws *d, size_t col, size_t from)
{
    return th_cov(d, col, col, from);
}

double th_ess(const th_draws *d, size_t col, size_t from)
{
    size_t n = d->n - from;
    double m = th_mean(d, col, from), v = 0;
    const double *x = d->v + from * d->cols + col;
    size_t st = d->cols;
    for (size_t i = 0; i < n; i++)
        v += (x[i * st] - m) * (x[i * st] - m);
    v /= (double)n;
    if (v <= 0)
        return (double)n;
    /* Autocorrelations summed in pairs while the pair sums stay positive
     * and decreasing (Geyer 1992). */
    double sum = 0, prev = INFINITY;
    for (size_t lag = 0; lag + 1 < n; lag += 2) {
        double r[2];
        for (int j = 0; j < 2; j++) {
            size_t L = lag + (size_t)j;
            double s = 0;
            for (size_t i = 0; i + L < n; i++)
                s += (x[i * st] - m) * (x[(i + L) * st] - m);
            r[j] = s / ((double)n * v);
        }
        double pair = r[0] + r[1];
        if (pair <= 0)
            break;
        if (pair > prev)
            pair = prev;
        sum += pair;
        prev = pair;
    }
    double tau = 2 * sum - 1;
    return tau > 0 ? (double)n / tau : (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double th_ks(double *x, size_t n, double (*cdf)(double, void *), void *arg)
{
    qsort(x, n, sizeof *x, cmp_double);
    double D = 0;
    for (size_t i = 0; i < n; i++) {
        double F = cdf(x[i], arg);
        double lo = F - (double)i / (double)n, hi = (double)(i + 1) / (double)n - F;
        if (lo > D)
            D = lo;
        if (hi > D)
            D = hi;
    }
    return D;
}

double th_pnorm(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

char *th_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

pid_t th_cli_spawn(const char *const *args, int fd_out, int fd_err)
{
    const char *bin = getenv("DRIFT_BIN");
    if (!bin)
        fail_msg("DRIFT_BIN is not set: run with make check");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (fd_out >= 0)
        posix_spawn_file_actions_adddup2(&fa, fd_out, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd_err, 2);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    /* drift starts with the stop signals' default actions and none
     * blocked, as from a terminal, however the suite was started (a
     * shell's background job has SIGINT ignored, which drift honours). */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t dfl, none;
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGHUP);
    sigaddset(&dfl, SIGQUIT);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, bin, &fa, &at, (char *const *)argv,
                                 environ),
                     0);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

th_cli th_cli_run(const char *const *args)
{
    char outp[] = "/tmp/drift-cli-out-XXXXXX", errp[] = "/tmp/drift-cli-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    assert_true(fo >= 0 && fe >= 0);
    pid_t pid = th_cli_spawn(args, fo, fe);
    int st;
    waitpid(pid, &st, 0);
    close(fo);
    close(fe);
    th_cli r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                th_slurp(outp), th_slurp(errp)};
    unlink(outp);
    unlink(errp);
    return r;
}

void th_cli_free(th_cli *r)
{
    free(r->out);
    free(r->err);
}

char *th_gauss_data(th_gauss *t)
{
    enum { N = TH_GAUSS_N, D = TH_GAUSS_D };
    static double v[N * D];
    drift_rng r;
    drift_rng_seed(&r, 2024, 0);
    const double centre[D] = {1.0, -2.0};
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < D; j++)
            v[i * D + j] = centre[j] + drift_rng_normal(&r);
    t->a = 1.0 / 100.0 + N;
    for (size_t j = 0; j < D; j++) {
        double s = 0, ss = 0;
        for (size_t i = 0; i < N; i++)
            s += v[i * D + j];
        double ybar = s / N;
        for (size_t i = 0; i < N; i++)
            ss += (v[i * D + j] - ybar) * (v[i * D + j] - ybar);
        t->s2y[j] = ss / N;
        t->m[j] = s / t->a;
    }
    const char *names[D] = {"y.1", "y.2"};
    return th_write_csv(names, D, v, N);
}

drift_stancsv *th_csv_read(const char *path)
{
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &f, &e))
        fail_msg("%s", e.msg);
    return f;
}

double th_csv_value(const drift_stancsv *f, const char *name, size_t r)
{
    long c = drift_stancsv_column(f, name);
    if (c < 0)
        fail_msg("%s: no column %s", f->path ? f->path : "file", name);
    return f->values[r * f->n_cols + (size_t)c];
}
