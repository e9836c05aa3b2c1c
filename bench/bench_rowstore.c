/* bench_rowstore.c: `make bench` for full-gradient passes over row stores.
 * Covertype-sized dense logistic regression (N = 581,012, d = 54) and a
 * sparse one (N = 500,000, D = 100,000, 40 non-zeros a row), synthetic,
 * made here, each held twice: as arrays in memory and as a row store
 * (written as CSV / LIBSVM and converted with drift_rowstore_convert, so
 * both hold the same numbers).  In one process it times, in ns per datum
 * of wall and of CPU time (best of REPS rounds, each round running every
 * case once, after a first one that brings the store into the page
 * cache):
 *   - a streaming read of the rows (the memory-bandwidth limit), on one
 *     thread and on two;
 *   - a hand-written fused C loop over the arrays (dot, logistic, axpy);
 *   - drift's grad_full through the logistic C plugin and through the
 *     .drift model, in memory and on the row store, at --threads 1 and 2;
 * with ratios, and per pass over the store the minor page faults and the
 * bytes read() (what a pass re-reads from the page cache or disk).
 * Not a test: nothing here asserts on time.  Usage: bench_rowstore [REPS
 * [dense|sparse]] (temporary files under $TMPDIR, else /tmp). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "base/util.h"
#include "engine/data/rowstore.h"
#include "engine/data/table.h"
#include "engine/lang/lang_model.h"
#include "engine/lang/vmath.h"
#include "engine/run/oracle.h"
#include "engine/run/plugin.h"
#include "engine/run/rng.h"

#include "bench_plan.h"

enum { N = 581012, D = 54, COLS = D + 1 };
enum { SN = 500000, SD = 100000, NNZ = 40 };

static int REPS = 10;
static double sink;
static char dir[256];

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench: %s: %s\n", what, msg);
    exit(1);
}

/* ---- counters --------------------------------------------------------- */

typedef struct counts {
    double wall, cpu;
    long minflt, majflt;
    long long rchar;
} counts;

static long long proc_rchar(void)
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

static counts now_counts(void)
{
    counts c;
    struct rusage ru;
    struct timespec ts;
    getrusage(RUSAGE_SELF, &ru);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    c.wall = drift_now();
    c.cpu = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    c.minflt = ru.ru_minflt;
    c.majflt = ru.ru_majflt;
    c.rchar = proc_rchar();
    return c;
}

/* A timed case: f(arg) over n data, its best time over REPS rounds. */
typedef struct bcase {
    const char *what;
    void (*f)(void *);
    void *arg;
    double wall, cpu;       /* best, seconds */
    double minflt, rchar;   /* per call, averaged */
} bcase;

/* Runs every case once untimed (a store comes into the page cache and
 * maps), then REPS rounds of every case in turn, so that a machine whose
 * load changes during the run weighs on all cases alike; keeps each
 * case's best wall and CPU time, and its faults and bytes read per call. */
static void run_cases(bcase *cs, int n)
{
    for (int k = 0; k < n; k++) {
        cs[k].f(cs[k].arg);
        cs[k].wall = cs[k].cpu = INFINITY;
        cs[k].minflt = cs[k].rchar = 0;
    }
    for (int rep = 0; rep < REPS; rep++)
        for (int k = 0; k < n; k++) {
            counts a = now_counts();
            cs[k].f(cs[k].arg);
            counts b = now_counts();
            if (b.wall - a.wall < cs[k].wall)
                cs[k].wall = b.wall - a.wall;
            if (b.cpu - a.cpu < cs[k].cpu)
                cs[k].cpu = b.cpu - a.cpu;
            cs[k].minflt += (double)(b.minflt - a.minflt + b.majflt -
                                     a.majflt) / REPS;
            cs[k].rchar += (double)(b.rchar - a.rchar) / REPS;
        }
}

/* The kernel's transparent huge page mode ("always", "madvise", "never"),
 * or "unknown". */
static const char *thp_mode(void)
{
    static char mode[32] = "unknown";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128];
    if (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b && b - a - 1 < (long)sizeof mode) {
            memcpy(mode, a + 1, (size_t)(b - a - 1));
            mode[b - a - 1] = 0;
        }
    }
    if (f)
        fclose(f);
    return mode;
}

/* ---- data ------------------------------------------------------------- */

