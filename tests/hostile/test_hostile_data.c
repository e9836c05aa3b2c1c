/* test_hostile_data.c: input files whose names or values break what
 * they claim.  A row store's data section has no checksum and its
 * per-column int flag is the writer's word: drift check reads every value
 * of a store as it reads a CSV file's (finite, an integer where the model
 * or the header says int), naming the file, row and column, and drift
 * sample checks each chunk of rows as it first reads it; a store whose
 * header names a column twice is refused as a CSV header is; and an init
 * file's values that match no parameter (a typo), are given twice or hold
 * more elements than the parameter are refused, naming the near miss,
 * never dropped in silence.  Text data as spreadsheets and old systems
 * write it: a UTF-8 byte order mark is skipped (as pandas and R skip it),
 * lines ending in CR alone and hexadecimal numbers are refused with a
 * message naming the cause. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/data/rowstore.h"
#include "hostile.h"

static const char *model =
    "rows { y : int  x : real } param { a : real  b : real }\n"
    "prior { a ~ normal(0,1) b ~ normal(0,1) }\n"
    "datum { y ~ normal(a + b * x, 1) }\n";

/* dir/c.drs from four rows (y int, x real), its bytes in *len. */
static unsigned char *store(const char *dir, size_t *len)
{
    hx_write(dir, "c.csv", "y,x\n1,0.5\n2,1.5\n0,-0.3\n3,0.1\n");
    hx_write(dir, "norm.drift", model);
    const char *conv[] = {"data", "convert", "c.csv", "c.drs", NULL};
    hx_expect(dir, conv, 0, "");
    char *p = hx_in(dir, "c.drs");
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    free(p);
    return b;
}

