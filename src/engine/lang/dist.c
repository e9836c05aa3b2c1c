/* dist.c: log densities and partial derivatives of the language's
 * distributions (see dist.h), and digamma.  Each distribution is one
 * small function of one element; drift_dist_rows runs it over blocks of
 * rows with the switch outside the loop.  Not for graph bookkeeping. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "kern.h"
#include "vmath.h"

#define LOG_SQRT_2PI 0.91893853320467274178
#define LOG_PI 1.14472988584940017414

double drift_lgamma(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

double drift_digamma(double x)
{
    if (isnan(x) || x == -INFINITY)
        return NAN;
    if (x == INFINITY)
        return INFINITY;
    double r = 0;
    if (x <= 0) {
        if (x == floor(x))
            return NAN; /* a pole */
        /* Reflection: psi(x) = psi(1 - x) - pi / tan(pi x). */
        r = -M_PI / tan(M_PI * x);
        x = 1 - x;
    }
    while (x < 10) {
        r -= 1 / x;
        x += 1;
    }
    /* Asymptotic series with Bernoulli numbers, enough terms for x >= 10. */
    double f = 1 / (x * x);
    double t = f * (-1.0 / 12 +
               f * (1.0 / 120 +
               f * (-1.0 / 252 +
               f * (1.0 / 240 +
               f * (-1.0 / 132 +
               f * (691.0 / 32760 +
               f * (-1.0 / 12)))))));
    return r + log(x) - 0.5 / x + t;
}

/* exp, log1p and the logistic function come from vmath.c (SLEEF where
 * the build has it), one element here as over blocks in the hot loops:
 * the same results either way. */
double drift_log1p_exp(double x)
{
    return (x > 0 ? x : 0) + drift_vmath_log1p1(drift_vmath_exp1(-fabs(x)));
}

double drift_inv_logit(double x) { return drift_vmath_logistic1(x); }

/* ---- log Phi ---------------------------------------------------------------- */

/* The Mills ratio R(x) = (1 - Phi(x)) / phi(x) for x >= 20 by its
 * continued fraction 1 / (x + 1 / (x + 2 / (x + 3 / (x + ...)))),
 * evaluated by the modified Lentz method. */
static double mills(double x)
{
    double f = x, c = x, d = 0;
    for (int k = 1; k < 500; k++) {
        d = x + k * d;
        d = d == 0 ? 1e-300 : 1 / d;
        c = x + k / c;
        double del = c * d;
        f *= del;
        if (fabs(del - 1) < 1e-16)
            break;
    }
    return 1 / f;
}

double drift_log_Phi(double z, double *dz)
{
    double lp, g;
    if (isnan(z)) {
        lp = g = NAN;
    } else if (z == INFINITY) {
        lp = 0;
        g = 0;
    } else if (z == -INFINITY) {
        lp = -INFINITY;
        g = INFINITY;
    } else if (z < -20) {
        /* Phi(z) = phi(z) R(-z): no erfc underflow however far out. */
        double r = mills(-z);
        lp = -0.5 * z * z - LOG_SQRT_2PI + log(r);
        g = 1 / r;
    } else if (z < 0) {
        lp = log(0.5 * erfc(-z * M_SQRT1_2));
        g = exp(-0.5 * z * z - LOG_SQRT_2PI - lp);
    } else {
        double q = 0.5 * erfc(z * M_SQRT1_2);
        lp = log1p(-q);
        g = exp(-0.5 * z * z - LOG_SQRT_2PI - lp);
    }
    if (dz)
        *dz = g;
    return lp;
}

/* ---- one element each ---------------------------------------------------- */

static inline double d_normal(const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0))
        return NAN;
    double is = 1 / s, z = (y - mu) * is;
    d[0] = -z * is;
    d[1] = z * is;
    d[2] = (z * z - 1) * is;
    return -0.5 * z * z - log(s) - LOG_SQRT_2PI;
}

static inline double d_student_t(const double *a, double *d)
{
    double y = a[0], nu = a[1], mu = a[2], s = a[3];
    if (!(s > 0) || !(nu > 0))
        return NAN;
    double z = (y - mu) / s, z2nu = z * z / nu, t = 1 + z2nu;
    double lt = log1p(z2nu);
    double lp = drift_lgamma(0.5 * (nu + 1)) - drift_lgamma(0.5 * nu) -
                0.5 * (log(nu) + LOG_PI) - log(s) - 0.5 * (nu + 1) * lt;
    double dz = -(nu + 1) * z / (nu * t);   /* d lp / d z */
    d[0] = dz / s;
    d[1] = 0.5 * (drift_digamma(0.5 * (nu + 1)) - drift_digamma(0.5 * nu)) -
           0.5 / nu - 0.5 * lt + 0.5 * (nu + 1) * z2nu / (nu * t);
    d[2] = -dz / s;
    d[3] = -1 / s - dz * z / s;
    return lp;
}

static inline double d_cauchy(const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (y - mu) / s, q = 1 + z * z;
    double dz = -2 * z / q;
    d[0] = dz / s;
    d[1] = -dz / s;
    d[2] = -1 / s - dz * z / s;
    return -LOG_PI - log(s) - log1p(z * z);
}