/* Values on a grid of 1/1024, so that CSV and LIBSVM text hold them
 * exactly and the row store equals the arrays. */
static double grid(double v) { return round(v * 1024) / 1024; }

static double *dense;            /* N x COLS: y, x.1 .. x.D */
static const char *dense_names[COLS];
static double *sy, *sval;        /* sparse: labels, values */
static uint32_t *sidx;
static uint64_t *srow;

static void make_dense(const char *csv)
{
    static char buf[COLS][16];
    dense = malloc((size_t)N * COLS * sizeof *dense);
    /* huge pages where the system gives them, as drift's loaders ask */
    drift_advise_huge(dense, (size_t)N * COLS * sizeof *dense);
    FILE *f = fopen(csv, "w");
    if (!dense || !f)
        die(csv, "cannot write");
    drift_rng r;
    drift_rng_seed(&r, 1, 0);
    double w[D];
    for (int j = 0; j < D; j++)
        w[j] = drift_rng_normal(&r) / sqrt(D);
    snprintf(buf[0], sizeof buf[0], "y");
    dense_names[0] = buf[0];
    fputs("y", f);
    for (int j = 0; j < D; j++) {
        snprintf(buf[1 + j], sizeof buf[0], "x.%d", j + 1);
        dense_names[1 + j] = buf[1 + j];
        fprintf(f, ",%s", buf[1 + j]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < N; i++) {
        double *row = dense + i * COLS, z = 0;
        for (int j = 0; j < D; j++) {
            row[1 + j] = j == 0 ? 1.0 : grid(drift_rng_normal(&r));
            z += row[1 + j] * w[j];
        }
        row[0] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
        fprintf(f, "%.17g", row[0]);
        for (int j = 0; j < D; j++)
            fprintf(f, ",%.17g", row[1 + j]);
        fputc('\n', f);
    }
    if (fclose(f))
        die(csv, "write error");
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, z = *(const uint32_t *)b;
    return (x > z) - (x < z);
}

static void make_sparse(const char *svm)
{
    sy = malloc(SN * sizeof *sy);
    sval = malloc((size_t)SN * NNZ * sizeof *sval);
    sidx = malloc((size_t)SN * NNZ * sizeof *sidx);
    drift_advise_huge(sval, (size_t)SN * NNZ * sizeof *sval);
    drift_advise_huge(sidx, (size_t)SN * NNZ * sizeof *sidx);
    srow = malloc((SN + 1) * sizeof *srow);
    double *w = malloc(SD * sizeof *w);
    FILE *f = fopen(svm, "w");
    if (!sy || !sval || !sidx || !srow || !w || !f)
        die(svm, "cannot write");
    drift_rng r;
    drift_rng_seed(&r, 11, 0);
    for (size_t j = 0; j < SD; j++)
        w[j] = drift_rng_normal(&r);
    srow[0] = 0;
    for (size_t i = 0; i < SN; i++) {
        uint32_t *ix = sidx + i * NNZ;
        int dup;
        do {
            for (int k = 0; k < NNZ; k++)
                ix[k] = (uint32_t)drift_rng_below(&r, SD);
            if (i == 0)
                ix[0] = SD - 1; /* the last feature is used: dim = SD */
            qsort(ix, NNZ, sizeof *ix, cmp_u32);
            dup = 0;
            for (int k = 1; k < NNZ; k++)
                dup |= ix[k] == ix[k - 1];
        } while (dup);
        double z = 0;
        for (int k = 0; k < NNZ; k++) {
            sval[i * NNZ + k] = grid(drift_rng_normal(&r) / sqrt(NNZ));
            z += sval[i * NNZ + k] * w[ix[k]];
        }
        sy[i] = drift_rng_uniform(&r) < 1 / (1 + exp(-z));
        srow[i + 1] = (i + 1) * NNZ;
        fprintf(f, "%g", sy[i]);
        for (int k = 0; k < NNZ; k++)
            fprintf(f, " %u:%.17g", ix[k] + 1, sval[i * NNZ + k]);
        fputc('\n', f);
    }
    free(w);
    if (fclose(f))
        die(svm, "write error");
}

static void convert(const char *in, const char *out)
{
    drift_err e;
    uint64_t rows;
    if (drift_rowstore_convert(in, out, NULL, &rows, &e))
        die(in, e.msg);
    unlink(in);
}

/* ---- plain C references ------------------------------------------------- */

typedef struct span {
    const double *p;
    size_t n;
    double s;
} span;

static void *sum_span(void *arg)
{
    span *s = arg;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    /* Four independent sums, so the loop is bound by memory, not by the
     * latency of one chain of additions. */
    for (size_t k = 0; k + 3 < s->n; k += 4) {
        s0 += s->p[k];
        s1 += s->p[k + 1];
        s2 += s->p[k + 2];
        s3 += s->p[k + 3];
    }
    s->s = s0 + s1 + s2 + s3;
    return NULL;
}

/* Reads the regions (base, bytes) on T threads, each a contiguous part. */
typedef struct stream_arg {
    const void *base[4];
    size_t bytes[4];
    int n;
    unsigned T;
} stream_arg;

static void stream_read(void *arg)
{
    stream_arg *a = arg;
    for (int r = 0; r < a->n; r++) {
        size_t n = a->bytes[r] / sizeof(double), per = n / a->T;
        span s[2];
        pthread_t t;
        for (unsigned k = 0; k < a->T; k++) {
            s[k].p = (const double *)a->base[r] + k * per;
            s[k].n = k + 1 == a->T ? n - k * per : per;
        }
        int threaded = a->T > 1 && !pthread_create(&t, NULL, sum_span, &s[1]);
        sum_span(&s[0]);
        if (a->T > 1) {
            if (threaded)
                pthread_join(t, NULL);
            else
                sum_span(&s[1]);
        }
        for (unsigned k = 0; k < a->T; k++)
            sink += s[k].s;
    }
}

/* The fused loops' rows: in memory or in the map. */
typedef struct hand_rows {
    const double *dense;
    const double *y, *val;
    const uint32_t *idx;
    const uint64_t *row;
} hand_rows;

/* The fused loop as a careful programmer writes it: the dot product in 8
 * independent partial sums (one chain of 54 dependent additions would
 * make it bound by their latency, not by memory), the logistic function,
 * the gradient's sum while the row is in cache; compiled -O3
 * -march=native, so the partial sums and the sum go to vector registers.
 * It computes no log-likelihood, which drift's passes also return. */
static void hand_dense(void *arg)
{
    const double *dense_at = ((const hand_rows *)arg)->dense;
    double w[D], g[D] = {0};
    for (int j = 0; j < D; j++)
        w[j] = 0.01 * j;
    for (size_t i = 0; i < N; i++) {
        const double *row = dense_at + i * COLS, *x = row + 1;
        double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int j = 0;
        for (; j + 8 <= D; j += 8)
            for (int l = 0; l < 8; l++)
                p[l] += x[j + l] * w[j + l];
        for (int l = 0; j + l < D; l++)
            p[l] += x[j + l] * w[j + l];
        double z = ((p[0] + p[4]) + (p[2] + p[6])) +
                   ((p[1] + p[5]) + (p[3] + p[7]));
        double s = row[0] - 1 / (1 + exp(-z));
        for (j = 0; j < D; j++)
            g[j] += s * x[j];
    }
    sink += g[0];
}

static double sw[SD], sg[SD];

static void hand_sparse(void *arg)
{
    const hand_rows *h = arg;
    const double *sy_at = h->y, *sval_at = h->val;
    const uint32_t *sidx_at = h->idx;
    const uint64_t *srow_at = h->row;
    memset(sg, 0, sizeof sg);
    for (size_t i = 0; i < SN; i++) {
        /* four independent partial sums, as in the dense loop */
        double z0 = 0, z1 = 0, z2 = 0, z3 = 0;
        uint64_t k = srow_at[i], end = srow_at[i + 1];
        for (; k + 4 <= end; k += 4) {
            z0 += sval_at[k] * sw[sidx_at[k]];
            z1 += sval_at[k + 1] * sw[sidx_at[k + 1]];
            z2 += sval_at[k + 2] * sw[sidx_at[k + 2]];
            z3 += sval_at[k + 3] * sw[sidx_at[k + 3]];
        }
        for (; k < end; k++)
            z0 += sval_at[k] * sw[sidx_at[k]];
        double z = (z0 + z1) + (z2 + z3);
        double s = sy_at[i] - 1 / (1 + exp(-z));
        for (uint64_t k = srow_at[i]; k < srow_at[i + 1]; k++)
            sg[sidx_at[k]] += s * sval_at[k];
    }
    sink += sg[0];
}

/* ---- drift -------------------------------------------------------------- */

typedef struct ctx {
    drift_plan *plan;
    drift_chain c;
    double *theta, *g;
    size_t d;
} ctx;

static drift_registry *reg;

/* A chain of an SGLD plan over p at --threads threads, set up as drift
 * sample sets it up (over a mapped row store: advice for random access,
 * read-ahead). */
static void setup(ctx *x, const drift_problem *p, unsigned threads)
{
    char t[16];
    snprintf(t, sizeof t, "%u", threads);
    const drift_option options[] = {
        {"set", "h=1e-6"}, {"batch", "50"},  {"warmup", "0"},
        {"thin", "1"},     {"seed", "3"},    {"chains", "1"},
        {"init", "zero"},  {"threads", t},   {"quiet", NULL}};
    memset(x, 0, sizeof *x);
    x->d = p->model.dim;
    x->theta = calloc(x->d, sizeof *x->theta);
    x->g = calloc(x->d, sizeof *x->g);
    double *scratch = calloc(x->d, sizeof *scratch);
    if (!x->theta || !x->g || !scratch)
        die("chain", "out of memory");
    x->plan = bench_plan(reg, p, "sgld", options,
                         sizeof options / sizeof *options);
    bench_chain(x->plan, &x->c, scratch);
    free(scratch);
    for (size_t j = 0; j < x->d; j++)
        x->theta[j] = 0.01 * (double)(j % 97);
}

static void release(ctx *x)
{
    drift_run_chain_release(&x->c);
    drift_plan_free(x->plan);
    free(x->theta);
    free(x->g);
}

static void full_pass(void *arg)
{
    ctx *x = arg;
    if (drift_services_table.grad_full(&x->c, x->theta, x->g, NULL))
        die("grad_full", x->c.message);
    sink += x->g[0];
}

static char *write_model(const char *text)
{
    char *path = malloc(strlen(dir) + 32);
    sprintf(path, "%s/model.drift", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f))
        die(path, "cannot write");
    return path;
}

