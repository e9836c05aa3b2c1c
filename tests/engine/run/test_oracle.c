/* test_oracle.c: the oracles samplers call.  On a logistic-regression
 * model: the minibatch gradient is unbiased for the full gradient (within
 * Monte Carlo error), per-row gradients, sums, directional derivatives and
 * GLM scalars agree with each other, every per-datum evaluation is
 * counted exactly, and bad row indices are refused. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/emit.h"
#include "engine/run/rng.h"
#include "harness.h"

enum { N = 400, D = 5 };

typedef struct fixture {
    char *csv;
    th_problem tp;
    th_chain ch;
    double theta[D];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *names[D + 1] = {"y", "x.1", "x.2", "x.3", "x.4", "x.5"};
    double *v = malloc(N * (D + 1) * sizeof *v);
    drift_rng r;
    drift_rng_seed(&r, 17, 0);
    double w[D] = {0.5, -1.0, 0.25, 2.0, 0.0};
    for (size_t i = 0; i < N; i++) {
        double z = 0;
        for (size_t j = 0; j < D; j++) {
            double x = j == 0 ? 1.0 : drift_rng_normal(&r);
            v[i * (D + 1) + 1 + j] = x;
            z += x * w[j];
        }
        v[i * (D + 1)] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
    }
    f->csv = th_write_csv(names, D + 1, v, N);
    free(v);
    th_open(&f->tp, "logistic", f->csv, NULL, 0);
    char *sets[] = {"h=1e-3"};
    th_run run = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 10,
                  .seed = 5};
    th_chain_open(&f->ch, &f->tp, &run, NULL, NULL, f->theta);
    for (size_t j = 0; j < D; j++)
        f->theta[j] = 0.3 * (double)j - 0.5;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    th_chain_close(&f->ch);
    th_close(&f->tp);
    unlink(f->csv);
    free(f->csv);
    free(f);
    return 0;
}

static const drift_services *S = &drift_services_table;

static void test_batch_unbiased(void **state)
{
    fixture *f = *state;
    double full[D], g[D], sum[D] = {0}, sq[D] = {0};
    assert_int_equal(S->grad_full(&f->ch.c, f->theta, full, NULL), 0);
    int M = 20000;
    for (int m = 0; m < M; m++) {
        assert_int_equal(
            S->grad_batch(&f->ch.c, f->theta, 10, g, NULL, NULL), 0);
        for (size_t j = 0; j < D; j++) {
            sum[j] += g[j];
            sq[j] += g[j] * g[j];
        }
    }
    for (size_t j = 0; j < D; j++) {
        double mean = sum[j] / M;
        double sd = sqrt(sq[j] / M - mean * mean);
        /* 4.5 standard errors: a false alarm once in ~10^5 runs. */
        assert_true(fabs(mean - full[j]) < 4.5 * sd / sqrt((double)M));
    }
}

static void test_counts_exact(void **state)
{
    fixture *f = *state;
    double g[D], U;
    size_t rows[7] = {0, 1, 2, 3, 4, 5, 399};
    double grads[7 * D], out[7], s[7], v[D] = {1, 2, 3, 4, 5};
    uint64_t c0 = S->grads(&f->ch.c);
    S->grad_full(&f->ch.c, f->theta, g, &U);
    assert_int_equal(S->grads(&f->ch.c) - c0, N);
    S->U_full(&f->ch.c, f->theta, &U);
    assert_int_equal(S->grads(&f->ch.c) - c0, 2 * N);
    S->grad_batch(&f->ch.c, f->theta, 10, g, &U, NULL);
    assert_int_equal(S->grads(&f->ch.c) - c0, 2 * N + 10);
    S->grad_rows(&f->ch.c, f->theta, rows, 7, grads, NULL);
    S->jvp_rows(&f->ch.c, f->theta, v, rows, 7, out);
    S->glm_scalars(&f->ch.c, f->theta, rows, 7, s);
    S->grad_sum(&f->ch.c, f->theta, rows, 7, g, NULL);
    assert_int_equal(S->grads(&f->ch.c) - c0, 2 * N + 10 + 28);
    S->grad_prior(&f->ch.c, f->theta, g, NULL);
    S->glm_design(&f->ch.c, rows, 7, grads);
    S->glm_design_sum(&f->ch.c, rows, 7, s, g);
    assert_int_equal(S->grads(&f->ch.c) - c0, 2 * N + 10 + 28);
    S->count(&f->ch.c, 5);
    assert_int_equal(S->grads(&f->ch.c) - c0, 2 * N + 10 + 33);
}

