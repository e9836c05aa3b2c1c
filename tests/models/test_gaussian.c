/* test_gaussian.c: the Gaussian model with per-datum centres (plugin
 * gaussian).  Its log density against a direct computation, its gradients
 * (summed and per row) against central finite differences, its
 * directional derivatives, non-contiguous columns, the sigma option, and
 * its data checks. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/rng.h"
#include "harness.h"

enum { N = 40, D = 3 };

static double C[N][D];

static char *write_data(int shuffled)
{
    drift_rng r;
    drift_rng_seed(&r, 11, 0);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < D; j++)
            C[i][j] = 1.0 + 2 * drift_rng_normal(&r);
    double v[N * (D + 1)];
    if (!shuffled) {
        const char *names[] = {"c.1", "c.2", "c.3"};
        for (size_t i = 0; i < N; i++)
            for (size_t j = 0; j < D; j++)
                v[i * D + j] = C[i][j];
        return th_write_csv(names, D, v, N);
    }
    /* An unrelated column first and the centres out of order. */
    const char *names[] = {"z", "c.3", "c.1", "c.2"};
    for (size_t i = 0; i < N; i++) {
        v[i * 4 + 0] = -7;
        v[i * 4 + 1] = C[i][2];
        v[i * 4 + 2] = C[i][0];
        v[i * 4 + 3] = C[i][1];
    }
    return th_write_csv(names, 4, v, N);
}

/* sum_i log N(c_i; theta, sigma^2 I), written out directly. */
static double direct_lp(const double *th, double sigma)
{
    double lp = 0;
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < D; j++) {
            double r = (C[i][j] - th[j]) / sigma;
            lp += -0.5 * r * r - log(sigma) - 0.5 * log(2 * M_PI);
        }
    return lp;
}

static double model_lp(const drift_model *m, void *ws, const double *th)
{
    double lp, ll;
    drift_err e;
    drift_rows all = {NULL, 0, N};
    assert_int_equal(m->log_prior(m->self, ws, th, &lp, NULL, &e), 0);
    assert_int_equal(m->log_lik(m->self, ws, th, &all, NULL, &ll, NULL, NULL,
                                &e), 0);
    return lp + ll;
}

static void check_model(int shuffled, const char *sigma_set, double sigma)
{
    char *csv = write_data(shuffled);
    th_problem tp;
    char *set[] = {(char *)sigma_set};
    th_open(&tp, "gaussian", csv, sigma_set ? set : NULL, sigma_set ? 1 : 0);
    const drift_model *m = &tp.p.model;
    assert_int_equal(m->dim, D);
    assert_int_equal(m->n_rows, N);
    assert_string_equal(m->out_names[2], "theta.3");
    void *ws = m->workspace_new(m->self, N);
    assert_non_null(ws);
    drift_rng r;
    drift_rng_seed(&r, 12, 1);
    drift_err e;
    for (int trial = 0; trial < 5; trial++) {
        double th[D], gp[D], gl[D], lp, ll;
        for (size_t j = 0; j < D; j++)
            th[j] = 3 * drift_rng_normal(&r);
        drift_rows all = {NULL, 0, N};
        double ref = direct_lp(th, sigma);
        assert_true(fabs(model_lp(m, ws, th) - ref) < 1e-10 * fabs(ref));
        assert_int_equal(m->log_prior(m->self, ws, th, &lp, gp, &e), 0);
        assert_int_equal(m->log_lik(m->self, ws, th, &all, NULL, &ll, gl,
                                    NULL, &e), 0);
        for (size_t j = 0; j < D; j++) {
            double h = 1e-5, tp1[D], tm1[D];
            memcpy(tp1, th, sizeof tp1);
            memcpy(tm1, th, sizeof tm1);
            tp1[j] += h;
            tm1[j] -= h;
            double fd = (model_lp(m, ws, tp1) - model_lp(m, ws, tm1)) / (2 * h);
            double g = gp[j] + gl[j];
            assert_true(fabs(fd - g) / fmax(1.0, fabs(g)) < 1e-6);
        }
        /* Per-row gradients by finite differences of each row's term;
         * they sum to the summed gradient; jvp is v . each of them. */
        size_t rows[N];
        for (size_t i = 0; i < N; i++)
            rows[i] = (i * 7) % N;
        drift_rows b = {rows, 0, N};
        double G[N * D], lr[N], sum[D] = {0};
        assert_int_equal(m->log_lik(m->self, ws, th, &b, lr, NULL, NULL, G,
                                    &e), 0);
        for (size_t k = 0; k < N; k++)
            for (size_t j = 0; j < D; j++) {
                sum[j] += G[k * D + j];
                double h = 1e-5, tp1[D], tm1[D], l1, l2;
                memcpy(tp1, th, sizeof tp1);
                memcpy(tm1, th, sizeof tm1);
                tp1[j] += h;
                tm1[j] -= h;
                drift_rows one = {&rows[k], 0, 1};
                m->log_lik(m->self, ws, tp1, &one, &l1, NULL, NULL, NULL, &e);
                m->log_lik(m->self, ws, tm1, &one, &l2, NULL, NULL, NULL, &e);
                double fd = (l1 - l2) / (2 * h);
                assert_true(fabs(fd - G[k * D + j]) /
                                fmax(1.0, fabs(G[k * D + j])) < 1e-6);
            }
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(sum[j] - gl[j]) < 1e-10 * (1 + fabs(gl[j])));
        double v[D] = {0.3, -1.1, 2.0}, out[N], lj[N];
        assert_int_equal(m->jvp(m->self, ws, th, v, &b, out, lj, &e), 0);
        for (size_t k = 0; k < N; k++) {
            double dot = 0;
            for (size_t j = 0; j < D; j++)
                dot += G[k * D + j] * v[j];
            assert_true(fabs(dot - out[k]) < 1e-12 * (1 + fabs(dot)));
            assert_true(fabs(lj[k] - lr[k]) < 1e-12 * (1 + fabs(lr[k])));
        }
    }
    /* A batch larger than the workspace is refused, not overrun. */
    void *small = m->workspace_new(m->self, 2);
    drift_rows three = {NULL, 0, 3};
    double l;
    assert_int_equal(m->log_lik(m->self, small, (double[D]){0}, &three, NULL,
                                &l, NULL, NULL, &e), DRIFT_EINTERNAL);
    assert_non_null(strstr(e.msg, "exceed the workspace"));
    m->workspace_free(m->self, small);
    m->workspace_free(m->self, ws);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

static void test_gradients(void **state)
{
    (void)state;
    check_model(0, NULL, 1.0);
}

static void test_columns_and_sigma(void **state)
{
    (void)state;
    check_model(1, "sigma=0.5", 0.5);
}

static void test_data_checks(void **state)
{
    (void)state;
    th_expect_model_refusal("gaussian", "x.1,x.2\n0,1\n", "needs centre columns c.1 ... c.D");
    th_expect_model_refusal("gaussian", "c.1,c.3\n0,1\n", "'c.3' follows c.1 ... c.1 without c.2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_columns_and_sigma),
        cmocka_unit_test(test_data_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