/* The model (a plugin's name, or a .drift file's path) over in-memory
 * rows (view) or a row store (path), opened as libdrift opens it. */
static void open_model(const char *model, const drift_data *view,
                       const char *path, const char *set, drift_problem *p)
{
    bench_problem_open(reg, model, view, path, set, p);
}

/* ---- report --------------------------------------------------------------- */

/* One line: ns per datum (wall, and CPU time of all the process's threads)
 * and ratios of wall times to ref and ref2 (and of CPU times, for one
 * thread, where the machine is shared: see the README). */
static void line(const bcase *c, size_t n, const bcase *ref,
                 const char *ref_name, const bcase *ref2,
                 const char *ref2_name, int cpu_ratios, int show_io)
{
    double ns = 1e9 / (double)n;
    printf("  %-40s %7.1f ns/datum (cpu %6.1f)", c->what, c->wall * ns,
           c->cpu * ns);
    if (ref)
        printf("  %.2fx %s", c->wall / ref->wall, ref_name);
    if (ref2)
        printf(", %.2fx %s", c->wall / ref2->wall, ref2_name);
    if (ref && cpu_ratios) {
        printf("  (cpu %.2fx", c->cpu / ref->cpu);
        if (ref2)
            printf(", %.2fx", c->cpu / ref2->cpu);
        putchar(')');
    }
    if (show_io)
        printf("  [%.0f faults, %.1f MB read a pass]", c->minflt,
               c->rchar / 1e6);
    putchar('\n');
}

