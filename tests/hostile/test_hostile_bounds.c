/* test_hostile_bounds.c: extreme but accepted settings and endless inputs
 * end, with a message, in bounded time: a held-out evaluation interval
 * far below one step (--eval-every 1e-20), a continuous sampler's time
 * step so small that it could not advance a trajectory's grid or would
 * flood the disk (--thin 1e-300, 1e-9: refused at start), inputs that never end a line (--init /dev/zero, a
 * directory as --init, drift summary of /dev/zero or of a file of NUL
 * bytes), and a tight limit on address space (ulimit -v 100 MB, where
 * OpenBLAS's thread pool hung the guard's fork), and the largest chain
 * id (its random stream was reached in time linear in the id). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostile.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* drift args in dir: exit status and needle, within limit seconds. */
static void expect_within(const char *dir, const char *const *args,
                          int status, const char *needle, int limit)
{
    double t0 = now();
    th_cli r = hx_run(dir, args, limit);
    if (r.status != status || !strstr(r.err, needle))
        fail_msg("drift %s ...: exit %d after %.1f s (expected %d within "
                 "%d s), stderr:\n%s\n(expected '%s')",
                 args[0], r.status, now() - t0, status, limit, r.err,
                 needle);
    th_cli_free(&r);
}

static void test_eval_every_tiny(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "200", "--warmup",
                          "0", "--seed", "1", "--chains", "1", "--quiet",
                          "--test", "pima.csv", "--eval-every", "1e-20",
                          "--out", "ev.csv", NULL};
    /* Before: five iterations never ended. */
    expect_within(dir, args, 0, "", 60);
    assert_true(hx_exists(dir, "ev_metrics.csv") ||
                hx_exists(dir, "ev.csv"));
    hx_rm(dir);
    free(dir);
}

static void test_continuous_thin_tiny(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    /* Refused before any work (exit 2, no output, in well under the
     * time a warmup takes), for each continuous sampler; before, the
     * run failed (exit 1) once a segment was under way. */
    const char *thins[] = {"1e-300", "1e-9", "9e-5"};
    const char *samplers[] = {"bps", "sbps", "psbps"};
    for (size_t k = 0; k < 3; k++) {
        const char *args[] = {"sample", "logistic.drift", "--data",
                              "pima.csv", "--sampler", samplers[k],
                              "--batch", "20", "--iter", "50", "--seed",
                              "1", "--chains", "1", "--quiet", "--thin",
                              thins[k], "--out", "bp.csv", NULL};
        expect_within(dir, args, 2,
                      "is its output time step, which must be at least "
                      "0.0001",
                      60);
        assert_false(hx_exists(dir, "bp.csv"));
    }
    /* The smallest step taken runs. */
    const char *ok[] = {"sample", "logistic.drift", "--data", "pima.csv",
                        "--sampler", "bps", "--batch", "20", "--iter",
                        "20", "--warmup", "0", "--seed", "1", "--chains",
                        "1", "--quiet", "--thin", "1e-4", "--out",
                        "bp.csv", NULL};
    expect_within(dir, ok, 0, "", 120);
    assert_true(hx_exists(dir, "bp.csv"));
    hx_rm(dir);
    free(dir);
}

static void test_endless_inputs(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *dev[] = {"sample", "logistic.drift", "--data", "pima.csv",
                         "--init", "/dev/zero", "--iter", "10", "--chains",
                         "1", "--out", "z.csv", NULL};
    expect_within(dir, dev, 2, "--init /dev/zero: is a device, not a "
                               "regular file", 30);
    const char *dirinit[] = {"sample", "logistic.drift", "--data",
                             "pima.csv", "--init", "/tmp", "--iter", "10",
                             "--chains", "1", "--out", "z.csv", NULL};
    expect_within(dir, dirinit, 2, "--init /tmp: is a directory", 30);
    const char *zero[] = {"summary", "/dev/zero", NULL};
    expect_within(dir, zero, 2, "a line longer than 64 MiB", 30);
    /* A file of NUL bytes, longer than the bound. */
    char *p = hx_in(dir, "zeros.csv");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    static char block[1 << 20];
    for (int k = 0; k < 65; k++)
        assert_int_equal(fwrite(block, 1, sizeof block, f), sizeof block);
    assert_int_equal(fclose(f), 0);
    free(p);
    const char *zeros[] = {"summary", "zeros.csv", NULL};
    expect_within(dir, zeros, 2, "zeros.csv:1: error: a line longer than "
                                 "64 MiB",
                  30);
    const char *sdir[] = {"summary", "/tmp", NULL};
    expect_within(dir, sdir, 2, "/tmp: is a directory", 30);
    hx_rm(dir);
    free(dir);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static void test_low_address_space(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip(); /* the sanitizer's shadow memory needs terabytes of it */
#endif
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--iter", "50", "--warmup", "50", "--chains", "2",
                          "--seed", "1", "--quiet", "--out", "m.csv", NULL};
    /* OpenBLAS's own variable would hide what is tested. */
    char *was = getenv("OPENBLAS_NUM_THREADS");
    was = was ? strdup(was) : NULL;
    unsetenv("OPENBLAS_NUM_THREADS");
    hx_set_address_space(100000ul * 1024);
    expect_within(dir, args, 0, "", 60);
    /* nuts's default metric takes no dense metric there (its BLAS would
     * wait for ever for its buffer): the run above says diag_e; one
     * asked for by name is refused, promptly, with the reason. */
    const char *dense[] = {"sample", "logistic.drift", "--data", "pima.csv",
                           "--iter", "50", "--warmup", "50", "--chains",
                           "1", "--seed", "1", "--quiet", "--set",
                           "metric=dense", "--out", "dn.csv", NULL};
    expect_within(dir, dense, 2, "address-space limit (ulimit -v)", 60);
    hx_set_address_space(0);
    if (was) {
        setenv("OPENBLAS_NUM_THREADS", was, 1);
        free(was);
    }
    assert_true(hx_exists(dir, "m_1.csv"));
    char *head = hx_slurp(dir, "m_1.csv");
    assert_non_null(head);
    assert_non_null(strstr(head, "metric = diag_e"));
    free(head);
    hx_rm(dir);
    free(dir);
}

/* The largest --chain-id: chain streams were reached by one jump per
 * id, minutes for 10^8. */
static void test_large_chain_id(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4", "--iter",
                          "10", "--chains", "2", "--chain-id", "1073741824",
                          "--quiet", "--out", "ci.csv", NULL};
    expect_within(dir, args, 0, "", 30);
    assert_true(hx_exists(dir, "ci_1073741825.csv"));
    hx_rm(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_every_tiny),
        cmocka_unit_test(test_continuous_thin_tiny),
        cmocka_unit_test(test_endless_inputs),
        cmocka_unit_test(test_low_address_space),
        cmocka_unit_test(test_large_chain_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
