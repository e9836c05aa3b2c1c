/* test_hostile.c: the drift command against hostile files, paths, signals
 * and machines, as a user meets them: every reproducer of the
 * attack on drift (crafted row stores, outputs naming device nodes, FIFOs
 * and inputs, a data file truncated under a running chain, plugin
 * directories holding a FIFO or a lying descriptor, a NUL byte in a
 * header, wide headers, endless lines, huge indices) gives its exit
 * status and message; write errors keep the previous file; and signals of
 * every kind, SIGKILL included, at random moments of sample (1 and 2
 * chains) and data convert leave no partial file under the requested name
 * and no temporary file. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A build under AddressSanitizer or ThreadSanitizer: each maps terabytes
 * of shadow memory, so no drift it builds starts under a limit on the
 * address space. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DRIFT_TEST_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DRIFT_TEST_SHADOW 1
#endif
#endif
#ifndef DRIFT_TEST_SHADOW
#define DRIFT_TEST_SHADOW 0
#endif

#include "engine/run/rng.h"
#include "engine/stats/stancsv.h"
#include "harness.h"

/* ---- helpers ---- */

static char *tmp_dir(void)
{
    char t[] = "/tmp/drift-hostile-XXXXXX";
    assert_non_null(mkdtemp(t));
    return strdup(t);
}

static void rm_dir(const char *dir)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static char *in_dir(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static const char *src_path(const char *rel)
{
    static char buf[8][4200];
    static int k;
    const char *src = getenv("srcdir");
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", src ? src : ".", rel);
    return b;
}

static const char *pima(void)
{
    return src_path("examples/logistic/pima-train.csv");
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* Files of dir whose names contain needle. */
static int count_files(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strstr(de->d_name, needle) != NULL;
    closedir(d);
    return n;
}

/* drift's defaults since this test was written run four chains, queued
 * beyond the cores: the cases below mean one chain unless they say
 * --chains, and every chain they ask for at once.  Rewrites args so (a
 * static copy, one at a time). */
static const char *const *one_chain(const char *const *args)
{
    static const char *buf[128];
    size_t n = 0;
    int chains = 0;
    for (size_t k = 0; args[k] && n < 124; k++) {
        chains |= !strcmp(args[k], "--chains");
        buf[n++] = args[k];
    }
    if (n && !strcmp(args[0], "sample") && !chains) {
        buf[n++] = "--chains";
        buf[n++] = "1";
    }
    buf[n] = NULL;
    return buf;
}

static pid_t spawn_one(const char *const *args, int fd_out, int fd_err)
{
    return th_cli_spawn(one_chain(args), fd_out, fd_err);
}

static th_cli run_one(const char *const *args)
{
    return th_cli_run(one_chain(args));
}

#define th_cli_spawn(...) spawn_one(__VA_ARGS__)
#define th_cli_run(...) run_one(__VA_ARGS__)

/* Runs drift with args, killing it after limit seconds (a hang is a
 * failure): status as th_cli_run gives it, 124 for a timeout. */
static th_cli run_timed(const char *const *args, int limit)
{
    char outp[] = "/tmp/drift-hostile-out-XXXXXX",
         errp[] = "/tmp/drift-hostile-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    assert_true(fo >= 0 && fe >= 0);
    pid_t pid = th_cli_spawn(args, fo, fe);
    int st = 0, timed_out = 0;
    for (int t = 0; waitpid(pid, &st, WNOHANG) == 0; t++) {
        if (t >= limit * 100) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            timed_out = 1;
            break;
        }
        usleep(10000);
    }
    close(fo);
    close(fe);
    th_cli r = {timed_out       ? 124
                : WIFEXITED(st) ? WEXITSTATUS(st)
                                : 128 + WTERMSIG(st),
                th_slurp(outp), th_slurp(errp)};
    unlink(outp);
    unlink(errp);
    return r;
}

/* drift args must exit with status and say needle on standard error. */
static void expect_cli(const char *const *args, int status, const char *needle)
{
    th_cli r = run_timed(args, 120);
    if (r.status != status || !strstr(r.err, needle))
        fail_msg("drift %s ... : exit %d (expected %d), stderr:\n%s\n(expected "
                 "'%s')",
                 args[0], r.status, status, r.err, needle);
    th_cli_free(&r);
}

/* A whole Stan CSV file: read back by drift's reader, rows complete. */
static size_t valid_rows(const char *path)
{
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &f, &e))
        fail_msg("%s: %s", path, e.msg);
    size_t n = f->n_rows;
    drift_stancsv_free(f);
    char *text = th_slurp(path);
    assert_true(text[strlen(text) - 1] == '\n');
    free(text);
    return n;
}

/* Whether pid's descriptor fd is open for writing (/proc/PID/fdinfo). */
static int fd_writes(pid_t pid, const char *fd)
{
    char path[400], line[128];
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%s", (int)pid, fd);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long flags = 0;
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "flags: %lo", &flags) == 1) {
            found = 1;
            break;
        }
    fclose(f);
    return found && (flags & 3) != 0;
}

/* How many files of dir (named or unnamed: O_TMPFILE) process pid holds
 * open for writing, with at least min_bytes written. */
