/* test_nuts.c: the nuts sampler (plugins/samplers/nuts.c) against closed
 * forms and outside references: a standard normal in 100 dimensions, a
 * correlated 2-D Gaussian whose scales differ by 10^3 (the diagonal metric,
 * Stan's or the one from draws and gradients, must adapt), a density with
 * a region where it is not finite and a funnel (divergences counted,
 * never a failure), the step-size adaptation
 * reaching its target, the tree depth bound, and eight schools
 * (non-centred) against posteriordb's reference draws.
 *
 * Tolerances: means and variances within 4.5 Monte Carlo standard errors
 * (from each chain's effective sample size of x and of (x - mean)^2,
 * Geyer's initial monotone sequence); other bounds are stated where
 * they are used. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Columns of a nuts row: lp__, grads__, then these, then the model's. */
enum { C_ACCEPT = 2, C_STEP, C_DEPTH, C_LEAPFROG, C_DIVERGENT, C_ENERGY,
       C_FIRST_PARAM };

typedef struct model_files {
    char *model, *data, *json;
} model_files;

static void open_text(th_problem *tp, model_files *f, const char *model,
                      const char *csv, const char *json)
{
    memset(f, 0, sizeof *f);
    f->model = th_write_text(model, ".drift");
    if (csv)
        f->data = th_write_text(csv, ".csv");
    if (json)
        f->json = th_write_text(json, ".json");
    tp->reg = th_registry();
    const char *data[3] = {NULL, NULL, NULL};
    size_t nd = 0;
    if (f->data)
        data[nd++] = f->data;
    if (f->json)
        data[nd++] = f->json;
    drift_problem_spec spec = {.model = f->model, .data = nd ? data : NULL};
    drift_err e = {{0}};
    if (drift_problem_open(&tp->p, tp->reg, &spec, &e))
        fail_msg("opening %s: %s", f->model, e.msg);
}

static void close_text(th_problem *tp, model_files *f)
{
    th_close(tp);
    char *p[] = {f->model, f->data, f->json};
    for (int k = 0; k < 3; k++)
        if (p[k]) {
            unlink(p[k]);
            free(p[k]);
        }
}

/* Runs nuts: K chains, warmup then iters draws each. */
static void run_nuts(th_problem *tp, char **set, size_t n_set, unsigned K,
                     uint64_t warmup, uint64_t iters, uint64_t seed,
                     th_draws *d)
{
    th_run r = {.sampler = "nuts", .set = set, .n_set = n_set,
                .iters = iters, .warmup = warmup, .seed = seed, .chains = K,
                .init_mode = DRIFT_INIT_RANDOM};
    drift_chain_result res[16];
    int rc = th_sample(tp, &r, d, res);
    if (rc)
        fail_msg("nuts failed: %s", res[0].message);
    for (unsigned k = 0; k < K; k++)
        assert_int_equal(d[k].n, iters);
}

/* Mean of column col over K chains with its standard error, and the
 * variance about the known mean mu with its standard error. */
typedef struct est {
    double mean, se_mean, var, se_var;
} est;

static est estimate(const th_draws *d, unsigned K, size_t col, double mu)
{
    est r = {0, 0, 0, 0};
    for (unsigned k = 0; k < K; k++) {
        const th_draws *c = &d[k];
        double m = th_mean(c, col, 0);
        double v = th_var(c, col, 0);
        double ess = th_ess(c, col, 0);
        /* (x - mu)^2 as a one-column draws set, for its own ESS. */
        th_draws sq = {c->n, 1, c->n, malloc(c->n * sizeof(double))};
        assert_non_null(sq.v);
        for (size_t i = 0; i < c->n; i++) {
            double x = c->v[i * c->cols + col] - mu;
            sq.v[i] = x * x;
        }
        double vm = th_mean(&sq, 0, 0), vv = th_var(&sq, 0, 0);
        double ess2 = th_ess(&sq, 0, 0);
        free(sq.v);
        r.mean += m / K;
        r.se_mean += v / ess / ((double)K * K);
        r.var += vm / K;
        r.se_var += vv / ess2 / ((double)K * K);
    }
    r.se_mean = sqrt(r.se_mean);
    r.se_var = sqrt(r.se_var);
    return r;
}

