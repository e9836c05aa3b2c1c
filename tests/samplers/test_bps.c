/* test_bps.c: the bouncy particle sampler against closed forms on the
 * data-free normal targets of tests/plugins/mvn.c: moments recovered both
 * from draws discretised at a fixed time step and from the engine's exact
 * trajectory integrals; the skeleton written by --emit segments is a
 * continuous path that integrates to the engine's moments; and, with
 * bounded zero-mean noise of known variance added to every gradient, BPS
 * with an exact bound still targets the right law (Pakman et al. 2017,
 * Theorem 1).  Tolerances: 4.5 Monte Carlo standard errors, each from the
 * effective sample size (Geyer's initial monotone sequence) of the draws.
 * The trajectory average and the average of draws at a time step much
 * shorter than the autocorrelation time have the same asymptotic variance,
 * so the draws' standard error serves for both. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/run/hparam.h"
#include "engine/run/oracle.h"
#include "engine/run/rng.h"
#include "harness.h"

enum { NCOL = 3 }; /* bounces__, proposals__, bound_violations__ */

/* The truth for mvn with dim d, AR(1) correlation rho, sds s_i. */
typedef struct truth {
    size_t d;
    double mean, rho, s[8];
} truth;

static double cov_true(const truth *t, size_t i, size_t j)
{
    size_t lag = i > j ? i - j : j - i;
    return t->s[i] * t->s[j] * pow(t->rho, (double)lag);
}

static truth make_truth(size_t d, double rho, double sd, double ratio,
                        double mean)
{
    truth t = {d, mean, rho, {0}};
    for (size_t i = 0; i < d; i++)
        t.s[i] = sd * pow(ratio, d > 1 ? (double)i / (double)(d - 1) : 0);
    return t;
}

/* Standard error of the mean of f(column) over draws, by ESS. */
static double se_mean_of(const th_draws *dr, size_t col, double centre,
                         int square, double *est)
{
    th_draws tmp = {dr->n, 1, dr->n, malloc(dr->n * sizeof(double))};
    assert_non_null(tmp.v);
    for (size_t i = 0; i < dr->n; i++) {
        double x = dr->v[i * dr->cols + col] - centre;
        tmp.v[i] = square ? x * x : x;
    }
    double m = th_mean(&tmp, 0, 0), var = th_var(&tmp, 0, 0);
    double ess = th_ess(&tmp, 0, 0);
    free(tmp.v);
    if (est)
        *est = m;
    return sqrt(var / ess);
}

/* Checks the draws and the trajectory moments against t. */
static void check_moments(const th_draws *dr, const th_traj *tr,
                          const truth *t, const char *what)
{
    assert_true(tr->time > 0);
    assert_int_equal(tr->d, t->d);
    for (size_t k = 0; k < t->d; k++) {
        size_t col = 2 + NCOL + k;
        double v_true = cov_true(t, k, k), mean_d, msq_d;
        double se_m = se_mean_of(dr, col, 0, 0, &mean_d);
        /* Second moment about the true mean: its mean is the variance. */
        double se_v = se_mean_of(dr, col, t->mean, 1, &msq_d);
        double var_tr = tr->var[k] + (tr->mean[k] - t->mean) *
                                         (tr->mean[k] - t->mean);
        print_message("%s x.%zu: mean draws %.4f traj %.4f (true %.4f, se "
                      "%.4f); var draws %.4f traj %.4f (true %.4f, se %.4f)\n",
                      what, k + 1, mean_d, tr->mean[k], t->mean, se_m, msq_d,
                      var_tr, v_true, se_v);
        assert_true(fabs(mean_d - t->mean) < 4.5 * se_m);
        assert_true(fabs(tr->mean[k] - t->mean) < 4.5 * se_m);
        assert_true(fabs(msq_d - v_true) < 4.5 * se_v);
        assert_true(fabs(var_tr - v_true) < 4.5 * se_v);
        /* The two estimators of one integral: far closer than their error. */
        assert_true(fabs(mean_d - tr->mean[k]) < 0.5 * se_m);
    }
}