static int open_in(pid_t pid, const char *dir, off_t min_bytes)
{
    char fds[64];
    snprintf(fds, sizeof fds, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(fds);
    if (!d)
        return 0;
    int n = 0;
    size_t len = strlen(dir);
    for (struct dirent *de; (de = readdir(d));) {
        char link[4200], target[4200];
        snprintf(link, sizeof link, "%s/%s", fds, de->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = '\0';
        struct stat st;
        n += !strncmp(target, dir, len) && target[len] == '/' &&
             stat(link, &st) == 0 && st.st_size >= min_bytes &&
             S_ISREG(st.st_mode) && fd_writes(pid, de->d_name);
    }
    closedir(d);
    return n;
}

/* Waits (up to 30 s) until pid has n files of dir open for writing with
 * min_bytes written each; returns whether it did. */
static int wait_writing(pid_t pid, const char *dir, int n, off_t min_bytes)
{
    for (int t = 0; t < 3000; t++) {
        if (open_in(pid, dir, min_bytes) >= n)
            return 1;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            fail_msg("drift ended before it wrote (status %d)", st);
        usleep(10000);
    }
    return 0;
}

/* Logistic rows: y, x.1 .. x.d, n rows, seeded. */
static void write_logistic_csv(const char *path, size_t n, size_t d)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    drift_rng r;
    drift_rng_seed(&r, 1515, 0);
    fputs("y", f);
    for (size_t k = 1; k <= d; k++)
        fprintf(f, ",x.%zu", k);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%d", drift_rng_uniform(&r) < 0.5);
        for (size_t k = 0; k < d; k++)
            fprintf(f, ",%.6f", drift_rng_normal(&r));
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
}

/* ---- crafted row stores (crashers rowstore-*) ---- */

static const char *regression(const char *name)
{
    static char buf[4][4200];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s",
             src_path("tests/fuzz/regressions/rowstore/"));
    strncat(b, name, sizeof buf[0] - strlen(b) - 1);
    return b;
}

static void test_crafted_stores(void **state)
{
    (void)state;
    struct {
        const char *file, *needle;
    } cases[] = {
        {"dense_wrap.drs", "n_rows = 2305843009213693951"},
        {"fuzz_found_9cols.drs", "n_rows = 256204778801521549"},
        {"idx_wrap.drs", "sparse idx offset = 18446744073709549208"},
        {"sparse_wrap.drs", "sparse row_ptr offset = 18446744073709551568"},
        {"rowptr_wrap_mutant.drs",
         "sparse row_ptr offset = 18446744073709551608"},
        {"hdr4095.drs", "header_bytes = 4095 is not a multiple of 8"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        expect_cli((const char *[]){"data", "info", regression(cases[k].file),
                                    NULL},
                   2, cases[k].needle);
    /* drift check never says "data match" for a store claiming more rows
     * than the file holds. */
    char *dir = tmp_dir(), *y = in_dir(dir, "y.drift"),
         *dense = in_dir(dir, "dense.drift"), *out = in_dir(dir, "o.csv");
    const char *ytext = "rows { y : real }\nparam { mu : real }\n"
                        "prior { mu ~ normal(0, 1) }\n"
                        "datum { y ~ normal(mu, 1) }\n";
    write_file(y, ytext, strlen(ytext));
    const char *dtext = "rows  { x : vector[D]  y : int }\n"
                        "param { w : vector[D] }\n"
                        "prior { w ~ normal(0, 1) }\n"
                        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    write_file(dense, dtext, strlen(dtext));
    th_cli r = run_timed((const char *[]){"check", y, "--data",
                                          regression("dense_wrap.drs"), NULL},
                         60);
    assert_int_equal(r.status, 2);
    assert_null(strstr(r.out, "data match"));
    assert_non_null(strstr(r.err, "n_rows = 2305843009213693951"));
    th_cli_free(&r);
    expect_cli((const char *[]){"sample", y, "--data",
                                regression("dense_wrap.drs"), "--sampler",
                                "sgld", "--set", "h=0.001", "--iter", "100",
                                "--seed", "1", "--out", out, NULL},
               2, "more rows than the file's 4120 bytes can hold");
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                regression("fuzz_found_9cols.drs"),
                                "--sampler", "sgld", "--iter", "100", "--out",
                                out, NULL},
               2, "n_rows = 256204778801521549");
    expect_cli((const char *[]){"sample",
                                src_path("examples/sparse/sparse_logistic."
                                         "drift"),
                                "--data", regression("sparse_wrap.drs"),
                                "--sampler", "sgld", "--set", "h=0.001",
                                "--iter", "100", "--out", out, NULL},
               2, "sparse row_ptr offset");
    expect_cli((const char *[]){"check", dense, "--data",
                                regression("hdr4095.drs"), NULL},
               2, "header_bytes = 4095");
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                regression("hdr4095.drs"), "--sampler", "lmc",
                                "--set", "h=0.001", "--iter", "5", "--out",
                                out, NULL},
               2, "header_bytes = 4095");
    assert_int_equal(count_files(dir, "o.csv"), 0);
    rm_dir(dir);
    free(dir);
    free(y);
    free(dense);
    free(out);
}

/* ---- outputs that must not be replaced (out-path-replaces-device-node) */