static void check_est(const char *what, est e, double mean, double var)
{
    double zm = (e.mean - mean) / e.se_mean, zv = (e.var - var) / e.se_var;
    if (fabs(zm) > 4.5 || fabs(zv) > 4.5)
        fail_msg("%s: mean %.5g (want %.5g, se %.3g, z %.2f), var %.5g "
                 "(want %.5g, se %.3g, z %.2f)",
                 what, e.mean, mean, e.se_mean, zm, e.var, var, e.se_var, zv);
}

static double col_mean(const th_draws *d, unsigned K, size_t col)
{
    double s = 0;
    size_t n = 0;
    for (unsigned k = 0; k < K; k++) {
        for (size_t i = 0; i < d[k].n; i++)
            s += d[k].v[i * d[k].cols + col];
        n += d[k].n;
    }
    return s / (double)n;
}

static double col_max(const th_draws *d, unsigned K, size_t col)
{
    double m = -INFINITY;
    for (unsigned k = 0; k < K; k++)
        for (size_t i = 0; i < d[k].n; i++)
            m = fmax(m, d[k].v[i * d[k].cols + col]);
    return m;
}

static void free_draws(th_draws *d, unsigned K)
{
    for (unsigned k = 0; k < K; k++)
        th_draws_free(&d[k]);
}

/* ---- a standard normal in 100 dimensions -------------------------------- */

static void test_std_normal_100(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : vector[100] }\nprior { x ~ normal(0, 1) }\n",
              NULL, NULL);
    enum { K = 4 };
    th_draws d[K];
    run_nuts(&tp, NULL, 0, K, 1000, 1000, 11, d);
    double worst = 0;
    for (size_t j = 0; j < 100; j++) {
        char what[32];
        snprintf(what, sizeof what, "x.%zu", j + 1);
        est e = estimate(d, K, C_FIRST_PARAM + j, 0);
        check_est(what, e, 0, 1);
        worst = fmax(worst, fmax(fabs(e.mean / e.se_mean),
                                 fabs((e.var - 1) / e.se_var)));
    }
    /* Stan's adaptation on this target: step about 0.5-0.6, 7 leapfrog
     * steps (tree depth 3). */
    double acc = col_mean(d, K, C_ACCEPT), step = col_mean(d, K, C_STEP);
    double depth = col_mean(d, K, C_DEPTH);
    print_message("std normal 100-D: worst |z| %.2f, accept %.3f, step %.3f, "
                  "depth %.2f\n", worst, acc, step, depth);
    assert_true(step > 0.3 && step < 0.9);
    assert_true(depth >= 2.5 && depth <= 4.5);
    assert_true(col_max(d, K, C_DIVERGENT) == 0);
    free_draws(d, K);
    close_text(&tp, &f);
}


/* The same target with the metric from draws and gradients (metric=grad):
 * every mean and variance within Monte Carlo error, and the adaptation
 * settles where Stan's does. */
static void test_std_normal_100_grad(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : vector[100] }\nprior { x ~ normal(0, 1) }\n",
              NULL, NULL);
    enum { K = 4 };
    th_draws d[K];
    char *sets[] = {"metric=grad"};
    run_nuts(&tp, sets, 1, K, 1000, 1000, 11, d);
    double worst = 0;
    for (size_t j = 0; j < 100; j++) {
        char what[32];
        snprintf(what, sizeof what, "x.%zu", j + 1);
        est e = estimate(d, K, C_FIRST_PARAM + j, 0);
        check_est(what, e, 0, 1);
        worst = fmax(worst, fmax(fabs(e.mean / e.se_mean),
                                 fabs((e.var - 1) / e.se_var)));
    }
    double step = col_mean(d, K, C_STEP), depth = col_mean(d, K, C_DEPTH);
    print_message("std normal 100-D, metric=grad: worst |z| %.2f, step "
                  "%.3f, depth %.2f\n", worst, step, depth);
    assert_true(step > 0.3 && step < 0.9);
    assert_true(depth >= 2.5 && depth <= 4.5);
    assert_true(col_max(d, K, C_DIVERGENT) == 0);
    free_draws(d, K);
    close_text(&tp, &f);
}

