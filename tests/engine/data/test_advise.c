/* test_advise.c: read-ahead and drop-behind for full passes over row
 * stores.  The guard: on a row store that fits in memory, once
 * a first full pass has mapped it, later passes fault no page of it, read
 * no byte of its file and leave it mapped; counted per pass with
 * getrusage (minor + major faults), /proc/self/io (rchar: every byte
 * read() or pread() by any thread of the process, page cache or not) and
 * /proc/self/smaps (the mapping's resident set), through the C plugin and
 * the .drift model, dense and sparse rows, at 1 and 2 threads, set up as
 * `drift sample` sets up a mapped store.  Counters, not clocks: nothing
 * here depends on the machine's speed or load.  Also the decision to drop,
 * and the bytes a pass reads. */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "engine/data/advise.h"
#include "engine/data/rowstore.h"
#include "engine/lang/lang_model.h"
#include "engine/run/rng.h"
#include "harness.h"

/* Stores of 80 and 73 MB: more than two read-ahead stretches even at their
 * largest (32 MiB), so that dropping every stretch once passed, as drift
 * once did whatever the store's size, would show. */
enum { N = 200000, DD = 49, SN = 150000, SNNZ = 40, SD = 5000 };

/* ---- counters ---- */

static long long rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static long faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Resident bytes of the mappings overlapping [p, p + n) (-1: unknown). */
static long long mapped_rss(const void *p, size_t n)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    char line[512];
    int in = 0;
    long long rss = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        long long kb;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
            strchr(line, ' ') > strchr(line, '-'))
            in = a < hi && b > lo;
        else if (in && sscanf(line, "Rss: %lld kB", &kb) == 1)
            rss += kb * 1024;
    }
    fclose(f);
    return rss;
}

/* ---- stores ---- */

static char *dense_store(void)
{
    size_t cap = (size_t)N * (DD + 1) * 3 + 4096, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "y");
    for (int j = 1; j <= DD; j++)
        len += (size_t)snprintf(text + len, cap - len, ",x.%d", j);
    text[len++] = '\n';
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    for (size_t i = 0; i < N; i++) {
        text[len++] = drift_rng_uniform(&r) < 0.5 ? '0' : '1';
        for (int j = 1; j <= DD; j++) {
            /* small integers: a short file */
            int v = (int)drift_rng_below(&r, 5) - 2;
            len += (size_t)snprintf(text + len, cap - len, ",%d", v);
        }
        text[len++] = '\n';
    }
    text[len] = '\0';
    char *csv = th_write_text(text, ".csv");
    free(text);
    char *drs = th_write_text("", ".drs");
    drift_err e;
    if (drift_rowstore_convert(csv, drs, NULL, NULL, &e))
        fail_msg("%s", e.msg);
    unlink(csv);
    free(csv);
    return drs;
}

static char *sparse_store(void)
{
    size_t cap = (size_t)SN * (SNNZ * 10 + 4) + 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    drift_rng r;
    drift_rng_seed(&r, 6, 0);
    for (size_t i = 0; i < SN; i++) {
        text[len++] = drift_rng_uniform(&r) < 0.5 ? '0' : '1';
        /* SNNZ increasing indices, one in each of SNNZ equal bands */
        for (int k = 0; k < SNNZ; k++) {
            unsigned idx = 1 + (unsigned)k * (SD / SNNZ) +
                           (unsigned)drift_rng_below(&r, SD / SNNZ);
            int v = drift_rng_uniform(&r) < 0.5 ? -1 : 1;
            len += (size_t)snprintf(text + len, cap - len, " %u:%d", idx, v);
        }
        text[len++] = '\n';
    }
    text[len] = '\0';
    char *svm = th_write_text(text, ".libsvm");
    free(text);
    char *drs = th_write_text("", ".drs");
    drift_err e;
    if (drift_rowstore_convert(svm, drs, NULL, NULL, &e))
        fail_msg("%s", e.msg);
    unlink(svm);
    free(svm);
    return drs;
}

/* ---- passes ---- */

typedef struct pass_counts {
    double faults, rchar;   /* per pass */
    long long rss;          /* the store's mapping, after the passes */
    uint64_t bytes;         /* a pass's bytes */
    size_t map_len;
} pass_counts;

/* A chain over model (a plugin name or a .drift file) on store, set up as
 * `drift sample` sets up a mapped row store; one untimed full pass, then
 * `passes` counted ones. */
