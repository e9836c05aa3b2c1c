/* test_watch.c: the engine's watch over running minibatch chains (issue
 * 17 item 5), through the drift command as users meet it.  A test sampler
 * (tests/plugins/wobble.c) draws exactly from a standard normal and then,
 * on order, runs away, freezes or blows up: each gets its warning (or its
 * failure) naming chain, iteration and parameter, and the healthy chain
 * gets none.  Then real samplers: sgld with a step size far too large on
 * the Pima logistic regression is told it moved away from the posterior;
 * sgld and sghmc under --gradient cv at sensible settings hear nothing.
 * And what a --gradient cv run's file says of its mode search. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* What the watch says, any of it. */
static const char *const WATCH_WORDS[] = {
    "lp__ fell far below", "stopped moving", "far below the log density",
    "moved away from the posterior", "running away"};

static int watch_spoke(const char *err)
{
    for (size_t k = 0; k < sizeof WATCH_WORDS / sizeof WATCH_WORDS[0]; k++)
        if (strstr(err, WATCH_WORDS[k]))
            return 1;
    return 0;
}

static char *plugin(const char *name)
{
    const char *dir = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(dir);
    size_t n = strlen(dir) + strlen(name) + 8;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s.so", dir, name);
    return p;
}

/* drift sample on the 2-D standard normal with wobble --set fault=F
 * (and speed when not NULL): warmup 1000, 1000 draws, one chain. */
static th_cli run_wobble(const char *fault, const char *speed)
{
    char *mvn = plugin("mvn"), *wob = plugin("wobble");
    char set[40], sp[48], out[] = "/tmp/drift-watch-XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    snprintf(set, sizeof set, "fault=%s", fault);
    snprintf(sp, sizeof sp, "speed=%s", speed ? speed : "0.05");
    th_cli r = th_cli_run((const char *[]){
        "sample", "--model", mvn, "--sampler", wob, "--set", set, "--set",
        sp, "--iter", "1000", "--warmup", "1000", "--chains", "1", "--seed",
        "3", "--out", out, "--quiet", NULL});
    print_message("fault=%s: exit %d\n%s", fault, r.status, r.err);
    unlink(out);
    free(mvn);
    free(wob);
    return r;
}

static void test_healthy(void **state)
{
    (void)state;
    th_cli r = run_wobble("none", NULL);
    assert_int_equal(r.status, 0);
    assert_false(watch_spoke(r.err));
    th_cli_free(&r);
}

static void test_runaway(void **state)
{
    (void)state;
    th_cli r = run_wobble("runaway", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "warning: chain 1: iteration "));
    assert_non_null(strstr(r.err, "lp__ fell far below its range in "
                                  "iterations 500-999"));
    assert_non_null(strstr(r.err, "the chain is running away; x."));
    th_cli_free(&r);
}

static void test_stuck(void **state)
{
    (void)state;
    th_cli r = run_wobble("stuck", NULL);
    assert_int_equal(r.status, 0);
    /* Frozen from iteration 1500: the first whole block of 200 after it
     * (1600-1799) is caught at its end. */
    assert_non_null(strstr(r.err, "warning: chain 1: iteration 1799: x."));
    assert_non_null(strstr(r.err, "stopped moving: over iterations "
                                  "1600-1799"));
    assert_false(strstr(r.err, "running away") != NULL);
    th_cli_free(&r);
}

static void test_blowup(void **state)
{
    (void)state;
    th_cli r = run_wobble("blowup", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "chain 1, iteration 1500: parameter x.2 "
                                  "is inf"));
    th_cli_free(&r);
}

/* A runaway that ends in overflow: the failure says when it began. */
static void test_runaway_then_blowup(void **state)
{
    (void)state;
    th_cli r = run_wobble("runaway", "1e152");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "the chain is running away"));
    assert_non_null(strstr(r.err, "not finite"));
    assert_non_null(strstr(r.err, "lp__ had been running away since "
                                  "iteration 1500"));
    th_cli_free(&r);
}

