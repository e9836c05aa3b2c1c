/* test_rowstore.c: binary row stores and LIBSVM rows.  Round trips (CSV and
 * LIBSVM through a row store give the same data and the same draws on the
 * same seed), dense and sparse encodings of the same data give the same
 * gradients, and every kind of damaged file (wrong magic, newer version,
 * other byte order, bad header checksum, truncated, corrupt sparse rows)
 * is refused with its documented message. */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/data/libsvm.h"
#include "engine/data/rowstore.h"
#include "engine/data/table.h"
#include "engine/run/rng.h"
#include "harness.h"

enum { N = 300, D = 12 };

static double dense[N][D + 1]; /* y, x.1 .. x.D with many zeros */

static void make_data(void)
{
    drift_rng r;
    drift_rng_seed(&r, 31, 0);
    for (size_t i = 0; i < N; i++) {
        dense[i][0] = drift_rng_uniform(&r) < 0.5;
        for (size_t j = 1; j <= D; j++)
            dense[i][j] = drift_rng_uniform(&r) < 0.3 ? drift_rng_normal(&r) : 0.0;
    }
}

static char *write_dense_csv(void)
{
    const char *names[D + 1];
    static char buf[D + 1][8];
    names[0] = "y";
    for (size_t j = 1; j <= D; j++) {
        snprintf(buf[j], sizeof buf[j], "x.%zu", j);
        names[j] = buf[j];
    }
    return th_write_csv(names, D + 1, &dense[0][0], N);
}

static char *write_libsvm(void)
{
    size_t cap = N * (D * 32 + 8), len = 0;
    char *text = malloc(cap);
    for (size_t i = 0; i < N; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%g", dense[i][0]);
        for (size_t j = 1; j <= D; j++)
            if (dense[i][j] != 0.0)
                len += (size_t)snprintf(text + len, cap - len, " %zu:%.17g",
                                        j, dense[i][j]);
        text[len++] = '\n';
    }
    text[len] = '\0';
    char *path = th_write_text(text, ".libsvm");
    free(text);
    return path;
}

static char *tmp_path(const char *suffix)
{
    char *p = th_write_text("", suffix);
    unlink(p);
    return p;
}

static void test_csv_round_trip(void **state)
{
    (void)state;
    make_data();
    char *csv = write_dense_csv(), *rs = tmp_path(".drs");
    drift_err e;
    uint64_t rows;
    assert_int_equal(drift_rowstore_convert(csv, rs, NULL, &rows, &e), 0);
    assert_int_equal(rows, N);
    drift_table *a, *b;
    assert_int_equal(drift_table_open(csv, &a, &e), 0);
    assert_int_equal(drift_table_open(rs, &b, &e), 0);
    assert_int_equal(b->kind, DRIFT_TABLE_ROWSTORE);
    assert_int_equal(b->view.n_rows, N);
    assert_int_equal(b->view.n_cols, D + 1);
    for (size_t c = 0; c <= D; c++)
        assert_string_equal(a->view.col_names[c], b->view.col_names[c]);
    assert_memory_equal(a->view.values, b->view.values,
                        N * (D + 1) * sizeof(double));
    drift_table_free(a);
    drift_table_free(b);
    /* Selecting columns. */
    const char *keep[] = {"x.3", "y", NULL};
    assert_int_equal(drift_rowstore_convert(csv, rs, keep, NULL, &e), 0);
    assert_int_equal(drift_table_open(rs, &b, &e), 0);
    assert_int_equal(b->view.n_cols, 2);
    assert_string_equal(b->view.col_names[0], "x.3");
    assert_true(b->view.values[2 * 7 + 0] == dense[7][3]);
    assert_true(b->view.values[2 * 7 + 1] == dense[7][0]);
    drift_table_free(b);
    const char *missing[] = {"zz", NULL};
    assert_int_not_equal(drift_rowstore_convert(csv, rs, missing, NULL, &e), 0);
    assert_non_null(strstr(e.msg, "no column 'zz'"));
    unlink(csv);
    unlink(rs);
    free(csv);
    free(rs);
}