static void count_passes(const char *model, const char *store,
                         unsigned threads, int passes, pass_counts *out)
{
    th_problem tp;
    th_open(&tp, model, store, NULL, 0);
    const drift_table *t =
        tp.p.table ? tp.p.table : drift_lang_rows_table(&tp.p.model);
    assert_non_null(t);
    assert_int_equal(t->kind, DRIFT_TABLE_ROWSTORE);
    char *sets[] = {"h=1e-6"};
    th_run r = {.sampler = "lmc", .set = sets, .n_set = 1, .seed = 1,
                .threads = threads};
    size_t d = tp.p.model.dim;
    double *theta = calloc(d, sizeof *theta), *g = calloc(d, sizeof *g);
    th_chain ch;
    th_chain_open(&ch, &tp, &r, NULL, NULL, theta);
    drift_chain *c = &ch.c;
    for (size_t j = 0; j < d; j++)
        theta[j] = 0.01 * (double)(j % 7);
    assert_int_equal(drift_services_table.grad_full(c, theta, g, NULL), 0);
    long f0 = faults();
    long long r0 = rchar();
    for (int k = 0; k < passes; k++)
        assert_int_equal(drift_services_table.grad_full(c, theta, g, NULL),
                         0);
    out->faults = (double)(faults() - f0) / passes;
    out->rchar = (double)(rchar() - r0) / passes;
    out->rss = mapped_rss(t->rs.map, t->rs.map_len);
    out->bytes = drift_advise_pass_bytes(&t->view);
    out->map_len = t->rs.map_len;
    th_chain_close(&ch);
    free(theta);
    free(g);
    th_close(&tp);
}

static int fits(const char *store)
{
    drift_rowstore rs;
    drift_err e;
    assert_int_equal(drift_rowstore_open(&rs, store, &e), 0);
    uint64_t bytes = drift_advise_pass_bytes(&rs.view);
    drift_rowstore_close(&rs);
    return !drift_advise_should_drop(bytes, drift_advise_memory_available());
}

static void guard(const char *model, const char *store, const char *what)
{
    long page = sysconf(_SC_PAGESIZE);
    for (unsigned T = 1; T <= 2; T++) {
        pass_counts pc;
        count_passes(model, store, T, 3, &pc);
        double pages = (double)pc.bytes / (double)page;
        print_message("%s, %u thread%s: %.1f faults and %.0f bytes read a "
                      "pass (a pass reads %" PRIu64 " bytes, %.0f pages); "
                      "mapped after the passes: %lld of %zu bytes\n",
                      what, T, T > 1 ? "s" : "", pc.faults, pc.rchar,
                      pc.bytes, pages, pc.rss, pc.map_len);
        /* Dropping what was passed would fault each page back in (at
         * least one fault per 64 KiB with the kernel's fault-around; one
         * per 2 MiB at the very least) and read ahead all over again.
         * Under a sanitizer (ThreadSanitizer: a pass's worker threads fault in
         * their shadow memory, about 540 faults a pass at 2 threads), so
         * there the bytes read and the pages kept mapped (below) judge
         * alone. */
        const char *san = getenv("DRIFT_SANITIZED");
        int sanitized = san && !strcmp(san, "yes");
        if (!sanitized && pc.faults > 4 + pages / 512)
            fail_msg("%s, %u thread%s: %.1f page faults a pass over a "
                     "store that fits in memory: the pass maps it again",
                     what, T, T > 1 ? "s" : "", pc.faults);
        if (pc.rchar > (double)pc.bytes / 100)
            fail_msg("%s, %u thread%s: %.0f bytes read a pass over a store "
                     "that fits in memory: the pass reads it again",
                     what, T, T > 1 ? "s" : "", pc.rchar);
        if (pc.rss >= 0 && (double)pc.rss < 0.9 * (double)pc.bytes)
            fail_msg("%s, %u thread%s: only %lld of %" PRIu64 " bytes "
                     "stay mapped after a pass",
                     what, T, T > 1 ? "s" : "", pc.rss, pc.bytes);
    }
}

/* The dense store, for a test that counts bytes read and needs it to
 * stay in memory (skips the test where either cannot be had). */
static char *dense_store_checked(void)
{
    if (rchar() < 0) {
        print_message("no /proc/self/io here: skipped\n");
        skip();
    }
    char *store = dense_store();
    if (!fits(store)) {
        print_message("not enough memory for an 80 MB store here: skipped\n");
        unlink(store);
        free(store);
        skip();
    }
    return store;
}

static char *write_model(const char *text)
{
    return th_write_text(text, ".drift");
}