static void test_output_targets(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char *fifo = in_dir(dir, "fifo"), *sock = in_dir(dir, "sock"),
         *dev = in_dir(dir, "null"), *data = in_dir(dir, "d.csv"),
         *hard = in_dir(dir, "same.csv"), *init = in_dir(dir, "init.json"),
         *model = in_dir(dir, "m.drift"), *o = in_dir(dir, "o.csv"),
         *sub = in_dir(dir, "sub/");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    /* A private device node where we may make one (root); the checks
     * refuse it before any work, so /dev/null itself is never at risk. */
    int have_dev = mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0;
    write_logistic_csv(data, 50, 2);
    assert_int_equal(link(data, hard), 0);
    write_file(init, "{\"w\": [0, 0]}", 13);
    const char *mtext = "rows  { x : vector[D]  y : int }\n"
                        "param { w : vector[D] }\n"
                        "prior { w ~ normal(0, 1) }\n"
                        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    write_file(model, mtext, strlen(mtext));
    struct {
        const char *out, *needle;
    } refused[] = {
        {fifo, "is a FIFO (named pipe)"},
        {sock, "is a socket"},
        {dir, "is a directory"},
        {"", "an empty file name"},
        {sub, "names a directory"},
        {data, "is the same file as the input"},
        {hard, "is the same file as the input"},
        {init, "is the same file as the input"},
        {model, "is the same file as the input"},
        {have_dev ? dev : fifo, have_dev ? "is a character device" : "FIFO"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        expect_cli((const char *[]){"sample", model, "--data", data,
                                    "--sampler", "sgld", "--set", "h=0.001",
                                    "--iter", "20", "--init", init, "--out",
                                    refused[k].out, NULL},
                   2, refused[k].needle);
    /* The same names at CmdStan's four chains, whose files are derived
     * from --out (o_1.csv ...): the name itself is still refused when it
     * is not a regular file, so that --out /dev/full never puts
     * /dev/full_1 beside the device; an input's name is not, as it is not
     * written (below). */
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        if (!strstr(refused[k].needle, "same file as the input"))
            expect_cli((const char *[]){"sample", model, "--data", data,
                                        "--sampler", "sgld", "--set",
                                        "h=0.001", "--iter", "20", "--chains",
                                        "4", "--init", init, "--out",
                                        refused[k].out, NULL},
                       2, refused[k].needle);
    assert_int_equal(count_files(dir, "_1"), 0);
    /* --out d.csv beside --data d.csv with 4 chains writes d_1.csv ...
     * d_4.csv, and the data stay as they were. */
    struct stat before, after;
    assert_int_equal(stat(data, &before), 0);
    expect_cli((const char *[]){"sample", model, "--data", data, "--sampler",
                                "sgld", "--set", "h=0.001", "--iter", "20",
                                "--chains", "4", "--quiet", "--out", data,
                                NULL},
               0, "");
    assert_int_equal(stat(data, &after), 0);
    assert_true(before.st_ino == after.st_ino &&
                before.st_size == after.st_size &&
                before.st_mtime == after.st_mtime);
    for (int k = 1; k <= 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "d_%d.csv", k);
        char *p = in_dir(dir, name);
        assert_int_equal(access(p, R_OK), 0);
        unlink(p);
        free(p);
    }
    /* The test file of --test, and the metrics file beside the draws. */
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                pima(), "--test", data, "--sampler", "sgld",
                                "--iter", "20", "--out", data, NULL},
               2, "is the same file as the input");
    char *metrics = in_dir(dir, "o_metrics.csv");
    assert_int_equal(mkfifo(metrics, 0600), 0);
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                pima(), "--test", data, "--sampler", "sgld",
                                "--iter", "20", "--out", o, NULL},
               2, "o_metrics.csv: is a FIFO");
    /* Chain files: the second of two chains names the FIFO. */
    char *o2 = in_dir(dir, "c_2.csv"), *c = in_dir(dir, "c.csv");
    assert_int_equal(mkfifo(o2, 0600), 0);
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                pima(), "--sampler", "sgld", "--iter", "20",
                                "--chains", "2", "--out", c,
                                NULL},
               2, "c_2.csv: is a FIFO");
    /* data convert X X (by any name), and into a FIFO or device. */
    expect_cli((const char *[]){"data", "convert", data, data, NULL}, 2,
               "is the same file as the input");
    expect_cli((const char *[]){"data", "convert", data, hard, NULL}, 2,
               "is the same file as the input");
    expect_cli((const char *[]){"data", "convert", data,
                                have_dev ? dev : fifo, NULL},
               2, have_dev ? "is a character device" : "FIFO");
    expect_cli((const char *[]){"data", "convert", data, "", NULL}, 2,
               "an empty file name");
    /* summary --csv over one of the files it reads, or a FIFO. */
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                pima(), "--sampler", "sgld", "--iter", "50",
                                "--seed", "3", "--out", o, "--quiet", NULL},
               0, "");
    expect_cli((const char *[]){"summary", o, "--csv", o, NULL}, 2,
               "is the same file as the input");
    expect_cli((const char *[]){"summary", o, "--csv", fifo, NULL}, 2,
               "is a FIFO");
    /* Everything refused is as it was. */
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(lstat(sock, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    if (have_dev) {
        assert_int_equal(lstat(dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    char *text = th_slurp(model);
    assert_string_equal(text, mtext);
    free(text);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    close(s);
    rm_dir(dir);
    free(dir);
    free(fifo);
    free(sock);
    free(dev);
    free(data);
    free(hard);
    free(init);
    free(model);
    free(o);
    free(o2);
    free(c);
    free(sub);
    free(metrics);
}

/* ---- write errors ---- */

/* Runs args with a file size limit (ulimit -f) of bytes. */
static th_cli run_fsize(const char *const *args, rlim_t bytes)
{
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = bytes;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    th_cli r = th_cli_run(args);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    return r;
}

static void test_write_errors(void **state)
{
    (void)state;
    signal(SIGXFSZ, SIG_IGN); /* this process's own writes stay small */
    char *dir = tmp_dir(), *o = in_dir(dir, "o.csv"),
         *o1 = in_dir(dir, "p_1.csv"), *p = in_dir(dir, "p.csv"),
         *csv = in_dir(dir, "big.csv"), *drs = in_dir(dir, "big.drs");
    write_file(o, "previous\n", 9);
    write_file(o1, "previous\n", 9);
    th_cli r = run_fsize((const char *[]){"sample", "--model", "logistic",
                                          "--data", pima(), "--sampler",
                                          "sgld", "--set", "h=0.0005",
                                          "--iter", "20000", "--seed", "1",
                                          "--out", o, NULL},
                         100 * 1024);
    assert_int_equal(r.status, 1);
    if (!strstr(r.err, "o.csv: write error: File too large; the file is not "
                       "written (a previous file of that name is kept)"))
        fail_msg("stderr: %s", r.err);
    th_cli_free(&r);
    char *text = th_slurp(o);
    assert_string_equal(text, "previous\n");
    free(text);
    /* Two chains: each stops at its first failing write. */
    r = run_fsize((const char *[]){"sample", "--model", "logistic", "--data",
                                   pima(), "--sampler", "sgld", "--iter",
                                   "20000", "--chains", "2", 
                                   "--out", p, NULL},
                  100 * 1024);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "p_1.csv: write error"));
    assert_non_null(strstr(r.err, "p_2.csv: write error"));
    th_cli_free(&r);
    text = th_slurp(o1);
    assert_string_equal(text, "previous\n");
    free(text);
    /* data convert: the first failing section write stops it. */
    write_logistic_csv(csv, 20000, 10);
    write_file(drs, "previous\n", 9);
    r = run_fsize((const char *[]){"data", "convert", csv, drs, NULL},
                  512 * 1024);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "big.drs: write error: File too large; the "
                                  "row store is not written"));
    th_cli_free(&r);
    text = th_slurp(drs);
    assert_string_equal(text, "previous\n");
    free(text);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    signal(SIGXFSZ, SIG_DFL);
    rm_dir(dir);
    free(dir);
    free(o);
    free(o1);
    free(p);
    free(csv);
    free(drs);
}

