/* summary.c: the statistics of `drift summary`: effective sample sizes
 * (Geyer's initial monotone sequence over FFT autocovariances, pooled
 * across chains), rank-normalised split R-hat, quantiles and MCSE, each
 * following the definitions of R's posterior package 1.4 step by step so
 * that the numbers agree to rounding.  Not for file formats or printing. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "summary.h"

/* ---- small helpers ------------------------------------------------------ */

/* Set when an allocation fails on this thread, so that
 * drift_summary_compute can report it instead of printing NA. */
static __thread int out_of_memory;

static void *s_malloc(size_t count, size_t size)
{
    void *p = drift_malloc_array(count, size);
    if (!p)
        out_of_memory = 1;
    return p;
}

static void *s_calloc(size_t count, size_t size)
{
    void *p = drift_calloc(count, size);
    if (!p)
        out_of_memory = 1;
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* posterior's should_return_NA: a non-finite value, or a constant. */
static int should_na(const double *x, size_t m)
{
    if (m == 0)
        return 1;
    double lo = x[0], hi = x[0];
    for (size_t i = 0; i < m; i++) {
        if (!isfinite(x[i]))
            return 1;
        if (x[i] < lo)
            lo = x[i];
        if (x[i] > hi)
            hi = x[i];
    }
    return fabs(hi - lo) < DBL_EPSILON;
}

static double mean_of(const double *x, size_t m)
{
    double s = 0;
    for (size_t i = 0; i < m; i++)
        s += x[i];
    return s / (double)m;
}

/* Two-pass sample variance (n-1 denominator), as R's var. */
static double var_of(const double *x, size_t m)
{
    if (m < 2)
        return NAN;
    double mu = mean_of(x, m), s = 0;
    for (size_t i = 0; i < m; i++)
        s += (x[i] - mu) * (x[i] - mu);
    return s / (double)(m - 1);
}

/* Type 7 quantile of sorted values s[m]. */
static double quantile_sorted(const double *s, size_t m, double p)
{
    if (m == 0)
        return NAN;
    if (p < 0)
        p = 0;
    if (p > 1)
        p = 1;
    /* R: index <- 1 + (n - 1) * p; lo <- floor(index); hi <- ceiling(index) */
    double index = 1.0 + (double)(m - 1) * p;
    double lo = floor(index), hi = ceil(index);
    double qs = s[(size_t)lo - 1];
    double h = index - lo;
    if (index > lo && s[(size_t)hi - 1] != qs)
        qs = (1 - h) * qs + h * s[(size_t)hi - 1];
    return qs;
}

int drift_summary_quantiles(const double *v, size_t m, const double *p,
                            size_t k, double *out)
{
    int bad = m == 0;
    for (size_t i = 0; i < m && !bad; i++)
        bad = isnan(v[i]);
    if (bad) {
        for (size_t j = 0; j < k; j++)
            out[j] = NAN;
        return DRIFT_OK;
    }
    double *s = drift_malloc_array(m, sizeof *s);
    if (!s)
        return DRIFT_ENOMEM;
    memcpy(s, v, m * sizeof *s);
    qsort(s, m, sizeof *s, cmp_double);
    for (size_t j = 0; j < k; j++)
        out[j] = quantile_sorted(s, m, p[j]);
    drift_free(s);
    return DRIFT_OK;
}

double drift_summary_quantile(const double *v, size_t m, double p)
{
    if (m == 0)
        return NAN;
    for (size_t i = 0; i < m; i++)
        if (isnan(v[i]))
            return NAN;
    double *s = s_malloc(m, sizeof *s);
    if (!s)
        return NAN;
    memcpy(s, v, m * sizeof *s);
    qsort(s, m, sizeof *s, cmp_double);
    double q = quantile_sorted(s, m, p);
    drift_free(s);
    return q;
}

/* ---- the normal quantile ------------------------------------------------ */

/* Lower-tail quantile for 0 < p <= 0.5: a rational first guess (Abramowitz
 * and Stegun 26.2.23, error below 4.5e-4) polished by Halley steps on
 * Phi(x) - p, with Phi from erfc, which keeps full relative accuracy in the
 * lower tail. */
static double qnorm_lower(double p)
{
    double t = sqrt(-2.0 * log(p));
    double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                         (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int it = 0; it < 6; it++) {
        double err = 0.5 * erfc(-x * M_SQRT1_2) - p;
        double u = err * sqrt(2 * M_PI) * exp(0.5 * x * x);
        double dx = u / (1 + 0.5 * x * u);
        x -= dx;
        if (fabs(dx) <= 1e-17 * (fabs(x) + 1e-300))
            break;
    }
    return x;
}

double drift_summary_qnorm(double p)
{
    if (isnan(p) || p < 0 || p > 1)
        return NAN;
    if (p == 0)
        return -INFINITY;
    if (p == 1)
        return INFINITY;
    if (p == 0.5)
        return 0.0;
    /* 1 - p is exact for p >= 0.5 (Sterbenz). */
    return p < 0.5 ? qnorm_lower(p) : -qnorm_lower(1.0 - p);
}

/* ---- ranks, z-scores, splitting ----------------------------------------- */

typedef struct ranked {
    double v;
    size_t i;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v)
        return (x->v > y->v) - (x->v < y->v);
    return (x->i > y->i) - (x->i < y->i);
}