/* ---- a correlated 2-D Gaussian, scales 1000 and 1 ----------------------- */

static const char *scaled_model(double rho)
{
    static char text[512];
    snprintf(text, sizeof text,
             "param { a : real  b : real }\n"
             "prior { target += -0.5 * ((a / 1000) * (a / 1000) - "
             "2 * %.17g * (a / 1000) * b + b * b) / (1 - %.17g) }\n",
             rho, rho * rho);
    return text;
}

/* E[(a/1000) b] = rho: the product as a one-column draws set per chain. */
static est product_est(const th_draws *d, unsigned K, double rho)
{
    th_draws p[8];
    for (unsigned k = 0; k < K; k++) {
        p[k] = (th_draws){d[k].n, 1, d[k].n, malloc(d[k].n * sizeof(double))};
        assert_non_null(p[k].v);
        for (size_t i = 0; i < d[k].n; i++) {
            const double *row = d[k].v + i * d[k].cols;
            p[k].v[i] = row[C_FIRST_PARAM] / 1000 * row[C_FIRST_PARAM + 1];
        }
    }
    est e = estimate(p, K, 0, rho);
    free_draws(p, K);
    return e;
}

static void scaled_case(const char *metric, double rho, double max_depth_mean)
{
    th_problem tp;
    model_files f;
    open_text(&tp, &f, scaled_model(rho), NULL, NULL);
    enum { K = 4 };
    th_draws d[K];
    char set[32];
    snprintf(set, sizeof set, "metric=%s", metric);
    char *sets[] = {set};
    run_nuts(&tp, sets, 1, K, 1000, 1000, 5, d);
    check_est("a", estimate(d, K, C_FIRST_PARAM, 0), 0, 1e6);
    check_est("b", estimate(d, K, C_FIRST_PARAM + 1, 0), 0, 1);
    est pe = product_est(d, K, rho);
    double z = (pe.mean - rho) / pe.se_mean;
    double depth = col_mean(d, K, C_DEPTH);
    print_message("scaled rho=%g metric=%s: E[a b]/1000 %.4f (z %.2f), "
                  "depth %.2f, accept %.3f\n",
                  rho, metric, pe.mean, z, depth, col_mean(d, K, C_ACCEPT));
    assert_true(fabs(z) < 4.5);
    /* Adapted, the metric makes the scales alike: short trees (a unit
     * metric needs ~1000 steps here, tree depth 10). */
    assert_true(depth < max_depth_mean);
    assert_true(col_max(d, K, C_DIVERGENT) == 0);
    free_draws(d, K);
    close_text(&tp, &f);
}

/* The diagonal metric (the default) must learn the scales 1000 and 1. */
static void test_scaled_diag(void **state)
{
    (void)state;
    scaled_case("diag", 0.8, 3.5);
}

/* So must the diagonal metric from draws and gradients: for this target
 * its early windows set M^-1 to sqrt(1 - rho^2) times the variances (as
 * alike), the last one to the variances. */
static void test_scaled_grad(void **state)
{
    (void)state;
    scaled_case("grad", 0.8, 3.5);
}

/* The dense metric also learns the correlation 0.99, which the diagonal
 * metric leaves to longer trees. */
static void test_scaled_dense(void **state)
{
    (void)state;
    scaled_case("dense", 0.99, 2.5);
}