static void test_libsvm_round_trip(void **state)
{
    (void)state;
    make_data();
    char *svm = write_libsvm(), *rs = tmp_path(".drs");
    drift_err e;
    assert_int_equal(drift_rowstore_convert(svm, rs, NULL, NULL, &e), 0);
    drift_table *a, *b;
    assert_int_equal(drift_table_open(svm, &a, &e), 0);
    assert_int_equal(drift_table_open(rs, &b, &e), 0);
    assert_int_equal(a->kind, DRIFT_TABLE_LIBSVM);
    for (drift_table *t = a; t; t = t == a ? b : NULL) {
        assert_int_equal(t->view.n_rows, N);
        assert_int_equal(t->view.n_sparse, 1);
        const drift_sparse *s = t->view.sparse;
        assert_string_equal(s->name, "x");
        assert_true(s->dim <= D);
        for (size_t i = 0; i < N; i++) {
            assert_true(t->view.values[i] == dense[i][0]);
            size_t k = s->row_ptr[i];
            for (size_t j = 1; j <= D; j++)
                if (dense[i][j] != 0.0) {
                    assert_int_equal(s->idx[k], j - 1);
                    assert_true(s->val[k] == dense[i][j]);
                    k++;
                }
            assert_int_equal(k, s->row_ptr[i + 1]);
        }
    }
    drift_table_free(a);
    drift_table_free(b);
    unlink(svm);
    unlink(rs);
    free(svm);
    free(rs);
}

/* The logistic model over dense columns and over sparse rows of the same
 * data: the same log densities and gradients (to rounding: the sums run
 * in another order). */
static void test_sparse_dense_gradients(void **state)
{
    (void)state;
    make_data();
    char *csv = write_dense_csv(), *svm = write_libsvm();
    char set[32];
    snprintf(set, sizeof set, "D=%d", D);
    char *model_set[] = {set};
    th_problem dp, sp;
    th_open(&dp, "logistic", csv, NULL, 0);
    th_open(&sp, "logistic", svm, model_set, 1);
    const drift_model *a = &dp.p.model, *b = &sp.p.model;
    assert_int_equal(a->dim, D);
    assert_int_equal(b->dim, D);
    void *wa = a->workspace_new(a->self, N), *wb = b->workspace_new(b->self, N);
    drift_rng r;
    drift_rng_seed(&r, 5, 2);
    double w[D], v[D];
    for (size_t j = 0; j < D; j++) {
        w[j] = drift_rng_normal(&r);
        v[j] = drift_rng_normal(&r);
    }
    size_t rows[N];
    for (size_t i = 0; i < N; i++)
        rows[i] = (i * 37) % N;
    drift_rows bt = {rows, 0, N};
    static double Ga[N * D], Gb[N * D];
    double la[N], lb[N], ga[D], gb[D], sa, sb, ja[N], jb[N];
    drift_err e;
    assert_int_equal(a->log_lik(a->self, wa, w, &bt, la, &sa, ga, Ga, &e), 0);
    assert_int_equal(b->log_lik(b->self, wb, w, &bt, lb, &sb, gb, Gb, &e), 0);
    assert_int_equal(a->jvp(a->self, wa, w, v, &bt, ja, NULL, &e), 0);
    assert_int_equal(b->jvp(b->self, wb, w, v, &bt, jb, NULL, &e), 0);
    assert_true(fabs(sa - sb) < 1e-12 * fabs(sa));
    for (size_t j = 0; j < D; j++)
        assert_true(fabs(ga[j] - gb[j]) < 1e-12 * (1 + fabs(ga[j])));
    for (size_t i = 0; i < N; i++) {
        assert_true(fabs(la[i] - lb[i]) < 1e-12 * (1 + fabs(la[i])));
        assert_true(fabs(ja[i] - jb[i]) < 1e-12 * (1 + fabs(ja[i])));
        for (size_t j = 0; j < D; j++)
            assert_true(fabs(Ga[i * D + j] - Gb[i * D + j]) < 1e-14);
    }
    a->workspace_free(a->self, wa);
    b->workspace_free(b->self, wb);
    th_close(&dp);
    th_close(&sp);
    unlink(csv);
    unlink(svm);
    free(csv);
    free(svm);
}

/* SGLD on the CSV file and on its row store: the same draws on the same
 * seed (the same numbers are read), for random and cyclic access. */
static void test_same_draws(void **state)
{
    (void)state;
    make_data();
    char *csv = write_dense_csv(), *rs = tmp_path(".drs");
    drift_err e;
    assert_int_equal(drift_rowstore_convert(csv, rs, NULL, NULL, &e), 0);
    for (int access = 0; access < 3; access++) {
        th_draws da, db;
        char *sets[] = {"h=0.001"};
        th_run run = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 10,
                      .iters = 400, .seed = 9, .access = (drift_access)access};
        th_problem pa, pb;
        th_open(&pa, "logistic", csv, NULL, 0);
        th_open(&pb, "logistic", rs, NULL, 0);
        assert_int_equal(th_sample(&pa, &run, &da, NULL), 0);
        assert_int_equal(th_sample(&pb, &run, &db, NULL), 0);
        assert_int_equal(da.n, db.n);
        assert_memory_equal(da.v, db.v, da.n * da.cols * sizeof(double));
        th_draws_free(&da);
        th_draws_free(&db);
        th_close(&pa);
        th_close(&pb);
    }
    unlink(csv);
    unlink(rs);
    free(csv);
    free(rs);
}

