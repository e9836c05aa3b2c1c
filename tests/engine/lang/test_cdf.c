/* test_cdf.c: the log cdfs and log complementary cdfs of the
 * continuous distributions against R's p* functions (or closed forms
 * where base R has none), in the bulk and far in both tails; their
 * partials in every argument against central finite differences at the
 * same points; the incomplete gamma and beta functions' derivatives in
 * their shapes; and name_lcdf, name_lccdf and name_cdf through the
 * language (values, the gradient battery, and the errors of wrong calls).
 *
 * Reference values printed by R 4.x with options(digits = 17), each pair
 * (log F(y), log(1 - F(y))) as c(p(..., log.p = TRUE),
 * p(..., lower.tail = FALSE, log.p = TRUE)) with p:
 *   normal:            pnorm(y, mu, sigma)
 *   std_normal:        pnorm(y)
 *   student_t:         pt((y - mu) / sigma, nu) (nu up to 200; beyond,
 *                        mpmath at 50 digits, below)
 *   cauchy:            pcauchy(y, mu, sigma)
 *   double_exponential: z <- (y - mu) / sigma; z < 0: c(log(0.5) + z,
 *                        log1p(-0.5 * exp(z))), else c(log1p(-0.5 *
 *                        exp(-z)), log(0.5) - z)
 *   logistic:          plogis(y, mu, sigma)
 *   lognormal:         plnorm(y, mu, sigma)
 *   exponential:       pexp(y, beta)
 *   gamma:             pgamma(y, shape = alpha, rate = beta)
 *   inv_gamma:         pgamma(1 / y, shape = alpha, rate = beta), tails
 *                        swapped
 *   beta:              pbeta(y, alpha, beta)
 *   uniform:           punif(y, alpha, beta)
 *   weibull:           pweibull(y, shape = alpha, scale = sigma)
 *   gumbel:            z <- (y - mu) / beta; c(-exp(-z),
 *                        log(-expm1(-exp(-z)))); at z = -6 R's second
 *                        rounds to 0, and the value is -exp(-exp(6))
 *   chi_square:        pchisq(y, nu)
 *   inv_chi_square:    pchisq(1 / y, nu), tails swapped
 *   scaled_inv_chi_square: pgamma(1 / y, nu / 2, rate = nu * s^2 / 2),
 *                        tails swapped
 *   rayleigh:          q <- y^2 / (2 * sigma^2); c(log(-expm1(-q)), -q)
 *   frechet:           pweibull(1 / y, shape = alpha, scale = 1 / sigma),
 *                        tails swapped
 *   bernoulli:         pbinom(y, 1, theta)
 *   poisson:           ppois(y, lambda)
 *   binomial:          pbinom(y, n, theta)
 *   neg_binomial:      pnbinom(y, size = alpha, prob = beta / (1 + beta))
 *   neg_binomial_2:    pnbinom(y, size = phi, mu = mu) */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/cdf.h"
#include "engine/lang/dist.h"
#include "harness.h"
#include "langtest.h"

/* R: -exp(-exp(6)) */
#define GUMBEL_FAR -6.2101364865661445e-176

/* test_cdf_values' log prior: R's dnorm(0.25, log = TRUE) +
 * log(pnorm(0.3, -0.2, 1.7)) + 2 * sum(pnorm(c(0.3, -1.2), log.p = TRUE))
 * + pnorm(0.3, 0.25, lower.tail = FALSE, log.p = TRUE) */
#define LP_CDF_VALUES -7.4563362394553208

/* R: pgamma(1e6 + 1e3, 1e6, 1, log.p = TRUE) and the same with
 * lower.tail = FALSE: a shape of 1e6, whose terms of order 1e7 cancel */
#define GAMMA_BIG_LO -0.17275373112418319
#define GAMMA_BIG_UP -1.84102189901788571

typedef struct cref {
    drift_dist_id id;
    double a[4];
    double lcdf, lccdf;
} cref;

