/* test_langdata.c: binding a model's data: rows from CSV and from JSON,
 * data-block values from CmdStan JSON and --data-set, sizes from explicit
 * values or the data's shapes, and golden reports for every mismatch
 * (a name missing or given twice, columns missing or out of range,
 * non-integers, outcomes outside a distribution's support, indices out of
 * range, sizes that disagree, malformed JSON), each naming the file, line
 * and column with a caret where the data are text. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/langdata.h"
#include "harness.h"
#include "langtest.h"

/* The report with the temporary paths replaced by MODEL, DATA1, DATA2. */
static char *normalised(const lt_model *lm)
{
    const char *names[] = {"MODEL", "DATA1", "DATA2", "DATA3"};
    char *s = strdup(lm->report ? lm->report : "");
    for (size_t k = 0; k < lm->n_paths && k < 4; k++) {
        const char *p = lm->paths[k];
        size_t pl = strlen(p), nl = strlen(names[k]);
        for (char *hit; (hit = strstr(s, p));) {
            size_t before = (size_t)(hit - s), total = strlen(s);
            char *ns = malloc(total - pl + nl + 1);
            memcpy(ns, s, before);
            memcpy(ns + before, names[k], nl);
            strcpy(ns + before + nl, hit + pl);
            free(s);
            s = ns;
        }
    }
    return s;
}

static void golden(const char *model, const char *const *data,
                   char *const *sets, size_t n_sets, const char *want)
{
    lt_model lm;
    lt_open(&lm, model, data, sets, n_sets);
    char *got = normalised(&lm);
    if (lm.rc == 0 || strcmp(got, want)) {
        fprintf(stderr, "--- got (rc %d):\n%s--- want:\n%s", lm.rc, got,
                want);
        fail_msg("report differs (printed above)");
    }
    free(got);
    lt_close(&lm);
}

static const char *logistic =
    "rows { x : vector[D]  y : int }\n"
    "param { w : vector[D] }\n"
    "prior { w ~ normal(0, 3) }\n"
    "datum { y ~ bernoulli_logit(dot(x, w)) }\n";

static void test_sources(void **state)
{
    (void)state;
    /* The same model from CSV rows and from JSON rows. */
    const char *csv[] = {"csv:y,x.2,x.1\n1,0.5,1\n0,-1.5,1\n1,2.5,1\n0,0.1,1\n",
                         NULL};
    const char *json[] = {"json:{\"x\": [[1, 0.5], [1, -1.5], [1, 2.5], "
                          "[1, 0.1]], \"y\": [1, 0, 1, 0], \"N\": 4}",
                          NULL};
    lt_model a, b;
    lt_open_ok(&a, logistic, csv, NULL, 0);
    lt_open_ok(&b, logistic, json, NULL, 0);
    assert_int_equal(a.m.dim, 2);
    assert_int_equal(b.m.n_rows, 4);
    void *wa = a.m.workspace_new(a.m.self, 4), *wb = b.m.workspace_new(b.m.self, 4);
    double th[2] = {0.3, -0.7};
    assert_true(fabs(lt_log_density(&a.m, wa, th) -
                     lt_log_density(&b.m, wb, th)) < 1e-13);
    a.m.workspace_free(a.m.self, wa);
    b.m.workspace_free(b.m.self, wb);
    lt_check_derivatives(&b.m, 3, 2, 1.0);
    lt_close(&a);
    lt_close(&b);
    /* Data values from JSON and --data-set together; sizes from both. */
    const char *mixed[] = {"csv:z.1,z.2,z.3\n0.1,0.2,0.3\n0.4,0.5,0.6\n",
                           "json:{\"mu\": [1, 2, 3], \"s\": 0.5}", NULL};
    char k[] = "K=3", h[] = "h=2";
    char *sets[] = {k, h};
    lt_model c;
    lt_open_ok(&c,
               "data { mu : vector[K]  s : real<lower=0>  h : int }\n"
               "rows { z : vector[K] }\n"
               "param { t : real }\n"
               "prior { t ~ normal(0, 1) }\n"
               "datum { z ~ normal(mu * t, s * h) }\n",
               mixed, sets, 2);
    assert_int_equal(c.m.n_rows, 2);
    lt_check_derivatives(&c.m, 4, 1, 1.0);
    lt_close(&c);
}

