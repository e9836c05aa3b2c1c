/* test_run.c: what the runner (src/engine/run/run.c) promises samplers
 * under ABI 2, with the probe samplers of tests/plugins/runprobe.c: points
 * without a finite density are values a sampler rejects, and the chain
 * fails only when a sampler gives up (with a message naming chain,
 * iteration and parameter); phase callbacks arrive in Stan's window
 * schedule with the metric set from each window; run-level setup runs
 * once, on chain 1, inside the budget, shared by every chain; vector
 * diagnostic columns are named as Stan names vector elements. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stop.h"
#include "harness.h"

static const char *probe_path(void)
{
    static char path[4096];
    const char *d = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (!d)
        fail_msg("DRIFT_TEST_PLUGIN_DIR is not set: run with make check");
    snprintf(path, sizeof path, "%s/runprobe.so", d);
    return path;
}

static char *probe(const char *name)
{
    static char spec[4200];
    snprintf(spec, sizeof spec, "%s:%s", probe_path(), name);
    return spec;
}

/* A sampler that meets points where the density overflows, at every
 * other iteration and through three oracles, rejects them and keeps
 * running: 100 iterations, 50 rejections counted, every draw finite. */
static void test_overflow_rejected(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    th_run r = {.sampler = probe("overflow"), .iters = 100, .seed = 3};
    th_draws d;
    drift_chain_result res;
    if (th_sample(&tp, &r, &d, &res))
        fail_msg("overflow probe failed: %s", res.message);
    assert_int_equal(d.n, 100);
    assert_true(d.v[99 * d.cols + 2] == 50);
    for (size_t i = 0; i < d.n * d.cols; i++)
        assert_true(isfinite(d.v[i]));
    th_draws_free(&d);
    th_close(&tp);
}

/* A sampler without an accept step gives up on such a point: the chain
 * fails then, and the message says where (chain, iteration), that the
 * density is not finite, and names the largest parameter. */
static void test_give_up_message(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    char *sets[] = {"h=0.5"};
    th_run r = {.sampler = "sgld", .set = sets, .n_set = 1, .iters = 1000,
                .seed = 5};
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, NULL, &res), DRIFT_ENONFINITE);
    print_message("%s\n", res.message);
    assert_non_null(strstr(res.message, "chain 1, iteration "));
    assert_non_null(strstr(res.message, "not finite at this point"));
    assert_non_null(strstr(res.message, "largest parameter: x."));
    assert_true(res.started);
    th_close(&tp);
}