/* ---- damaged files ---- */

static char *good_store(int sparse)
{
    make_data();
    char *src = sparse ? write_libsvm() : write_dense_csv();
    char *rs = tmp_path(".drs");
    drift_err e;
    assert_int_equal(drift_rowstore_convert(src, rs, NULL, NULL, &e), 0);
    unlink(src);
    free(src);
    return rs;
}

static void patch(const char *path, long off, const void *bytes, size_t n)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, bytes, n, off), (ssize_t)n);
    close(fd);
}

static void expect_refused(const char *path, const char *needle)
{
    drift_table *t;
    drift_err e = {{0}};
    assert_int_not_equal(drift_table_open(path, &t, &e), 0);
    assert_null(t);
    print_message("%s\n", e.msg);
    assert_non_null(strstr(e.msg, path));
    if (!strstr(e.msg, needle))
        fail_msg("'%s' lacks '%s'", e.msg, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    char *rs = good_store(0);
    /* Newer format version (checked before the checksum). */
    uint32_t v2 = 2;
    patch(rs, 8, &v2, 4);
    expect_refused(rs, "format version 2 is newer than this drift reads "
                       "(version 1)");
    free(rs);
    /* Other byte order. */
    rs = good_store(0);
    uint32_t swapped = 0x04030201u;
    patch(rs, 12, &swapped, 4);
    expect_refused(rs, "other byte order");
    free(rs);
    /* A damaged column name: checksum mismatch. */
    rs = good_store(0);
    patch(rs, sizeof(drift_rowstore_prefix) + 8, "Q", 1);
    expect_refused(rs, "checksum mismatch");
    free(rs);
    /* Truncated in the data. */
    rs = good_store(0);
    assert_int_equal(truncate(rs, 4096 + 100), 0);
    expect_refused(rs, "truncated: the header says");
    /* Truncated inside the header. */
    assert_int_equal(truncate(rs, 50), 0);
    expect_refused(rs, "shorter than the");
    free(rs);
    /* Longer than it should be. */
    rs = good_store(0);
    int fd = open(rs, O_WRONLY | O_APPEND);
    assert_int_equal(write(fd, "xx", 2), 2);
    close(fd);
    expect_refused(rs, "corrupt: the header says");
    free(rs);
    /* Not a row store at all, but with the extension: read as CSV. */
    char *junk = th_write_text("DRIFTRS\x1a but not really", ".drs");
    expect_refused(junk, "shorter than the 96-byte header");
    unlink(junk);
    free(junk);
    /* The magic's first 7 bytes but not the 8th. */
    char text[200];
    memset(text, 'z', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    memcpy(text, "DRIFTRS!", 8);
    junk = th_write_text(text, ".drs");
    expect_refused(junk, "wrong magic");
    unlink(junk);
    free(junk);
    /* A sparse index beyond D. */
    rs = good_store(1);
    drift_table *t;
    drift_err e;
    assert_int_equal(drift_table_open(rs, &t, &e), 0);
    long off = (long)((const char *)t->view.sparse->idx -
                      (const char *)t->rs.map);
    drift_table_free(t);
    uint32_t huge = 1000000;
    patch(rs, off, &huge, 4);
    expect_refused(rs, "corrupt sparse rows");
    free(rs);
}

/* ---- crafted headers ---- */

/* Offsets of the prefix's fields (rowstore.h). */
enum { P_HEADER_BYTES = 16, P_N_ROWS = 24, P_N_COLS = 32, P_FILE_BYTES = 48,
       P_CHECKSUM = 56, P_TABLE = 96 };

/* Recomputes the header checksum (FNV-1a 64 with the field zero), as
 * anyone crafting a store can: the checksum is no guard. */
static void reseal(const char *path)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint64_t hb;
    assert_int_equal(pread(fd, &hb, 8, P_HEADER_BYTES), 8);
    if (hb > (1u << 20))
        hb = 1u << 20;
    unsigned char *buf = calloc(1, hb);
    assert_int_equal(pread(fd, buf, hb, 0), (ssize_t)hb);
    memset(buf + P_CHECKSUM, 0, 8);
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < hb; k++) {
        h ^= buf[k];
        h *= 0x100000001b3ull;
    }
    assert_int_equal(pwrite(fd, &h, 8, P_CHECKSUM), 8);
    close(fd);
    free(buf);
}