/* ---- inputs changing under a run (input-truncated-while-mapped) ---- */

/* Starts args, stops the process once it writes (its output open, and
 * min_bytes in it), truncates victim to keep bytes, lets it go on, and
 * returns how it ended. */
static th_cli truncate_under(const char *const *args, const char *dir,
                             off_t min_bytes, const char *victim, off_t keep)
{
    char errp[] = "/tmp/drift-hostile-err-XXXXXX";
    int fe = mkstemp(errp);
    assert_true(fe >= 0);
    pid_t pid = th_cli_spawn(args, -1, fe);
    close(fe);
    assert_true(wait_writing(pid, dir, 1, min_bytes));
    kill(pid, SIGSTOP);
    assert_int_equal(truncate(victim, keep), 0);
    kill(pid, SIGCONT);
    int st;
    waitpid(pid, &st, 0);
    th_cli r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), NULL,
                th_slurp(errp)};
    unlink(errp);
    return r;
}

static void test_truncated_inputs(void **state)
{
    (void)state;
    char *dir = tmp_dir(), *csv = in_dir(dir, "big.csv"),
         *drs = in_dir(dir, "big.drs"), *o = in_dir(dir, "o.csv"),
         *cv = in_dir(dir, "cv.drs"), *model = in_dir(dir, "m.drift");
    write_logistic_csv(csv, 300000, 10);
    expect_cli((const char *[]){"data", "convert", csv, drs, NULL}, 0, "");
    /* A row store truncated while a chain reads it (cyclic access), C
     * plugin and .drift model: exit 1 naming the file, draws so far kept
     * in a valid file, no SIGBUS. */
    const char *mtext = "rows  { x : vector[D]  y : int }\n"
                        "param { w : vector[D] }\n"
                        "prior { w ~ normal(0, 1) }\n"
                        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    write_file(model, mtext, strlen(mtext));
    const char *models[2][3] = {{"--model", "logistic", NULL},
                                {model, NULL, NULL}};
    for (int m = 0; m < 2; m++) {
        char copy[4300];
        snprintf(copy, sizeof copy, "%s/copy%d.drs", dir, m);
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", drs, copy);
        assert_int_equal(system(cmd), 0);
        const char *args[32];
        int n = 0;
        args[n++] = "sample";
        for (int k = 0; models[m][k]; k++)
            args[n++] = models[m][k];
        const char *rest[] = {"--data", copy, "--sampler", "sgld", "--set",
                              "h=0.00001", "--batch", "100", "--access", "ca",
                              "--passes", "1000", "--thin", "100", "--seed",
                              "1", "--out", o, NULL};
        for (int k = 0; rest[k]; k++)
            args[n++] = rest[k];
        args[n] = NULL;
        th_cli r = truncate_under(args, dir, 65536, copy, 1 << 20);
        if (r.status != 1 || !strstr(r.err, "copy") ||
            !strstr(r.err, ".drs: changed size during the run"))
            fail_msg("status %d: %s", r.status, r.err);
        th_cli_free(&r);
        assert_true(valid_rows(o) > 0);
        unlink(o);
        unlink(copy);
    }
    /* A CSV truncated while it is converted. */
    th_cli r = truncate_under((const char *[]){"data", "convert", csv, cv,
                                               NULL},
                              dir, 0, csv, 5000033);
    if (r.status != 1 || !strstr(r.err, "big.csv: changed size during the "
                                        "run"))
        fail_msg("status %d: %s", r.status, r.err);
    th_cli_free(&r);
    assert_int_not_equal(access(cv, F_OK), 0);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    rm_dir(dir);
    free(dir);
    free(csv);
    free(drs);
    free(o);
    free(cv);
    free(model);
}

/* ---- plugin directories (plugin-dir-fifo-hang, plugin-scan-bad-table) */

/* After test_plugin_directory, pass or fail: a failed assertion leaves
 * the test before its unsetenv, and a plugin directory holding a FIFO
 * must not follow the later cases. */
static int forget_plugin_path(void **state)
{
    (void)state;
    unsetenv("DRIFT_PLUGIN_PATH");
    return 0;
}

