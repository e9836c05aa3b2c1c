/* cdf.c: log cdfs and log complementary cdfs of the continuous
 * distributions with their partials (see cdf.h), and the special
 * functions behind them.  The derivatives of the incomplete gamma and
 * beta functions in their shapes come from carrying the derivative
 * through the series and continued fractions (forward mode by hand), so
 * they are as accurate as the values.  Not for densities (dist.c). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "cdf.h"
#include "dist.h"

#define LOG_SQRT_2PI 0.91893853320467274178
#define EPS 1e-16
#define FPMIN 1e-300
#define MAXIT 100000

/* log(1 - exp(x)) for x <= 0, accurate at both ends. */
static double log1m_exp(double x)
{
    if (x > -M_LN2)
        return log(-expm1(x));
    return log1p(-exp(x));
}

/* lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), Stirling's series,
 * for x >= 15 (the first omitted term is below 1e-16 there). */
static double stirling_corr(double x)
{
    double r = 1 / x, r2 = r * r;
    return r * (1.0 / 12 -
                r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 -
                                                           r2 / 1188))));
}

/* log(1 + t) - t, without the cancellation of the difference for small
 * t (the series there). */
static double log1pmx(double t)
{
    if (fabs(t) > 0.1)
        return log1p(t) - t;
    double s = 0, p = t;
    for (int k = 2; k < 40; k++) {
        p *= -t;
        double term = p / k;
        s += term;
        if (fabs(term) < 1e-17 * fabs(s))
            break;
    }
    return s;
}

/* log(x^a e^-x / Gamma(a + 1)): for a large shape the terms a log x, x and
 * lgamma(a + 1) are each of order a and cancel; Stirling's formula with
 * a log(x / a) - (x - a) = a log1pmx((x - a) / a) keeps the value to
 * double precision. */
static double gamma_pref(double a, double x)
{
    if (a < 15)
        return a * log(x) - x - drift_lgamma(a + 1);
    return a * log1pmx((x - a) / a) - 0.5 * log(a) - LOG_SQRT_2PI -
           stirling_corr(a);
}

/* ---- the incomplete gamma function ------------------------------------------ */

/* log S and d/da log S for the series P(a, x) = x^a e^-x / Gamma(a + 1) S,
 * S = sum_n x^n / ((a + 1) ... (a + n)); for x < a + 1. */
static void gamma_series(double a, double x, double *ls, double *dls)
{
    double t = 1, dt = 0, s = 1, ds = 0;
    for (int n = 1; n < MAXIT; n++) {
        double ap = a + n, r = x / ap, dr = -r / ap;
        dt = dt * r + t * dr;
        t *= r;
        s += t;
        ds += dt;
        if (t < s * EPS && fabs(dt) < (fabs(ds) + s) * EPS)
            break;
    }
    *ls = log(s);
    *dls = ds / s;
}

/* log h and d/da log h for the continued fraction Q(a, x) = x^a e^-x /
 * Gamma(a) h, for x >= a + 1 (modified Lentz, each quantity with its
 * derivative in a). */
static void gamma_cf(double a, double x, double *lh, double *dlh)
{
    double b = x + 1 - a, db = -1;
    double c = 1 / FPMIN, dc = 0;
    double d = 1 / b, dd = -db / (b * b);
    double h = d, dl = dd / d;
    for (int i = 1; i < MAXIT; i++) {
        double an = -i * (i - a), dan = i;
        b += 2;
        double dn = an * d + b, ddn = dan * d + an * dd + db;
        if (fabs(dn) < FPMIN)
            dn = FPMIN, ddn = 0;
        double cn = b + an / c, dcn = db + dan / c - an * dc / (c * c);
        if (fabs(cn) < FPMIN)
            cn = FPMIN, dcn = 0;
        d = 1 / dn;
        dd = -ddn / (dn * dn);
        c = cn;
        dc = dcn;
        double del = d * c, ddel = dd * c + d * dc;
        h *= del;
        dl += ddel / del;
        if (fabs(del - 1) < EPS && fabs(ddel) < EPS * (1 + fabs(dl)))
            break;
    }
    *lh = log(h);
    *dlh = dl;
}