static const cref crefs[] = {
    {DRIFT_D_NORMAL, {0.3, -0.2, 1.7}, -0.48505067561684684, -0.9562433042420192},
    {DRIFT_D_NORMAL, {-4.1, 2.5, 0.6}, -63.82493409442372, -1.9106595744986757e-28},
    {DRIFT_D_NORMAL, {-40, 0, 1}, -804.6084420137538, 0},
    {DRIFT_D_NORMAL, {40, 0, 1}, 0, -804.6084420137538},
    {DRIFT_D_NORMAL, {-1000, 0, 10}, -5005.524208694205, 0},
    {DRIFT_D_NORMAL, {8, 0, 1}, -6.220960574271787e-16, -35.01343715991455},
    {DRIFT_D_STD_NORMAL, {0.7}, -0.2770239422771312, -1.4189677615315315},
    {DRIFT_D_STD_NORMAL, {-38.5}, -745.695270290411, 0},
    {DRIFT_D_STD_NORMAL, {25}, -3.0566967063825616e-138, -316.63940800802027},
    {DRIFT_D_STUDENT_T, {0.3, 3.5, -0.2, 1.7}, -0.4986244387879814, -0.9348762624617959},
    {DRIFT_D_STUDENT_T, {-4.1, 1, 2.5, 0.6}, -3.5453701635205226, -0.029282516939437307},
    {DRIFT_D_STUDENT_T, {2, 30, 1, 2}, -0.371587735266506, -1.1700175240009592},
    {DRIFT_D_STUDENT_T, {-1000, 3, 0, 1}, -20.625545997896715, -1.1026538218962222e-09},
    {DRIFT_D_STUDENT_T, {1e-07, 4, 0, 1}, -0.6931471055599482, -0.693147255559948},
    {DRIFT_D_STUDENT_T, {50, 2.5, 0, 1}, -4.065330175906787e-05, -10.110450827765659},
    {DRIFT_D_STUDENT_T, {-3, 200, 0, 1}, -6.488043106030738, -0.0015226822493878333},
    {DRIFT_D_STUDENT_T, {0.5, 0.3, 0, 1}, -0.5114181264456059, -0.9154026355715977},
    /* nu past 4e5: mpmath's log(betainc(nu / 2, 1 / 2, 0, x,
     * regularized = True) / 2) at 50 digits (R's pt approximates there) */
    {DRIFT_D_STUDENT_T, {-3, 1e6, 0, 1}, -6.6077015984123064,
     -0.0013508432487595724},
    {DRIFT_D_STUDENT_T, {1.5, 1e7, 0, 1}, -0.069143472527234627,
     -2.7059441645476427},
    {DRIFT_D_STUDENT_T, {-3, 1e9, 0, 1}, -6.6077261968871098,
     -0.0013508099980319868},
    {DRIFT_D_CAUCHY, {0.3, -0.2, 1.7}, -0.5258495839461844, -0.8941697202260623},
    {DRIFT_D_CAUCHY, {-4.1, 2.5, 0.6}, -3.545370163520522, -0.02928251693943731},
    {DRIFT_D_CAUCHY, {-100000000, 0, 1}, -19.565410629801764, -3.1830988669039664e-09},
    {DRIFT_D_CAUCHY, {100000000, 0, 1}, -3.1830988669039664e-09, -19.565410629801764},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {0.3, -0.2, 1.7}, -0.46616207109877617, -0.9872648276187688},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {-4.1, 2.5, 0.6}, -11.693147180559945, -8.350885263668111e-06},
    {DRIFT_D_DOUBLE_EXPONENTIAL, {60, 0, 1}, -4.37825538134826e-27, -60.69314718055995},
    {DRIFT_D_LOGISTIC, {0.3, -0.2, 1.7}, -0.5568627543929483, -0.8509804014517718},
    {DRIFT_D_LOGISTIC, {-4.1, 2.5, 0.6}, -11.000016701561318, -1.670156131839396e-05},
    {DRIFT_D_LOGISTIC, {-800, 0, 1}, -800, 0},
    {DRIFT_D_LOGISTIC, {800, 0, 1}, 0, -800},
    {DRIFT_D_LOGNORMAL, {0.3, -0.2, 1.7}, -1.28228202617567, -0.3249043529804401},
    {DRIFT_D_LOGNORMAL, {4.1, 2.5, 0.6}, -3.35927973415078, -0.035378800799744044},
    {DRIFT_D_LOGNORMAL, {1e-30, 0, 1}, -2391.008527534262, 0},
    {DRIFT_D_EXPONENTIAL, {0.3, 1.7}, -0.9175304470342056, -0.51},
    {DRIFT_D_EXPONENTIAL, {4.1, 0.6}, -0.08930668297265291, -2.4599999999999995},
    {DRIFT_D_EXPONENTIAL, {1e-12, 2}, -26.937873935369602, -2e-12},
    {DRIFT_D_EXPONENTIAL, {300, 2}, -2.6503965530043108e-261, -600},
    {DRIFT_D_GAMMA, {0.3, 2.2, 1.7}, -2.710576049804511, -0.06881269761705558},
    {DRIFT_D_GAMMA, {4.1, 0.6, 0.3}, -0.16080227928633636, -1.906903728830813},
    {DRIFT_D_GAMMA, {0.01, 0.3, 1}, -1.275680083776379, -0.3274504504972729},
    {DRIFT_D_GAMMA, {40, 0.3, 1}, -1.055651493979831e-19, -43.694958660713226},
    {DRIFT_D_GAMMA, {45, 50, 1}, -1.3991687438723575, -0.2834271832120416},
    {DRIFT_D_GAMMA, {60, 50, 1}, -0.08818298788719828, -2.4721087206353385},
    {DRIFT_D_GAMMA, {0.001, 5, 2}, -35.86219886187273, -2.662226029524803e-16},
    {DRIFT_D_GAMMA, {300, 3, 1}, -2.3321861827548488e-126, -289.27891561371734},
    {DRIFT_D_GAMMA, {1001000, 1e6, 1}, GAMMA_BIG_LO, GAMMA_BIG_UP},
    {DRIFT_D_INV_GAMMA, {0.3, 2.2, 1.7}, -3.4845414120164837, -0.03114791788844934},
    {DRIFT_D_INV_GAMMA, {4.1, 0.6, 0.3}, -0.2572480596465317, -1.483582638962677},
    {DRIFT_D_INV_GAMMA, {0.01, 3, 2}, -190.08651261288554, -2.795609373660873e-83},
    {DRIFT_D_BETA, {0.3, 2.2, 1.7}, -1.9332003688971269, -0.15628477082885361},
    {DRIFT_D_BETA, {0.91, 0.6, 0.3}, -0.4969421819349865, -0.9374841303263798},
    {DRIFT_D_BETA, {1e-05, 2, 3}, -21.234104794084622, -5.999920002099963e-10},
    {DRIFT_D_BETA, {0.99999, 3, 2}, -5.999920002045351e-10, -21.234104794093724},
    {DRIFT_D_BETA, {0.4, 30, 40}, -1.1452517890135328, -0.3829364976099173},
    {DRIFT_D_UNIFORM, {0.3, -0.2, 1.7}, -1.3350010667323402, -0.3053816495511819},
    {DRIFT_D_UNIFORM, {-4.1, -5, 2.5}, -2.1202635362000906, -0.12783337150988489},
    {DRIFT_D_WEIBULL, {1.3, 2.2, 1.7}, -0.8545282639746884, -0.5542270877660854},
    {DRIFT_D_WEIBULL, {4.1, 0.6, 0.3}, -0.008249471298909109, -4.801728065746825},
    {DRIFT_D_WEIBULL, {0.0001, 1.5, 2}, -14.855231505580882, -3.535533905932738e-07},
    {DRIFT_D_WEIBULL, {30, 2, 1.5}, -1.9151695967140057e-174, -400},
    {DRIFT_D_GUMBEL, {0.3, -0.2, 1.7}, -0.7451888170134805, -0.6436804272128858},
    {DRIFT_D_GUMBEL, {-1.1, 2.5, 0.6}, -403.42879349273511, GUMBEL_FAR},
    {DRIFT_D_GUMBEL, {30, 0, 1}, -9.357622968840175e-14, -30.000000000000046},
    {DRIFT_D_CHI_SQUARE, {1.3, 2.2}, -0.8427486319223817, -0.5630413423887587},
    {DRIFT_D_CHI_SQUARE, {4.1, 7}, -1.4618373659616155, -0.26371813304294905},
    {DRIFT_D_CHI_SQUARE, {60, 3}, -5.878230727908627e-13, -28.162350388905},
    {DRIFT_D_INV_CHI_SQUARE, {1.3, 2.2}, -0.3211972982175211, -1.2920033928769632},
    {DRIFT_D_INV_CHI_SQUARE, {0.2, 7}, -0.4155711580980896, -1.0787015192615068},
    {DRIFT_D_SCALED_INV_CHI_SQUARE, {1.3, 2.2, 0.8}, -0.46338679677779415, -0.991955541345428},
    {DRIFT_D_SCALED_INV_CHI_SQUARE, {4.1, 7, 2.5}, -1.8731408085557215, -0.16681088949452066},
    {DRIFT_D_RAYLEIGH, {1.3, 0.8}, -0.3106802961394607, -1.3203124999999998},
    {DRIFT_D_RAYLEIGH, {4.1, 2.5}, -0.30190517088632096, -1.3448},
    {DRIFT_D_RAYLEIGH, {1e-05, 1}, -23.7189981105254, -5.000000000000001e-11},
    {DRIFT_D_FRECHET, {1.3, 2.2, 1.7}, -1.8043145527777873, -0.17982934547434024},
    {DRIFT_D_FRECHET, {0.4, 0.6, 3}, -3.3499379133114293, -0.035716852585936404},
    {DRIFT_D_FRECHET, {50, 2, 1}, -0.0004, -7.824246004189625},
    {DRIFT_D_BERNOULLI, {0, 0.3}, -0.35667494393873234, -1.2039728043259361},
    {DRIFT_D_BERNOULLI, {0, 0.999}, -6.907755278982136, -0.0010005003335835346},
    {DRIFT_D_POISSON, {3, 2.2}, -0.1992409803546328, -1.711207226977032},
    {DRIFT_D_POISSON, {0, 0.6}, -0.6000000000000001, -0.7958703683463195},
    {DRIFT_D_POISSON, {17, 4.5}, -1.2959434256115246e-06, -13.556272262036185},
    {DRIFT_D_POISSON, {2, 40}, -33.26540834002705, -3.5728659287002364e-15},
    {DRIFT_D_POISSON, {60, 10}, -1.0658283276580173e-27, -62.10604524153725},
    {DRIFT_D_BINOMIAL, {3, 10, 0.3}, -0.431381990270792, -1.0487105094288516},
    {DRIFT_D_BINOMIAL, {0, 7, 0.12}, -0.8948336005691937, -0.5253905058585311},
    {DRIFT_D_BINOMIAL, {6, 7, 0.9}, -0.6506566268591192, -0.737523609604784},
    {DRIFT_D_BINOMIAL, {1, 200, 0.3}, -66.8723701457423, -9.071908346896794e-30},
    {DRIFT_D_NEG_BINOMIAL, {4, 2.5, 1.5}, -0.0678052506598034, -2.724826711675831},
    {DRIFT_D_NEG_BINOMIAL, {0, 0.7, 3}, -0.20137745071624663, -1.7015738604205077},
    {DRIFT_D_NEG_BINOMIAL, {40, 3, 0.5}, -6.652219366725125e-06, -11.92056334572578},
    {DRIFT_D_NEG_BINOMIAL_2, {4, 3.2, 1.7}, -0.2994948983912242, -1.351670751065106},
    {DRIFT_D_NEG_BINOMIAL_2, {0, 0.4, 12}, -0.39347787387589045, -1.1230266465659118},
    {DRIFT_D_NEG_BINOMIAL_2, {17, 20, 10000}, -1.2131615667774371, -0.3527626036536926},
    {DRIFT_D_NEG_BINOMIAL_2, {100, 5, 2}, -5.2013567555485146e-14, -30.587271795833},
};

