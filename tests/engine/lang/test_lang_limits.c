/* test_lang_limits.c: the model language's size limits.  A value larger
 * than drift holds (2^28 entries) is an error naming the expression and
 * its size, wherever it stands (a ~ statement, target +=, a derived
 * value, a matrix), never a term left out of the model in silence; and a
 * count of entries (num_elements) is the count, whatever its size. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "langtest.h"

static const char *const ydata[] = {"csv:y\n1\n2\n3\n", NULL};

/* model must be refused, its report saying needle and no "internal". */
static void expect_refused(const char *model, const char *needle)
{
    lt_model lm;
    lt_open(&lm, model, ydata, NULL, 0);
    if (lm.rc == 0 || !strstr(lm.report, needle) ||
        strstr(lm.report, "internal error"))
        fail_msg("model:\n%s\nopened with status %d, reporting:\n%s\n"
                 "(expected a refusal saying '%s')",
                 model, lm.rc, lm.report ? lm.report : "", needle);
    lt_close(&lm);
}

static void test_oversize_term(void **state)
{
    (void)state;
    const char *big = "536870912 entries, more than drift allows";
    expect_refused("param { w : vector[3] } prior { w ~ normal(0,1) }\n"
                   "rows { y : real }\n"
                   "datum { y ~ normal(sum(rep_vector(w[1], 536870912)), 1) }\n",
                   big);
    expect_refused("param { w : vector[3] }\n"
                   "prior { w ~ normal(0,1)\n"
                   "        target += sum(rep_vector(w[1], 536870912)) }\n"
                   "rows { y : real } datum { y ~ normal(w[1], 1) }\n",
                   big);
    expect_refused("param { w : vector[3] } prior { w ~ normal(0,1) }\n"
                   "derived { s = sum(rep_vector(w[1], 536870912)) }\n"
                   "rows { y : real } datum { y ~ normal(s, 1) }\n",
                   big);
    expect_refused("param { w : vector[3] } prior { w ~ normal(0,1) }\n"
                   "rows { y : real }\n"
                   "datum { y ~ normal(sum(rep_matrix(w[1], 100000, 100000)),"
                   " 1) }\n",
                   "10000000000 entries, more than drift allows");
    expect_refused("param { w : vector[3] } prior { w ~ normal(0,1) }\n"
                   "rows { y : real }\n"
                   "datum { y ~ normal(sum(head(rep_vector(w[1], 536870912),"
                   " 2)), 1) }\n",
                   big);
}

/* num_elements of a value too large to hold is still its count. */
static void test_count_of_a_large_value(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "param { w : real }\n"
               "prior { target += num_elements(rep_vector(w, 536870912)) "
               "* w }\n",
               NULL, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    assert_non_null(ws);
    double theta = 1e-3;
    double lp = lt_log_density(&lm.m, ws, &theta);
    assert_true(fabs(lp - 536870.912) < 1e-6);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oversize_term),
        cmocka_unit_test(test_count_of_a_large_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