static void run_gauss(const char *what, char **model_set, size_t n_model_set,
                      const truth *t, char **set, size_t n_set,
                      uint64_t iters, double dt, uint64_t seed)
{
    th_problem tp;
    th_open(&tp, "mvn", NULL, model_set, n_model_set);
    th_traj tr;
    th_run r = {.sampler = "bps", .set = set, .n_set = n_set, .iters = iters,
                .warmup = 1000, .thin_time = dt, .seed = seed, .traj = &tr};
    th_draws dr;
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, &dr, &res), DRIFT_OK);
    print_message("%s: %llu segments, trajectory time %.0f, %zu draws, "
                  "%llu proposals, %llu violations\n",
                  what, (unsigned long long)res.iterations, tr.time, dr.n,
                  (unsigned long long)res.proposals,
                  (unsigned long long)res.violations);
    /* Log-concave target: the grid bound is exact. */
    assert_int_equal(res.violations, 0);
    /* Roughly one draw per dt of trajectory time. */
    assert_true(fabs((double)dr.n - tr.time / dt) < 2);
    check_moments(&dr, &tr, t, what);
    /* The columns count what the result counts. */
    const double *last = dr.v + (dr.n - 1) * dr.cols;
    assert_true(last[3] <= (double)res.proposals && last[3] > 0);
    assert_true(last[2] > 0 && last[2] <= last[3]);
    /* lp__: the engine's value at the written point (the sampler has
     * none along a segment); exact for a data-free model. */
    if (t->rho == 0 && t->mean == 0) {
        double c0 = NAN;
        for (size_t i = 0; i < dr.n; i++) {
            const double *row = dr.v + i * dr.cols;
            double q = 0;
            for (size_t k = 0; k < t->d; k++) {
                double z = row[dr.cols - t->d + k] / t->s[k];
                q += z * z;
            }
            assert_true(isfinite(row[0]));
            if (i == 0)
                c0 = row[0] + 0.5 * q;
            assert_true(fabs(row[0] + 0.5 * q - c0) < 1e-9 * (1 + q));
        }
    }
    th_draws_free(&dr);
    th_close(&tp);
}

static void test_standard(void **state)
{
    (void)state;
    char *ms[] = {"dim=4"};
    truth t = make_truth(4, 0, 1, 1, 0);
    char *set[] = {"refresh=1"};
    run_gauss("standard", ms, 1, &t, set, 1, 80000, 0.25, 11);
}

static void test_correlated(void **state)
{
    (void)state;
    char *ms[] = {"dim=3", "rho=0.8", "sd=1", "ratio=3", "mean=1"};
    truth t = make_truth(3, 0.8, 1, 3, 1);
    char *set[] = {"refresh=0.5"};
    th_problem tp;
    th_open(&tp, "mvn", NULL, ms, 5);
    th_traj tr;
    th_run r = {.sampler = "bps", .set = set, .n_set = 1, .iters = 120000,
                .warmup = 1000, .thin_time = 0.25, .seed = 12, .traj = &tr};
    th_draws dr;
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, &dr, &res), DRIFT_OK);
    assert_int_equal(res.violations, 0);
    check_moments(&dr, &tr, &t, "correlated");
    /* The correlations, from the draws. */
    for (size_t i = 0; i + 1 < t.d; i++) {
        size_t a = 2 + NCOL + i, b = a + 1;
        th_draws tmp = {dr.n, 1, dr.n, malloc(dr.n * sizeof(double))};
        for (size_t n = 0; n < dr.n; n++)
            tmp.v[n] = (dr.v[n * dr.cols + a] - t.mean) *
                       (dr.v[n * dr.cols + b] - t.mean);
        double c = th_mean(&tmp, 0, 0);
        double se = sqrt(th_var(&tmp, 0, 0) / th_ess(&tmp, 0, 0));
        free(tmp.v);
        print_message("cov(x.%zu, x.%zu) = %.4f (true %.4f, se %.4f)\n",
                      i + 1, i + 2, c, cov_true(&t, i, i + 1), se);
        assert_true(fabs(c - cov_true(&t, i, i + 1)) < 4.5 * se);
    }
    th_draws_free(&dr);
    th_close(&tp);
}

/* ---- the skeleton ---- */