static void test_missing_and_twice(void **state)
{
    (void)state;
    const char *data[] = {"csv:y,x.1\n1,0.5\n", NULL};
    golden("data { lambda : real }\n"
           "rows { x : vector[D]  y : int  z : real }\n"
           "param { w : vector[D] }\n"
           "datum { y ~ bernoulli_logit(dot(x, w) * lambda + z) }\n",
           data, NULL, 0,
           "MODEL:1:8: error: 'lambda : real' is declared in the data block "
           "but no data source gives it: add it to a JSON data file or use "
           "--data-set NAME=VALUE\n"
           "    1 | data { lambda : real }\n"
           "      |        ^~~~~~\n"
           "MODEL:2:32: error: rows variable 'z : real' is in no data file: "
           "expected a column of that name in a CSV file, or an entry 'z' in "
           "a JSON file\n"
           "    2 | rows { x : vector[D]  y : int  z : real }\n"
           "      |                                ^\n");
    const char *twice[] = {"csv:y,x.1\n1,0.5\n", "json:{\"lambda\": 2}",
                           NULL};
    char set[] = "lambda=3";
    char *sets[] = {set};
    golden("data { lambda : real }\n"
           "rows { x : vector[D]  y : int }\n"
           "param { w : vector[D] }\n"
           "datum { y ~ bernoulli_logit(dot(x, w) * lambda) }\n",
           twice, sets, 1,
           "MODEL:1:8: error: 'lambda' is given twice: in DATA2 and in "
           "--data-set\n"
           "    1 | data { lambda : real }\n"
           "      |        ^~~~~~\n");
    const char *rows_twice[] = {"csv:y,x.1\n1,0.5\n",
                                "json:{\"y\": [1]}", NULL};
    golden(logistic, rows_twice, NULL, 0,
           "MODEL:1:23: error: rows variable 'y' is given twice: in DATA1 "
           "and in DATA2\n"
           "    1 | rows { x : vector[D]  y : int }\n"
           "      |                       ^\n");
    char hs[] = "H=";
    char *bad_sets[] = {hs};
    golden(logistic, data, bad_sets, 1,
           "--data-set: error: H=: the value '' is not a finite number\n");
}

static void test_columns(void **state)
{
    (void)state;
    const char *gap[] = {"csv:y,x.1,x.2,x.4\n1,0.5,1,2\n", NULL};
    golden(logistic, gap, NULL, 0,
           "MODEL:1:8: error: rows variable 'x' has columns up to x.4 in "
           "DATA1, but no column 'x.3'\n"
           "    1 | rows { x : vector[D]  y : int }\n"
           "      |        ^\n");
    char d3[] = "D=3";
    char *sets[] = {d3};
    const char *four[] = {"csv:y,x.1,x.2,x.3,x.4\n1,0.5,1,2,3\n", NULL};
    golden(logistic, four, sets, 1,
           "MODEL:1:19: error: size 'D' is 3 in --data-set, but 4 from the "
           "columns of 'x' in DATA1\n"
           "    1 | rows { x : vector[D]  y : int }\n"
           "      |                   ^\n");
    const char *rows_differ[] = {"csv:y\n1\n0\n", "csv:x.1\n0.5\n", NULL};
    golden(logistic, rows_differ, NULL, 0,
           "DATA2: error: the file has 1 rows, but DATA1 has 2; every rows "
           "file needs one row per datum\n");
}