static inline double d_double_exponential(const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0))
        return NAN;
    double r = y - mu, sg = (r > 0) - (r < 0);
    d[0] = -sg / s;
    d[1] = sg / s;
    d[2] = -1 / s + fabs(r) / (s * s);
    return -M_LN2 - log(s) - fabs(r) / s;
}

static inline double d_logistic(const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (y - mu) / s;
    double dz = 1 - 2 * drift_inv_logit(z);
    d[0] = dz / s;
    d[1] = -dz / s;
    d[2] = -1 / s - dz * z / s;
    return -z - log(s) - 2 * drift_log1p_exp(-z);
}

static inline double d_lognormal(const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0) || !(y > 0))
        return NAN;
    double ly = log(y), z = (ly - mu) / s;
    d[0] = -(z / s + 1) / y;
    d[1] = z / s;
    d[2] = (z * z - 1) / s;
    return -0.5 * z * z - log(s) - LOG_SQRT_2PI - ly;
}

static inline double d_exponential(const double *a, double *d)
{
    double y = a[0], b = a[1];
    if (!(b > 0) || !(y >= 0))
        return NAN;
    d[0] = -b;
    d[1] = 1 / b - y;
    return log(b) - b * y;
}

static inline double d_gamma(const double *a, double *d)
{
    double y = a[0], al = a[1], b = a[2];
    if (!(al > 0) || !(b > 0) || !(y > 0))
        return NAN;
    double ly = log(y), lb = log(b);
    d[0] = (al - 1) / y - b;
    d[1] = lb - drift_digamma(al) + ly;
    d[2] = al / b - y;
    return al * lb - drift_lgamma(al) + (al - 1) * ly - b * y;
}

static inline double d_inv_gamma(const double *a, double *d)
{
    double y = a[0], al = a[1], b = a[2];
    if (!(al > 0) || !(b > 0) || !(y > 0))
        return NAN;
    double ly = log(y), lb = log(b);
    d[0] = -(al + 1) / y + b / (y * y);
    d[1] = lb - drift_digamma(al) - ly;
    d[2] = al / b - 1 / y;
    return al * lb - drift_lgamma(al) - (al + 1) * ly - b / y;
}

static inline double d_beta(const double *a, double *d)
{
    double y = a[0], al = a[1], be = a[2];
    if (!(al > 0) || !(be > 0) || !(y > 0) || !(y < 1))
        return NAN;
    double ly = log(y), l1y = log1p(-y), pab = drift_digamma(al + be);
    d[0] = (al - 1) / y - (be - 1) / (1 - y);
    d[1] = pab - drift_digamma(al) + ly;
    d[2] = pab - drift_digamma(be) + l1y;
    return drift_lgamma(al + be) - drift_lgamma(al) - drift_lgamma(be) +
           (al - 1) * ly + (be - 1) * l1y;
}

static inline double d_uniform(const double *a, double *d)
{
    double y = a[0], lo = a[1], hi = a[2];
    if (!(lo < hi) || !(y >= lo) || !(y <= hi))
        return NAN;
    double w = hi - lo;
    d[0] = 0;
    d[1] = 1 / w;
    d[2] = -1 / w;
    return -log(w);
}

static inline double d_bernoulli(const double *a, double *d)
{
    double y = a[0], p = a[1];
    if (!(p >= 0) || !(p <= 1) || (y != 0 && y != 1))
        return NAN;
    d[0] = 0;
    if (y == 1) {
        d[1] = 1 / p;
        return log(p);
    }
    d[1] = -1 / (1 - p);
    return log1p(-p);
}

static inline double d_bernoulli_logit(const double *a, double *d)
{
    double y = a[0], z = a[1];
    if (y != 0 && y != 1)
        return NAN;
    /* One exp serves both log(1 + e^z) and the logistic function. */
    double e = drift_vmath_exp1(-fabs(z));
    double sig = z >= 0 ? 1 / (1 + e) : e / (1 + e);
    d[0] = 0;
    d[1] = y - sig;
    return y * z - (z > 0 ? z : 0) - drift_vmath_log1p1(e);
}

static inline double d_binomial_logit(const double *a, double *d)
{
    double y = a[0], n = a[1], z = a[2];
    if (!(n >= 0) || !(y >= 0) || !(y <= n) || y != floor(y) ||
        n != floor(n))
        return NAN;
    double e = drift_vmath_exp1(-fabs(z));
    double sig = z >= 0 ? 1 / (1 + e) : e / (1 + e);
    double l1pe = (z > 0 ? z : 0) + drift_vmath_log1p1(e);
    d[0] = 0;
    d[1] = 0;
    d[2] = y - n * sig;
    return drift_lgamma(n + 1) - drift_lgamma(y + 1) -
           drift_lgamma(n - y + 1) + y * z - n * l1pe;
}

static inline double d_poisson(const double *a, double *d)
{
    double y = a[0], lam = a[1];
    if (!(y >= 0) || y != floor(y) || !(lam >= 0))
        return NAN;
    d[0] = 0;
    if (lam == 0) {
        d[1] = y == 0 ? -1 : INFINITY;
        return y == 0 ? 0 : -INFINITY;
    }
    d[1] = y / lam - 1;
    return y * log(lam) - lam - drift_lgamma(y + 1);
}