static void patch_u64(const char *path, long off, uint64_t v)
{
    patch(path, off, &v, 8);
    reseal(path);
}

static uint64_t read_u64(const char *path, long off)
{
    int fd = open(path, O_RDONLY);
    uint64_t v = 0;
    assert_int_equal(pread(fd, &v, 8, off), 8);
    close(fd);
    return v;
}

/* Every size and offset of a header whose checksum was recomputed is
 * checked on its own and without wrap-around; the message names the
 * field.  None of these may crash, and none may be accepted. */
static void test_crafted_headers(void **state)
{
    (void)state;
    /* Dense: rows x columns x 8 wrapping around 2^64 to a small size. */
    struct {
        long off;
        uint64_t v;
        const char *needle;
    } dense[] = {
        {P_N_ROWS, UINT64_MAX / 8, "n_rows = 2305843009213693951"},
        {P_N_ROWS, ((uint64_t)1 << 61) / 13 + 1, "n_rows ="},
        {P_N_ROWS, N + 1, "n_rows = 301: 301 rows of 13 dense columns do "
                          "not fit"},
        {P_N_ROWS, 0, "n_rows = 0"},
        {P_HEADER_BYTES, 4095, "header_bytes = 4095 is not a multiple of 8"},
        {P_HEADER_BYTES, 4104, "n_rows = 300: 300 rows"},
    };
    for (size_t k = 0; k < sizeof dense / sizeof dense[0]; k++) {
        char *rs = good_store(0);
        patch_u64(rs, dense[k].off, dense[k].v);
        expect_refused(rs, dense[k].needle);
        unlink(rs);
        free(rs);
    }
    /* A column's type and a NUL byte inside a name. */
    char *rs = good_store(0);
    uint32_t seven = 7;
    patch(rs, P_TABLE + 4, &seven, 4);
    reseal(rs);
    expect_refused(rs, "column 1's type = 7");
    unlink(rs);
    free(rs);
    rs = good_store(0);
    uint32_t len = 3; /* "x.1" with its middle byte NUL */
    patch(rs, P_TABLE + 16, &len, 4);
    patch(rs, P_TABLE + 16 + 9, "", 1);
    reseal(rs);
    expect_refused(rs, "column 2's name");
    unlink(rs);
    free(rs);
    /* Sparse: the store is y, then x with {dim, nnz, row_ptr, idx, val}
     * at P_TABLE + 32. */
    enum { S_DIM = P_TABLE + 32, S_NNZ = S_DIM + 8, S_RP = S_DIM + 16,
           S_IX = S_DIM + 24, S_VL = S_DIM + 32 };
    struct {
        long off;
        int64_t v; /* added to the field when rel, else set */
        int rel;
        const char *needle;
    } sparse[] = {
        {S_RP, -(int64_t)((N + 1) * 8), 0, "sparse row_ptr offset = "},
        {S_RP, -8, 0, "sparse row_ptr offset = 18446744073709551608"},
        {S_RP, 4, 1, "sparse row_ptr offset"},      /* misaligned */
        {S_RP, -64, 1, "sparse row_ptr offset"},    /* over the dense rows */
        {S_IX, -2392, 0, "sparse idx offset = 18446744073709549224"},
        {S_IX, 2, 1, "sparse idx offset"},
        {S_IX, -64, 1, "sparse idx offset"},        /* over the row offsets */
        {S_VL, -8, 0, "sparse val offset = 18446744073709551608"},
        {S_VL, 1 << 20, 1, "sparse val offset"},
        {S_NNZ, (int64_t)1 << 62, 0, "sparse nnz = 4611686018427387904"},
        {S_NNZ, 1, 1, "sparse"},
        {S_DIM, 0, 0, "sparse dim = 0"},
        {S_DIM, (int64_t)1 << 40, 0, "sparse dim = 1099511627776"},
        {P_N_ROWS, 1, 1, "sparse"},
    };
    for (size_t k = 0; k < sizeof sparse / sizeof sparse[0]; k++) {
        rs = good_store(1);
        uint64_t v = (uint64_t)sparse[k].v;
        if (sparse[k].rel)
            v += read_u64(rs, sparse[k].off);
        patch_u64(rs, sparse[k].off, v);
        expect_refused(rs, sparse[k].needle);
        unlink(rs);
        free(rs);
    }
    /* The checksum alone is not what refuses these: a mended store with
     * its file_bytes field also lying is still refused on the sizes. */
    rs = good_store(0);
    patch(rs, P_FILE_BYTES, &(uint64_t){4096 + 8}, 8);
    assert_int_equal(truncate(rs, 4096 + 8), 0);
    reseal(rs);
    expect_refused(rs, "n_rows = 300");
    unlink(rs);
    free(rs);
}