typedef struct pair {
    drift_problem mem, store;
} pair;

/* The C plugin `logistic` (with --model-set width, may be NULL) and the
 * .drift model written from text, each over the rows in memory and over
 * the row store drs. */
static void open_pairs(const char *text, const drift_data *mem,
                       const char *drs, const char *width, pair *plug,
                       pair *lang)
{
    char *mp = write_model(text);
    open_model("logistic", mem, NULL, width, &plug->mem);
    open_model("logistic", NULL, drs, width, &plug->store);
    open_model(mp, mem, NULL, NULL, &lang->mem);
    open_model(mp, NULL, drs, NULL, &lang->store);
    unlink(mp);
    free(mp);
}

static void close_pairs(pair *plug, pair *lang)
{
    drift_problem_close(&plug->mem);
    drift_problem_close(&plug->store);
    drift_problem_close(&lang->mem);
    drift_problem_close(&lang->store);
}

/* One section: streaming reads, the fused loop in memory and over the
 * map, and drift's grad_full through the C plugin and the .drift model in
 * memory and on the store at 1 and 2 threads, all timed in the same
 * rounds; gradients from memory and store compared bit for bit. */
static void section(size_t n, stream_arg *s1, stream_arg *s2,
                    void (*hand)(void *), hand_rows *hm, hand_rows *hs,
                    pair *plug, pair *lang)
{
    enum { NC = 12 };
    ctx cx[8];
    const char *names[2] = {"C plugin", ".drift model"};
    pair *models[2] = {plug, lang};
    static char what[8][64];
    bcase cs[NC] = {
        {"streaming read, 1 thread", stream_read, s1, 0, 0, 0, 0},
        {"streaming read, 2 threads", stream_read, s2, 0, 0, 0, 0},
        {"hand C fused loop, in memory", hand, hm, 0, 0, 0, 0},
        {"hand C fused loop, over the map", hand, hs, 0, 0, 0, 0},
    };
    for (int m = 0; m < 2; m++)
        for (unsigned T = 1; T <= 2; T++) {
            int k = 4 * m + 2 * (int)(T - 1);
            setup(&cx[k], &models[m]->mem, T);
            setup(&cx[k + 1], &models[m]->store, T);
            snprintf(what[k], sizeof what[k], "%s, in memory, %u thread%s",
                     names[m], T, T > 1 ? "s" : "");
            snprintf(what[k + 1], sizeof what[k + 1],
                     "%s, row store, %u thread%s", names[m], T,
                     T > 1 ? "s" : "");
            cs[4 + k] = (bcase){what[k], full_pass, &cx[k], 0, 0, 0, 0};
            cs[5 + k] = (bcase){what[k + 1], full_pass, &cx[k + 1], 0, 0, 0,
                                0};
        }
    /* In rounds within groups that touch one copy of the data in memory
     * and one mapping of the store each: the references, the plugin's
     * four cases, the .drift model's (which maps the store again).  On a
     * virtual machine with shadow page tables, rounds over three or more
     * 256 MB regions were seen to evict each other's translations: every
     * pass then pays the hypervisor's faults, invisible to getrusage. */
    run_cases(cs, 4);
    run_cases(cs + 4, 4);
    run_cases(cs + 8, 4);
    for (int k = 0; k < 8; k += 2)
        /* Same numbers in, same chunks: the same sums. */
        for (size_t j = 0; j < cx[k].d; j++)
            if (cx[k].g[j] != cx[k + 1].g[j]) {
                fprintf(stderr, "bench: %s: gradients differ between memory "
                                "and row store at %zu: %.17g vs %.17g\n",
                        cs[4 + k].what, j, cx[k].g[j], cx[k + 1].g[j]);
                exit(1);
            }
    line(&cs[0], n, NULL, NULL, NULL, NULL, 0, 0);
    line(&cs[1], n, &cs[0], "1 thread", NULL, NULL, 0, 0);
    line(&cs[2], n, &cs[0], "bandwidth", NULL, NULL, 1, 0);
    line(&cs[3], n, &cs[2], "memory", NULL, NULL, 1, 1);
    for (int k = 0; k < 8; k += 2) {
        int one = k % 4 == 0;
        const bcase *ref = one ? &cs[2] : &cs[1];
        const char *ref_name = one ? "hand C" : "bandwidth";
        line(&cs[4 + k], n, ref, ref_name, NULL, NULL, one, 0);
        line(&cs[5 + k], n, &cs[4 + k], "memory", ref, ref_name, one, 1);
    }
    for (int k = 0; k < 8; k++)
        release(&cx[k]);
}