static inline double d_poisson_log(const double *a, double *d)
{
    double y = a[0], al = a[1];
    if (!(y >= 0) || y != floor(y))
        return NAN;
    double ea = exp(al);
    d[0] = 0;
    d[1] = y - ea;
    return y * al - ea - drift_lgamma(y + 1);
}

static inline double lchoose(double n, double k)
{
    return drift_lgamma(n + 1) - drift_lgamma(k + 1) - drift_lgamma(n - k + 1);
}

/* lgamma(a + n) - lgamma(a) for a count n, without the cancellation of
 * the difference when a is large and n small. */
static inline double lgamma_rise(double a, double n)
{
    if (n <= 64 && a > 16) {
        double s = 0;
        for (double j = 0; j < n; j++)
            s += log(a + j);
        return s;
    }
    return drift_lgamma(a + n) - drift_lgamma(a);
}

static int is_count(double y)
{
    return y >= 0 && y == floor(y);
}

static inline double d_binomial(const double *a, double *d)
{
    double y = a[0], n = a[1], p = a[2];
    if (!is_count(n) || !is_count(y) || !(y <= n) || !(p >= 0) ||
        !(p <= 1))
        return NAN;
    d[0] = d[1] = 0;
    double lp = lchoose(n, y), g = 0;
    if (y > 0) {
        lp += y * log(p);
        g += y / p;
    }
    if (n - y > 0) {
        lp += (n - y) * log1p(-p);
        g -= (n - y) / (1 - p);
    }
    d[2] = g;
    return lp;
}

/* neg_binomial(y | alpha, beta): Gamma(alpha, beta) mixture of Poissons. */
static inline double d_neg_binomial(const double *a, double *d)
{
    double y = a[0], al = a[1], be = a[2];
    if (!is_count(y) || !(al > 0) || !(be > 0))
        return NAN;
    double l1b = log1p(be);
    d[0] = 0;
    d[1] = drift_digamma(y + al) - drift_digamma(al) + log(be) - l1b;
    d[2] = al / be - (al + y) / (1 + be);
    return drift_lgamma(y + al) - drift_lgamma(y + 1) - drift_lgamma(al) +
           al * (log(be) - l1b) - y * l1b;
}

static inline double d_neg_binomial_2(const double *a, double *d)
{
    double y = a[0], mu = a[1], phi = a[2];
    if (!is_count(y) || !(mu > 0) || !(phi > 0))
        return NAN;
    double mp = mu + phi, lmp = log(mp);
    d[0] = 0;
    d[1] = y / mu - (y + phi) / mp;
    d[2] = drift_digamma(y + phi) - drift_digamma(phi) + log(phi) + 1 - lmp -
           (y + phi) / mp;
    /* phi log(phi / (mu + phi)) = -phi log1p(mu / phi): no cancellation
     * for large phi. */
    return lgamma_rise(phi, y) - drift_lgamma(y + 1) +
           y * (log(mu) - lmp) - phi * log1p(mu / phi);
}

static inline double d_neg_binomial_2_log(const double *a, double *d)
{
    double y = a[0], eta = a[1], phi = a[2];
    if (!is_count(y) || !(phi > 0) || isnan(eta))
        return NAN;
    double lphi = log(phi);
    /* log(exp(eta) + phi) */
    double m = eta > lphi ? eta : lphi;
    double lmp = m + log1p(exp(-fabs(eta - lphi)));
    double q = drift_inv_logit(eta - lphi);  /* mu / (mu + phi) */
    d[0] = 0;
    d[1] = y - (y + phi) * q;
    d[2] = drift_digamma(y + phi) - drift_digamma(phi) + lphi + 1 - lmp -
           (y + phi) * exp(-lmp);
    return lgamma_rise(phi, y) - drift_lgamma(y + 1) + y * (eta - lmp) +
           phi * (lphi - lmp);
}

static inline double d_beta_binomial(const double *a, double *d)
{
    double y = a[0], n = a[1], al = a[2], be = a[3];
    if (!is_count(n) || !is_count(y) || !(y <= n) || !(al > 0) || !(be > 0))
        return NAN;
    double pn = drift_digamma(n + al + be), pab = drift_digamma(al + be);
    d[0] = d[1] = 0;
    d[2] = drift_digamma(y + al) - pn - drift_digamma(al) + pab;
    d[3] = drift_digamma(n - y + be) - pn - drift_digamma(be) + pab;
    return lchoose(n, y) + drift_lgamma(y + al) + drift_lgamma(n - y + be) -
           drift_lgamma(n + al + be) - drift_lgamma(al) - drift_lgamma(be) +
           drift_lgamma(al + be);
}

static inline double d_weibull(const double *a, double *d)
{
    double y = a[0], al = a[1], s = a[2];
    if (!(al > 0) || !(s > 0) || !(y >= 0))
        return NAN;
    double lr = log(y / s), p = pow(y / s, al);
    d[0] = (al - 1) / y - al / s * pow(y / s, al - 1);
    d[1] = 1 / al + lr - p * lr;
    d[2] = al / s * (p - 1);
    return log(al) - log(s) + (al - 1) * lr - p;
}

/* log I0(k) and I1(k) / I0(k), k >= 0: the power series below 30, the
 * asymptotic expansion of e^-k I_v(k) above. */
