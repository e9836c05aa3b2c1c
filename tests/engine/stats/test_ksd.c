/* test_ksd.c: the IMQ kernel Stein discrepancy (engine/stats/ksd.c)
 * against an independent implementation and closed forms:
 * - R's symbolic derivatives of the kernel (tests/data/ksd_ref.R; values
 *   in tests/data/ksd_ref.out) on 7 draws in 3-D with the scores of a
 *   correlated Gaussian, for two kernels: KSD^2, its U-statistic and the
 *   per-coordinate parts;
 * - a point mass at x0 against N(mu, I): KSD^2 = k0(x0, x0)
 *   = |x0 - mu|^2 c^(2 beta) - 2 beta d c^(2 beta - 2);
 * - Stein's identity: for independent draws of N(0, I) with c = 1,
 *   beta = -1/2, E KSD^2 = E k0(x, x) / n = 2d / n and the U-statistic has
 *   mean 0 (tolerances 4 standard errors of the replications' mean);
 * - refusals of bad arguments and non-finite values. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/rng.h"
#include "engine/stats/ksd.h"
#include "harness.h"

/* From tests/data/ksd_ref.out. */
static const double ref_x[7 * 3] = {
    -0.51200697316849331, 1.6732271833869925, 1.5729640783363072,
    0.23629061029618631, 0.50418960359653398, 0.25585675447358797,
    0.11361038243389915, 0.59326489626451495, 0.97077689651182708,
    -0.3538143469408162, 1.2446313890019767, 0.42749610009073008,
    0.91767267136016306, 0.81455365517197476, 0.80076352123622252,
    0.16751045174336082, 1.336257493973924, 0.80686778003649207,
    1.0782995408834914, 0.45033445874453842, 0.84482211891881565};
static const double ref_s[7 * 3] = {
    0.90007763630479121, -1.6134509598448696, -0.42908038931424874,
    0.10490501724970697, -0.83571606978307755, 0.15699043785974326,
    0.29682029737349269, -0.60975281525238123, -0.37931555870365569,
    0.8408498604804463, -1.5236600353021832, 0.31585567552820659,
    -1.4440775358235109, -1.492128677079571, -0.15478935492018819,
    -0.256775399871076, -1.8221453999923058, 0.049008773560375911,
    -1.546799757013706, -1.0245525650793761, -0.33572391163723714};
typedef struct ref_case {
    double c, beta, v, u, part[3];
} ref_case;
static const ref_case ref_cases[] = {
    {1, -0.5, 1.8413355604785693, 1.1876775492035898,
     {0.15153743533281033, 1.3921634167399715, 0.29763470840578737}},
    {2, -0.3, 1.1332487917531653, 0.96879415980598338,
     {0.035681832075455583, 1.0357991741786909, 0.061767785499018527}},
};

static void assert_rel(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fabs(want)))
        fail_msg("%s: %.17g, R says %.17g", what, got, want);
}

static void against_r(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof ref_cases / sizeof ref_cases[0]; k++) {
        const ref_case *rc = &ref_cases[k];
        drift_ksd out;
        double part[3];
        drift_err e = {{0}};
        assert_int_equal(drift_ksd_imq(ref_x, 3, ref_s, 3, 7, 3, rc->c,
                                       rc->beta, &out, part, &e),
                         DRIFT_OK);
        assert_rel(out.ksd2, rc->v, 1e-12, "KSD^2");
        assert_rel(out.ksd, sqrt(rc->v), 1e-12, "KSD");
        assert_rel(out.ksd2_u, rc->u, 1e-12, "U-statistic");
        for (size_t j = 0; j < 3; j++)
            assert_rel(part[j], rc->part[j], 1e-12, "coordinate part");
        /* Without parts: the same numbers. */
        drift_ksd again;
        assert_int_equal(drift_ksd_imq(ref_x, 3, ref_s, 3, 7, 3, rc->c,
                                       rc->beta, &again, NULL, &e),
                         DRIFT_OK);
        assert_true(again.ksd2 == out.ksd2);
    }
    /* Strided storage: the draws and scores side by side in one array. */
    double both[7 * 6];
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < 3; j++) {
            both[i * 6 + j] = ref_x[i * 3 + j];
            both[i * 6 + 3 + j] = ref_s[i * 3 + j];
        }
    drift_ksd out;
    drift_err e = {{0}};
    assert_int_equal(drift_ksd_imq(both, 6, both + 3, 6, 7, 3, 1, -0.5, &out,
                                   NULL, &e),
                     DRIFT_OK);
    assert_rel(out.ksd2, ref_cases[0].v, 1e-12, "KSD^2, strided");
}