/* Relative agreement, or both at the same infinity. */
static int close_rel(double got, double want, double tol)
{
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tol * fmax(fabs(want), 1e-300);
}

static void test_against_r(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof crefs / sizeof crefs[0]; k++) {
        const cref *r = &crefs[k];
        double lo = drift_cdf_log(r->id, DRIFT_CDF_LOWER, r->a, NULL);
        double up = drift_cdf_log(r->id, DRIFT_CDF_UPPER, r->a, NULL);
        /* 1e-12 relative: the values themselves, however small (a tail
         * probability near 1 has a log near -1e-126, and that is what must
         * be right); Student's t past nu = 4e5 is the normal approximation
         * of Abramowitz and Stegun 26.7.8, O(1 / nu^2) */
        double tol = r->id == DRIFT_D_STUDENT_T && r->a[1] > 4e5 ? 1e-10
                                                                : 1e-12;
        if (!close_rel(lo, r->lcdf, tol) && fabs(lo - r->lcdf) > 1e-300)
            fail_msg("%s_lcdf case %zu: %.17g, R says %.17g",
                     drift_dists[r->id].name, k, lo, r->lcdf);
        if (!close_rel(up, r->lccdf, tol) && fabs(up - r->lccdf) > 1e-300)
            fail_msg("%s_lccdf case %zu: %.17g, R says %.17g",
                     drift_dists[r->id].name, k, up, r->lccdf);
    }
}

