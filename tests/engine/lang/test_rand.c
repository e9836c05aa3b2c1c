/* test_rand.c: the generated block's random draws.  Each distribution's
 * draws (200,000 at fixed seeds) against R's distribution functions at
 * three points (pnorm, pt, pcauchy, plogis, plnorm, pexp, pgamma, pbeta,
 * punif, pbinom, ppois, pnbinom, pweibull, pchisq, and closed forms for
 * the double exponential, Gumbel, Rayleigh and Frechet; the
 * beta-binomial's by summing its pmf in R), with tolerances of five
 * Monte Carlo standard errors; von Mises through E cos(X - mu) =
 * besselI(kappa, 1) / besselI(kappa, 0); LKJ through the closed-form
 * marginal (r + 1) / 2 ~ Beta(eta - 1 + K/2, same); categorical
 * frequencies; equal seeds give equal draws.  Then the _rng functions
 * through the language's generated block: dirichlet's mean,
 * multi_normal's mean and covariance, categorical_logit's frequencies;
 * and every entry of the distribution table's name_rng through the
 * language, its draws finite and in the support. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/dist.h"
#include "engine/lang/rand.h"
#include "harness.h"
#include "langtest.h"

typedef struct cdf_ref {
    drift_dist_id id;
    double a[3];
    double t[3];
    double F[3];
} cdf_ref;

/* Printed by R 4.x (sprintf("%.17g")). */
static const cdf_ref cdfs[] = {
    {DRIFT_D_NORMAL, {1, 2}, {-1, 1, 3}, {0.15865525393145705, 0.5, 0.84134474606854293}},
    {DRIFT_D_STUDENT_T, {3, 1, 2}, {-1, 1, 3}, {0.19550110947788527, 0.5, 0.80449889052211476}},
    {DRIFT_D_CAUCHY, {1, 2}, {-1, 1, 3}, {0.25, 0.5, 0.75}},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {1, 2}, {-1, 1, 3}, {0.18393972058572117, 0.5, 0.81606027941427883}},
    {DRIFT_D_LOGISTIC, {1, 2}, {-1, 1, 3}, {0.2689414213699951, 0.5, 0.7310585786300049}},
    {DRIFT_D_LOGNORMAL, {0.5, 0.7}, {0.80000000000000004, 1.6000000000000001, 3}, {0.15078739192613105, 0.4829097726644086, 0.80376882562865992}},
    {DRIFT_D_EXPONENTIAL, {1.5}, {0.20000000000000001, 0.59999999999999998, 1.5}, {0.25918177931828218, 0.59343034025940089, 0.89460077543813565}},
    {DRIFT_D_GAMMA, {0.6, 2}, {0.050000000000000003, 0.29999999999999999, 1}, {0.27089860192931031, 0.6681982858168396, 0.94002598612470867}},
    {DRIFT_D_GAMMA, {3.5, 2}, {1, 1.7, 3}, {0.22022259152428406, 0.55000318841897489, 0.89944113149164118}},
    {DRIFT_D_INV_GAMMA, {3, 2}, {0.5, 1, 2}, {0.23810330555354442, 0.6766764161830634, 0.91969860292860584}},
    {DRIFT_D_BETA, {0.3, 0.7}, {0.01, 0.20000000000000001, 0.80000000000000004}, {0.21576857250318635, 0.53759664774650995, 0.87303452573119256}},
    {DRIFT_D_BETA, {2.5, 4}, {0.20000000000000001, 0.40000000000000002, 0.59999999999999998}, {0.16385906139118467, 0.55580192155119446, 0.87002697889203406}},
    {DRIFT_D_UNIFORM, {-1, 3}, {-0.5, 1, 2.8999999999999999}, {0.125, 0.5, 0.97499999999999998}},
    {DRIFT_D_BERNOULLI, {0.3}, {0, 0, 1}, {0.69999999999999996, 0.69999999999999996, 1}},
    {DRIFT_D_BERNOULLI_LOGIT, {0.4}, {0, 0, 1}, {0.401312339887548, 0.401312339887548, 1}},
    {DRIFT_D_BINOMIAL, {10, 0.3}, {1, 3, 5}, {0.14930834590000003, 0.64961071840000018, 0.95265101260000007}},
    {DRIFT_D_BINOMIAL, {1000, 0.37}, {360, 370, 380}, {0.26747770717082775, 0.51419242874489879, 0.7546507345291763}},
    {DRIFT_D_BINOMIAL, {1000, 0.63}, {360, 620, 640}, {6.0330410496567663e-67, 0.26633318462889077, 0.75370769087758172}},
    {DRIFT_D_BINOMIAL_LOGIT, {20, -0.5}, {3, 7, 9}, {0.025725254520777348, 0.49837648769575871, 0.81655964556390204}},
    {DRIFT_D_POISSON, {3.5}, {1, 3, 5}, {0.13588822540043324, 0.53663266790078512, 0.85761355309577836}},
    {DRIFT_D_POISSON, {250}, {240, 250, 260}, {0.27622746015788557, 0.51681228921553923, 0.74856551997943477}},
    {DRIFT_D_POISSON_LOG, {1.94591014905531}, {4, 7, 9}, {0.17299160788207138, 0.59871383552303681, 0.83049593723867343}},
    {DRIFT_D_NEG_BINOMIAL, {2.5, 0.5}, {1, 4, 8}, {0.17106674642655575, 0.53488057346219964, 0.83633021157685472}},
    {DRIFT_D_NEG_BINOMIAL_2, {4, 1.5}, {1, 4, 8}, {0.2978022709324748, 0.65695883326961813, 0.88258710562270815}},
    {DRIFT_D_NEG_BINOMIAL_2_LOG, {1.38629436111989, 1.5}, {1, 4, 8}, {0.2978022709324748, 0.65695883326961813, 0.88258710562270815}},
    {DRIFT_D_BETA_BINOMIAL, {10, 2, 3}, {2, 4, 7}, {0.31068931068931083, 0.59440559440559426, 0.90509490509490498}},
    {DRIFT_D_WEIBULL, {1.5, 2}, {0.5, 1.5, 3}, {0.1175030974154046, 0.47770308641745851, 0.84072409150997862}},
    {DRIFT_D_GUMBEL, {1, 2}, {-1, 1, 3}, {0.065988035845312543, 0.36787944117144233, 0.69220062755534639}},
    {DRIFT_D_CHI_SQUARE, {3}, {0.5, 2, 5}, {0.081108588345324154, 0.42759329552912084, 0.82820285570326679}},
    {DRIFT_D_INV_CHI_SQUARE, {3}, {0.10000000000000001, 0.29999999999999999, 1}, {0.018566135463043199, 0.34303014613824379, 0.80125195690120077}},
    {DRIFT_D_SCALED_INV_CHI_SQUARE, {4, 1.5}, {0.80000000000000004, 1.5, 4}, {0.023893480776104203, 0.19914827347145581, 0.6898864931364932}},
    {DRIFT_D_RAYLEIGH, {2}, {1, 2, 4}, {0.11750309741540454, 0.39346934028736658, 0.8646647167633873}},
    {DRIFT_D_FRECHET, {2, 1.5}, {1, 1.5, 3}, {0.10539922456186429, 0.36787944117144233, 0.77880078307140488}},
};