int drift_cdf_log_inc_gamma(double a, double x, double *lp, double dp[2],
                            double *lq, double dq[2])
{
    double vp, vq, gp[2], gq[2];
    int rc = 0;
    if (!(a > 0) || !(x >= 0) || isinf(a)) {
        vp = vq = gp[0] = gp[1] = gq[0] = gq[1] = NAN;
        rc = -1;
    } else if (x == 0) {
        vp = -INFINITY;
        vq = 0;
        gp[0] = gp[1] = gq[0] = 0;
        gq[1] = a == 1 ? -1 : a > 1 ? 0 : -INFINITY;
    } else if (x == INFINITY) {
        vp = 0;
        vq = -INFINITY;
        gp[0] = gp[1] = gq[0] = gq[1] = 0;
    } else {
        double lx = log(x), pref = gamma_pref(a, x);
        /* log of the density of Gamma(a, 1) at x */
        double ld = pref + log(a) - lx;
        if (x < a + 1) {
            double ls, dls;
            gamma_series(a, x, &ls, &dls);
            vp = pref + ls;
            gp[0] = lx - drift_digamma(a + 1) + dls;
            gp[1] = exp(ld - vp);
            vq = log1m_exp(vp);
            double w = exp(vp - vq);
            gq[0] = -w * gp[0];
            gq[1] = -exp(ld - vq);
        } else {
            double lh, dlh;
            gamma_cf(a, x, &lh, &dlh);
            vq = pref + log(a) + lh;
            gq[0] = lx - drift_digamma(a) + dlh;
            gq[1] = -exp(ld - vq);
            vp = log1m_exp(vq);
            double w = exp(vq - vp);
            gp[0] = -w * gq[0];
            gp[1] = exp(ld - vp);
        }
        if (vq == -INFINITY)
            gq[0] = gq[1] = gp[0] = gp[1] = 0;
    }
    if (lp)
        *lp = vp;
    if (lq)
        *lq = vq;
    if (dp)
        memcpy(dp, gp, sizeof gp);
    if (dq)
        memcpy(dq, gq, sizeof gq);
    return rc;
}

/* ---- the incomplete beta function ------------------------------------------- */

/* A value with its partials in two shapes a and b. */
typedef struct d2 {
    double v, a, b;
} d2;

static inline d2 d2_mul(d2 x, d2 y)
{
    return (d2){x.v * y.v, x.a * y.v + x.v * y.a, x.b * y.v + x.v * y.b};
}

static inline d2 d2_div(d2 x, d2 y)
{
    double q = x.v / y.v;
    return (d2){q, (x.a - q * y.a) / y.v, (x.b - q * y.b) / y.v};
}

static inline d2 d2_addc(d2 x, double c)
{
    return (d2){x.v + c, x.a, x.b};
}

static inline d2 d2_scale(d2 x, double c)
{
    return (d2){x.v * c, x.a * c, x.b * c};
}

static inline d2 d2_guard(d2 x)
{
    if (fabs(x.v) < FPMIN)
        return (d2){FPMIN, 0, 0};
    return x;
}

/* log B(a, b) without the cancellation of lgamma(a) + lgamma(b) -
 * lgamma(a + b) when a or b is large (a shape of 1e4 loses 1e-11 there):
 * the large terms of Stirling's formula cancelled by hand. */
static double lbeta(double a, double b)
{
    double lo = a < b ? a : b, hi = a < b ? b : a;
    if (hi < 15)
        return drift_lgamma(a) + drift_lgamma(b) - drift_lgamma(a + b);
    double s = lo + hi;
    /* lgamma(hi) - lgamma(s) */
    double d = -(hi - 0.5) * log1p(lo / hi) - lo * log(s) + lo +
               stirling_corr(hi) - stirling_corr(s);
    if (lo < 15)
        return drift_lgamma(lo) + d;
    /* lgamma(lo) too by Stirling: (lo - 1/2) log lo - lo + log(2 pi) / 2 */
    return (lo - 0.5) * log(lo) - lo + LOG_SQRT_2PI + stirling_corr(lo) + d;
}

/* log h and its partials in a and b for the continued fraction
 * I_x(a, b) = x^a y^b / (a B(a, b)) h, for x < (a + 1) / (a + b + 2)
 * (modified Lentz, as Numerical Recipes' betacf, with the partials
 * carried along). */