static void test_values(void **state)
{
    (void)state;
    const char *frac[] = {"csv:y,x.1\n1,0.5\n0.5,2\n", NULL};
    golden(logistic, frac, NULL, 0,
           "DATA1:3:1: error: 'y' is declared int, but the value is 0.5 "
           "(column 'y', row 2)\n"
           "    3 | 0.5,2\n"
           "      | ^~~\n");
    const char *two[] = {"csv:x.1,y\n0.5,1\n2,0\n-1,2\n", NULL};
    golden(logistic, two, NULL, 0,
           "DATA1:4:4: error: the outcome of bernoulli_logit must be 0 or 1, "
           "found 2 (column 'y', row 3)\n"
           "    4 | -1,2\n"
           "      |    ^\n"
           "MODEL:4:9: note: 'y' is the outcome of bernoulli_logit here\n"
           "    4 | datum { y ~ bernoulli_logit(dot(x, w)) }\n"
           "      |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
    const char *cat[] = {"csv:y,x.1\n1,0.5\n4,1\n", NULL};
    golden("rows { x : vector[D]  y : int }\n"
           "param { W : matrix[3, D] }\n"
           "datum { y ~ categorical_logit(W * x) }\n",
           cat, NULL, 0,
           "DATA1:3:1: error: the outcome of categorical_logit must be a "
           "category from 1 to K = 3, found 4 (column 'y', row 2)\n"
           "    3 | 4,1\n"
           "      | ^\n"
           "MODEL:3:9: note: 'y' is the outcome of categorical_logit here\n"
           "    3 | datum { y ~ categorical_logit(W * x) }\n"
           "      |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
    const char *mf[] = {"csv:user,r\n1,0.5\n3,1.5\n",
                        "json:{\"n_users\": 2}", NULL};
    golden("data { n_users : int }\n"
           "rows { user : int  r : real }\n"
           "param { u : vector[n_users] }\n"
           "datum { r ~ normal(u[user], 1) }\n",
           mf, NULL, 0,
           "DATA1:3:1: error: index 3 is out of range (it indexes 1 to 2) "
           "(column 'user', row 2)\n"
           "    3 | 3,1.5\n"
           "      | ^\n"
           "MODEL:4:20: note: the index is used here\n"
           "    4 | datum { r ~ normal(u[user], 1) }\n"
           "      |                    ^~~~~~~\n");
    const char *neg[] = {"csv:y\n1\n", "json:{\"s\": -1}", NULL};
    golden("data { s : real<lower=0> }\n"
           "rows { y : real }\n"
           "param { m : real }\n"
           "datum { y ~ normal(m, s) }\n",
           neg, NULL, 0,
           "MODEL:1:8: error: 's' is -1, outside its declared bounds [0, "
           "inf]\n"
           "    1 | data { s : real<lower=0> }\n"
           "      |        ^\n");
}

static void test_sizes(void **state)
{
    (void)state;
    const char *data[] = {"csv:y,x.1\n1,0.5\n", NULL};
    golden("rows { x : vector[D]  y : int }\n"
           "param { W : matrix[H, D]  v : vector[H] }\n"
           "datum { y ~ bernoulli_logit(dot(v, tanh(W * x))) }\n",
           data, NULL, 0,
           "MODEL:2:20: error: size 'H' is not given: set it with --data-set "
           "H=VALUE or in a JSON data file, or give data whose shape implies "
           "it\n"
           "    2 | param { W : matrix[H, D]  v : vector[H] }\n"
           "      |                    ^\n");
    /* Shapes that differ only once the sizes are known name both. */
    const char *xz[] = {"csv:x.1,x.2,x.3,z.1,z.2\n1,2,3,4,5\n", NULL};
    golden("rows { x : vector[D]  z : vector[K] }\n"
           "param { w : vector[D] }\n"
           "datum { target += dot(x + z, w) }\n",
           xz, NULL, 0,
           "MODEL:3:23: error: the operands of '+' have different shapes: "
           "vector[D=3] and vector[K=2]\n"
           "    3 | datum { target += dot(x + z, w) }\n"
           "      |                       ^~~~~\n");
}

/* A group size nothing gives, where an int rows variable indexes the
 * group parameter: the message names the size and the largest index. */
static void test_group_sizes(void **state)
{
    (void)state;
    const char *data[] = {"csv:g,y\n1,0.3\n3,1.2\n8,-1\n2,0.4\n", NULL};
    golden("rows { g : int  y : real }\n"
           "param { a : vector[J]  mu : real }\n"
           "prior { a ~ normal(mu, 1) }\n"
           "datum { y ~ normal(a[g] + mu, 1) }\n",
           data, NULL, 0,
           "MODEL:2:20: error: size 'J' is not given: 'a' is indexed by the "
           "rows variable 'g', whose largest value in the data is 8; set "
           "--data-set J=8 (or the number of groups, if larger), or give J in "
           "a JSON data file\n"
           "    2 | param { a : vector[J]  mu : real }\n"
           "      |                    ^\n"
           "MODEL:4:20: note: 'g' indexes 'a' here\n"
           "    4 | datum { y ~ normal(a[g] + mu, 1) }\n"
           "      |                    ^~~~\n");
    /* From JSON rows, and a matrix's rows. */
    const char *js[] = {"json:{\"u\": [2, 5, 1], \"r\": [0.1, 0.2, 0.3]}",
                        NULL};
    golden("rows { u : int  r : real }\n"
           "param { U : matrix[NU, 2] }\n"
           "datum { r ~ normal(sum(U[u]), 1) }\n",
           js, NULL, 0,
           "MODEL:2:20: error: size 'NU' is not given: 'U' is indexed by the "
           "rows variable 'u', whose largest value in the data is 5; set "
           "--data-set NU=5 (or the number of groups, if larger), or give NU "
           "in a JSON data file\n"
           "    2 | param { U : matrix[NU, 2] }\n"
           "      |                    ^~\n"
           "MODEL:3:24: note: 'u' indexes 'U' here\n"
           "    3 | datum { r ~ normal(sum(U[u]), 1) }\n"
           "      |                        ^~~~\n");
}

static void test_json_errors(void **state)
{
    (void)state;
    const char *model = "data { m : matrix[2, 2]  k : int }\n"
                        "param { t : real }\n"
                        "prior { t ~ normal(0, 1) }\n";
    const char *bad[] = {"json:{\"m\": [[1, 2],\n [3, 4]], \"k\": 2,,}", NULL};
    golden(model, bad, NULL, 0,
           "DATA1:2:18: error: invalid JSON: string or '}' expected near "
           "','\n"
           "    2 |  [3, 4]], \"k\": 2,,}\n"
           "      |                  ^\n");
    const char *ragged[] = {"json:{\"m\": [[1, 2], [3]], \"k\": 2}", NULL};
    golden(model, ragged, NULL, 0,
           "DATA1: error: 'm[2]' has 1 entries, but the first list at this "
           "depth has 2 (arrays must be rectangular)\n");
    const char *nan[] = {"json:{\"m\": [[1, \"NaN\"], [3, 4]], \"k\": 2}",
                         NULL};
    golden(model, nan, NULL, 0,
           "DATA1: error: 'm[1][2]' is \"NaN\"; data must be finite "
           "numbers\n");
    const char *shape[] = {"json:{\"m\": [1, 2, 3, 4], \"k\": 2.5}", NULL};
    golden(model, shape, NULL, 0,
           "DATA1: error: 'm' is declared matrix[2, 2], but the file gives a "
           "list of 4\n"
           "MODEL:1:8: note: 'm' is declared here\n"
           "    1 | data { m : matrix[2, 2]  k : int }\n"
           "      |        ^\n"
           "DATA1: error: 'k' is declared int, but holds 2.5\n");
    const char *dup[] = {"json:{\"k\": 1, \"k\": 2}", NULL};
    golden(model, dup, NULL, 0,
           "DATA1:1:12: error: invalid JSON: duplicate object key near "
           "'\"k\"'\n"
           "    1 | {\"k\": 1, \"k\": 2}\n"
           "      |            ^\n");
    const char *arr[] = {"json:[1, 2]", NULL};
    golden(model, arr, NULL, 0,
           "DATA1: error: a JSON data file holds one object, {\"name\": "
           "value, ...}, as CmdStan's do\n");
}

static void test_csv_errors(void **state)
{
    (void)state;
    const char *data[] = {"csv:y,x.1\n1,0.5\n0,abc\n", NULL};
    golden(logistic, data, NULL, 0,
           "DATA1:3:3: error: field 'abc' in column 'x.1' is not a number\n"
           "    3 | 0,abc\n"
           "      |   ^\n");
}

/* The JSON loader on its own: shapes, integers, empty arrays. */
static void test_json_parse(void **state)
{
    (void)state;
    const char *text = "{\"a\": 1, \"b\": [1.5, 2], \"c\": [[1, 2, 3], [4, 5, "
                       "6]], \"e\": [], \"f\": [[[1], [2]]]}";
    drift_dvalue *v;
    size_t n;
    drift_diag d;
    drift_diag_init(&d, NULL);
    assert_int_equal(drift_json_parse(text, strlen(text), "t.json", &v, &n,
                                      &d),
                     0);
    assert_int_equal(n, 5);
    assert_string_equal(v[0].name, "a");
    assert_int_equal(v[0].ndim, 0);
    assert_true(v[0].all_int);
    assert_int_equal(v[1].ndim, 1);
    assert_false(v[1].all_int);
    assert_int_equal(v[2].ndim, 2);
    assert_int_equal(v[2].dims[1], 3);
    assert_true(v[2].v[4] == 5);
    assert_int_equal(v[3].n, 0);
    assert_int_equal(v[4].ndim, 3);
    drift_dvalues_free(v, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_missing_and_twice),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_group_sizes),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_json_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