static void within(double got, double want, double se, const char *what,
                   size_t k)
{
    if (!(fabs(got - want) <= 5 * se + 1e-12))
        fail_msg("%s, case %zu: %.6g vs %.6g (5 standard errors: %.3g)",
                 what, k, got, want, 5 * se);
}

static void test_cdfs(void **state)
{
    (void)state;
    const size_t n = 200000;
    drift_rand r;
    for (size_t k = 0; k < sizeof cdfs / sizeof cdfs[0]; k++) {
        drift_rand_seed(&r, 100 + k);
        size_t below[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            double x = drift_rand_dist(&r, cdfs[k].id, cdfs[k].a);
            if (isnan(x))
                fail_msg("%s case %zu: NaN", drift_dists[cdfs[k].id].name, k);
            for (int j = 0; j < 3; j++)
                below[j] += x <= cdfs[k].t[j];
        }
        for (int j = 0; j < 3; j++) {
            double F = cdfs[k].F[j];
            within((double)below[j] / (double)n, F,
                   sqrt(F * (1 - F) / (double)n),
                   drift_dists[cdfs[k].id].name, k);
        }
    }
}

static void test_von_mises(void **state)
{
    (void)state;
    const size_t n = 200000;
    drift_rand r;
    drift_rand_seed(&r, 7);
    double a[2] = {0.5, 2}, s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++) {
        double c = cos(drift_rand_dist(&r, DRIFT_D_VON_MISES, a) - 0.5);
        s += c;
        s2 += c * c;
    }
    double m = s / (double)n, sd = sqrt(s2 / (double)n - m * m);
    within(m, 0.69777465796400795, sd / sqrt((double)n), "von_mises", 0);
}

