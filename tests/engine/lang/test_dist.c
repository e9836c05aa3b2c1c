/* test_dist.c: the distributions' log densities against R's d* functions
 * (or a closed form where base R has none), their partial derivatives in
 * every argument against central finite differences, digamma against R,
 * and each distribution through the language (gradient battery of
 * langtest.c with every continuous argument a parameter); every entry of
 * the distribution table as an expression name_lpdf(y | ...) /
 * name_lpmf, equal in value and gradient to its `~` statement.
 *
 * The reference values were printed by R 4.x with options(digits = 17):
 *   normal:            dnorm(y, mu, sigma, log = TRUE)
 *   student_t:         dt((y - mu) / sigma, nu, log = TRUE) - log(sigma)
 *   cauchy:            dcauchy(y, mu, sigma, log = TRUE)
 *   double_exponential: log(0.5 / sigma * exp(-abs(y - mu) / sigma))
 *   logistic:          dlogis(y, mu, sigma, log = TRUE)
 *   lognormal:         dlnorm(y, mu, sigma, log = TRUE)
 *   exponential:       dexp(y, beta, log = TRUE)
 *   gamma:             dgamma(y, shape = alpha, rate = beta, log = TRUE)
 *   inv_gamma:         dgamma(1 / y, alpha, rate = beta, log = TRUE)
 *                        - 2 * log(y)
 *   beta:              dbeta(y, alpha, beta, log = TRUE)
 *   uniform:           dunif(y, alpha, beta, log = TRUE)
 *   bernoulli:         dbinom(y, 1, theta, log = TRUE)
 *   bernoulli_logit:   dbinom(y, 1, plogis(alpha), log = TRUE)
 *   binomial_logit:    dbinom(y, n, plogis(alpha), log = TRUE)
 *   poisson:           dpois(y, lambda, log = TRUE)
 *   poisson_log:       dpois(y, exp(alpha), log = TRUE)
 *   categorical_logit: eta <- c(0.3, -1.2, 2.0, 0.5);
 *                      log(exp(eta[y]) / sum(exp(eta)))
 *   digamma:           digamma(x)
 *   binomial:          dbinom(y, n, theta, log = TRUE)
 *   neg_binomial:      dnbinom(y, size = alpha, prob = beta / (1 + beta),
 *                             log = TRUE)
 *   neg_binomial_2:    dnbinom(y, mu = mu, size = phi, log = TRUE)
 *   neg_binomial_2_log: dnbinom(y, mu = exp(eta), size = phi, log = TRUE)
 *   beta_binomial:     lchoose(N, y) + lbeta(y + a, N - y + b) - lbeta(a, b)
 *   weibull:           dweibull(y, shape = alpha, scale = sigma, log = TRUE)
 *   von_mises:         kappa * cos(y - mu) - log(2 * pi)
 *                        - log(besselI(kappa, 0, expon.scaled = TRUE)) - kappa
 *   gumbel:            z <- (y - mu) / beta; -log(beta) - z - exp(-z)
 *   chi_square:        dchisq(y, nu, log = TRUE)
 *   inv_chi_square:    dchisq(1 / y, nu, log = TRUE) - 2 * log(y)
 *   scaled_inv_chi_square: dgamma(1 / y, nu / 2, rate = nu * s^2 / 2,
 *                             log = TRUE) - 2 * log(y)
 *   rayleigh:          log(y) - 2 * log(sigma) - y^2 / (2 * sigma^2)
 *   frechet:           dweibull(1 / y, shape = alpha, scale = 1 / sigma,
 *                             log = TRUE) - 2 * log(y)
 * bernoulli_logit(0 | 40) is the closed form -log1p(exp(40)) = -40 to
 * double precision (R's dbinom gives -Inf there, as plogis(40) rounds
 * to 1). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/dist.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "langtest.h"

typedef struct ref {
    drift_dist_id id;
    double a[4];
    double lp;
} ref;

static const ref refs[] = {
    {DRIFT_D_NORMAL, {0.3, -0.2, 1.7}, -1.4928193794225524},
    {DRIFT_D_NORMAL, {-4.1, 2.5, 0.6}, -60.908112909438685},
    {DRIFT_D_NORMAL, {10, 10, 1e-3}, 5.9888167457774637},
    {DRIFT_D_STUDENT_T, {0.3, 3.5, -0.2, 1.7}, -1.5750362116747492},
    {DRIFT_D_STUDENT_T, {-4.1, 1, 2.5, 0.6}, -5.4379253068166662},
    {DRIFT_D_STUDENT_T, {2, 30, 1, 2}, -1.7490489495665646},
    {DRIFT_D_CAUCHY, {0.3, -0.2, 1.7}, -1.7583244347073916},
    {DRIFT_D_CAUCHY, {-4.1, 2.5, 0.6}, -5.4379253068166662},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {0.3, -0.2, 1.7}, -1.5178930786809393},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {-4.1, 2.5, 0.6}, -11.182321556793955},
    {DRIFT_D_LOGISTIC, {0.3, -0.2, 1.7}, -1.9384714069068907},
    {DRIFT_D_LOGISTIC, {-4.1, 2.5, 0.6}, -10.489207779356645},
    {DRIFT_D_LOGNORMAL, {0.3, -0.2, 1.7}, -0.419981763993863},
    {DRIFT_D_LOGNORMAL, {4.1, 2.5, 0.6}, -3.4662517879110739},
    {DRIFT_D_EXPONENTIAL, {0.3, 1.7}, 0.020628251062170366},
    {DRIFT_D_EXPONENTIAL, {4.1, 0.6}, -2.9708256237659905},
    {DRIFT_D_EXPONENTIAL, {0, 2}, 0.69314718055994529},
    {DRIFT_D_GAMMA, {0.3, 2.2, 1.7}, -0.88433267964498741},
    {DRIFT_D_GAMMA, {4.1, 0.6, 0.3}, -2.915012330148901},
    {DRIFT_D_INV_GAMMA, {0.3, 2.2, 1.7}, -0.74351900727753506},
    {DRIFT_D_INV_GAMMA, {4.1, 0.6, 0.3}, -3.4513674303085331},
    {DRIFT_D_BETA, {0.3, 2.2, 1.7}, -0.027999248090068818},
    {DRIFT_D_BETA, {0.91, 0.6, 0.3}, 0.29563058469223935},
    {DRIFT_D_UNIFORM, {0.3, -0.2, 1.7}, -0.64185388617239469},
    {DRIFT_D_UNIFORM, {-4.1, -5, 2.5}, -2.0149030205422647},
    {DRIFT_D_BERNOULLI, {1, 0.3}, -1.2039728043259361},
    {DRIFT_D_BERNOULLI, {0, 0.3}, -0.35667494393873245},
    {DRIFT_D_BERNOULLI_LOGIT, {1, 0.3}, -0.55435524446852702},
    {DRIFT_D_BERNOULLI_LOGIT, {0, -2.5}, -0.078889734292549613},
    {DRIFT_D_BERNOULLI_LOGIT, {1, -40}, -40},
    {DRIFT_D_BERNOULLI_LOGIT, {0, 40}, -40},
    {DRIFT_D_BINOMIAL_LOGIT, {3, 10, 0.3}, -2.8560607019032256},
    {DRIFT_D_BINOMIAL_LOGIT, {0, 7, -2.5}, -0.55222814004784737},
    {DRIFT_D_BINOMIAL_LOGIT, {7, 7, 1.1}, -2.0113472758080149},
    {DRIFT_D_POISSON, {3, 2.2}, -1.6263873881352446},
    {DRIFT_D_POISSON, {0, 0.6}, -0.59999999999999998},
    {DRIFT_D_POISSON, {17, 4.5}, -12.435757704940229},
    {DRIFT_D_POISSON_LOG, {3, 0.3}, -2.2416182768040582},
    {DRIFT_D_POISSON_LOG, {0, -2.5}, -0.0820849986238988},
    {DRIFT_D_POISSON_LOG, {17, 2}, -6.8941295490675385},
    {DRIFT_D_BINOMIAL, {3, 10, 0.3}, -1.3211512777668888},
    {DRIFT_D_BINOMIAL, {0, 7, 0.12}, -0.89483360056919414},
    {DRIFT_D_BINOMIAL, {7, 7, 0.9}, -0.73752360960478403},
    {DRIFT_D_NEG_BINOMIAL, {4, 2.5, 1.5}, -2.7424016278753198},
    {DRIFT_D_NEG_BINOMIAL, {0, 0.7, 3}, -0.20137745071624663},
    {DRIFT_D_NEG_BINOMIAL_2, {4, 3.2, 1.7}, -2.3022478810453988},
    {DRIFT_D_NEG_BINOMIAL_2, {0, 0.4, 12}, -0.39347787387589039},
    {DRIFT_D_NEG_BINOMIAL_2, {17, 20, 1e4}, -2.5780249455557991},
    {DRIFT_D_NEG_BINOMIAL_2_LOG, {4, 1.1, 1.7}, -2.3223669249284682},
    {DRIFT_D_NEG_BINOMIAL_2_LOG, {9, -0.5, 0.3}, -6.5941819564921493},
    {DRIFT_D_BETA_BINOMIAL, {3, 10, 2.2, 1.7}, -2.386908994061864},
    {DRIFT_D_BETA_BINOMIAL, {0, 5, 0.6, 3.1}, -0.59967617830507614},
    {DRIFT_D_BETA_BINOMIAL, {8, 8, 1.5, 0.4}, -0.80604852171044927},
    {DRIFT_D_WEIBULL, {1.3, 2.2, 1.7}, -0.61831476237760075},
    {DRIFT_D_WEIBULL, {4.1, 0.6, 0.3}, -5.1545647964013588},
    {DRIFT_D_VON_MISES, {0.3, -0.2, 1.7}, -0.96869263011175533},
    {DRIFT_D_VON_MISES, {2.5, 1, 0.05}, -1.8349651086968282},
    {DRIFT_D_VON_MISES, {-1, -1.2, 45}, 0.084579332139391283},
    {DRIFT_D_VON_MISES, {3, 0, 300}, -595.06521363954516},
    {DRIFT_D_GUMBEL, {0.3, -0.2, 1.7}, -1.5699347151344742},
    {DRIFT_D_GUMBEL, {-4.1, 2.5, 0.6}, -59862.630889574051},
    {DRIFT_D_CHI_SQUARE, {1.3, 2.2}, -1.336353030909351},
    {DRIFT_D_CHI_SQUARE, {4.1, 7}, -2.1495213000312279},
    {DRIFT_D_INV_CHI_SQUARE, {1.3, 2.2}, -1.6481697973532161},
    {DRIFT_D_INV_CHI_SQUARE, {0.2, 7}, 1.1154818716465686},
    {DRIFT_D_SCALED_INV_CHI_SQUARE, {1.3, 2.2, 0.8}, -1.4287055907668573},
    {DRIFT_D_SCALED_INV_CHI_SQUARE, {4.1, 7, 2.5}, -2.0870753248489171},
    {DRIFT_D_RAYLEIGH, {1.3, 0.8}, -0.6116611329040893},
    {DRIFT_D_RAYLEIGH, {4.1, 2.5}, -1.7663944900380482},
    {DRIFT_D_FRECHET, {1.3, 2.2, 1.7}, -0.68804068637271354},
    {DRIFT_D_FRECHET, {0.4, 0.6, 3}, -1.7355309928779066},
};

static void test_against_r(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
        double d[4];
        double lp = drift_dist_lpdf(refs[k].id, refs[k].a, d);
        if (!(fabs(lp - refs[k].lp) <= 1e-12 * (1 + fabs(refs[k].lp))))
            fail_msg("%s case %zu: %.17g, R says %.17g",
                     drift_dists[refs[k].id].name, k, lp, refs[k].lp);
    }
}

static void test_categorical_against_r(void **state)
{
    (void)state;
    double eta[4] = {0.3, -1.2, 2.0, 0.5}, y[3] = {1, 3, 4}, out[3];
    double want[3] = {-2.0691993073690185, -0.36919930736901835,
                      -1.8691993073690183};
    double soft[12];
    size_t bad;
    assert_int_equal(drift_dist_catlogit(3, 4, y, 1, eta, 0, out, soft, &bad),
                     0);
    for (int k = 0; k < 3; k++)
        assert_true(fabs(out[k] - want[k]) < 1e-13);
    double s = 0;
    for (int j = 0; j < 4; j++)
        s += soft[j];
    assert_true(fabs(s - 1) < 1e-15);
    double y_bad[1] = {5};
    assert_int_not_equal(
        drift_dist_catlogit(1, 4, y_bad, 1, eta, 0, out, NULL, &bad), 0);
}

static void test_digamma_against_r(void **state)
{
    (void)state;
    static const double x[] = {0.1, 1, 1.4616321449683623, 2.2, 5.9, 6, 30,
                               1e5, -0.5, -2.7};
    static const double want[] = {-10.423754940411076, -0.57721566490153231,
                                  4.4408920985006262e-16, 0.54429343674114494,
                                  1.6878194259079584, 1.7061176684318007,
                                  3.3844381326855251, 11.512920464961896,
                                  0.036489973978577089, -1.1153471291406851};
    for (size_t k = 0; k < sizeof x / sizeof x[0]; k++) {
        double got = drift_digamma(x[k]);
        if (!(fabs(got - want[k]) < 1e-14 * (1 + fabs(want[k]))))
            fail_msg("digamma(%g) = %.17g, R says %.17g", x[k], got, want[k]);
    }
    assert_true(isnan(drift_digamma(-2)));
}

/* Every partial of every continuous argument against central
 * differences, at the reference points. */
