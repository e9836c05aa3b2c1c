/* test_fixed_param.c: --sampler fixed_param: every draw is the initial
 * point (given, or Stan's random inits), lp__ and accept_stat__ are 0, no
 * gradient is spent, and the generated block runs per draw: normal_rng's
 * draws at the fixed point have the closed-form mean and sd within Monte
 * Carlo error. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

static const char *model_text =
    "param { mu : real  sigma : real<lower=0> }\n"
    "prior { mu ~ normal(0, 1)  sigma ~ exponential(1) }\n"
    "generated { y = normal_rng(mu, sigma) }\n";

static drift_stancsv *run(const char *m, const char *init, const char *seed,
                          const char *out)
{
    const char *args[16] = {"sample", m, "--sampler", "fixed_param",
                            "--chains", "1", "--iter", "4000", "--seed", seed,
                            "--out", out};
    size_t n = 12;
    if (init) {
        args[n++] = "--init";
        args[n++] = init;
    }
    args[n] = NULL;
    th_cli r = th_cli_run(args);
    if (r.status)
        fail_msg("exit %d\n%s", r.status, r.err);
    /* CmdStan's fixed_param: no warmup, and nothing to warn about in
     * chains that differ only by their initial points. */
    if (strstr(r.err, "warning:") || !strstr(r.err, "chain 1: 4000 iterations,"))
        fail_msg("a warning, or warmup iterations:\n%s", r.err);
    th_cli_free(&r);
    return th_csv_read(out);
}

static void test_given_init(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char *i = th_write_text("{\"mu\": 2, \"sigma\": 3}", ".json");
    char out[] = "/tmp/drift-fp-XXXXXX";
    close(mkstemp(out));
    drift_stancsv *f = run(m, i, "7", out);
    assert_int_equal(f->n_rows - f->n_warmup, 4000);
    assert_string_equal(drift_stancsv_meta(f, "algorithm"), "fixed_param");
    double s = 0, ss = 0;
    size_t n = f->n_rows;
    for (size_t r = f->n_warmup; r < n; r++) {
        assert_true(th_csv_value(f, "mu", r) == 2 && th_csv_value(f, "sigma", r) == 3);
        assert_true(th_csv_value(f, "lp__", r) == 0 && th_csv_value(f, "accept_stat__", r) == 0);
        assert_true(th_csv_value(f, "grads__", r) == 0);
        double y = th_csv_value(f, "y", r);
        s += y;
        ss += y * y;
    }
    double k = (double)(n - f->n_warmup), mean = s / k,
           sd = sqrt((ss - k * mean * mean) / (k - 1));
    /* y ~ normal(2, 3): mean's standard error 3/sqrt(4000) = 0.047, the
     * sd's 3/sqrt(8000) = 0.034; 4 of each */
    if (fabs(mean - 2) > 4 * 3 / sqrt(k) || fabs(sd - 3) > 4 * 3 / sqrt(2 * k))
        fail_msg("y: mean %g (want 2), sd %g (want 3)", mean, sd);
    drift_stancsv_free(f);
    unlink(out);
    unlink(m), unlink(i);
    free(m), free(i);
}

/* Without --init: Stan's random inits, uniform(-2, 2) on the
 * unconstrained scale, kept for every draw. */
static void test_random_init(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char out[] = "/tmp/drift-fp-XXXXXX";
    close(mkstemp(out));
    drift_stancsv *f = run(m, NULL, "11", out);
    double mu = th_csv_value(f, "mu", f->n_warmup), sg = th_csv_value(f, "sigma", f->n_warmup);
    assert_true(mu > -2 && mu < 2 && sg > exp(-2) && sg < exp(2));
    for (size_t r = f->n_warmup; r < f->n_rows; r++)
        assert_true(th_csv_value(f, "mu", r) == mu && th_csv_value(f, "sigma", r) == sg);
    drift_stancsv_free(f);
    unlink(out);
    unlink(m);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_given_init),
        cmocka_unit_test(test_random_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
