/* test_summary.c: drift's posterior summaries against R's posterior
 * package on the fixtures in tests/fixtures/summary (reference values made
 * by make-fixtures.R there, recorded in reference.h), the normal quantile
 * and type-7 quantiles against R, and R-hat on real runs: near 1 for
 * well-mixed chains, above 1.1 for chains started far apart with few
 * draws; a constant's sd 0; the exact time averages and time-weighted
 * quantiles of piecewise-linear trajectories against closed forms. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/run/rng.h"
#include "engine/stats/stancsv.h"
#include "engine/stats/summary.h"
#include "engine/stats/trajectory.h"
#include "harness.h"

#include "fixtures/summary/reference.h"

static const char *fixture_dir(void)
{
    static char dir[4096];
    const char *src = getenv("srcdir");
    snprintf(dir, sizeof dir, "%s/tests/fixtures/summary", src ? src : ".");
    return dir;
}

typedef struct fixture {
    const char *name;
    const char *files[4];
    size_t n_files;
    size_t warmup;       /* rows the reader must find to be warmup */
} fixture;

static const fixture fixtures[] = {
    {"ar4", {"ar4_1.csv", "ar4_2.csv", "ar4_3.csv", "ar4_4.csv"}, 4, 0},
    {"short", {"short_1.csv", "short_2.csv", "short_3.csv", "short_4.csv"},
     4, 0},
    {"single", {"single.csv"}, 1, 0},
    {"cmdstan", {"cmdstan_1.csv", "cmdstan_2.csv"}, 2, 100},
    {"cmdstan_thin", {"cmdstan_thin.csv"}, 1, 26},
};

static drift_stancsv *read_fixture(const char *file)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", fixture_dir(), file);
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &f, &e))
        fail_msg("%s", e.msg);
    return f;
}

/* |got - want| <= 1e-6, or both NaN. */
static void near(double got, double want, const char *fx, const char *name,
                 const char *what)
{
    if (isnan(want) && isnan(got))
        return;
    if (!(fabs(got - want) <= 1e-6))
        fail_msg("%s %s %s: drift %.17g, posterior %.17g", fx, name, what,
                 got, want);
}

static void test_against_posterior(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t k = 0; k < sizeof fixtures / sizeof fixtures[0]; k++) {
        const fixture *fx = &fixtures[k];
        drift_stancsv *f[4];
        size_t n = 0;
        for (size_t c = 0; c < fx->n_files; c++) {
            f[c] = read_fixture(fx->files[c]);
            assert_int_equal(f[c]->n_warmup, fx->warmup);
            size_t kept = f[c]->n_rows - f[c]->n_warmup;
            if (c == 0)
                n = kept;
            assert_int_equal(kept, n);
        }
        double *x = malloc(fx->n_files * n * sizeof *x);
        assert_non_null(x);
        for (size_t r = 0; r < sizeof summary_refs / sizeof summary_refs[0];
             r++) {
            const summary_ref *ref = &summary_refs[r];
            if (strcmp(ref->fixture, fx->name))
                continue;
            long col = drift_stancsv_column(f[0], ref->name);
            assert_true(col >= 0);
            for (size_t c = 0; c < fx->n_files; c++)
                for (size_t i = 0; i < n; i++)
                    x[c * n + i] = f[c]->values[(f[c]->n_warmup + i) *
                                                    f[c]->n_cols +
                                                (size_t)col];
            drift_summary_stats s;
            drift_err e;
            assert_int_equal(drift_summary_compute(x, n, fx->n_files, &s, &e),
                             DRIFT_OK);
            const char *nm = ref->name;
            near(s.mean, ref->v[0], fx->name, nm, "mean");
            near(s.mcse, ref->v[1], fx->name, nm, "mcse_mean");
            near(s.sd, ref->v[2], fx->name, nm, "sd");
            near(s.q5, ref->v[3], fx->name, nm, "q5");
            near(s.q50, ref->v[4], fx->name, nm, "q50");
            near(s.q95, ref->v[5], fx->name, nm, "q95");
            near(s.ess_bulk, ref->v[6], fx->name, nm, "ess_bulk");
            near(s.ess_tail, ref->v[7], fx->name, nm, "ess_tail");
            near(s.rhat, ref->v[8], fx->name, nm, "rhat");
            near(drift_summary_ess_basic(x, n, fx->n_files, 1), ref->v[9],
                 fx->name, nm, "ess_basic");
            near(drift_summary_rhat_basic(x, n, fx->n_files, 1), ref->v[10],
                 fx->name, nm, "rhat_basic");
            checked++;
        }
        free(x);
        for (size_t c = 0; c < fx->n_files; c++)
            drift_stancsv_free(f[c]);
    }
    /* Every reference row was found and compared. */
    assert_int_equal(checked, sizeof summary_refs / sizeof summary_refs[0]);
}