static void bessel_i01(double k, double *log_i0, double *ratio)
{
    if (k < 30) {
        double q = 0.25 * k * k, t0 = 1, t1 = 0.5 * k, s0 = 1, s1 = t1;
        for (int m = 1; m < 500; m++) {
            t0 *= q / ((double)m * m);
            t1 *= q / ((double)m * (m + 1));
            s0 += t0;
            s1 += t1;
            if (t0 < 1e-17 * s0 && t1 < 1e-17 * s1)
                break;
        }
        *log_i0 = log(s0);
        *ratio = s1 / s0;
        return;
    }
    double s[2];
    for (int v = 0; v < 2; v++) {
        double mu = 4.0 * v * v, t = 1, sum = 1;
        for (int j = 1; j < 40; j++) {
            double odd = 2.0 * j - 1;
            double nt = -t * (mu - odd * odd) / ((double)j * 8 * k);
            if (fabs(nt) > fabs(t))
                break;
            t = nt;
            sum += t;
            if (fabs(t) < 1e-17 * fabs(sum))
                break;
        }
        s[v] = sum;
    }
    *log_i0 = k - 0.5 * log(2 * M_PI * k) + log(s[0]);
    *ratio = s[1] / s[0];
}

static inline double d_von_mises(const double *a, double *d)
{
    double y = a[0], mu = a[1], k = a[2];
    if (!(k >= 0) || !isfinite(y) || !isfinite(mu) || !isfinite(k))
        return NAN;
    double li0, r, c = cos(y - mu), sn = sin(y - mu);
    bessel_i01(k, &li0, &r);
    d[0] = -k * sn;
    d[1] = k * sn;
    d[2] = c - r;
    return k * c - M_LN2 - LOG_PI - li0;
}

static inline double d_gumbel(const double *a, double *d)
{
    double y = a[0], mu = a[1], be = a[2];
    if (!(be > 0))
        return NAN;
    double z = (y - mu) / be, e = exp(-z);
    d[0] = (e - 1) / be;
    d[1] = -d[0];
    d[2] = (-1 + z - z * e) / be;
    return -log(be) - z - e;
}

static inline double d_chi_square(const double *a, double *d)
{
    double y = a[0], nu = a[1];
    if (!(nu > 0) || !(y > 0))
        return NAN;
    double h = 0.5 * nu, ly = log(y);
    d[0] = (h - 1) / y - 0.5;
    d[1] = 0.5 * (-M_LN2 - drift_digamma(h) + ly);
    return -h * M_LN2 - drift_lgamma(h) + (h - 1) * ly - 0.5 * y;
}

static inline double d_inv_chi_square(const double *a, double *d)
{
    double y = a[0], nu = a[1];
    if (!(nu > 0) || !(y > 0))
        return NAN;
    double h = 0.5 * nu, ly = log(y);
    d[0] = -(h + 1) / y + 0.5 / (y * y);
    d[1] = 0.5 * (-M_LN2 - drift_digamma(h) - ly);
    return -h * M_LN2 - drift_lgamma(h) - (h + 1) * ly - 0.5 / y;
}

static inline double d_scaled_inv_chi_square(const double *a, double *d)
{
    double y = a[0], nu = a[1], s = a[2];
    if (!(nu > 0) || !(s > 0) || !(y > 0))
        return NAN;
    double h = 0.5 * nu, ly = log(y), ls = log(s), q = h * s * s / y;
    d[0] = -(h + 1) / y + q / y;
    d[1] = 0.5 * (log(h) + 1 + 2 * ls - drift_digamma(h) - ly - s * s / y);
    d[2] = nu / s - nu * s / y;
    return h * log(h) - drift_lgamma(h) + nu * ls - (h + 1) * ly - q;
}

static inline double d_rayleigh(const double *a, double *d)
{
    double y = a[0], s = a[1];
    if (!(s > 0) || !(y >= 0))
        return NAN;
    double z = y / s;
    d[0] = 1 / y - z / s;
    d[1] = -2 / s + z * z / s;
    return log(y) - 2 * log(s) - 0.5 * z * z;
}

static inline double d_frechet(const double *a, double *d)
{
    double y = a[0], al = a[1], s = a[2];
    if (!(al > 0) || !(s > 0) || !(y > 0))
        return NAN;
    double lr = log(y / s), p = pow(y / s, -al);
    d[0] = -(al + 1) / y + al * p / y;
    d[1] = 1 / al - lr + p * lr;
    d[2] = al / s - al * p / s;
    return log(al) - log(s) - (1 + al) * lr - p;
}

static inline double d_std_normal(const double *a, double *d)
{
    double y = a[0];
    d[0] = -y;
    return -0.5 * y * y - LOG_SQRT_2PI;
}