static void test_plugin_directory(void **state)
{
    (void)state;
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(tp);
    char *dir = tmp_dir(), *fifo = in_dir(dir, "x.so"),
         *bad = in_dir(dir, "overcount.so"), *o = in_dir(dir, "o.csv");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char target[4200];
    snprintf(target, sizeof target, "%s/overcount.so", tp);
    assert_int_equal(symlink(target, bad), 0);
    setenv("DRIFT_PLUGIN_PATH", dir, 1);
    th_cli r = run_timed((const char *[]){"samplers", NULL}, 30);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "x.so: skipped: a FIFO, not a regular "
                                  "file"));
    assert_non_null(strstr(r.err, "overcount.so: refused: sampler "
                                  "'overcount': entry 2 of its n_hparams = "
                                  "50"));
    assert_non_null(strstr(r.out, "sgld"));
    th_cli_free(&r);
    r = run_timed((const char *[]){"sample", "--model", "logistic", "--data",
                                   pima(), "--sampler", "sgld", "--set",
                                   "h=0.0005", "--iter", "100", "--seed", "1",
                                   "--out", o, NULL},
                  60);
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    assert_true(valid_rows(o) == 100);
    unsetenv("DRIFT_PLUGIN_PATH");
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                pima(), "--sampler", fifo, "--iter", "10",
                                "--out", o, NULL},
               2, "not a regular file");
    rm_dir(dir);
    free(dir);
    free(fifo);
    free(bad);
    free(o);
}

/* ---- what convert writes, and what data may hold ---- */

static void test_unreadable_inputs(void **state)
{
    (void)state;
    char *dir = tmp_dir(), *nul = in_dir(dir, "nul.csv"),
         *nofeat = in_dir(dir, "nofeat.libsvm"), *o = in_dir(dir, "o.drs"),
         *big = in_dir(dir, "bigidx.libsvm"), *out = in_dir(dir, "o.csv");
    write_file(nul, "\0y,g,x\n1,2,0.5\n0,1,0.25\n", 24);
    write_file(nofeat, "0\n1\n", 4);
    expect_cli((const char *[]){"data", "convert", nul, o, NULL}, 2,
               "nul.csv:1:1: error: a NUL byte in the name of column 1");
    expect_cli((const char *[]){"data", "convert", nofeat, o, NULL}, 2,
               "no row has a feature");
    assert_int_not_equal(access(o, F_OK), 0);
    /* /dev/zero as data: a bound on the line, not unbounded growth. */
    expect_cli((const char *[]){"sample", "--model", "logistic", "--data",
                                "/dev/zero", "--sampler", "sgld", "--iter",
                                "10", "--out", out, NULL},
               2, "/dev/zero:1: error: a line longer than 64 MiB");
    /* An index that would need more memory than the process may have:
     * the size, at once (ulimit -v keeps this true on any machine). */
#if !DRIFT_TEST_SHADOW /* an 8 GiB address space is no room for a
                         sanitizer's shadow memory: the limit is tested
                         without one */
    write_file(big, "1 4294967295:1\n0 1:1\n", 21);
    struct rlimit old, lim;
    getrlimit(RLIMIT_AS, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)8 << 30;
    assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
    th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                           "--data", big, "--sampler", "sgld",
                                           "--iter", "10", "--out", out,
                                           NULL});
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    assert_int_equal(r.status, 2);
    if (!strstr(r.err, "sparse rows 'x' of dimension 4294967295") ||
        !strstr(r.err, "32 GiB each"))
        fail_msg("stderr: %s", r.err);
    th_cli_free(&r);
#endif
    rm_dir(dir);
    free(dir);
    free(nul);
    free(nofeat);
    free(o);
    free(big);
    free(out);
}

/* ---- wide data (csv-wide-header-quadratic) ---- */

static void test_wide_header(void **state)
{
    (void)state;
    /* 3 x 10^5 columns: linear parsing takes seconds; the all-pairs
     * duplicate check took about 5 minutes (37 s at 10^5). */
    enum { COLS = 300000 };
    char *dir = tmp_dir(), *csv = in_dir(dir, "w.csv"),
         *drs = in_dir(dir, "w.drs"), *o = in_dir(dir, "o.csv");
    FILE *f = fopen(csv, "w");
    fputs("y", f);
    for (int k = 1; k < COLS; k++)
        fprintf(f, ",x.%d", k);
    fputc('\n', f);
    for (int r = 0; r < 3; r++) {
        fprintf(f, "%d", r % 2);
        for (int k = 1; k < COLS; k++)
            fputs(",0", f);
        fputc('\n', f);
    }
    fclose(f);
    th_cli r = run_timed((const char *[]){"data", "convert", csv, drs, NULL},
                         120);
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    const char *files[] = {csv, drs};
    for (int k = 0; k < 2; k++) {
        r = run_timed((const char *[]){"sample", "--model", "logistic",
                                       "--data", files[k], "--sampler", "sgld",
                                       "--set", "h=0.001", "--batch", "2",
                                       "--iter", "2", "--warmup", "0",
                                       "--out", o, "--quiet", NULL},
                      120);
        if (r.status)
            fail_msg("%s: status %d: %s", files[k], r.status, r.err);
        th_cli_free(&r);
    }
    rm_dir(dir);
    free(dir);
    free(csv);
    free(drs);
    free(o);
}

/* ---- signals of every kind at random moments ---- */

/* After a run ended by a signal: no temporary file in dir, and each file
 * under a requested name is whole (a valid draws file, or a store drift
 * opens). */
static void check_whole(const char *dir, const char *const *names, int store)
{
    assert_int_equal(count_files(dir, ".tmp."), 0);
    for (const char *const *n = names; *n; n++) {
        if (access(*n, F_OK) != 0)
            continue;
        if (store) {
            th_cli r = th_cli_run((const char *[]){"data", "info", *n, NULL});
            if (r.status)
                fail_msg("%s: partial store: %s", *n, r.err);
            th_cli_free(&r);
        } else {
            valid_rows(*n);
        }
    }
}