static void test_partials(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
        const ref *r = &refs[k];
        const drift_dist *di = &drift_dists[r->id];
        double d[4];
        drift_dist_lpdf(r->id, r->a, d);
        for (int j = 0; j <= di->n_args; j++) {
            if ((j == 0 && di->discrete) || (j > 0 && di->arg_int[j - 1]))
                continue;
            if (r->id == DRIFT_D_UNIFORM && j == 0)
                continue; /* flat in y */
            if (r->id == DRIFT_D_DOUBLE_EXPONENTIAL && j < 2 &&
                r->a[0] == r->a[1])
                continue;
            double a[4], h = 1e-6 * fmax(1, fabs(r->a[j]));
            memcpy(a, r->a, sizeof a);
            if (r->id == DRIFT_D_NORMAL && r->a[2] < 0.01)
                h = 1e-8;
            if (r->id == DRIFT_D_EXPONENTIAL && j == 0 && r->a[0] == 0)
                continue; /* the edge of the support */
            a[j] = r->a[j] + h;
            double up = drift_dist_lpdf(r->id, a, NULL);
            a[j] = r->a[j] - h;
            double dn = drift_dist_lpdf(r->id, a, NULL);
            double fd = (up - dn) / (2 * h);
            if (!(fabs(fd - d[j]) < 1e-6 * fmax(1, fabs(d[j]))))
                fail_msg("%s case %zu, partial %d: %.12g vs difference %.12g",
                         di->name, k, j, d[j], fd);
        }
    }
}