/* The normal scores of the untied ranks 1..m, tab[k - 1] =
 * qnorm((k - 3/8) / (m - 3/4 + 1)): z_scale's expression, so the same
 * values, for the rankings of one quantity that share m.  NULL when out
 * of memory. */
static double *rank_scores(size_t m)
{
    double *t = s_malloc(m ? m : 1, sizeof *t);
    if (!t)
        return NULL;
    double denom = ((double)m - 2 * 0.375) + 1.0;
    for (size_t k = 0; k < m; k++)
        t[k] = drift_summary_qnorm(((double)(k + 1) - 0.375) / denom);
    return t;
}

/* Replaces x[m] (finite) by the normal scores of their average ranks:
 * qnorm((r - 3/8) / (m - 3/4 + 1)), posterior's z_scale; the untied
 * ranks' scores from tab (rank_scores(m)) when it is not NULL. */
static int z_scale(double *x, size_t m, const double *tab)
{
    ranked *r = s_malloc(m, sizeof *r);
    if (!r)
        return -1;
    for (size_t i = 0; i < m; i++)
        r[i] = (ranked){x[i], i};
    qsort(r, m, sizeof *r, cmp_ranked);
    double denom = ((double)m - 2 * 0.375) + 1.0;
    for (size_t a = 0; a < m;) {
        size_t b = a;
        while (b + 1 < m && r[b + 1].v == r[a].v)
            b++;
        /* 1-based positions a+1 .. b+1 share the average rank. */
        double rank = ((double)(a + 1) + (double)(b + 1)) / 2.0;
        double z = tab && a == b ? tab[a]
                                 : drift_summary_qnorm((rank - 0.375) / denom);
        for (size_t k = a; k <= b; k++)
            x[r[k].i] = z;
        a = b + 1;
    }
    drift_free(r);
    return 0;
}

/* Splits C chains of n draws into 2C chains of floor(n/2) (dropping the
 * middle draw when n is odd), posterior's .split_chains; with n == 1 the
 * chains are copied whole.  Returns a new array; *n_out, *M_out get its
 * shape. */
static double *split_chains(const double *x, size_t n, size_t C,
                            size_t *n_out, size_t *M_out)
{
    if (n == 1) {
        double *y = s_malloc(C, sizeof *y);
        if (y)
            memcpy(y, x, C * sizeof *y);
        *n_out = 1;
        *M_out = C;
        return y;
    }
    size_t h = n / 2, second = n - h; /* second half starts at n - h */
    double *y = s_malloc(2 * C, h * sizeof *y);
    if (!y)
        return NULL;
    for (size_t c = 0; c < C; c++) {
        memcpy(y + (2 * c) * h, x + c * n, h * sizeof *y);
        memcpy(y + (2 * c + 1) * h, x + c * n + second, h * sizeof *y);
    }
    *n_out = h;
    *M_out = 2 * C;
    return y;
}

/* ---- autocovariance by FFT ---------------------------------------------- */

/* The twiddle factors of a radix-2 DFT of size m: for each stage's
 * length len = 2, 4, ..., m, the half = len / 2 factors
 * (cos, sin)(-2 pi k / len), k < half, one stage after another (m - 1
 * pairs in all, from tw[0]).  Each is the expression the butterflies
 * used to evaluate in place, so the transforms are unchanged to the bit;
 * a table serves every transform of an ESS (two per chain). */
