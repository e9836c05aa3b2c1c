/* test_hostile_guard.c: what the run says about every chain when a
 * sampler plugin misbehaves.  A thread a plugin leaves running that
 * crashes the process after the run has ended and been reported does not
 * turn the completed run into a failure (a warning says what happened);
 * and when a plugin ends the process mid-run, the chains that had not
 * begun (queued behind the running ones) are named as having no file,
 * not passed over in silence. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

static const char *crashy(void)
{
    static char path[4200];
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (!tp)
        fail_msg("DRIFT_TEST_PLUGIN_DIR is not set: run with make check");
    snprintf(path, sizeof path, "%s/crashy.so", tp);
    return path;
}

static void test_thread_outlives_the_run(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    const char *args[] = {"sample", hx_src("examples/gaussian/gaussian.drift"),
                          "--data", hx_src("examples/gaussian/gaussian.csv"),
                          "--sampler", crashy(), "--set", "how=linger",
                          "--set", "at=300", "--set", "chain=2", "--chains",
                          "2", "--warmup", "100", "--iter", "1000", "--seed",
                          "5", "--quiet", "--out", "cr.csv", NULL};
    hx_expect(dir, args, 0, "the sampling process died of SIGSEGV (a bad "
                            "memory access) after the run had ended and "
                            "been reported");
    assert_true(hx_exists(dir, "cr_1.csv"));
    assert_true(hx_exists(dir, "cr_2.csv"));
    hx_rm(dir);
    free(dir);
}

static void test_queued_chains_accounted(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    /* Far more chains than cores, so that most are queued when chain 1
     * calls exit. */
    const char *args[] = {"sample", hx_src("examples/gaussian/gaussian.drift"),
                          "--data", hx_src("examples/gaussian/gaussian.csv"),
                          "--sampler", crashy(), "--set", "how=exit",
                          "--set", "at=300", "--set", "chain=1", "--chains",
                          "64", "--warmup", "100", "--iter", "100000",
                          "--seed", "5", "--quiet", "--out", "cr.csv", NULL};
    th_cli r = hx_run(dir, args, 120);
    if (r.status != 1 || !strstr(r.err, "called exit at iteration 300") ||
        !strstr(r.err, "no file (they had not begun sampling"))
        fail_msg("exit %d, stderr:\n%s", r.status, r.err);
    /* Every chain is named: kept in a file, or no file. */
    for (int k = 1; k <= 64; k++) {
        char one[64], range[64];
        snprintf(one, sizeof one, "drift: chain %d: ", k);
        int named = strstr(r.err, one) != NULL;
        for (int a = 1; a <= k && !named; a++)
            for (int b = k; b <= 64 && !named; b++) {
                snprintf(range, sizeof range, "drift: chains %d-%d: ", a, b);
                named = strstr(r.err, range) != NULL;
            }
        if (!named)
            fail_msg("chain %d is not accounted for:\n%s", k, r.err);
    }
    th_cli_free(&r);
    hx_rm(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_outlives_the_run),
        cmocka_unit_test(test_queued_chains_accounted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
