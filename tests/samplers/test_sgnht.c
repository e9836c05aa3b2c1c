/* test_sgnht.c: the thermostats sgnht and msgnht (plugins/samplers/
 * sgnht.c) and the engine's --grad-noise.
 *
 * On the correlated Gaussian corrgauss with a frozen thermostat xi the
 * step is linear in z = (theta - m, p):
 *     p'         = (1 - xi h) p - h Q (theta - m) - h eps + sqrt(2 A h) zeta,
 *     theta' - m = (theta - m) + h p',
 * eps the random-access minibatch error (covariance (N^2/n) P Sc P), so
 * its stationary covariance solves a 4 x 4 Lyapunov equation.  The
 * thermostat settles where it holds the kinetic energy at its equilibrium
 * value: E p'p'/d = 1 (sgnht), or E p_k^2 = 1 for each k (msgnht); that
 * fixed point xi* is found here by iterating on the Lyapunov law, and the
 * frozen law at xi* is the reference (the thermostat's own fluctuations are
 * slow and small at these steps).  On the double well with injected
 * gradient noise the reference is exp(-U) normalised by quadrature.
 * Tolerances are 4.5 batch-means standard errors. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/hparam.h"
#include "engine/run/oracle.h"
#include "lref.h"

enum { BATCH = 20 };

static void target(lref_target *t)
{
    lref_make(t, 40, 2, 0.6, 1, 2, 10, 12);
}

/* The frozen-thermostat law S (4 x 4: theta then p) for xi[k] per
 * coordinate. */
static void frozen_law(const lref_target *t, double h, double A,
                       const double *xi, double *S)
{
    double E[4], M[16] = {0}, W[16] = {0};
    lref_gnoise(t, BATCH, E);
    /* p' = D p - h Q z + noise, z' = z + h p' = (I - h^2 Q) z + h D p. */
    for (int j = 0; j < 2; j++) {
        double Dj = 1 - xi[j] * h;
        M[(2 + j) * 4 + 2 + j] = Dj;
        M[j * 4 + j] = 1;
        M[j * 4 + 2 + j] = h * Dj;
        for (int k = 0; k < 2; k++) {
            M[(2 + j) * 4 + k] = -h * t->Q[j * 2 + k];
            M[j * 4 + k] -= h * h * t->Q[j * 2 + k];
        }
    }
    /* The noise w enters p' as w and theta' as h w. */
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) {
            double c = h * h * E[j * 2 + k] + (j == k ? 2 * A * h : 0);
            W[(2 + j) * 4 + 2 + k] = c;
            W[j * 4 + 2 + k] = W[(2 + j) * 4 + k] = h * c;
            W[j * 4 + k] = h * h * c;
        }
    lref_lyap(4, M, W, S);
}

/* The thermostat's fixed point: xi scaled by the kinetic temperature it
 * gives until E p'p'/d = 1 (shared) or E p_k^2 = 1 (per coordinate). */
static void fixed_point(const lref_target *t, double h, double A, int multi,
                        double *xi, double *S)
{
    xi[0] = xi[1] = A;
    for (int it = 0; it < 200; it++) {
        frozen_law(t, h, A, xi, S);
        if (multi) {
            xi[0] *= S[10];
            xi[1] *= S[15];
        } else {
            xi[0] *= (S[10] + S[15]) / 2;
            xi[1] = xi[0];
        }
    }
    frozen_law(t, h, A, xi, S);
}

static void gauss_check(const char *sampler, int multi, double h, double A,
                        uint64_t iters, int against_posterior)
{
    lref_target t;
    target(&t);
    th_problem tp;
    lref_open(&tp, &t);
    double xi[2], S[16];
    fixed_point(&t, h, A, multi, xi, S);
    double Sth[4] = {S[0], S[1], S[4], S[5]};
    print_message("%s h=%g A=%g: xi* %.4g %.4g, law var %.5g %.5g "
                  "(posterior %.5g %.5g)\n",
                  sampler, h, A, xi[0], xi[1], Sth[0], Sth[3], t.Qinv[0],
                  t.Qinv[3]);
    char set[2][40];
    snprintf(set[0], sizeof set[0], "h=%.17g", h);
    snprintf(set[1], sizeof set[1], "A=%.17g", A);
    char *sets[] = {set[0], set[1]};
    th_run r = {.sampler = sampler, .set = sets, .n_set = 2, .batch = BATCH,
                .access = DRIFT_ACCESS_RA, .iters = iters, .thin = 4,
                .warmup = (uint64_t)(100 / h), .seed = 61 + (uint64_t)multi};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    lref_moments mo;
    /* Columns: lp__, grads__, xi__ (msgnht: xi.1__, xi.2__), kinetic__,
     * theta.1, theta.2. */
    size_t n_xi = multi ? 2 : 1, kcol = 2 + n_xi;
    lref_compute(&d, kcol + 1, 2, &mo);
    char label[80];
    if (against_posterior) {
        double bias = 0;
        for (int k = 0; k < 4; k++)
            bias = fmax(bias, fabs(Sth[k] - t.Qinv[k]));
        print_message("closed-form bias %.3g\n", bias);
        assert_true(bias < 0.05 * t.Qinv[0]);
        snprintf(label, sizeof label, "%s h=%g (posterior)", sampler, h);
        lref_check(label, &mo, 2, t.m, t.Qinv, 0, bias);
    } else {
        snprintf(label, sizeof label, "%s h=%g (frozen-thermostat law)",
                 sampler, h);
        lref_check(label, &mo, 2, t.m, Sth, 0, 0);
    }
    /* Each thermostat's mean is its fixed point (msgnht has one column per
     * coordinate), and the kinetic energy per coordinate averages 1/2. */
    for (size_t k = 0; k < n_xi; k++) {
        double xm = th_mean(&d, 2 + k, 0), xse = lref_se(&d, 2 + k);
        double xref = multi ? xi[k] : xi[0];
        print_message("xi column %zu mean %.5g (fixed point %.5g, %.2f se)\n",
                      k + 1, xm, xref, fabs(xm - xref) / xse);
        assert_true(fabs(xm - xref) < 4.5 * xse);
    }
    double km = th_mean(&d, kcol, 0), kse = lref_se(&d, kcol);
    print_message("kinetic__ mean %.5g (%.2f se)\n", km,
                  fabs(km - 0.5) / kse);
    assert_true(fabs(km - 0.5) < 4.5 * kse);
    th_draws_free(&d);
    th_close(&tp);
    lref_free(&t);
}

