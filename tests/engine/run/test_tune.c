/* test_tune.c: step sizes chosen by the kernel Stein discrepancy
 * (engine/run/tune.c) and the scores behind it (engine/run/score.c).
 * The runs that leave the step to the engine run as each rank of a run
 * across MPI ranks does (th_run's unplanned): in one process the
 * engine's plan (biascheck.h) chooses it instead.
 * - The model's score against the closed form of the conjugate Gaussian.
 * - KSD ranks SGLD step sizes as the distance to the target does: on the
 *   conjugate Gaussian, where SGLD with exact gradients is stationary at
 *   N(m, V(h) I), V(h) = 2 / (a (2 - h a)) (closed form: W2 distance
 *   sqrt(D) |sqrt(V) - sqrt(1/a)|), and on a logistic regression
 *   (tests/data/logit5.csv) against R's posterior means and sds
 *   (tests/data/logit5.R, importance sampling).  The step sizes are far
 *   enough apart that the distances differ by many times their Monte Carlo
 *   error (printed).
 * - h=auto on the conjugate Gaussian with minibatch noise: the draws of
 *   the step chosen meet a stated accuracy, means within 0.1 posterior sd
 *   and variances within 25% of the posterior's (plus 4.5 Monte Carlo
 *   standard errors of the AR(1) chain SGLD is there, as test_sgld.c
 *   derives them), and the closed-form stationary variance of the step
 *   chosen is within 25% too.
 * - What the choice leaves: the header's keys, the cost in chain 1's
 *   grads__ and within --passes, the same choice for the same seed, the
 *   default with a warning when --passes leaves the pilots too little;
 *   "auto" and the flag in hyperparameter tables.
 * - A warning when no pilot comes near the target (KSD 5 times that of
 *   exact draws), none when the choice is accurate.
 * - drift summary --ksd from the scores --save-gradients wrote and from
 *   scores recomputed from the model: the same KSD; its refusals. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/hparam.h"
#include "engine/run/rng.h"
#include "engine/run/score.h"
#include "engine/run/tune.h"
#include "engine/stats/ksd.h"
#include "engine/stats/stancsv.h"
#include "harness.h"

enum { N = TH_GAUSS_N, D = TH_GAUSS_D };

typedef th_gauss truth;

/* y_i ~ N(centre, I), the gauss plugin's defaults (harness.h). */
static char *gauss_data(truth *t) { return th_gauss_data(t); }

static const char *data_file(const char *name)
{
    static char path[4096];
    const char *src = getenv("srcdir");
    snprintf(path, sizeof path, "%s/tests/data/%s", src ? src : ".", name);
    return path;
}

/* KSD of M draws thinned evenly from d's rows (parameters at columns
 * col .. col + dim - 1, the model's unconstrained coordinates), scores
 * from the model. */
static double ksd_of(th_problem *tp, const th_draws *d, size_t col,
                     size_t dim, size_t M)
{
    double *x = malloc(M * dim * sizeof *x), *s = malloc(M * dim * sizeof *s);
    assert_non_null(x);
    assert_non_null(s);
    for (size_t j = 0; j < M; j++) {
        size_t i = ((j + 1) * d->n) / M - 1;
        memcpy(x + j * dim, d->v + i * d->cols + col, dim * sizeof *x);
    }
    drift_err e = {{0}};
    assert_int_equal(drift_score_points(&tp->p.model, x, M, s, 2, &e),
                     DRIFT_OK);
    drift_ksd k;
    assert_int_equal(drift_ksd_imq(x, dim, s, dim, M, dim, 1, -0.5, &k, NULL,
                                   &e),
                     DRIFT_OK);
    free(x);
    free(s);
    return k.ksd;
}