double drift_dist_lpdf(drift_dist_id id, const double *a, double *d)
{
    double tmp[DRIFT_DIST_MAX_ARGS + 1];
    if (!d)
        d = tmp;
    switch (id) {
    case DRIFT_D_NORMAL: return d_normal(a, d);
    case DRIFT_D_STUDENT_T: return d_student_t(a, d);
    case DRIFT_D_CAUCHY: return d_cauchy(a, d);
    case DRIFT_D_DOUBLE_EXPONENTIAL: return d_double_exponential(a, d);
    case DRIFT_D_LOGISTIC: return d_logistic(a, d);
    case DRIFT_D_LOGNORMAL: return d_lognormal(a, d);
    case DRIFT_D_EXPONENTIAL: return d_exponential(a, d);
    case DRIFT_D_GAMMA: return d_gamma(a, d);
    case DRIFT_D_INV_GAMMA: return d_inv_gamma(a, d);
    case DRIFT_D_BETA: return d_beta(a, d);
    case DRIFT_D_UNIFORM: return d_uniform(a, d);
    case DRIFT_D_BERNOULLI: return d_bernoulli(a, d);
    case DRIFT_D_BERNOULLI_LOGIT: return d_bernoulli_logit(a, d);
    case DRIFT_D_BINOMIAL_LOGIT: return d_binomial_logit(a, d);
    case DRIFT_D_POISSON: return d_poisson(a, d);
    case DRIFT_D_POISSON_LOG: return d_poisson_log(a, d);
    case DRIFT_D_BINOMIAL: return d_binomial(a, d);
    case DRIFT_D_NEG_BINOMIAL: return d_neg_binomial(a, d);
    case DRIFT_D_NEG_BINOMIAL_2: return d_neg_binomial_2(a, d);
    case DRIFT_D_NEG_BINOMIAL_2_LOG: return d_neg_binomial_2_log(a, d);
    case DRIFT_D_BETA_BINOMIAL: return d_beta_binomial(a, d);
    case DRIFT_D_WEIBULL: return d_weibull(a, d);
    case DRIFT_D_VON_MISES: return d_von_mises(a, d);
    case DRIFT_D_GUMBEL: return d_gumbel(a, d);
    case DRIFT_D_CHI_SQUARE: return d_chi_square(a, d);
    case DRIFT_D_INV_CHI_SQUARE: return d_inv_chi_square(a, d);
    case DRIFT_D_SCALED_INV_CHI_SQUARE: return d_scaled_inv_chi_square(a, d);
    case DRIFT_D_RAYLEIGH: return d_rayleigh(a, d);
    case DRIFT_D_FRECHET: return d_frechet(a, d);
    case DRIFT_D_STD_NORMAL: return d_std_normal(a, d);
    default: break;
    }
    return NAN;
}

/* The loop over a block, for one element function f. */
static inline int block(double (*f)(const double *, double *), size_t rows,
                        size_t m, int n_in, const double *const *in,
                        const size_t *ld, const size_t *st, double *out,
                        double *const *part, size_t *bad_row,
                        size_t *bad_elem)
{
    double a[DRIFT_DIST_MAX_ARGS + 1], d[DRIFT_DIST_MAX_ARGS + 1];
    int ok = 1;
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t j = 0; j < m; j++) {
            for (int k = 0; k < n_in; k++)
                a[k] = in[k][r * ld[k] + j * st[k]];
            double lp = f(a, d);
            s += lp;
            if (part)
                for (int k = 0; k < n_in; k++)
                    if (part[k])
                        part[k][r * m + j] = d[k];
        }
        out[r] = s;
        if (!isfinite(s) && ok) {
            ok = 0;
            *bad_row = r;
            *bad_elem = 0;
            for (size_t j = 0; j < m; j++) {
                for (int k = 0; k < n_in; k++)
                    a[k] = in[k][r * ld[k] + j * st[k]];
                if (!isfinite(f(a, d))) {
                    *bad_elem = j;
                    break;
                }
            }
        }
    }
    return ok ? 0 : -1;
}

/* The hot case of logistic regression: one outcome per row, one
 * argument.  Each stretch of up to S rows is copied into contiguous
 * arrays (padded with zeros to a multiple of 8 rows), exp and log1p go
 * through the vector functions, the rest through drift_kern_logit. */
int drift_dist_bernoulli_logit_rows(size_t rows, const double *y, size_t ldy,
                                    const double *z, size_t ldz, double *out,
                                    double *dz, size_t *bad_row)
{
    enum { S = 256 };
    double zz[S], yy[S], e[S], l[S], lp[S], g[S];
    int ok = 1;
    for (size_t r0 = 0; r0 < rows; r0 += S) {
        size_t m = rows - r0 < S ? rows - r0 : S;
        for (size_t k = 0; k < m; k++) {
            zz[k] = z[(r0 + k) * ldz];
            yy[k] = y[(r0 + k) * ldy];
        }
        /* padded to whole vectors of 8 */
        size_t m8 = (m + 7) & ~(size_t)7;
        for (size_t k = m; k < m8; k++)
            zz[k] = yy[k] = 0;
        for (size_t k = 0; k < m8; k++)
            e[k] = -fabs(zz[k]);
        drift_vmath_exp(m8, e, e);
        drift_vmath_log1p(m8, e, l);
        double sum;
        int bad = drift_kern_logit(m, m8, zz, yy, e, l, lp, g, NULL, &sum);
        memcpy(out + r0, lp, m * sizeof *out);
        if (dz)
            memcpy(dz + r0, g, m * sizeof *dz);
        if (bad && ok) {
            for (size_t k = 0; k < m; k++)
                if (!isfinite(lp[k])) {
                    *bad_row = r0 + k;
                    ok = 0;
                    break;
                }
        }
    }
    return ok ? 0 : -1;
}