/* A large step where the minibatch noise is strongly anisotropic: the
 * frozen-thermostat law, far from the posterior. */
static void test_sgnht_law(void **state)
{
    (void)state;
    gauss_check("sgnht", 0, 0.01, 2, 400000, 0);
}

static void test_msgnht_law(void **state)
{
    (void)state;
    gauss_check("msgnht", 1, 0.01, 2, 400000, 0);
}

/* Small steps: the posterior within error plus the computed bias. */
static void test_sgnht_posterior(void **state)
{
    (void)state;
    gauss_check("sgnht", 0, 5e-4, 5, 1000000, 1);
}

static void test_msgnht_posterior(void **state)
{
    (void)state;
    gauss_check("msgnht", 1, 5e-4, 5, 1000000, 1);
}

/* ---- the double well with injected gradient noise ---------------------- */

static double U_dw(double t)
{
    return (t + 4) * (t + 1) * (t - 1) * (t - 3) / 14 + 0.5;
}

enum { NBINS = 44 };
static const double BIN_LO = -6, BIN_W = 0.25; /* [-6, 5): mass outside
                                                   is below e^-30 */

/* Bin probabilities of exp(-U)/Z by composite Simpson's rule (2000
 * panels per bin; Z over [-10, 10]). */
static void dw_reference(double *pb)
{
    double Z = 0;
    const int n = 200000;
    double w = 20.0 / n;
    for (int i = 0; i <= n; i++) {
        double t = -10 + i * w, c = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        Z += c * exp(-U_dw(t));
    }
    Z *= w / 3;
    for (int b = 0; b < NBINS; b++) {
        double a = BIN_LO + b * BIN_W, s = 0, ww = BIN_W / 2000;
        for (int i = 0; i <= 2000; i++) {
            double c = (i == 0 || i == 2000) ? 1 : (i % 2 ? 4 : 2);
            s += c * exp(-U_dw(a + i * ww));
        }
        pb[b] = s * ww / 3 / Z;
    }
}

/* L1 distance between the draws' bin frequencies (column col) and pb, and
 * the L1 distance Monte Carlo error alone is expected to give,
 * sqrt(2/pi) sum_b se_b (se_b by batch means of each bin's indicator). */
static double dw_l1(const th_draws *d, size_t col, const double *pb,
                    double *mc_bound)
{
    th_draws ind = {.n = d->n, .cols = 1, .cap = d->n};
    ind.v = malloc(d->n * sizeof *ind.v);
    assert_non_null(ind.v);
    double l1 = 0, bound = 0, outside = 1;
    for (int b = 0; b < NBINS; b++) {
        double a = BIN_LO + b * BIN_W, f = 0;
        for (size_t i = 0; i < d->n; i++) {
            double t = d->v[i * d->cols + col];
            ind.v[i] = t >= a && t < a + BIN_W;
            f += ind.v[i];
        }
        f /= (double)d->n;
        outside -= f;
        l1 += fabs(f - pb[b]);
        bound += sqrt(2 / M_PI) * lref_se(&ind, 0);
    }
    free(ind.v);
    *mc_bound = bound;
    return l1 + fabs(outside);
}

