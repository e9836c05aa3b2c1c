/* test_rwm.c: the guide's minimal sampler (examples/minimal-sampler/rwm.c,
 * walked through in docs/writing-a-sampler.md) builds as a plugin, loads,
 * validates its hyperparameter through the engine, counts its gradients,
 * and samples the Gaussian with per-datum centres (tests/data/centres2.csv)
 * correctly: mean and variance of each coordinate within 4.5 Monte Carlo
 * standard errors (ESS of each statistic's own series, Geyer) of the
 * closed form N(mean of the c_i, I/N). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/hparam.h"
#include "harness.h"

static const char *rwm_path(void)
{
    static char path[4096];
    const char *d = getenv("DRIFT_EXAMPLES_BUILDDIR");
    if (!d)
        fail_msg("DRIFT_EXAMPLES_BUILDDIR is not set: run with make check");
    snprintf(path, sizeof path, "%s/minimal-sampler/.libs/rwm.so", d);
    return path;
}

static const char *centres(void)
{
    static char path[4096];
    const char *src = getenv("srcdir");
    snprintf(path, sizeof path, "%s/tests/data/centres2.csv",
             src ? src : ".");
    return path;
}

static void check_series(const char *what, const double *x, size_t n,
                         double truth)
{
    th_draws d = {.n = n, .cols = 1, .cap = n, .v = (double *)x};
    double m = th_mean(&d, 0, 0), sd = sqrt(th_var(&d, 0, 0));
    double ess = th_ess(&d, 0, 0), se = sd / sqrt(ess);
    print_message("  %-7s %.6f (exact %.6f): %+.2f se, ess %.0f\n", what, m,
                  truth, (m - truth) / se, ess);
    assert_true(ess > 200);
    assert_true(fabs(m - truth) < 4.5 * se);
}

static void test_samples_the_gaussian(void **state)
{
    (void)state;
    th_problem tp;
    th_open(&tp, "gaussian", centres(), NULL, 0);
    const drift_data *dd = drift_problem_data(&tp.p);
    double mu[2] = {0, 0};
    for (size_t i = 0; i < dd->n_rows; i++)
        for (size_t k = 0; k < 2; k++)
            mu[k] += dd->values[i * dd->row_stride + k] / (double)dd->n_rows;
    /* About 2.4 / sqrt(d) posterior sds: the usual random-walk scale. */
    char *set[] = {"step=0.054"};
    th_run r = {.sampler = rwm_path(), .set = set, .n_set = 1,
                .iters = 20000, .warmup = 2000, .seed = 3};
    th_draws dr;
    drift_chain_result res;
    assert_int_equal(th_sample(&tp, &r, &dr, &res), DRIFT_OK);
    assert_int_equal(dr.n, 20000);
    /* One full pass at init and one per iteration. */
    assert_int_equal(res.grads, 1000 * (1 + 22000));
    double rate = dr.v[(dr.n - 1) * dr.cols + 2];
    print_message("rwm: acceptance %.3f\n", rate);
    assert_true(rate > 0.2 && rate < 0.6);
    double *s = malloc(dr.n * sizeof *s);
    assert_non_null(s);
    for (size_t k = 0; k < 2; k++) {
        for (size_t t = 0; t < dr.n; t++)
            s[t] = dr.v[t * dr.cols + 3 + k];
        check_series(k ? "mean 2" : "mean 1", s, dr.n, mu[k]);
        for (size_t t = 0; t < dr.n; t++)
            s[t] = (s[t] - mu[k]) * (s[t] - mu[k]);
        check_series(k ? "var 2" : "var 1", s, dr.n, 1e-3);
    }
    free(s);
    th_draws_free(&dr);
    th_close(&tp);
}

static void test_hyperparameter_validated(void **state)
{
    (void)state;
    drift_registry *r = drift_registry_new();
    drift_err e = {{0}};
    const drift_sampler_entry *se;
    if (drift_registry_sampler(r, rwm_path(), &se, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(se->s.name, "rwm");
    double hp[1];
    char *bad[] = {"step=-1"};
    assert_int_not_equal(drift_hparams_apply(se->s.hparams, se->s.n_hparams,
                                             "--set", "sampler rwm", bad, 1,
                                             hp, NULL, &e), 0);
    assert_non_null(strstr(e.msg, "out of range"));
    drift_registry_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_the_gaussian),
        cmocka_unit_test(test_hyperparameter_validated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