static void test_lkj(void **state)
{
    (void)state;
    const size_t n = 50000, K = 4;
    /* pbeta(c(0.3, 0.5, 0.7), 2.5, 2.5): eta = 1.5, K = 4 */
    const double t[3] = {0.3, 0.5, 0.7};
    const double F[3] = {0.18696696190887346, 0.5, 0.81303303809112637};
    drift_rand r;
    drift_rand_seed(&r, 8);
    size_t below[4][4][3];
    memset(below, 0, sizeof below);
    double L[16];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(drift_rand_lkj_cholesky(&r, K, 1.5, L), 0);
        for (size_t a = 0; a < K; a++) {
            double rn = 0;
            for (size_t k = 0; k < K; k++)
                rn += L[a * K + k] * L[a * K + k];
            assert_true(fabs(rn - 1) < 1e-12);
            for (size_t b = 0; b < a; b++) {
                double rho = 0;
                for (size_t k = 0; k < K; k++)
                    rho += L[a * K + k] * L[b * K + k];
                for (int j = 0; j < 3; j++)
                    below[a][b][j] += (rho + 1) / 2 <= t[j];
            }
        }
    }
    for (size_t a = 0; a < K; a++)
        for (size_t b = 0; b < a; b++)
            for (int j = 0; j < 3; j++)
                within((double)below[a][b][j] / (double)n, F[j],
                       sqrt(F[j] * (1 - F[j]) / (double)n), "lkj marginal",
                       a * K + b);
}

static void test_categorical_and_seeds(void **state)
{
    (void)state;
    const size_t n = 200000;
    const double p[4] = {0.1, 0.2, 0.3, 0.4};
    drift_rand r, r2;
    drift_rand_seed(&r, 9);
    size_t cnt[5] = {0};
    for (size_t i = 0; i < n; i++) {
        double k = drift_rand_categorical(&r, p, 4);
        assert_true(k >= 1 && k <= 4);
        cnt[(size_t)k]++;
    }
    for (int k = 1; k <= 4; k++)
        within((double)cnt[k] / (double)n, p[k - 1],
               sqrt(p[k - 1] * (1 - p[k - 1]) / (double)n), "categorical",
               (size_t)k);
    const double bad[2] = {0.5, 0.6};
    assert_true(isnan(drift_rand_categorical(&r, bad, 2)));
    drift_rand_seed(&r, 12345);
    drift_rand_seed(&r2, 12345);
    for (int i = 0; i < 100; i++) {
        double a[2] = {3.5, 2};
        assert_true(drift_rand_dist(&r, DRIFT_D_GAMMA, a) ==
                    drift_rand_dist(&r2, DRIFT_D_GAMMA, a));
    }
    double neg[2] = {0, -1};
    assert_true(isnan(drift_rand_dist(&r, DRIFT_D_NORMAL, neg)));
}

/* Where a generated value is, by name. */
static size_t gen_index(const drift_model *m, const char *name)
{
    for (size_t k = 0; k < m->n_gen; k++)
        if (!strcmp(m->gen_names[k], name))
            return k;
    fail_msg("no generated value %s", name);
    return 0;
}

/* The _rng functions of the generated block, through a model: J draws in
 * one call where the arguments are arrays, many calls (seeds) else. */