/* Ding et al.'s double-well experiment: sgnht with h = 0.01, A = 0 (no
 * injected noise at all) and gradient noise N(0, 2B/h), B = 1, that it
 * does not know: the thermostat settles at xi = B and the draws follow
 * exp(-U).  Kinetic energy: its mean is 1/2 + (xi_end - xi_0)/(2 h K)
 * exactly after K steps (the thermostat's update summed), so 0.5 +- 0.05
 * holds once the thermostat is stationary.  Density: the L1 distance
 * between the histogram (bins of 0.25) and the bin masses of the
 * normalised exp(-U) is below 0.08; the run is long enough that Monte
 * Carlo error alone is expected to contribute less than half of that
 * (checked), the rest being room for the discretisation bias at h = 0.01. */
static void test_sgnht_double_well(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "doublewell", NULL, NULL, 0);
    char *sets[] = {"h=0.01", "A=0"};
    th_run r = {.sampler = "sgnht", .set = sets, .n_set = 2,
                .iters = 3000000, .warmup = 20000, .thin = 10,
                .grad_noise = 1, .seed = 71};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    /* Columns: lp__, grads__, xi__, kinetic__, theta. */
    double pb[NBINS], bound;
    dw_reference(pb);
    double l1 = dw_l1(&d, 4, pb, &bound);
    double xi = th_mean(&d, 2, 0), kin = th_mean(&d, 3, 0);
    print_message("sgnht double well: kinetic %.4f, xi %.4f, L1 %.4f "
                  "(expected from Monte Carlo error %.4f)\n",
                  kin, xi, l1, bound);
    assert_true(fabs(kin - 0.5) < 0.05);
    assert_true(fabs(xi - 1) < 4.5 * lref_se(&d, 2));
    assert_true(bound < 0.04);
    assert_true(l1 < 0.08);
    th_draws_free(&d);
    th_close(&tp);
}

/* The same noise with sghmc's friction gamma = 0.1 and sigma = 0 (the
 * semi-implicit scheme of Ding et al.'s comparison: explicit Euler
 * diverges at this friction and step): the friction is fixed, so the noise
 * heats the dynamics to temperature B/gamma = 10 (kinetic energy about 5)
 * and the density is far too wide. */
static void test_sghmc_double_well(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "doublewell", NULL, NULL, 0);
    char *sets[] = {"h=0.01", "gamma=0.1", "sigma=0", "scheme=symplectic"};
    th_run r = {.sampler = "sghmc", .set = sets, .n_set = 4,
                .iters = 1000000, .warmup = 20000, .thin = 10,
                .grad_noise = 1, .seed = 72};
    th_draws d;
    assert_int_equal(th_sample(&tp, &r, &d, NULL), DRIFT_OK);
    /* Columns: lp__, grads__, kinetic__, theta. */
    double pb[NBINS], bound;
    dw_reference(pb);
    double l1 = dw_l1(&d, 3, pb, &bound);
    double kin = th_mean(&d, 2, 0);
    print_message("sghmc double well: kinetic %.4f, L1 %.4f\n", kin, l1);
    assert_true(kin > 2.5);
    assert_true(l1 > 0.3);
    th_draws_free(&d);
    th_close(&tp);
}

/* --grad-noise B adds N(0, 2B/h) to every gradient a sampler receives
 * (h the sampler's step size), independently of the sampler's stream. */
static void test_grad_noise(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "doublewell", NULL, NULL, 0);
    char *sets[] = {"h=0.02"};
    th_run r = {.sampler = "sgnht", .set = sets, .n_set = 1, .seed = 5,
                .grad_noise = 1.5};
    th_chain ch;
    double theta[1] = {0.7}, g;
    th_chain_open(&ch, &tp, &r, NULL, NULL, theta);
    drift_chain *c = &ch.c;
    const drift_services *svc = &drift_services_table;
    theta[0] = 0.7;
    double exact = ((4 * 0.7 + 3) * 0.7 - 26) * 0.7 - 1; /* 14 U'(0.7) */
    exact /= 14;
    enum { K = 200000 };
    double s = 0, ss = 0;
    for (int k = 0; k < K; k++) {
        assert_int_equal(svc->grad_batch(c, theta, 1, &g, NULL, NULL), 0);
        s += g - exact;
        ss += (g - exact) * (g - exact);
    }
    double mean = s / K, var = ss / K - mean * mean, want = 2 * 1.5 / 0.02;
    print_message("grad-noise: mean error %.4g, variance %.5g (want %.5g)\n",
                  mean, var, want);
    assert_true(fabs(mean) < 4.5 * sqrt(want / K));
    assert_true(fabs(var - want) < 4.5 * want * sqrt(2.0 / K));
    assert_int_equal(svc->grad_full(c, theta, &g, NULL), 0); /* also noisy */
    assert_true(fabs(g - exact) > 1e-9);
    th_chain_close(&ch);
    th_close(&tp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgnht_law),
        cmocka_unit_test(test_msgnht_law),
        cmocka_unit_test(test_sgnht_posterior),
        cmocka_unit_test(test_msgnht_posterior),
        cmocka_unit_test(test_sgnht_double_well),
        cmocka_unit_test(test_sghmc_double_well),
        cmocka_unit_test(test_grad_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