static void score_closed_form(void **state)
{
    (void)state;
    truth t;
    char *csv = gauss_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    const double pts[3 * D] = {0, 0, 1.2, -1.7, -3, 4};
    double sc[3 * D];
    drift_err e = {{0}};
    for (unsigned threads = 1; threads <= 3; threads++) {
        assert_int_equal(drift_score_points(&tp.p.model, pts, 3, sc, threads,
                                            &e),
                         DRIFT_OK);
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < D; j++) {
                double want = -t.a * (pts[i * D + j] - t.m[j]);
                assert_true(fabs(sc[i * D + j] - want) <=
                            1e-9 * (fabs(want) + 1));
            }
    }
    assert_true(drift_score_coordinates_are_outputs(&tp.p.model));
    th_close(&tp);
    unlink(csv);
    free(csv);
    /* A constrained parameter (tau > 0, sampled as log tau): its output
     * is not its coordinate. */
    const char *src = getenv("srcdir") ? getenv("srcdir") : ".";
    char model[4096], d1[4096], d2[4096];
    snprintf(model, sizeof model, "%s/examples/normal_gamma/normal_gamma.drift",
             src);
    snprintf(d1, sizeof d1, "%s/examples/normal_gamma/normal_gamma.csv", src);
    snprintf(d2, sizeof d2, "%s/examples/normal_gamma/normal_gamma.json",
             src);
    const char *data[] = {d1, d2, NULL};
    drift_problem_spec spec = {.model = model, .data = data};
    tp.reg = th_registry();
    if (drift_problem_open(&tp.p, tp.reg, &spec, &e))
        fail_msg("%s", e.msg);
    assert_false(drift_score_coordinates_are_outputs(&tp.p.model));
    th_close(&tp);
}

/* SGLD with exact gradients (one reshuffled pass per step) on the
 * conjugate Gaussian at h a = 0.25, 0.75, 1.25, 1.75. */
static void gaussian_ranking(void **state)
{
    (void)state;
    truth t;
    char *csv = gauss_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    const double ha[4] = {0.25, 0.75, 1.25, 1.75};
    double ksd[4], dist[4];
    for (int k = 0; k < 4; k++) {
        double h = ha[k] / t.a;
        char set[40];
        snprintf(set, sizeof set, "h=%.17g", h);
        char *sets[] = {set};
        th_run r = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = N,
                    .access = DRIFT_ACCESS_RR, .warmup = 200,
                    .iters = 20000, .seed = 5};
        th_draws d;
        assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
        double V = 2 / (t.a * (2 - ha[k]));
        dist[k] = sqrt((double)D) * fabs(sqrt(V) - sqrt(1 / t.a));
        ksd[k] = ksd_of(&tp, &d, 2, D, 1000);
        /* The chain is where the closed form says (sanity, 10%). */
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(th_var(&d, 2 + j, 0) / V - 1) < 0.1);
        print_message("h a = %.2f: W2 to the posterior %.4f, KSD %.4f\n",
                      ha[k], dist[k], ksd[k]);
        th_draws_free(&d);
    }
    for (int k = 1; k < 4; k++) {
        assert_true(dist[k] > dist[k - 1]);
        assert_true(ksd[k] > ksd[k - 1]);
    }
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* tests/data/logit5.R: posterior mean and sd of w.1 .. w.5 (Monte Carlo
 * error of the means below 0.001). */
static const double l5_mean[5] = {0.329424, -1.190888, -0.707214, -0.378465,
                                  -0.492469};
static const double l5_sd[5] = {0.112381, 0.130728, 0.118859, 0.108467,
                                0.114418};

static void logistic_ranking(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "logistic", data_file("logit5.csv"), NULL, 0);
    const double hs[4] = {0.001, 0.003, 0.006, 0.012};
    double ksd[4], dist[4];
    for (int k = 0; k < 4; k++) {
        char set[40];
        snprintf(set, sizeof set, "h=%g", hs[k]);
        char *sets[] = {set};
        th_run r = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 50,
                    .warmup = 2000, .iters = 40000, .seed = 9};
        th_draws d;
        assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
        /* Distance to R's posterior: means and sds in posterior sds. */
        double s2 = 0, se2 = 0;
        for (size_t j = 0; j < 5; j++) {
            double mean = th_mean(&d, 2 + j, 0);
            double sd = sqrt(th_var(&d, 2 + j, 0));
            double ess = th_ess(&d, 2 + j, 0);
            double dm = (mean - l5_mean[j]) / l5_sd[j];
            double ds = sd / l5_sd[j] - 1;
            s2 += dm * dm + ds * ds;
            /* Monte Carlo variance of dm and ds (a Gaussian's sd). */
            se2 += (sd * sd / ess) / (l5_sd[j] * l5_sd[j]) *
                   (dm * dm + ds * ds / 2) / (dm * dm + ds * ds + 1e-300);
        }
        dist[k] = sqrt(s2);
        ksd[k] = ksd_of(&tp, &d, 2, 5, 1000);
        print_message("h = %g: distance to R's posterior %.3f (MC error "
                      "about %.3f), KSD %.3f\n",
                      hs[k], dist[k], sqrt(se2), ksd[k]);
        th_draws_free(&d);
    }
    /* The same order by both. */
    for (int k = 1; k < 4; k++) {
        assert_true(dist[k] > dist[k - 1]);
        assert_true(ksd[k] > ksd[k - 1]);
    }
    th_close(&tp);
}