/* The fixtures hold quantities chosen to exercise each part: check that
 * the references say what the fixture claims (so a regenerated fixture
 * that lost its point fails here). */
static void test_fixture_claims(void **state)
{
    (void)state;
    for (size_t r = 0; r < sizeof summary_refs / sizeof summary_refs[0]; r++) {
        const summary_ref *ref = &summary_refs[r];
        if (strcmp(ref->fixture, "ar4"))
            continue;
        if (!strcmp(ref->name, "offset") || !strcmp(ref->name, "slow"))
            assert_true(ref->v[8] > 1.1);          /* chains disagree */
        if (!strcmp(ref->name, "scale")) {
            assert_true(ref->v[8] > 1.1);          /* caught by folding */
            assert_true(ref->v[10] < 1.01);        /* not by basic R-hat */
        }
        if (!strcmp(ref->name, "anti"))
            assert_true(ref->v[6] > 4 * 301);      /* antithetic */
        if (!strcmp(ref->name, "sigma"))
            assert_true(fabs(ref->v[8] - 1) < 0.01);
    }
}

static void test_cmdstan_layout(void **state)
{
    (void)state;
    drift_stancsv *f = read_fixture("cmdstan_1.csv");
    assert_int_equal(f->n_rows, 300);
    assert_int_equal(f->n_warmup, 100);
    assert_int_equal(f->n_cols, 11);
    assert_string_equal(f->names[0], "lp__");
    assert_string_equal(f->names[10], "Sigma.2.1");
    assert_string_equal(drift_stancsv_meta(f, "num_warmup"), "100");
    assert_string_equal(drift_stancsv_meta(f, "save_warmup"), "true");
    assert_string_equal(drift_stancsv_meta(f, "method"), "sample");
    assert_string_equal(drift_stancsv_meta(f, "id"), "1");
    assert_null(drift_stancsv_meta(f, "Elapsed Time"));
    assert_true(drift_stancsv_column(f, "treedepth__") == 3);
    drift_stancsv_free(f);
    f = read_fixture("cmdstan_thin.csv");
    assert_int_equal(f->n_warmup, 26); /* ceil(51 / 2), no marker */
    drift_stancsv_free(f);
    f = read_fixture("single.csv");
    assert_int_equal(f->n_warmup, 0);
    assert_true(isnan(f->values[0 * f->n_cols + 0]) == 0);
    drift_stancsv_free(f);
}

static void expect_error(const char *text, const char *where, const char *what)
{
    char *path = th_write_text(text, ".csv");
    drift_stancsv *f = NULL;
    drift_err e = {{0}};
    int rc = drift_stancsv_read(path, &f, &e);
    char want[4200];
    snprintf(want, sizeof want, "%s%s", path, where);
    if (rc == DRIFT_OK || !strstr(e.msg, want) || !strstr(e.msg, what))
        fail_msg("'%s': rc %d, message '%s'", text, rc, e.msg);
    assert_null(f);
    unlink(path);
    free(path);
}

static void test_bad_files(void **state)
{
    (void)state;
    expect_error("# only comments\n", ": error: ", "no column row");
    expect_error("a,b\n1,2\n3\n", ":3: error: ", "row has 1 fields");
    expect_error("a,b\n1,2\n3,x\n", ":3:3: error: ", "'x' is not a number");
    expect_error("a,b\n1,2\n3,", ":3:3: error: ", "is not a number");
    expect_error("a,b,c\n1,2,3\n4,5", ":3: error: ", "incomplete");
    drift_stancsv *f;
    drift_err e;
    assert_int_equal(drift_stancsv_read("/nonexistent/x.csv", &f, &e),
                     DRIFT_EIO);
    assert_non_null(strstr(e.msg, "/nonexistent/x.csv: cannot open"));
    /* Non-finite values as drift and CmdStan write them, CRLF endings. */
    char *path = th_write_text("# c\r\na,b\r\nnan,inf\r\n-inf,1\r\n# end\r\n",
                               ".csv");
    assert_int_equal(drift_stancsv_read(path, &f, &e), DRIFT_OK);
    assert_int_equal(f->n_rows, 2);
    assert_true(isnan(f->values[0]) && isinf(f->values[1]) &&
                f->values[2] < 0 && isinf(f->values[2]) && f->values[3] == 1);
    drift_stancsv_free(f);
    unlink(path);
    free(path);
}

