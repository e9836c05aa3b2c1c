/* test_ranks.c: what a run across MPI ranks computes without MPI (issue
 * 19), in both builds: the plan of chains over rank groups, the launcher
 * seen from the environment, the shares a data file is read in (every
 * row in exactly one share, in order, whatever the number of shares and
 * the file's kind; a bad row's message naming its line in the whole
 * file), and the placing of per-row values before they are summed
 * across ranks.  The runs themselves are tests/engine/run/test_mpi.sh's. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/data/rowstore.h"
#include "engine/data/table.h"
#include "engine/run/ranks.h"
#include "engine/run/shard.h"
#include "harness.h"

/* ---- the plan --------------------------------------------------------- */

static void expect_plan(unsigned P, unsigned K, unsigned R, unsigned wantR,
                        const unsigned *first, const unsigned *count)
{
    for (unsigned r = 0; r < P; r++) {
        drift_ranks_layout L;
        drift_err e = {{0}};
        assert_int_equal(drift_ranks_plan(P, r, K, R, &L, &e), DRIFT_OK);
        assert_int_equal(L.R, wantR);
        assert_int_equal(L.G, P / wantR);
        assert_int_equal(L.group, r / wantR);
        assert_int_equal(L.grank, r % wantR);
        assert_int_equal(L.first, first[L.group]);
        assert_int_equal(L.count, count[L.group]);
    }
}

static void test_plan(void **state)
{
    (void)state;
    /* The example: 4 chains on 8 ranks, 2 ranks per chain. */
    expect_plan(8, 4, 0, 2, (unsigned[]){0, 1, 2, 3},
                (unsigned[]){1, 1, 1, 1});
    /* More chains than ranks: each rank runs 2 chains over all rows. */
    expect_plan(2, 4, 0, 1, (unsigned[]){0, 2}, (unsigned[]){2, 2});
    /* One chain: every rank holds a share. */
    expect_plan(4, 1, 0, 4, (unsigned[]){0}, (unsigned[]){1});
    /* 4 chains on 6 ranks: gcd 2, groups of 3 running 2 chains each. */
    expect_plan(6, 4, 0, 3, (unsigned[]){0, 2}, (unsigned[]){2, 2});
    /* Asked for: 4 chains, 4 ranks, all 4 in one group. */
    expect_plan(4, 4, 4, 4, (unsigned[]){0}, (unsigned[]){4});
    /* 5 chains on 2 groups: 2 and 3. */
    expect_plan(4, 5, 2, 2, (unsigned[]){0, 2}, (unsigned[]){2, 3});
}

static void test_plan_refusals(void **state)
{
    (void)state;
    drift_ranks_layout L;
    drift_err e = {{0}};
    assert_int_equal(drift_ranks_plan(4, 0, 4, 3, &L, &e), DRIFT_EINVAL);
    assert_non_null(strstr(e.msg, "--ranks-per-chain 3"));
    assert_non_null(strstr(e.msg, "divide"));
    /* 8 groups of 1 for 4 chains: 4 would idle. */
    assert_int_equal(drift_ranks_plan(8, 0, 4, 1, &L, &e), DRIFT_EINVAL);
    assert_non_null(strstr(e.msg, "no chain"));
    assert_non_null(strstr(e.msg, "--ranks-per-chain 2"));
}

static void test_launched(void **state)
{
    (void)state;
    unsigned n, r;
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_SIZE");
    unsetenv("PMI_RANK");
    unsetenv("PMIX_SIZE");
    unsetenv("PMIX_RANK");
    unsetenv("SLURM_NTASKS");
    unsetenv("SLURM_PROCID");
    unsetenv("DRIFT_MPI");
    assert_int_equal(drift_ranks_launched(&n, &r), 0);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    assert_int_equal(drift_ranks_launched(&n, &r), 1);
    assert_int_equal(n, 4);
    assert_int_equal(r, 3);
    setenv("DRIFT_MPI", "0", 1);
    assert_int_equal(drift_ranks_launched(&n, &r), 0);
    unsetenv("DRIFT_MPI");
    setenv("OMPI_COMM_WORLD_RANK", "4", 1); /* not below the size */
    assert_int_equal(drift_ranks_launched(&n, &r), 0);
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_RANK");
}

/* ---- shares of a data file ------------------------------------------ */

/* One process reads every share in turn: the agreement it stands in for
 * learns each share's rows from those read before it, and the total
 * from the whole file read beforehand. */