/* Every partial against central differences at every reference point,
 * tails included. */
static void test_partials(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof crefs / sizeof crefs[0]; k++) {
        const cref *r = &crefs[k];
        const drift_dist *di = &drift_dists[r->id];
        for (int t = DRIFT_CDF_LOWER; t <= DRIFT_CDF_UPPER; t++) {
            double d[4];
            drift_cdf_log(r->id, (drift_cdf_tail)t, r->a, d);
            for (int j = 0; j <= di->n_args; j++) {
                /* an int outcome or count has no derivative */
                if ((j == 0 && di->discrete) || (j > 0 && di->arg_int[j - 1]))
                    continue;
                double a[4], h = 1e-6 * fabs(r->a[j]);
                if (r->a[j] == 0)
                    h = 1e-6;
                if (r->id == DRIFT_D_BETA && j == 0)
                    h = 1e-6 * fmin(r->a[0], 1 - r->a[0]); /* off the edge */
                memcpy(a, r->a, sizeof a);
                a[j] = r->a[j] + h;
                double fu = drift_cdf_log(r->id, (drift_cdf_tail)t, a, NULL);
                a[j] = r->a[j] - h;
                double fl = drift_cdf_log(r->id, (drift_cdf_tail)t, a, NULL);
                double fd = (fu - fl) / (2 * h);
                /* relative, plus the rounding of the two values over 2h
                 * (a few hundred ulps: a shape of 1e4 puts terms of 1e4
                 * into a log cdf of order 1) */
                double f0 = drift_cdf_log(r->id, (drift_cdf_tail)t, r->a,
                                          NULL);
                double tol = 2e-6 * fmax(fabs(d[j]), fabs(fd)) +
                             1e-13 * fabs(f0) / h + 1e-300;
                if (!(fabs(fd - d[j]) <= tol))
                    fail_msg("%s_%s case %zu, partial %d: %.12g vs "
                             "difference %.12g",
                             di->name, t == DRIFT_CDF_LOWER ? "lcdf" : "lccdf",
                             k, j, d[j], fd);
            }
        }
    }
}

/* The two tails add up: exp(lcdf) + exp(lccdf) = 1, and their partials
 * are in the ratio the identity requires. */
