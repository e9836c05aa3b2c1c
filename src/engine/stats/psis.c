/* psis.c: Pareto k-hat of importance ratios and their Pareto smoothing
 * (see psis.h), following the loo package's psis() and gpdfit() step for
 * step. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psis.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void drift_psis_gpdfit(const double *x, size_t n, double *k_out,
                       double *sigma_out)
{
    const double prior = 3.0;
    size_t M = 30 + (size_t)floor(sqrt((double)n));
    double xstar = x[(size_t)floor((double)n / 4.0 + 0.5) - 1];
    double lmax = -INFINITY;
    double theta[M], l[M];
    for (size_t j = 0; j < M; j++) {
        theta[j] = 1.0 / x[n - 1] +
                   (1.0 - sqrt((double)M / ((double)j + 0.5))) / prior /
                       xstar;
        double k = 0;
        for (size_t i = 0; i < n; i++)
            k += log1p(-theta[j] * x[i]);
        k /= (double)n;
        l[j] = (double)n * (log(-theta[j] / k) - k - 1.0);
        if (l[j] > lmax)
            lmax = l[j];
    }
    double wsum = 0, th = 0;
    for (size_t j = 0; j < M; j++) {
        double w = exp(l[j] - lmax);
        if (isnan(w))
            w = 0;
        wsum += w;
        th += theta[j] * w;
    }
    th /= wsum;
    double k = 0;
    for (size_t i = 0; i < n; i++)
        k += log1p(-th * x[i]);
    k /= (double)n;
    *sigma_out = -k / th;
    /* loo's weakly informative prior: k shrunk towards 0.5 as if by ten
     * more observations. */
    k = (k * (double)n + 0.5 * 10) / ((double)n + 10);
    *k_out = isnan(k) ? INFINITY : k;
}

int drift_psis_khat(const double *log_ratio, size_t n, double *k,
                    drift_err *e)
{
    if (n < 10)
        return drift_err_set(e, DRIFT_EINVAL,
                             "Pareto k needs at least 10 draws, not %zu", n);
    double *s = malloc(n * sizeof *s);
    if (!s)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        /* -inf: a draw of weight 0, which the tail never holds */
        if (isnan(log_ratio[i]) || log_ratio[i] == INFINITY) {
            free(s);
            *k = INFINITY;
            return DRIFT_OK;
        }
        s[i] = log_ratio[i];
    }
    qsort(s, n, sizeof *s, cmp_double);
    double tail = ceil(fmin(0.2 * (double)n, 3.0 * sqrt((double)n)));
    size_t M = (size_t)tail;
    if (M >= n)
        M = n - 1;
    double cutoff = s[n - M - 1], top = s[n - 1];
    /* The largest ratios equal to rounding (an approximation exact up to
     * its constant, as drift_psis_smooth takes it): no tail to fit. */
    if (top - cutoff < 1e-6) {
        free(s);
        *k = -INFINITY;
        return DRIFT_OK;
    }
    if (top - s[n - M] <= 0) {
        free(s);
        *k = INFINITY;
        return DRIFT_OK;
    }
    /* exceedances exp(lw) - exp(cutoff), scaled by exp(-top) */
    double *x = s + (n - M);
    for (size_t i = 0; i < M; i++)
        x[i] = exp(x[i] - top) - exp(cutoff - top);
    double sigma;
    drift_psis_gpdfit(x, M, k, &sigma);
    free(s);
    return DRIFT_OK;
}

typedef struct ranked {
    double v;
    size_t i;
} ranked;