static void test_rows_consistent(void **state)
{
    fixture *f = *state;
    size_t rows[N];
    for (size_t i = 0; i < N; i++)
        rows[i] = i;
    double *G = malloc(N * D * sizeof *G), Urows[N];
    assert_int_equal(S->grad_rows(&f->ch.c, f->theta, rows, N, G, Urows), 0);
    double full[D], prior[D], U, U0, sumU = 0, sumg[D];
    S->grad_full(&f->ch.c, f->theta, full, &U);
    S->grad_prior(&f->ch.c, f->theta, prior, &U0);
    S->grad_sum(&f->ch.c, f->theta, rows, N, sumg, NULL);
    for (size_t i = 0; i < N; i++)
        sumU += Urows[i];
    assert_true(fabs(U - (sumU + U0)) < 1e-9 * fabs(U));
    for (size_t j = 0; j < D; j++) {
        double s = 0;
        for (size_t i = 0; i < N; i++)
            s += G[i * D + j];
        assert_true(fabs(s + prior[j] - full[j]) < 1e-9 * (1 + fabs(full[j])));
        assert_true(fabs(sumg[j] - s) < 1e-9 * (1 + fabs(s)));
    }
    /* jvp and GLM scalars against the per-row gradients. */
    double v[D] = {0.1, -0.2, 0.3, 0.7, -1.1}, out[N], sc[N];
    double *X = malloc(N * D * sizeof *X);
    S->jvp_rows(&f->ch.c, f->theta, v, rows, N, out);
    S->glm_scalars(&f->ch.c, f->theta, rows, N, sc);
    S->glm_design(&f->ch.c, rows, N, X);
    assert_true(S->is_glm(&f->ch.c));
    for (size_t i = 0; i < N; i++) {
        double dot = 0;
        for (size_t j = 0; j < D; j++) {
            dot += G[i * D + j] * v[j];
            assert_true(fabs(sc[i] * X[i * D + j] - G[i * D + j]) < 1e-12);
        }
        assert_true(fabs(dot - out[i]) < 1e-12);
    }
    /* The design weighted by the scalars is the summed gradient; the
     * service adds it to what out holds. */
    double xs[D];
    for (size_t j = 0; j < D; j++)
        xs[j] = v[j];
    assert_int_equal(S->glm_design_sum(&f->ch.c, rows, N, sc, xs), 0);
    for (size_t j = 0; j < D; j++)
        assert_true(fabs(xs[j] - v[j] - sumg[j]) < 1e-9 * (1 + fabs(sumg[j])));
    free(G);
    free(X);
}

/* lp__'s estimate for samplers without one, in both row choices: iid
 * rows and, as for a store larger than memory, a block of consecutive
 * rows from a uniform start (wrapping at N).  Each is unbiased for the
 * exact log density: the mean of M estimates within 4.5 standard errors
 * of -U from U_full. */
static void test_lp_estimate_unbiased(void **state)
{
    fixture *f = *state;
    double U;
    assert_int_equal(S->U_full(&f->ch.c, f->theta, &U), 0);
    enum { M = 4000 };
    for (int block = 0; block < 2; block++) {
        double sum = 0, sum2 = 0;
        int wrapped = 0;
        for (int r = 0; r < M; r++) {
            double lp = drift_emit_lp_estimate(&f->ch.c, f->theta, block);
            assert_true(isfinite(lp));
            sum += lp, sum2 += lp * lp;
            const size_t *rows = f->ch.c.scratch.rows;
            for (size_t k = 1; block && k < f->ch.cfg->step.batch; k++) {
                assert_int_equal(rows[k], (rows[0] + k) % N);
                wrapped |= rows[k] == 0;
            }
        }
        double mean = sum / M, sd = sqrt((sum2 / M - mean * mean) * M / (M - 1));
        print_message("lp estimate (%s): mean %.4f, exact %.4f, se %.4f\n",
                      block ? "block" : "iid rows", mean, -U, sd / sqrt(M));
        assert_true(fabs(mean + U) < 4.5 * sd / sqrt((double)M));
        if (block)
            assert_true(wrapped); /* blocks across the end were drawn */
    }
}