static void test_random_signals(void **state)
{
    (void)state;
    char *dir = tmp_dir(), *csv = in_dir(dir, "big.csv"),
         *one = in_dir(dir, "one.csv"), *two = in_dir(dir, "two.csv"),
         *two1 = in_dir(dir, "two_1.csv"), *two2 = in_dir(dir, "two_2.csv"),
         *drs = in_dir(dir, "big.drs");
    write_logistic_csv(csv, 400000, 10);
    const int sigs[] = {SIGKILL, SIGINT, SIGTERM, SIGHUP};
    drift_rng r;
    drift_rng_seed(&r, 151515, 0);
    for (int trial = 0; trial < 30; trial++) {
        int kind = trial % 3; /* sample 1 chain, 2 chains, convert */
        int sig = sigs[drift_rng_below(&r, 4)];
        /* Half the trials on the named-temporary path. */
        int named = drift_rng_below(&r, 2);
        long delay_us = 20000 + (long)drift_rng_below(&r, 600000);
        if (named)
            setenv("DRIFT_WRITER_NAMED_TEMP", "1", 1);
        const char *args[32];
        int n = 0;
        if (kind < 2) {
            const char *a[] = {"sample", "--model", "logistic", "--data",
                               pima(), "--sampler", "sgld", "--set",
                               "h=0.0005", "--iter", "100000000", "--seed",
                               "1", "--quiet", "--chains",
                               kind ? "2" : "1", "--out", kind ? two : one,
                               NULL};
            for (; a[n]; n++)
                args[n] = a[n];
        } else {
            const char *a[] = {"data", "convert", csv, drs, NULL};
            for (; a[n]; n++)
                args[n] = a[n];
        }
        args[n] = NULL;
        char errp[] = "/tmp/drift-hostile-err-XXXXXX";
        int fe = mkstemp(errp);
        pid_t pid = th_cli_spawn(args, -1, fe);
        close(fe);
        usleep((useconds_t)delay_us);
        kill(pid, sig);
        int st;
        waitpid(pid, &st, 0);
        char *err = th_slurp(errp);
        unlink(errp);
        unsetenv("DRIFT_WRITER_NAMED_TEMP");
        int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        /* Killed, stopped cleanly, or (convert) done before the signal. */
        if (status != 128 + sig && status != 0)
            fail_msg("trial %d (kind %d, signal %d, named %d): status %d: %s",
                     trial, kind, sig, named, status, err);
        /* A signal before the chains started (while data and plugins
         * load) ends the process by its default action, before any file
         * is open; a stop of running chains says what it kept. */
        if (sig != SIGKILL && WIFEXITED(st) && status == 128 + sig &&
            kind < 2 && !strstr(err, "complete and valid"))
            fail_msg("trial %d: no account of the stop: %s", trial, err);
        free(err);
        if (sig == SIGKILL && named) {
            /* The named temporaries a SIGKILL leaves are removed by the
             * next writer of the name once no live writer holds them
             * (and they are two seconds old). */
            sleep(3);
            const char *again[] = {"sample", "--model", "logistic", "--data",
                                   pima(), "--sampler", "sgld", "--iter",
                                   "10", "--quiet", 
                                   "--chains", kind ? "2" : "1", "--out",
                                   kind ? two : one, NULL};
            const char *conv[] = {"data", "convert", pima(), drs, NULL};
            th_cli rr = th_cli_run(kind < 2 ? again : conv);
            assert_int_equal(rr.status, 0);
            th_cli_free(&rr);
        }
        const char *names[] = {one, two1, two2, NULL};
        const char *stores[] = {drs, NULL};
        check_whole(dir, kind < 2 ? names : stores, kind == 2);
    }
    rm_dir(dir);
    free(dir);
    free(csv);
    free(one);
    free(two);
    free(two1);
    free(two2);
    free(drs);
}

/* Stop signals drift was started with ignored stay ignored, as its caller
 * asked: nohup's SIGHUP (the run outlives its terminal) and the SIGINT a
 * shell without job control gives its background jobs (Ctrl-C on the
 * script leaves them running).  Early, before the handlers would be in
 * place, and late, while the chains run: neither stops the run; SIGTERM
 * then stops it cleanly, keeping its draws. */
static void test_ignored_signals_kept(void **state)
{
    (void)state;
    const char *bin = getenv("DRIFT_BIN");
    assert_non_null(bin);
    for (int early = 0; early < 2; early++) {
        /* stderr's file outside dir: wait_writing counts the files
         * open in dir. */
        char *dir = tmp_dir(), *o = in_dir(dir, "o.csv");
        char errp[] = "/tmp/drift-hostile-err-XXXXXX";
        int fe = mkostemp(errp, O_CLOEXEC);
        const char *argv[] = {"/bin/sh", "-c",
                              "trap '' INT HUP; exec \"$0\" \"$@\"", bin,
                              "sample", "--model", "logistic", "--data",
                              pima(), "--sampler", "sgld", "--set",
                              "h=0.0005", "--iter", "100000000", "--chains",
                              "2", "--quiet", "--out", o, NULL};
        assert_true(fe >= 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, fe, 2);
        pid_t pid;
        assert_int_equal(posix_spawn(&pid, "/bin/sh", &fa, NULL,
                                     (char *const *)argv, environ),
                         0);
        posix_spawn_file_actions_destroy(&fa);
        close(fe);
        if (early)
            usleep(30000); /* while sh execs drift and it loads */
        else
            assert_true(wait_writing(pid, dir, 2, 0));
        kill(pid, SIGINT);
        kill(pid, SIGHUP);
        usleep(early ? 1500000 : 800000);
        int st;
        if (waitpid(pid, &st, WNOHANG) != 0) {
            char *err = th_slurp(errp);
            fail_msg("early %d: SIGINT or SIGHUP, ignored when drift "
                     "started, stopped it: %s",
                     early, err);
        }
        if (early)
            assert_true(wait_writing(pid, dir, 2, 0));
        kill(pid, SIGTERM);
        waitpid(pid, &st, 0);
        char *err = th_slurp(errp);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 128 + SIGTERM ||
            !strstr(err, "interrupted by SIGTERM") ||
            !strstr(err, "complete and valid"))
            fail_msg("early %d: SIGTERM after the ignored signals: exited "
                     "%d status %d: %s",
                     early, WIFEXITED(st), WEXITSTATUS(st), err);
        free(err);
        char *o1 = in_dir(dir, "o_1.csv");
        valid_rows(o1);
        free(o1);
        unlink(errp);
        rm_dir(dir);
        free(dir);
        free(o);
    }
}