static void test_convert_errors(void **state)
{
    (void)state;
    char *out = tmp_path(".drs");
    drift_err e;
    char *bad = th_write_text("y,x.1\n1,2\n3,zz\n", ".csv");
    assert_int_not_equal(drift_rowstore_convert(bad, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, ":3:3: error: field 'zz'"));
    assert_int_not_equal(access(out, F_OK), 0); /* nothing left behind */
    unlink(bad);
    free(bad);
    struct {
        const char *text, *needle;
    } cases[] = {
        {"1 1:2 1:3\n", "indices must increase"},
        {"1 0:2\n", "must be an integer from 1"},
        {"x 1:2\n", "label 'x' is not a finite number"},
        {"1 1:nan\n", "value in '1:nan' is not a finite number"},
        {"1 12\n", "'12' is not index:value"},
        {"1 1:2\n0 qid:3 2:1\n", ":2:3: error:"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *p = th_write_text(cases[k].text, ".libsvm");
        assert_int_not_equal(drift_rowstore_convert(p, out, NULL, NULL, &e), 0);
        if (!strstr(e.msg, cases[k].needle) || !strstr(e.msg, p))
            fail_msg("case %zu: '%s'", k, e.msg);
        drift_table *t;
        assert_int_not_equal(drift_table_open(p, &t, &e), 0);
        assert_non_null(strstr(e.msg, cases[k].needle));
        assert_int_not_equal(access(out, F_OK), 0);
        unlink(p);
        free(p);
    }
    /* A row store is not converted again. */
    char *rs = good_store(0);
    assert_int_not_equal(drift_rowstore_convert(rs, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, "already a drift row store"));
    unlink(rs);
    free(rs);
    free(out);
}

/* Labels of a dense row store are checked as rows are used (no extra
 * pass over data larger than memory): a bad one stops the run with a
 * message naming the file and row. */
static void test_lazy_label_check(void **state)
{
    (void)state;
    make_data();
    dense[123][0] = 2.0;
    char *csv = write_dense_csv(), *rs = tmp_path(".drs");
    drift_err e;
    assert_int_equal(drift_rowstore_convert(csv, rs, NULL, NULL, &e), 0);
    th_problem tp;
    th_open(&tp, "logistic", rs, NULL, 0); /* no up-front pass */
    char *sets[] = {"h=0.001"};
    th_run run = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 50,
                  .passes = 2, .seed = 1, .access = DRIFT_ACCESS_CA};
    drift_chain_result res;
    assert_int_not_equal(th_sample(&tp, &run, NULL, &res), 0);
    print_message("%s\n", res.message);
    assert_non_null(strstr(res.message, "row 124: label 2"));
    assert_non_null(strstr(res.message, rs));
    th_close(&tp);
    /* The CSV itself is checked up front, with its line. */
    drift_registry *reg = th_registry();
    drift_problem p;
    const char *data[] = {csv, NULL};
    drift_problem_spec spec = {.model = "logistic", .data = data,
                               .model_set = NULL, .n_model_set = 0};
    assert_int_not_equal(drift_problem_open(&p, reg, &spec, &e), 0);
    assert_non_null(strstr(e.msg, ":125: error: column 'y'"));
    drift_problem_close(&p);
    drift_registry_free(reg);
    unlink(csv);
    unlink(rs);
    free(csv);
    free(rs);
}

/* Conversion streams from a pipe (a FIFO here) and gives the same file as
 * from the regular file. */
static void *feed(void *arg)
{
    const char **pp = arg;
    FILE *in = fopen(pp[0], "rb"), *out = fopen(pp[1], "wb");
    char buf[4096];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return NULL;
}