static void test_segments(void **state)
{
    (void)state;
    char *ms[] = {"dim=2", "rho=0.5", "mean=-1"};
    th_problem tp;
    th_open(&tp, "mvn", NULL, ms, 3);
    th_traj tr;
    char path[] = "/tmp/drift-bps-seg-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    th_run r = {.sampler = "bps", .iters = 5000, .warmup = 100, .seed = 5,
                .emit_segments = 1, .traj = &tr, .out_path = path};
    th_draws dr;
    assert_int_equal(th_sample(&tp, &r, &dr, NULL), DRIFT_OK);
    /* lp__, grads__, 3 columns, time__, duration__, x.1, x.2, x0_1__,
     * x0_2__, v_1__, v_2__ (the file adds treedepth__ and divergent__
     * after the sampler's columns). */
    assert_int_equal(dr.cols, 2 + NCOL + 2 + 2 + 2 + 2);
    assert_int_equal(dr.n, 5000);
    size_t T = 2 + NCOL, X = T + 4, V = X + 2;
    double m1[2] = {0, 0}, m2[2] = {0, 0}, time = 0;
    for (size_t i = 0; i < dr.n; i++) {
        const double *row = dr.v + i * dr.cols;
        double dur = row[T + 1];
        assert_true(dur > 0);
        assert_true(fabs(row[T] - time) < 1e-9 * (1 + time));
        assert_true(fabs(hypot(row[V], row[V + 1]) - 1) < 1e-12);
        for (size_t k = 0; k < 2; k++) {
            assert_true(row[T + 2 + k] == row[X + k]); /* identity model */
            /* Integrals by Simpson's rule: exact for quadratics. */
            double a = row[X + k], b = a + row[V + k] * dur / 2,
                   c = a + row[V + k] * dur;
            m1[k] += dur / 6 * (a + 4 * b + c);
            m2[k] += dur / 6 * (a * a + 4 * b * b + c * c);
            if (i + 1 < dr.n)
                assert_true(fabs(dr.v[(i + 1) * dr.cols + X + k] - c) <
                            1e-9);
        }
        time += dur;
    }
    assert_true(fabs(time - tr.time) < 1e-9 * time);
    for (size_t k = 0; k < 2; k++) {
        double mean = m1[k] / time, var = m2[k] / time - mean * mean;
        assert_true(fabs(mean - tr.mean[k]) < 1e-9);
        assert_true(fabs(var - tr.var[k]) < 1e-9);
    }
    /* The file: a header naming the skeleton's columns, then the rows and
     * the footer. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int saw_cols = 0, saw_emit = 0, saw_footer = 0;
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# emit = segments", 17))
            saw_emit = 1;
        else if (!strncmp(line, "# trajectory_mean", 17))
            saw_footer = 1;
        else if (!strcmp(line, "lp__,grads__,bounces__,proposals__,"
                               "bound_violations__,treedepth__,divergent__,"
                               "time__,duration__,x.1,x.2,x0_1__,x0_2__,"
                               "v_1__,v_2__\n"))
            saw_cols = 1;
        else if (line[0] != '#')
            rows++;
    }
    fclose(f);
    unlink(path);
    assert_true(saw_cols && saw_emit && saw_footer);
    assert_int_equal(rows, 5000);
    th_draws_free(&dr);
    th_close(&tp);
}

/* The draws a continuous sampler writes are the skeleton's points at
 * every multiple of --thin, 0, dt, 2 dt, ..., with none skipped: the same
 * seed run once as segments and once as draws. */
static void test_draws_on_grid(void **state)
{
    (void)state;
    char *ms[] = {"dim=2", "rho=0.5", "mean=-1"};
    th_problem tp;
    th_open(&tp, "mvn", NULL, ms, 3);
    const double dt = 0.25;
    th_run rs = {.sampler = "bps", .iters = 400, .seed = 8, .emit_segments = 1};
    th_run rd = {.sampler = "bps", .iters = 400, .seed = 8, .thin_time = dt};
    th_draws sg, dr;
    assert_int_equal(th_sample(&tp, &rs, &sg, NULL), DRIFT_OK);
    assert_int_equal(th_sample(&tp, &rd, &dr, NULL), DRIFT_OK);
    size_t T = 2 + NCOL, X = T + 4, V = X + 2;
    const double *last = sg.v + (sg.n - 1) * sg.cols;
    double end = last[T] + last[T + 1];
    assert_int_equal(dr.n, (size_t)ceil(end / dt));
    size_t j = 0;
    for (size_t i = 0; i < dr.n; i++) {
        double t = dt * (double)i;
        while (j + 1 < sg.n && sg.v[(j + 1) * sg.cols + T] <= t)
            j++;
        const double *seg = sg.v + j * sg.cols;
        for (size_t k = 0; k < 2; k++) {
            double x = seg[X + k] + seg[V + k] * (t - seg[T]);
            assert_true(fabs(dr.v[i * dr.cols + 2 + NCOL + k] - x) < 1e-9);
        }
    }
    th_draws_free(&sg);
    th_draws_free(&dr);
    th_close(&tp);
}