static void beta_cf(double a0, double b0, double x, double *lh, double dlh[2])
{
    d2 A = {a0, 1, 0}, B = {b0, 0, 1};
    d2 qab = {a0 + b0, 1, 1}, qap = d2_addc(A, 1), qam = d2_addc(A, -1);
    d2 one = {1, 0, 0};
    d2 c = one;
    d2 d = d2_guard(d2_addc(d2_scale(d2_div(qab, qap), -x), 1));
    d = d2_div(one, d);
    double lv = log(d.v), la = d.a / d.v, lb = d.b / d.v;
    for (int m = 1; m < MAXIT; m++) {
        double m2 = 2.0 * m;
        d2 aa = d2_div(d2_scale(d2_addc(B, -m), m * x),
                       d2_mul(d2_addc(qam, m2), d2_addc(A, m2)));
        d = d2_div(one, d2_guard(d2_addc(d2_mul(aa, d), 1)));
        c = d2_guard(d2_addc(d2_div(aa, c), 1));
        d2 del = d2_mul(d, c);
        lv += log(del.v);
        la += del.a / del.v;
        lb += del.b / del.v;
        aa = d2_div(d2_scale(d2_mul(d2_addc(A, m), d2_addc(qab, m)), -x),
                    d2_mul(d2_addc(A, m2), d2_addc(qap, m2)));
        d = d2_div(one, d2_guard(d2_addc(d2_mul(aa, d), 1)));
        c = d2_guard(d2_addc(d2_div(aa, c), 1));
        del = d2_mul(d, c);
        lv += log(del.v);
        la += del.a / del.v;
        lb += del.b / del.v;
        if (fabs(del.v - 1) < EPS &&
            fabs(del.a) + fabs(del.b) < EPS * (1 + fabs(la) + fabs(lb)))
            break;
    }
    *lh = lv;
    dlh[0] = la;
    dlh[1] = lb;
}

/* log I_x(a, b) by the continued fraction, x on its convergent side;
 * d = {d/da, d/db, d/dx}; ld the log of the Beta(a, b) density at x. */
static double inc_beta_direct(double a, double b, double x, double y,
                              double d[3], double *ld)
{
    /* the logs from whichever of x and y is small (the other is 1 less
     * it): log x near 1 is then exact however large its multiplier a */
    double lx = x < 0.5 ? log(x) : log1p(-y), ly = y < 0.5 ? log(y) : log1p(-x);
    double lbe = lbeta(a, b);
    double pab = drift_digamma(a + b);
    double lh, dlh[2];
    beta_cf(a, b, x, &lh, dlh);
    double li = a * lx + b * ly - log(a) - lbe + lh;
    d[0] = lx - 1 / a - drift_digamma(a) + pab + dlh[0];
    d[1] = ly - drift_digamma(b) + pab + dlh[1];
    *ld = (a - 1) * lx + (b - 1) * ly - lbe;
    d[2] = exp(*ld - li);
    return li;
}

int drift_cdf_log_inc_beta(double a, double b, double x, double y,
                           double *lo, double dlo[3], double *up,
                           double dup[3])
{
    double vl, vu, gl[3] = {0, 0, 0}, gu[3] = {0, 0, 0};
    int rc = 0;
    if (!(a > 0) || !(b > 0) || isinf(a) || isinf(b) || !(x >= 0) ||
        !(y >= 0) || !(x <= 1) || !(y <= 1)) {
        vl = vu = NAN;
        for (int k = 0; k < 3; k++)
            gl[k] = gu[k] = NAN;
        rc = -1;
    } else if (x == 0) {
        vl = -INFINITY;
        vu = 0;
    } else if (y == 0) {
        vl = 0;
        vu = -INFINITY;
    } else if (x < (a + 1) / (a + b + 2)) {
        double ld;
        vl = inc_beta_direct(a, b, x, y, gl, &ld);
        vu = log1m_exp(vl);
        double w = exp(vl - vu);
        gu[0] = -w * gl[0];
        gu[1] = -w * gl[1];
        gu[2] = -exp(ld - vu);
    } else {
        /* I_x(a, b) = 1 - I_y(b, a) */
        double ld, g[3];
        vu = inc_beta_direct(b, a, y, x, g, &ld);
        gu[0] = g[1];
        gu[1] = g[0];
        gu[2] = -g[2];
        vl = log1m_exp(vu);
        double w = exp(vu - vl);
        gl[0] = -w * gu[0];
        gl[1] = -w * gu[1];
        gl[2] = exp(ld - vl);
    }
    if (lo)
        *lo = vl;
    if (up)
        *up = vu;
    if (dlo)
        memcpy(dlo, gl, sizeof gl);
    if (dup)
        memcpy(dup, gu, sizeof gu);
    return rc;
}

