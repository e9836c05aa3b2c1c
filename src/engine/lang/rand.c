/* rand.c: random draws for the generated block (see rand.h).  Exact
 * methods throughout: Marsaglia and Tsang's gamma, beta from two gammas
 * in log space, binomial and Poisson by Knuth's splitting recursions
 * (order statistics through beta and gamma draws, then direct methods
 * for small counts), Best and Fisher's von Mises, and the C-vine of
 * partial correlations for LKJ.  Not for speed: generated quantities are
 * drawn once per kept draw. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rand.h"

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void drift_rand_seed(drift_rand *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int k = 0; k < 4; k++)
        r->s[k] = splitmix(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(drift_rand *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double drift_rand_uniform(drift_rand *r)
{
    /* 53 random bits, shifted off 0. */
    return ((double)(next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double drift_rand_normal(drift_rand *r)
{
    double u = drift_rand_uniform(r), v = drift_rand_uniform(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* log of a Gamma(a, 1) draw: a < 1 through Gamma(a + 1) U^(1/a), kept in
 * logs so that tiny shapes do not underflow. */
static double log_gamma_draw(drift_rand *r, double a)
{
    double boost = 0;
    if (a < 1) {
        boost = log(drift_rand_uniform(r)) / a;
        a += 1;
    }
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = drift_rand_normal(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = drift_rand_uniform(r);
        if (u < 1 - 0.0331 * x * x * x * x ||
            log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return log(d * v) + boost;
    }
}

double drift_rand_gamma(drift_rand *r, double a)
{
    if (!(a > 0))
        return NAN;
    return exp(log_gamma_draw(r, a));
}

double drift_rand_beta(drift_rand *r, double a, double b)
{
    if (!(a > 0) || !(b > 0))
        return NAN;
    double lx = log_gamma_draw(r, a), ly = log_gamma_draw(r, b);
    /* Both logs -inf (shapes so small, 1e-320, that both draws underflow
     * even in logs): their difference would be NaN.  The draw is then
     * all but surely at an end, 1 with probability a / (a + b). */
    if (isinf(lx) && isinf(ly))
        return drift_rand_uniform(r) * (a + b) < a ? 1.0 : 0.0;
    double t = ly - lx;
    return t > 0 ? exp(-t) / (1 + exp(-t)) : 1 / (1 + exp(t));
}

double drift_rand_binomial(drift_rand *r, double n, double p)
{
    if (!(n >= 0) || n != floor(n) || !(p >= 0) || !(p <= 1))
        return NAN;
    if (p > 0.5)
        return n - drift_rand_binomial(r, n, 1 - p);
    double k = 0;
    /* The a-th smallest of n uniforms is Beta(a, n + 1 - a): which side
     * of it p falls on halves the problem. */
    while (n > 40) {
        double a = 1 + floor(n / 2), b = n + 1 - a;
        double x = drift_rand_beta(r, a, b);
        if (x >= p) {
            n = a - 1;
            p /= x;
        } else {
            k += a;
            n = b - 1;
            p = (p - x) / (1 - x);
        }
    }
    for (double j = 0; j < n; j++)
        k += drift_rand_uniform(r) < p;
    return k;
}

double drift_rand_poisson(drift_rand *r, double lambda)
{
    if (!(lambda >= 0) || !isfinite(lambda))
        return NAN;
    double k = 0;
    /* The m-th arrival of a unit-rate process is Gamma(m): before or
     * after lambda, the count is a Poisson of the rest or a binomial of
     * the m - 1 arrivals before it. */
    while (lambda > 30) {
        double m = floor(0.875 * lambda);
        double x = drift_rand_gamma(r, m);
        if (x < lambda) {
            k += m;
            lambda -= x;
        } else {
            return k + drift_rand_binomial(r, m - 1, lambda / x);
        }
    }
    double limit = exp(-lambda), prod = drift_rand_uniform(r);
    while (prod > limit) {
        k += 1;
        prod *= drift_rand_uniform(r);
    }
    return k;
}

static double inv_logit(double x)
{
    return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* Best and Fisher (1979); beyond kappa = 1e8 the normal it tends to,
 * N(mu, 1 / kappa) (relative error 1/kappa): Best and Fisher's envelope
 * loses its precision there (rho rounds to 1 near 1e32, and 4 kappa^2
 * overflows past 1e154) and its loop never accepts. */
static double von_mises(drift_rand *r, double mu, double kappa)
{
    if (kappa < 1e-8)
        return mu + M_PI * (2 * drift_rand_uniform(r) - 1);
    if (kappa > 1e8)
        return mu + drift_rand_normal(r) / sqrt(kappa);
    double t = 1 + sqrt(1 + 4 * kappa * kappa);
    double rho = (t - sqrt(2 * t)) / (2 * kappa);
    double s = (1 + rho * rho) / (2 * rho), f;
    for (;;) {
        double u1 = drift_rand_uniform(r), u2 = drift_rand_uniform(r);
        double z = cos(M_PI * u1);
        f = (1 + s * z) / (s + z);
        double c = kappa * (s - f);
        if (c * (2 - c) - u2 > 0 || log(c / u2) + 1 - c >= 0)
            break;
    }
    if (f > 1)
        f = 1;
    if (f < -1)
        f = -1;
    double th = acos(f);
    return mu + (drift_rand_uniform(r) < 0.5 ? -th : th);
}

double drift_rand_log_gamma(drift_rand *r, double a)
{
    if (!(a > 0))
        return NAN;
    return log_gamma_draw(r, a);
}

/* a0 + (a1 - a0) u without overflow when the bounds are far apart. */
static double between(double a0, double a1, double u)
{
    double w = a1 - a0;
    return isfinite(w) ? a0 + w * u : a0 * (1 - u) + a1 * u;
}

/* The largest rate drawn from, as Stan's poisson_rng has it (2^30): a
 * count drawn from more would not fit the int it is written as. */
#define POISSON_MAX 1073741824.0

/* A Poisson count of rate exp(log_rate); +inf when the rate is at or
 * over POISSON_MAX. */
static double poisson_of_log(drift_rand *r, double log_rate)
{
    if (!(log_rate < log(POISSON_MAX)))
        return INFINITY;
    return drift_rand_poisson(r, exp(log_rate));
}

static double draw(drift_rand *r, drift_dist_id id, const double *a)
{
    double u;
    switch (id) {
    case DRIFT_D_NORMAL:
        return a[1] > 0 ? a[0] + a[1] * drift_rand_normal(r) : NAN;
    case DRIFT_D_STD_NORMAL:
        return drift_rand_normal(r);
    case DRIFT_D_STUDENT_T: {
        if (!(a[0] > 0) || !(a[2] > 0))
            return NAN;
        /* z / sqrt(G), G = Gamma(nu/2) * 2/nu, in logs: G underflows to
         * 0 for small nu long before the quotient overflows. */
        double lg = log_gamma_draw(r, 0.5 * a[0]) + log(2 / a[0]);
        return a[1] + a[2] * (drift_rand_normal(r) * exp(-0.5 * lg));
    }
    case DRIFT_D_CAUCHY:
        return a[1] > 0 ? a[0] + a[1] * tan(M_PI * (drift_rand_uniform(r) -
                                                    0.5))
                        : NAN;
    case DRIFT_D_DOUBLE_EXPONENTIAL:
        if (!(a[1] > 0))
            return NAN;
        u = drift_rand_uniform(r) - 0.5;
        return a[0] - a[1] * (u > 0 ? 1 : -1) * log1p(-2 * fabs(u));
    case DRIFT_D_LOGISTIC:
        if (!(a[1] > 0))
            return NAN;
        u = drift_rand_uniform(r);
        return a[0] + a[1] * (log(u) - log1p(-u));
    case DRIFT_D_LOGNORMAL:
        return a[1] > 0 ? exp(a[0] + a[1] * drift_rand_normal(r)) : NAN;
    case DRIFT_D_EXPONENTIAL:
        return a[0] > 0 ? -log(drift_rand_uniform(r)) / a[0] : NAN;
    case DRIFT_D_GAMMA:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return exp(log_gamma_draw(r, a[0]) - log(a[1]));
    case DRIFT_D_INV_GAMMA:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return exp(log(a[1]) - log_gamma_draw(r, a[0]));
    case DRIFT_D_BETA:
        return drift_rand_beta(r, a[0], a[1]);
    case DRIFT_D_UNIFORM:
        return a[0] < a[1] ? between(a[0], a[1], drift_rand_uniform(r)) : NAN;
    case DRIFT_D_BERNOULLI:
        return a[0] >= 0 && a[0] <= 1 ? drift_rand_uniform(r) < a[0] : NAN;
    case DRIFT_D_BERNOULLI_LOGIT:
        return drift_rand_uniform(r) < inv_logit(a[0]);
    case DRIFT_D_BINOMIAL_LOGIT:
        return drift_rand_binomial(r, a[0], inv_logit(a[1]));
    case DRIFT_D_POISSON:
        if (!(a[0] >= 0))
            return NAN;
        return a[0] < POISSON_MAX ? drift_rand_poisson(r, a[0]) : INFINITY;
    case DRIFT_D_POISSON_LOG:
        return poisson_of_log(r, a[0]);
    case DRIFT_D_BINOMIAL:
        return drift_rand_binomial(r, a[0], a[1]);
    /* The negative binomials: a Poisson of a gamma draw, kept in logs
     * (a tiny shape's draw underflows where mu / phi overflows, and
     * their product was NaN); a rate of 2^30 or more is refused as
     * Stan refuses it. */
    case DRIFT_D_NEG_BINOMIAL:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return poisson_of_log(r, log_gamma_draw(r, a[0]) - log(a[1]));
    case DRIFT_D_NEG_BINOMIAL_2:
    case DRIFT_D_NEG_BINOMIAL_2_LOG: {
        if (id == DRIFT_D_NEG_BINOMIAL_2 && !(a[0] > 0))
            return NAN;
        if (!(a[1] > 0))
            return NAN;
        double log_mu = id == DRIFT_D_NEG_BINOMIAL_2 ? log(a[0]) : a[0];
        return poisson_of_log(r,
                              log_gamma_draw(r, a[1]) + log_mu - log(a[1]));
    }
    case DRIFT_D_BETA_BINOMIAL: {
        double p = drift_rand_beta(r, a[1], a[2]);
        return isnan(p) ? NAN : drift_rand_binomial(r, a[0], p);
    }
    case DRIFT_D_WEIBULL:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return a[1] * pow(-log(drift_rand_uniform(r)), 1 / a[0]);
    case DRIFT_D_VON_MISES:
        return a[1] >= 0 ? von_mises(r, a[0], a[1]) : NAN;
    case DRIFT_D_GUMBEL:
        return a[1] > 0 ? a[0] - a[1] * log(-log(drift_rand_uniform(r)))
                        : NAN;
    case DRIFT_D_CHI_SQUARE:
        return a[0] > 0 ? 2 * exp(log_gamma_draw(r, 0.5 * a[0])) : NAN;
    case DRIFT_D_INV_CHI_SQUARE:
        return a[0] > 0 ? exp(-log_gamma_draw(r, 0.5 * a[0]) - M_LN2) : NAN;
    case DRIFT_D_SCALED_INV_CHI_SQUARE:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return exp(log(a[0]) + 2 * log(a[1]) - M_LN2 -
                   log_gamma_draw(r, 0.5 * a[0]));
    case DRIFT_D_RAYLEIGH:
        return a[0] > 0 ? a[0] * sqrt(-2 * log(drift_rand_uniform(r))) : NAN;
    case DRIFT_D_FRECHET:
        if (!(a[0] > 0) || !(a[1] > 0))
            return NAN;
        return a[1] * pow(-log(drift_rand_uniform(r)), -1 / a[0]);
    default:
        return NAN;
    }
}

double drift_rand_dist(drift_rand *r, drift_dist_id id, const double *a)
{
    /* Every argument finite, as Stan checks them: an infinite location
     * or scale has no draw. */
    for (int k = 0; k < drift_dists[id].n_args; k++)
        if (!isfinite(a[k]))
            return NAN;
    /* From finite arguments in their domain, a draw past a double's
     * range (or, for a count, from a rate past the largest drawn from)
     * is +-inf, not NaN: the cases compute in logs where a product of an
     * underflow and an overflow would be NaN. */
    return draw(r, id, a);
}

void drift_rand_range_explain(drift_dist_id id, const double *a, char *buf,
                              size_t cap)
{
    switch (id) {
    case DRIFT_D_POISSON:
        snprintf(buf, cap, "the rate lambda is %g, but must be less than "
                           "%g (2^30): a larger count is not drawn",
                 a[0], POISSON_MAX);
        return;
    case DRIFT_D_POISSON_LOG:
        snprintf(buf, cap, "the log rate alpha is %g, but must be less "
                           "than %g (log 2^30): a larger count is not drawn",
                 a[0], log(POISSON_MAX));
        return;
    case DRIFT_D_NEG_BINOMIAL:
    case DRIFT_D_NEG_BINOMIAL_2:
    case DRIFT_D_NEG_BINOMIAL_2_LOG:
        snprintf(buf, cap, "the gamma draw behind the count (its Poisson "
                           "rate) came out at %g (2^30) or more, but must "
                           "be less than that: a larger count is not drawn",
                 POISSON_MAX);
        return;
    default:
        snprintf(buf, cap, "the draw overflows a double (it is infinite "
                           "in floating point): no finite value stands "
                           "for it");
        return;
    }
}

double drift_rand_categorical(drift_rand *r, const double *p, size_t K)
{
    double s = 0;
    for (size_t k = 0; k < K; k++) {
        if (!(p[k] >= 0))
            return NAN;
        s += p[k];
    }
    if (!(fabs(s - 1) <= 1e-8) || K == 0)
        return NAN;
    double u = drift_rand_uniform(r) * s, c = 0;
    for (size_t k = 0; k < K; k++) {
        c += p[k];
        if (u < c)
            return (double)(k + 1);
    }
    return (double)K;
}

double drift_rand_ordered(drift_rand *r, int probit, double eta,
                          const double *c, size_t K1)
{
    if (!isfinite(eta))
        return NAN;
    for (size_t k = 1; k < K1; k++)
        if (!(c[k - 1] < c[k]))
            return NAN;
    /* Y > k with probability F(eta - c[k-1]), decreasing in k: Y is the
     * first k with u >= that */
    double u = drift_rand_uniform(r);
    for (size_t k = 1; k <= K1; k++) {
        double x = eta - c[k - 1];
        double up = probit ? 0.5 * erfc(-x * M_SQRT1_2) : inv_logit(x);
        if (u >= up)
            return (double)k;
    }
    return (double)(K1 + 1);
}

int drift_rand_lkj_cholesky(drift_rand *r, size_t K, double eta, double *L)
{
    if (!(eta > 0) || !isfinite(eta))
        return -1;
    memset(L, 0, K * K * sizeof *L);
    if (K)
        L[0] = 1;
    for (size_t i = 1; i < K; i++) {
        double s = 0;
        for (size_t j = 0; j < i; j++) {
            double b = eta + 0.5 * ((double)K - 2 - (double)j);
            double w = 2 * drift_rand_beta(r, b, b) - 1;
            double v = w * sqrt(fmax(1 - s, 0));
            L[i * K + j] = v;
            s += v * v;
        }
        L[i * K + i] = sqrt(fmax(1 - s, 0));
    }
    return 0;
}