static int by_value(const void *a, const void *b)
{
    double x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The generalised Pareto's quantile at p. */
static double gpd_quantile(double p, double k, double sigma)
{
    if (k == 0)
        return -sigma * log1p(-p);
    return sigma * expm1(-k * log1p(-p)) / k;
}

int drift_psis_smooth(double *lw, size_t n, double *khat)
{
    *khat = INFINITY;
    double mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (lw[i] > mx)
            mx = lw[i];
    if (!isfinite(mx))
        return DRIFT_ENUMERIC;
    for (size_t i = 0; i < n; i++)
        lw[i] = isnan(lw[i]) ? -INFINITY : lw[i] - mx;
    size_t tail = (size_t)ceil(fmin(0.2 * (double)n, 3 * sqrt((double)n)));
    if (tail >= 5 && tail < n) {
        ranked *r = drift_malloc_array(n, sizeof *r);
        double *x = drift_malloc_array(tail, sizeof *x);
        if (!r || !x) {
            drift_free(r);
            drift_free(x);
            return DRIFT_ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
            r[i] = (ranked){lw[i], i};
        qsort(r, n, sizeof *r, by_value);
        double cut = r[n - tail - 1].v, ecut = exp(cut);
        /* Ratios equal to rounding at the top (an approximation exact up
         * to its constant, as a Gaussian target's can be): bounded, equal
         * weights there, nothing to fit or smooth. */
        int ok = -cut >= 1e-6;
        if (!ok)
            *khat = -INFINITY;
        for (size_t j = 0; j < tail; j++) {
            x[j] = exp(r[n - tail + j].v) - ecut;
            if (!(x[j] >= 0) || !isfinite(x[j]))
                ok = 0;
        }
        /* Ties at the cut leave zero exceedances, which the fit cannot
         * take: no smoothing then (loo's too few distinct values). */
        if (ok && x[0] > 0) {
            double k, sigma;
            drift_psis_gpdfit(x, tail, &k, &sigma);
            if (isfinite(k) && isfinite(sigma) && sigma > 0) {
                for (size_t j = 0; j < tail; j++) {
                    double q = gpd_quantile(((double)j + 0.5) / tail, k,
                                            sigma) + ecut;
                    double v = log(q);
                    lw[r[n - tail + j].i] = v > 0 ? 0 : v;
                }
            }
            *khat = k;
        }
        drift_free(r);
        drift_free(x);
    }
    /* normalise */
    mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (lw[i] > mx)
            mx = lw[i];
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += exp(lw[i] - mx);
    double lse = mx + log(s);
    for (size_t i = 0; i < n; i++)
        lw[i] -= lse;
    return DRIFT_OK;
}

int drift_is_means_init(drift_is_means *a, size_t p, drift_err *e)
{
    memset(a, 0, sizeof *a);
    a->p = p;
    a->top = -INFINITY;
    size_t cap = p ? p : 1;
    a->mean = calloc(cap, sizeof *a->mean);
    a->m2 = calloc(cap, sizeof *a->m2);
    a->swx = calloc(cap, sizeof *a->swx);
    a->swxx = calloc(cap, sizeof *a->swxx);
    a->x0 = calloc(cap, sizeof *a->x0);
    if (!a->mean || !a->m2 || !a->swx || !a->swxx || !a->x0) {
        drift_is_means_free(a);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    return DRIFT_OK;
}

void drift_is_means_add(drift_is_means *a, double log_ratio,
                        const double *x)
{
    if (!a->n)
        for (size_t j = 0; j < a->p; j++)
            a->x0[j] = x[j];
    a->n++;
    double inv = 1.0 / (double)a->n;
    for (size_t j = 0; j < a->p; j++) {
        double dx = x[j] - a->mean[j];
        a->mean[j] += dx * inv;
        a->m2[j] += dx * (x[j] - a->mean[j]);
    }
    if (!isfinite(log_ratio))
        return;
    if (log_ratio > a->top) {
        /* rescale the sums to the new largest ratio */
        double f = isfinite(a->top) ? exp(a->top - log_ratio) : 0.0;
        a->sw *= f;
        a->sw2 *= f * f;
        for (size_t j = 0; j < a->p; j++) {
            a->swx[j] *= f;
            a->swxx[j] *= f;
        }
        a->top = log_ratio;
    }
    double w = exp(log_ratio - a->top);
    a->sw += w;
    a->sw2 += w * w;
    for (size_t j = 0; j < a->p; j++) {
        double dx = x[j] - a->x0[j];
        a->swx[j] += w * dx;
        a->swxx[j] += w * dx * dx;
    }
}

int drift_is_means_shift(const drift_is_means *a, size_t *j, double *shift,
                         double *noise)
{
    if (!(a->sw > 0) || a->n < 2)
        return 0;
    /* the shift's sd, in sds of the draws, when q has p's centre */
    double v = a->sw2 / (a->sw * a->sw) - 1.0 / (double)a->n;
    double base = sqrt(v > 0 ? v : 0);
    int found = 0;
    for (size_t k = 0; k < a->p; k++) {
        double sd = sqrt(a->m2[k] / (double)(a->n - 1));
        double wm = a->swx[k] / a->sw;  /* about x0 */
        double wv = a->swxx[k] / a->sw - wm * wm;
        double wsd = sqrt(wv > 0 ? wv : 0);
        double s = (wm + a->x0[k] - a->mean[k]) / wsd;
        if (!(sd > 0) || !(wsd > 0) || !isfinite(s))
            continue;
        if (!found || fabs(s) > fabs(*shift)) {
            *shift = s;
            *noise = base * sd / wsd;
            *j = k;
        }
        found = 1;
    }
    return found;
}

void drift_is_means_free(drift_is_means *a)
{
    free(a->mean);
    free(a->m2);
    free(a->swx);
    free(a->swxx);
    free(a->x0);
    a->mean = a->m2 = a->swx = a->swxx = a->x0 = NULL;
}