/* ---- the tree depth bound ------------------------------------------------ */

static void test_max_depth(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, scaled_model(0.5), NULL, NULL);
    th_draws d[1];
    char *sets[] = {"metric=unit", "max_depth=4"};
    run_nuts(&tp, sets, 2, 1, 200, 300, 9, d);
    size_t at_max = 0;
    for (size_t i = 0; i < d[0].n; i++) {
        const double *row = d[0].v + i * d[0].cols;
        assert_true(row[C_DEPTH] <= 4);
        assert_true(row[C_LEAPFROG] <= 15);
        at_max += row[C_DEPTH] == 4;
    }
    /* With a unit metric the scale-1000 direction needs far more than 15
     * steps: most trees stop at the bound. */
    print_message("max_depth=4: %zu of %zu at the bound\n", at_max, d[0].n);
    assert_true(at_max > d[0].n / 2);
    free_draws(d, 1);
    close_text(&tp, &f);
}

/* ---- step-size adaptation ----------------------------------------------- */

/* Dual averaging drives the mean acceptance statistic near delta, not
 * onto it: Stan's NUTS itself ends above delta in sampling on this target
 * (0.85 at delta 0.8; the step size kept is exp(x_bar), an average over
 * the 50-iteration terminal window, not the last iterate).  The reference is Stan's own behaviour on this target,
 * tests/data/nuts_accept.R: the mean accept_stat__ of one chain in
 * sampling over 40 chains of rstan 2.21.7 (mean, sd of one chain, se of
 * the mean).  drift runs K chains, and its K-chain mean must lie within
 * 4 sd of Stan's: 4 sqrt(sd^2 / K + se^2). */
static void test_adaptation_target(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : vector[100] }\nprior { x ~ normal(0, 1) }\n",
              NULL, NULL);
    static const struct {
        const char *delta;
        double mean, sd, se;
    } ref[] = {{"0.6", 0.6761, 0.0458, 0.0072},
               {"0.8", 0.8511, 0.0201, 0.0032},
               {"0.95", 0.9472, 0.0100, 0.0016}};
    double prev_acc = 0;
    for (int j = 0; j < 3; j++) {
        enum { K = 8 };
        th_draws d[K];
        char set[32];
        snprintf(set, sizeof set, "delta=%s", ref[j].delta);
        /* Stan's windowed adaptation: the diagonal metric (the default
         * at 100 parameters adapts on nutpie's schedule). */
        char *sets[] = {set, "metric=diag"};
        run_nuts(&tp, sets, 2, K, 1000, 1000, 21 + j, d);
        double acc = col_mean(d, K, C_ACCEPT);
        double tol = 4 * sqrt(ref[j].sd * ref[j].sd / K +
                              ref[j].se * ref[j].se);
        print_message("delta %s: mean accept_stat %.3f (Stan %.3f +- %.3f), "
                      "step %.3f\n",
                      ref[j].delta, acc, ref[j].mean, tol,
                      col_mean(d, K, C_STEP));
        assert_true(fabs(acc - ref[j].mean) < tol);
        if (j > 0)
            assert_true(acc > prev_acc); /* monotone in delta */
        prev_acc = acc;
        free_draws(d, K);
    }
    close_text(&tp, &f);
}

/* ---- where the density is not finite ------------------------------------ */

/* p(x) proportional to phi(x) (3 - x) on x < 3; log(3 - x) is NaN beyond
 * 3, a region a trajectory runs into: each such leapfrog step is a
 * divergence, counted, and the chain goes on.  With Z = 3 Phi(3) +
 * phi(3): E[x] = -Phi(3) / Z and E[x^2] = (3 Phi(3) + 2 phi(3)) / Z. */