static void test_qnorm_quantile(void **state)
{
    (void)state;
    /* R 4.2.2: p <- c(...); sprintf("%.17g", qnorm(p)) */
    static const double ref[][2] = {
        {1e-300, -37.047096299361201},
        {1e-100, -21.273453560965319},
        {9.9999999999999995e-21, -9.2623400897984052},
        {1e-10, -6.3613409024040557},
        {1.0000000000000001e-05, -4.2648907939228256},
        {0.001, -3.0902323061678132},
        {0.025000000000000001, -1.9599639845400538},
        {0.10000000000000001, -1.2815515655446008},
        {0.29999999999999999, -0.52440051270804067},
        {0.5, 0},
        {0.69999999999999996, 0.52440051270804067},
        {0.97499999999999998, 1.9599639845400536},
        {0.999, 3.0902323061678132},
        {0.99999999989999999, 6.3613408896974208},
    };
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++) {
        double q = drift_summary_qnorm(ref[k][0]);
        if (!(fabs(q - ref[k][1]) <= 4e-15 * fmax(1, fabs(ref[k][1]))))
            fail_msg("qnorm(%g) = %.17g, R gives %.17g", ref[k][0], q,
                     ref[k][1]);
    }
    assert_true(isinf(drift_summary_qnorm(0)) && drift_summary_qnorm(0) < 0);
    assert_true(isinf(drift_summary_qnorm(1)));
    assert_true(isnan(drift_summary_qnorm(1.5)));
    /* R: quantile(c(3,1,4,1,5,9,2,6), c(0,.05,.25,.5,.95,1), type = 7) */
    const double x[] = {3, 1, 4, 1, 5, 9, 2, 6};
    const double p[] = {0, 0.05, 0.25, 0.5, 0.95, 1};
    const double want[] = {1, 1, 1.75, 3.5, 7.9499999999999984, 9};
    for (size_t k = 0; k < 6; k++)
        assert_true(fabs(drift_summary_quantile(x, 8, p[k]) - want[k]) <
                    1e-14);
    assert_true(isnan(drift_summary_quantile(x, 0, 0.5)));
}

/* A constant: its value and sd 0 exactly (posterior: mean 0.1, sd 0,
 * mcse, ESS and R-hat NA), whatever rounding a sum would bring. */
static void test_constant(void **state)
{
    (void)state;
    double x[200];
    for (int i = 0; i < 200; i++)
        x[i] = 0.1;
    drift_summary_stats s;
    drift_err e;
    assert_int_equal(drift_summary_compute(x, 100, 2, &s, &e), DRIFT_OK);
    assert_true(s.mean == 0.1 && s.sd == 0 && s.q5 == 0.1 && s.q95 == 0.1);
    assert_true(isnan(s.mcse) && isnan(s.ess_bulk) && isnan(s.rhat));
    /* Several quantiles from one sort, as drift_summary_quantile each. */
    double v[8] = {3, 1, 4, 1, 5, 9, 2, 6}, p[3] = {0.025, 0.5, 0.975}, q[3];
    assert_int_equal(drift_summary_quantiles(v, 8, p, 3, q), DRIFT_OK);
    for (int k = 0; k < 3; k++)
        assert_true(q[k] == drift_summary_quantile(v, 8, p[k]));
}

/* Trajectories against closed forms.  One segment from -1 with slope 2 for
 * time 1 is uniform on [-1, 1]: mean 0, variance 1/3, quantile p at
 * 2p - 1.  Split into pieces (and a still segment added) it must give the
 * same; the grid samples the line at midpoints. */
