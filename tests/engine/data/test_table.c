/* test_table.c: the CSV reader: what it accepts, and for every kind of
 * bad file, a message naming the file, line and column and what is wrong. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/data/table.h"
#include "harness.h"

static void expect_error(const char *text, const char *where,
                         const char *what)
{
    char *path = th_write_text(text, ".csv");
    drift_table *t;
    drift_err e = {{0}};
    assert_int_not_equal(drift_table_read_csv(path, &t, &e), DRIFT_OK);
    assert_null(t);
    print_message("%s\n", e.msg);
    char want[4200];
    snprintf(want, sizeof want, "%s:%s: error: ", path, where);
    if (strncmp(e.msg, want, strlen(want)) != 0)
        fail_msg("message '%s' does not start with '%s'", e.msg, want);
    if (!strstr(e.msg, what))
        fail_msg("message '%s' lacks '%s'", e.msg, what);
    unlink(path);
    free(path);
}

static void test_good_file(void **state)
{
    (void)state;
    char *path = th_write_text("# a comment\n y , x.1,\"x.2\"\r\n1,2.5,-3e2\r\n"
                               "0, 1 ,0\n\n\n",
                               ".csv");
    drift_table *t;
    drift_err e;
    assert_int_equal(drift_table_read_csv(path, &t, &e), DRIFT_OK);
    assert_int_equal(t->view.n_rows, 2);
    assert_int_equal(t->view.n_cols, 3);
    assert_string_equal(t->view.col_names[0], "y");
    assert_string_equal(t->view.col_names[2], "x.2");
    assert_int_equal(drift_data_column(&t->view, "x.1"), 1);
    assert_int_equal(drift_data_column(&t->view, "z"), -1);
    assert_true(t->view.values[2] == -300.0);
    assert_true(t->view.values[4] == 1.0);
    assert_int_equal(t->view.first_line, 3);
    drift_table_free(t);
    unlink(path);
    free(path);
}

static void test_no_trailing_newline(void **state)
{
    (void)state;
    char *path = th_write_text("a,b\n1,2", ".csv");
    drift_table *t;
    drift_err e;
    assert_int_equal(drift_table_read_csv(path, &t, &e), DRIFT_OK);
    assert_int_equal(t->view.n_rows, 1);
    assert_true(t->view.values[1] == 2.0);
    drift_table_free(t);
    unlink(path);
    free(path);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", "1:1", "the file is empty");
    expect_error("\n  \n", "1:1", "the file is empty");
    expect_error("y,x.1\n", "2:1", "header but no data rows");
    expect_error("y,x.1\n1,2\n3\n", "3:2", "row has 1 fields, expected 2");
    expect_error("y,x.1\n1,2\n3,4,5\n", "3:4", "more than the 2 fields");
    expect_error("y,x.1\n1,abc\n", "2:3", "field 'abc' in column 'x.1' is not a number");
    expect_error("y,x.1\n1,nan\n", "2:3", "not finite");
    expect_error("y,x.1\n1,-inf\n", "2:3", "not finite");
    expect_error("y,x.1\n1,\n", "2:3", "empty field in column 'x.1'");
    expect_error("y,x.1\n1,2\n\n3,4\n", "3:1", "empty line inside the data");
    expect_error("y,y\n1,2\n", "1:3", "column 'y' is named twice");
    expect_error("y,,x\n1,2,3\n", "1:3", "empty column name");
    expect_error("1,2\n3,4\n", "1:1", "header naming the columns is required");
    expect_error("y,x\n1,2x\n", "2:3", "'2x'");
}

static void test_missing_file(void **state)
{
    (void)state;
    drift_table *t;
    drift_err e;
    assert_int_not_equal(drift_table_read_csv("/nonexistent/d.csv", &t, &e), 0);
    assert_non_null(strstr(e.msg, "/nonexistent/d.csv: cannot open data file"));
    assert_int_not_equal(drift_table_read_csv("/tmp", &t, &e), 0);
    assert_non_null(strstr(e.msg, "is a directory"));
}

static void test_allocation_failures(void **state)
{
    (void)state;
    char *path = th_write_text("y,x.1\n1,2\n0,3\n", ".csv");
    drift_table *t;
    drift_err e;
    drift_fail_alloc(0);
    assert_int_equal(drift_table_read_csv(path, &t, &e), 0);
    drift_table_free(t);
    uint64_t n = drift_fail_alloc(0);
    assert_true(n > 0);
    /* Fail each allocation in turn: reported, never a crash or a leak. */
    for (uint64_t k = 1; k <= n; k++) {
        drift_fail_alloc(k);
        int rc = drift_table_read_csv(path, &t, &e);
        drift_fail_alloc(0);
        assert_int_equal(rc, DRIFT_ENOMEM);
        assert_null(t);
        assert_non_null(strstr(e.msg, "out of memory"));
    }
    unlink(path);
    free(path);
}

/* VmFlags of the mapping that holds address a, from /proc/self/smaps,
 * into flags (empty when not found). */
static void vm_flags(uintptr_t a, char *flags, size_t cap)
{
    flags[0] = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return;
    char line[512];
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
            line[0] != 'V')
            in = a >= lo && a < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            size_t n = strlen(line + 8);
            if (n >= cap)
                n = cap - 1;
            memcpy(flags, line + 8, n);
            flags[n] = 0;
            break;
        }
    }
    fclose(f);
}

/* Tables a full pass streams through ask for huge pages: the 2 MB-aligned
 * middle of a large region is marked (VmFlags "hg") where the kernel has
 * transparent huge pages; small regions and NULL are left alone. */
static void test_huge_page_advice(void **state)
{
    (void)state;
    size_t n = (size_t)64 << 20;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    char *q = mmap(NULL, (size_t)1 << 20, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(q != MAP_FAILED);
    drift_advise_huge(NULL, n);
    drift_advise_huge(q, (size_t)1 << 20);
    /* an unaligned start, as malloc gives */
    drift_advise_huge(p + 16, n - 16);
    char flags[256];
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (thp) {
        if (!fgets(mode, sizeof mode, thp))
            mode[0] = 0;
        fclose(thp);
    }
    if (!thp || strstr(mode, "[never]")) {
        print_message("no transparent huge pages here: advice unchecked\n");
    } else {
        vm_flags((uintptr_t)p + n / 2, flags, sizeof flags);
        print_message("64 MB region: VmFlags%s", flags);
        assert_non_null(strstr(flags, " hg"));
    }
    vm_flags((uintptr_t)q, flags, sizeof flags);
    assert_null(strstr(flags, " hg"));
    munmap(p, n);
    munmap(q, (size_t)1 << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_no_trailing_newline),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_huge_page_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