static void test_nonfinite_region(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f,
              "param { x : real }\n"
              "prior { x ~ normal(0, 1)  target += log(3 - x) }\n",
              NULL, NULL);
    enum { K = 4 };
    th_draws d[K];
    run_nuts(&tp, NULL, 0, K, 1000, 2000, 31, d);
    double Phi = th_pnorm(3), phi = exp(-4.5) / sqrt(2 * M_PI);
    double Z = 3 * Phi + phi;
    /* int x phi = -phi(3), int x^2 phi = Phi(3) - 3 phi(3),
     * int x^3 phi = -(9 + 2) phi(3), all over (-inf, 3). */
    double m1 = -Phi / Z;
    double m2 = (3 * (Phi - 3 * phi) + 11 * phi) / Z;
    double var = m2 - m1 * m1;
    check_est("x", estimate(d, K, C_FIRST_PARAM, m1), m1, var);
    double div = 0;
    for (unsigned k = 0; k < K; k++)
        for (size_t i = 0; i < d[k].n; i++)
            div += d[k].v[i * d[k].cols + C_DIVERGENT];
    print_message("phi(x)(3-x): mean %.4f (want %.4f), %g divergences, "
                  "max x %.3f\n", col_mean(d, K, C_FIRST_PARAM), m1, div,
                  col_max(d, K, C_FIRST_PARAM));
    assert_true(col_max(d, K, C_FIRST_PARAM) < 3);
    free_draws(d, K);
    close_text(&tp, &f);
}

/* Neal's funnel: divergences in the neck, counted in divergent__, and the
 * run completes (exit status 0 from the CLI: the draws are valid). */
static void test_funnel_divergences(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f,
              "param { v : real  x : vector[9] }\n"
              "prior { v ~ normal(0, 3)  x ~ normal(0, exp(v / 2)) }\n",
              NULL, NULL);
    enum { K = 2 };
    th_draws d[K];
    run_nuts(&tp, NULL, 0, K, 500, 500, 41, d);
    double div = 0;
    for (unsigned k = 0; k < K; k++)
        for (size_t i = 0; i < d[k].n; i++) {
            const double *row = d[k].v + i * d[k].cols;
            div += row[C_DIVERGENT];
            for (size_t j = 0; j < d[k].cols; j++)
                assert_true(isfinite(row[j]));
        }
    print_message("funnel: %g divergences in %zu draws\n", div,
                  (size_t)K * d[0].n);
    assert_true(div > 0);
    free_draws(d, K);
    close_text(&tp, &f);
}

/* ---- eight schools, non-centred ----------------------------------------- */

static char *srcpath(const char *rel)
{
    const char *src = getenv("srcdir");
    char *p = malloc(4096);
    assert_non_null(p);
    snprintf(p, 4096, "%s/%s", src ? src : ".", rel);
    return p;
}

/* posteriordb's reference (10,000 draws of Stan's NUTS): mu 4.41 (sd
 * 3.31), tau 3.60 (sd 3.20).  Stan's defaults give few divergences here;
 * so must drift's (at most 0.5% of transitions), and the means within 0.2
 * reference sd. */
static void test_eight_schools(void **state)
{
    (void)state;
    char *model = srcpath("tests/posteriordb/eight_schools-eight_schools_"
                          "noncentered/model.drift");
    char *rows = srcpath("tests/posteriordb/eight_schools-eight_schools_"
                         "noncentered/rows.csv");
    char *json = srcpath("tests/posteriordb/eight_schools-eight_schools_"
                         "noncentered/data.json");
    th_problem tp;
    tp.reg = th_registry();
    const char *data[] = {rows, json, NULL};
    drift_problem_spec spec = {.model = model, .data = data};
    drift_err e = {{0}};
    if (drift_problem_open(&tp.p, tp.reg, &spec, &e))
        fail_msg("%s", e.msg);
    enum { K = 4 };
    th_draws d[K];
    run_nuts(&tp, NULL, 0, K, 1000, 1000, 1, d);
    double div = 0;
    for (unsigned k = 0; k < K; k++)
        for (size_t i = 0; i < d[k].n; i++)
            div += d[k].v[i * d[k].cols + C_DIVERGENT];
    /* theta_trans.1..8, mu, tau */
    double mu = col_mean(d, K, C_FIRST_PARAM + 8);
    double tau = col_mean(d, K, C_FIRST_PARAM + 9);
    print_message("eight schools: %g divergences of 4000, mu %.3f, tau %.3f\n",
                  div, mu, tau);
    assert_true(div <= 20);
    assert_true(fabs(mu - 4.4105) < 0.2 * 3.3093);
    assert_true(fabs(tau - 3.6021) < 0.2 * 3.1985);
    free_draws(d, K);
    th_close(&tp);
    free(model);
    free(rows);
    free(json);
}