/* ---- one element ------------------------------------------------------------- */

/* From one tail's log l1 and its partials g1 over n inputs, the other
 * tail's: log(1 - exp(l1)), partials -exp(l1 - l2) g1. */
static double other_tail(double l1, const double *g1, int n, double *d)
{
    double l2 = log1m_exp(l1);
    double w = isfinite(l2) ? exp(l1 - l2) : 0;
    for (int k = 0; k < n; k++)
        d[k] = -w * g1[k];
    return l2;
}

/* The outcome lies below the support (cdf 0) or above it (cdf 1). */
static double outside(drift_cdf_tail tail, int above, int n, double *d)
{
    for (int k = 0; k < n; k++)
        d[k] = 0;
    int one = (tail == DRIFT_CDF_LOWER) == above;
    return one ? 0 : -INFINITY;
}

/* A location-scale family at z = (y - mu) / s: from the standard log cdf
 * l and its derivative g in z, the partials in y, mu and s. */
static double loc_scale(double l, double g, double z, double s, double *d)
{
    d[0] = g / s;
    d[1] = -g / s;
    d[2] = -g * z / s;
    return l;
}

/* Tail of a location-scale family whose standard lower log cdf at z is
 * known with derivative: converts to the requested tail. */
static double ls_tail(drift_cdf_tail tail, int have_lower, double l,
                      double g, double z, double s, double *d)
{
    double dd[3];
    loc_scale(l, g, z, s, dd);
    if ((tail == DRIFT_CDF_LOWER) == have_lower) {
        memcpy(d, dd, sizeof dd);
        return l;
    }
    return other_tail(l, dd, 3, d);
}

static double c_normal(drift_cdf_tail tail, const double *a, double *d)
{
    double s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (a[0] - a[1]) / s, g;
    double l = drift_log_Phi(tail == DRIFT_CDF_LOWER ? z : -z, &g);
    if (tail == DRIFT_CDF_UPPER)
        g = -g;
    return loc_scale(l, g, z, s, d);
}

static double c_std_normal(drift_cdf_tail tail, const double *a, double *d)
{
    double g, z = a[0];
    double l = drift_log_Phi(tail == DRIFT_CDF_LOWER ? z : -z, &g);
    d[0] = tail == DRIFT_CDF_LOWER ? g : -g;
    return l;
}

static double c_lognormal(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], mu = a[1], s = a[2];
    if (!(s > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double z = (log(y) - mu) / s, g;
    double l = drift_log_Phi(tail == DRIFT_CDF_LOWER ? z : -z, &g);
    if (tail == DRIFT_CDF_UPPER)
        g = -g;
    loc_scale(l, g, z, s, d);
    d[0] /= y;
    return l;
}

static double c_cauchy(drift_cdf_tail tail, const double *a, double *d)
{
    double s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (a[0] - a[1]) / s;
    /* F(z) = atan2(1, -z) / pi and 1 - F(z) = atan2(1, z) / pi: no
     * cancellation in either tail. */
    double t = tail == DRIFT_CDF_LOWER ? atan2(1, -z) : atan2(1, z);
    double g = 1 / ((1 + z * z) * t);
    /* near 1, log1p of the other tail */
    double l = log(t / M_PI);
    if (t > M_PI_2)
        l = log1p(-(tail == DRIFT_CDF_LOWER ? atan2(1, z) : atan2(1, -z)) /
                  M_PI);
    return loc_scale(l, tail == DRIFT_CDF_LOWER ? g : -g, z, s, d);
}

static double c_double_exponential(drift_cdf_tail tail, const double *a,
                                   double *d)
{
    double s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (a[0] - a[1]) / s;
    if (z < 0)
        return ls_tail(tail, 1, z - M_LN2, 1, z, s, d);
    return ls_tail(tail, 0, -z - M_LN2, -1, z, s, d);
}

static double c_logistic(drift_cdf_tail tail, const double *a, double *d)
{
    double s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (a[0] - a[1]) / s;
    if (tail == DRIFT_CDF_LOWER)
        return loc_scale(-drift_log1p_exp(-z), drift_inv_logit(-z), z, s, d);
    return loc_scale(-drift_log1p_exp(z), -drift_inv_logit(z), z, s, d);
}

static double c_gumbel(drift_cdf_tail tail, const double *a, double *d)
{
    double s = a[2];
    if (!(s > 0))
        return NAN;
    double z = (a[0] - a[1]) / s, e = exp(-z);
    return ls_tail(tail, 1, -e, e, z, s, d);
}

static double c_exponential(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], b = a[1];
    if (!(b > 0) || isnan(y))
        return NAN;
    if (y < 0)
        return outside(tail, 0, 2, d);
    double g[2] = {-b, -y};
    if (tail == DRIFT_CDF_UPPER) {
        memcpy(d, g, sizeof g);
        return -b * y;
    }
    return other_tail(-b * y, g, 2, d);
}

