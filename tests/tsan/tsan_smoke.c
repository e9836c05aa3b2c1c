/* tsan_smoke.c: the multi-chain smoke test that make check runs under
 * ThreadSanitizer (tests/tsan/tsan-smoke.sh builds this file and the
 * engine's sources with -fsanitize=thread when the compiler can).  It exercises
 * what threads share: chains in parallel threads (the allocator's fault
 * injection counters, the stop request), --threads full-data passes,
 * read-ahead over a mapped row store with the input-map guard polled from
 * every chain, the progress line's watcher, and a SIGINT arriving while
 * chains run (the handler and the chains share the stop request), each
 * run made as drift sample makes it (a plan over the opened problem).  Any
 * race makes ThreadSanitizer fail the run; the checks here only make sure
 * each part ran.  Plugins come from DRIFT_PLUGIN_DIR as in make check
 * (they are not instrumented, so races inside them are not seen).  Not a
 * cmocka test: it links nothing built without the sanitizer. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stop.h"
#include "base/util.h"
#include "engine/data/rowstore.h"
#include "engine/run/plan.h"
#include "engine/run/plugin.h"
#include "engine/run/problem.h"
#include "engine/run/rng.h"
#include "engine/run/stream.h"

static int failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "tsan-smoke: %s:%d: ", __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static char dir[] = "/tmp/drift-tsan-XXXXXX";

/* Logistic data: y, x.1 .. x.5, n rows. */
static void write_data(const char *path, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    drift_rng r;
    drift_rng_seed(&r, 15, 0);
    fputs("y,x.1,x.2,x.3,x.4,x.5\n", f);
    for (size_t i = 0; i < n; i++) {
        double x[5], z = 0;
        for (int k = 0; k < 5; k++) {
            x[k] = drift_rng_normal(&r);
            z += 0.3 * (k + 1) * x[k];
        }
        fprintf(f, "%d", drift_rng_uniform(&r) < 1 / (1 + exp(-z)));
        for (int k = 0; k < 5; k++)
            fprintf(f, ",%.6f", x[k]);
        fputc('\n', f);
    }
    fclose(f);
}

typedef struct run_spec {
    const char *name;
    const char *sampler;
    const char *set;
    unsigned chains, threads;
    uint64_t iters;
    drift_access access;
    int progress;
} run_spec;

/* One run as drift sample makes it (the plan: its defaults, checks and
 * the row store's read-ahead), over the opened problem p, with every
 * chain in a thread at once. */
static int run(drift_registry *reg, drift_problem *p, const run_spec *rs,
               drift_draw_fn on_draw, drift_chain_result *res)
{
    char out[256], iters[32], chains[16], threads[16], access[8];
    snprintf(out, sizeof out, "%s/%s.csv", dir, rs->name);
    snprintf(iters, sizeof iters, "%llu", (unsigned long long)rs->iters);
    snprintf(chains, sizeof chains, "%u", rs->chains);
    snprintf(threads, sizeof threads, "%u", rs->threads);
    snprintf(access, sizeof access, "%s", drift_access_name(rs->access));
    drift_option options[16] = {
        {"set", rs->set},  {"access", access}, {"iter", iters},
        {"warmup", "0"},   {"thin", "1"},      {"seed", "42"},
        {"chains", chains}, {"threads", threads}, {"out", out},
        {"init", "zero"}};
    size_t n = 10;
    /* the progress watcher: lines to stderr unless quiet */
    if (!rs->progress)
        options[n++] = (drift_option){"quiet", NULL};
    drift_spec spec = {.sampler = rs->sampler, .options = options,
                       .n_options = n, .on_draw = on_draw};
    drift_plan_internal in = {
        .reg = reg, .prob = p,
        .parallel = rs->chains /* all at once, whatever the cores: the
                                  point is chains in threads together */};
    drift_err e = {{0}};
    drift_plan *plan;
    int rc = drift_plan_new_internal(&spec, &in, &plan, &e);
    if (rc) {
        CHECK(0, "%s: %s", rs->name, e.msg);
        return rc;
    }
    rc = drift_plan_run(plan, DRIFT_LAUNCH_IN_PROCESS, &e);
    memcpy(res, plan->results, rs->chains * sizeof *res);
    drift_plan_free(plan);
    return rc;
}

static void open_problem(drift_registry *reg, drift_problem *p,
                         const char *model, const char *data)
{
    const char *files[2] = {data, NULL};
    drift_problem_spec spec = {.model = model, .data = files,
                               .diag = stderr};
    drift_err e = {{0}};
    if (drift_problem_open(p, reg, &spec, &e)) {
        fprintf(stderr, "tsan-smoke: %s on %s: %s\n", model, data, e.msg);
        exit(1);
    }
}