/* A discrete sampler cannot emit segments: refused before any chain. */
static void test_segments_refused(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "mvn", NULL, NULL, 0);
    th_run r = {.sampler = "sgld", .iters = 10, .seed = 1, .emit_segments = 1};
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, NULL, &res), DRIFT_EINVAL);
    th_close(&tp);
}

/* ---- Theorem 1: noisy gradients, exact bound ---- */

/* Every gradient gets independent noise uniform on [-A, A] per coordinate
 * (mean 0, variance A^2/3); for a unit vector u, |u . noise| <= A sqrt(d). */
#define NOISE_A 1.5
static drift_rng noise_rng;
static uint64_t noisy_calls;

static int noisy_grad_full(drift_chain *c, const double *theta, double *grad,
                           double *U)
{
    int rc = drift_services_table.grad_full(c, theta, grad, U);
    for (size_t k = 0; k < c->d; k++)
        grad[k] += NOISE_A * (2 * drift_rng_uniform(&noise_rng) - 1);
    noisy_calls++;
    return rc;
}

typedef struct collect {
    th_draws d;
} collect;

static void collect_row(void *user, unsigned id, unsigned flags,
                        const double *row, size_t n)
{
    (void)flags;
    (void)id;
    th_draws *d = &((collect *)user)->d;
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 4096;
        d->v = realloc(d->v, d->cap * n * sizeof(double));
        assert_non_null(d->v);
    }
    d->cols = n;
    memcpy(d->v + d->n * n, row, n * sizeof(double));
    d->n++;
}

/* Runs bps by hand, on the services table given, for iters segments. */
static void run_by_hand(th_problem *tp, const drift_services *svc,
                        char **set, size_t n_set, uint64_t iters,
                        collect *out, th_traj *tr, uint64_t *bounces,
                        uint64_t *violations)
{
    memset(out, 0, sizeof *out);
    th_run r = {.sampler = "bps", .set = set, .n_set = n_set,
                .thin_time = 0.25, .warmup = 1000, .seed = 21};
    th_chain ch;
    double theta[8];
    th_chain_open(&ch, tp, &r, collect_row, out, theta);
    drift_chain *c = &ch.c;
    const drift_sampler *s = ch.cfg->step.sampler;
    const double *hp = ch.cfg->step.hp;
    assert_int_equal(s->init(c->state, svc, c, hp, theta), 0);
    for (c->iter = 0; c->iter < ch.cfg->budget.warmup + iters; c->iter++) {
        assert_int_equal(s->step(c->state, svc, c, theta), 0);
    }
    tr->time = c->traj.t_mom;
    tr->d = c->d;
    for (size_t k = 0; k < c->d; k++) {
        tr->mean[k] = c->traj.m1[k] / c->traj.t_mom;
        tr->var[k] = c->traj.m2[k] / c->traj.t_mom - tr->mean[k] * tr->mean[k];
    }
    const double *last = out->d.v + (out->d.n - 1) * out->d.cols;
    *bounces = (uint64_t)last[2];
    *violations = c->violations;
    th_chain_close(&ch);
}

