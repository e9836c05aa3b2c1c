/* test_alloc.c: the engine's allocation paths fail gracefully.  Each
 * allocation of a path (a plan made from a spec: the registry's lookups,
 * the model opened over a CSV file; then the whole run) is made to fail in
 * turn: every failure must be
 * reported as an error with a message, never a crash or a leak (the
 * sanitizer build checks the leaks). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <drift/drift.h>

#include "base/util.h"
#include "harness.h"

static const char *CSV = "y,x.1,x.2\n1,1,0.5\n0,1,-0.3\n1,1,2\n0,1,-1\n";

/* Rows of the run, dropped (the run writes no file). */
static void drop_row(void *user, unsigned chain_id, unsigned flags,
                     const double *row, size_t n)
{
    (void)user, (void)chain_id, (void)flags, (void)row, (void)n;
}

/* The path under test, as a user of libdrift takes it (a plan made from a
 * spec, then run): returns 0 on success, else an error status with a
 * message in e. */
static int path(const char *csv, drift_err *e)
{
    const char *data[] = {csv};
    const drift_option options[] = {
        {"set", "h=1e-3"}, {"batch", "2"},   {"iter", "5"},
        {"warmup", "0"},   {"thin", "1"},    {"seed", "1"},
        {"chains", "1"},   {"init", "zero"}, {"quiet", NULL}};
    drift_spec spec = {.model = "logistic", .data = data, .n_data = 1,
                       .sampler = "sgld", .options = options,
                       .n_options = sizeof options / sizeof *options,
                       .on_draw = drop_row};
    drift_plan *p;
    int rc = drift_plan_new(&spec, &p, e);
    if (rc)
        return rc;
    rc = drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, e);
    drift_plan_free(p);
    return rc;
}

/* A plugin directory holding only the two plugins the path uses (links
 * to the build's), so that the share of allocations whose failure must be
 * reported does not fall each time a plugin is added to drift: a plugin
 * that fails to load during a scan is a warning, not an error. */
static char *two_plugin_dir(void)
{
    static char dir[] = "/tmp/drift-alloc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *base = getenv("DRIFT_PLUGIN_DIR");
    assert_non_null(base);
    const char *want[] = {"sgld.so", "logistic.so"};
    for (size_t k = 0; k < 2; k++) {
        char *copy = strdup(base), *save = NULL;
        int found = 0;
        for (char *d = strtok_r(copy, ":", &save); d && !found;
             d = strtok_r(NULL, ":", &save)) {
            char from[4096], to[4096];
            snprintf(from, sizeof from, "%s/%s", d, want[k]);
            snprintf(to, sizeof to, "%s/%s", dir, want[k]);
            if (access(from, R_OK) == 0) {
                assert_int_equal(symlink(from, to), 0);
                found = 1;
            }
        }
        free(copy);
        if (!found)
            fail_msg("%s is not in DRIFT_PLUGIN_DIR=%s", want[k], base);
    }
    return dir;
}

static void remove_plugin_dir(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/sgld.so", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/logistic.so", dir);
    unlink(p);
    rmdir(dir);
}

static void test_each_allocation_fails(void **state)
{
    (void)state;
    char *dir = two_plugin_dir();
    char *old = strdup(getenv("DRIFT_PLUGIN_DIR"));
    setenv("DRIFT_PLUGIN_DIR", dir, 1);
    char *csv = th_write_text(CSV, ".csv");
    drift_err e = {{0}};
    drift_fail_alloc(0);
    assert_int_equal(path(csv, &e), 0);
    uint64_t n = drift_fail_alloc(0);
    assert_true(n > 10);
    size_t reported = 0;
    for (uint64_t k = 1; k <= n; k++) {
        memset(&e, 0, sizeof e);
        drift_fail_alloc(k);
        int rc = path(csv, &e);
        drift_fail_alloc(0);
        /* A failed allocation that only loses a warning or a cached name
         * may leave the run successful; any failure must explain itself. */
        if (rc) {
            reported++;
            if (!e.msg[0])
                fail_msg("allocation %llu of %llu failed silently (status %d)",
                         (unsigned long long)k, (unsigned long long)n, rc);
        }
    }
    print_message("%llu allocations, %zu failures reported\n",
                  (unsigned long long)n, reported);
    assert_true(reported > n / 2);
    unlink(csv);
    free(csv);
    setenv("DRIFT_PLUGIN_DIR", old, 1);
    free(old);
    remove_plugin_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_allocation_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