static void test_domains(void **state)
{
    (void)state;
    static const struct {
        drift_dist_id id;
        double a[4];
        const char *why;
    } bad[] = {
        {DRIFT_D_NORMAL, {0, 0, -1}, "the scale sigma must be positive"},
        {DRIFT_D_STUDENT_T, {0, 0, 0, 1}, "degrees of freedom"},
        {DRIFT_D_GAMMA, {1, -1, 1}, "alpha must be positive"},
        {DRIFT_D_GAMMA, {-1, 1, 1}, "the outcome must be positive"},
        {DRIFT_D_BETA, {1.5, 1, 1}, "strictly between 0 and 1"},
        {DRIFT_D_UNIFORM, {3, 0, 1}, "must lie in [0, 1]"},
        {DRIFT_D_BERNOULLI, {1, 1.5}, "probability theta"},
        {DRIFT_D_BERNOULLI_LOGIT, {2, 0}, "0 or 1"},
        {DRIFT_D_BINOMIAL_LOGIT, {8, 7, 0}, "from 0 to n = 7"},
        {DRIFT_D_POISSON, {1.5, 2}, "non-negative integer"},
        {DRIFT_D_EXPONENTIAL, {1, 0}, "rate beta"},
        {DRIFT_D_BINOMIAL, {3, 10, 1.5}, "probability theta"},
        {DRIFT_D_BINOMIAL, {11, 10, 0.5}, "from 0 to n = 10"},
        {DRIFT_D_NEG_BINOMIAL_2, {3, -1, 2}, "mu must be positive"},
        {DRIFT_D_NEG_BINOMIAL_2_LOG, {3, 1, 0}, "phi must be positive"},
        {DRIFT_D_BETA_BINOMIAL, {3, 2, 1, 1}, "from 0 to N = 2"},
        {DRIFT_D_BETA_BINOMIAL, {1, 2, 0, 1}, "alpha must be positive"},
        {DRIFT_D_WEIBULL, {-1, 1, 1}, "non-negative"},
        {DRIFT_D_VON_MISES, {0, 0, -1}, "concentration kappa"},
        {DRIFT_D_SCALED_INV_CHI_SQUARE, {1, 2, -1}, "s must be positive"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        double lp = drift_dist_lpdf(bad[k].id, bad[k].a, NULL);
        assert_true(isnan(lp));
        char why[200];
        drift_dist_explain(bad[k].id, bad[k].a, why, sizeof why);
        if (!strstr(why, bad[k].why))
            fail_msg("%s: '%s' lacks '%s'", drift_dists[bad[k].id].name, why,
                     bad[k].why);
    }
}

/* The vectorised block agrees with the element function and broadcasts
 * scalars. */
static void test_rows_block(void **state)
{
    (void)state;
    double y[6] = {0.1, -0.4, 1.2, 2.0, -1.1, 0.3}, mu = 0.2;
    double sig[3] = {0.5, 1.0, 2.0};
    const double *in[3] = {y, &mu, sig};
    size_t ld[3] = {3, 0, 0}, st[3] = {1, 0, 1};
    double out[2], p0[6], p1[6], p2[6];
    double *part[3] = {p0, p1, p2};
    size_t br, be;
    assert_int_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 3, 3, in, ld, st, out,
                                     part, &br, &be),
                     0);
    for (int r = 0; r < 2; r++) {
        double s = 0;
        for (int j = 0; j < 3; j++) {
            double a[3] = {y[r * 3 + j], mu, sig[j]}, d[3];
            s += drift_dist_lpdf(DRIFT_D_NORMAL, a, d);
            assert_true(fabs(p1[r * 3 + j] - d[1]) < 1e-15);
            assert_true(fabs(p2[r * 3 + j] - d[2]) < 1e-15);
        }
        assert_true(fabs(out[r] - s) < 1e-13);
    }
    sig[2] = -1;
    assert_int_not_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 3, 3, in, ld, st,
                                         out, NULL, &br, &be),
                         0);
    assert_int_equal(br, 0);
    assert_int_equal(be, 2);
}

/* The shared-scale normal (a prior over a long vector: mu and sigma one
 * per row) agrees with the element function, partials included, and
 * finds the element at fault through the general loop. */
static void test_rows_shared_normal(void **state)
{
    (void)state;
    double y[8] = {0.1, -0.4, 1.2, 2.0, -1.1, 0.3, 5.0, -7.5};
    double mu[2] = {0.2, -1.0}, sig[2] = {0.7, 3.0};
    const double *in[3] = {y, mu, sig};
    size_t ld[3] = {4, 1, 1}, st[3] = {1, 0, 0};
    double out[2], p0[8], p1[8], p2[8];
    double *part[3] = {p0, p1, p2};
    size_t br = 9, be = 9;
    assert_int_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 4, 3, in, ld, st, out,
                                     part, &br, &be),
                     0);
    for (int r = 0; r < 2; r++) {
        double s = 0;
        for (int j = 0; j < 4; j++) {
            double a[3] = {y[r * 4 + j], mu[r], sig[r]}, d[3];
            s += drift_dist_lpdf(DRIFT_D_NORMAL, a, d);
            assert_true(fabs(p0[r * 4 + j] - d[0]) < 1e-15);
            assert_true(fabs(p1[r * 4 + j] - d[1]) < 1e-15);
            assert_true(fabs(p2[r * 4 + j] - d[2]) < 1e-15);
        }
        assert_true(fabs(out[r] - s) < 1e-13 * fabs(s));
    }
    /* Only the outcome's partials asked for. */
    double *only[3] = {p0, NULL, NULL};
    memset(p1, 0, sizeof p1);
    assert_int_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 4, 3, in, ld, st, out,
                                     only, &br, &be),
                     0);
    for (int k = 0; k < 8; k++)
        assert_true(p1[k] == 0);
    sig[1] = 0;
    assert_int_not_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 4, 3, in, ld, st,
                                         out, NULL, &br, &be),
                         0);
    assert_int_equal(br, 1);
    assert_int_equal(be, 0);
    sig[1] = 3.0;
    y[6] = NAN;
    assert_int_not_equal(drift_dist_rows(DRIFT_D_NORMAL, 2, 4, 3, in, ld, st,
                                         out, part, &br, &be),
                         0);
    assert_int_equal(br, 1);
    assert_int_equal(be, 2);
}