/* The chains that have written a row (bit id - 1). */
static unsigned drawn;

static void note_draw(void *user, unsigned chain_id, unsigned flags,
                      const double *row, size_t n)
{
    (void)user, (void)flags, (void)row, (void)n;
    __atomic_fetch_or(&drawn, 1u << (chain_id - 1), __ATOMIC_RELAXED);
}

/* SIGINT once each of the three chains has written a row (the run's
 * setup, the step size's check, comes first), or after a minute. */
static void *send_sigint(void *arg)
{
    (void)arg;
    for (int k = 0; k < 6000 && __atomic_load_n(&drawn, __ATOMIC_RELAXED) != 7;
         k++)
        usleep(10000);
    usleep(50000);
    kill(getpid(), SIGINT);
    return NULL;
}

static void *count_allocations(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2000; k++)
        drift_fail_alloc(0); /* reads and resets the counter chains bump */
    return NULL;
}

int main(void)
{
    /* SIGINT's default action whatever this was started with (a shell's
     * background job has it ignored, which drift's handlers honour). */
    signal(SIGINT, SIG_DFL);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char csv[256], drs[256], model[4096];
    snprintf(csv, sizeof csv, "%s/data.csv", dir);
    snprintf(drs, sizeof drs, "%s/data.drs", dir);
    const char *src = getenv("srcdir");
    snprintf(model, sizeof model, "%s/examples/logistic/logistic.drift",
             src ? src : ".");
    write_data(csv, 4000);
    drift_err e = {{0}};
    if (drift_rowstore_convert(csv, drs, NULL, NULL, &e)) {
        fprintf(stderr, "tsan-smoke: convert: %s\n", e.msg);
        return 1;
    }
    drift_registry *reg = drift_registry_new();
    if (!reg || drift_registry_scan(reg, &e) ||
        drift_registry_n_samplers(reg) == 0) {
        fprintf(stderr, "tsan-smoke: no plugins (run under make check)\n");
        return 1;
    }
    drift_chain_result res[4];

    /* 1. Four chains of the C model, with allocations counted meanwhile
     * from another thread, and the progress watcher. */
    drift_problem p;
    open_problem(reg, &p, "logistic", csv);
    pthread_t counter;
    pthread_create(&counter, NULL, count_allocations, NULL);
    run_spec chains = {"chains", "sgld", "h=0.0005", 4, 1, 3000,
                       DRIFT_ACCESS_RA, 1};
    CHECK(run(reg, &p, &chains, NULL, res) == DRIFT_OK, "four chains failed");
    pthread_join(counter, NULL);
    drift_fail_alloc(0);

    /* 2. Full-data passes in threads (--threads 2), two chains. */
    run_spec threads = {"threads", "lmc", "h=0.0002", 2, 2, 200,
                        DRIFT_ACCESS_RA, 0};
    CHECK(run(reg, &p, &threads, NULL, res) == DRIFT_OK, "--threads 2 failed");

    /* 3. SIGINT while three chains run: the handler and the chains share
     * the stop request; the draws so far are committed. */
    drift_stop_clear();
    drift_stop_catch();
    pthread_t sender;
    pthread_create(&sender, NULL, send_sigint, NULL);
    run_spec stop = {"stop", "sgld", "h=0.0005", 3, 1, (uint64_t)1 << 40,
                     DRIFT_ACCESS_RR, 0};
    int rc = run(reg, &p, &stop, note_draw, res);
    pthread_join(sender, NULL);
    drift_stop_uncatch();
    CHECK(rc == DRIFT_ESTOP, "SIGINT did not stop the run (status %d)", rc);
    CHECK(drift_stop_requested() == SIGINT, "the stop request lost SIGINT");
    for (unsigned k = 0; k < 3; k++)
        CHECK(res[k].draws > 0 && res[k].path[0], "chain %u kept nothing", k);
    drift_stop_clear();
    drift_problem_close(&p);

    /* 4. The .drift model over a mapped row store: read-ahead threads,
     * cyclic access, the input-map guard polled from both chains. */
    open_problem(reg, &p, model, drs);
    run_spec mapped = {"mapped", "sgld", "h=0.0005", 2, 1, 3000,
                       DRIFT_ACCESS_CA, 0};
    CHECK(run(reg, &p, &mapped, NULL, res) == DRIFT_OK, "mapped run failed");
    drift_problem_close(&p);

    drift_registry_free(reg);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "tsan-smoke: could not remove %s\n", dir);
    if (failures)
        return 1;
    printf("tsan-smoke: 4 multi-threaded runs done\n");
    return 0;
}