/* The phase log runprobe.so keeps for chain id. */
static const long *phase_log(unsigned id, size_t *n)
{
    void *h = dlopen(probe_path(), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    const long *(*fn)(unsigned, size_t *);
    void *sym = dlsym(h, "runprobe_log");
    assert_non_null(sym);
    memcpy(&fn, &sym, sizeof fn);
    const long *log = fn(id, n);
    dlclose(h);
    return log;
}

/* The regularised variance of the integers a .. b-1 (Stan's shrinkage
 * of their sample variance n(n+1)/12). */
static double window_var(uint64_t a, uint64_t b)
{
    double n = (double)(b - a), var = n * (n + 1) / 12;
    return n / (n + 5) * var + 1e-3 * 5 / (n + 5);
}

/* Phases for `warmup` against Stan's documented schedule (ends of the
 * slow windows, buffers): the callbacks in order with the iteration count
 * at each, the columns the probe writes per row, and the metric set from
 * each window (the probe observes the point (t, 0) at iteration t). */
static void phases_at(uint64_t warmup, uint64_t init, uint64_t term,
                      uint64_t base, const uint64_t *ends, size_t n_ends,
                      const char *metric)
{
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    char set[32];
    snprintf(set, sizeof set, "metric=%s", metric);
    char *sets[] = {set};
    char out[] = "/tmp/drift-run-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    uint64_t iters = 7;
    th_run r = {.sampler = probe("phases"), .set = sets, .n_set = 1,
                .warmup = warmup, .iters = iters, .save_warmup = 1,
                .seed = 1, .out_path = out};
    th_draws d;
    drift_chain_result res;
    if (th_sample(&tp, &r, &d, &res))
        fail_msg("phases probe failed: %s", res.message);
    assert_int_equal(d.n, warmup + iters);
    int diag = strcmp(metric, "unit") != 0;
    /* The callbacks: WARMUP_START at 0, WINDOW_END at each end, WARMUP_END
     * at warmup, RUN_END at the last step. */
    size_t n;
    const long *log = phase_log(1, &n);
    size_t want_n = (warmup ? 2 + n_ends : 0) + 1, k = 0;
    assert_int_equal(n, want_n);
    if (warmup) {
        assert_int_equal(log[0], DRIFT_PHASE_WARMUP_START);
        assert_int_equal(log[1], 0);
        k = 1;
        for (size_t w = 0; w < n_ends; w++, k++) {
            assert_int_equal(log[2 * k], DRIFT_PHASE_WINDOW_END);
            assert_int_equal(log[2 * k + 1], (long)ends[w]);
        }
        assert_int_equal(log[2 * k], DRIFT_PHASE_WARMUP_END);
        assert_int_equal(log[2 * k + 1], (long)warmup);
        k++;
    }
    assert_int_equal(log[2 * k], DRIFT_PHASE_RUN_END);
    assert_int_equal(log[2 * k + 1], (long)(warmup + iters));
    /* Per row: windows ended before it, the stage, M^-1[0], run_info. */
    /* metric=grad: the probe's gradients make M^-1[0] 1/2 from init (one
     * over the initial gradient, 2) and sqrt(var t / var(t/4)) = 4 from
     * every window but the last, which takes the variance. */
    int grad = !strcmp(metric, "grad");
    /* metric=set: the probe's set_diag at each odd warmup iteration t
     * (M^-1[0] = t + 1) holds until its next, window ends or not. */
    int set_diag = !strcmp(metric, "set");
    size_t w = 0;
    double minv = grad && warmup ? 0.5 : 1;
    for (uint64_t i = 0; i < d.n; i++) {
        const double *row = d.v + i * d.cols;
        while (w < n_ends && ends[w] <= i) {
            uint64_t from = w ? ends[w - 1] : init;
            minv = grad && w + 1 < n_ends ? 4
                   : diag                  ? window_var(from, ends[w])
                                           : 1;
            w++;
        }
        if (set_diag) {
            uint64_t t = i < warmup ? i : warmup - 1;
            minv = t % 2 == 1 ? (double)t + 1 : t > 0 ? (double)t : 1;
        }
        assert_true(row[2] == (double)w);
        assert_true(row[3] == (warmup == 0 ? 0 : i < warmup ? 1 : 2));
        if (fabs(row[4] - minv) > 1e-9 * minv)
            fail_msg("warmup %llu, row %llu: M^-1[0] = %.12g, expected "
                     "%.12g",
                     (unsigned long long)warmup, (unsigned long long)i,
                     row[4], minv);
        assert_true(row[5] == (double)init);
        assert_true(row[6] == (double)term);
        assert_true(row[7] == (double)base);
        assert_true(row[8] == (!strcmp(metric, "dense") ? 2 : diag));
    }
    /* The adaptation block of CmdStan's files, after the warmup rows. */
    char *csv = th_slurp(out);
    if (warmup) {
        char *blk = strstr(csv, "# Adaptation terminated\n# Step size = "
                                "0.25\n");
        assert_non_null(blk);
        if (!strcmp(metric, "diag") || grad)
            assert_non_null(strstr(blk, "\n# Diagonal elements of inverse "
                                        "mass matrix:\n# "));
        /* The adaptation block records the metric set last. */
        if (set_diag) {
            char want[96];
            snprintf(want, sizeof want, "\n# Diagonal elements of inverse "
                                        "mass matrix:\n# %.10g, 1",
                     minv);
            assert_non_null(strstr(blk, want));
        }
        /* CmdStan's kind, which CmdStanPy reads, then the estimate. */
        if (grad)
            assert_non_null(strstr(csv, "#       metric = diag_e\n"
                                        "#       metric_estimate = grad\n"));
        if (!strcmp(metric, "dense"))
            assert_non_null(strstr(blk, "\n# Elements of inverse mass "
                                        "matrix:\n# "));
    } else {
        /* No warmup: the block all the same (CmdStanPy reads every
         * sampling file up to it), with the sampler's step size. */
        char *blk = strstr(csv, "# Adaptation terminated\n# Step size = ");
        assert_non_null(blk);
        assert_non_null(strstr(csv, "\n# Adaptation terminated\n"));
    }
    free(csv);
    unlink(out);
    th_draws_free(&d);
    th_close(&tp);
}

/* The engine's preconditioner (the DRIFT_TABLE_PRECOND sub-table) under
 * precond=warmup, with the probe's closed-form windows (point (t, 0) at
 * iteration t, gradient (g1, 0)): coordinate 2's window variance is 0,
 * the smallest, so P2 keeps P0's 1 and P1 goes to M1/M2 (above 10^9),
 * clamped to a factor 10 a window: 10^w after w windows.  With g1 = 0.1
 * and h_eff = 1 the gradients cap P1 at 1 / (h_eff g1^2) = 100 once it is
 * there.  P^(1/2) squares to P.  The sub-table answers its own version,
 * and NULL for a newer one and an unknown id. */
static void precond_windows(double g1, const double *want, size_t n_want)
{
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    char g[32];
    snprintf(g, sizeof g, "g1=%g", g1);
    char *sets[] = {"kind=warmup", g};
    const uint64_t ends[] = {100, 150, 250, 450, 950};
    th_run r = {.sampler = probe("precond"), .set = sets, .n_set = 2,
                .warmup = 1000, .iters = 5, .save_warmup = 1, .seed = 1};
    th_draws d;
    drift_chain_result res;
    if (th_sample(&tp, &r, &d, &res))
        fail_msg("precond probe failed: %s", res.message);
    assert_int_equal(d.n, 1005);
    size_t w = 0;
    for (uint64_t i = 0; i < d.n; i++) {
        const double *row = d.v + i * d.cols;
        /* a row is written after its step; P changes after the step that
         * ends a window */
        while (w < n_want && ends[w] <= i)
            w++;
        double p1 = w ? want[w - 1] : 1.0;
        assert_true(row[2] == 1.0);
        assert_true(row[3] == DRIFT_PRECOND_WARMUP);
        if (fabs(row[4] - p1) > 1e-9 * p1)
            fail_msg("g1 %g, row %llu: P1 = %.12g, expected %.12g", g1,
                     (unsigned long long)i, row[4], p1);
        if (fabs(row[5] - 1.0) > 1e-12)
            fail_msg("g1 %g, row %llu: P2 = %.17g, expected 1", g1,
                     (unsigned long long)i, row[5]);
        assert_true(fabs(row[6] * row[6] - row[4]) <= 1e-12 * row[4]);
    }
    th_draws_free(&d);
    th_close(&tp);
}

static void test_precond_windows(void **state)
{
    (void)state;
    const double free_[] = {10, 100, 1000, 1e4, 1e5};
    precond_windows(0, free_, 5);
    const double capped[] = {10, 100, 100, 100, 100};
    precond_windows(0.1, capped, 5);
}

/* AUTO without a mode is UNIT (P = I); MODE without one is refused with
 * the sampler and the fix named, before any step. */
static void test_precond_kinds(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "halfgauss", NULL, NULL, 0);
    char *sets[] = {"kind=auto"};
    th_run r = {.sampler = probe("precond"), .set = sets, .n_set = 1,
                .warmup = 10, .iters = 10, .seed = 1};
    th_draws d;
    drift_chain_result res;
    if (th_sample(&tp, &r, &d, &res))
        fail_msg("precond probe failed: %s", res.message);
    for (size_t i = 0; i < d.n; i++) {
        const double *row = d.v + i * d.cols;
        assert_true(row[3] == DRIFT_PRECOND_UNIT);
        assert_true(row[4] == 1.0 && row[5] == 1.0 && row[6] == 1.0);
    }
    th_draws_free(&d);
    char *mode[] = {"kind=mode"};
    r.set = mode;
    assert_int_not_equal(th_sample(&tp, &r, NULL, &res), DRIFT_OK);
    print_message("%s\n", res.message);
    assert_non_null(strstr(res.message, "precond: precond=mode and "
                                        "precond=dense need the curvature "
                                        "at the mode: run with --gradient "
                                        "cv"));
    assert_false(res.started);
    th_close(&tp);
}