static void test_generated_draws(void **state)
{
    (void)state;
    const size_t J = 20000;
    size_t cap = J * 20 + 512, used = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    used += (size_t)snprintf(json, cap, "json:{\"J\": %zu, \"M\": [", J);
    for (size_t j = 0; j < J; j++)
        used += (size_t)snprintf(json + used, cap - used, "%s[1, -2, 0.5]",
                                 j ? ", " : "");
    snprintf(json + used, cap - used,
             "], \"S\": [[2, 0.6, -0.3], [0.6, 1, 0.2], [-0.3, 0.2, 0.5]],"
             " \"al\": [2, 3, 5], \"p\": [0.2, 0.3, 0.5]}");
    const char *data[] = {json, NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "data { J : int  M : array[J] vector[3]  S : cov_matrix[3]\n"
               "       al : vector[3]  p : simplex[3] }\n"
               "param { z : real }\n"
               "prior { z ~ normal(0, 1) }\n"
               "generated { x = multi_normal_rng(M, S)\n"
               "  xc = multi_normal_cholesky_rng(M[1], cholesky_decompose(S))\n"
               "  d = dirichlet_rng(al)  k = categorical_logit_rng(log(p))\n"
               "  c = categorical_rng(p) }\n",
               data, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->n_gen, 3 * J + 3 + 3 + 1 + 1);
    assert_int_equal(m->n_gen_derived, 0);
    assert_string_equal(m->gen_names[0], "x.1.1");
    assert_string_equal(m->gen_names[1], "x.2.1");
    assert_string_equal(m->gen_names[J], "x.1.2");
    double *out = malloc(m->n_gen * sizeof *out);
    void *ws = m->workspace_new(m->self, 1);
    double theta = 0;
    drift_err e;
    assert_int_equal(m->generate(m->self, ws, &theta, 1, 1, out, &e), 0);
    const double mu[3] = {1, -2, 0.5};
    const double S[3][3] = {{2, 0.6, -0.3}, {0.6, 1, 0.2}, {-0.3, 0.2, 0.5}};
    double mean[3] = {0}, cov[3][3] = {{0}};
    for (size_t j = 0; j < J; j++)
        for (int a = 0; a < 3; a++)
            mean[a] += out[j + J * (size_t)a] / (double)J;
    for (size_t j = 0; j < J; j++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                cov[a][b] += (out[j + J * (size_t)a] - mu[a]) *
                             (out[j + J * (size_t)b] - mu[b]) / (double)J;
    for (int a = 0; a < 3; a++) {
        within(mean[a], mu[a], sqrt(S[a][a] / (double)J), "multi_normal mean",
               (size_t)a);
        for (int b = 0; b < 3; b++)
            within(cov[a][b], S[a][b],
                   sqrt((S[a][a] * S[b][b] + S[a][b] * S[a][b]) / (double)J),
                   "multi_normal covariance", (size_t)(3 * a + b));
    }
    /* Draws by seed: equal seeds equal values, others differ. */
    double *again = malloc(m->n_gen * sizeof *again);
    assert_int_equal(m->generate(m->self, ws, &theta, 1, 1, again, &e), 0);
    assert_true(!memcmp(out, again, m->n_gen * sizeof *out));
    size_t ixc = gen_index(m, "xc.1"), id = gen_index(m, "d.1");
    size_t ik = gen_index(m, "k"), ic = gen_index(m, "c");
    const size_t n = 20000;
    double xs[3] = {0}, ds[3] = {0}, d2[3] = {0};
    size_t kc[4] = {0}, cc[4] = {0};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(m->generate(m->self, ws, &theta, 1000 + i, 1, out,
                                     &e),
                         0);
        for (int a = 0; a < 3; a++) {
            xs[a] += out[ixc + (size_t)a] / (double)n;
            ds[a] += out[id + (size_t)a] / (double)n;
            d2[a] += out[id + (size_t)a] * out[id + (size_t)a] / (double)n;
        }
        assert_true(fabs(out[id] + out[id + 1] + out[id + 2] - 1) < 1e-12);
        kc[(size_t)out[ik]]++;
        cc[(size_t)out[ic]]++;
    }
    const double al[3] = {2, 3, 5}, p[3] = {0.2, 0.3, 0.5};
    for (int a = 0; a < 3; a++) {
        within(xs[a], mu[a], sqrt(S[a][a] / (double)n), "multi_normal_cholesky",
               (size_t)a);
        double v = al[a] * (10 - al[a]) / (100.0 * 11);
        within(ds[a], al[a] / 10, sqrt(v / (double)n), "dirichlet mean",
               (size_t)a);
        within(d2[a] - ds[a] * ds[a], v, 4 * v / sqrt((double)n),
               "dirichlet variance", (size_t)a);
        within((double)kc[a + 1] / (double)n, p[a],
               sqrt(p[a] * (1 - p[a]) / (double)n), "categorical_logit",
               (size_t)a);
        within((double)cc[a + 1] / (double)n, p[a],
               sqrt(p[a] * (1 - p[a]) / (double)n), "categorical", (size_t)a);
    }
    free(out);
    free(again);
    m->workspace_free(m->self, ws);
    lt_close(&lm);
    free(json);
}