static void test_bad_rows_refused(void **state)
{
    fixture *f = *state;
    size_t rows[2] = {3, N};
    double G[2 * D];
    assert_int_not_equal(
        S->grad_rows(&f->ch.c, f->theta, rows, 2, G, NULL), 0);
    assert_non_null(strstr(f->ch.c.message, "row 400"));
}

static void test_batch_matches_rows(void **state)
{
    fixture *f = *state;
    /* grad_batch's scaled sum over the rows it reports. */
    size_t rows[10];
    double g[D], prior[D], sum[D];
    assert_int_equal(S->grad_batch(&f->ch.c, f->theta, 10, g, NULL, rows), 0);
    S->grad_prior(&f->ch.c, f->theta, prior, NULL);
    S->grad_sum(&f->ch.c, f->theta, rows, 10, sum, NULL);
    for (size_t j = 0; j < D; j++)
        assert_true(fabs(g[j] - (N / 10.0 * sum[j] + prior[j])) <
                    1e-9 * (1 + fabs(g[j])));
}

/* Full passes split across threads agree with one thread (to rounding:
 * another summation order), are reproducible, and count N. */
static void test_full_pass_threads(void **state)
{
    (void)state;
    enum { BN = 20000 };
    const char *names[D + 1] = {"y", "x.1", "x.2", "x.3", "x.4", "x.5"};
    double *v = malloc(BN * (D + 1) * sizeof *v);
    drift_rng r;
    drift_rng_seed(&r, 23, 0);
    for (size_t i = 0; i < BN; i++) {
        for (size_t j = 0; j < D; j++)
            v[i * (D + 1) + 1 + j] = drift_rng_normal(&r);
        v[i * (D + 1)] = drift_rng_uniform(&r) < 0.3;
    }
    char *csv = th_write_csv(names, D + 1, v, BN);
    free(v);
    th_problem tp;
    th_open(&tp, "logistic", csv, NULL, 0);
    double theta[D], g1[D], g3[D], g3b[D], U1, U3, U3b;
    char *sets[] = {"h=1e-3"};
    th_run r1 = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 10,
                 .seed = 5};
    th_run r3 = r1;
    r3.threads = 3;
    th_chain t1, t3;
    th_chain_open(&t1, &tp, &r1, NULL, NULL, theta);
    th_chain_open(&t3, &tp, &r3, NULL, NULL, theta);
    drift_chain *c1 = &t1.c, *c3 = &t3.c;
    for (size_t j = 0; j < D; j++)
        theta[j] = 0.2 * (double)j - 0.3;
    assert_int_equal(S->grad_full(c1, theta, g1, &U1), 0);
    assert_int_equal(S->grad_full(c3, theta, g3, &U3), 0);
    assert_int_equal(S->grad_full(c3, theta, g3b, &U3b), 0);
    assert_true(fabs(U1 - U3) < 1e-12 * fabs(U1));
    assert_true(U3 == U3b);
    for (size_t j = 0; j < D; j++) {
        assert_true(fabs(g1[j] - g3[j]) < 1e-10 * (1 + fabs(g1[j])));
        assert_true(g3[j] == g3b[j]);
    }
    double U;
    assert_int_equal(S->U_full(c3, theta, &U), 0);
    assert_true(U == U3);
    assert_int_equal(S->grads(c3), 3 * BN);
    th_chain_close(&t1);
    th_chain_close(&t3);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_batch_unbiased, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counts_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rows_consistent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lp_estimate_unbiased, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_rows_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_matches_rows, setup,
                                        teardown),
        cmocka_unit_test(test_full_pass_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