static void test_tails_complement(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof crefs / sizeof crefs[0]; k++) {
        const cref *r = &crefs[k];
        double dl[4], du[4];
        double lo = drift_cdf_log(r->id, DRIFT_CDF_LOWER, r->a, dl);
        double up = drift_cdf_log(r->id, DRIFT_CDF_UPPER, r->a, du);
        if (!(fabs(exp(lo) + exp(up) - 1) < 1e-14))
            fail_msg("%s case %zu: F + (1 - F) = %.17g",
                     drift_dists[r->id].name, k, exp(lo) + exp(up));
        for (int j = 0; j <= drift_dists[r->id].n_args; j++) {
            /* F dlog F + (1 - F) dlog(1 - F) = 0 */
            double s = exp(lo) * dl[j] + exp(up) * du[j];
            double sc = fabs(exp(lo) * dl[j]) + fabs(exp(up) * du[j]);
            if (!(fabs(s) <= 1e-10 * sc + 1e-300))
                fail_msg("%s case %zu, partial %d: %.17g and %.17g do not "
                         "cancel",
                         drift_dists[r->id].name, k, j, dl[j], du[j]);
        }
    }
}

/* log Phi far out in the lower tail, where erfc underflows: finite and
 * as R's pnorm(z, log.p = TRUE), on both sides of the switch from erfc
 * to the Mills ratio at -20; its derivative phi / Phi close to -z. */
static void test_log_phi_tail(void **state)
{
    (void)state;
    double g;
    /* R: pnorm(-40, log.p = TRUE); pnorm(-100, log.p = TRUE);
     * pnorm(-1e4, log.p = TRUE); pnorm(-20.5, log.p = TRUE);
     * pnorm(-19.5, log.p = TRUE) */
    static const double z[] = {-40, -100, -1e4, -20.5, -19.5};
    static const double want[] = {-804.6084420137538, -5005.5242086942053,
                                  -50000010.129278913, -214.06672896326381,
                                  -194.01696577749749};
    for (size_t k = 0; k < sizeof z / sizeof z[0]; k++) {
        double lp = drift_log_Phi(z[k], &g);
        if (!(fabs(lp - want[k]) < 1e-13 * fabs(want[k])))
            fail_msg("log Phi(%g) = %.17g, R says %.17g", z[k], lp, want[k]);
        /* phi / Phi = -z (1 + 1/z^2 - ...)^-1: between -z and -z + 1/-z */
        if (!(g >= -z[k] && g <= -z[k] + 1 / -z[k]))
            fail_msg("d log Phi(%g) = %.17g", z[k], g);
    }
    assert_true(drift_log_Phi(-INFINITY, NULL) == -INFINITY);
    assert_true(drift_log_Phi(INFINITY, NULL) == 0);
}

/* The shape derivatives of log P(a, x), log Q(a, x) and log I_x(a, b)
 * against central differences, on both sides of each switch between
 * series and continued fraction. */
static void test_shape_derivatives(void **state)
{
    (void)state;
    static const double ga[][2] = {{0.3, 0.01}, {0.3, 40}, {2.2, 0.5},
                                   {2.2, 3.3}, {50, 45}, {50, 60},
                                   {5, 0.002}, {3, 300}, {1e-3, 1e-3},
                                   {400, 380}};
    for (size_t k = 0; k < sizeof ga / sizeof ga[0]; k++) {
        double a = ga[k][0], x = ga[k][1], lp, lq, dp[2], dq[2];
        assert_int_equal(drift_cdf_log_inc_gamma(a, x, &lp, dp, &lq, dq), 0);
        double h = 1e-6 * a, p1, p2, q1, q2;
        drift_cdf_log_inc_gamma(a + h, x, &p1, NULL, &q1, NULL);
        drift_cdf_log_inc_gamma(a - h, x, &p2, NULL, &q2, NULL);
        double fp = (p1 - p2) / (2 * h), fq = (q1 - q2) / (2 * h);
        if (!(fabs(fp - dp[0]) <= 1e-6 * fmax(fabs(fp), fabs(dp[0])) + 1e-300))
            fail_msg("d/da log P(%g, %g) = %.12g, difference %.12g", a, x,
                     dp[0], fp);
        if (!(fabs(fq - dq[0]) <= 1e-6 * fmax(fabs(fq), fabs(dq[0])) + 1e-300))
            fail_msg("d/da log Q(%g, %g) = %.12g, difference %.12g", a, x,
                     dq[0], fq);
    }
    static const double be[][3] = {{2.2, 1.7, 0.3}, {0.6, 0.3, 0.91},
                                   {2, 3, 1e-5}, {30, 40, 0.4},
                                   {0.5, 0.5, 0.999}, {100, 0.5, 0.99}};
    for (size_t k = 0; k < sizeof be / sizeof be[0]; k++) {
        double a = be[k][0], b = be[k][1], x = be[k][2], lo, up;
        double dlo[3], dup[3];
        assert_int_equal(
            drift_cdf_log_inc_beta(a, b, x, 1 - x, &lo, dlo, &up, dup), 0);
        for (int j = 0; j < 2; j++) {
            double p[2] = {a, b}, h = 1e-6 * p[j], l1, l2, u1, u2;
            p[j] += h;
            drift_cdf_log_inc_beta(p[0], p[1], x, 1 - x, &l1, NULL, &u1,
                                   NULL);
            p[j] -= 2 * h;
            drift_cdf_log_inc_beta(p[0], p[1], x, 1 - x, &l2, NULL, &u2,
                                   NULL);
            double fl = (l1 - l2) / (2 * h), fu = (u1 - u2) / (2 * h);
            if (!(fabs(fl - dlo[j]) <= 1e-6 * fmax(fabs(fl), fabs(dlo[j]))))
                fail_msg("d/d%c log I_%g(%g, %g) = %.12g, difference %.12g",
                         "ab"[j], x, a, b, dlo[j], fl);
            if (!(fabs(fu - dup[j]) <= 1e-6 * fmax(fabs(fu), fabs(dup[j]))))
                fail_msg("d/d%c log(1 - I_%g(%g, %g)) = %.12g, difference "
                         "%.12g",
                         "ab"[j], x, a, b, dup[j], fu);
        }
    }
    double lp;
    assert_int_equal(drift_cdf_log_inc_gamma(-1, 1, &lp, NULL, NULL, NULL),
                     -1);
    assert_true(isnan(lp));
}