static void save(const char *dir, const char *name, const unsigned char *b,
                 size_t len)
{
    char *p = hx_in(dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    free(p);
}

/* A copy of the store with row r, column c set to v (data bytes only:
 * the header's checksum still matches). */
static void patched(const char *dir, const unsigned char *b, size_t len,
                    const char *name, size_t r, size_t c, double v)
{
    drift_rowstore_prefix pre;
    memcpy(&pre, b, sizeof pre);
    unsigned char *x = malloc(len);
    memcpy(x, b, len);
    memcpy(x + pre.header_bytes + 8 * (r * pre.n_cols + c), &v, 8);
    save(dir, name, x, len);
    free(x);
}

static void test_store_values_checked(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    size_t len;
    unsigned char *b = store(dir, &len);
    const char *ok[] = {"check", "norm.drift", "--data", "c.drs", NULL};
    hx_expect(dir, ok, 0, "");
    patched(dir, b, len, "y25.drs", 1, 0, 2.5);
    const char *y25[] = {"check", "norm.drift", "--data", "y25.drs", NULL};
    hx_expect(dir, y25, 2, "'y' is declared int, but column 'y' holds 2.5");
    patched(dir, b, len, "xnan.drs", 1, 1, NAN);
    const char *xnan[] = {"check", "norm.drift", "--data", "xnan.drs", NULL};
    hx_expect(dir, xnan, 2, "'x[2]': column 'x' of this row store holds "
                            "nan; data must be finite");
    patched(dir, b, len, "xinf.drs", 3, 1, -INFINITY);
    const char *xinf[] = {"check", "norm.drift", "--data", "xinf.drs", NULL};
    hx_expect(dir, xinf, 2, "holds -inf");
    /* An int column by the header, read as real by the model. */
    hx_write(dir, "real.drift",
             "rows { y : real  x : real } param { a : real }\n"
             "prior { a ~ normal(0,1) } datum { y ~ normal(a * x, 1) }\n");
    const char *flag[] = {"check", "real.drift", "--data", "y25.drs", NULL};
    hx_expect(dir, flag, 2, "is an int column by this row store's header");
    free(b);
    hx_rm(dir);
    free(dir);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void test_store_column_named_twice(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    size_t len;
    unsigned char *b = store(dir, &len);
    drift_rowstore_prefix pre;
    memcpy(&pre, b, sizeof pre);
    /* Column 2 ('x') renamed 'y', the checksum made to match. */
    unsigned char *x = NULL;
    for (size_t k = sizeof pre; k + 1 < pre.header_bytes; k++)
        if (b[k] == 'x' && b[k + 1] == '\0') {
            x = b + k;
            break;
        }
    assert_non_null(x);
    *x = 'y';
    uint64_t zero = 0;
    size_t at = offsetof(drift_rowstore_prefix, checksum);
    memcpy(b + at, &zero, 8);
    uint64_t h = fnv(b, pre.header_bytes);
    memcpy(b + at, &h, 8);
    save(dir, "dupcol.drs", b, len);
    const char *info[] = {"data", "info", "dupcol.drs", NULL};
    hx_expect(dir, info, 2, "column 'y' is named twice (columns 1 and 2)");
    const char *check[] = {"check", "norm.drift", "--data", "dupcol.drs",
                           NULL};
    hx_expect(dir, check, 2, "named twice");
    free(b);
    hx_rm(dir);
    free(dir);
}

static void test_init_names(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    struct {
        const char *name, *text, *needle;
    } cases[] = {
        {"typo.json", "{\"ww\": [0,0,0,0,0,0,0,0]}",
         "'ww' names no value of the model (did you mean 'w'?)"},
        {"extra.json", "{\"w\": [0,0,0,0,0,0,0,0], \"tau\": 1}",
         "'tau' names no value of the model"},
        {"twice.json",
         "{\"w\": [0,0,0,0,0,0,0,0], \"w\": [1,1,1,1,1,1,1,1]}",
         "duplicate object key"},
        {"long.json", "{\"w\": [0,0,0,0,0,0,0,0,0]}",
         "'w' holds 9 values, the model's 'w' has 8"},
        {"typo.csv", "lp__,w.1,w.2,w.3,w.4,w.5,w.6,w.7,w.8,w_9\n"
                     "0,0,0,0,0,0,0,0,0,0\n",
         "'w_9' names no value of the model (did you mean"},
        {"twice.csv", "w.1,w.2,w.3,w.4,w.5,w.6,w.7,w.8,w.1\n"
                      "0,0,0,0,0,0,0,0,0\n",
         "column 'w.1' is named twice (columns 1 and 9)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hx_write(dir, cases[k].name, cases[k].text);
        const char *args[] = {"sample", "logistic.drift", "--data",
                              "pima.csv", "--sampler", "sgld", "--set",
                              "h=1e-4", "--iter", "10", "--chains", "1",
                              "--quiet", "--init", cases[k].name, "--out",
                              "z.csv", NULL};
        hx_expect(dir, args, 2, cases[k].needle);
    }
    /* A previous run's file (lp__, sampler columns) is a good init. */
    const char *prev[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4", "--iter",
                          "10", "--chains", "1", "--quiet", "--out",
                          "prev.csv", NULL};
    hx_expect(dir, prev, 0, "");
    const char *again[] = {"sample", "logistic.drift", "--data", "pima.csv",
                           "--sampler", "sgld", "--set", "h=1e-4", "--iter",
                           "10", "--chains", "1", "--quiet", "--init",
                           "prev.csv", "--out", "z.csv", NULL};
    hx_expect(dir, again, 0, "");
    hx_rm(dir);
    free(dir);
}

static void test_csv_dialects(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_write(dir, "norm.drift", model);
    struct {
        const char *name, *text;
        int status;
        const char *needle;
    } cases[] = {
        {"bom.csv", "\xef\xbb\xbfy,x\n1,0.5\n2,1.5\n0,-0.3\n3,0.1\n", 0, ""},
        {"bom.json",
         "\xef\xbb\xbf{\"y\": [1, 2, 0, 3], \"x\": [0.5, 1.5, -0.3, 0.1]}",
         0, ""},
        {"crlf.csv", "y,x\r\n1,0.5\r\n2,1.5\r\n0,-0.3\r\n3,0.1\r\n", 0,
         ""},
        {"cr.csv", "y,x\r1,0.5\r2,1.5\r0,-0.3\r3,0.1\r", 2,
         "cr.csv:1:4: error: a carriage return inside the header line: the "
         "file's lines end in CR alone"},
        {"hex.csv", "y,x\n1,0.5\n2,1.5\n0,-0.3\n3,0x1A\n", 2,
         "hex.csv:5:3: error: field '0x1A' in column 'x' is a hexadecimal "
         "number"},
        {"hexf.csv", "y,x\n1,-0x1p-1\n2,1.5\n0,-0.3\n3,0.1\n", 2,
         "is a hexadecimal number"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hx_write(dir, cases[k].name, cases[k].text);
        const char *args[] = {"check", "norm.drift", "--data", cases[k].name,
                              NULL};
        hx_expect(dir, args, cases[k].status, cases[k].needle);
    }
    hx_rm(dir);
    free(dir);
}

/* The same dialects in a draws file `drift summary` reads: a BOM is
 * skipped (before, the first comment was taken for the column row and
 * the file refused for a "number" 'lp__'), CR-only lines are refused by
 * name (before: "no column row"), CRLF is read. */
static void test_summary_dialects(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    const char *draws = "# model = m\n# num_samples = 3\nlp__,a\n"
                        "-1,0.5\n-2,0.25\n-1.5,0.75\n";
    char bom[200], cr[200], crlf[300];
    snprintf(bom, sizeof bom, "\xef\xbb\xbf%s", draws);
    size_t n = 0;
    for (const char *p = draws; *p; p++) {
        cr[n] = *p == '\n' ? '\r' : *p;
        n++;
    }
    cr[n] = '\0';
    n = 0;
    for (const char *p = draws; *p; p++) {
        if (*p == '\n')
            crlf[n++] = '\r';
        crlf[n++] = *p;
    }
    crlf[n] = '\0';
    struct {
        const char *name, *text;
        int status;
        const char *needle;
    } cases[] = {
        {"bom.csv", bom, 0, ""},
        {"crlf.csv", crlf, 0, ""},
        {"cr.csv", cr, 2,
         "cr.csv:1:12: error: a carriage return inside a line: the file's "
         "lines end in CR alone"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hx_write(dir, cases[k].name, cases[k].text);
        const char *args[] = {"summary", cases[k].name, NULL};
        hx_expect(dir, args, cases[k].status, cases[k].needle);
    }
    hx_rm(dir);
    free(dir);
}

/* drift sample trusts a row store's int flag at open (reading every
 * value first would be a pass over data maybe larger than memory), and
 * checks the values of each chunk of rows the first time it reads them:
 * a store whose int column holds 2.5 fails the run with exit 2, naming
 * the file, row and column, before the value is used, whether the chunk
 * is read at the start or later (a minibatch run reading 10 rows at a
 * time in order, where the step-size check's pilots reach the row: the
 * data's fault, not the step size's; any draws kept are marked as those
 * before a failure). */
static void test_store_int_flag_sampled(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    size_t len;
    unsigned char *b = store(dir, &len);
    patched(dir, b, len, "y25.drs", 1, 0, 2.5);
    free(b);
    const char *small[] = {"sample", "norm.drift", "--data", "y25.drs",
                           "--iter", "100", "--chains", "2", "--seed", "1",
                           "--quiet", "--out", "s.csv", NULL};
    hx_expect(dir, small, 2, "y25.drs: data row 2: 'y' is declared int, but "
                             "column 'y' of this row store holds 2.5");
    /* 20000 rows, row 15001 damaged, read in order 10 at a time. */
    char *csv = hx_in(dir, "big.csv");
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("y,x\n", f);
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%d,%.3f\n", i % 4, 0.001 * (i % 997) - 0.5);
    assert_int_equal(fclose(f), 0);
    free(csv);
    const char *conv[] = {"data", "convert", "big.csv", "big.drs", NULL};
    hx_expect(dir, conv, 0, "");
    char *p = hx_in(dir, "big.drs");
    f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    rewind(f);
    b = malloc(len);
    assert_int_equal(fread(b, 1, len, f), len);
    fclose(f);
    free(p);
    patched(dir, b, len, "bigbad.drs", 15000, 0, 2.5);
    free(b);
    const char *mid[] = {"sample", "norm.drift", "--data", "bigbad.drs",
                         "--sampler", "sgld", "--set", "h=1e-6", "--batch",
                         "10", "--access", "ca", "--warmup", "0", "--iter",
                         "3000", "--chains", "1", "--seed", "1", "--quiet",
                         "--out", "m.csv", NULL};
    hx_expect(dir, mid, 2, "bigbad.drs: data row 15001: 'y' is declared "
                           "int, but column 'y' of this row store holds "
                           "2.5");
    if (hx_exists(dir, "m.csv")) {
        char *text = hx_slurp(dir, "m.csv");
        assert_non_null(text);
        assert_non_null(strstr(text, "failed at iteration"));
        free(text);
    }
    hx_rm(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_values_checked),
        cmocka_unit_test(test_store_int_flag_sampled),
        cmocka_unit_test(test_store_column_named_twice),
        cmocka_unit_test(test_init_names),
        cmocka_unit_test(test_csv_dialects),
        cmocka_unit_test(test_summary_dialects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