static void test_dense_passes_stay_mapped(void **state)
{
    (void)state;
    char *store = dense_store_checked();
    char *m = write_model("rows  { x : vector[D]  y : int }\n"
                          "param { w : vector[D] }\n"
                          "prior { w ~ normal(0, 3) }\n"
                          "datum { y ~ bernoulli_logit(dot(x, w)) }\n");
    guard("logistic", store, "dense, C plugin");
    guard(m, store, "dense, .drift model");
    unlink(m);
    unlink(store);
    free(m);
    free(store);
}

static void test_sparse_passes_stay_mapped(void **state)
{
    (void)state;
    if (rchar() < 0) {
        print_message("no /proc/self/io here: skipped\n");
        skip();
    }
    char *store = sparse_store();
    if (!fits(store)) {
        print_message("not enough memory for a 73 MB store here: skipped\n");
        unlink(store);
        free(store);
        skip();
    }
    char *m = write_model("rows  { x : sparse_vector[D]  y : int }\n"
                          "param { w : vector[D] }\n"
                          "prior { w ~ normal(0, 3) }\n"
                          "datum { y ~ bernoulli_logit(dot(x, w)) }\n");
    guard("logistic", store, "sparse, C plugin");
    guard(m, store, "sparse, .drift model");
    unlink(m);
    unlink(store);
    free(m);
    free(store);
}

/* Dropping is for stores larger than half the memory available. */
static void test_should_drop(void **state)
{
    (void)state;
    assert_false(drift_advise_should_drop(100, 1000));
    assert_false(drift_advise_should_drop(500, 1000));
    assert_true(drift_advise_should_drop(501, 1000));
    assert_true(drift_advise_should_drop(1, 0));
    assert_false(drift_advise_should_drop((uint64_t)1 << 40, UINT64_MAX));
    uint64_t avail = drift_advise_memory_available();
    print_message("memory available: %" PRIu64 " bytes\n", avail);
    assert_true(avail > 0);
}

/* A pass reads the dense rows and, for sparse rows, their N + 1 offsets,
 * indices and values. */
static void test_pass_bytes(void **state)
{
    (void)state;
    static double v[6 * 3];
    static uint64_t rp[7] = {0, 1, 1, 3, 4, 4, 5};
    static uint32_t ix[5];
    static double sv[5];
    drift_sparse sp = {"x", 10, rp, ix, sv, 5};
    drift_data d = {.struct_size = (uint32_t)sizeof d, .n_rows = 6,
                    .n_cols = 3, .values = v, .row_stride = 3};
    assert_int_equal(drift_advise_pass_bytes(&d), 6 * 3 * 8);
    d.n_sparse = 1;
    d.sparse = &sp;
    assert_int_equal(drift_advise_pass_bytes(&d),
                     6 * 3 * 8 + 7 * 8 + 5 * 4 + 5 * 8);
    assert_int_equal(drift_advise_pass_bytes(NULL), 0);
}

/* ---- the reader on a store that stays in memory ---- */

static int quiet_now(drift_advisor *a)
{
    pthread_mutex_lock(&a->mu);
    int q = a->quiet;
    pthread_mutex_unlock(&a->mu);
    return q;
}

static long major_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_majflt;
}

static void nap(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* How many of the *np pages that [p, p + n) touches are in the page
 * cache. */
static size_t pages_cached(const void *p, size_t n, size_t *np)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t b = (uintptr_t)p & ~(page - 1);
    uintptr_t e = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    *np = (e - b) / page;
    unsigned char *vec = malloc(*np);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)b, e - b, vec), 0);
    size_t in = 0;
    for (size_t k = 0; k < *np; k++)
        in += vec[k] & 1;
    free(vec);
    return in;
}

/* Whether every page of [p, p + n) is in the page cache. */
static int all_resident(const void *p, size_t n)
{
    size_t np;
    return pages_cached(p, n, &np) == np;
}

/* Walks the chain through one pass, stretch by stretch, reading a byte of
 * every page of the rows when touch is set (2: and pausing 10 ms at each
 * stretch). */
static unsigned walk_pass(drift_advisor *a, const drift_rowstore *rs,
                          int touch)
{
    size_t N = rs->view.n_rows, step = a->rows_per_chunk;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t row_bytes = rs->view.row_stride * sizeof(double);
    unsigned sum = 0;
    for (size_t r = 0; r < N; r += step) {
        drift_advisor_at(a, r);
        if (touch == 2)
            nap();
        size_t r1 = r + step < N ? r + step : N;
        const unsigned char *lo =
            (const unsigned char *)(rs->view.values + r * rs->view.row_stride);
        for (size_t b = 0; touch && b < (r1 - r) * row_bytes; b += page)
            sum += lo[b];
    }
    return sum;
}