/* ---- through the language ------------------------------------------------------ */

static double gen_cont(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    (void)c;
    return 0.05 + 0.9 * drift_rng_uniform(r);
}

static double gen_count(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    if (c == 1)
        return 8;
    return (double)drift_rng_below(r, c == 2 ? 4 : 2) + (c == 2 ? 1 : 0);
}

static char *csv_text(const char *header, size_t ncols, size_t n,
                      double (*gen)(size_t, size_t, drift_rng *),
                      uint64_t seed)
{
    drift_rng r;
    drift_rng_seed(&r, seed, 0);
    size_t cap = 64 + strlen(header) + n * ncols * 32;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t used = (size_t)snprintf(buf, cap, "csv:%s\n", header);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < ncols; c++)
            used += (size_t)snprintf(buf + used, cap - used, "%.17g%s",
                                     gen(i, c, &r), c + 1 < ncols ? "," : "\n");
    return buf;
}

/* Each distribution with its continuous arguments as parameters, in the
 * datum block over data and in the prior over a parameter outcome. */
static void test_through_language(void **state)
{
    (void)state;
    char *cont = csv_text("y", 1, 12, gen_cont, 41);
    /* k: 0/1 outcomes; n = 8 trials; c: a category 1..4 */
    char *cnt = csv_text("k,n,c", 3, 12, gen_count, 42);
    static const char *const models[] = {
        /* continuous outcomes in (0, 1): every distribution applies */
        "param { mu : real  s : real<lower=0>  t : real<lower=-1, upper=0> }\n"
        "prior { mu ~ normal(0.3, 1.5)  s ~ lognormal(-0.5, 0.7) }\n"
        "datum { y ~ normal(mu, s)  y ~ cauchy(mu, s)\n"
        "        y ~ double_exponential(mu, s)  y ~ logistic(mu, s)\n"
        "        y ~ lognormal(mu, s)  y ~ student_t(s + 1, mu, s) }\n",
        "param { a : real<lower=0>  b : real<lower=0>  lo : real<upper=0> }\n"
        "prior { a ~ gamma(2, 1)  b ~ inv_gamma(3, 2)  lo ~ normal(-1, 1) }\n"
        "datum { y ~ exponential(a)  y ~ gamma(a, b)  y ~ inv_gamma(a, b)\n"
        "        y ~ beta(a, b)  y ~ uniform(lo, 1 + a) }\n",
        /* parameters as outcomes, in the prior */
        "param { x : real<lower=0, upper=1>  z : real  nu : real<lower=1> }\n"
        "prior { x ~ beta(2, 3)  z ~ student_t(nu, 0.5, 2)  nu ~ gamma(3, 0.5)\n"
        "        z ~ logistic(0, 2)  z ~ double_exponential(0.1, 1.5)\n"
        "        z ~ cauchy(-0.2, 3) }\n"
        "datum { y ~ uniform(0, 1 + x * x) }\n",
    };
    static const char *const discrete[] = {
        "param { th : real<lower=0, upper=1>  al : real  lam : real<lower=0> }\n"
        "prior { th ~ beta(1.5, 1.5)  al ~ normal(0, 1)  lam ~ gamma(2, 2) }\n"
        "datum { k ~ bernoulli(th)  k ~ bernoulli_logit(al)\n"
        "        k ~ binomial_logit(n, al)  n ~ poisson(lam)\n"
        "        c ~ poisson_log(al) }\n",
        "param { eta : vector[4] }\n"
        "prior { eta ~ normal(0, 1) }\n"
        "datum { c ~ categorical_logit(eta) }\n",
        "param { W : matrix[4, 2] }\n"
        "prior { target += -0.5 * squared_norm(W) }\n"
        "datum { c ~ categorical_logit(W * x + 0.1) }\n",
    };
    const char *dc[] = {cont, NULL};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        char text[1024];
        snprintf(text, sizeof text, "rows { y : real }\n%s", models[k]);
        lt_model lm;
        lt_open_ok(&lm, text, dc, NULL, 0);
        lt_check_derivatives(&lm.m, 50 + k, 3, 0.4);
        lt_close(&lm);
    }
    char *cntx = NULL;
    {
        /* The categorical model with predictors needs x columns too. */
        drift_rng r;
        drift_rng_seed(&r, 43, 0);
        size_t cap = 4096;
        cntx = malloc(cap);
        size_t used = (size_t)snprintf(cntx, cap, "csv:k,n,c,x.1,x.2\n");
        for (int i = 0; i < 12; i++)
            used += (size_t)snprintf(cntx + used, cap - used,
                                     "%d,8,%d,%.17g,%.17g\n", i % 2,
                                     1 + (int)drift_rng_below(&r, 4),
                                     drift_rng_normal(&r),
                                     drift_rng_normal(&r));
    }
    for (size_t k = 0; k < sizeof discrete / sizeof discrete[0]; k++) {
        char text[1024];
        snprintf(text, sizeof text, "rows { k : int  n : int  c : int%s }\n%s",
                 k == 2 ? "  x : vector[2]" : "", discrete[k]);
        const char *dd[] = {k == 2 ? cntx : cnt, NULL};
        lt_model lm;
        lt_open_ok(&lm, text, dd, NULL, 0);
        lt_check_derivatives(&lm.m, 60 + k, 3, 0.6);
        lt_close(&lm);
    }
    free(cont);
    free(cnt);
    free(cntx);
}

/* The distributions added for real models, every continuous argument a
 * parameter, through the derivative battery; vectors of arguments
 * (student_t's), an offset through poisson_log. */