static void point_mass(void **state)
{
    (void)state;
    enum { n = 5, d = 4 };
    const double mu[d] = {1, -2, 0.5, 3};
    const double x0[d] = {0.3, -1, 2, 3.5};
    double x[n * d], s[n * d], dist2 = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            x[i * d + k] = x0[k];
            s[i * d + k] = -(x0[k] - mu[k]);
        }
    for (size_t k = 0; k < d; k++)
        dist2 += (x0[k] - mu[k]) * (x0[k] - mu[k]);
    const double kern[][2] = {{1, -0.5}, {0.5, -0.8}, {3, -0.1}};
    for (size_t k = 0; k < 3; k++) {
        double c = kern[k][0], b = kern[k][1];
        double want = dist2 * pow(c * c, b) - 2 * b * d * pow(c * c, b - 1);
        drift_ksd out;
        double part[d], sum = 0;
        drift_err e = {{0}};
        assert_int_equal(drift_ksd_imq(x, d, s, d, n, d, c, b, &out, part,
                                       &e),
                         DRIFT_OK);
        assert_rel(out.ksd2, want, 1e-13, "point mass KSD^2");
        assert_rel(out.ksd2_u, want, 1e-13, "point mass U-statistic");
        for (size_t j = 0; j < d; j++) {
            double pj = (x0[j] - mu[j]) * (x0[j] - mu[j]) * pow(c * c, b) -
                        2 * b * pow(c * c, b - 1);
            assert_rel(part[j], pj, 1e-13, "point mass part");
            sum += part[j];
        }
        assert_rel(sum, out.ksd2, 1e-13, "parts sum to KSD^2");
    }
}

/* Independent exact draws: E KSD^2 = 2d/n, E U = 0. */
static void stein_identity(void **state)
{
    (void)state;
    enum { n = 40, d = 4, M = 2000 };
    static double x[n * d], s[n * d];
    drift_rng r;
    drift_rng_seed(&r, 31, 0);
    double sv = 0, sv2 = 0, su = 0, su2 = 0;
    for (size_t m = 0; m < M; m++) {
        drift_rng_normal_fill(&r, n * d, x);
        for (size_t k = 0; k < n * d; k++)
            s[k] = -x[k];
        drift_ksd out;
        drift_err e = {{0}};
        assert_int_equal(drift_ksd_imq(x, d, s, d, n, d, 1, -0.5, &out, NULL,
                                       &e),
                         DRIFT_OK);
        sv += out.ksd2;
        sv2 += out.ksd2 * out.ksd2;
        su += out.ksd2_u;
        su2 += out.ksd2_u * out.ksd2_u;
    }
    double mv = sv / M, mu = su / M;
    double sev = sqrt((sv2 / M - mv * mv) / (M - 1));
    double seu = sqrt((su2 / M - mu * mu) / (M - 1));
    print_message("E KSD^2 = %.5f (2d/n = %.5f, se %.5f); E U = %.5f (se "
                  "%.5f)\n",
                  mv, 2.0 * d / n, sev, mu, seu);
    assert_true(fabs(mv - 2.0 * d / n) < 4 * sev);
    assert_true(fabs(mu) < 4 * seu);
}

/* Draws off the target score more: a shifted sample against N(0, I). */
static void detects_shift(void **state)
{
    (void)state;
    enum { n = 200, d = 3 };
    static double x[n * d], s[n * d];
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    double prev = -1;
    for (int shift = 0; shift < 4; shift++) {
        drift_rng_seed(&r, 5, 0);
        drift_rng_normal_fill(&r, n * d, x);
        for (size_t k = 0; k < n * d; k++) {
            x[k] += 0.5 * shift;
            s[k] = -x[k];
        }
        drift_ksd out;
        drift_err e = {{0}};
        assert_int_equal(drift_ksd_imq(x, d, s, d, n, d, 1, -0.5, &out, NULL,
                                       &e),
                         DRIFT_OK);
        assert_true(out.ksd > prev);
        prev = out.ksd;
    }
}

static void refusals(void **state)
{
    (void)state;
    double x[6] = {0, 1, 2, 3, 4, 5}, s[6] = {0, -1, -2, -3, -4, -5};
    drift_ksd out;
    drift_err e = {{0}};
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 0, 2, 1, -0.5, &out, NULL, &e),
                     DRIFT_EINVAL);
    assert_true(isnan(out.ksd));
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 3, 2, 0, -0.5, &out, NULL, &e),
                     DRIFT_EINVAL);
    assert_non_null(strstr(e.msg, "c > 0 and -1 < beta < 0"));
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 3, 2, 1, -1, &out, NULL, &e),
                     DRIFT_EINVAL);
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 3, 2, 1, 0.5, &out, NULL, &e),
                     DRIFT_EINVAL);
    assert_int_equal(drift_ksd_imq(x, 1, s, 2, 3, 2, 1, -0.5, &out, NULL, &e),
                     DRIFT_EINVAL);
    s[3] = NAN;
    double part[2];
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 3, 2, 1, -0.5, &out, part, &e),
                     DRIFT_ENUMERIC);
    assert_non_null(strstr(e.msg, "draw 2 has a non-finite score in "
                                  "coordinate 2"));
    assert_true(isnan(part[0]) && isnan(out.ksd2_u));
    s[3] = 0;
    x[4] = INFINITY;
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 3, 2, 1, -0.5, &out, NULL, &e),
                     DRIFT_ENUMERIC);
    assert_non_null(strstr(e.msg, "draw 3 has a non-finite value in "
                                  "coordinate 1"));
    /* One draw: a V-statistic, no U-statistic. */
    x[4] = 4;
    assert_int_equal(drift_ksd_imq(x, 2, s, 2, 1, 2, 1, -0.5, &out, NULL, &e),
                     DRIFT_OK);
    /* k0(x, x) = |s|^2 + d = 1 + 2 */
    assert_true(fabs(out.ksd2 - 3) < 1e-15 && isnan(out.ksd2_u));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(against_r),
        cmocka_unit_test(point_mass),
        cmocka_unit_test(stein_identity),
        cmocka_unit_test(detects_shift),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