static void fft_twiddles(double *tw, size_t m)
{
    for (size_t len = 2; len <= m; len <<= 1) {
        size_t half = len / 2;
        double ang = -2.0 * M_PI / (double)len;
        for (size_t k = 0; k < half; k++, tw += 2) {
            tw[0] = cos(ang * (double)k);
            tw[1] = sin(ang * (double)k);
        }
    }
}

/* In-place radix-2 forward DFT of (re, im)[m], m a power of two, with
 * fft_twiddles' table tw for m. */
static void fft(double *re, double *im, size_t m, const double *tw)
{
    for (size_t i = 1, j = 0; i < m; i++) {
        size_t bit = m >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j];
            re[j] = t;
            t = im[i];
            im[i] = im[j];
            im[j] = t;
        }
    }
    /* each stage's butterflies block by block, in order through memory
     * (each butterfly is the same arithmetic whatever the order) */
    for (size_t len = 2; len <= m; len <<= 1) {
        size_t half = len / 2;
        for (size_t b = 0; b < m; b += len) {
            double *ar = re + b, *ai = im + b, *br = ar + half, *bi = ai + half;
            for (size_t k = 0; k < half; k++) {
                double wr = tw[2 * k], wi = tw[2 * k + 1];
                double vr = br[k] * wr - bi[k] * wi;
                double vi = br[k] * wi + bi[k] * wr;
                br[k] = ar[k] - vr;
                bi[k] = ai[k] - vi;
                ar[k] += vr;
                ai[k] += vi;
            }
        }
        tw += 2 * half;
    }
}

/* Adds w * acov_t(x) for t < n to acc, acov_t = (1/n) sum_i yc_i yc_{i+t}
 * the biased autocovariance (posterior's autocovariance).  re, im have
 * room for m >= 2n, a power of two; tw is fft_twiddles' table for m. */
static void add_autocov(const double *x, size_t n, double w, double *acc,
                        double *re, double *im, size_t m, const double *tw)
{
    double mu = mean_of(x, n);
    for (size_t i = 0; i < m; i++) {
        re[i] = i < n ? x[i] - mu : 0.0;
        im[i] = 0.0;
    }
    fft(re, im, m, tw);
    for (size_t i = 0; i < m; i++) {
        re[i] = re[i] * re[i] + im[i] * im[i];
        im[i] = 0.0;
    }
    /* The power spectrum is real and even: a forward transform is m times
     * the inverse one. */
    fft(re, im, m, tw);
    for (size_t t = 0; t < n; t++)
        acc[t] += w * re[t] / ((double)m * (double)n);
}

/* ---- the core estimators ------------------------------------------------ */

/* posterior's .ess over M chains of n draws (x[c*n + i]). */
static double ess_core(const double *x, size_t n, size_t M)
{
    if (n < 3 || should_na(x, n * M))
        return NAN;
    size_t m = 1;
    while (m < 2 * n)
        m <<= 1;
    double *acm = s_calloc(n, sizeof *acm);
    double *rho = s_calloc(n, sizeof *rho);
    double *re = s_malloc(m, sizeof *re);
    double *im = s_malloc(m, sizeof *im);
    double *means = s_malloc(M, sizeof *means);
    double *tw = s_malloc(2 * (m - 1), sizeof *tw);
    double ess = NAN;
    if (!acm || !rho || !re || !im || !means || !tw)
        goto out;
    fft_twiddles(tw, m);
    for (size_t c = 0; c < M; c++) {
        add_autocov(x + c * n, n, 1.0 / (double)M, acm, re, im, m, tw);
        means[c] = mean_of(x + c * n, n);
    }
    double dn = (double)n;
    double mean_var = acm[0] * dn / (dn - 1);
    double var_plus = mean_var * (dn - 1) / dn;
    if (M > 1)
        var_plus += var_of(means, M);
    /* Geyer's initial positive sequence, pairs of lags (even, odd). */
    size_t t = 0;
    double even = 1, odd = 1 - (mean_var - acm[1]) / var_plus;
    rho[0] = even;
    rho[1] = odd;
    while (t + 5 < n && !isnan(even + odd) && even + odd > 0) {
        t += 2;
        even = 1 - (mean_var - acm[t]) / var_plus;
        odd = 1 - (mean_var - acm[t + 1]) / var_plus;
        if (even + odd >= 0) {
            rho[t] = even;
            rho[t + 1] = odd;
        }
    }
    size_t max_t = t;
    if (even > 0) /* used by the improved estimate below */
        rho[max_t] = even;
    /* Geyer's initial monotone sequence. */
    for (t = 2; t + 2 <= max_t; t += 2)
        if (rho[t] + rho[t + 1] > rho[t - 2] + rho[t - 1]) {
            rho[t] = (rho[t - 2] + rho[t - 1]) / 2;
            rho[t + 1] = rho[t];
        }
    /* R's sum(rho_hat_t[1:max_t]) is rho[0] alone when max_t == 0. */
    double sum = 0;
    if (max_t == 0)
        sum = rho[0];
    for (t = 0; t < max_t; t++)
        sum += rho[t];
    double total = (double)M * dn;
    double tau = -1 + 2 * sum + rho[max_t];
    double bound = 1 / log10(total);
    if (tau < bound) /* posterior caps the ESS (with a warning) */
        tau = bound;
    ess = total / tau;
out:
    drift_free(acm);
    drift_free(rho);
    drift_free(re);
    drift_free(im);
    drift_free(means);
    drift_free(tw);
    return ess;
}

