/* test_logistic.c: the logistic-regression model plugin.  Its log density
 * against a direct computation, its gradients (summed and per row) against
 * central finite differences, its directional derivatives and GLM form,
 * column order independence, and its data checks. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/rng.h"
#include "harness.h"

enum { N = 60, D = 4 };

static double X[N][D], Y[N];

static char *write_data(int shuffled_columns)
{
    drift_rng r;
    drift_rng_seed(&r, 4, 0);
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < D; j++)
            X[i][j] = j == 0 ? 1.0 : 2 * drift_rng_normal(&r);
        Y[i] = drift_rng_uniform(&r) < 0.4;
    }
    double v[N * (D + 1)];
    if (!shuffled_columns) {
        const char *names[] = {"y", "x.1", "x.2", "x.3", "x.4"};
        for (size_t i = 0; i < N; i++) {
            v[i * 5] = Y[i];
            for (size_t j = 0; j < D; j++)
                v[i * 5 + 1 + j] = X[i][j];
        }
        return th_write_csv(names, 5, v, N);
    }
    const char *names[] = {"x.3", "y", "x.1", "x.4", "x.2"};
    for (size_t i = 0; i < N; i++) {
        v[i * 5 + 0] = X[i][2];
        v[i * 5 + 1] = Y[i];
        v[i * 5 + 2] = X[i][0];
        v[i * 5 + 3] = X[i][3];
        v[i * 5 + 4] = X[i][1];
    }
    return th_write_csv(names, 5, v, N);
}

/* The log density written out directly, s = sqrt(10). */
static double direct_lp(const double *w)
{
    double s = sqrt(10.0), lp = 0;
    for (size_t j = 0; j < D; j++)
        lp += -0.5 * w[j] * w[j] / (s * s) - log(s) - 0.5 * log(2 * M_PI);
    for (size_t i = 0; i < N; i++) {
        double z = 0;
        for (size_t j = 0; j < D; j++)
            z += X[i][j] * w[j];
        double p = 1 / (1 + exp(-z));
        lp += Y[i] ? log(p) : log(1 - p);
    }
    return lp;
}

static double model_lp(const drift_model *m, void *ws, const double *w)
{
    double lp, ll;
    drift_err e;
    drift_rows all = {NULL, 0, N};
    assert_int_equal(m->log_prior(m->self, ws, w, &lp, NULL, &e), 0);
    assert_int_equal(m->log_lik(m->self, ws, w, &all, NULL, &ll, NULL, NULL, &e), 0);
    return lp + ll;
}

static void check_model(int shuffled)
{
    char *csv = write_data(shuffled);
    th_problem tp;
    th_open(&tp, "logistic", csv, NULL, 0);
    const drift_model *m = &tp.p.model;
    assert_int_equal(m->dim, D);
    assert_int_equal(m->n_rows, N);
    assert_string_equal(m->out_names[2], "w.3");
    void *ws = m->workspace_new(m->self, N);
    assert_non_null(ws);
    drift_rng r;
    drift_rng_seed(&r, 9, 1);
    for (int trial = 0; trial < 5; trial++) {
        double w[D], grad[D], gp[D], gl[D], lp, ll;
        for (size_t j = 0; j < D; j++)
            w[j] = drift_rng_normal(&r);
        drift_err e;
        drift_rows all = {NULL, 0, N};
        assert_true(fabs(model_lp(m, ws, w) - direct_lp(w)) <
                    1e-10 * fabs(direct_lp(w)));
        assert_int_equal(m->log_prior(m->self, ws, w, &lp, gp, &e), 0);
        assert_int_equal(m->log_lik(m->self, ws, w, &all, NULL, &ll, gl, NULL, &e), 0);
        for (size_t j = 0; j < D; j++)
            grad[j] = gp[j] + gl[j];
        for (size_t j = 0; j < D; j++) {
            double h = 1e-5, wp[D], wm[D];
            memcpy(wp, w, sizeof wp);
            memcpy(wm, w, sizeof wm);
            wp[j] += h;
            wm[j] -= h;
            double fd = (model_lp(m, ws, wp) - model_lp(m, ws, wm)) / (2 * h);
            double rel = fabs(fd - grad[j]) / fmax(1.0, fabs(grad[j]));
            assert_true(rel < 1e-6);
        }
        /* Per-row gradients: finite differences of each row's term, and
         * their sum equals the summed gradient. */
        size_t rows[N];
        for (size_t i = 0; i < N; i++)
            rows[i] = (i * 7) % N;
        drift_rows b = {rows, 0, N};
        double G[N * D], lr[N], sum[D] = {0};
        assert_int_equal(m->log_lik(m->self, ws, w, &b, lr, NULL, NULL, G, &e), 0);
        for (size_t k = 0; k < N; k++)
            for (size_t j = 0; j < D; j++) {
                sum[j] += G[k * D + j];
                double h = 1e-5, wp[D], wm[D], lp1, lm1;
                memcpy(wp, w, sizeof wp);
                memcpy(wm, w, sizeof wm);
                wp[j] += h;
                wm[j] -= h;
                drift_rows one = {&rows[k], 0, 1};
                m->log_lik(m->self, ws, wp, &one, &lp1, NULL, NULL, NULL, &e);
                m->log_lik(m->self, ws, wm, &one, &lm1, NULL, NULL, NULL, &e);
                double fd = (lp1 - lm1) / (2 * h);
                assert_true(fabs(fd - G[k * D + j]) /
                                fmax(1.0, fabs(G[k * D + j])) <
                            1e-6);
            }
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(sum[j] - gl[j]) < 1e-10 * (1 + fabs(gl[j])));
        /* jvp and GLM form. */
        double v[D] = {0.3, -0.1, 2.0, 0.5}, out[N], s[N], Xd[N * D];
        assert_int_equal(m->jvp(m->self, ws, w, v, &b, out, NULL, &e), 0);
        assert_int_equal(m->glm_scalars(m->self, ws, w, &b, s, NULL, &e), 0);
        assert_int_equal(m->glm_design(m->self, &b, Xd, &e), 0);
        for (size_t k = 0; k < N; k++) {
            double dot = 0;
            for (size_t j = 0; j < D; j++) {
                dot += G[k * D + j] * v[j];
                assert_true(fabs(s[k] * Xd[k * D + j] - G[k * D + j]) < 1e-12);
            }
            assert_true(fabs(dot - out[k]) < 1e-12);
        }
        /* The design weighted by the scalars, added to v: v plus the
         * summed gradient. */
        double xs[D];
        memcpy(xs, v, sizeof xs);
        assert_int_equal(m->glm_design_sum(m->self, &b, s, xs, &e), 0);
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(xs[j] - v[j] - gl[j]) < 1e-10 * (1 + fabs(gl[j])));
    }
    m->workspace_free(m->self, ws);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