static void test_new_through_language(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 44, 0);
    size_t cap = 4096, used = 0;
    char *d = malloc(cap);
    used += (size_t)snprintf(d, cap, "csv:k,n,y,a,E\n");
    for (int i = 0; i < 12; i++)
        used += (size_t)snprintf(d + used, cap - used, "%d,%d,%.17g,%.17g,%.17g\n",
                                 (int)drift_rng_below(&r, 6), 6,
                                 0.2 + 2 * drift_rng_uniform(&r),
                                 -3 + 6 * drift_rng_uniform(&r),
                                 0.5 + drift_rng_uniform(&r));
    static const char *const models[] = {
        "param { th : real<lower=0, upper=1>  mu : real<lower=0>\n"
        "        phi : real<lower=0>  eta : real  al : real<lower=0>\n"
        "        be : real<lower=0> }\n"
        "prior { th ~ beta(2, 2)  mu ~ gamma(2, 1)  phi ~ gamma(2, 1)\n"
        "        eta ~ normal(0, 1)  al ~ gamma(2, 1)  be ~ gamma(2, 1) }\n"
        "datum { k ~ binomial(n, th)  k ~ neg_binomial_2(mu, phi)\n"
        "        k ~ neg_binomial_2_log(eta, phi)  k ~ beta_binomial(n, al, be)\n"
        "        k ~ neg_binomial(al, be)  k ~ poisson_log(log(E) + eta) }\n",
        "param { al : real<lower=0>  s : real<lower=0>  mu : real\n"
        "        ka : real<lower=0>  nu : real<lower=0> }\n"
        "prior { al ~ gamma(3, 2)  s ~ gamma(3, 2)  mu ~ normal(0, 1)\n"
        "        ka ~ gamma(2, 1)  nu ~ gamma(3, 1) }\n"
        "datum { y ~ weibull(al, s)  a ~ von_mises(mu, ka)  y ~ gumbel(mu, s)\n"
        "        y ~ chi_square(nu)  y ~ inv_chi_square(nu)\n"
        "        y ~ scaled_inv_chi_square(nu, s)  y ~ rayleigh(s)\n"
        "        y ~ frechet(al, s) }\n",
        "param { nu : vector<lower=0>[3]  m : vector[3]  s : vector<lower=0>[3] }\n"
        "prior { nu ~ gamma(3, 1)  m ~ normal(0, 1)  s ~ lognormal(0, 1)\n"
        "        m ~ student_t(nu, 0, s) }\n"
        "datum { a ~ student_t(nu[1] + 1, m[2] * y, s[3]) }\n",
    };
    const char *dd[] = {d, NULL};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        char text[1400];
        snprintf(text, sizeof text,
                 "rows { k : int  n : int  y : real  a : real  E : real }\n%s",
                 models[k]);
        lt_model lm;
        lt_open_ok(&lm, text, dd, NULL, 0);
        lt_check_derivatives(&lm.m, 70 + k, 3, 0.5);
        lt_close(&lm);
    }
    free(d);
}

/* Log prior of a model at theta. */
static double prior_at(const char *model, const char *const *data,
                       const double *theta)
{
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    double lp;
    drift_err e;
    if (lm.m.log_prior(lm.m.self, ws, theta, &lp, NULL, &e))
        fail_msg("%s", e.msg);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
    return lp;
}

/* The multivariate distributions over arrays equal the sum over the
 * array's elements, and their gradients pass the battery. */
static void test_multivariate_arrays(void **state)
{
    (void)state;
    const char *data[] = {
        "json:{\"Y\": [[0.1, -0.3, 1.2], [2.0, 0.4, -1.1], [0.5, 0.5, 0.5],"
        " [-1, 0, 1]], \"S\": [[2, 0.5, 0.3], [0.5, 1.5, -0.2],"
        " [0.3, -0.2, 1.0]]}",
        NULL};
    const char *head = "data { Y : array[4] vector[3]  S : matrix[3, 3] }\n"
                       "param { mu : vector[3]  a : vector<lower=0>[4]\n"
                       "        th : array[2] simplex[4]  M : array[4] vector[3] }\n";
    char m1[1024], m2[1024];
    snprintf(m1, sizeof m1,
             "%sprior { target += multi_normal_lpdf(Y | mu, S)\n"
             "        th ~ dirichlet(a)  target += multi_normal_lpdf(Y | M, S) }\n",
             head);
    snprintf(m2, sizeof m2,
             "%sprior { target += multi_normal_lpdf(Y[1] | mu, S)"
             " + multi_normal_lpdf(Y[2] | mu, S)\n"
             "  target += multi_normal_lpdf(Y[3] | mu, S)"
             " + multi_normal_lpdf(Y[4] | mu, S)\n"
             "  th[1] ~ dirichlet(a)  th[2] ~ dirichlet(a)\n"
             "  target += multi_normal_lpdf(Y[1] | M[1], S)"
             " + multi_normal_lpdf(Y[2] | M[2], S)\n"
             "  target += multi_normal_lpdf(Y[3] | M[3], S)"
             " + multi_normal_lpdf(Y[4] | M[4], S) }\n",
             head);
    drift_rng r;
    drift_rng_seed(&r, 3, 0);
    double theta[25];
    for (int k = 0; k < 25; k++)
        theta[k] = 0.7 * drift_rng_normal(&r);
    double a = prior_at(m1, data, theta), b = prior_at(m2, data, theta);
    assert_true(fabs(a - b) < 1e-10 * fabs(a));
    lt_model lm;
    lt_open_ok(&lm, m1, data, NULL, 0);
    lt_check_derivatives(&lm.m, 90, 3, 0.5);
    lt_close(&lm);
}