/* Student's t with a large nu: the partial in nu (of order 1 / nu^2)
 * against mpmath's central difference of log(betainc(nu / 2, 1 / 2, 0,
 * nu / (nu + t^2), regularized = True) / 2) at 50 digits (t < 0; one
 * minus it for t > 0), h = nu / 1000: at t = 1.5, nu = 1e7,
 * 1.6915017365366026e-15, and at t = -3, nu = 1e6,
 * -2.4622980797999476e-11.  (The incomplete beta function there gave a
 * partial 25% off: its x = nu / (nu + t^2) sits within nu * 1e-16 of 1.) */
static void test_student_t_large_nu(void **state)
{
    (void)state;
    static const double pt[2][5] = {{1.5, 1e7, 0, 1, 1.6915017365366026e-15},
                                    {-3, 1e6, 0, 1, -2.4622980797999476e-11}};
    for (int k = 0; k < 2; k++) {
        double d[4];
        drift_cdf_log(DRIFT_D_STUDENT_T, DRIFT_CDF_LOWER, pt[k], d);
        if (!(fabs(d[1] - pt[k][4]) < 1e-4 * fabs(pt[k][4])))
            fail_msg("d/dnu log F(%g; nu = %g) = %.10g, mpmath %.10g",
                     pt[k][0], pt[k][1], d[1], pt[k][4]);
    }
}

/* Outcomes outside the support have log cdf log 0 or log 1; arguments
 * outside their domain give NaN. */
static void test_support_and_domains(void **state)
{
    (void)state;
    double a[4] = {-1, 2, 1, 0};
    assert_true(drift_cdf_log(DRIFT_D_GAMMA, DRIFT_CDF_LOWER, a, NULL) ==
                -INFINITY);
    assert_true(drift_cdf_log(DRIFT_D_GAMMA, DRIFT_CDF_UPPER, a, NULL) == 0);
    double b[4] = {1.5, 2, 3, 0};
    assert_true(drift_cdf_log(DRIFT_D_BETA, DRIFT_CDF_LOWER, b, NULL) == 0);
    assert_true(drift_cdf_log(DRIFT_D_BETA, DRIFT_CDF_UPPER, b, NULL) ==
                -INFINITY);
    double u[4] = {3, 0, 1, 0};
    assert_true(drift_cdf_log(DRIFT_D_UNIFORM, DRIFT_CDF_LOWER, u, NULL) ==
                0);
    double n[4] = {0, 0, -1, 0};
    assert_true(isnan(drift_cdf_log(DRIFT_D_NORMAL, DRIFT_CDF_LOWER, n,
                                    NULL)));
    double t[4] = {0, -2, 0, 1};
    assert_true(isnan(drift_cdf_log(DRIFT_D_STUDENT_T, DRIFT_CDF_UPPER, t,
                                    NULL)));
}

/* Each distribution with a cdf, through the language: name_lcdf and
 * name_lccdf of a rows outcome with parameters in every continuous
 * argument, per row; the value equals the sum of the element functions
 * (tested against R above) and the gradients pass the battery of
 * derivative checks (finite differences, per-row, jvp). */