/* ---- no warmup, no adaptation -------------------------------------------- */

/* --warmup 0: the step size is the initial heuristic's, the same in every
 * draw, and the metric the identity; the draws are still exact. */
static void test_no_warmup(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : vector[10] }\nprior { x ~ normal(0, 2) }\n",
              NULL, NULL);
    enum { K = 2 };
    th_draws d[K];
    run_nuts(&tp, NULL, 0, K, 0, 2000, 51, d);
    for (unsigned k = 0; k < K; k++) {
        double h = d[k].v[C_STEP];
        for (size_t i = 0; i < d[k].n; i++)
            assert_true(d[k].v[i * d[k].cols + C_STEP] == h);
    }
    for (size_t j = 0; j < 10; j++)
        check_est("x", estimate(d, K, C_FIRST_PARAM + j, 0), 0, 4);
    free_draws(d, K);
    close_text(&tp, &f);
}

/* ---- a direction nothing constrains -------------------------------------- */

/* y has neither prior nor data: the posterior is improper.  The run must
 * end (every tree stops at max_depth) with its draws, not hang. */
static void test_improper_terminates(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : real  y : real }\nprior { x ~ normal(0, 1) }\n",
              NULL, NULL);
    th_draws d[1];
    run_nuts(&tp, NULL, 0, 1, 150, 100, 61, d);
    double depth = col_mean(d, 1, C_DEPTH);
    print_message("improper: mean tree depth %.2f\n", depth);
    assert_true(col_max(d, 1, C_DEPTH) <= 10);
    free_draws(d, 1);
    close_text(&tp, &f);
}

/* ---- a start far out on a steep slope ------------------------------------ */

/* Poisson regression with an offset and a raw count predictor (0 to 450),
 * flat priors: y ~ poisson_log(log(e) + b0 + b1 x).  A random start puts
 * b1 in (-2, 2), where exp(450 b1) makes -log p as large as 1e285: a
 * chain started there must still end warmup in the posterior, as every
 * chain of Stan's does.  The data: STEEP_N rows made by a fixed rule
 * (counts near e exp(-3 + 0.004 x), perturbed). */
enum { STEEP_N = 60 };

static void steep_row(size_t i, double *y, double *x, double *e)
{
    *x = (double)((i * 37) % 451);
    *e = 5.0 + (double)((i * 13) % 100);
    *y = floor(*e * exp(-3.0 + 0.004 * *x) * (1.0 + 0.3 * sin((double)i)) +
               0.5);
}

static double steep_logp(double b0, double b1)
{
    double l = 0;
    for (size_t i = 0; i < STEEP_N; i++) {
        double y, x, e;
        steep_row(i, &y, &x, &e);
        double eta = log(e) + b0 + b1 * x;
        l += y * eta - exp(eta);
    }
    return l;
}

/* The posterior's means and sds by quadrature, independent of drift: the
 * mode and Hessian by Newton's method, then a 321 x 321 grid over +-8 sd
 * in the coordinates the Hessian whitens (b0 and b1 correlate strongly:
 * x is not centred). */