/* The log likelihood through the language equals R's, summed. */
static void test_language_values(void **state)
{
    (void)state;
    const char *data[] = {"csv:y\n0.3\n-4.1\n", NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "rows { y : real }\n"
               "param { mu : real }\n"
               "prior { mu ~ normal(0, 1) }\n"
               "datum { y ~ normal(mu, 1.7) }\n",
               data, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 2);
    double theta[1] = {-0.2}, lr[2], lp;
    drift_err e;
    drift_rows all = {NULL, 0, 2};
    assert_int_equal(lm.m.log_lik(lm.m.self, ws, theta, &all, lr, NULL, NULL,
                                  NULL, &e),
                     0);
    /* R: dnorm(0.3, -0.2, 1.7, log = TRUE), dnorm(-4.1, -0.2, 1.7,
     * log = TRUE) */
    assert_true(fabs(lr[0] - -1.4928193794225524) < 1e-13);
    assert_true(fabs(lr[1] - -4.0810546735401996) < 1e-13);
    assert_int_equal(lm.m.log_prior(lm.m.self, ws, theta, &lp, NULL, &e), 0);
    /* dnorm(-0.2, 0, 1, log = TRUE) */
    assert_true(fabs(lp - -0.93893853320467267) < 1e-13);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

/* Every distribution of the table is a function of the language,
 * name_lpdf(y | ...) (name_lpmf for the discrete ones), with the value and
 * the gradient of the statement y ~ name(...): one case per entry of
 * drift_dists, so a distribution added without its case fails here. */
static const struct {
    const char *name, *outcome, *args;
} as_expr[] = {
    {"normal", "y", "x[1], exp(x[2])"},
    {"student_t", "y", "exp(x[3]) + 1, x[1], exp(x[2])"},
    {"cauchy", "y", "x[1], exp(x[2])"},
    {"double_exponential", "y", "x[1], exp(x[2])"},
    {"logistic", "y", "x[1], exp(x[2])"},
    {"lognormal", "yp", "x[1], exp(x[2])"},
    {"exponential", "yp", "exp(x[1])"},
    {"gamma", "yp", "exp(x[1]), exp(x[2])"},
    {"inv_gamma", "yp", "exp(x[1]), exp(x[2])"},
    {"beta", "u", "exp(x[1]), exp(x[2])"},
    {"uniform", "u", "x[1] - 5, exp(x[2]) + 1"},
    {"bernoulli", "k", "inv_logit(x[1])"},
    {"bernoulli_logit", "k", "x[1]"},
    {"binomial_logit", "c", "n, x[1]"},
    {"poisson", "c", "exp(x[1])"},
    {"poisson_log", "c", "x[1]"},
    {"categorical_logit", "c", "v .* x"},
    {"binomial", "c", "n, inv_logit(x[1])"},
    {"neg_binomial", "c", "exp(x[1]), exp(x[2])"},
    {"neg_binomial_2", "c", "exp(x[1]), exp(x[2])"},
    {"neg_binomial_2_log", "c", "x[1], exp(x[2])"},
    {"beta_binomial", "c", "n, exp(x[1]), exp(x[2])"},
    {"weibull", "yp", "exp(x[1]), exp(x[2])"},
    {"von_mises", "y", "x[1], exp(x[2])"},
    {"gumbel", "y", "x[1], exp(x[2])"},
    {"chi_square", "yp", "exp(x[1])"},
    {"inv_chi_square", "yp", "exp(x[1])"},
    {"scaled_inv_chi_square", "yp", "exp(x[1]), exp(x[2])"},
    {"rayleigh", "yp", "exp(x[1])"},
    {"frechet", "yp", "exp(x[1]), exp(x[2])"},
    {"dirichlet", "th", "exp(x)"},
    {"multi_normal", "v", "x, S"},
    {"multi_normal_cholesky", "v", "x, cholesky_decompose(S)"},
    {"lkj_corr_cholesky", "L3", "exp(x[1])"},
    {"lkj_corr", "R3", "exp(x[1])"},
    {"categorical", "c", "softmax(x)"},
    {"std_normal", "y", ""},
    {"bernoulli_logit_glm", "k", "v, x[1], x"},
    {"poisson_log_glm", "c", "v, x[1], 0.1 * x"},
    {"normal_id_glm", "y", "v, x[1], x, exp(x[2])"},
    {"ordered_logistic", "c", "x[1], cumulative_sum(exp(x)) - 2"},
    {"ordered_probit", "c", "x[1], cumulative_sum(exp(x)) - 2"},
};

static void prior_and_gradient(const char *model, double *lp, double *g)
{
    const char *data[] = {
        "json:{\"y\": 0.3, \"yp\": 1.3, \"u\": 0.4, \"k\": 1, \"n\": 10,"
        " \"c\": 3, \"v\": [0.5, -1.2, 2.0],"
        " \"th\": [0.2, 0.3, 0.5],"
        " \"S\": [[2, 0.5, 0.3], [0.5, 1.5, -0.2], [0.3, -0.2, 1.0]],"
        " \"R3\": [[1, 0.3, -0.2], [0.3, 1, 0.4], [-0.2, 0.4, 1]],"
        " \"L3\": [[1, 0, 0], [0.29999999999999999, 0.95393920141694566, 0],"
        " [-0.20000000000000001, 0.4822110248920824, 0.85292000062873863]]}",
        NULL};
    char text[1024];
    snprintf(text, sizeof text,
             "data { y : real  yp : real  u : real  k : int  n : int  c : int\n"
             "       v : vector[3]  th : simplex[3]  S : cov_matrix[3]\n"
             "       R3 : corr_matrix[3]  L3 : cholesky_factor_corr[3] }\n"
             "param { x : vector[3] }\n"
             "prior { %s }\n",
             model);
    lt_model lm;
    lt_open(&lm, text, data, NULL, 0);
    if (lm.rc)
        fail_msg("%s: did not open: %s", model, lm.report);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    double x[3] = {0.3, -0.2, 0.5};
    drift_err e;
    if (lm.m.log_prior(lm.m.self, ws, x, lp, g, &e))
        fail_msg("%s: %s", model, e.msg);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

static void test_every_density_as_expression(void **state)
{
    (void)state;
    size_t n = sizeof as_expr / sizeof as_expr[0];
    for (size_t d = 0; d < DRIFT_N_DISTS; d++) {
        size_t k = 0;
        while (k < n && strcmp(as_expr[k].name, drift_dists[d].name))
            k++;
        if (k == n)
            fail_msg("distribution %s has no case here", drift_dists[d].name);
        char a[256], b[256];
        snprintf(a, sizeof a, "target += %s_%s(%s%s%s)", as_expr[k].name,
                 drift_dists[d].discrete ? "lpmf" : "lpdf", as_expr[k].outcome,
                 *as_expr[k].args ? " | " : "", as_expr[k].args);
        snprintf(b, sizeof b, "%s ~ %s(%s)", as_expr[k].outcome,
                 as_expr[k].name, as_expr[k].args);
        double lpa, lpb, ga[3], gb[3];
        prior_and_gradient(a, &lpa, ga);
        prior_and_gradient(b, &lpb, gb);
        if (!isfinite(lpa) || fabs(lpa - lpb) > 1e-13 * fmax(1, fabs(lpb)))
            fail_msg("%s = %.17g but %s gives %.17g", a, lpa, b, lpb);
        for (int j = 0; j < 3; j++)
            if (fabs(ga[j] - gb[j]) > 1e-12 * fmax(1, fabs(gb[j])))
                fail_msg("%s: d/dx[%d] = %.17g, the statement's %.17g", a,
                         j + 1, ga[j], gb[j]);
    }
}

/* Stan's GLM distributions, (y | x, alpha, beta[, sigma]): per row with
 * x a rows vector (in generalised linear form, so the GLM kernels and
 * the control variates see them), and over a data matrix with y an
 * array, against R.  At alpha = 0.2, beta = (0.7, -0.4), rows x =
 * (0.5, 1), (-1, 0.2), (0.3, -0.7), R's
 *   eta <- 0.2 + x %*% c(0.7, -0.4)
 *   dbinom(c(1, 0, 1), 1, plogis(eta), log = TRUE)
 *   dpois(c(2, 0, 5), exp(eta), log = TRUE)
 *   dnorm(c(0.4, -1.3, 2.2), eta, 1.3, log = TRUE)
 * and, with alpha the vector a = c(0.1, -0.3, 0.5) over the matrix x,
 *   sum(dbinom(c(1, 0, 1), 1, plogis(a + x %*% c(0.7, -0.4)), log = TRUE)) */
static void test_glms(void **state)
{
    (void)state;
    static const struct {
        const char *stmt;
        double want[3];
    } cases[] = {
        {"y ~ bernoulli_logit_glm(x, alpha, beta)",
         {-0.62095704778953198, -0.44462066950155305, -0.40651526920662473}},
        {"cnt ~ poisson_log_glm(x, alpha, beta)",
         {-1.55498142328822841, -0.55989836656540215, -3.33120727602512812}},
        {"z ~ normal_id_glm(x, alpha, beta, 1.3)",
         {-1.1997939219325189, -1.3346755787372526, -1.8558885964887319}},
    };
    const char *data[] = {
        "csv:x.1,x.2,y,cnt,z\n0.5,1,1,2,0.4\n-1,0.2,0,0,-1.3\n"
        "0.3,-0.7,1,5,2.2\n",
        NULL};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "rows { x : vector[2]  y : int  cnt : int  z : real }\n"
                 "param { alpha : real  beta : vector[2] }\n"
                 "prior { alpha ~ normal(0, 1)  beta ~ normal(0, 1) }\n"
                 "datum { %s }\n",
                 cases[k].stmt);
        lt_model lm;
        lt_open_ok(&lm, text, data, NULL, 0);
        if (!(lm.m.flags & DRIFT_MODEL_GLM))
            fail_msg("%s: not in generalised linear form", cases[k].stmt);
        void *ws = lm.m.workspace_new(lm.m.self, 3);
        double th[3] = {0.2, 0.7, -0.4}, lr[3];
        drift_err e;
        drift_rows all = {NULL, 0, 3};
        assert_int_equal(lm.m.log_lik(lm.m.self, ws, th, &all, lr, NULL,
                                      NULL, NULL, &e),
                         0);
        for (int r = 0; r < 3; r++)
            if (!(fabs(lr[r] - cases[k].want[r]) < 1e-13))
                fail_msg("%s row %d: %.17g, R says %.17g", cases[k].stmt, r,
                         lr[r], cases[k].want[r]);
        lm.m.workspace_free(lm.m.self, ws);
        lt_check_derivatives(&lm.m, 70 + k, 3, 0.5);
        lt_close(&lm);
    }
    /* over a data matrix, alpha a vector */
    const char *json[] = {
        "json:{\"X\": [[0.5, 1], [-1, 0.2], [0.3, -0.7]], \"y\": [1, 0, 1],"
        " \"a\": [0.1, -0.3, 0.5]}",
        NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "data { X : matrix[3, 2]  y : array[3] int  a : vector[3] }\n"
               "param { beta : vector[2] }\n"
               "prior { y ~ bernoulli_logit_glm(X, a, beta) }\n",
               json, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    double th[2] = {0.7, -0.4}, lp;
    drift_err e;
    assert_int_equal(lm.m.log_prior(lm.m.self, ws, th, &lp, NULL, &e), 0);
    if (!(fabs(lp - -1.2767883173343653) < 1e-13))
        fail_msg("over a matrix: %.17g, R says -1.2767883173343653", lp);
    lm.m.workspace_free(lm.m.self, ws);
    lt_check_derivatives(&lm.m, 80, 3, 0.5);
    lt_close(&lm);
}

/* Wrong GLM calls are named, with what is expected. */
static void test_glm_errors(void **state)
{
    (void)state;
    static const struct {
        const char *stmt, *want;
    } bad[] = {
        {"y3 ~ bernoulli_logit_glm(X, 0, b3)",
         "beta of bernoulli_logit_glm must be a vector of x's columns"},
        {"y1 ~ bernoulli_logit_glm(2.5, 0, b2)",
         "x of bernoulli_logit_glm must be a vector[K] or sparse_vector[K] "
         "(one row) or a matrix[n, K]"},
        {"y3 ~ bernoulli_logit_glm(v, 0, b2)",
         "must be one value (x is one row)"},
        {"y1 ~ bernoulli_logit_glm(X, 0, b2)", "one value or one per row of x"},
        {"y3 ~ bernoulli_logit_glm(X, v, b2)", "alpha of"},
        {"y3 ~ poisson_log_glm(X, 0)", "takes 3 arguments (x, alpha, beta)"},
        {"z ~ normal_id_glm(X, 0, b2)",
         "takes 4 arguments (x, alpha, beta, sigma)"},
    };
    const char *json[] = {
        "json:{\"X\": [[0.5, 1], [-1, 0.2], [0.3, -0.7]], \"y3\": [1, 0, 1],"
        " \"y1\": [1, 0], \"v\": [1, 2], \"z\": 0.5}",
        NULL};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "data { X : matrix[3, 2]  y3 : array[3] int  "
                 "y1 : array[2] int  v : vector[2]  z : real }\n"
                 "param { b2 : vector[2]  b3 : vector[3] }\n"
                 "prior { %s }\n",
                 bad[k].stmt);
        lt_model lm;
        lt_open(&lm, text, json, NULL, 0);
        if (lm.rc == 0 || !strstr(lm.report, bad[k].want))
            fail_msg("%s: wanted an error with \"%s\", got: %s", bad[k].stmt,
                     bad[k].want, lm.report ? lm.report : "(none)");
        lt_close(&lm);
    }
}