static void test_phases_1000(void **state)
{
    (void)state;
    const uint64_t ends[] = {100, 150, 250, 450, 950};
    phases_at(1000, 75, 50, 25, ends, 5, "diag");
    phases_at(1000, 75, 50, 25, ends, 5, "grad");
    phases_at(1000, 75, 50, 25, ends, 5, "set");
}

static void test_phases_150(void **state)
{
    (void)state;
    const uint64_t ends[] = {100};
    phases_at(150, 75, 50, 25, ends, 1, "dense");
}

static void test_phases_20(void **state)
{
    (void)state;
    const uint64_t ends[] = {18};
    phases_at(20, 3, 2, 15, ends, 1, "diag");
    phases_at(20, 3, 2, 15, ends, 1, "unit");
}

static void test_phases_0(void **state)
{
    (void)state;
    phases_at(0, 0, 0, 0, NULL, 0, "diag");
}

/* gauss data: N rows of y.1, y.2. */
static char *gauss_data(size_t N)
{
    const char *names[] = {"y.1", "y.2"};
    double *v = malloc(N * 2 * sizeof *v);
    for (size_t i = 0; i < 2 * N; i++)
        v[i] = sin((double)i);
    char *csv = th_write_csv(names, 2, v, N);
    free(v);
    return csv;
}