/* The hot case of priors: normal over m elements with mu and sigma shared
 * by the row's elements (w ~ normal(0, s) over a long vector), with
 * log(sigma) and 1/sigma taken once per row instead of once per element.
 * Returns -1 when a row's sum is not finite (the caller then runs the
 * general loop, which finds the element at fault). */
static int block_normal_shared(size_t rows, size_t m,
                               const double *const *in, const size_t *ld,
                               const size_t *st, double *out,
                               double *const *part)
{
    int ok = 1;
    for (size_t r = 0; r < rows; r++) {
        const double *yv = in[0] + r * ld[0];
        double mu = in[1][r * ld[1]], sg = in[2][r * ld[2]];
        if (!(sg > 0)) {
            ok = 0;
            continue;
        }
        double is = 1 / sg, ss = 0;
        double *p0 = part && part[0] ? part[0] + r * m : NULL;
        double *p1 = part && part[1] ? part[1] + r * m : NULL;
        double *p2 = part && part[2] ? part[2] + r * m : NULL;
        for (size_t j = 0; j < m; j++) {
            double z = (yv[j * st[0]] - mu) * is;
            ss += z * z;
            if (p0)
                p0[j] = -z * is;
            if (p1)
                p1[j] = z * is;
            if (p2)
                p2[j] = (z * z - 1) * is;
        }
        out[r] = -0.5 * ss - (double)m * (log(sg) + LOG_SQRT_2PI);
        ok &= isfinite(out[r]) != 0;
    }
    return ok ? 0 : -1;
}

/* The hot case of regressions: normal with one element a row and sigma
 * the same for every row (y ~ normal(mu_i, sigma)), with log(sigma) and
 * 1/sigma taken once instead of once per row; the values are d_normal's.
 * Returns -1 when some row is not finite (the caller then runs the
 * general loop, which finds the row at fault). */
static int block_normal_sigma1(size_t rows, const double *const *in,
                               const size_t *ld, double *out,
                               double *const *part)
{
    double sg = in[2][0];
    if (!(sg > 0))
        return -1;
    double is = 1 / sg, lg = log(sg);
    const double *y = in[0], *mu = in[1];
    size_t ly = ld[0], lm = ld[1];
    double *p0 = part ? part[0] : NULL, *p1 = part ? part[1] : NULL;
    double *p2 = part ? part[2] : NULL;
    int ok = 1;
    for (size_t r = 0; r < rows; r++) {
        double z = (y[r * ly] - mu[r * lm]) * is;
        if (p0)
            p0[r] = -z * is;
        if (p1)
            p1[r] = z * is;
        if (p2)
            p2[r] = (z * z - 1) * is;
        out[r] = -0.5 * z * z - lg - LOG_SQRT_2PI;
        ok &= isfinite(out[r]) != 0;
    }
    return ok ? 0 : -1;
}

int drift_dist_rows(drift_dist_id id, size_t rows, size_t m, int n_in,
                    const double *const *in, const size_t *ld,
                    const size_t *st, double *out, double *const *part,
                    size_t *bad_row, size_t *bad_elem)
{
    double (*f)(const double *, double *) = NULL;
    switch (id) {
    case DRIFT_D_NORMAL: f = d_normal; break;
    case DRIFT_D_STUDENT_T: f = d_student_t; break;
    case DRIFT_D_CAUCHY: f = d_cauchy; break;
    case DRIFT_D_DOUBLE_EXPONENTIAL: f = d_double_exponential; break;
    case DRIFT_D_LOGISTIC: f = d_logistic; break;
    case DRIFT_D_LOGNORMAL: f = d_lognormal; break;
    case DRIFT_D_EXPONENTIAL: f = d_exponential; break;
    case DRIFT_D_GAMMA: f = d_gamma; break;
    case DRIFT_D_INV_GAMMA: f = d_inv_gamma; break;
    case DRIFT_D_BETA: f = d_beta; break;
    case DRIFT_D_UNIFORM: f = d_uniform; break;
    case DRIFT_D_BERNOULLI: f = d_bernoulli; break;
    case DRIFT_D_BERNOULLI_LOGIT:
        if (m == 1) {
            *bad_elem = 0;
            return drift_dist_bernoulli_logit_rows(rows, in[0], ld[0], in[1],
                                                   ld[1], out,
                                                   part ? part[1] : NULL,
                                                   bad_row);
        }
        f = d_bernoulli_logit;
        break;
    case DRIFT_D_BINOMIAL_LOGIT: f = d_binomial_logit; break;
    case DRIFT_D_POISSON: f = d_poisson; break;
    case DRIFT_D_POISSON_LOG: f = d_poisson_log; break;
    case DRIFT_D_BINOMIAL: f = d_binomial; break;
    case DRIFT_D_NEG_BINOMIAL: f = d_neg_binomial; break;
    case DRIFT_D_NEG_BINOMIAL_2: f = d_neg_binomial_2; break;
    case DRIFT_D_NEG_BINOMIAL_2_LOG: f = d_neg_binomial_2_log; break;
    case DRIFT_D_BETA_BINOMIAL: f = d_beta_binomial; break;
    case DRIFT_D_WEIBULL: f = d_weibull; break;
    case DRIFT_D_VON_MISES: f = d_von_mises; break;
    case DRIFT_D_GUMBEL: f = d_gumbel; break;
    case DRIFT_D_CHI_SQUARE: f = d_chi_square; break;
    case DRIFT_D_INV_CHI_SQUARE: f = d_inv_chi_square; break;
    case DRIFT_D_SCALED_INV_CHI_SQUARE: f = d_scaled_inv_chi_square; break;
    case DRIFT_D_RAYLEIGH: f = d_rayleigh; break;
    case DRIFT_D_FRECHET: f = d_frechet; break;
    case DRIFT_D_STD_NORMAL: f = d_std_normal; break;
    default: return -1;
    }
    /* Each case its own instance of the loop, with f inlined. */
    switch (id) {
    case DRIFT_D_NORMAL:
        if (m > 1 && st[1] == 0 && st[2] == 0 &&
            block_normal_shared(rows, m, in, ld, st, out, part) == 0)
            return 0;
        if (m == 1 && ld[2] == 0 &&
            block_normal_sigma1(rows, in, ld, out, part) == 0)
            return 0;
        return block(d_normal, rows, m, n_in, in, ld, st, out, part, bad_row,
                     bad_elem);
    case DRIFT_D_BERNOULLI_LOGIT:
        return block(d_bernoulli_logit, rows, m, n_in, in, ld, st, out, part,
                     bad_row, bad_elem);
    case DRIFT_D_POISSON_LOG:
        return block(d_poisson_log, rows, m, n_in, in, ld, st, out, part,
                     bad_row, bad_elem);
    case DRIFT_D_NEG_BINOMIAL_2_LOG:
        return block(d_neg_binomial_2_log, rows, m, n_in, in, ld, st, out,
                     part, bad_row, bad_elem);
    default:
        return block(f, rows, m, n_in, in, ld, st, out, part, bad_row,
                     bad_elem);
    }
}