/* Reads the header of path. */
static drift_stancsv *read_out(const char *path)
{
    drift_stancsv *f = NULL;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &f, &e))
        fail_msg("%s", e.msg);
    return f;
}

static double meta_num(const drift_stancsv *f, const char *key)
{
    const char *v = drift_stancsv_meta(f, key);
    if (!v)
        fail_msg("%s: no key '%s'", f->path, key);
    return atof(v);
}

static char *tmp_out(void)
{
    char tmpl[] = "/tmp/drift-tune-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    close(fd);
    char *p = malloc(strlen(tmpl) + 5);
    sprintf(p, "%s.csv", tmpl);
    unlink(tmpl);
    return p;
}

/* The rule of tune.h: the best KSD among the pilots whose draws keep the
 * Stein identity, then of the steps tied with it (within 10%) the largest
 * that keeps it; when none keeps it, the smallest step of those tied with
 * the best KSD. */
static void pick_rule(void **state)
{
    (void)state;
    const size_t m = 64, d = 20;
    double bound = drift_tune_ratio_bound(m, d);
    assert_true(fabs(bound - (1.1 + 3 * sqrt(2.0 / 1280))) < 1e-12);
    drift_tune_result r;
    memset(&r, 0, sizeof r);
    const double h[5] = {0.001, 0.01, 0.1, 0.3, 1};
    const double k2[5] = {4.0, 1.0, 1.05, 0.9, INFINITY};
    const double R[5] = {0.9, 1.0, 1.05, 1.6, NAN};
    r.n_trials = 5;
    for (size_t j = 0; j < 5; j++) {
        r.trials[j].h = h[j];
        r.trials[j].ksd2 = k2[j];
        r.trials[j].stein_ratio = R[j];
    }
    /* 0.3 has the smallest KSD but breaks the identity; of those that
     * keep it 0.01 is best and 0.1 ties with it: the larger step. */
    assert_int_equal(drift_tune_pick(&r, m, d), 2);
    /* 0.1 breaks it too: 0.01. */
    r.trials[2].stein_ratio = 1.5;
    assert_int_equal(drift_tune_pick(&r, m, d), 1);
    /* None keeps it: the smallest step tied with the best KSD (0.3's
     * 0.9: 0.01 and 0.1 are within 1.21 of it). */
    r.trials[0].stein_ratio = r.trials[1].stein_ratio = 2;
    assert_int_equal(drift_tune_pick(&r, m, d), 1);
    /* Ratios unknown (NaN) count as not keeping it. */
    for (size_t j = 0; j < 5; j++)
        r.trials[j].stein_ratio = NAN;
    assert_int_equal(drift_tune_pick(&r, m, d), 1);
}

/* The pilots' Stein ratios (the draws' mean |grad log p|^2 over their
 * mean trace of the Hessian of -log p) against the closed form: on the
 * conjugate Gaussian, SGLD with batch B is stationary at N(m, V_j) in
 * coordinate j, V_j = (h^2 var_eps_j + 2 h) / (1 - rho^2), rho = 1 - h a,
 * var_eps_j = N^2 / B s2y_j, so the ratio is a mean_j V_j (the Hessian is
 * a I, whose trace the probes give exactly).  For every pilot long enough
 * to be stationary in its second half (h a >= 0.01: rho^(steps/2) below
 * 1e-5), within 4.5 standard errors of the mean of m d squares of
 * Gaussians, taken stride steps apart (their squares correlated rho^(2
 * stride)).  ratios: the header's "h:R,h:R"; steps: the run's. */