/* Run-level setup: once, on chain 1 (its grads__ carry the 3 passes, the
 * header says setup_grads), its result read by every chain; and a budget
 * it overruns stops it with a message. */
static void test_setup(void **state)
{
    (void)state;
    const size_t N = 40;
    char *data = gauss_data(N);
    th_problem tp;
    th_open(&tp, "gauss", data, NULL, 0);
    char out[] = "/tmp/drift-setup-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_run r = {.sampler = probe("setup"), .iters = 5, .chains = 3,
                .seed = 2, .out_path = out};
    th_draws d[3];
    drift_chain_result res[3];
    if (th_sample(&tp, &r, d, res))
        fail_msg("setup probe failed: %s", res[0].message);
    double v = d[0].v[2];
    for (int k = 0; k < 3; k++) {
        assert_int_equal(d[k].n, 5);
        assert_true(d[k].v[1] == (k == 0 ? 3.0 * N : 0));
        assert_true(d[k].v[2] == v);
        th_draws_free(&d[k]);
    }
    for (int k = 0; k < 3; k++) {
        char *csv = th_slurp(res[k].path);
        assert_non_null(strstr(csv, "# setup_grads = 120\n"));
        free(csv);
        unlink(res[k].path);
    }
    unlink(out);
    /* --passes 2 cannot pay for 3 passes of setup. */
    th_run rb = {.sampler = probe("setup"), .passes = 2, .chains = 2,
                 .seed = 2};
    assert_int_equal(th_sample(&tp, &rb, NULL, res), DRIFT_EINVAL);
    print_message("%s\n%s\n", res[0].message, res[1].message);
    assert_non_null(strstr(res[0].message, "run-level setup spent the whole "
                                           "budget of --passes 2"));
    assert_false(res[0].started);
    assert_false(res[1].started);
    th_close(&tp);
    unlink(data);
    free(data);
}