static void test_trajectory(void **state)
{
    (void)state;
    double x0[1] = {-1}, v[1] = {2}, d[1] = {1};
    drift_trajectory one = {x0, v, d, 1, 1};
    double mean, var, T;
    drift_trajectory_moments(&one, 1, &mean, &var, &T);
    assert_true(fabs(mean) < 1e-15 && fabs(var - 1.0 / 3) < 1e-15 && T == 1);
    for (double p = 0.05; p < 1; p += 0.1)
        assert_true(fabs(drift_trajectory_quantile(&one, 1, p) - (2 * p - 1)) <
                    1e-12);
    /* The same line in three pieces with a backwards one, as rows with a
     * stride of 3 (x0, v, dur interleaved), plus a still second chain at
     * 5 for time 1: pooled mean (0 + 5) / 2, variance
     * (1/3 + 0 + 2 * 2.5^2) / 2. */
    double rows[12] = {-1, 2, 0.25, -0.5, 2, 0.5, 0.5, -2, 0.25, 0, 2, 0.25};
    /* -1 -> -0.5 -> 0.5 -> 0 -> 0.5: a piecewise path of total time 1.25;
     * its moments from the closed form of each piece. */
    drift_trajectory pieces = {rows, rows + 1, rows + 2, 4, 3};
    double x5[1] = {5}, d1[1] = {1};
    drift_trajectory still = {x5, NULL, d1, 1, 1};
    drift_trajectory both[2] = {pieces, still};
    drift_trajectory_moments(&pieces, 1, &mean, &var, &T);
    /* By Simpson's rule, exact for the quadratics of each piece. */
    double m1 = 0, m2 = 0, t = 0;
    for (int i = 0; i < 4; i++) {
        double a = rows[3 * i], b = a + rows[3 * i + 1] * rows[3 * i + 2] / 2,
               c = a + rows[3 * i + 1] * rows[3 * i + 2], h = rows[3 * i + 2];
        m1 += h / 6 * (a + 4 * b + c);
        m2 += h / 6 * (a * a + 4 * b * b + c * c);
        t += h;
    }
    assert_true(fabs(T - t) < 1e-15);
    assert_true(fabs(mean - m1 / t) < 1e-14);
    assert_true(fabs(var - (m2 / t - (m1 / t) * (m1 / t))) < 1e-14);
    double pm, pv;
    drift_trajectory_moments(both, 2, &pm, &pv, &T);
    double e1 = (m1 + 5) / (t + 1), e2 = (m2 + 25) / (t + 1);
    assert_true(fabs(pm - e1) < 1e-14 && fabs(pv - (e2 - e1 * e1)) < 1e-13);
    /* Time below 0.25 on the pieces: 0.625 of [-1, 0.5] on the first
     * two (slope 2: from -1 to 0.25 takes 0.625), 0.125 of the third
     * (from 0.5 down to 0 crosses 0.25 half way), 0.125 of the fourth:
     * 0.875 of 1.25, so quantile 0.7 is 0.25. */
    assert_true(fabs(drift_trajectory_quantile(&pieces, 1, 0.7) - 0.25) <
                1e-12);
    /* With the still chain: everything below 5 but it; p = t/(t+1) lies
     * at the pieces' maximum 0.5, above it the still value 5. */
    assert_true(fabs(drift_trajectory_quantile(both, 2, 0.9) - 5) < 1e-12);
    /* The grid: midpoints of 4 equal pieces of the line. */
    double g[5]; /* the 4-point grid, then the 5-point one */
    drift_trajectory_grid(&one, 4, g);
    for (int j = 0; j < 4; j++)
        assert_true(fabs(g[j] - (-1 + 2 * (j + 0.5) / 4)) < 1e-15);
    drift_trajectory_grid(&pieces, 5, g);
    assert_true(fabs(g[0] - (-1 + 2 * 0.125)) < 1e-15); /* t = 0.125 */
    assert_true(fabs(g[2] - (-0.5 + 2 * 0.375)) < 1e-15); /* t = 0.625 */
    /* No time, or a non-finite value: NaN. */
    double z[1] = {0};
    drift_trajectory none = {x0, v, z, 1, 1};
    assert_true(isnan(drift_trajectory_quantile(&none, 1, 0.5)));
    double inf[1] = {INFINITY};
    drift_trajectory bad = {inf, v, d, 1, 1};
    assert_true(isnan(drift_trajectory_quantile(&bad, 1, 0.5)));
}

static void test_degenerate(void **state)
{
    (void)state;
    double x[6] = {1, 2, 3, 4, 5, 6};
    drift_summary_stats s;
    drift_err e;
    assert_int_equal(drift_summary_compute(x, 0, 1, &s, &e), DRIFT_EINVAL);
    /* Too few draws for an ESS: NaN, not a crash. */
    assert_int_equal(drift_summary_compute(x, 2, 1, &s, &e), DRIFT_OK);
    assert_true(isnan(s.ess_bulk) && isnan(s.ess_tail));
    assert_int_equal(drift_summary_compute(x, 1, 1, &s, &e), DRIFT_OK);
    assert_true(isnan(s.rhat) && isnan(s.sd));
    x[3] = NAN;
    assert_int_equal(drift_summary_compute(x, 6, 1, &s, &e), DRIFT_OK);
    assert_true(isnan(s.mean) && isnan(s.q50) && isnan(s.rhat) &&
                isnan(s.ess_bulk));
}