static void bench_dense(void)
{
    char csv[300], drs[300];
    snprintf(csv, sizeof csv, "%s/dense.csv", dir);
    snprintf(drs, sizeof drs, "%s/dense.drs", dir);
    make_dense(csv);
    convert(csv, drs);
    drift_data mem = {.struct_size = (uint32_t)sizeof(drift_data),
                      .n_rows = N, .n_cols = COLS, .col_names = dense_names,
                      .values = dense, .row_stride = COLS,
                      .source = "synthetic"};
    static const char *text =
        "rows  { x : vector[D]  y : int }\n"
        "param { w : vector[D] }\n"
        "prior { w ~ normal(0, sqrt(10)) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    pair plug, lang;
    open_pairs(text, &mem, drs, NULL, &plug, &lang);
    /* the hand loop over the plugin's mapping of the store */
    const drift_table *t = plug.store.table;
    size_t bytes = (size_t)N * COLS * sizeof(double);
    stream_arg s1 = {{dense}, {bytes}, 1, 1}, s2 = {{dense}, {bytes}, 1, 2};
    hand_rows hm = {.dense = dense}, hs = {.dense = t->view.values};
    printf("dense logistic regression, N = %d, d = %d, %.0f MB (best of %d "
           "rounds)\n", N, D, bytes / 1e6, REPS);
    section(N, &s1, &s2, hand_dense, &hm, &hs, &plug, &lang);
    close_pairs(&plug, &lang);
    unlink(drs);
    free(dense);
}

