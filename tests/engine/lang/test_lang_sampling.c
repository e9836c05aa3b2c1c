/* test_lang_sampling.c: the structured types and multivariate densities
 * of the language under a sampler (mala with warmup, fixed seeds), against
 * closed forms: the Dirichlet-multinomial posterior's means and variances
 * (Dirichlet(alpha + counts)), and a 3 x 3 LKJ(eta) prior's marginal of a
 * correlation, (r + 1) / 2 ~ Beta(eta - 1 + K/2, same), through
 * lkj_corr_cholesky on a cholesky_factor_corr and lkj_corr on a
 * corr_matrix (mean, second moment and P((r + 1)/2 <= 0.3) =
 * pbeta(0.3, 2.5, 2.5)); and a censored Weibull survival model through
 * weibull_lccdf under nuts against R's posterior by quadrature.
 * Tolerances are 4.5 Monte Carlo standard errors from each column's
 * effective sample size. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void open_model(th_problem *tp, const char *text,
                       const char *const *data)
{
    char *mp = th_write_text(text, ".drift");
    tp->reg = th_registry();
    drift_problem_spec spec = {.model = mp, .data = data};
    drift_err e = {{0}};
    if (drift_problem_open(&tp->p, tp->reg, &spec, &e))
        fail_msg("opening the model: %s", e.msg);
    unlink(mp);
    free(mp);
}

static void mala(th_problem *tp, uint64_t warmup, uint64_t iters,
                 uint64_t seed, th_draws *out)
{
    th_run r;
    memset(&r, 0, sizeof r);
    r.sampler = "mala";
    r.warmup = warmup;
    r.iters = iters;
    r.seed = seed;
    assert_int_equal(th_sample(tp, &r, out, NULL), DRIFT_OK);
}

/* The draws' column of a model value (parameter or derived) by name. */
static size_t column(const th_problem *tp, const th_draws *d,
                     const char *name)
{
    const drift_model *m = &tp->p.model;
    size_t first = d->cols - m->n_out - m->n_gen;
    for (size_t k = 0; k < m->n_out; k++)
        if (!strcmp(m->out_names[k], name))
            return first + k;
    for (size_t k = 0; k < m->n_gen; k++)
        if (!strcmp(m->gen_names[k], name))
            return first + m->n_out + k;
    fail_msg("no column %s", name);
    return 0;
}

/* |mean of column - want| within 4.5 Monte Carlo standard errors. */
static void mean_near(const th_draws *d, size_t col, double want,
                      const char *what)
{
    double m = th_mean(d, col, 0), sd = sqrt(th_var(d, col, 0));
    double ess = th_ess(d, col, 0), mcse = sd / sqrt(ess);
    if (!(fabs(m - want) < 4.5 * mcse))
        fail_msg("%s: mean %.6g, expected %.6g (MCSE %.3g, ESS %.0f)", what,
                 m, want, mcse, ess);
}

static void test_dirichlet_multinomial(void **state)
{
    (void)state;
    /* counts 3, 7, 1, 4 of categories 1..4 */
    static const int counts[4] = {3, 7, 1, 4};
    char csv[256] = "csv:k\n";
    for (int c = 0; c < 4; c++)
        for (int j = 0; j < counts[c]; j++)
            snprintf(csv + strlen(csv), sizeof csv - strlen(csv), "%d\n",
                     c + 1);
    char *rows = th_write_text(csv + 4, ".csv");
    char *json = th_write_text("{\"alpha\": [1, 2, 0.5, 1.5]}", ".json");
    const char *data[] = {rows, json, NULL};
    th_problem tp;
    open_model(&tp,
               "data  { alpha : vector[4] }\n"
               "rows  { k : int }\n"
               "param { th : simplex[4] }\n"
               "derived { th1sq = th[1] * th[1] }\n"
               "prior { th ~ dirichlet(alpha) }\n"
               "datum { k ~ categorical(th) }\n",
               data);
    th_draws d;
    mala(&tp, 2000, 40000, 31, &d);
    /* Dirichlet(4, 9, 1.5, 5.5): a0 = 20 */
    static const double post[4] = {4, 9, 1.5, 5.5};
    for (int k = 0; k < 4; k++) {
        char name[16];
        snprintf(name, sizeof name, "th.%d", k + 1);
        mean_near(&d, column(&tp, &d, name), post[k] / 20, name);
    }
    /* E[th1^2] = a1 (a1 + 1) / (a0 (a0 + 1)) */
    mean_near(&d, column(&tp, &d, "th1sq"), 4.0 * 5 / (20.0 * 21),
              "th.1 squared");
    th_draws_free(&d);
    th_close(&tp);
    unlink(rows);
    unlink(json);
    free(rows);
    free(json);
}

/* The marginal of r = R[2, 1] under LKJ(2) for K = 3: (r + 1) / 2 ~
 * Beta(2.5, 2.5), so E r = 0, E r^2 = 1 / (2 * 2.5 + 1) = 1/6 and
 * P((r + 1) / 2 <= 0.3) = pbeta(0.3, 2.5, 2.5) = 0.18696696190887346. */