/* A second signal while the chains stop: the process ends at once, and
 * leaves nothing (named temporaries removed by the handler). */
static void test_second_signal(void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        char *dir = tmp_dir(), *o = in_dir(dir, "o.csv");
        if (named)
            setenv("DRIFT_WRITER_NAMED_TEMP", "1", 1);
        pid_t pid = th_cli_spawn(
            (const char *[]){"sample", "--model", "logistic", "--data",
                             pima(), "--sampler", "sgld", "--iter",
                             "100000000", "--chains", "2", 
                             "--quiet", "--out", o, NULL},
            -1, open("/dev/null", O_WRONLY));
        unsetenv("DRIFT_WRITER_NAMED_TEMP");
        assert_true(wait_writing(pid, dir, 2, 0));
        kill(pid, SIGINT);
        kill(pid, SIGTERM);
        int st;
        waitpid(pid, &st, 0);
        /* The two may reach two threads at once, either first: a clean
         * stop (130 or 143) or death by the other signal; all leave only
         * whole files. */
        if (!((WIFEXITED(st) &&
               (WEXITSTATUS(st) == 130 || WEXITSTATUS(st) == 143)) ||
              (WIFSIGNALED(st) &&
               (WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGINT))))
            fail_msg("named %d: exited %d status %d, signalled %d signal %d",
                     named, WIFEXITED(st), WEXITSTATUS(st), WIFSIGNALED(st),
                     WTERMSIG(st));
        assert_int_equal(count_files(dir, ".tmp."), 0);
        char *o1 = in_dir(dir, "o_1.csv"), *o2 = in_dir(dir, "o_2.csv");
        if (access(o1, F_OK) == 0)
            valid_rows(o1);
        if (access(o2, F_OK) == 0)
            valid_rows(o2);
        free(o1);
        free(o2);
        rm_dir(dir);
        free(dir);
        free(o);
    }
}

/* tests/plugins' crashy.so, into buf. */
static void crashy_path(char *buf, size_t cap)
{
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (!tp)
        fail_msg("DRIFT_TEST_PLUGIN_DIR is not set: run with make check");
    snprintf(buf, cap, "%s/crashy.so", tp);
}

/* A sampler that crashes, aborts, calls exit or hangs (crashy.so, chain 2
 * at iteration 300 of 100 warmup + 1000) ends the run with status 1 and a
 * message naming plugin, chain and iteration; every chain's draws so far
 * are kept as a valid file marked incomplete, chain 2's exactly the 200
 * (or, with --save-warmup, 100 + 200) it wrote, the rows still in its
 * stream's buffer included; no temporary file. */