static double c_weibull(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], al = a[1], s = a[2];
    if (!(al > 0) || !(s > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double lr = log(y / s), p = exp(al * lr);
    double g[3] = {-al * p / y, -p * lr, al * p / s};
    if (tail == DRIFT_CDF_UPPER) {
        memcpy(d, g, sizeof g);
        return -p;
    }
    return other_tail(-p, g, 3, d);
}

static double c_rayleigh(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], s = a[1];
    if (!(s > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 2, d);
    double z = y / s;
    double g[2] = {-z / s, z * z / s};
    if (tail == DRIFT_CDF_UPPER) {
        memcpy(d, g, sizeof g);
        return -0.5 * z * z;
    }
    return other_tail(-0.5 * z * z, g, 2, d);
}

static double c_frechet(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], al = a[1], s = a[2];
    if (!(al > 0) || !(s > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double lr = log(y / s), p = exp(-al * lr);
    double g[3] = {al * p / y, p * lr, -al * p / s};
    if (tail == DRIFT_CDF_LOWER) {
        memcpy(d, g, sizeof g);
        return -p;
    }
    return other_tail(-p, g, 3, d);
}

static double c_uniform(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], lo = a[1], hi = a[2];
    if (!(lo < hi) || isnan(y) || isinf(lo) || isinf(hi))
        return NAN;
    if (y <= lo)
        return outside(tail, 0, 3, d);
    if (y >= hi)
        return outside(tail, 1, 3, d);
    double w = hi - lo;
    if (tail == DRIFT_CDF_LOWER) {
        d[0] = 1 / (y - lo);
        d[1] = -1 / (y - lo) + 1 / w;
        d[2] = -1 / w;
        return log((y - lo) / w);
    }
    d[0] = -1 / (hi - y);
    d[1] = 1 / w;
    d[2] = 1 / (hi - y) - 1 / w;
    return log((hi - y) / w);
}

/* F(y) = P(a, x) (lower = 1) or Q(a, x) (lower = 0), x = x(y, args):
 * the requested tail and its partials in the shape a and in x. */
static double gamma_tail(drift_cdf_tail tail, int lower, double a, double x,
                         double *ga, double *gx)
{
    double lp, lq, dp[2], dq[2];
    *ga = *gx = NAN;
    if (drift_cdf_log_inc_gamma(a, x, &lp, dp, &lq, dq))
        return NAN;
    int p = (tail == DRIFT_CDF_LOWER) == lower;
    *ga = p ? dp[0] : dq[0];
    *gx = p ? dp[1] : dq[1];
    return p ? lp : lq;
}

static double c_gamma(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], al = a[1], b = a[2];
    if (!(al > 0) || !(b > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double ga, gx, l = gamma_tail(tail, 1, al, b * y, &ga, &gx);
    d[0] = gx * b;
    d[1] = ga;
    d[2] = gx * y;
    return l;
}

static double c_inv_gamma(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], al = a[1], b = a[2];
    if (!(al > 0) || !(b > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double ga, gx, l = gamma_tail(tail, 0, al, b / y, &ga, &gx);
    d[0] = -gx * b / (y * y);
    d[1] = ga;
    d[2] = gx / y;
    return l;
}

static double c_chi_square(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], nu = a[1];
    if (!(nu > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 2, d);
    double ga, gx, l = gamma_tail(tail, 1, 0.5 * nu, 0.5 * y, &ga, &gx);
    d[0] = 0.5 * gx;
    d[1] = 0.5 * ga;
    return l;
}

static double c_inv_chi_square(drift_cdf_tail tail, const double *a,
                               double *d)
{
    double y = a[0], nu = a[1];
    if (!(nu > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 2, d);
    double ga, gx, l = gamma_tail(tail, 0, 0.5 * nu, 0.5 / y, &ga, &gx);
    d[0] = -0.5 * gx / (y * y);
    d[1] = 0.5 * ga;
    return l;
}

static double c_scaled_inv_chi_square(drift_cdf_tail tail, const double *a,
                                      double *d)
{
    double y = a[0], nu = a[1], s = a[2];
    if (!(nu > 0) || !(s > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    double x = 0.5 * nu * s * s / y;
    double ga, gx, l = gamma_tail(tail, 0, 0.5 * nu, x, &ga, &gx);
    d[0] = -gx * x / y;
    d[1] = 0.5 * ga + gx * 0.5 * s * s / y;
    d[2] = gx * nu * s / y;
    return l;
}

static double c_beta(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], al = a[1], be = a[2];
    if (!(al > 0) || !(be > 0) || isnan(y))
        return NAN;
    if (y <= 0)
        return outside(tail, 0, 3, d);
    if (y >= 1)
        return outside(tail, 1, 3, d);
    double lo, up, dlo[3], dup[3];
    if (drift_cdf_log_inc_beta(al, be, y, 1 - y, &lo, dlo, &up, dup))
        return NAN;
    const double *g = tail == DRIFT_CDF_LOWER ? dlo : dup;
    d[0] = g[2];
    d[1] = g[0];
    d[2] = g[1];
    return tail == DRIFT_CDF_LOWER ? lo : up;
}

/* Student's t: for u = -|z| <= 0, F(u) = I_x(nu / 2, 1 / 2) / 2 with
 * x = nu / (nu + u^2), 1 - x = u^2 / (nu + u^2) computed apart; the
 * other tail by symmetry. */
static double c_student_t(drift_cdf_tail tail, const double *a, double *d)
{
    double y = a[0], nu = a[1], mu = a[2], s = a[3];
    if (!(nu > 0) || !(s > 0) || isnan(y) || isinf(nu))
        return NAN;
    double z = (y - mu) / s, u = -fabs(z);
    double lf, gu, gnu; /* log F(u) and its partials in u and nu */
    if (nu > 4e5 && isfinite(u)) {
        /* Phi(u (1 - v) / sqrt(1 + 2 u^2 v)), v = 1 / (4 nu)
         * (Abramowitz and Stegun 26.7.8, as R's pt: error O(1 / nu^2)).
         * The incomplete beta function with a shape of nu / 2 would
         * carry nu * 1e-16 from x = nu / (nu + u^2) near 1. */
        double v = 0.25 / nu, q = 1 + 2 * u * u * v, sq = sqrt(q);
        double zz = u * (1 - v) / sq, g;
        lf = drift_log_Phi(zz, &g);
        gu = g * (1 - v) / (q * sq);
        gnu = g * (u / sq + u * u * u * (1 - v) / (q * sq)) * v / nu;
    } else if (u == 0) {
        lf = -M_LN2;
        gu = exp(drift_lgamma(0.5 * (nu + 1)) - drift_lgamma(0.5 * nu) -
                 0.5 * log(nu * M_PI)) * 2;
        gnu = 0;
    } else if (isinf(u)) {
        lf = -INFINITY;
        gu = gnu = 0;
    } else {
        double u2 = u * u, den = nu + u2;
        double x = nu / den, w = u2 / den;
        if (isinf(u2)) {
            x = 0;
            w = 1;
        }
        double lo, dlo[3];
        if (drift_cdf_log_inc_beta(0.5 * nu, 0.5, x, w, &lo, dlo, NULL,
                                   NULL))
            return NAN;
        lf = lo - M_LN2;
        /* d log F / du = t density / F */
        double lpdf = drift_lgamma(0.5 * (nu + 1)) - drift_lgamma(0.5 * nu) -
                      0.5 * log(nu * M_PI) - 0.5 * (nu + 1) * log1p(u2 / nu);
        gu = exp(lpdf - lf);
        /* dx/dnu = x w / nu; dlo[2] * x w / nu without 0 * inf */
        double lbe = lbeta(0.5 * nu, 0.5);
        double dxnu = x > 0 ? exp(0.5 * nu * log(x) + 0.5 * log(w) - lbe -
                                  lo) / nu
                            : 0;
        gnu = 0.5 * dlo[0] + dxnu;
    }
    /* the requested tail at z: lower at z < 0 is F(u); upper at z > 0 is
     * F(u) too (symmetry); otherwise 1 - F(u) */
    int direct = (tail == DRIFT_CDF_LOWER) == (z <= 0);
    double gz = z <= 0 ? gu : -gu; /* d log F(u) / dz */
    double g3[2] = {gz, gnu}, l = lf;
    if (!direct)
        l = other_tail(lf, (double[2]){gz, gnu}, 2, g3);
    d[0] = g3[0] / s;
    d[1] = g3[1];
    d[2] = -g3[0] / s;
    d[3] = -g3[0] * z / s;
    return l;
}

/* ---- the discrete distributions: P(Y <= n) at an int n ------------------- */

static double c_bernoulli(drift_cdf_tail tail, const double *a, double *d)
{
    double n = a[0], p = a[1];
    if (!(p >= 0) || !(p <= 1) || isnan(n))
        return NAN;
    if (n < 0)
        return outside(tail, 0, 2, d);
    if (n >= 1)
        return outside(tail, 1, 2, d);
    d[0] = 0;
    if (tail == DRIFT_CDF_LOWER) {
        d[1] = -1 / (1 - p);
        return log1p(-p);
    }
    d[1] = 1 / p;
    return log(p);
}

static double c_poisson(drift_cdf_tail tail, const double *a, double *d)
{
    double n = floor(a[0]), lam = a[1];
    if (!(lam >= 0) || isnan(n) || isinf(lam))
        return NAN;
    if (n < 0)
        return outside(tail, 0, 2, d);
    /* P(Y <= n) = Q(n + 1, lambda) */
    double ga, gx, l = gamma_tail(tail, 0, n + 1, lam, &ga, &gx);
    d[0] = 0;
    d[1] = gx;
    return l;
}

/* F(n) = I_x(a, n + 1) with x and y = 1 - x apart: the requested tail
 * and its partials in a and x. */
static double beta_tail(drift_cdf_tail tail, double a, double b, double x,
                        double y, double *ga, double *gx)
{
    double lo, up, dlo[3], dup[3];
    *ga = *gx = NAN;
    if (drift_cdf_log_inc_beta(a, b, x, y, &lo, dlo, &up, dup))
        return NAN;
    const double *g = tail == DRIFT_CDF_LOWER ? dlo : dup;
    *ga = g[0];
    *gx = g[2];
    return tail == DRIFT_CDF_LOWER ? lo : up;
}

static double c_binomial(drift_cdf_tail tail, const double *a, double *d)
{
    double k = floor(a[0]), N = a[1], p = a[2];
    if (!(p >= 0) || !(p <= 1) || !(N >= 0) || N != floor(N) || isnan(k))
        return NAN;
    if (k < 0)
        return outside(tail, 0, 3, d);
    if (k >= N)
        return outside(tail, 1, 3, d);
    /* P(Y <= k) = I_{1-p}(N - k, k + 1) */
    double ga, gx, l = beta_tail(tail, N - k, k + 1, 1 - p, p, &ga, &gx);
    d[0] = d[1] = 0;
    d[2] = -gx;
    return l;
}

static double c_neg_binomial(drift_cdf_tail tail, const double *a, double *d)
{
    double n = floor(a[0]), al = a[1], be = a[2];
    if (!(al > 0) || !(be > 0) || isnan(n) || isinf(al) || isinf(be))
        return NAN;
    if (n < 0)
        return outside(tail, 0, 3, d);
    /* P(Y <= n) = I_p(alpha, n + 1), p = beta / (1 + beta) */
    double ga, gx;
    double l = beta_tail(tail, al, n + 1, be / (1 + be), 1 / (1 + be), &ga,
                         &gx);
    d[0] = 0;
    d[1] = ga;
    d[2] = gx / ((1 + be) * (1 + be));
    return l;
}

static double c_neg_binomial_2(drift_cdf_tail tail, const double *a,
                               double *d)
{
    double n = floor(a[0]), mu = a[1], phi = a[2];
    if (!(mu > 0) || !(phi > 0) || isnan(n) || isinf(mu) || isinf(phi))
        return NAN;
    if (n < 0)
        return outside(tail, 0, 3, d);
    /* P(Y <= n) = I_p(phi, n + 1), p = phi / (mu + phi) */
    double s = mu + phi, ga, gx;
    double l = beta_tail(tail, phi, n + 1, phi / s, mu / s, &ga, &gx);
    d[0] = 0;
    d[1] = -gx * phi / (s * s);
    d[2] = ga + gx * mu / (s * s);
    return l;
}

double drift_cdf_log(drift_dist_id id, drift_cdf_tail tail, const double *a,
                     double *d)
{
    double tmp[DRIFT_DIST_MAX_ARGS + 1];
    if (!d)
        d = tmp;
    switch (id) {
    case DRIFT_D_NORMAL: return c_normal(tail, a, d);
    case DRIFT_D_STD_NORMAL: return c_std_normal(tail, a, d);
    case DRIFT_D_STUDENT_T: return c_student_t(tail, a, d);
    case DRIFT_D_CAUCHY: return c_cauchy(tail, a, d);
    case DRIFT_D_DOUBLE_EXPONENTIAL: return c_double_exponential(tail, a, d);
    case DRIFT_D_LOGISTIC: return c_logistic(tail, a, d);
    case DRIFT_D_LOGNORMAL: return c_lognormal(tail, a, d);
    case DRIFT_D_EXPONENTIAL: return c_exponential(tail, a, d);
    case DRIFT_D_GAMMA: return c_gamma(tail, a, d);
    case DRIFT_D_INV_GAMMA: return c_inv_gamma(tail, a, d);
    case DRIFT_D_BETA: return c_beta(tail, a, d);
    case DRIFT_D_UNIFORM: return c_uniform(tail, a, d);
    case DRIFT_D_WEIBULL: return c_weibull(tail, a, d);
    case DRIFT_D_GUMBEL: return c_gumbel(tail, a, d);
    case DRIFT_D_CHI_SQUARE: return c_chi_square(tail, a, d);
    case DRIFT_D_INV_CHI_SQUARE: return c_inv_chi_square(tail, a, d);
    case DRIFT_D_SCALED_INV_CHI_SQUARE:
        return c_scaled_inv_chi_square(tail, a, d);
    case DRIFT_D_RAYLEIGH: return c_rayleigh(tail, a, d);
    case DRIFT_D_FRECHET: return c_frechet(tail, a, d);
    case DRIFT_D_BERNOULLI: return c_bernoulli(tail, a, d);
    case DRIFT_D_POISSON: return c_poisson(tail, a, d);
    case DRIFT_D_BINOMIAL: return c_binomial(tail, a, d);
    case DRIFT_D_NEG_BINOMIAL: return c_neg_binomial(tail, a, d);
    case DRIFT_D_NEG_BINOMIAL_2: return c_neg_binomial_2(tail, a, d);
    default: return NAN;
    }
}

int drift_cdf_rows(drift_dist_id id, drift_cdf_tail tail, size_t rows,
                   size_t m, int n_in, const double *const *in,
                   const size_t *ld, const size_t *st, double *out,
                   double *const *part, size_t *bad_row, size_t *bad_elem)
{
    double a[DRIFT_DIST_MAX_ARGS + 1], d[DRIFT_DIST_MAX_ARGS + 1];
    int ok = 1;
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t j = 0; j < m; j++) {
            for (int k = 0; k < n_in; k++)
                a[k] = in[k][r * ld[k] + j * st[k]];
            double lp = drift_cdf_log(id, tail, a, d);
            s += lp;
            if (!isfinite(lp) && ok) {
                ok = 0;
                *bad_row = r;
                *bad_elem = j;
            }
            if (part)
                for (int k = 0; k < n_in; k++)
                    if (part[k])
                        part[k][r * m + j] = d[k];
        }
        out[r] = s;
    }
    return ok ? 0 : -1;
}
