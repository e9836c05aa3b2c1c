/* test_hparam.c: hyperparameter tables and `--set name=value`: parsing by
 * type, bounds (open and closed), enums and bools, and the messages for
 * every way a setting can be wrong. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "engine/run/hparam.h"
#include "harness.h"

static const drift_hparam T[] = {
    {"h", DRIFT_HP_REAL, 0.01, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL, "step"},
    {"M", DRIFT_HP_INT, 1, 1, 100, 0, NULL, "chain length"},
    {"snapshot", DRIFT_HP_ENUM, 2, 0, 0, 0, "ptu|ppu|tmu", "strategy"},
    {"zero", DRIFT_HP_BOOL, 0, 0, 0, 0, NULL, "flag"},
    {"sigma", DRIFT_HP_REAL, NAN, 0, INFINITY, 0, NULL, "derived"},
};
enum { NT = 5 };

static void test_table_ok(void **state)
{
    (void)state;
    drift_err e;
    assert_int_equal(drift_hparams_check(T, NT, "t", &e), 0);
}

static void test_apply(void **state)
{
    (void)state;
    double v[NT];
    unsigned char set[NT];
    drift_err e;
    char *s[] = {"h=1e-3", "M=7", "snapshot=ppu", "zero=true"};
    assert_int_equal(drift_hparams_apply(T, NT, "--set", "sampler x", s, 4, v,
                                         set, &e),
                     0);
    assert_true(v[0] == 1e-3 && v[1] == 7 && v[2] == 1 && v[3] == 1);
    assert_true(isnan(v[4]));
    assert_true(set[0] && !set[4]);
    char buf[32];
    drift_hparam_format(&T[2], v[2], buf, sizeof buf);
    assert_string_equal(buf, "ppu");
    drift_hparam_format(&T[4], v[4], buf, sizeof buf);
    assert_string_equal(buf, "auto");
}

static void expect(const char *setting, const char *needle)
{
    double v[NT];
    unsigned char set[NT];
    drift_err e = {{0}};
    char *s[] = {(char *)setting};
    assert_int_not_equal(drift_hparams_apply(T, NT, "--set", "sampler x", s,
                                             1, v, set, &e),
                         0);
    print_message("%s\n", e.msg);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' lacks '%s'", e.msg, needle);
    assert_non_null(strstr(e.msg, "--set"));
}

static void test_errors(void **state)
{
    (void)state;
    expect("h=0", "value out of range; 'h' of sampler x accepts (0, inf)");
    expect("h=-1", "accepts (0, inf)");
    expect("h=abc", "'abc' is not a valid real");
    expect("h=nan", "not a valid real");
    expect("M=1.5", "not a valid int");
    expect("M=101", "accepts [1, 100]");
    expect("snapshot=xyz", "expected ptu|ppu|tmu");
    expect("zero=maybe", "expected true|false");
    expect("hh=1", "no hyperparameter 'hh' (did you mean 'h'?)");
    expect("h", "expected name=value");
    expect("=3", "expected name=value");
    double v[NT];
    unsigned char set[NT];
    drift_err e;
    char *twice[] = {"h=1", "h=2"};
    assert_int_not_equal(drift_hparams_apply(T, NT, "--set", "x", twice, 2, v,
                                             set, &e),
                         0);
    assert_non_null(strstr(e.msg, "set twice"));
}

static void test_bad_tables(void **state)
{
    (void)state;
    drift_err e;
    drift_hparam bad1[] = {{"1h", DRIFT_HP_REAL, 0, 0, 1, 0, NULL, "d"}};
    assert_int_not_equal(drift_hparams_check(bad1, 1, "p", &e), 0);
    assert_non_null(strstr(e.msg, "invalid name"));
    drift_hparam bad2[] = {{"e", DRIFT_HP_ENUM, 3, 0, 0, 0, "a|b", "d"}};
    assert_int_not_equal(drift_hparams_check(bad2, 1, "p", &e), 0);
    assert_non_null(strstr(e.msg, "default index"));
    drift_hparam bad3[] = {{"e", DRIFT_HP_ENUM, 0, 0, 0, 0, "a||b", "d"}};
    assert_int_not_equal(drift_hparams_check(bad3, 1, "p", &e), 0);
    drift_hparam bad4[] = {{"x", DRIFT_HP_REAL, 0, 0, 1, DRIFT_HP_OPEN_LO, NULL, "d"}};
    assert_int_not_equal(drift_hparams_check(bad4, 1, "p", &e), 0);
    assert_non_null(strstr(e.msg, "(0, 1]"));
    drift_hparam bad5[] = {{"batch", DRIFT_HP_INT, 1, 1, 9, 0, NULL, "d"}};
    assert_int_not_equal(drift_hparams_check(bad5, 1, "p", &e), 0);
    assert_non_null(strstr(e.msg, "reserved"));
    drift_hparam bad6[] = {{"x", DRIFT_HP_REAL, 0, 0, 1, 0, NULL, NULL}};
    assert_int_not_equal(drift_hparams_check(bad6, 1, "p", &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_ok),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bad_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