/* ordered_logistic_rng and ordered_probit_rng: the frequencies of
 * 200000 draws within 5 binomial standard errors of the probabilities
 * (the exponential of drift_dist_ordered, tested against R in
 * test_dist), eta in the middle and in a tail. */
static void test_ordered_draws(void **state)
{
    (void)state;
    static const double cut[3] = {-1, 0.5, 2};
    static const double etas[2] = {0.3, 2.8};
    enum { ND = 200000 };
    drift_rand r;
    drift_rand_seed(&r, 23);
    for (int probit = 0; probit < 2; probit++)
        for (int e = 0; e < 2; e++) {
            size_t cnt[5] = {0};
            for (int i = 0; i < ND; i++) {
                double y = drift_rand_ordered(&r, probit, etas[e], cut, 3);
                assert_true(y >= 1 && y <= 4 && y == floor(y));
                cnt[(size_t)y]++;
            }
            for (int k = 1; k <= 4; k++) {
                double p = exp(drift_dist_ordered(probit, k, etas[e], cut, 3,
                                                  NULL));
                within((double)cnt[k] / ND, p, sqrt(p * (1 - p) / ND),
                       probit ? "ordered_probit_rng" : "ordered_logistic_rng",
                       (size_t)k);
            }
        }
    double bad[2] = {1, 0};
    assert_true(isnan(drift_rand_ordered(&r, 0, 0, bad, 2)));
}

/* Every distribution of the table has its name_rng through the
 * generated block (one call each, a model naming every drift_dists
 * entry), with finite draws in the distribution's support: ints for the
 * discrete ones, a simplex from dirichlet_rng, correlation matrices and
 * their Cholesky factors from the LKJ draws. */