/* msgnht declares "xi.#__": one column per coordinate, xi_1__ ... in
 * the file (no dot: rstan would take xi.1__ for a parameter's element). */
static void test_vector_columns(void **state)
{
    (void)state;
    char *data = gauss_data(30);
    th_problem tp;
    th_open(&tp, "gauss", data, NULL, 0);
    char out[] = "/tmp/drift-vec-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    th_run r = {.sampler = "msgnht", .iters = 20, .seed = 4,
                .out_path = out};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    char *csv = th_slurp(out);
    assert_non_null(
        strstr(csv, "\nlp__,grads__,xi_1__,xi_2__,kinetic__,treedepth__,"
                    "divergent__,theta.1,theta.2\n"));
    assert_int_equal(d.cols, 7);
    free(csv);
    unlink(out);
    th_draws_free(&d);
    th_close(&tp);
    unlink(data);
    free(data);
}


/* The files in dir (its entries other than . and ..). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
    closedir(d);
    return n;
}

/* Requests a stop (as SIGINT would) at chain 2's first row: with one
 * chain at a time, chain 1 has then finished and chain 2 is in its
 * warmup (rows of warmup are saved). */
static void stop_at_chain_2(void *user, unsigned id)
{
    int *fired = user;
    if (id == 2 && !*fired) {
        *fired = 1;
        drift_stop_request(SIGINT);
    }
}

/* A run stopped after chain 1 finished and while chain 2 was still in
 * warmup keeps chain 1's draws whole (the set's common count was 0
 * before: every file cut to no draws) and leaves no file for chain 2,
 * whose warmup-only file would make readers refuse the set. */
static void test_stop_keeps_finished_chains(void **state)
{
    (void)state;
    th_gauss t;
    char *data = th_gauss_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", data, NULL, 0);
    char dir[] = "/tmp/drift-test-stopXXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[200], f1[220], f2[220];
    snprintf(out, sizeof out, "%s/fit.csv", dir);
    snprintf(f1, sizeof f1, "%s/fit_1.csv", dir);
    snprintf(f2, sizeof f2, "%s/fit_2.csv", dir);
    /* a warmup of about a second a chain */
    int fired = 0;
    th_run r = {.sampler = "mala", .iters = 300, .warmup = 400,
                .seed = 5, .chains = 2, .parallel = 1, .out_path = out,
                .save_warmup = 1, .row_hook = stop_at_chain_2,
                .row_hook_user = &fired};
    drift_chain_result res[2];
    th_sample(&tp, &r, NULL, res);
    drift_stop_clear();
    assert_true(fired);
    assert_int_equal(res[0].draws, 400 + 300); /* rows: warmup saved */
    assert_string_equal(res[0].path, f1);
    assert_int_equal(res[1].draws, 0);
    assert_string_equal(res[1].path, "");
    assert_int_equal(access(f1, F_OK), 0);
    assert_int_equal(access(f2, F_OK), -1);
    char *text = th_slurp(f1);
    assert_non_null(strstr(text, "num_samples = 300"));
    free(text);
    unlink(f1);
    assert_int_equal(entries(dir), 0);
    rmdir(dir);
    th_close(&tp);
    unlink(data);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overflow_rejected),
        cmocka_unit_test(test_give_up_message),
        cmocka_unit_test(test_precond_windows),
        cmocka_unit_test(test_precond_kinds),
        cmocka_unit_test(test_phases_1000),
        cmocka_unit_test(test_phases_150),
        cmocka_unit_test(test_phases_20),
        cmocka_unit_test(test_phases_0),
        cmocka_unit_test(test_setup),
        cmocka_unit_test(test_vector_columns),
        cmocka_unit_test(test_stop_keeps_finished_chains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
