/* test_generate.c: drift generate, standalone generated quantities: at
 * every draw of hand-written Stan CSV files, the derived block exactly
 * (2 mu), the generated block's normal_rng(mu, 1) with the closed-form
 * mean and sd of yrep - mu within Monte Carlo error, one output per input
 * with the input's comments and columns kept (a recomputed column once),
 * the same seed giving the same draws, and a draws file of another model
 * refused naming the missing column. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/stancsv.h"
#include "harness.h"

static const char *model_text =
    "rows { y : real }\n"
    "param { mu : real }\n"
    "prior { mu ~ normal(0, 10) }\n"
    "datum { y ~ normal(mu, 1) }\n"
    "derived { mu2 = 2 * mu }\n"
    "generated { yrep = normal_rng(mu, 1)  d = yrep - mu }\n";

#define NDRAWS 4000

/* A fit's file: mu spread over [-3, 3], a stale d column (recomputed). */
static char *fit_file(double shift)
{
    size_t cap = 64 * NDRAWS + 256, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n,
                          "# model = r\n# method = sample (Default)\n"
                          "lp__,accept_stat__,mu,d\n");
    for (int r = 0; r < NDRAWS; r++)
        n += (size_t)snprintf(t + n, cap - n, "-1,0.9,%.6f,99\n",
                              shift - 3 + 6.0 * r / NDRAWS);
    n += (size_t)snprintf(t + n, cap - n, "# Elapsed Time: 1 seconds\n");
    char *p = th_write_text(t, ".csv");
    free(t);
    return p;
}

static void test_generate(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n", ".csv");
    char *f1 = fit_file(0), *f2 = fit_file(1);
    char out[] = "/tmp/drift-gq-XXXXXX";
    close(mkstemp(out));
    unlink(out);
    char o1[64], o2[64];
    snprintf(o1, sizeof o1, "%s_1.csv", out);
    snprintf(o2, sizeof o2, "%s_2.csv", out);
    th_cli r = th_cli_run((const char *[]){"generate", m, "--data", d,
                                           "--draws", f1, f2, "--out", out,
                                           "--seed", "9", NULL});
    if (r.status)
        fail_msg("exit %d\n%s", r.status, r.err);
    th_cli_free(&r);
    for (int k = 0; k < 2; k++) {
        drift_stancsv *f = th_csv_read(k ? o2 : o1);
        assert_int_equal(f->n_rows, NDRAWS);
        assert_int_equal(f->n_cols, 6); /* lp__ accept_stat__ mu mu2 yrep d */
        assert_string_equal(f->names[3], "mu2");
        assert_string_equal(drift_stancsv_meta(f, "model"), "r");
        assert_true(th_csv_value(f, "lp__", 0) == -1);
        double s = 0, ss = 0;
        for (size_t i = 0; i < NDRAWS; i++) {
            double mu = th_csv_value(f, "mu", i);
            assert_true(fabs(mu - (k - 3 + 6.0 * (double)i / NDRAWS)) < 1e-6);
            assert_true(fabs(th_csv_value(f, "mu2", i) - 2 * mu) < 1e-9);
            double dd = th_csv_value(f, "d", i);
            assert_true(fabs(dd - (th_csv_value(f, "yrep", i) - mu)) < 1e-8);
            s += dd;
            ss += dd * dd;
        }
        double mean = s / NDRAWS,
               sd = sqrt((ss - NDRAWS * mean * mean) / (NDRAWS - 1));
        /* yrep - mu ~ normal(0, 1): 4 standard errors */
        if (fabs(mean) > 4 / sqrt(NDRAWS) ||
            fabs(sd - 1) > 4 / sqrt(2.0 * NDRAWS))
            fail_msg("file %d: yrep - mu has mean %g, sd %g (want 0, 1)", k,
                     mean, sd);
        drift_stancsv_free(f);
    }
    /* the same seed, the same draws; the second file its own stream */
    char *t1 = th_slurp(o1), *t2 = th_slurp(o2);
    th_cli r2 = th_cli_run((const char *[]){"generate", m, "--data", d,
                                            "--draws", f1, "--out", o2,
                                            "--seed", "9", NULL});
    assert_int_equal(r2.status, 0);
    th_cli_free(&r2);
    char *t3 = th_slurp(o2);
    assert_string_equal(t1, t3);
    assert_true(strcmp(strstr(t1, "\n-1,"), strstr(t2, "\n-1,")) != 0);
    free(t1), free(t2), free(t3);
    unlink(o1), unlink(o2);
    unlink(m), unlink(d), unlink(f1), unlink(f2);
    free(m), free(d), free(f1), free(f2);
}

static void test_refusals(void **state)
{
    (void)state;
    char *m = th_write_text(model_text, ".drift");
    char *d = th_write_text("y\n0.5\n1.5\n", ".csv");
    char *o = th_write_text("lp__,nu\n0,1\n", ".csv");
    th_cli r = th_cli_run((const char *[]){"generate", m, "--data", d,
                                           "--draws", o, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no column 'mu'"));
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"generate", m, "--data", d, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no draws given"));
    th_cli_free(&r);
    char *m0 = th_write_text("param { mu : real }\nprior { mu ~ normal(0, 1) "
                             "}\n",
                             ".drift");
    char *f = th_write_text("lp__,mu\n0,1\n", ".csv");
    r = th_cli_run((const char *[]){"generate", m0, "--draws", f, NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no derived or generated"));
    th_cli_free(&r);
    unlink(m), unlink(d), unlink(o), unlink(m0), unlink(f);
    free(m), free(d), free(o), free(m0), free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