static void test_every_rng(void **state)
{
    (void)state;
    static const char *const calls[] = {
        "normal_rng(0, 1)", "student_t_rng(3, 0, 1)", "cauchy_rng(0, 1)",
        "double_exponential_rng(0, 1)", "logistic_rng(0, 1)",
        "lognormal_rng(0, 1)", "exponential_rng(1)", "gamma_rng(2, 1)",
        "inv_gamma_rng(2, 1)", "beta_rng(2, 3)", "uniform_rng(0, 2)",
        "bernoulli_rng(0.3)", "bernoulli_logit_rng(0.3)",
        "binomial_logit_rng(10, 0.3)", "poisson_rng(3)", "poisson_log_rng(1)",
        "categorical_logit_rng(log(p))", "binomial_rng(10, 0.3)",
        "neg_binomial_rng(2, 1)", "neg_binomial_2_rng(3, 2)",
        "neg_binomial_2_log_rng(1, 2)", "beta_binomial_rng(10, 2, 3)",
        "weibull_rng(1.5, 2)", "von_mises_rng(0.5, 2)", "gumbel_rng(0, 1)",
        "chi_square_rng(3)", "inv_chi_square_rng(3)",
        "scaled_inv_chi_square_rng(3, 1)", "rayleigh_rng(1)",
        "frechet_rng(2, 1)", "dirichlet_rng(rep_vector(2, 3))",
        "multi_normal_rng(rep_vector(0, 3), S)",
        "multi_normal_cholesky_rng(rep_vector(0, 3), cholesky_decompose(S))",
        "lkj_corr_cholesky_rng(3, 2)", "lkj_corr_rng(3, 2)",
        "categorical_rng(p)", "std_normal_rng()",
        "bernoulli_logit_glm_rng(rep_vector(0.5, 3), 0.2, rep_vector(0.1, 3))",
        "poisson_log_glm_rng(rep_vector(0.5, 3), 0.2, rep_vector(0.1, 3))",
        "normal_id_glm_rng(rep_vector(0.5, 3), 0.2, rep_vector(0.1, 3), 2)",
        "ordered_logistic_rng(0.3, cumulative_sum(rep_vector(1, 2)))",
        "ordered_probit_rng(0.3, cumulative_sum(rep_vector(1, 2)))",
    };
    size_t n = sizeof calls / sizeof calls[0];
    char text[4096];
    size_t used = (size_t)snprintf(
        text, sizeof text,
        "data { S : cov_matrix[3]  p : simplex[3] }\n"
        "param { z : real }\nprior { z ~ normal(0, 1) }\ngenerated {\n");
    for (size_t k = 0; k < n; k++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "  g%zu = %s\n", k, calls[k]);
    snprintf(text + used, sizeof text - used, "}\n");
    for (size_t d = 0; d < DRIFT_N_DISTS; d++) {
        char want[64];
        snprintf(want, sizeof want, "%s_rng(", drift_dists[d].name);
        size_t k = 0;
        while (k < n && strncmp(calls[k], want, strlen(want)))
            k++;
        if (k == n)
            fail_msg("distribution %s has no _rng call here",
                     drift_dists[d].name);
    }
    const char *data[] = {
        "json:{\"S\": [[2, 0.5, 0.3], [0.5, 1.5, -0.2], [0.3, -0.2, 1.0]],"
        " \"p\": [0.2, 0.3, 0.5]}",
        NULL};
    lt_model lm;
    lt_open_ok(&lm, text, data, NULL, 0);
    const drift_model *m = &lm.m;
    double *out = malloc(m->n_gen * sizeof *out);
    assert_non_null(out);
    void *ws = m->workspace_new(m->self, 1);
    double theta = 0;
    drift_err e;
    for (uint64_t it = 1; it <= 200; it++) {
        assert_int_equal(m->generate(m->self, ws, &theta, it, 1, out, &e), 0);
        for (size_t k = 0; k < n; k++) {
            char name[32];
            snprintf(name, sizeof name, "g%zu", k);
            const drift_dist *d = NULL;
            for (size_t j = 0; j < DRIFT_N_DISTS; j++)
                if (!strncmp(calls[k], drift_dists[j].name,
                             strlen(drift_dists[j].name)) &&
                    !strncmp(calls[k] + strlen(drift_dists[j].name), "_rng(",
                             5))
                    d = &drift_dists[j];
            assert_non_null(d);
            if (d->id == DRIFT_D_DIRICHLET) {
                size_t i = gen_index(m, "g30.1");
                double t = out[i] + out[i + 1] + out[i + 2];
                assert_true(fabs(t - 1) < 1e-12 && out[i] > 0 &&
                            out[i + 1] > 0 && out[i + 2] > 0);
                continue;
            }
            if (d->id == DRIFT_D_LKJ_CORR || d->id == DRIFT_D_LKJ_CORR_CHOLESKY ||
                d->id == DRIFT_D_MULTI_NORMAL ||
                d->id == DRIFT_D_MULTI_NORMAL_CHOLESKY) {
                char first[40];
                snprintf(first, sizeof first, "%s.1%s", name,
                         d->id == DRIFT_D_LKJ_CORR ||
                                 d->id == DRIFT_D_LKJ_CORR_CHOLESKY
                             ? ".1"
                             : "");
                size_t i = gen_index(m, first);
                size_t len = d->id == DRIFT_D_LKJ_CORR ||
                                     d->id == DRIFT_D_LKJ_CORR_CHOLESKY
                                 ? 9
                                 : 3;
                for (size_t j = 0; j < len; j++)
                    assert_true(isfinite(out[i + j]));
                if (d->id == DRIFT_D_LKJ_CORR) /* unit diagonal, symmetric */
                    assert_true(fabs(out[i] - 1) < 1e-12 &&
                                fabs(out[i + 4] - 1) < 1e-12 &&
                                fabs(out[i + 8] - 1) < 1e-12 &&
                                fabs(out[i + 1] - out[i + 3]) < 1e-12 &&
                                fabs(out[i + 2] - out[i + 6]) < 1e-12 &&
                                fabs(out[i + 5] - out[i + 7]) < 1e-12 &&
                                fabs(out[i + 1]) < 1);
                if (d->id == DRIFT_D_LKJ_CORR_CHOLESKY) /* rows of length 1 */
                    for (size_t r = 0; r < 3; r++) {
                        double l2 = 0;
                        for (size_t c = 0; c < 3; c++)
                            l2 += out[i + r + 3 * c] * out[i + r + 3 * c];
                        assert_true(fabs(l2 - 1) < 1e-12);
                        assert_true(r == 2 || out[i + r + 3 * (r + 1)] == 0);
                    }
                continue;
            }
            double x = out[gen_index(m, name)];
            if (!isfinite(x))
                fail_msg("%s: %g", calls[k], x);
            if (d->discrete && x != floor(x))
                fail_msg("%s: %g is not an int", calls[k], x);
            if (d->discrete && x < 0)
                fail_msg("%s: %g is negative", calls[k], x);
            if ((d->support == DRIFT_SUP_POSITIVE && !(x > 0)) ||
                (d->support == DRIFT_SUP_NONNEG && !(x >= 0)) ||
                (d->support == DRIFT_SUP_UNIT && !(x > 0 && x < 1)) ||
                (d->support == DRIFT_SUP_BINARY && !(x == 0 || x == 1)) ||
                (d->support == DRIFT_SUP_CATEGORY && !(x >= 1 && x <= 3)))
                fail_msg("%s: %g is outside the support", calls[k], x);
        }
    }
    free(out);
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

/* Extreme but legal arguments: von Mises with a huge concentration
 * (Best and Fisher's loop never accepted past about 1e32) and beta with
 * shapes so small that both gamma draws underflow in logs (NaN) give
 * finite draws of the right law, at once. */
static void test_extreme_arguments(void **state)
{
    (void)state;
    alarm(60); /* a hang is a failure, not a stalled suite */
    drift_rand r;
    drift_rand_seed(&r, 5);
    const double kappas[] = {1e9, 1e20, 1e40, 1e300};
    for (size_t k = 0; k < 4; k++) {
        double a[2] = {0.0, kappas[k]}, s = 0, ss = 0;
        for (int i = 0; i < 20000; i++) {
            double x = drift_rand_dist(&r, DRIFT_D_VON_MISES, a);
            assert_true(isfinite(x));
            s += x;
            ss += x * x;
        }
        double sd = sqrt(ss / 20000), want = 1 / sqrt(kappas[k]);
        assert_true(fabs(sd / want - 1) < 0.05);
        assert_true(fabs(s / 20000) < 5 * want / sqrt(20000.0));
    }
    double shapes[2][2] = {{1e-320, 1e-320}, {1e-320, 3e-320}};
    for (size_t k = 0; k < 2; k++) {
        int ones = 0;
        for (int i = 0; i < 20000; i++) {
            double x = drift_rand_dist(&r, DRIFT_D_BETA, shapes[k]);
            assert_true(x == 0 || x == 1);
            ones += x == 1;
        }
        double p = shapes[k][0] / (shapes[k][0] + shapes[k][1]);
        assert_true(fabs(ones / 20000.0 - p) <
                    5 * sqrt(p * (1 - p) / 20000));
    }
}

/* A draw that cannot be represented (past a double's range, or a count
 * whose Poisson rate is 2^30 or more, where Stan's _rng functions stop)
 * is an error naming the function and its arguments, never an inf or
 * NaN in the output (a multivariate draw names the element); draws that
 * can be represented (tiny shapes whose gamma draws underflow, bounds far
 * apart) come out finite.  Each call
 * in its own model, 200 draws; "must" says it errs within them. */
static void test_unrepresentable_draws(void **state)
{
    (void)state;
    static const struct {
        const char *call, *needle;
        int must;
    } cases[] = {
        {"student_t_rng(1e-300, 0, 1)", "overflows a double", 1},
        {"student_t_rng(0.0015, 0, 1)", "overflows a double", 0},
        {"poisson_rng(1e+300)", "must be less than 1.07374e+09", 1},
        {"poisson_rng(1e9)", "", 0},
        {"poisson_log_rng(800)", "must be less than 20.7944", 1},
        {"neg_binomial_2_rng(1e+10, 1)", "must be less than that", 1},
        {"neg_binomial_2_rng(1e+300, 1e-300)", "must be less than that", 0},
        {"neg_binomial_2_log_rng(700, 1e-300)", "must be less than that", 0},
        {"neg_binomial_rng(1e-300, 1e-300)", "must be less than that", 0},
        {"neg_binomial_rng(1, 1e-300)", "must be less than that", 1},
        {"exponential_rng(1e-310)", "overflows a double", 1},
        {"inv_gamma_rng(1e-300, 1)", "overflows a double", 1},
        {"inv_chi_square_rng(1e-300)", "overflows a double", 1},
        {"scaled_inv_chi_square_rng(1e-300, 1)", "overflows a double", 1},
        {"gamma_rng(2, 1e-310)", "overflows a double", 1},
        {"gamma_rng(1e-300, 1)", "", 0},
        {"chi_square_rng(1.7e+308)", "overflows a double", 0},
        {"normal_rng(0, 1e+308)", "overflows a double", 0},
        {"cauchy_rng(0, 1e+308)", "overflows a double", 0},
        {"lognormal_rng(0, 1e+300)", "overflows a double", 1},
        {"weibull_rng(1e-300, 1)", "overflows a double", 1},
        {"frechet_rng(1e-300, 1)", "overflows a double", 1},
        {"double_exponential_rng(0, 1e+308)", "overflows a double", 0},
        {"logistic_rng(0, 1e+308)", "overflows a double", 0},
        {"gumbel_rng(0, 1e+308)", "overflows a double", 0},
        {"rayleigh_rng(1e+308)", "overflows a double", 0},
        {"uniform_rng(-1e+308, 1e+308)", "", 0},
        {"binomial_rng(2000000000, 0.5)", "", 0},
        {"dirichlet_rng(rep_vector(1e-3, 3))", "", 0},
        {"dirichlet_rng(rep_vector(1e-310, 3))", "too small", 1},
        {"lkj_corr_rng(3, 1e+300)", "", 0},
        {"multi_normal_cholesky_rng(rep_vector(0, 2), "
         "diag_matrix(rep_vector(1e+308, 2)) * 10)",
         "the arguments are not finite, or put the draw past", 1},
        {"multi_normal_rng(rep_vector(1e+308, 2), "
         "diag_matrix(rep_vector(1e+300, 2)))",
         "the arguments are not finite, or put the draw past", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char text[512];
        snprintf(text, sizeof text,
                 "param { z : real }\nprior { z ~ normal(0, 1) }\n"
                 "generated { g = %s }\n",
                 cases[c].call);
        lt_model lm;
        lt_open_ok(&lm, text, NULL, NULL, 0);
        const drift_model *m = &lm.m;
        double *out = malloc(m->n_gen * sizeof *out);
        assert_non_null(out);
        void *ws = m->workspace_new(m->self, 1);
        double theta = 0;
        int erred = 0;
        char name[64];
        snprintf(name, sizeof name, "%.*s",
                 (int)(strchr(cases[c].call, '(') - cases[c].call),
                 cases[c].call);
        for (uint64_t it = 1; it <= 200 && !erred; it++) {
            drift_err e = {{0}};
            if (m->generate(m->self, ws, &theta, it, 1, out, &e)) {
                if (!cases[c].needle[0] || !strstr(e.msg, cases[c].needle) ||
                    !strstr(e.msg, name))
                    fail_msg("%s: the error '%s' does not name the function "
                             "or say '%s'",
                             cases[c].call, e.msg, cases[c].needle);
                /* The arguments, as Stan's messages give them. */
                if (strcmp(name, "dirichlet_rng") &&
                    strncmp(name, "multi_normal", 12) &&
                    !strstr(e.msg, cases[c].call))
                    fail_msg("%s: the error '%s' does not give the "
                             "arguments",
                             cases[c].call, e.msg);
                erred = 1;
                continue;
            }
            for (size_t k = 0; k < m->n_gen; k++)
                if (!isfinite(out[k]))
                    fail_msg("%s: draw %llu wrote %g", cases[c].call,
                             (unsigned long long)it, out[k]);
        }
        if (cases[c].must && !erred)
            fail_msg("%s: 200 draws and no error", cases[c].call);
        free(out);
        m->workspace_free(m->self, ws);
        lt_close(&lm);
    }
}

static int no_alarm(void **state)
{
    (void)state;
    alarm(0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cdfs),
        cmocka_unit_test(test_von_mises),
        cmocka_unit_test_teardown(test_extreme_arguments, no_alarm),
        cmocka_unit_test(test_unrepresentable_draws),
        cmocka_unit_test(test_lkj),
        cmocka_unit_test(test_categorical_and_seeds),
        cmocka_unit_test(test_generated_draws),
        cmocka_unit_test(test_every_rng),
        cmocka_unit_test(test_ordered_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