static void test_noisy_gradient(void **state)
{
    (void)state;
    char *ms[] = {"dim=2", "rho=0.5", "mean=0.5"};
    truth t = make_truth(2, 0.5, 1, 1, 0.5);
    th_problem tp;
    th_open(&tp, "mvn", NULL, ms, 3);
    /* The Hessian is R^-1, whose largest eigenvalue is 1/(1 - rho) = 2;
     * the noise's directional size is at most A sqrt(2). */
    char nb[64];
    snprintf(nb, sizeof nb, "noise_bound=%.17g", NOISE_A * sqrt(2.0));
    char *set[] = {"lipschitz=2", nb, "refresh=1"};
    drift_services noisy = drift_services_table;
    noisy.grad_full = noisy_grad_full;
    drift_rng_seed(&noise_rng, 404, 0);
    collect out;
    th_traj tr;
    uint64_t bounces, viol;
    noisy_calls = 0;
    run_by_hand(&tp, &noisy, set, 3, 150000, &out, &tr, &bounces, &viol);
    print_message("noisy gradients: %llu noisy evaluations, %llu bounces, "
                  "%llu violations, time %.0f\n",
                  (unsigned long long)noisy_calls,
                  (unsigned long long)bounces, (unsigned long long)viol,
                  tr.time);
    assert_true(noisy_calls > 150000);
    assert_int_equal(viol, 0); /* the bound is exact for the noisy rates */
    check_moments(&out.d, &tr, &t, "noisy");
    double bounce_rate_noisy = (double)bounces / tr.time;
    free(out.d.v);
    /* Noise raises the bounce rate (E[u.g~]+ >= [u.grad U]+) without
     * changing the law: the same run without noise bounces less. */
    run_by_hand(&tp, &drift_services_table, set, 3, 150000, &out, &tr,
                &bounces, &viol);
    double bounce_rate_exact = (double)bounces / tr.time;
    print_message("bounce rate: noisy %.4f, exact %.4f\n", bounce_rate_noisy,
                  bounce_rate_exact);
    assert_true(bounce_rate_noisy > 1.1 * bounce_rate_exact);
    check_moments(&out.d, &tr, &t, "noise-free");
    free(out.d.v);
    th_close(&tp);
}

/* ---- the command line ---- */

/* Runs "$DRIFT_BIN args 2>&1"; returns the exit status, output in buf. */
static int run_cli(const char *args, char *buf, size_t cap)
{
    const char *bin = getenv("DRIFT_BIN");
    if (!bin)
        fail_msg("DRIFT_BIN is not set: run with make check");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(buf, 1, cap - 1, p);
    buf[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_emit(void **state)
{
    (void)state;
    char out[8192], path[] = "/tmp/drift-bps-cli-XXXXXX", args[1024];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(tp);
    snprintf(args, sizeof args,
             "sample --model %s/mvn.so --sampler bps --emit segments "
             "--iter 50 --warmup 0 --seed 1 --quiet --chains 1 --init 0 --out %s",
             tp, path);
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    size_t rows = 0;
    int emit = 0, cols = 0, traj = 0;
    while (fgets(line, sizeof line, f)) {
        emit |= !strcmp(line, "# emit = segments\n");
        traj |= !strncmp(line, "# trajectory_time = ", 20);
        if (!strncmp(line, "lp__,", 5)) {
            cols = 1;
            assert_non_null(strstr(line, ",time__,duration__,x.1,x.2,x0_1__,"
                                         "x0_2__,v_1__,v_2__"));
        } else if (line[0] != '#')
            rows++;
    }
    fclose(f);
    unlink(path);
    assert_true(emit && cols && traj);
    assert_int_equal(rows, 50);
    /* Bad values and misuse: a message naming the option, status 2. */
    snprintf(args, sizeof args,
             "sample --model %s/mvn.so --sampler bps --emit skeleton "
             "--iter 5 --out %s",
             tp, path);
    assert_int_equal(run_cli(args, out, sizeof out), 2);
    assert_non_null(strstr(out, "--emit skeleton: expected draws or "
                                "segments"));
    snprintf(args, sizeof args,
             "sample --model %s/mvn.so --sampler sgld --emit segments "
             "--iter 5 --out %s",
             tp, path);
    assert_int_equal(run_cli(args, out, sizeof out), 2);
    assert_non_null(strstr(out, "sampler sgld emits draws"));
    assert_int_equal(access(path, F_OK), -1); /* nothing left behind */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard),
        cmocka_unit_test(test_correlated),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_draws_on_grid),
        cmocka_unit_test(test_segments_refused),
        cmocka_unit_test(test_noisy_gradient),
        cmocka_unit_test(test_cli_emit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