typedef struct seq_agree {
    uint64_t seen, total, dim;
    int calls;
} seq_agree;

static int agree_seq(void *user, int status, const char *msg, uint64_t rows,
                     uint64_t dim, uint64_t *first, uint64_t *total,
                     uint64_t *dim_all, drift_err *e)
{
    seq_agree *a = user;
    a->calls++;
    if (status)
        return drift_err_set(e, status, "%s", msg);
    *first = a->seen;
    a->seen += rows;
    *total = a->total;
    *dim_all = a->dim > dim ? a->dim : dim;
    return DRIFT_OK;
}

/* Reads path in 1 .. 6 shares: each share's rows are the whole file's
 * rows first .. first + n - 1, values and sparse entries alike. */
static void expect_shares(const char *path)
{
    drift_table *all;
    drift_err e = {{0}};
    assert_int_equal(drift_table_open(path, &all, &e), DRIFT_OK);
    const drift_data *A = &all->view;
    uint64_t dim = A->n_sparse ? A->sparse[0].dim : 0;
    for (unsigned count = 1; count <= 6; count++) {
        seq_agree ag = {0, A->n_rows, dim, 0};
        for (unsigned i = 0; i < count; i++) {
            drift_table_share sh = {i, count, agree_seq, &ag};
            drift_table *t;
            int rc = drift_table_open_share(path, &sh, &t, &e);
            if (rc)
                fail_msg("%s share %u of %u: %s", path, i, count, e.msg);
            const drift_data *V = &t->view;
            assert_int_equal(V->n_cols, A->n_cols);
            assert_int_equal(t->share_total, A->n_rows);
            size_t f = (size_t)t->share_first;
            assert_true(f + V->n_rows <= A->n_rows);
            for (size_t r = 0; r < V->n_rows; r++)
                for (size_t c = 0; c < V->n_cols; c++)
                    assert_true(V->values[r * V->row_stride + c] ==
                                A->values[(f + r) * A->row_stride + c]);
            assert_int_equal(V->n_sparse, A->n_sparse);
            if (V->n_sparse) {
                const drift_sparse *s = &V->sparse[0], *w = &A->sparse[0];
                assert_int_equal(s->dim, w->dim);
                assert_int_equal(s->row_ptr[0], 0);
                for (size_t r = 0; r < V->n_rows; r++) {
                    uint64_t a0 = w->row_ptr[f + r], n = s->row_ptr[r + 1] -
                                                        s->row_ptr[r];
                    assert_int_equal(n, w->row_ptr[f + r + 1] - a0);
                    for (uint64_t k = 0; k < n; k++) {
                        assert_int_equal(s->idx[s->row_ptr[r] + k],
                                         w->idx[a0 + k]);
                        assert_true(s->val[s->row_ptr[r] + k] ==
                                    w->val[a0 + k]);
                    }
                }
            }
            drift_table_free(t);
        }
        /* Every row once: the shares follow each other to the end. */
        assert_int_equal(ag.seen, A->n_rows);
        assert_int_equal(ag.calls, count);
    }
    drift_table_free(all);
}

static char *src_path(const char *rel)
{
    const char *src = getenv("srcdir");
    size_t n = strlen(src ? src : ".") + strlen(rel) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", src ? src : ".", rel);
    return p;
}

static void test_shares_csv(void **state)
{
    (void)state;
    char *p = src_path("examples/logistic/pima-train.csv");
    expect_shares(p);
    /* Comments, CRLF line ends, trailing blank lines. */
    char *q = th_write_text("# head\ny,x\r\n1,2\r\n3,4\r\n5,6\r\n7,8\r\n\n\n",
                            ".csv");
    expect_shares(q);
    unlink(q);
    free(q);
    free(p);
}

static void test_shares_libsvm(void **state)
{
    (void)state;
    char *p = src_path("examples/sparse/train.libsvm");
    expect_shares(p);
    free(p);
}

static void test_shares_rowstore(void **state)
{
    (void)state;
    char out[] = "/tmp/drift-ranks-XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    drift_err e = {{0}};
    char *p = src_path("examples/logistic/pima-train.csv");
    assert_int_equal(drift_rowstore_convert(p, out, NULL, NULL, &e),
                     DRIFT_OK);
    expect_shares(out);
    char *s = src_path("examples/sparse/train.libsvm");
    assert_int_equal(drift_rowstore_convert(s, out, NULL, NULL, &e),
                     DRIFT_OK);
    expect_shares(out);
    unlink(out);
    free(p);
    free(s);
}

