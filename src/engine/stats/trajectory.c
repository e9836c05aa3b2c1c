/* trajectory.c: exact time averages, time-weighted quantiles and regular
 * time grids of piecewise-linear trajectories, for summaries of the
 * segment files continuous samplers write.  Not for reading files. */
#include "config.h"

#include <math.h>

#include "trajectory.h"

#define AT(a, tr, i) ((a)[(i) * (tr)->stride])

static double slope(const drift_trajectory *tr, size_t i)
{
    return tr->v ? AT(tr->v, tr, i) : 0.0;
}

void drift_trajectory_moments(const drift_trajectory *tr, size_t m,
                              double *mean, double *var, double *T)
{
    double t = 0, s1 = 0;
    for (size_t c = 0; c < m; c++)
        for (size_t i = 0; i < tr[c].n; i++) {
            double d = AT(tr[c].dur, &tr[c], i), a = AT(tr[c].x0, &tr[c], i);
            s1 += d * (a + 0.5 * slope(&tr[c], i) * d);
            t += d;
        }
    if (!(t > 0)) {
        *mean = *var = *T = 0;
        return;
    }
    double mu = s1 / t, s2 = 0;
    /* Centred second moment: int_0^d (a - mu + v s)^2 ds. */
    for (size_t c = 0; c < m; c++)
        for (size_t i = 0; i < tr[c].n; i++) {
            double d = AT(tr[c].dur, &tr[c], i);
            double a = AT(tr[c].x0, &tr[c], i) - mu, v = slope(&tr[c], i);
            s2 += d * (a * a + a * v * d + v * v * d * d / 3.0);
        }
    *mean = mu;
    *var = s2 / t;
    *T = t;
}

/* Time spent at or below q. */
static double time_below(const drift_trajectory *tr, size_t m, double q)
{
    double t = 0;
    for (size_t c = 0; c < m; c++)
        for (size_t i = 0; i < tr[c].n; i++) {
            double d = AT(tr[c].dur, &tr[c], i), a = AT(tr[c].x0, &tr[c], i);
            double v = slope(&tr[c], i);
            if (v == 0) {
                t += a <= q ? d : 0;
                continue;
            }
            double s = (q - a) / v; /* where the segment crosses q */
            s = s < 0 ? 0 : s > d ? d : s;
            t += v > 0 ? s : d - s;
        }
    return t;
}

double drift_trajectory_quantile(const drift_trajectory *tr, size_t m,
                                 double p)
{
    double lo = INFINITY, hi = -INFINITY, T = 0;
    for (size_t c = 0; c < m; c++)
        for (size_t i = 0; i < tr[c].n; i++) {
            double d = AT(tr[c].dur, &tr[c], i), a = AT(tr[c].x0, &tr[c], i);
            double b = a + slope(&tr[c], i) * d;
            if (!isfinite(a) || !isfinite(b) || !isfinite(d))
                return NAN;
            if (!(d > 0))
                continue;
            lo = fmin(lo, fmin(a, b));
            hi = fmax(hi, fmax(a, b));
            T += d;
        }
    if (!(T > 0))
        return NAN;
    if (p <= 0)
        return lo;
    if (p >= 1)
        return hi;
    double want = p * T;
    /* Bisection on the non-decreasing time_below, to adjacent doubles. */
    for (int it = 0; it < 200 && lo < hi; it++) {
        double mid = lo + 0.5 * (hi - lo);
        if (mid <= lo || mid >= hi)
            break;
        if (time_below(tr, m, mid) < want)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

void drift_trajectory_grid(const drift_trajectory *tr, size_t k, double *out)
{
    double T = 0;
    for (size_t i = 0; i < tr->n; i++)
        T += AT(tr->dur, tr, i);
    size_t i = 0;
    double start = 0; /* of segment i */
    for (size_t j = 0; j < k; j++) {
        double t = (j + 0.5) * T / (double)k;
        while (i + 1 < tr->n && start + AT(tr->dur, tr, i) <= t) {
            start += AT(tr->dur, tr, i);
            i++;
        }
        out[j] = tr->n ? AT(tr->x0, tr, i) + slope(tr, i) * (t - start) : NAN;
    }
}