/* The Pima regression of examples/logistic with sampler options. */
static th_cli run_pima(const char *const *opts)
{
    const char *src = getenv("srcdir");
    char model[4096], data[4096], out[] = "/tmp/drift-watch-XXXXXX";
    snprintf(model, sizeof model, "%s/examples/logistic/logistic.drift",
             src ? src : ".");
    snprintf(data, sizeof data, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    const char *args[40] = {"sample", model, "--data", data, "--seed", "5",
                            "--chains", "2", "--out", out, "--quiet"};
    size_t n = 11;
    for (size_t k = 0; opts[k] && n < 39; k++)
        args[n++] = opts[k];
    args[n] = NULL;
    th_cli r = th_cli_run(args);
    print_message("%s %s: exit %d\n%s", opts[0], opts[1], r.status, r.err);
    char path[64];
    for (int k = 1; k <= 2; k++) {
        snprintf(path, sizeof path, "%.*s_%d", (int)strlen(out), out, k);
        unlink(path);
    }
    unlink(out);
    return r;
}

static void test_real_samplers(void **state)
{
    (void)state;
    th_cli r = run_pima((const char *[]){"--sampler", "sgld", "--set",
                                         "h=10", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "moved away from the posterior"));
    assert_non_null(strstr(r.err, "(unconstrained) is the largest "
                                  "parameter"));
    th_cli_free(&r);
    r = run_pima((const char *[]){"--sampler", "sgld", "--gradient", "cv",
                                  "--set", "h=0.1", "--batch", "50", NULL});
    assert_int_equal(r.status, 0);
    assert_false(watch_spoke(r.err));
    th_cli_free(&r);
    r = run_pima((const char *[]){"--sampler", "sghmc", "--gradient", "cv",
                                  "--set", "h=0.1", "--set",
                                  "scheme=symplectic", "--batch", "50",
                                  NULL});
    assert_int_equal(r.status, 0);
    assert_false(watch_spoke(r.err));
    th_cli_free(&r);
}

/* A cv run's file says what the mode search cost, and chain 1's grads__
 * counts it; a budget too small for the search gets it cut short, with a
 * warning, and the run goes on. */
static void test_cv_header_and_budget(void **state)
{
    (void)state;
    const char *src = getenv("srcdir");
    char model[4096], data[4096], out[] = "/tmp/drift-cvhdr-XXXXXX";
    snprintf(model, sizeof model, "%s/examples/logistic/logistic.drift",
             src ? src : ".");
    snprintf(data, sizeof data, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    th_cli r = th_cli_run((const char *[]){
        "sample", model, "--data", data, "--sampler", "sgld", "--gradient",
        "cv", "--set", "h=0.1", "--chains", "1", "--iter", "100", "--seed",
        "2", "--out", out, "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    char *text = th_slurp(out);
    assert_non_null(text);
    assert_non_null(strstr(text, "\n# gradient = cv\n"));
    assert_non_null(strstr(text, "\n# init = mode\n"));
    assert_non_null(strstr(text, "\n# mode_method = lbfgs\n"));
    assert_non_null(strstr(text, "\n# mode_converged = 1\n"));
    const char *at = strstr(text, "\n# mode_grads = ");
    assert_non_null(at);
    unsigned long long mode_grads = strtoull(at + 16, NULL, 10);
    /* The first draw's grads__ (second column) counts the search. */
    const char *row = strstr(text, "\nlp__,grads__");
    assert_non_null(row);
    row = strchr(row + 1, '\n');
    while (row && row[1] == '#')
        row = strchr(row + 1, '\n');
    assert_non_null(row);
    const char *comma = strchr(row + 1, ',');
    assert_non_null(comma);
    unsigned long long g = strtoull(comma + 1, NULL, 10);
    print_message("mode_grads %llu, first grads__ %llu\n", mode_grads, g);
    assert_true(mode_grads >= 2 * 200);
    assert_true(g > mode_grads);
    free(text);
    /* --passes 6: the search and its store may take 3 passes; it stops
     * there, says so, and the chain samples with the point it reached. */
    r = th_cli_run((const char *[]){
        "sample", model, "--data", data, "--sampler", "sgld", "--gradient",
        "cv", "--set", "h=0.01", "--chains", "1", "--passes", "6", "--seed",
        "2", "--out", out, NULL});
    print_message("%s", r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "the mode search (lbfgs) stopped after"));
    assert_non_null(strstr(r.err, "at its share of the budget"));
    assert_null(strstr(r.err, " 0 draws"));
    th_cli_free(&r);
    /* --passes 2 cannot hold it: refused before any work. */
    r = th_cli_run((const char *[]){
        "sample", model, "--data", data, "--sampler", "sgld", "--gradient",
        "cv", "--chains", "1", "--passes", "2", "--seed", "2", "--out", out,
        NULL});
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--gradient cv with --passes 2: "));
    th_cli_free(&r);
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_runaway),
        cmocka_unit_test(test_stuck),
        cmocka_unit_test(test_blowup),
        cmocka_unit_test(test_runaway_then_blowup),
        cmocka_unit_test(test_real_samplers),
        cmocka_unit_test(test_cv_header_and_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