/* Every allocation failure on the summary and reader paths is reported
 * (DRIFT_ENOMEM with a message), none crashes or leaks (the sanitizer
 * build checks that), and none passes off an NA as a result. */
static void test_allocation_failures(void **state)
{
    (void)state;
    drift_stancsv *f = read_fixture("ar4_1.csv");
    size_t n = f->n_rows;
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    long col = drift_stancsv_column(f, "mu");
    for (size_t i = 0; i < n; i++)
        x[i] = f->values[i * f->n_cols + (size_t)col];
    drift_stancsv_free(f);
    drift_summary_stats ok, s;
    drift_err e;
    drift_fail_alloc(0);
    assert_int_equal(drift_summary_compute(x, n, 1, &ok, &e), DRIFT_OK);
    uint64_t total = drift_fail_alloc(0);
    assert_true(total > 10);
    for (uint64_t k = 1; k <= total; k++) {
        drift_fail_alloc(k);
        e.msg[0] = '\0';
        int rc = drift_summary_compute(x, n, 1, &s, &e);
        drift_fail_alloc(0);
        if (rc != DRIFT_ENOMEM || !strstr(e.msg, "out of memory"))
            fail_msg("allocation %llu of %llu failed: rc %d",
                     (unsigned long long)k, (unsigned long long)total, rc);
    }
    free(x);
    char path[4200];
    snprintf(path, sizeof path, "%s/cmdstan_1.csv", fixture_dir());
    drift_fail_alloc(0);
    assert_int_equal(drift_stancsv_read(path, &f, &e), DRIFT_OK);
    drift_stancsv_free(f);
    total = drift_fail_alloc(0);
    for (uint64_t k = 1; k <= total; k++) {
        drift_fail_alloc(k);
        int rc = drift_stancsv_read(path, &f, &e);
        drift_fail_alloc(0);
        assert_int_equal(rc, DRIFT_ENOMEM);
        assert_non_null(strstr(e.msg, "out of memory"));
    }
}

/* R-hat of chains run by drift itself on the conjugate Gaussian model
 * (posterior sd about 0.1): full-gradient Langevin from U(-2, 2) starts
 * mixes within a few steps (contraction 1 - h/v = 0.5 per step), while
 * from U(-50, 50) starts with a step 50 times smaller the four chains are
 * still tens of posterior sds apart after 60 steps. */
static double rhat_of_run(double radius, const char *h, uint64_t warmup,
                          uint64_t iters)
{
    double y[100];
    drift_rng r;
    drift_rng_seed(&r, 77, 0);
    for (size_t i = 0; i < 100; i++)
        y[i] = 0.5 + drift_rng_normal(&r);
    const char *names[] = {"y.1"};
    char *data = th_write_csv(names, 1, y, 100);
    th_problem tp;
    th_open(&tp, "gauss", data, NULL, 0);
    char set[64];
    snprintf(set, sizeof set, "h=%s", h);
    char *sets[] = {set};
    th_run run = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 100,
                  .access = DRIFT_ACCESS_CA, .iters = iters, .warmup = warmup,
                  .seed = 5, .chains = 4, .init_mode = DRIFT_INIT_RANDOM,
                  .init_radius = radius};
    th_draws d[4];
    assert_int_equal(th_sample(&tp, &run, d, NULL), DRIFT_OK);
    size_t n = d[0].n;
    double *x = malloc(4 * n * sizeof *x);
    assert_non_null(x);
    for (size_t c = 0; c < 4; c++) {
        assert_int_equal(d[c].n, n);
        for (size_t i = 0; i < n; i++)
            x[c * n + i] = d[c].v[i * d[c].cols + 2]; /* theta.1 */
        th_draws_free(&d[c]);
    }
    double rh = drift_summary_rhat(x, n, 4);
    free(x);
    th_close(&tp);
    unlink(data);
    free(data);
    return rh;
}

static void test_rhat_of_runs(void **state)
{
    (void)state;
    double mixed = rhat_of_run(2, "0.005", 200, 2000);
    double apart = rhat_of_run(50, "0.0001", 0, 60);
    print_message("R-hat: well mixed %.4f, started far apart %.4g\n", mixed,
                  apart);
    assert_true(fabs(mixed - 1) < 0.01);
    assert_true(apart > 1.1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_posterior),
        cmocka_unit_test(test_fixture_claims),
        cmocka_unit_test(test_cmdstan_layout),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_qnorm_quantile),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_trajectory),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_rhat_of_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