/* Once a whole pass of stretches was found in the page cache, the reader
 * stops checking them (every page's mincore was CPU a 2-thread pass on 2
 * cores paid for); a page read from disk since (a major fault) makes it
 * check, and read, again. */
static void test_reader_goes_quiet(void **state)
{
    (void)state;
    char *store = dense_store_checked();
    drift_rowstore rs;
    drift_err e;
    assert_int_equal(drift_rowstore_open(&rs, store, &e), 0);
    drift_advisor a;
    drift_advisor_init(&a, &rs.view, rs.fd, rs.map);
    assert_false(a.drop);
    assert_true(a.running);
    volatile unsigned sink = 0;
    /* Passes at the reader's pace (a pause at each stretch: on a loaded
     * machine a walk that outruns it makes it skip stretches), until it
     * has found a whole pass resident. */
    int q = 0;
    for (int pass = 0; pass < 100 && !(q = quiet_now(&a)); pass++)
        sink += walk_pass(&a, &rs, 2);
    assert_true(q);
    /* Quiet: a further pass reads nothing. */
    long long r0 = rchar();
    sink += walk_pass(&a, &rs, 1);
    for (int k = 0; k < 20; k++)
        nap();
    assert_true(rchar() - r0 < 4096 * 4);
    /* Push the store out of this mapping and of the page cache, and fault
     * one page back from disk. */
    madvise(rs.map, rs.map_len, MADV_DONTNEED);
    posix_fadvise(rs.fd, 0, 0, POSIX_FADV_DONTNEED);
    long m0 = major_now();
    sink += ((const volatile unsigned char *)rs.view.values)[0];
    if (major_now() == m0) {
        print_message("the page cache kept the store: eviction unchecked\n");
    } else {
        /* A new pass: the stretch ahead is checked and read again (by
         * the reader: nothing else here touches it). */
        drift_advisor_at(&a, 0);
        size_t row_bytes = rs.view.row_stride * sizeof(double);
        const char *lo = (const char *)rs.view.values +
                         a.rows_per_chunk * row_bytes;
        size_t len = a.rows_per_chunk * row_bytes;
        int in = 0;
        for (int k = 0; k < 1000 && !(in = all_resident(lo, len)); k++)
            nap();
        print_message("after eviction, the next stretch is back in the "
                      "page cache: %s\n", in ? "yes" : "no");
        assert_true(in);
    }
    (void)sink;
    drift_advisor_free(&a);
    drift_rowstore_close(&rs);
    unlink(store);
    free(store);
}

/* Dropping passed stretches (a store larger than the memory available,
 * forced here): from this mapping always, and from the page cache too
 * when the chain is alone on the store (evict), not otherwise (a chain
 * behind it would read them again). */
static void check_release(const char *store, int evict)
{
    drift_rowstore rs;
    drift_err e;
    assert_int_equal(drift_rowstore_open(&rs, store, &e), 0);
    drift_advisor a;
    drift_advisor_prepare(&a, &rs.view, rs.fd, rs.map);
    a.drop = 1;
    a.evict = evict;
    drift_advisor_start(&a);
    volatile unsigned sink = walk_pass(&a, &rs, 1);
    (void)sink;
    /* the reader done: a stretch it was still reading when the chain
     * passed it is released too */
    drift_advisor_free(&a);
    size_t row_bytes = rs.view.row_stride * sizeof(double);
    /* the first stretch, passed and released at the second's start */
    const char *lo = (const char *)rs.view.values;
    size_t len = a.rows_per_chunk * row_bytes;
    /* its whole pages (those a release can drop) */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), np;
    uintptr_t b = ((uintptr_t)lo + page - 1) & ~(uintptr_t)(page - 1);
    size_t in = pages_cached((const void *)b, len / page * page, &np);
    print_message("evict %d: %zu of %zu pages of the first stretch still "
                  "in the page cache after the pass\n", evict, in, np);
    if (evict)
        assert_true(in < np / 4);
    else
        assert_true(in > np / 2);
    drift_rowstore_close(&rs);
}

static void test_release_evicts_when_alone(void **state)
{
    (void)state;
    char *store = dense_store();
    check_release(store, 0);
    check_release(store, 1);
    unlink(store);
    free(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_should_drop),
        cmocka_unit_test(test_pass_bytes),
        cmocka_unit_test(test_dense_passes_stay_mapped),
        cmocka_unit_test(test_sparse_passes_stay_mapped),
        cmocka_unit_test(test_reader_goes_quiet),
        cmocka_unit_test(test_release_evicts_when_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