int drift_dist_catlogit(size_t rows, size_t K, const double *y, size_t ldy,
                        const double *eta, size_t lde, double *out,
                        double *soft, size_t *bad_row)
{
    int ok = 1;
    for (size_t r = 0; r < rows; r++) {
        const double *e = eta + r * lde;
        double yr = y[r * ldy];
        double mx = -INFINITY;
        for (size_t j = 0; j < K; j++)
            if (e[j] > mx)
                mx = e[j];
        double s = 0;
        for (size_t j = 0; j < K; j++)
            s += exp(e[j] - mx);
        double lse = mx + log(s);
        if (soft)
            for (size_t j = 0; j < K; j++)
                soft[r * K + j] = exp(e[j] - lse);
        if (!(yr >= 1) || !(yr <= (double)K) || yr != floor(yr) ||
            !isfinite(lse)) {
            out[r] = NAN;
            if (ok)
                *bad_row = r;
            ok = 0;
            continue;
        }
        out[r] = e[(size_t)yr - 1] - lse;
    }
    return ok ? 0 : -1;
}

double drift_dist_ordered(int probit, double y, double eta, const double *c,
                          size_t K1, double d[3])
{
    double tmp[3];
    if (!d)
        d = tmp;
    d[0] = d[1] = d[2] = 0;
    if (!(y >= 1) || !(y <= (double)K1 + 1) || y != floor(y) || isnan(eta))
        return NAN;
    size_t k = (size_t)y;
    double lo = k > 1 ? c[k - 2] : -INFINITY;
    double hi = k <= K1 ? c[k - 1] : INFINITY;
    if (!(lo < hi))
        return NAN;
    /* a = eta - lo > b = eta - hi; the probability F(a) - F(b) */
    double a = eta - lo, b = eta - hi, lp, da, db;
    if (!probit) {
        /* F(a) - F(b) = F(a) F(-b) (1 - e^(b - a)): no cancellation */
        double e = a - b; /* hi - lo > 0 */
        lp = -drift_log1p_exp(-a) - drift_log1p_exp(b) +
             (isinf(e) ? 0 : log(-expm1(-e)));
        double r = isinf(e) ? 0 : 1 / expm1(e);
        da = drift_inv_logit(-a) + r;
        db = -drift_inv_logit(b) - r;
    } else {
        /* in the upper tail as Phi(-b) - Phi(-a) */
        double l1, l2;
        if (b > 0) {
            l1 = drift_log_Phi(-b, NULL);
            l2 = drift_log_Phi(-a, NULL);
        } else {
            l1 = drift_log_Phi(a, NULL);
            l2 = drift_log_Phi(b, NULL);
        }
        double x = l2 - l1;
        lp = l1 + (x > -M_LN2 ? log(-expm1(x)) : log1p(-exp(x)));
        da = isinf(a) ? 0 : exp(-0.5 * a * a - LOG_SQRT_2PI - lp);
        db = isinf(b) ? 0 : -exp(-0.5 * b * b - LOG_SQRT_2PI - lp);
    }
    d[0] = da + db;
    d[1] = k > 1 ? -da : 0;
    d[2] = k <= K1 ? -db : 0;
    return lp;
}