static void steep_reference(double mean[2], double sd[2])
{
    double b[2] = {-3, 0.004}, H[3] = {0};
    for (int it = 0; it < 50; it++) {
        double g[2] = {0, 0};
        H[0] = H[1] = H[2] = 0;
        for (size_t i = 0; i < STEEP_N; i++) {
            double y, x, e;
            steep_row(i, &y, &x, &e);
            double mu = exp(log(e) + b[0] + b[1] * x);
            g[0] += y - mu;
            g[1] += (y - mu) * x;
            H[0] += mu;
            H[1] += mu * x;
            H[2] += mu * x * x;
        }
        double det = H[0] * H[2] - H[1] * H[1];
        b[0] += (H[2] * g[0] - H[1] * g[1]) / det;
        b[1] += (H[0] * g[1] - H[1] * g[0]) / det;
    }
    /* Covariance = H^-1 and its Cholesky factor C. */
    double det = H[0] * H[2] - H[1] * H[1];
    double c00 = H[2] / det, c01 = -H[1] / det, c11 = H[0] / det;
    double l00 = sqrt(c00), l10 = c01 / l00, l11 = sqrt(c11 - l10 * l10);
    double lp0 = steep_logp(b[0], b[1]), w = 0, m[2] = {0, 0}, s2[2] = {0, 0};
    enum { G = 321 };
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) {
            double z0 = -8 + 16.0 * i / (G - 1), z1 = -8 + 16.0 * j / (G - 1);
            double t0 = b[0] + l00 * z0, t1 = b[1] + l10 * z0 + l11 * z1;
            double p = exp(steep_logp(t0, t1) - lp0);
            w += p;
            m[0] += p * t0;
            m[1] += p * t1;
            s2[0] += p * t0 * t0;
            s2[1] += p * t1 * t1;
        }
    for (int k = 0; k < 2; k++) {
        mean[k] = m[k] / w;
        sd[k] = sqrt(s2[k] / w - mean[k] * mean[k]);
    }
}

/* Seeds at which a chain starts on the steep side: before the approach
 * by line searches each of them lost one or two chains (step sizes of
 * 1e-26 and below, sds 1e-8 of the posterior's, means 1e9 of their
 * standard errors off; of seeds 1 to 8, six lost chains).  Every
 * chain's mean within 4.5 of its own Monte Carlo standard errors and 0.25
 * sd of the reference, its sd within 25% of the reference's. */
static void test_steep_start(void **state)
{
    (void)state;
    size_t cap = 64 + 48 * STEEP_N, used = 0;
    char *csv = malloc(cap);
    assert_non_null(csv);
    used += (size_t)snprintf(csv, cap, "y,x,e\n");
    for (size_t i = 0; i < STEEP_N; i++) {
        double y, x, e;
        steep_row(i, &y, &x, &e);
        used += (size_t)snprintf(csv + used, cap - used, "%.0f,%.0f,%.0f\n",
                                 y, x, e);
    }
    th_problem tp;
    model_files f;
    open_text(&tp, &f,
              "rows  { y : int  x : real  e : real }\n"
              "param { b0 : real  b1 : real }\n"
              "datum { y ~ poisson_log(log(e) + b0 + b1 * x) }\n",
              csv, NULL);
    double mean[2], sd[2];
    steep_reference(mean, sd);
    const uint64_t seeds[] = {1, 2, 3};
    enum { K = 4 };
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        th_draws d[K];
        run_nuts(&tp, NULL, 0, K, 1000, 1000, seeds[s], d);
        for (unsigned k = 0; k < K; k++)
            for (size_t j = 0; j < 2; j++) {
                size_t col = C_FIRST_PARAM + j;
                double m = th_mean(&d[k], col, 0);
                double v = th_var(&d[k], col, 0);
                double se = sqrt(v / th_ess(&d[k], col, 0));
                double z = (m - mean[j]) / se, r = sqrt(v) / sd[j];
                if (!(fabs(z) < 4.5 && fabs(m - mean[j]) < 0.25 * sd[j] &&
                      r > 0.75 && r < 1.25))
                    fail_msg("seed %llu, chain %u: b%zu mean %.6g (want "
                             "%.6g, sd %.3g: z %.2f), sd ratio %.3g, step "
                             "%.3g",
                             (unsigned long long)seeds[s], k + 1, j, m,
                             mean[j], sd[j], z, r,
                             d[k].v[C_STEP]);
            }
        free_draws(d, K);
    }
    close_text(&tp, &f);
    free(csv);
}