static void check_lkj(const char *text, uint64_t seed)
{
    th_problem tp;
    open_model(&tp, text, NULL);
    th_draws d;
    mala(&tp, 2000, 40000, seed, &d);
    mean_near(&d, column(&tp, &d, "r"), 0, "r");
    mean_near(&d, column(&tp, &d, "r2"), 1.0 / 6, "r^2");
    mean_near(&d, column(&tp, &d, "low"), 0.18696696190887346,
              "P((r + 1)/2 <= 0.3)");
    mean_near(&d, column(&tp, &d, "r31"), 0, "r31");
    mean_near(&d, column(&tp, &d, "r31sq"), 1.0 / 6, "r31^2");
    th_draws_free(&d);
    th_close(&tp);
}

static void test_lkj_marginal(void **state)
{
    (void)state;
    check_lkj("param { L : cholesky_factor_corr[3] }\n"
              "derived { R = multiply_lower_tri_self_transpose(L)\n"
              "          r = R[2, 1]  r2 = r * r\n"
              "          low = (r + 1) / 2 <= 0.3 ? 1 : 0\n"
              "          r31 = R[3, 1]  r31sq = r31 ^ 2 }\n"
              "prior { L ~ lkj_corr_cholesky(2) }\n",
              41);
    check_lkj("param { R : corr_matrix[3] }\n"
              "derived { r = R[2, 1]  r2 = r * r\n"
              "          low = (r + 1) / 2 <= 0.3 ? 1 : 0\n"
              "          r31 = R[3, 1]  r31sq = r31 ^ 2 }\n"
              "prior { R ~ lkj_corr(2) }\n",
              42);
}

/* A censored Weibull survival model written with weibull_lccdf, under
 * nuts: the posterior means of the shape and scale within 4.5 Monte Carlo
 * standard errors of R's, and their sds within 12%.  The data (40 times,
 * 18 right-censored) and the reference, from a 1200 x 1200 grid over
 * (log alpha, log sigma) on [log 0.3, log 5] x [log 0.3, log 12] (mass
 * at the edges below 1e-9):
 *   set.seed(1); t <- rweibull(40, 1.5, 2); cc <- rexp(40, 1/3)
 *   y <- round(pmin(t, cc), 4); cens <- as.integer(t > cc)
 *   log posterior at (a, s): sum(ifelse(cens == 1, pweibull(y, a, s,
 *     lower.tail = FALSE, log.p = TRUE), dweibull(y, a, s, log = TRUE)))
 *     + dgamma(a, 2, 1, log = TRUE) + dlnorm(s, 0, 2, log = TRUE)
 *   E alpha = 1.4269267543, sd 0.2279291476;
 *   E sigma = 2.0207640003, sd 0.3331583606 */
static void test_weibull_censored(void **state)
{
    (void)state;
    char *rows = th_write_text(
        "t,censored\n"
        "1.9257,1\n0.8824,1\n1.3541,0\n0.3182,1\n0.1783,1\n"
        "0.4512,0\n0.2959,0\n1.1115,0\n1.1977,0\n3.9581,0\n"
        "0.1118,1\n0.9720,1\n1.0408,0\n0.6105,1\n0.8180,0\n"
        "0.9052,1\n0.9586,0\n0.0808,0\n0.7051,1\n0.7974,0\n"
        "0.3316,0\n2.6792,0\n1.1362,0\n1.6639,1\n0.9038,1\n"
        "1.9350,0\n2.9837,1\n1.5425,1\n0.5383,0\n1.2667,1\n"
        "1.6210,0\n1.2792,0\n1.5860,0\n1.7839,1\n0.6598,0\n"
        "0.6296,1\n0.7516,0\n3.3178,1\n0.9422,0\n0.2690,1\n",
        ".csv");
    const char *data[] = {rows, NULL};
    th_problem tp;
    open_model(&tp,
               "rows  { t : real  censored : int }\n"
               "param { alpha : real<lower=0>  sigma : real<lower=0> }\n"
               "prior { alpha ~ gamma(2, 1)  sigma ~ lognormal(0, 2) }\n"
               "datum { target += censored ? weibull_lccdf(t | alpha, sigma)\n"
               "                           : weibull_lpdf(t | alpha, sigma) }\n",
               data);
    th_run r;
    memset(&r, 0, sizeof r);
    r.sampler = "nuts";
    r.warmup = 1000;
    r.iters = 4000;
    r.seed = 41;
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    static const struct {
        const char *name;
        double mean, sd;
    } ref[] = {{"alpha", 1.4269267543, 0.2279291476},
               {"sigma", 2.0207640003, 0.3331583606}};
    for (int k = 0; k < 2; k++) {
        size_t col = column(&tp, &d, ref[k].name);
        mean_near(&d, col, ref[k].mean, ref[k].name);
        double sd = sqrt(th_var(&d, col, 0));
        if (!(fabs(sd / ref[k].sd - 1) < 0.12))
            fail_msg("%s: sd %.4g, R's %.4g", ref[k].name, sd, ref[k].sd);
    }
    th_draws_free(&d);
    th_close(&tp);
    unlink(rows);
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dirichlet_multinomial),
        cmocka_unit_test(test_lkj_marginal),
        cmocka_unit_test(test_weibull_censored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