void drift_dist_explain(drift_dist_id id, const double *a, char *buf,
                        size_t cap)
{
    const drift_dist *d = &drift_dists[id];
    double y = a[0];
    /* Argument domains first: they are the likelier mistake. */
    switch (id) {
    case DRIFT_D_NORMAL: case DRIFT_D_CAUCHY:
    case DRIFT_D_DOUBLE_EXPONENTIAL: case DRIFT_D_LOGISTIC:
    case DRIFT_D_LOGNORMAL:
        if (!(a[2] > 0)) {
            snprintf(buf, cap, "the scale %s must be positive, got %g",
                     d->arg_names[1], a[2]);
            return;
        }
        break;
    case DRIFT_D_STUDENT_T:
        if (!(a[1] > 0)) {
            snprintf(buf, cap, "the degrees of freedom nu must be positive, "
                               "got %g", a[1]);
            return;
        }
        if (!(a[3] > 0)) {
            snprintf(buf, cap, "the scale sigma must be positive, got %g",
                     a[3]);
            return;
        }
        break;
    case DRIFT_D_EXPONENTIAL:
        if (!(a[1] > 0)) {
            snprintf(buf, cap, "the rate beta must be positive, got %g",
                     a[1]);
            return;
        }
        break;
    case DRIFT_D_GAMMA: case DRIFT_D_INV_GAMMA: case DRIFT_D_BETA:
        for (int k = 1; k <= 2; k++)
            if (!(a[k] > 0)) {
                snprintf(buf, cap, "%s must be positive, got %g",
                         d->arg_names[k - 1], a[k]);
                return;
            }
        break;
    case DRIFT_D_UNIFORM:
        if (!(a[1] < a[2])) {
            snprintf(buf, cap, "the bounds must satisfy alpha < beta, got "
                               "%g and %g", a[1], a[2]);
            return;
        }
        break;
    case DRIFT_D_BERNOULLI:
        if (!(a[1] >= 0 && a[1] <= 1)) {
            snprintf(buf, cap, "the probability theta must be in [0, 1], "
                               "got %g", a[1]);
            return;
        }
        break;
    case DRIFT_D_BINOMIAL_LOGIT:
        if (!(a[1] >= 0) || a[1] != floor(a[1])) {
            snprintf(buf, cap, "the trial count n must be a non-negative "
                               "integer, got %g", a[1]);
            return;
        }
        break;
    case DRIFT_D_POISSON:
        if (!(a[1] >= 0)) {
            snprintf(buf, cap, "the rate lambda must be non-negative, got "
                               "%g", a[1]);
            return;
        }
        break;
    case DRIFT_D_BINOMIAL:
        if (!(a[2] >= 0 && a[2] <= 1)) {
            snprintf(buf, cap, "the probability theta must be in [0, 1], "
                               "got %g", a[2]);
            return;
        }
        __attribute__((fallthrough)); /* the trial count */
    case DRIFT_D_BETA_BINOMIAL:
        if (!(a[1] >= 0) || a[1] != floor(a[1])) {
            snprintf(buf, cap, "the trial count %s must be a non-negative "
                               "integer, got %g", d->arg_names[0], a[1]);
            return;
        }
        break;
    case DRIFT_D_VON_MISES:
        if (!(a[2] >= 0)) {
            snprintf(buf, cap, "the concentration kappa must be "
                               "non-negative, got %g", a[2]);
            return;
        }
        break;
    default:
        break;
    }
    /* The newer distributions: every argument after the first location
     * (or every one, for those without) must be positive. */
    int first_pos = 0;
    switch (id) {
    case DRIFT_D_NEG_BINOMIAL: case DRIFT_D_NEG_BINOMIAL_2:
    case DRIFT_D_WEIBULL: case DRIFT_D_CHI_SQUARE:
    case DRIFT_D_INV_CHI_SQUARE: case DRIFT_D_SCALED_INV_CHI_SQUARE:
    case DRIFT_D_RAYLEIGH: case DRIFT_D_FRECHET:
        first_pos = 1;
        break;
    case DRIFT_D_NEG_BINOMIAL_2_LOG: case DRIFT_D_GUMBEL:
        first_pos = 2;
        break;
    case DRIFT_D_BETA_BINOMIAL:
        first_pos = 2;
        break;
    default:
        break;
    }
    for (int k = first_pos; first_pos && k <= d->n_args; k++)
        if (!(a[k] > 0)) {
            snprintf(buf, cap, "%s must be positive, got %g",
                     d->arg_names[k - 1], a[k]);
            return;
        }
    switch (id) {
    default:
        break;
    }
    for (int k = 0; k <= d->n_args; k++)
        if (!isfinite(a[k])) {
            snprintf(buf, cap, "%s is %g", k ? d->arg_names[k - 1]
                                             : "the outcome", a[k]);
            return;
        }
    double tmp[DRIFT_DIST_MAX_ARGS + 1];
    double lp = drift_dist_lpdf(id, a, tmp);
    if (isnan(lp)) {
        if (id == DRIFT_D_BINOMIAL_LOGIT || id == DRIFT_D_BINOMIAL ||
            id == DRIFT_D_BETA_BINOMIAL)
            snprintf(buf, cap, "the outcome must be an integer from 0 to %s "
                               "= %g, got %g", d->arg_names[0], a[1], y);
        else if (id == DRIFT_D_UNIFORM)
            snprintf(buf, cap, "the outcome must lie in [%g, %g], got %g",
                     a[1], a[2], y);
        else
            snprintf(buf, cap, "the outcome must be %s, got %g",
                     d->support_text, y);
        return;
    }
    snprintf(buf, cap, "the log density is %g (outcome %g)", lp, y);
}