/* A bad field in the last share: its message names the line in the whole
 * file, as one process's would. */
static void test_share_error_line(void **state)
{
    (void)state;
    char text[4096] = "y,x\n";
    for (int k = 0; k < 40; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 k == 37 ? "%d,oops\n" : "%d,%d\n", k, k);
    char *p = th_write_text(text, ".csv");
    seq_agree ag = {0, 40, 0, 0};
    drift_table_share sh = {3, 4, agree_seq, &ag};
    drift_table *t;
    drift_err e = {{0}};
    assert_int_not_equal(drift_table_open_share(p, &sh, &t, &e), DRIFT_OK);
    assert_null(t);
    char want[4200];
    snprintf(want, sizeof want, "%s:39:", p); /* header + 38 rows before */
    if (strncmp(e.msg, want, strlen(want)))
        fail_msg("message '%s' does not start with '%s'", e.msg, want);
    assert_int_equal(ag.calls, 1); /* the others are told, whatever */
    unlink(p);
    free(p);
}

/* A share may hold no row (more shares than lines); all of them may not. */
static void test_share_empty(void **state)
{
    (void)state;
    char *p = th_write_text("y,x\n1,2\n", ".csv");
    unsigned rows = 0;
    for (unsigned i = 0; i < 5; i++) {
        seq_agree ag = {rows, 1, 0, 0};
        drift_table_share sh = {i, 5, agree_seq, &ag};
        drift_table *t;
        drift_err e = {{0}};
        assert_int_equal(drift_table_open_share(p, &sh, &t, &e), DRIFT_OK);
        rows += (unsigned)t->view.n_rows;
        drift_table_free(t);
    }
    assert_int_equal(rows, 1);
    unlink(p);
    free(p);
    p = th_write_text("y,x\n", ".csv");
    seq_agree ag = {0, 0, 0, 0};
    drift_table_share sh = {0, 2, agree_seq, &ag};
    drift_table *t;
    drift_err e = {{0}};
    assert_int_equal(drift_table_open_share(p, &sh, &t, &e), DRIFT_EDATA);
    assert_non_null(strstr(e.msg, "no data rows"));
    unlink(p);
    free(p);
}

/* ---- per-row values before the sum ------------------------------------ */

static void test_pick_scatter(void **state)
{
    (void)state;
    drift_shard s;
    memset(&s, 0, sizeof s);
    s.first = 10;
    s.n = 5; /* rows 10 .. 14 */
    size_t rows[] = {3, 12, 12, 14, 15, 10, 9};
    size_t k = drift_shard_pick(&s, rows, 7);
    assert_int_equal(k, 4);
    size_t want_local[] = {2, 2, 4, 0}, want_pos[] = {1, 2, 3, 5};
    for (size_t j = 0; j < k; j++) {
        assert_int_equal(s.local[j], want_local[j]);
        assert_int_equal(s.pos[j], want_pos[j]);
    }
    /* Two values per row, the rank's four rows at the front. */
    double out[14];
    for (size_t j = 0; j < 14; j++)
        out[j] = j < 8 ? (double)(j + 1) : 99;
    drift_shard_scatter(&s, out, 7, k, 2);
    double want[14] = {-0.0, -0.0, 1, 2, 3, 4, 5, 6, -0.0, -0.0,
                       7, 8, -0.0, -0.0};
    for (size_t j = 0; j < 14; j++) {
        assert_true(out[j] == want[j]);
        /* -0.0 for the others' rows: adding it changes no value. */
        assert_int_equal(signbit(out[j]) != 0, want[j] == 0);
    }
    assert_true(0.0 + -0.0 == 0.0 && !signbit(0.0 + -0.0));
    assert_true(signbit(-0.0 + -0.0));
    drift_free(s.local);
    drift_free(s.pos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_plan_refusals),
        cmocka_unit_test(test_launched),
        cmocka_unit_test(test_shares_csv),
        cmocka_unit_test(test_shares_libsvm),
        cmocka_unit_test(test_shares_rowstore),
        cmocka_unit_test(test_share_error_line),
        cmocka_unit_test(test_share_empty),
        cmocka_unit_test(test_pick_scatter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
