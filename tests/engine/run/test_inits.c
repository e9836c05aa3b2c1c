/* test_inits.c: --init FILE: CmdStan-style JSON (scalars, vectors,
 * matrices as nested arrays) and CSV (by column name, last row, comments,
 * lp__ and sampler columns skipped) mapped onto a model's output names,
 * and every way a file can fail to fit, each named: a key or column that
 * is none of the model's values is refused with the nearest name, never
 * ignored. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/inits.h"
#include "harness.h"

/* A model as inits.c sees it: only n_out and out_names are read. */
static const char *const names[] = {"a",     "w.1",   "w.2",
                                    "M.1.1", "M.1.2", "M.1.3",
                                    "M.2.1", "M.2.2", "M.2.3"};
enum { N_OUT = 9 };

static drift_model fake(void)
{
    drift_model m;
    memset(&m, 0, sizeof m);
    m.n_out = N_OUT;
    m.out_names = names;
    return m;
}

static int read_text(const char *text, const char *suffix, double *v,
                     drift_err *e)
{
    char *path = th_write_text(text, suffix);
    drift_model m = fake();
    int rc = drift_inits_read(path, &m, v, e);
    unlink(path);
    free(path);
    return rc;
}

static void test_json(void **state)
{
    (void)state;
    double v[N_OUT];
    drift_err e = {{0}};
    int rc = read_text("{\"a\": 1.5, \"w\": [2, -3e-1],\n"
                       " \"M\": [[11, 12, 0], [21, 22, 23]]}",
                       ".json", v, &e);
    if (rc)
        fail_msg("%s", e.msg);
    const double want[N_OUT] = {1.5, 2, -0.3, 11, 12, 0, 21, 22, 23};
    for (int k = 0; k < N_OUT; k++)
        assert_true(v[k] == want[k]);
}

static void expect_fail(const char *text, const char *suffix,
                        const char *what)
{
    double v[N_OUT];
    drift_err e = {{0}};
    int rc = read_text(text, suffix, v, &e);
    if (rc == DRIFT_OK || !strstr(e.msg, what))
        fail_msg("'%s': rc %d, message '%s' (wanted '%s')", text, rc, e.msg,
                 what);
}

static void test_json_errors(void **state)
{
    (void)state;
    const char *M = "\"M\": [[1, 2, 3], [4, 5, 6]]";
    char t[256];
    snprintf(t, sizeof t, "{\"w\": [1, 2], %s}", M);
    expect_fail(t, ".json", "no value for 'a' (the model's parameter a)");
    snprintf(t, sizeof t, "{\"a\": 1, \"w\": [1], %s}", M);
    expect_fail(t, ".json", "'w' has 1 elements where the model needs at "
                            "least 2 (for w.2)");
    snprintf(t, sizeof t, "{\"a\": [1], \"w\": [1, 2], %s}", M);
    expect_fail(t, ".json", "'a' has more dimensions than the model's a");
    snprintf(t, sizeof t, "{\"a\": 1, \"w\": 3, %s}", M);
    expect_fail(t, ".json", "'w' is not an array deep enough for w.1");
    snprintf(t, sizeof t, "{\"a\": \"one\", \"w\": [1, 2], %s}", M);
    expect_fail(t, ".json", "the value for a is not a number");
    expect_fail("{\"a\": 1,\n \"w\": [1, 2,]}", ".json", ":2:");
    expect_fail("[1, 2]", ".json", "expected a JSON object");
    expect_fail("   \n", ".json", "the file is empty");
    /* Keys that are none of the model's, or given twice, or too long. */
    snprintf(t, sizeof t, "{\"a\": 1, \"w\": [1, 2], \"other\": \"x\", %s}", M);
    expect_fail(t, ".json", "'other' names no value of the model");
    snprintf(t, sizeof t, "{\"a\": 1, \"ww\": [1, 2], %s}", M);
    expect_fail(t, ".json", "'ww' names no value of the model (did you "
                            "mean 'w'?)");
    snprintf(t, sizeof t, "{\"a\": 1, \"a\": 2, \"w\": [1, 2], %s}", M);
    expect_fail(t, ".json", "duplicate object key");
    snprintf(t, sizeof t, "{\"a\": 1, \"w\": [1, 2, 3], %s}", M);
    expect_fail(t, ".json", "'w' holds 3 values, the model's 'w' has 2");
    double v[N_OUT];
    drift_err e;
    drift_model m = fake();
    assert_int_equal(drift_inits_read("/nonexistent/i.json", &m, v, &e),
                     DRIFT_EIO);
    assert_non_null(strstr(e.msg, "/nonexistent/i.json: cannot open"));
}

static void test_csv(void **state)
{
    (void)state;
    double v[N_OUT];
    drift_err e = {{0}};
    /* A Stan CSV of draws: comments, lp__ and __ columns, last row used. */
    int rc = read_text("# drift_version = x\n"
                       "lp__,grads__,M.2.3,M.2.2,M.2.1,M.1.3,M.1.2,M.1.1,w.2,"
                       "w.1,a\n"
                       "0,0,9,9,9,9,9,9,9,9,9\n"
                       "-1,10,23,22,21,13,12,11,-0.3,2,1.5\n"
                       "# footer\n",
                       ".csv", v, &e);
    if (rc)
        fail_msg("%s", e.msg);
    const double want[N_OUT] = {1.5, 2, -0.3, 11, 12, 13, 21, 22, 23};
    for (int k = 0; k < N_OUT; k++)
        assert_true(v[k] == want[k]);
    expect_fail("a,w.1,w.2,M.1.1,M.1.2,M.1.3,M.2.1,M.2.2\n1,2,3,4,5,6,7,8\n",
                ".csv", "no column 'M.2.3'");
    expect_fail("a,w.1,w.2,M.1.1,M.1.2,M.1.3,M.2.1,M.2.2,M.2.3\n", ".csv",
                "no row of values");
    expect_fail("a,w.1,w.2,M.1.1,M.1.2,M.1.3,M.2.1,M.2.2,M.2.3\n"
                "1,2,nan,4,5,6,7,8,9\n",
                ".csv", "the value for w.2 is nan");
    expect_fail("a,w.1,w.2,M.1.1,M.1.2,M.1.3,M.2.1,M.2.2,M.2.3,x\n"
                "1,2,3,4,5,6,7,8,9,0\n",
                ".csv", "'x' names no value of the model");
    expect_fail("a,w.1,w.2,M.1.1,M.1.2,M.1.3,M.2.1,M.2.2,M.2.3,a\n"
                "1,2,3,4,5,6,7,8,9,0\n",
                ".csv", "column 'a' is named twice (columns 1 and 10)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