static void stein_ratios_match(const char *ratios, const truth *t,
                               int batch, int steps)
{
    assert_non_null(ratios);
    const size_t m = 64;
    uint64_t pilot = (uint64_t)steps / 10, stride = pilot / 2 / m;
    int checked = 0;
    for (const char *p = ratios; p && *p;) {
        double h, R;
        if (sscanf(p, "%lf:%lf", &h, &R) != 2)
            fail_msg("tune_stein_ratio: cannot read '%s'", p);
        double rho = 1 - h * t->a, want = 0;
        for (size_t j = 0; j < D; j++) {
            double var_eps = (double)N * N / batch * t->s2y[j];
            want += t->a * (h * h * var_eps + 2 * h) / (1 - rho * rho) / D;
        }
        double phi2 = pow(rho, 2.0 * (double)stride);
        double se = want * sqrt(2.0 / (double)(m * D) * (1 + phi2) /
                                (1 - phi2));
        print_message("h = %g (h a = %.3g): Stein ratio %.3g, closed form "
                      "%.3g (se %.2g)%s\n",
                      h, h * t->a, R, want, se,
                      h * t->a >= 0.01 ? "" : ": not stationary, unchecked");
        if (h * t->a >= 0.01 && h * t->a < 1) {
            assert_true(fabs(R - want) <= 4.5 * se);
            checked++;
        }
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    assert_true(checked >= 2);
}

/* h=auto meets a stated accuracy on the conjugate Gaussian, minibatch
 * noise and all. */
static void auto_accuracy(void **state)
{
    (void)state;
    truth t;
    char *csv = gauss_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    char *out = tmp_out();
    enum { BATCH = 10, ITERS = 50000 };
    th_run r = {.sampler = "sgld", .batch = BATCH, .warmup = 1000,
                .iters = ITERS, .seed = 21, .out_path = out,
                .unplanned = 1};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    drift_stancsv *f = read_out(out);
    double h = meta_num(f, "tune_choice");
    assert_string_equal(drift_stancsv_meta(f, "h"), drift_stancsv_meta(
                                                        f, "tune_choice"));
    print_message("chosen h = %g (h a = %.3g); grid %s\n", h, h * t.a,
                  drift_stancsv_meta(f, "tune_grid"));
    stein_ratios_match(drift_stancsv_meta(f, "tune_stein_ratio"), &t,
                       BATCH, ITERS + 1000);
    drift_stancsv_free(f);
    double rho = 1 - h * t.a;
    for (size_t j = 0; j < D; j++) {
        double var_eps = (double)N * N / BATCH * t.s2y[j];
        double V = (h * h * var_eps + 2 * h) / (1 - rho * rho);
        double n = (double)d.n;
        double mean = th_mean(&d, 2 + j, 0), var = th_var(&d, 2 + j, 0);
        double se_mean = sqrt(V / n * (1 + rho) / (1 - rho));
        double se_var = sqrt(2 * V * V / n * (1 + rho * rho) /
                             (1 - rho * rho));
        print_message("theta.%zu: mean %.5g (m %.5g, sd %.3g, se %.2g); var "
                      "%.4g (posterior %.4g, stationary %.4g, se %.2g)\n",
                      j + 1, mean, t.m[j], 1 / sqrt(t.a), se_mean, var,
                      1 / t.a, V, se_var);
        assert_true(fabs(V * t.a - 1) <= 0.25);
        assert_true(fabs(mean - t.m[j]) <= 0.1 / sqrt(t.a) + 4.5 * se_mean);
        assert_true(fabs(var - 1 / t.a) <= 0.25 / t.a + 4.5 * se_var);
    }
    th_draws_free(&d);
    unlink(out);
    free(out);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* What the choice leaves in the files, and what it costs. */
static void auto_accounting(void **state)
{
    (void)state;
    truth t;
    char *csv = gauss_data(&t);
    th_problem tp;
    th_open(&tp, "gauss", csv, NULL, 0);
    char *out = tmp_out();
    th_run r = {.sampler = "sghmc", .batch = 10, .warmup = 100, .iters = 500,
                .seed = 4, .chains = 2, .out_path = out, .parallel = 1,
                .unplanned = 1};
    th_draws d[2];
    assert_int_equal(th_sample(&tp, &r, d, NULL), DRIFT_OK);
    char p1[4200], p2[4200];
    drift_chain_path(out, 2, 1, p1, sizeof p1);
    drift_chain_path(out, 2, 2, p2, sizeof p2);
    drift_stancsv *f1 = read_out(p1), *f2 = read_out(p2);
    assert_string_equal(drift_stancsv_meta(f1, "tune_step_size"), "h");
    double h = meta_num(f1, "tune_choice");
    double pilot = meta_num(f1, "tune_pilot_grads");
    assert_true(h > 0 && pilot > 0);
    assert_non_null(strstr(drift_stancsv_meta(f1, "tune_grid"), ":"));
    /* Both chains' samplers got the choice; the header has no
     * "(Default)" on it. */
    assert_true(meta_num(f2, "h") == h);
    /* The pilots are chain 1's run-level setup: its count starts above
     * them, chain 2's does not. */
    long g = drift_stancsv_column(f1, "grads__");
    assert_true(f1->values[g] >= pilot);
    assert_true(f2->values[g] < pilot);
    assert_true(d[0].v[1] >= pilot);
    drift_stancsv_free(f1);
    drift_stancsv_free(f2);
    th_draws_free(&d[0]);
    th_draws_free(&d[1]);
    /* The same seed, the same choice. */
    th_draws again[2];
    assert_int_equal(th_sample(&tp, &r, again, NULL), DRIFT_OK);
    f1 = read_out(p1);
    assert_true(meta_num(f1, "tune_choice") == h);
    drift_stancsv_free(f1);
    th_draws_free(&again[0]);
    th_draws_free(&again[1]);
    unlink(p1);
    unlink(p2);
    /* Within --passes: the pilots and the chain together (a budget in
     * which the pilots' 64 exact scores and Hessian traces fit 8
     * trials). */
    enum { PASSES = 8000 };
    th_run rp = {.sampler = "sgld", .batch = 10, .passes = PASSES, .seed = 4,
                 .out_path = out, .unplanned = 1};
    th_draws one;
    assert_int_equal(th_sample(&tp, &rp, &one, NULL), DRIFT_OK);
    f1 = read_out(out);
    pilot = meta_num(f1, "tune_pilot_grads");
    /* A quarter of the budget, give or take a trial's rounding. */
    print_message("--passes %d: pilots %.0f evaluations (%.1f passes)\n",
                  PASSES, pilot, pilot / N);
    assert_true(pilot <= 0.3 * PASSES * N);
    assert_true(one.v[(one.n - 1) * one.cols + 1] <= (double)PASSES * N + 10);
    drift_stancsv_free(f1);
    th_draws_free(&one);
    /* Too small a budget for pilots: the default, said in the header. */
    rp.passes = 2;
    assert_int_equal(th_sample(&tp, &rp, &one, NULL), DRIFT_OK);
    f1 = read_out(out);
    assert_string_equal(drift_stancsv_meta(f1, "h"), "0.0001");
    assert_null(drift_stancsv_meta(f1, "tune_choice"));
    assert_non_null(drift_stancsv_meta(f1, "tune_step_size"));
    drift_stancsv_free(f1);
    th_draws_free(&one);
    unlink(out);
    free(out);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* The last column (ksd) of the first 6 rows (lp__, w.1 ... w.5) of a
 * drift summary --csv file. */
static void summary_ksd_column(const char *path, double *v)
{
    char *text = th_slurp(path);
    assert_non_null(text);
    char *line = strchr(text, '\n');
    assert_non_null(line);
    *line = '\0';
    const char *last = strrchr(text, ',');
    assert_string_equal(last, ",ksd");
    for (int r = 0; r < 6; r++) {
        char *next = line + 1;
        line = strchr(next, '\n');
        assert_non_null(line);
        *line = '\0';
        v[r] = atof(strrchr(next, ',') + 1);
    }
    free(text);
}

/* drift summary --ksd: the scores written by --save-gradients and those
 * recomputed from the model and data give the same KSD; --ksd-draws
 * thins; the ksd column's parts square-sum to KSD^2; refusals. */
static void summary_ksd_cli(void **state)
{
    (void)state;
    char dir[] = "/tmp/drift-tune-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[4200], csv1[4200], csv2[4200], model[4200], seg[4200];
    snprintf(out, sizeof out, "%s/fit.csv", dir);
    snprintf(csv1, sizeof csv1, "%s/stored.csv", dir);
    snprintf(csv2, sizeof csv2, "%s/recomputed.csv", dir);
    snprintf(seg, sizeof seg, "%s/seg.csv", dir);
    const char *src = getenv("srcdir") ? getenv("srcdir") : ".";
    snprintf(model, sizeof model, "%s/examples/logistic/logistic.drift", src);
    const char *data = data_file("logit5.csv");
    th_cli r = th_cli_run((const char *[]){
        "sample", model, "--data", data, "--sampler", "sgld", "--set",
        "h=0.002", "--batch", "50", "--warmup", "500", "--iter", "600",
        "--chains", "2", "--seed", "3", "--save-gradients", "--out", out,
        "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    char f1[4200], f2[4200];
    drift_chain_path(out, 2, 1, f1, sizeof f1);
    drift_chain_path(out, 2, 2, f2, sizeof f2);
    drift_stancsv *f = read_out(f1);
    assert_string_equal(drift_stancsv_meta(f, "save_gradients"), "1");
    assert_string_equal(drift_stancsv_meta(f, "grad_lp_coordinates"),
                        "columns");
    assert_true(drift_stancsv_column(f, "grad_lp_5__") >= 0);
    assert_true(drift_stancsv_column(f, "grad_lp_6__") < 0);
    drift_stancsv_free(f);
    r = th_cli_run((const char *[]){"summary", f1, f2, "--ksd", "--csv",
                                    csv1, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "scores read from the grad_lp columns"));
    assert_non_null(strstr(r.out, "1000 of the 1200 draws (500 per chain"));
    th_cli_free(&r);
    /* The same draws without their scores: recomputed from the model and
     * data that the header names. */
    r = th_cli_run((const char *[]){"summary", f1, f2, "--ksd", "--model",
                                    model, "--data", data, "--csv", csv2,
                                    NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    /* Row lp__ holds the KSD, rows w.1 ... w.5 their parts. */
    double a[6], b[6], sum = 0;
    summary_ksd_column(csv1, a);
    summary_ksd_column(csv2, b);
    double ksd = a[0];
    assert_true(ksd > 0);
    assert_true(fabs(b[0] - ksd) <= 1e-6 * ksd);
    for (size_t i = 1; i <= 5; i++) {
        sum += a[i] * a[i];
        assert_true(fabs(b[i] - a[i]) <= 1e-6 * ksd);
    }
    assert_true(fabs(sum - ksd * ksd) <= 1e-9 * ksd * ksd);
    r = th_cli_run((const char *[]){"summary", f1, "--ksd", "--ksd-draws",
                                    "100", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "100 of the 600 draws"));
    th_cli_free(&r);
    /* Refusals. */
    const char *no_ksd[] = {"summary", f1, "--model", model, NULL};
    r = th_cli_run(no_ksd);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--model is for --ksd"));
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"summary", f1, "--ksd", "--ksd-draws",
                                    "1", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "expected an integer from 2"));
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"summary", f1, "--ksd", "--model",
                                    "/nonexistent.drift", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "opening the model of"));
    th_cli_free(&r);
    /* The wrong model for the draws: named. */
    char gm[4200];
    snprintf(gm, sizeof gm, "%s/examples/gaussian/gaussian.drift", src);
    char gd[4200];
    snprintf(gd, sizeof gd, "%s/examples/gaussian/gaussian.csv", src);
    r = th_cli_run((const char *[]){"summary", f1, "--ksd", "--model", gm,
                                    "--data", gd, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "give the model the draws came from"));
    th_cli_free(&r);
    /* Segments: refused at sampling with --save-gradients. */
    r = th_cli_run((const char *[]){"sample", model, "--data", data,
                                    "--sampler", "bps", "--iter", "50",
                                    "--emit", "segments", "--save-gradients",
                                    "--out", seg, "--quiet", NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--save-gradients with --emit segments"));
    th_cli_free(&r);
    unlink(f1);
    unlink(f2);
    unlink(csv1);
    unlink(csv2);
    rmdir(dir);
}

/* Read against exact draws: sghmc with its default friction, a unit mass
 * and 100-step pilots on logit5 gets nowhere near the posterior (its
 * pilots' KSD is 10 times the level of exact draws), and says so in the
 * header, with --gradient cv as the remedy (it runs plain).  The search
 * runs where the engine's plan does not (each rank of a run across MPI
 * ranks, as here with th_run's unplanned; a data-free model): at the
 * command line a minibatch sampler on a model with rows runs by the
 * plan, whose line names it, and sgld on the conjugate Gaussian warns of
 * nothing. */
static void auto_warning(void **state)
{
    (void)state;
    char dir[] = "/tmp/drift-tune-w-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[4200];
    snprintf(out, sizeof out, "%s/w.csv", dir);
    th_problem lp;
    th_open(&lp, "logistic", data_file("logit5.csv"), NULL, 0);
    th_run run = {.sampler = "sghmc", .warmup = 100, .iters = 500,
                  .chains = 1, .seed = 4, .out_path = out, .unplanned = 1};
    assert_int_equal(th_sample(&lp, &run, NULL, NULL), DRIFT_OK);
    th_close(&lp);
    char *text = th_slurp(out);
    assert_non_null(strstr(text, "# drift: warning: no pilot of sghmc"));
    /* plain minibatch gradients on a model with rows: it points to cv */
    assert_non_null(strstr(text, "run with --gradient cv"));
    free(text);
    truth t;
    char *csv = gauss_data(&t);
    char model[4200];
    const char *plugins = getenv("DRIFT_TEST_PLUGIN_DIR");
    snprintf(model, sizeof model, "%s/gauss.so",
             plugins ? plugins : "tests/plugins/.libs");
    th_cli r = th_cli_run((const char *[]){
        "sample", "--model", model, "--data", csv, "--sampler", "sgld",
        "--batch", "10", "--warmup", "1000", "--iter", "50000", "--chains",
        "1", "--seed", "21", "--out", out, NULL});
    assert_int_equal(r.status, 0);
    if (!strstr(r.err, "plan for sgld") || strstr(r.err, "warning:"))
        fail_msg("exit %d: %s", r.status, r.err);
    th_cli_free(&r);
    unlink(csv);
    free(csv);
    unlink(out);
    rmdir(dir);
}

/* --step-timeout watches each call into the sampler: the pilots, which
 * take far longer than one step in all, are many calls, not one that
 * hangs.  The margins are wide both ways, so that a loaded machine
 * changes nothing: one step (a minibatch of 2000 rows, a tenth of a
 * millisecond) is thousands of times shorter than the half-second
 * timeout, and the pilots (5 chains of 4100 steps, seconds) several times
 * longer. */
static void auto_step_timeout(void **state)
{
    (void)state;
    enum { N = 20000, D = 5 };
    static double v[N * (D + 1)];
    drift_rng r0;
    drift_rng_seed(&r0, 2, 0);
    const double w[D] = {1.0, -0.5, 0.25, 0.0, 0.5};
    for (size_t i = 0; i < N; i++) {
        double z = 0;
        for (size_t j = 0; j < D; j++) {
            v[i * (D + 1) + 1 + j] = drift_rng_normal(&r0);
            z += w[j] * v[i * (D + 1) + 1 + j];
        }
        v[i * (D + 1)] = drift_rng_uniform(&r0) < 1 / (1 + exp(-z));
    }
    const char *names[] = {"y", "x.1", "x.2", "x.3", "x.4", "x.5"};
    char *csv = th_write_csv(names, D + 1, v, N);
    char dir[] = "/tmp/drift-tune-st-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[4200];
    snprintf(out, sizeof out, "%s/st.csv", dir);
    th_cli r = th_cli_run((const char *[]){
        "sample", "--model", "logistic", "--data", csv, "--sampler", "sgld",
        "--batch", "2000", "--iter", "40000", "--chains", "1", "--seed", "2",
        "--step-timeout", "0.5", "--out", out, NULL});
    if (r.status != 0 || !strstr(r.err, "plan for sgld"))
        fail_msg("exit %d: %s", r.status, r.err);
    th_cli_free(&r);
    unlink(csv);
    free(csv);
    unlink(out);
    rmdir(dir);
}

static void hparam_flag(void **state)
{
    (void)state;
    const drift_hparam ok[] = {
        {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
         DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL, "step"},
        {"k", DRIFT_HP_REAL, 2, 0, 10, 0, NULL, "other"},
    };
    drift_err e = {{0}};
    assert_int_equal(drift_hparams_check(ok, 2, "s", &e), DRIFT_OK);
    assert_int_equal(drift_hparams_step_size(ok, 2), 0);
    double v[2];
    unsigned char set[2];
    /* Not set: auto (NaN); "auto": the same, but set. */
    assert_int_equal(drift_hparams_apply(ok, 2, "--set", "s", NULL, 0, v, set,
                                         &e),
                     DRIFT_OK);
    assert_true(isnan(v[0]) && !set[0] && v[1] == 2);
    char *a[] = {"h=auto"};
    assert_int_equal(drift_hparams_apply(ok, 2, "--set", "s", a, 1, v, set,
                                         &e),
                     DRIFT_OK);
    assert_true(isnan(v[0]) && set[0]);
    char *b[] = {"h=0.5"};
    assert_int_equal(drift_hparams_apply(ok, 2, "--set", "s", b, 1, v, set,
                                         &e),
                     DRIFT_OK);
    assert_true(v[0] == 0.5);
    /* auto only for the step size; its range says so. */
    char *c[] = {"k=auto"};
    assert_int_equal(drift_hparams_apply(ok, 2, "--set", "s", c, 1, v, set,
                                         &e),
                     DRIFT_EINVAL);
    char *neg[] = {"h=-1"};
    assert_int_equal(drift_hparams_apply(ok, 2, "--set", "s", neg, 1, v, set,
                                         &e),
                     DRIFT_EINVAL);
    assert_non_null(strstr(e.msg, "(0, inf) or auto"));
    /* Refused tables: the flag on an int, without a positive default,
     * twice. */
    const drift_hparam on_int[] = {{"n", DRIFT_HP_INT, 3, 1, 10,
                                    DRIFT_HP_STEP_SIZE, NULL, "n"}};
    assert_int_equal(drift_hparams_check(on_int, 1, "s", &e), DRIFT_EPLUGIN);
    assert_non_null(strstr(e.msg, "flagged as the step size"));
    const drift_hparam no_def[] = {{"h", DRIFT_HP_REAL, NAN, 0, INFINITY,
                                    DRIFT_HP_STEP_SIZE, NULL, "h"}};
    assert_int_equal(drift_hparams_check(no_def, 1, "s", &e), DRIFT_EPLUGIN);
    const drift_hparam two[] = {
        {"h", DRIFT_HP_REAL, 1, 0, INFINITY, DRIFT_HP_STEP_SIZE, NULL, "h"},
        {"g", DRIFT_HP_REAL, 1, 0, INFINITY, DRIFT_HP_STEP_SIZE, NULL, "g"},
    };
    assert_int_equal(drift_hparams_check(two, 2, "s", &e), DRIFT_EPLUGIN);
    assert_non_null(strstr(e.msg, "at most one"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hparam_flag),
        cmocka_unit_test(score_closed_form),
        cmocka_unit_test(pick_rule),
        cmocka_unit_test(gaussian_ranking),
        cmocka_unit_test(logistic_ranking),
        cmocka_unit_test(auto_accuracy),
        cmocka_unit_test(auto_accounting),
        cmocka_unit_test(summary_ksd_cli),
        cmocka_unit_test(auto_step_timeout),
        cmocka_unit_test(auto_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
