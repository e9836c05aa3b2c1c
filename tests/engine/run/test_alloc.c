/* test_alloc.c: the engine's allocation paths fail gracefully.  Each
 * allocation of a path (registry scan and lookup, opening a model over a
 * CSV file, a whole run) is made to fail in turn: every failure must be
 * reported as an error with a message, never a crash or a leak (the
 * sanitizer build checks the leaks). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/run/hparam.h"
#include "harness.h"

static const char *CSV = "y,x.1,x.2\n1,1,0.5\n0,1,-0.3\n1,1,2\n0,1,-1\n";

/* The path under test: returns 0 on success, else an error status with a
 * message in e. */
static int path(const char *csv, drift_err *e)
{
    drift_registry *reg = drift_registry_new();
    if (!reg)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc = drift_registry_scan(reg, e);
    const drift_sampler_entry *se = NULL;
    if (!rc)
        rc = drift_registry_sampler(reg, "sgld", &se, e);
    drift_problem p;
    memset(&p, 0, sizeof p);
    const char *data[] = {csv, NULL};
    drift_problem_spec spec = {.model = "logistic", .data = data,
                               .model_set = NULL, .n_model_set = 0};
    if (!rc)
        rc = drift_problem_open(&p, reg, &spec, e);
    if (!rc) {
        drift_sampler s = se->s;
        double hp[2] = {1e-3, 0}; /* sgld: h, precond (auto) */
        drift_run_config cfg = {.model = &p.model,
                                .data = drift_problem_data(&p),
                                .sampler = &s, .hp = hp, .batch = 2,
                                .iters = 5, .thin = 1, .seed = 1,
                                .chains = 1, .quiet = 1};
        drift_chain_result res;
        rc = drift_run(&cfg, &res, e);
    }
    drift_problem_close(&p);
    drift_registry_free(reg);
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
    drift_err e;
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