static void bench_sparse(void)
{
    char svm[300], drs[300];
    snprintf(svm, sizeof svm, "%s/sparse.libsvm", dir);
    snprintf(drs, sizeof drs, "%s/sparse.drs", dir);
    make_sparse(svm);
    convert(svm, drs);
    static const char *ynames[1] = {"y"};
    drift_sparse sp = {"x", SD, srow, sidx, sval, (size_t)SN * NNZ};
    drift_data mem = {.struct_size = (uint32_t)sizeof(drift_data),
                      .n_rows = SN, .n_cols = 1, .col_names = ynames,
                      .values = sy, .row_stride = 1, .n_sparse = 1,
                      .sparse = &sp, .source = "synthetic"};
    static const char *text =
        "rows  { x : sparse_vector[D]  y : int }\n"
        "param { w : vector[D] }\n"
        "prior { w ~ normal(0, sqrt(10)) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    pair plug, lang;
    char width[32];
    snprintf(width, sizeof width, "D=%d", SD);
    open_pairs(text, &mem, drs, width, &plug, &lang);
    /* the hand loop over the plugin's mapping of the store */
    const drift_table *t = plug.store.table;
    size_t nz = (size_t)SN * NNZ;
    stream_arg s1 = {{sy, srow, sidx, sval},
                     {SN * 8, (SN + 1) * 8, nz * 4, nz * 8}, 4, 1};
    stream_arg s2 = s1;
    s2.T = 2;
    double bytes = (double)(SN * 8 + (SN + 1) * 8 + nz * 12);
    for (size_t j = 0; j < SD; j++)
        sw[j] = 0.01 * (double)(j % 97);
    hand_rows hm = {.y = sy, .val = sval, .idx = sidx, .row = srow};
    hand_rows hs = {.y = t->view.values, .val = t->rs.sparse.val,
                    .idx = t->rs.sparse.idx, .row = t->rs.sparse.row_ptr};
    printf("\nsparse logistic regression, N = %d, D = %d, %d non-zeros a "
           "row, %.0f MB (best of %d rounds)\n", SN, SD, NNZ, bytes / 1e6,
           REPS);
    section(SN, &s1, &s2, hand_sparse, &hm, &hs, &plug, &lang);
    close_pairs(&plug, &lang);
    unlink(drs);
    free(sy), free(sval), free(sidx), free(srow);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        REPS = atoi(argv[1]) > 0 ? atoi(argv[1]) : REPS;
    /* As drift_run does: BLAS on one thread, parallelism is drift's. */
    openblas_set_num_threads(1);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/drift-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        die(dir, "cannot make a temporary directory");
    reg = drift_registry_new();
    drift_err e = {{0}};
    if (!reg || drift_registry_scan(reg, &e))
        die("plugins (run with make bench)", e.msg);
    double load[1] = {0};
    getloadavg(load, 1);
    printf("vector math: %s\n%ld processors, load average %.2f at the start "
           "(where the machine is shared, compare the cpu figures)\n",
           drift_vmath_describe(), sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    printf("transparent huge pages: %s (the in-memory arrays ask for them, "
           "as drift's loaders do; the store's map is left to the page "
           "cache)\n\n",
           thp_mode());
    const char *only = argc > 2 ? argv[2] : "";
    if (strcmp(only, "sparse"))
        bench_dense();
    if (strcmp(only, "dense"))
        bench_sparse();
    drift_registry_free(reg);
    rmdir(dir);
    return sink == 12345.678 ? 2 : 0;
}