/* ---- chains queued beyond the cores --------------------------------------- */

/* Nine chains run one at a time give the same draws as run all at once:
 * a chain depends on (seed, id) alone. */
static void test_queued_chains(void **state)
{
    (void)state;
    th_problem tp;
    model_files f;
    open_text(&tp, &f, "param { x : vector[3] }\nprior { x ~ normal(0, 1) }\n",
              NULL, NULL);
    enum { K = 9 };
    th_draws a[K], b[K];
    th_run r = {.sampler = "nuts", .iters = 50, .warmup = 50, .seed = 3,
                .chains = K, .init_mode = DRIFT_INIT_RANDOM, .parallel = 1};
    assert_int_equal(th_sample(&tp, &r, a, NULL), DRIFT_OK);
    r.parallel = K;
    assert_int_equal(th_sample(&tp, &r, b, NULL), DRIFT_OK);
    for (unsigned k = 0; k < K; k++) {
        assert_int_equal(a[k].n, 50);
        assert_int_equal(b[k].n, 50);
        assert_memory_equal(a[k].v, b[k].v, 50 * a[k].cols * sizeof(double));
    }
    assert_memory_not_equal(a[0].v, a[1].v, a[0].cols * sizeof(double));
    free_draws(a, K);
    free_draws(b, K);
    close_text(&tp, &f);
}

/* A start far outside the posterior (x ~ normal(0, 1e-4), a random
 * start in (-2, 2): 1e7 and more nats above the bulk) is moved into the
 * bulk before adaptation; the run says so in a note, not a warning (the
 * draws are as right as any start's), and not at all with --quiet. */
static void test_far_start_note(void **state)
{
    (void)state;
    char *m = th_write_text("param { x : real }\n"
                            "prior { x ~ normal(0, 1e-4) }\n",
                            ".drift");
    char out[] = "/tmp/drift-nuts-far-XXXXXX";
    close(mkstemp(out));
    for (int quiet = 0; quiet <= 1; quiet++) {
        const char *args[] = {"sample", m, "--chains", "1", "--seed", "3",
                              "--out", out, quiet ? "--quiet" : NULL, NULL};
        th_cli r = th_cli_run(args);
        if (r.status)
            fail_msg("exit %d\n%s", r.status, r.err);
        const char *note = strstr(r.err, "far outside the posterior");
        if (quiet ? note != NULL : note == NULL)
            fail_msg("%s: the far start's note %s:\n%s",
                     quiet ? "--quiet" : "default",
                     quiet ? "printed" : "missing", r.err);
        if (strstr(r.err, "warning: chain"))
            fail_msg("a warning for a start the chain recovered from:\n%s",
                     r.err);
        th_cli_free(&r);
    }
    unlink(out);
    unlink(m);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_std_normal_100),
        cmocka_unit_test(test_std_normal_100_grad),
        cmocka_unit_test(test_scaled_diag),
        cmocka_unit_test(test_scaled_grad),
        cmocka_unit_test(test_scaled_dense),
        cmocka_unit_test(test_max_depth),
        cmocka_unit_test(test_adaptation_target),
        cmocka_unit_test(test_nonfinite_region),
        cmocka_unit_test(test_funnel_divergences),
        cmocka_unit_test(test_eight_schools),
        cmocka_unit_test(test_no_warmup),
        cmocka_unit_test(test_improper_terminates),
        cmocka_unit_test(test_queued_chains),
        cmocka_unit_test(test_steep_start),
        cmocka_unit_test(test_far_start_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