static void test_convert_from_pipe(void **state)
{
    (void)state;
    make_data();
    char *csv = write_dense_csv(), *a = tmp_path(".drs"), *b = tmp_path(".drs");
    char *fifo = tmp_path(".fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *pp[2] = {csv, fifo};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, feed, pp), 0);
    drift_err e;
    uint64_t rows = 0;
    assert_int_equal(drift_rowstore_convert(fifo, a, NULL, &rows, &e), 0);
    pthread_join(t, NULL);
    assert_int_equal(rows, N);
    assert_int_equal(drift_rowstore_convert(csv, b, NULL, NULL, &e), 0);
    drift_table *ta, *tb;
    assert_int_equal(drift_table_open(a, &ta, &e), 0);
    assert_int_equal(drift_table_open(b, &tb, &e), 0);
    assert_int_equal(ta->rs.map_len, tb->rs.map_len);
    assert_memory_equal(ta->rs.map, tb->rs.map, ta->rs.map_len);
    drift_table_free(ta);
    drift_table_free(tb);
    const char *files[] = {csv, a, b, fifo};
    for (int k = 0; k < 4; k++) {
        unlink(files[k]);
        free((char *)files[k]);
    }
}

/* A rows schema keeps exactly its variables' columns and checks its int
 * variables; what does not fit is refused before anything is written. */
static void test_schema_convert(void **state)
{
    (void)state;
    char *csv = th_write_text("z,y,x.2,x.1,x.10,extra,xx.1\n"
                              "5,1,0.5,1,3,9,7\n6,0,0.25,1,4,9,7\n",
                              ".csv");
    char *out = tmp_path(".drs");
    drift_schema_var vars[] = {{"x", 0}, {"y", 1}};
    drift_err e;
    uint64_t rows;
    assert_int_equal(drift_rowstore_convert_schema(csv, out, vars, 2, &rows,
                                                   &e), 0);
    assert_int_equal(rows, 2);
    drift_table *t;
    assert_int_equal(drift_table_open(out, &t, &e), 0);
    assert_int_equal(t->view.n_cols, 4);
    const char *want[] = {"x.2", "x.1", "x.10", "y"};
    for (int k = 0; k < 4; k++)
        assert_string_equal(t->view.col_names[k], want[k]);
    assert_true(t->view.values[4 + 2] == 4.0 && t->view.values[4 + 3] == 0.0);
    drift_table_free(t);
    unlink(out);
    /* An int variable holding a fraction, and a variable with no column. */
    drift_schema_var ints[] = {{"x", 1}};
    assert_int_not_equal(drift_rowstore_convert_schema(csv, out, ints, 1, NULL,
                                                       &e), 0);
    assert_non_null(strstr(e.msg, ":2: error: column 'x.2' holds 0.5"));
    assert_int_not_equal(access(out, F_OK), 0);
    drift_schema_var missing[] = {{"w", 0}};
    assert_int_not_equal(drift_rowstore_convert_schema(csv, out, missing, 1,
                                                       NULL, &e), 0);
    assert_non_null(strstr(e.msg, "no column for rows variable 'w'"));
    unlink(csv);
    free(csv);
    /* LIBSVM rows are y and x only. */
    char *svm = th_write_text("1 1:2\n", ".libsvm");
    drift_schema_var bad[] = {{"label", 0}};
    assert_int_not_equal(drift_rowstore_convert_schema(svm, out, bad, 1, NULL,
                                                       &e), 0);
    assert_non_null(strstr(e.msg, "not 'label'"));
    assert_int_equal(drift_rowstore_convert_schema(svm, out, vars, 2, NULL, &e),
                     0);
    unlink(svm);
    unlink(out);
    free(svm);
    free(out);
}

/* ---- conversion writes only what it reads back ---- */

/* Two tables hold the same rows, bit for bit. */
static void assert_same_table(const drift_table *a, const drift_table *b,
                              unsigned seed)
{
    const drift_data *p = &a->view, *q = &b->view;
    if (p->n_rows != q->n_rows || p->n_cols != q->n_cols ||
        p->n_sparse != q->n_sparse)
        fail_msg("seed %u: shape %zu x %zu (+%zu) vs %zu x %zu (+%zu)", seed,
                 p->n_rows, p->n_cols, p->n_sparse, q->n_rows, q->n_cols,
                 q->n_sparse);
    for (size_t j = 0; j < p->n_cols; j++)
        if (strcmp(p->col_names[j], q->col_names[j]))
            fail_msg("seed %u: column %zu '%s' vs '%s'", seed, j + 1,
                     p->col_names[j], q->col_names[j]);
    for (size_t i = 0; i < p->n_rows; i++)
        if (memcmp(p->values + i * p->row_stride, q->values + i * q->row_stride,
                   p->n_cols * sizeof(double)))
            fail_msg("seed %u: row %zu differs", seed, i + 1);
    if (p->n_sparse) {
        const drift_sparse *s = p->sparse, *t = q->sparse;
        assert_int_equal(s->dim, t->dim);
        assert_int_equal(s->nnz, t->nnz);
        assert_memory_equal(s->row_ptr, t->row_ptr,
                            (p->n_rows + 1) * sizeof(uint64_t));
        if (s->nnz) {
            assert_memory_equal(s->idx, t->idx, s->nnz * sizeof(uint32_t));
            assert_memory_equal(s->val, t->val, s->nnz * sizeof(double));
        }
    }
}

/* A random finite double, printed so it reads back exactly, in one of
 * the spellings a data file may use. */
static int put_number(char *buf, size_t cap, drift_rng *r, double *v)
{
    switch (drift_rng_below(r, 5)) {
    case 0: *v = (double)((long)drift_rng_below(r, 2001) - 1000);
        return snprintf(buf, cap, "%.0f", *v);
    case 1: *v = drift_rng_normal(r) * pow(10, (double)drift_rng_below(r, 40) - 20);
        return snprintf(buf, cap, "%.17g", *v);
    case 2: *v = -0.0;
        return snprintf(buf, cap, "-0");
    case 3: *v = ldexp(drift_rng_uniform(r), -1060); /* subnormal */
        return snprintf(buf, cap, "%.17g", *v);
    default: *v = drift_rng_uniform(r);
        return snprintf(buf, cap, "%.17e", *v);
    }
}

/* A random valid CSV file: comment lines, a header of unique names (some
 * quoted, some padded with blanks), rows of finite numbers with blanks
 * around them, LF or CRLF line ends, trailing blank lines. */
static char *random_csv(drift_rng *r)
{
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    const char *eol = drift_rng_below(r, 2) ? "\r\n" : "\n";
    size_t cols = 1 + drift_rng_below(r, 9), rows = 1 + drift_rng_below(r, 30);
    for (size_t k = drift_rng_below(r, 3); k > 0; k--)
        n += (size_t)snprintf(text + n, cap - n, "# comment %zu%s", k, eol);
    static const char alpha[] = "abcxyzABC_.0123456789";
    for (size_t j = 0; j < cols; j++) {
        char name[24];
        size_t len = (size_t)snprintf(name, sizeof name, "%c%zu",
                                      "yxwv"[drift_rng_below(r, 4)], j);
        for (size_t k = drift_rng_below(r, 6); k > 0; k--)
            name[len++] = alpha[drift_rng_below(r, sizeof alpha - 1)];
        name[len] = '\0';
        const char *pad = drift_rng_below(r, 4) ? "" : " ";
        if (drift_rng_below(r, 4) == 0)
            n += (size_t)snprintf(text + n, cap - n, "%s%s\"%s\"%s", j ? "," : "",
                                  pad, name, pad);
        else
            n += (size_t)snprintf(text + n, cap - n, "%s%s%s%s", j ? "," : "",
                                  pad, name, pad);
    }
    n += (size_t)snprintf(text + n, cap - n, "%s", eol);
    for (size_t i = 0; i < rows; i++) {
        for (size_t j = 0; j < cols; j++) {
            double v;
            char num[64];
            put_number(num, sizeof num, r, &v);
            n += (size_t)snprintf(text + n, cap - n, "%s%s%s",
                                  j ? "," : "", drift_rng_below(r, 5) ? "" : " ",
                                  num);
        }
        if (i + 1 < rows || drift_rng_below(r, 2))
            n += (size_t)snprintf(text + n, cap - n, "%s", eol);
    }
    for (size_t k = drift_rng_below(r, 3); k > 0; k--)
        n += (size_t)snprintf(text + n, cap - n, "%s", eol);
    text[n] = '\0';
    char *path = th_write_text(text, ".csv");
    free(text);
    return path;
}

/* A random valid LIBSVM file: labels, strictly increasing indices up to
 * 2^32 - 1 (at least one feature somewhere), comments, blank lines, rows
 * without features. */
static char *random_libsvm(drift_rng *r)
{
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    size_t rows = 1 + drift_rng_below(r, 30);
    int any = 0;
    for (size_t i = 0; i < rows; i++) {
        if (drift_rng_below(r, 8) == 0)
            n += (size_t)snprintf(text + n, cap - n, "# note\n");
        if (drift_rng_below(r, 10) == 0)
            n += (size_t)snprintf(text + n, cap - n, "\n");
        double v;
        char num[64];
        put_number(num, sizeof num, r, &v);
        n += (size_t)snprintf(text + n, cap - n, "%s", num);
        uint64_t idx = 0;
        size_t k = drift_rng_below(r, 6);
        if (i + 1 == rows && !any && k == 0)
            k = 1;
        for (; k > 0; k--) {
            idx += 1 + (drift_rng_below(r, 8) == 0
                            ? drift_rng_below(r, (uint64_t)1 << 31)
                            : drift_rng_below(r, 10));
            if (idx > UINT32_MAX)
                break;
            put_number(num, sizeof num, r, &v);
            n += (size_t)snprintf(text + n, cap - n, "%s%llu:%s",
                                  drift_rng_below(r, 3) ? " " : "\t",
                                  (unsigned long long)idx, num);
            any = 1;
        }
        n += (size_t)snprintf(text + n, cap - n, "%s\n",
                              drift_rng_below(r, 6) ? "" : " # c");
    }
    text[n] = '\0';
    char *path = th_write_text(text, ".libsvm");
    free(text);
    return path;
}

/* Random valid CSV and LIBSVM files (fixed seeds) convert, and the store
 * reads back the very rows the text reader gives. */
static void test_convert_reads_back(void **state)
{
    (void)state;
    char *out = tmp_path(".drs");
    for (unsigned seed = 1; seed <= 300; seed++) {
        drift_rng r;
        drift_rng_seed(&r, 1500 + seed, 0);
        char *in = seed % 2 ? random_csv(&r) : random_libsvm(&r);
        drift_table *a, *b;
        drift_err e;
        if (drift_table_open(in, &a, &e))
            fail_msg("seed %u: the generator wrote a file the reader "
                     "refuses: %s", seed, e.msg);
        if (drift_rowstore_convert(in, out, NULL, NULL, &e))
            fail_msg("seed %u: %s", seed, e.msg);
        if (drift_table_open(out, &b, &e))
            fail_msg("seed %u: the converted store is refused: %s", seed,
                     e.msg);
        assert_same_table(a, b, seed);
        drift_table_free(a);
        drift_table_free(b);
        unlink(in);
        unlink(out);
        free(in);
    }
    free(out);
}

/* What a store cannot hold is refused at conversion, never written: a
 * NUL byte in a header name, LIBSVM labels without any feature. */
static void test_convert_refuses_unreadable(void **state)
{
    (void)state;
    char *out = tmp_path(".drs");
    drift_err e;
    char *p = tmp_path(".csv");
    FILE *f = fopen(p, "wb");
    fwrite("\0y,g,x\n1,2,0.5\n0,1,0.25\n", 1, 24, f);
    fclose(f);
    assert_int_not_equal(drift_rowstore_convert(p, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, ":1:1: error: a NUL byte in the name of "
                                  "column 1"));
    assert_int_not_equal(access(out, F_OK), 0);
    unlink(p);
    free(p);
    p = th_write_text("0\n1\n", ".libsvm");
    assert_int_not_equal(drift_rowstore_convert(p, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, "no row has a feature"));
    assert_int_not_equal(access(out, F_OK), 0);
    unlink(p);
    free(p);
    /* A name longer than a store holds. */
    char text[5000 + 16];
    memset(text, 'n', 5000);
    memcpy(text + 5000, ",y\n1,2\n", 8);
    p = th_write_text(text, ".csv");
    assert_int_not_equal(drift_rowstore_convert(p, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, "column 1's name is 5000 bytes long"));
    unlink(p);
    free(p);
    /* A field with a NUL byte inside is not the number before it. */
    p = tmp_path(".csv");
    f = fopen(p, "wb");
    fwrite("y\n1\0x\n", 1, 6, f);
    fclose(f);
    assert_int_not_equal(drift_rowstore_convert(p, out, NULL, NULL, &e), 0);
    assert_non_null(strstr(e.msg, ":2:1: error: field"));
    unlink(p);
    free(p);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_round_trip),
        cmocka_unit_test(test_libsvm_round_trip),
        cmocka_unit_test(test_sparse_dense_gradients),
        cmocka_unit_test(test_same_draws),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_crafted_headers),
        cmocka_unit_test(test_convert_errors),
        cmocka_unit_test(test_lazy_label_check),
        cmocka_unit_test(test_convert_from_pipe),
        cmocka_unit_test(test_schema_convert),
        cmocka_unit_test(test_convert_reads_back),
        cmocka_unit_test(test_convert_refuses_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