static void test_crashing_sampler(void **state)
{
    (void)state;
    char crashy[4200];
    crashy_path(crashy, sizeof crashy);
    static const struct {
        const char *how, *verb, *detail;
        int named, save_warmup;
    } cases[] = {
        {"segv", "crashed", "SIGSEGV", 0, 0},
        {"segv", "crashed", "SIGSEGV", 1, 1},
        {"abort", "crashed", "SIGABRT", 0, 1},
        {"exit", "called exit", "exit status 0", 0, 0},
        {"hang", "stopped answering", "(--step-timeout)", 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *dir = tmp_dir(), *o = in_dir(dir, "o.csv"),
             *o1 = in_dir(dir, "o_1.csv"), *o2 = in_dir(dir, "o_2.csv");
        char how[32];
        snprintf(how, sizeof how, "how=%s", cases[i].how);
        if (cases[i].named)
            setenv("DRIFT_WRITER_NAMED_TEMP", "1", 1);
        th_cli r = th_cli_run((const char *[]){
            "sample", src_path("examples/gaussian/gaussian.drift"), "--data",
            src_path("examples/gaussian/gaussian.csv"), "--sampler", crashy,
            "--set", how, "--set", "at=300", "--set", "chain=2", "--chains",
            "2", "--warmup", "100", "--iter", "1000", "--seed", "5",
            /* the hang is found by the timeout; a crash by the signal,
             * however long a sanitizer's report takes to print */
            "--step-timeout", strcmp(cases[i].how, "hang") ? "60" : "0.5",
            "--quiet", "--out", o,
            cases[i].save_warmup ? "--save-warmup" : NULL, NULL});
        unsetenv("DRIFT_WRITER_NAMED_TEMP");
        char want[200];
        snprintf(want, sizeof want,
                 "drift sample: chain 2: sampler 'crashy' %s at iteration "
                 "300, in its step: ",
                 cases[i].verb);
        if (r.status != 1 || !strstr(r.err, want) ||
            !strstr(r.err, cases[i].detail) ||
            !strstr(r.err, "marked incomplete"))
            fail_msg("%s: exit %d, stderr: %s", cases[i].how, r.status,
                     r.err);
        th_cli_free(&r);
        assert_int_equal(count_files(dir, ".tmp."), 0);
        drift_stancsv *f;
        drift_err e = {{0}};
        if (drift_stancsv_read(o2, &f, &e))
            fail_msg("%s: %s", cases[i].how, e.msg);
        size_t warm = cases[i].save_warmup ? 100 : 0;
        assert_int_equal(f->n_rows, warm + 200);
        assert_int_equal(f->n_warmup, warm);
        assert_string_equal(drift_stancsv_meta(f, "num_samples"), "200");
        assert_string_equal(drift_stancsv_meta(f, "num_warmup"), "100");
        drift_stancsv_free(f);
        valid_rows(o2);
        char *t2 = th_slurp(o2);
        assert_non_null(strstr(t2, "# drift: incomplete: the run ended "
                                   "early (chain 2: sampler 'crashy'"));
        assert_non_null(strstr(t2, "#  Elapsed Time: "));
        free(t2);
        /* Chain 1 runs beside it; on a loaded machine it may not have
         * written its header yet (then it leaves no file). */
        if (access(o1, F_OK) == 0) {
            valid_rows(o1);
            char *t1 = th_slurp(o1);
            assert_non_null(strstr(t1, "# drift: incomplete: "));
            free(t1);
        }
        rm_dir(dir);
        free(dir);
        free(o);
        free(o1);
        free(o2);
    }
}

/* SIGTERM to a run whose sampler never returns from a step (crashy.so's
 * hang, chain 2 at iteration 300, no --step-timeout): the engine stops a
 * chain only between steps and inside its oracles, so the guard ends the
 * run itself soon after the signal.  Before, the run never ended.  The
 * command ends with 128 + SIGTERM and a message naming chain, iteration
 * and the signal; chain 2's 200 draws are kept, marked incomplete, and
 * chain 1's file is whole.  (A hang is what the 30 s limit detects; no
 * time is asserted.) */
static void test_stop_stuck_sampler(void **state)
{
    (void)state;
    char crashy[4200];
    crashy_path(crashy, sizeof crashy);
    char *dir = tmp_dir(), *o = in_dir(dir, "o.csv"),
         *o1 = in_dir(dir, "o_1.csv"), *o2 = in_dir(dir, "o_2.csv"),
         *errp = in_dir(dir, "err.txt");
    int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fe >= 0);
    pid_t pid = th_cli_spawn(
        (const char *[]){"sample", src_path("examples/gaussian/gaussian.drift"),
                         "--data", src_path("examples/gaussian/gaussian.csv"),
                         "--sampler", crashy, "--set", "how=hang", "--set",
                         "at=300", "--set", "chain=2", "--chains", "2",
                         "--warmup", "100", "--iter", "100000000", "--seed",
                         "5", "--quiet", "--out", o, NULL},
        open("/dev/null", O_WRONLY), fe);
    close(fe);
    assert_true(wait_writing(pid, dir, 2, 0));
    usleep(300000); /* chain 2 reaches its iteration 300 meanwhile */
    kill(pid, SIGTERM);
    int st = 0, t = 0;
    for (; waitpid(pid, &st, WNOHANG) == 0 && t < 3000; t++)
        usleep(10000);
    if (t >= 3000) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        fail_msg("the run did not end within 30 s of SIGTERM");
    }
    char *err = th_slurp(errp);
    assert_non_null(err);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 128 + SIGTERM ||
        !strstr(err, "chain 2: sampler 'crashy' did not stop at iteration "
                     "300, in its step: no return within") ||
        !strstr(err, "of SIGTERM") || !strstr(err, "marked incomplete"))
        fail_msg("exited %d status %d; stderr: %s", WIFEXITED(st),
                 WEXITSTATUS(st), err);
    free(err);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(o2, &f, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(f->n_rows, 200);
    drift_stancsv_free(f);
    valid_rows(o2);
    valid_rows(o1);
    rm_dir(dir);
    free(dir);
    free(o);
    free(o1);
    free(o2);
    free(errp);
}

/* data convert stops on SIGINT like sample: a message, nothing under
 * OUT, no temporary file, 128 + the signal. */
static void test_convert_signal(void **state)
{
    (void)state;
    char *dir = tmp_dir(), *csv = in_dir(dir, "big.csv"),
         *drs = in_dir(dir, "big.drs");
    write_logistic_csv(csv, 300000, 10);
    char errp[] = "/tmp/drift-hostile-err-XXXXXX";
    int fe = mkstemp(errp);
    pid_t pid = th_cli_spawn((const char *[]){"data", "convert", csv, drs,
                                              NULL},
                             -1, fe);
    close(fe);
    assert_true(wait_writing(pid, dir, 1, 0));
    kill(pid, SIGSTOP); /* so that the signal lands mid-conversion */
    kill(pid, SIGINT);
    kill(pid, SIGCONT);
    int st;
    waitpid(pid, &st, 0);
    char *err = th_slurp(errp);
    unlink(errp);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 130);
    if (!strstr(err, "drift: interrupted by SIGINT after ") ||
        !strstr(err, "big.drs not written"))
        fail_msg("stderr: %s", err);
    free(err);
    assert_int_not_equal(access(drs, F_OK), 0);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    rm_dir(dir);
    free(dir);
    free(csv);
    free(drs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crafted_stores),
        cmocka_unit_test(test_output_targets),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_truncated_inputs),
        cmocka_unit_test_teardown(test_plugin_directory, forget_plugin_path),
        cmocka_unit_test(test_unreadable_inputs),
        cmocka_unit_test(test_wide_header),
        cmocka_unit_test(test_convert_signal),
        cmocka_unit_test(test_second_signal),
        cmocka_unit_test(test_ignored_signals_kept),
        cmocka_unit_test(test_crashing_sampler),
        cmocka_unit_test(test_stop_stuck_sampler),
        cmocka_unit_test(test_random_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