static void test_gradients(void **state)
{
    (void)state;
    check_model(0);
}

static void test_column_order(void **state)
{
    (void)state;
    check_model(1);
}

/* A full pass over more rows than one of the plugin's blocks (256), in
 * ranges that start and end inside blocks and inside groups of 8, rows
 * wider than a vector (13 weights: a tail), and both signs of large z:
 * the summed log-likelihood and gradient against the same sums written
 * out directly in long double. */
enum { NB = 601, DB = 13 };

static void test_full_pass_blocks(void **state)
{
    (void)state;
    static double v[NB * (DB + 1)];
    static long double xb[NB][DB], yb[NB];
    const char *names[DB + 1];
    char nbuf[DB][8];
    names[0] = "y";
    for (size_t j = 0; j < DB; j++) {
        snprintf(nbuf[j], sizeof nbuf[j], "x.%zu", j + 1);
        names[j + 1] = nbuf[j];
    }
    drift_rng r;
    drift_rng_seed(&r, 18, 0);
    for (size_t i = 0; i < NB; i++) {
        yb[i] = drift_rng_uniform(&r) < 0.5;
        v[i * (DB + 1)] = (double)yb[i];
        /* every 50th row far out, z of order +-100 */
        double scale = i % 50 == 3 ? 40 : 1;
        for (size_t j = 0; j < DB; j++) {
            double x = scale * drift_rng_normal(&r);
            xb[i][j] = x;
            v[i * (DB + 1) + 1 + j] = x;
        }
    }
    char *csv = th_write_csv(names, DB + 1, v, NB);
    th_problem tp;
    th_open(&tp, "logistic", csv, NULL, 0);
    const drift_model *m = &tp.p.model;
    void *ws = m->workspace_new(m->self, NB);
    assert_non_null(ws);
    double w[DB];
    for (size_t j = 0; j < DB; j++)
        w[j] = 0.5 * drift_rng_normal(&r);
    const size_t ranges[][2] = {{0, NB}, {7, 517}, {250, 13}, {600, 1}};
    for (size_t q = 0; q < sizeof ranges / sizeof ranges[0]; q++) {
        size_t first = ranges[q][0], n = ranges[q][1];
        long double ll = 0, g[DB] = {0};
        for (size_t i = first; i < first + n; i++) {
            long double z = 0;
            for (size_t j = 0; j < DB; j++)
                z += xb[i][j] * w[j];
            /* y z - log(1 + e^z) and y - logistic(z), stably */
            long double lse = z > 0 ? z + log1pl(expl(-z)) : log1pl(expl(z));
            ll += yb[i] * z - lse;
            long double p = z > 0 ? 1 / (1 + expl(-z))
                                  : expl(z) / (1 + expl(z));
            for (size_t j = 0; j < DB; j++)
                g[j] += (yb[i] - p) * xb[i][j];
        }
        drift_rows b = {NULL, first, n};
        double got, gg[DB];
        drift_err e;
        assert_int_equal(
            m->log_lik(m->self, ws, w, &b, NULL, &got, gg, NULL, &e), 0);
        assert_true(fabsl(got - ll) < 1e-12L * (1 + fabsl(ll)));
        long double gmax = 0;
        for (size_t j = 0; j < DB; j++)
            gmax = fmaxl(gmax, fabsl(g[j]));
        for (size_t j = 0; j < DB; j++)
            assert_true(fabsl(gg[j] - g[j]) < 1e-12L * (1 + gmax));
    }
    m->workspace_free(m->self, ws);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

static void test_data_checks(void **state)
{
    (void)state;
    th_expect_model_refusal("logistic", "y,x.1\n0,1\n2,1\n", ":3: error: column 'y' (field 1) must be 0 or 1");
    th_expect_model_refusal("logistic", "x.1,x.2\n0,1\n", "needs a column 'y'");
    th_expect_model_refusal("logistic", "y,z\n0,1\n", "x.1 ... x.D");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_column_order),
        cmocka_unit_test(test_full_pass_blocks),
        cmocka_unit_test(test_data_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