/* posterior's .rhat over M chains of n draws. */
static double rhat_core(const double *x, size_t n, size_t M)
{
    if (n < 2 || M < 2 || should_na(x, n * M))
        return NAN;
    double *means = s_malloc(M, sizeof *means);
    if (!means)
        return NAN;
    double within = 0;
    for (size_t c = 0; c < M; c++) {
        means[c] = mean_of(x + c * n, n);
        within += var_of(x + c * n, n);
    }
    within /= (double)M;
    double between = (double)n * var_of(means, M);
    drift_free(means);
    double dn = (double)n;
    return sqrt((between / within + dn - 1) / dn);
}

/* ---- the statistics ----------------------------------------------------- */

/* Split, optionally z-scale (with tab, rank_scores of the split size, or
 * NULL), then apply core. */
static double on_split_tab(const double *x, size_t n, size_t C, int z,
                           const double *tab,
                           double (*core)(const double *, size_t, size_t))
{
    if (n == 0 || C == 0)
        return NAN;
    size_t hn, M;
    double *y = split_chains(x, n, C, &hn, &M);
    if (!y)
        return NAN;
    double r = NAN;
    if (!z || !should_na(y, hn * M)) {
        if (!z || z_scale(y, hn * M, tab) == 0)
            r = core(y, hn, M);
    }
    drift_free(y);
    return r;
}

static double on_split(const double *x, size_t n, size_t C, int z,
                       double (*core)(const double *, size_t, size_t))
{
    return on_split_tab(x, n, C, z, NULL, core);
}

double drift_summary_ess_basic(const double *x, size_t n, size_t C, int split)
{
    if (n == 0 || C == 0)
        return NAN;
    return split ? on_split(x, n, C, 0, ess_core) : ess_core(x, n, C);
}

double drift_summary_rhat_basic(const double *x, size_t n, size_t C,
                                int split)
{
    if (n == 0 || C == 0)
        return NAN;
    return split ? on_split(x, n, C, 0, rhat_core) : rhat_core(x, n, C);
}

double drift_summary_ess_bulk(const double *x, size_t n, size_t C)
{
    return on_split(x, n, C, 1, ess_core);
}

/* drift_summary_ess_quantile, with sorted the values of x in order (NULL:
 * sorted here). */
static double ess_quantile(const double *x, size_t n, size_t C, double p,
                           const double *sorted)
{
    size_t m = n * C;
    if (m == 0 || should_na(x, m))
        return NAN;
    if (p == 1)
        p = ((double)m - 0.5) / (double)m;
    double q = sorted ? quantile_sorted(sorted, m, p)
                      : drift_summary_quantile(x, m, p);
    double *ind = s_malloc(m, sizeof *ind);
    if (!ind)
        return NAN;
    for (size_t i = 0; i < m; i++)
        ind[i] = x[i] <= q ? 1.0 : 0.0;
    double r = on_split(ind, n, C, 0, ess_core);
    drift_free(ind);
    return r;
}

double drift_summary_ess_quantile(const double *x, size_t n, size_t C,
                                  double p)
{
    return ess_quantile(x, n, C, p, NULL);
}

static double ess_tail(const double *x, size_t n, size_t C,
                       const double *sorted)
{
    double a = ess_quantile(x, n, C, 0.05, sorted);
    double b = ess_quantile(x, n, C, 0.95, sorted);
    if (isnan(a) || isnan(b))
        return NAN;
    return a < b ? a : b;
}