static const struct {
    const char *name, *outcome, *args;
    drift_dist_id id;
} as_expr[] = {
    {"normal", "y", "x[1], exp(x[2])", DRIFT_D_NORMAL},
    {"std_normal", "y", "", DRIFT_D_STD_NORMAL},
    {"student_t", "y", "exp(x[3]) + 1, x[1], exp(x[2])", DRIFT_D_STUDENT_T},
    {"cauchy", "y", "x[1], exp(x[2])", DRIFT_D_CAUCHY},
    {"double_exponential", "y", "x[1], exp(x[2])",
     DRIFT_D_DOUBLE_EXPONENTIAL},
    {"logistic", "y", "x[1], exp(x[2])", DRIFT_D_LOGISTIC},
    {"lognormal", "yp", "x[1], exp(x[2])", DRIFT_D_LOGNORMAL},
    {"exponential", "yp", "exp(x[1])", DRIFT_D_EXPONENTIAL},
    {"gamma", "yp", "exp(x[1]), exp(x[2])", DRIFT_D_GAMMA},
    {"inv_gamma", "yp", "exp(x[1]), exp(x[2])", DRIFT_D_INV_GAMMA},
    {"beta", "u", "exp(x[1]), exp(x[2])", DRIFT_D_BETA},
    {"uniform", "u", "x[1] - 5, exp(x[2]) + 1", DRIFT_D_UNIFORM},
    {"weibull", "yp", "exp(x[1]), exp(x[2])", DRIFT_D_WEIBULL},
    {"gumbel", "y", "x[1], exp(x[2])", DRIFT_D_GUMBEL},
    {"chi_square", "yp", "exp(x[1])", DRIFT_D_CHI_SQUARE},
    {"inv_chi_square", "yp", "exp(x[1])", DRIFT_D_INV_CHI_SQUARE},
    {"scaled_inv_chi_square", "yp", "exp(x[1]), exp(x[2])",
     DRIFT_D_SCALED_INV_CHI_SQUARE},
    {"rayleigh", "yp", "exp(x[1])", DRIFT_D_RAYLEIGH},
    {"frechet", "yp", "exp(x[1]), exp(x[2])", DRIFT_D_FRECHET},
    {"bernoulli", "b", "inv_logit(x[1])", DRIFT_D_BERNOULLI},
    {"poisson", "k", "exp(x[1])", DRIFT_D_POISSON},
    {"binomial", "k", "10, inv_logit(x[1])", DRIFT_D_BINOMIAL},
    {"neg_binomial", "k", "exp(x[1]), exp(x[2])", DRIFT_D_NEG_BINOMIAL},
    {"neg_binomial_2", "k", "exp(x[1]), exp(x[2])", DRIFT_D_NEG_BINOMIAL_2},
};

static const char *const rows_csv[] = {
    "csv:y,yp,u,k,b\n0.3,1.3,0.4,2,0\n-2.1,0.2,0.05,0,0\n4.5,6.5,0.93,5,0\n",
    NULL};
static const double rows_val[3][5] = {
    {0.3, 1.3, 0.4, 2, 0}, {-2.1, 0.2, 0.05, 0, 0}, {4.5, 6.5, 0.93, 5, 0}};

/* The arguments of case k at x, as the model computes them. */
static int case_args(size_t k, const double *x, double *a)
{
    const double ex1 = exp(x[0]), ex2 = exp(x[1]), ex3 = exp(x[2]);
    switch (as_expr[k].id) {
    case DRIFT_D_STD_NORMAL: return 0;
    case DRIFT_D_BERNOULLI:
        a[0] = 1 / (1 + exp(-x[0]));
        return 1;
    case DRIFT_D_POISSON:
        a[0] = ex1;
        return 1;
    case DRIFT_D_BINOMIAL:
        a[0] = 10, a[1] = 1 / (1 + exp(-x[0]));
        return 2;
    case DRIFT_D_NEG_BINOMIAL: case DRIFT_D_NEG_BINOMIAL_2:
        a[0] = ex1, a[1] = ex2;
        return 2;
    case DRIFT_D_STUDENT_T:
        a[0] = ex3 + 1, a[1] = x[0], a[2] = ex2;
        return 3;
    case DRIFT_D_EXPONENTIAL: case DRIFT_D_CHI_SQUARE:
    case DRIFT_D_INV_CHI_SQUARE: case DRIFT_D_RAYLEIGH:
        a[0] = ex1;
        return 1;
    case DRIFT_D_GAMMA: case DRIFT_D_INV_GAMMA: case DRIFT_D_BETA:
    case DRIFT_D_WEIBULL: case DRIFT_D_SCALED_INV_CHI_SQUARE:
    case DRIFT_D_FRECHET:
        a[0] = ex1, a[1] = ex2;
        return 2;
    case DRIFT_D_UNIFORM:
        a[0] = x[0] - 5, a[1] = ex2 + 1;
        return 2;
    default:
        a[0] = x[0], a[1] = ex2;
        return 2;
    }
}

