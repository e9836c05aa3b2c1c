/* ksd.c: the IMQ kernel Stein discrepancy of draws whose scores are
 * given (ksd.h has the definitions).  One pass over the pairs i < j, each
 * pair's Stein kernel from three inner products; the sum kept with
 * Neumaier's compensation, since KSD^2 of good draws is a small difference
 * of terms of order |s|^2.  Not for finding the scores. */
#include "config.h"

#include <math.h>

#include "base/util.h"
#include "ksd.h"

/* Neumaier's compensated sum: *sum + *comp is the running total. */
static void add_compensated(double *sum, double *comp, double v)
{
    double t = *sum + v;
    if (fabs(*sum) >= fabs(v))
        *comp += (*sum - t) + v;
    else
        *comp += (v - t) + *sum;
    *sum = t;
}

static void set_nan(drift_ksd *out, double *part, size_t d)
{
    out->ksd = out->ksd2 = out->ksd2_u = NAN;
    for (size_t k = 0; part && k < d; k++)
        part[k] = NAN;
}

/* |x_i - x_j|^2, s_i . s_j and (s_j - s_i) . (x_i - x_j): the pair's
 * three inner products, each summed in four interleaved parts so that
 * the additions overlap (a single running sum waits on itself). */
static void pair_sums(const double *xi, const double *xj, const double *si,
                      const double *sj, size_t d, double *rr_out,
                      double *ss_out, double *t_out)
{
    double rr[4] = {0, 0, 0, 0}, ss[4] = {0, 0, 0, 0}, t[4] = {0, 0, 0, 0};
    size_t k = 0;
    for (; k + 4 <= d; k += 4)
        for (size_t l = 0; l < 4; l++) {
            double r = xi[k + l] - xj[k + l];
            rr[l] += r * r;
            ss[l] += si[k + l] * sj[k + l];
            t[l] += (sj[k + l] - si[k + l]) * r;
        }
    for (; k < d; k++) {
        double r = xi[k] - xj[k];
        rr[0] += r * r;
        ss[0] += si[k] * sj[k];
        t[0] += (sj[k] - si[k]) * r;
    }
    *rr_out = (rr[0] + rr[1]) + (rr[2] + rr[3]);
    *ss_out = (ss[0] + ss[1]) + (ss[2] + ss[3]);
    *t_out = (t[0] + t[1]) + (t[2] + t[3]);
}

/* u^beta, exactly 1/sqrt(u) for Gorham and Mackey's beta = -1/2. */
static double imq_pow(double u, double beta)
{
    return beta == -0.5 ? 1.0 / sqrt(u) : pow(u, beta);
}

int drift_ksd_imq(const double *x, size_t ldx, const double *s, size_t lds,
                  size_t n, size_t d, double c, double beta, drift_ksd *out,
                  double *part, drift_err *e)
{
    if (n == 0 || d == 0 || !(c > 0) || !isfinite(c) || !(beta > -1) ||
        !(beta < 0) || ldx < d || lds < d) {
        set_nan(out, part, d);
        if (n == 0 || d == 0)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "kernel Stein discrepancy: no %s",
                                 n == 0 ? "draws" : "coordinates");
        if (ldx < d || lds < d)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "kernel Stein discrepancy: leading "
                                 "dimension below d = %zu", d);
        return drift_err_set(e, DRIFT_EINVAL,
                             "kernel Stein discrepancy: the IMQ kernel needs "
                             "c > 0 and -1 < beta < 0 (c = %g, beta = %g)",
                             c, beta);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            if (!isfinite(x[i * ldx + k]) || !isfinite(s[i * lds + k])) {
                set_nan(out, part, d);
                return drift_err_set(e, DRIFT_ENUMERIC,
                                     "kernel Stein discrepancy: draw %zu has "
                                     "a non-finite %s in coordinate %zu",
                                     i + 1,
                                     isfinite(x[i * ldx + k]) ? "score"
                                                              : "value",
                                     k + 1);
            }
    const double dd = (double)d;
    const double c2 = c * c;
    /* Coefficients of k0 = ss u^b + a1 u^(b-1) t + a2 u^(b-1)
     * + a3 |r|^2 u^(b-2), with t = (s_j - s_i).r. */
    const double a1 = 2 * beta, a2 = -2 * beta * dd,
                 a3 = -4 * beta * (beta - 1);
    const double diag_ss = imq_pow(c2, beta);       /* c^(2b) */
    const double diag_1 = -2 * beta * diag_ss / c2; /* -2b c^(2b-2) */
    for (size_t k = 0; part && k < d; k++)
        part[k] = 0;
    double off = 0, off_comp = 0, diag = 0, diag_comp = 0;
    for (size_t i = 0; i < n; i++) {
        const double *xi = x + i * ldx, *si = s + i * lds;
        double s2 = 0;
        for (size_t k = 0; k < d; k++)
            s2 += si[k] * si[k];
        add_compensated(&diag, &diag_comp, s2 * diag_ss + dd * diag_1);
        if (part)
            for (size_t k = 0; k < d; k++)
                part[k] += si[k] * si[k] * diag_ss + diag_1;
        double row = 0;
        for (size_t j = i + 1; j < n; j++) {
            const double *xj = x + j * ldx, *sj = s + j * lds;
            double rr, ss, t;
            pair_sums(xi, xj, si, sj, d, &rr, &ss, &t);
            double u = c2 + rr;
            double ub = imq_pow(u, beta), ub1 = ub / u, ub2 = ub1 / u;
            row += ss * ub + a1 * ub1 * t + a2 * ub1 + a3 * rr * ub2;
            if (part) {
                /* The same sum split by coordinate, counted twice as the
                 * pair (j, i) is. */
                double b1 = 2 * a1 * ub1, b2 = 2 * a3 * ub2;
                double b0 = -2 * beta * 2 * ub1;
                for (size_t k = 0; k < d; k++) {
                    double r = xi[k] - xj[k];
                    part[k] += 2 * si[k] * sj[k] * ub +
                               b1 * (sj[k] - si[k]) * r + b0 + b2 * r * r;
                }
            }
        }
        add_compensated(&off, &off_comp, row);
    }
    double nn = (double)n;
    double total_off = 2 * (off + off_comp), total_diag = diag + diag_comp;
    out->ksd2 = (total_off + total_diag) / (nn * nn);
    out->ksd = sqrt(out->ksd2 > 0 ? out->ksd2 : 0);
    out->ksd2_u = n > 1 ? total_off / (nn * (nn - 1)) : NAN;
    for (size_t k = 0; part && k < d; k++)
        part[k] /= nn * nn;
    return DRIFT_OK;
}