double drift_summary_ess_tail(const double *x, size_t n, size_t C)
{
    return ess_tail(x, n, C, NULL);
}

/* drift_summary_rhat given its bulk part (split, rank-normalised) and the
 * values of x in order (NULL: sorted here). */
static double rhat_given_bulk(const double *x, size_t n, size_t C,
                              double bulk, const double *sorted,
                              const double *tab)
{
    size_t m = n * C;
    if (isnan(bulk))
        return NAN;
    /* Folded draws |x - median| catch chains that differ in scale. */
    double *f = s_malloc(m, sizeof *f);
    if (!f)
        return NAN;
    if (sorted) {
        memcpy(f, sorted, m * sizeof *f);
    } else {
        memcpy(f, x, m * sizeof *f);
        qsort(f, m, sizeof *f, cmp_double);
    }
    double med = m % 2 ? f[m / 2]
                       : (double)(((long double)f[m / 2 - 1] +
                                   (long double)f[m / 2]) /
                                  2.0L);
    for (size_t i = 0; i < m; i++)
        f[i] = fabs(x[i] - med);
    double tail = on_split_tab(f, n, C, 1, tab, rhat_core);
    drift_free(f);
    if (isnan(tail))
        return NAN;
    return bulk > tail ? bulk : tail;
}

double drift_summary_rhat(const double *x, size_t n, size_t C)
{
    if (n * C == 0)
        return NAN;
    return rhat_given_bulk(x, n, C, on_split(x, n, C, 1, rhat_core), NULL,
                           NULL);
}

double drift_summary_mcse_mean(const double *x, size_t n, size_t C)
{
    size_t m = n * C;
    if (m == 0)
        return NAN;
    return sqrt(var_of(x, m)) / sqrt(drift_summary_ess_basic(x, n, C, 1));
}

int drift_summary_compute(const double *x, size_t n, size_t C,
                          drift_summary_stats *out, drift_err *e)
{
    size_t m = n * C;
    if (n == 0 || C == 0)
        return drift_err_set(e, DRIFT_EINVAL, "no draws to summarise");
    out_of_memory = 0;
    out->mean = mean_of(x, m);
    out->sd = sqrt(var_of(x, m));
    /* A constant: its own mean and sd 0, as R gives them (a plain sum can
     * miss the value in its last bits and leave an sd of 1e-17). */
    int constant = isfinite(x[0]);
    for (size_t i = 1; i < m && constant; i++)
        constant = x[i] == x[0];
    if (constant) {
        out->mean = x[0];
        out->sd = m > 1 ? 0 : NAN;
    }
    int has_nan = 0;
    for (size_t i = 0; i < m; i++)
        has_nan |= isnan(x[i]);
    /* One sorted copy serves the quantiles, the tail ESS's quantiles and
     * the folded R-hat's median; one split, rank-normalised copy serves
     * the bulk ESS and the bulk R-hat (the values are those of the
     * functions above, each of which sorts and ranks for itself). */
    double *s = NULL;
    if (has_nan) {
        out->q5 = out->q50 = out->q95 = NAN;
    } else {
        s = s_malloc(m, sizeof *s);
        if (!s)
            return drift_err_set(e, DRIFT_ENOMEM,
                                 "out of memory summarising %zu draws", m);
        memcpy(s, x, m * sizeof *s);
        qsort(s, m, sizeof *s, cmp_double);
        out->q5 = quantile_sorted(s, m, 0.05);
        out->q50 = quantile_sorted(s, m, 0.5);
        out->q95 = quantile_sorted(s, m, 0.95);
    }
    out->mcse = drift_summary_mcse_mean(x, n, C);
    double rhat_bulk = NAN;
    out->ess_bulk = NAN;
    size_t hn, M;
    double *y = split_chains(x, n, C, &hn, &M), *tab = NULL;
    if (y && !should_na(y, hn * M) && (tab = rank_scores(hn * M)) &&
        z_scale(y, hn * M, tab) == 0) {
        out->ess_bulk = ess_core(y, hn, M);
        rhat_bulk = rhat_core(y, hn, M);
    }
    drift_free(y);
    out->ess_tail = ess_tail(x, n, C, s);
    out->rhat = rhat_given_bulk(x, n, C, rhat_bulk, s, tab);
    drift_free(tab);
    drift_free(s);
    if (out_of_memory)
        return drift_err_set(e, DRIFT_ENOMEM,
                             "out of memory summarising %zu draws", m);
    return DRIFT_OK;
}