static void test_through_language(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof as_expr / sizeof as_expr[0]; k++) {
        char text[1024];
        const char *sep = *as_expr[k].args ? " | " : "";
        snprintf(text, sizeof text,
                 "rows { y : real  yp : real  u : real  k : int  b : int }\n"
                 "param { x : vector[3] }\n"
                 "prior { x ~ normal(0, 1) }\n"
                 "datum { target += %s_lcdf(%s%s%s) + 0.5 * %s_lccdf(%s%s%s) }\n",
                 as_expr[k].name, as_expr[k].outcome, sep, as_expr[k].args,
                 as_expr[k].name, as_expr[k].outcome, sep, as_expr[k].args);
        lt_model lm;
        lt_open(&lm, text, rows_csv, NULL, 0);
        if (lm.rc)
            fail_msg("%s: did not open: %s", as_expr[k].name, lm.report);
        double x[3] = {0.3, -0.2, 0.5}, lr[3];
        void *ws = lm.m.workspace_new(lm.m.self, 3);
        drift_err e;
        drift_rows all = {NULL, 0, 3};
        if (lm.m.log_lik(lm.m.self, ws, x, &all, lr, NULL, NULL, NULL, &e))
            fail_msg("%s: %s", as_expr[k].name, e.msg);
        static const char *const cols[5] = {"y", "yp", "u", "k", "b"};
        size_t col = 0;
        while (strcmp(cols[col], as_expr[k].outcome))
            col++;
        for (size_t r = 0; r < 3; r++) {
            double a[4];
            a[0] = rows_val[r][col];
            case_args(k, x, a + 1);
            double want =
                drift_cdf_log(as_expr[k].id, DRIFT_CDF_LOWER, a, NULL) +
                0.5 * drift_cdf_log(as_expr[k].id, DRIFT_CDF_UPPER, a, NULL);
            if (!(fabs(lr[r] - want) <= 1e-12 * fmax(1, fabs(want))))
                fail_msg("%s row %zu: %.17g, the element functions %.17g",
                         as_expr[k].name, r, lr[r], want);
        }
        lm.m.workspace_free(lm.m.self, ws);
        lt_check_derivatives(&lm.m, 31 + k, 3, 0.5);
        lt_close(&lm);
    }
}

/* name_cdf is the probability: normal_cdf(0.3 | -0.2, 1.7) is R's
 * pnorm(0.3, -0.2, 1.7) = 0.61569892466012436; over a vector it is the
 * product, and the older names name_cdf_log and name_ccdf_log are the
 * log cdfs.  A constant cdf folds to a constant. */
static void test_cdf_values(void **state)
{
    (void)state;
    const char *data[] = {"json:{\"v\": [0.3, -1.2]}", NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "data { v : vector[2] }\n"
               "param { x : real }\n"
               "prior { x ~ normal(0, 1)\n"
               "        target += log(normal_cdf(0.3 | -0.2, 1.7))\n"
               "        target += log(normal_cdf(v | 0, 1))\n"
               "        target += normal_cdf_log(v | 0, 1)\n"
               "        target += normal_ccdf_log(0.3, x, 1) }\n",
               data, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    double x = 0.25, lp;
    drift_err e;
    assert_int_equal(lm.m.log_prior(lm.m.self, ws, &x, &lp, NULL, &e), 0);
    if (!(fabs(lp - LP_CDF_VALUES) < 1e-12 * fabs(LP_CDF_VALUES)))
        fail_msg("log prior %.17g, R says %.17g", lp, LP_CDF_VALUES);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

/* Wrong calls are named with what would be right. */
static void test_wrong_calls(void **state)
{
    (void)state;
    static const struct {
        const char *expr, *want;
    } bad[] = {
        {"normal_lcdf(x | 0)", "takes 2 arguments (mu, sigma), given 1"},
        {"gamma_lccdf(x | 1, 2, 3)", "takes 2 arguments (alpha, beta), given 3"},
        {"poisson_log_lcdf(x | 2)", "poisson_log has no cdf in drift"},
        {"poisson_lcdf(x | 2)", "the outcome of poisson must be an int"},
        {"von_mises_cdf(x | 0, 1)", "von_mises has no cdf in drift"},
        {"nromal_lcdf(x | 0, 1)", "did you mean 'normal_lcdf'?"},
        {"normal_lcdf()", "needs an outcome"},
        {"normal_lcdf(x | [1, 2]', 1)", "expected"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[256];
        snprintf(text, sizeof text,
                 "param { x : real }\nprior { target += %s }\n",
                 bad[k].expr);
        lt_model lm;
        lt_open(&lm, text, NULL, NULL, 0);
        if (lm.rc == 0 || !strstr(lm.report, bad[k].want))
            fail_msg("%s: wanted an error with \"%s\", got: %s", bad[k].expr,
                     bad[k].want, lm.report ? lm.report : "(none)");
        lt_close(&lm);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_r),
        cmocka_unit_test(test_partials),
        cmocka_unit_test(test_tails_complement),
        cmocka_unit_test(test_log_phi_tail),
        cmocka_unit_test(test_shape_derivatives),
        cmocka_unit_test(test_student_t_large_nu),
        cmocka_unit_test(test_support_and_domains),
        cmocka_unit_test(test_through_language),
        cmocka_unit_test(test_cdf_values),
        cmocka_unit_test(test_wrong_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