/* ordered_logistic and ordered_probit against R, with cutpoints c =
 * (-1, 0.5, 2) (K = 4), each value printed by R with options(digits =
 * 17) as, for category y with lo = c(-Inf, c)[y], hi = c(c, Inf)[y]:
 *   y = 1:  plogis(eta - hi, lower.tail = FALSE, log.p = TRUE)
 *   y = K:  plogis(eta - lo, log.p = TRUE)
 *   else:   log(plogis(eta - lo) - plogis(eta - hi)) for eta <= 0, and
 *           log(plogis(eta - hi, lower.tail = FALSE) -
 *               plogis(eta - lo, lower.tail = FALSE)) for eta > 0
 * and the same with pnorm for ordered_probit; far tails included.  Their
 * partials in eta and both cutpoints against central differences; then
 * through the language, per row and over arrays, with the derivative
 * battery, and wrong calls. */
static void test_ordered(void **state)
{
    (void)state;
    static const double cut[3] = {-1, 0.5, 2};
    static const double ref[][4] = {
        {1, 0.3, -1.5410084538329922, -2.3351032786624426},
        {2, 0.3, -1.091629782140038, -0.728858869849768},
        {3, 0.3, -1.2184073576933121, -0.97770127609670987},
        {4, 0.3, -1.867786029386266, -3.1107960975524813},
        {1, 30, -31.000000000000036, -484.85396362717927},
        {4, -30, -32.000000000000014, -516.38564862572537},
        {2, -0.7, -1.070120170732012, -0.68747976679702871},
        {3, 30, -28.252482458926298, -396.25241451163106},
    };
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++)
        for (int probit = 0; probit < 2; probit++) {
            double d[3], y = ref[k][0], eta = ref[k][1];
            double lp = drift_dist_ordered(probit, y, eta, cut, 3, d);
            double want = ref[k][2 + probit];
            if (!(fabs(lp - want) < 1e-12 * fabs(want)))
                fail_msg("ordered_%s(%g | %g): %.17g, R says %.17g",
                         probit ? "probit" : "logistic", y, eta, lp, want);
            /* partials: eta, then the cutpoints below and above y */
            for (int j = 0; j < 3; j++) {
                size_t ci = j == 1 ? (size_t)y - 2 : (size_t)y - 1;
                if ((j == 1 && y == 1) || (j == 2 && y == 4)) {
                    assert_true(d[j] == 0);
                    continue;
                }
                double c2[3], e2 = eta, h = 1e-6;
                memcpy(c2, cut, sizeof c2);
                if (j == 0)
                    e2 = eta + h;
                else
                    c2[ci] += h;
                double up = drift_dist_ordered(probit, y, e2, c2, 3, NULL);
                memcpy(c2, cut, sizeof c2);
                if (j == 0)
                    e2 = eta - h;
                else
                    c2[ci] -= h;
                double dn = drift_dist_ordered(probit, y, e2, c2, 3, NULL);
                double fd = (up - dn) / (2 * h);
                if (!(fabs(fd - d[j]) < 1e-6 * fmax(1, fabs(d[j]))))
                    fail_msg("ordered_%s(%g | %g) partial %d: %.12g vs "
                             "difference %.12g",
                             probit ? "probit" : "logistic", y, eta, j, d[j],
                             fd);
            }
        }
    assert_true(isnan(drift_dist_ordered(0, 5, 0, cut, 3, NULL)));
    assert_true(isnan(drift_dist_ordered(1, 1.5, 0, cut, 3, NULL)));
    static const double bad_cut[3] = {0, -1, 2};
    assert_true(isnan(drift_dist_ordered(0, 2, 0, bad_cut, 3, NULL)));

    /* per row, through the language */
    const char *data[] = {"csv:x.1,x.2,y\n0.5,1,1\n-1,0.2,3\n0.3,-0.7,4\n"
                          "1.2,0.4,2\n",
                          NULL};
    static const char *const dists[] = {"ordered_logistic", "ordered_probit"};
    for (int probit = 0; probit < 2; probit++) {
        char text[512];
        snprintf(text, sizeof text,
                 "rows { x : vector[2]  y : int }\n"
                 "param { beta : vector[2]  c : ordered[3] }\n"
                 "prior { beta ~ normal(0, 1)  c ~ normal(0, 3) }\n"
                 "datum { y ~ %s(dot(x, beta), c) }\n",
                 dists[probit]);
        lt_model lm;
        lt_open_ok(&lm, text, data, NULL, 0);
        /* theta: beta, then c's free values (c1, log(c2 - c1), ...) */
        double th[5] = {0.7, -0.4, -1, log(1.5), log(1.5)}, lr[4];
        void *ws = lm.m.workspace_new(lm.m.self, 4);
        drift_err e;
        drift_rows all = {NULL, 0, 4};
        assert_int_equal(lm.m.log_lik(lm.m.self, ws, th, &all, lr, NULL, NULL,
                                      NULL, &e),
                         0);
        static const double xs[4][2] = {{0.5, 1}, {-1, 0.2}, {0.3, -0.7},
                                        {1.2, 0.4}};
        static const double ys[4] = {1, 3, 4, 2};
        for (int r = 0; r < 4; r++) {
            double eta = 0.7 * xs[r][0] - 0.4 * xs[r][1];
            double want = drift_dist_ordered(probit, ys[r], eta, cut, 3, NULL);
            if (!(fabs(lr[r] - want) < 1e-12 * fabs(want)))
                fail_msg("%s row %d: %.17g, the kernel %.17g", dists[probit],
                         r, lr[r], want);
        }
        lm.m.workspace_free(lm.m.self, ws);
        lt_check_derivatives(&lm.m, 90 + probit, 3, 0.5);
        lt_close(&lm);
        /* over arrays in the prior: eta a vector, and one eta for all */
        const char *json[] = {"json:{\"ya\": [1, 3, 4, 2, 2]}", NULL};
        snprintf(text, sizeof text,
                 "data { ya : array[5] int }\n"
                 "param { eta : vector[5]  c : ordered[3]  e1 : real }\n"
                 "prior { eta ~ normal(0, 1)  c ~ normal(0, 3)  "
                 "e1 ~ normal(0, 1)\n"
                 "        ya ~ %s(eta, c)  ya ~ %s(e1, c) }\n",
                 dists[probit], dists[probit]);
        lt_open_ok(&lm, text, json, NULL, 0);
        lt_check_derivatives(&lm.m, 92 + probit, 3, 0.5);
        lt_close(&lm);
    }
    /* an outcome out of 1..K is named with its row when the data are
     * read */
    const char *bad_rows[] = {"csv:x.1,x.2,y\n0.5,1,1\n-1,0.2,5\n", NULL};
    lt_model bm;
    lt_open(&bm,
            "rows { x : vector[2]  y : int }\n"
            "param { beta : vector[2]  c : ordered[3] }\n"
            "prior { beta ~ normal(0, 1)  c ~ normal(0, 3) }\n"
            "datum { y ~ ordered_probit(dot(x, beta), c) }\n",
            bad_rows, NULL, 0);
    if (bm.rc == 0 || !strstr(bm.report, "the outcome of ordered_probit must "
                                         "be a category from 1 to K = 4, "
                                         "found 5 (column 'y', row 2)"))
        fail_msg("an outcome of 5: %s", bm.report ? bm.report : "(none)");
    lt_close(&bm);
    static const struct {
        const char *stmt, *want;
    } bad[] = {
        {"z ~ ordered_logistic(0, c)", "must be an int"},
        {"M ~ ordered_logistic(0, c)", "must be an int"},
        {"k ~ ordered_probit(0, M)", "the cutpoints c of ordered_probit"},
        {"ka ~ ordered_logistic(v, c)", "eta of ordered_logistic"},
        {"k ~ ordered_logistic(0)", "takes 2 arguments (eta, c)"},
    };
    const char *json[] = {"json:{\"z\": 1.5, \"k\": 2, \"ka\": [1, 2, 3],"
                          " \"v\": [0.5, 1], \"M\": [[1, 0], [0, 1]]}",
                          NULL};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "data { z : real  k : int  ka : array[3] int  v : vector[2]\n"
                 "       M : matrix[2, 2] }\n"
                 "param { c : ordered[2] }\n"
                 "prior { %s }\n",
                 bad[k].stmt);
        lt_model lm;
        lt_open(&lm, text, json, NULL, 0);
        if (lm.rc == 0 || !strstr(lm.report, bad[k].want))
            fail_msg("%s: wanted an error with \"%s\", got: %s", bad[k].stmt,
                     bad[k].want, lm.report ? lm.report : "(none)");
        lt_close(&lm);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_r),
        cmocka_unit_test(test_categorical_against_r),
        cmocka_unit_test(test_digamma_against_r),
        cmocka_unit_test(test_partials),
        cmocka_unit_test(test_domains),
        cmocka_unit_test(test_rows_block),
        cmocka_unit_test(test_rows_shared_normal),
        cmocka_unit_test(test_through_language),
        cmocka_unit_test(test_language_values),
        cmocka_unit_test(test_new_through_language),
        cmocka_unit_test(test_multivariate_arrays),
        cmocka_unit_test(test_every_density_as_expression),
        cmocka_unit_test(test_glms),
        cmocka_unit_test(test_glm_errors),
        cmocka_unit_test(test_ordered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
