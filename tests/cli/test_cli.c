/* test_cli.c: the drift command as users meet it: exit statuses, messages
 * for bad options, values and data files, the output file's format,
 * byte-identical reruns, and no file left behind by a run that fails
 * before it starts. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/stats/stancsv.h"
#include "harness.h"

#include "fixtures/summary/reference.h"

static void expect(const char *const *args, int status, const char *needle)
{
    th_cli r = th_cli_run(args);
    if (r.status != status || (needle && !strstr(r.err, needle)))
        fail_msg("exit %d (want %d), stderr:\n%s\n(wanted '%s')", r.status,
                 status, r.err, needle ? needle : "");
    th_cli_free(&r);
}

/* Drops from a draws file's text the lines that differ between runs of
 * the same chain: the elapsed times, the file names (the output's, and
 * the data's, which is the same anyway) and the run's chain count. */
static void strip_run_lines(char *t)
{
    static const char *const drop[] = {"#  Elapsed Time:", "#                ",
                                       "#   file = ", "#     num_chains = "};
    char *in = t, *out = t;
    while (*in) {
        char *end = strchr(in, '\n');
        size_t len = end ? (size_t)(end - in) + 1 : strlen(in);
        int keep = 1;
        for (size_t k = 0; k < sizeof drop / sizeof drop[0]; k++)
            keep &= strncmp(in, drop[k], strlen(drop[k])) != 0;
        if (keep) {
            memmove(out, in, len);
            out += len;
        }
        in += len;
    }
    *out = '\0';
}

static const char *pima(void)
{
    static char path[4096];
    const char *src = getenv("srcdir");
    snprintf(path, sizeof path, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    return path;
}

static void test_usage(void **state)
{
    (void)state;
    expect((const char *[]){NULL}, 2, "usage: drift COMMAND");
    expect((const char *[]){"smaple", NULL}, 2, "did you mean 'sample'?");
    th_cli r = th_cli_run((const char *[]){"--help", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "sample"));
    th_cli_free(&r);
    const char *cmds[] = {"sample", "samplers", "models"};
    for (int k = 0; k < 3; k++) {
        r = th_cli_run((const char *[]){cmds[k], "--help", NULL});
        assert_int_equal(r.status, 0);
        assert_non_null(strstr(r.out, "usage: drift"));
        th_cli_free(&r);
    }
}

static void test_bad_options(void **state)
{
    (void)state;
    const char *d = pima();
    expect((const char *[]){"sample", "--bath", "5", NULL}, 2,
           "unknown option '--bath' (did you mean '--batch'?)");
    /* CmdStan's names: drift's own, which spelling cannot find. */
    expect((const char *[]){"sample", "--num-samples", "500", NULL}, 2,
           "unknown option '--num-samples' (CmdStan's name; drift's is "
           "--iter N");
    expect((const char *[]){"sample", "--num_warmup=500", NULL}, 2,
           "unknown option '--num_warmup' (CmdStan's name; drift's is "
           "--warmup N)");
    expect((const char *[]){"sample", "--num-warmup", "500", NULL}, 2,
           "drift's is --warmup N)");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "abc", NULL},
           2, "--batch abc: expected an integer");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "0", NULL},
           2, "--batch 0");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "h=-1", NULL},
           2, "'h' of sampler sgld accepts (0, inf)");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "step=1", NULL},
           2, "sampler sgld has no hyperparameter 'step'");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgdl", NULL},
           2, "did you mean 'sgld'?");
    expect((const char *[]){"sample", "--model", "logistc", "--data", d,
                            "--sampler", "sgld", NULL},
           2, "did you mean 'logistic'?");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--access", "zz", NULL},
           2, "--access zz: expected ra, rr or ca");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--batch", "100000", NULL},
           2, "larger than the 200 rows");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--model-set", "s=0", NULL},
           2, "--model-set s=0: value out of range");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--set", "batch=10", NULL},
           2, "use --batch 10");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--seed", "-3", NULL},
           2, "--seed -3");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--thin", "1.5", NULL},
           2, "--thin");
    expect((const char *[]){"sample", "--sampler", "sgld", "--data", d, NULL},
           2, "no model given");
    /* No sampler named: nuts, as CmdStan (its run is checked in
     * test_defaults). */
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", NULL},
           2, "--sampler needs a value");
}

static void test_bad_data(void **state)
{
    (void)state;
    struct {
        const char *text, *where, *what;
    } cases[] = {
        {"y,x.1\n0,1\n1\n", ":3:2: error: ", "row has 1 fields"},
        {"y,x.1\n0,1\n1,zz\n", ":3:3: error: ", "is not a number"},
        {"y,x.1\n0,NaN\n", ":2:3: error: ", "not finite"},
        {"", ":1:1: error: ", "the file is empty"},
        {"y,z.1\n0,1\n", "", "x.1 ... x.D"},
        {"y,x.1\n0,1\n3,1\n", ":3: error: ", "must be 0 or 1"},
    };
    char out[] = "/tmp/drift-cli-never-XXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *path = th_write_text(cases[k].text, ".csv");
        char want[4200];
        snprintf(want, sizeof want, "%s%s", path, cases[k].where);
        th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                        "--data", path, "--sampler", "sgld",
                                        "--out", out, NULL});
        if (r.status != 2 || !strstr(r.err, want) ||
            !strstr(r.err, cases[k].what))
            fail_msg("case %zu: exit %d, stderr: %s", k, r.status, r.err);
        /* Nothing written under the requested name. */
        assert_int_not_equal(access(out, F_OK), 0);
        th_cli_free(&r);
        unlink(path);
        free(path);
    }
    expect((const char *[]){"sample", "--model", "logistic", "--data",
                            "/nonexistent.csv", "--sampler", "sgld", NULL},
           2, "/nonexistent.csv: cannot open data file");
}

static void test_output(void **state)
{
    (void)state;
    char out1[] = "/tmp/drift-cli-a-XXXXXX", out2[] = "/tmp/drift-cli-b-XXXXXX";
    close(mkstemp(out1));
    close(mkstemp(out2));
    const char *d = pima();
    for (int k = 0; k < 2; k++) {
        th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                        "--data", d, "--sampler", "sgld",
                                        "--set", "h=0.001", "--batch", "20",
                                        "--iter", "300", "--seed", "42",
                                        "--chains", "1", "--warmup", "0",
                                        "--out", k ? out2 : out1, "--quiet",
                                        NULL});
        assert_int_equal(r.status, 0);
        th_cli_free(&r);
    }
    char *a = th_slurp(out1), *b = th_slurp(out2);
    assert_non_null(a);
    assert_non_null(strstr(b, "\n#  Elapsed Time: "));
    strip_run_lines(a);
    strip_run_lines(b);
    assert_string_equal(a, b); /* same seed, same build: same bytes */
    assert_non_null(strstr(a, "# drift_version = "));
    assert_non_null(strstr(a, "# model = logistic\n"));
    assert_non_null(strstr(a, "# sampler = sgld\n"));
    assert_non_null(strstr(a, "#       h = 0.001\n"));
    assert_non_null(strstr(a, "# random\n#   seed = 42\n"));
    assert_non_null(strstr(a, "# batch = 20\n"));
    /* CmdStan's keys, the counts in their reserved fields. */
    assert_non_null(strstr(a, "# method = sample (Default)\n#   sample\n"
                              "#     num_samples = 300 "));
    assert_non_null(strstr(a, "#     num_warmup = 1 "));
    assert_non_null(strstr(a, "#     save_warmup = 0\n#     thin = 1\n"));
    assert_non_null(strstr(a, "# id = 1\n"));
    assert_non_null(strstr(a, "\nlp__,grads__,treedepth__,divergent__,w.1,w.2,"
                              "w.3,w.4,w.5,w.6,w.7,w.8\n# Adaptation "
                              "terminated\n# Step size = 0.001\n# No free "
                              "parameters for unit metric\n"));
    /* 300 draws of 12 fields each; grads__ counts 20 per iteration. */
    size_t rows = 0;
    char *line = strstr(a, "\nlp__");
    line = strchr(line + 1, '\n') + 1;
    while (*line == '#')
        line = strchr(line, '\n') + 1;
    long last_grads = 0;
    while (*line && *line != '#') {
        size_t commas = 0;
        char *end = strchr(line, '\n');
        for (char *p = line; p < end; p++)
            commas += *p == ',';
        assert_int_equal(commas, 11);
        last_grads = strtol(strchr(line, ',') + 1, NULL, 10);
        rows++;
        line = end + 1;
    }
    assert_int_equal(rows, 300);
    assert_int_equal(last_grads, 6000);
    free(a);
    free(b);
    unlink(out1);
    unlink(out2);
}

static void test_divergence(void **state)
{
    (void)state;
    char out[] = "/tmp/drift-cli-div-XXXXXX";
    close(mkstemp(out));
    th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic", "--data",
                                    pima(), "--sampler", "sgld", "--set",
                                    "h=1e6", "--batch", "10", "--iter",
                                    "100000", "--seed", "1", "--out", out,
                                    "--chains", "1", NULL});
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "chain 1, iteration "));
    assert_non_null(strstr(r.err, "w."));
    assert_non_null(strstr(r.err, "smaller step size"));
    th_cli_free(&r);
    /* What was written is a whole CSV file: every row complete. */
    char *a = th_slurp(out);
    assert_non_null(a);
    assert_non_null(strstr(a, "lp__,grads__,treedepth__,divergent__,w.1"));
    assert_true(a[strlen(a) - 1] == '\n');
    /* It says that the chain failed, after its rows, and counts them. */
    assert_non_null(strstr(a, "\n# drift: chain 1 failed at iteration "));
    free(a);
    unlink(out);
    /* mala with an absurd step: every proposal lands where the density
     * overflows, and mala rejects it rather than dying. */
    r = th_cli_run((const char *[]){"sample", "--model", "logistic", "--data",
                                    pima(), "--sampler", "mala", "--set",
                                    "h=1e200", "--warmup", "0", "--iter",
                                    "50", "--seed", "1", "--out", out,
                                    "--chains", "1", "--quiet", NULL});
    if (r.status != 0)
        fail_msg("mala h=1e200: exit %d, stderr: %s", r.status, r.err);
    th_cli_free(&r);
    a = th_slurp(out);
    char *row = strstr(a, "lp__,grads__,accept_stat__");
    assert_non_null(row);
    size_t rows = 0;
    for (char *p = strchr(row, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        double lp, grads, accept;
        if (sscanf(p + 1, "%lf,%lf,%lf", &lp, &grads, &accept) == 3) {
            assert_true(accept == 0); /* rejected */
            rows++;
        }
    }
    assert_int_equal(rows, 50);
    free(a);
    unlink(out);
}

/* A sampler's run-level setup that would overrun --passes is stopped
 * inside it: a usage error (exit 2) saying so, no draws file left. */
static void test_setup_budget(void **state)
{
    (void)state;
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(tp);
    char spec[4200], out[] = "/tmp/drift-cli-setup-XXXXXX";
    snprintf(spec, sizeof spec, "%s/runprobe.so:setup", tp);
    close(mkstemp(out));
    unlink(out);
    th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                           "--data", pima(), "--sampler",
                                           spec, "--set", "passes=5",
                                           "--passes", "2", "--chains", "2",
                                           "--seed", "1", "--out", out,
                                           NULL});
    if (r.status != 2 ||
        !strstr(r.err, "run-level setup spent the whole budget of --passes "
                       "2 before any draw"))
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    th_cli_free(&r);
    for (int k = 1; k <= 2; k++) {
        char path[64];
        snprintf(path, sizeof path, "%s_%d", out, k);
        assert_int_not_equal(access(path, F_OK), 0);
    }
}

static void test_listing(void **state)
{
    (void)state;
    th_cli r = th_cli_run((const char *[]){"samplers", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "sgld"));
    assert_non_null(strstr(r.out, "default 0.0001"));
    /* each plugin's licence: drift's own state it, the test plugins
     * (built without DRIFT_PLUGIN_LICENSE) do not */
    const char *sg = strstr(r.out, "\nsgld ");
    assert_non_null(sg);
    assert_true(!strncmp(strstr(sg, "  licence: "), "  licence: MIT\n", 15));
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"models", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "logistic"));
    th_cli_free(&r);
}


/* ---- Chains, summary, progress, signals, divergence --------- */

static char *tmp_dir(void)
{
    char tmpl[] = "/tmp/drift-cli-dir-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    return strdup(tmpl);
}

/* Removes dir and the files in it. */
static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' && (!de->d_name[1] ||
                                         !strcmp(de->d_name, "..")))
                continue;
            char p[4200];
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Files in dir whose name contains needle. */
static int count_files(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    int n = 0;
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)))
        n += strstr(de->d_name, needle) != NULL;
    closedir(d);
    return n;
}

/* How many files of dir (named or not yet: O_TMPFILE) process pid has
 * open with at least min_bytes written, from /proc/PID/fd. */
static int count_open_in(pid_t pid, const char *dir, off_t min_bytes)
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
             stat(link, &st) == 0 && st.st_size >= min_bytes;
    }
    closedir(d);
    return n;
}

static void path_in(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* A whole Stan CSV file: read back by drift's reader, rows complete. */
static size_t valid_rows(const char *path)
{
    drift_stancsv *f;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &f, &e))
        fail_msg("%s", e.msg);
    size_t n = f->n_rows;
    assert_string_equal(f->names[0], "lp__");
    drift_stancsv_free(f);
    char *text = th_slurp(path);
    assert_true(text[strlen(text) - 1] == '\n');
    free(text);
    return n;
}

static uint64_t meta_u64(const drift_stancsv *f, const char *key)
{
    const char *v = drift_stancsv_meta(f, key);
    uint64_t x;
    if (!v || drift_parse_u64(v, &x))
        fail_msg("%s: %s = '%s' is not a count", f->path, key, v ? v : "");
    return x;
}

/* --save-warmup with --thin, as CmdStan allows: a warmup that is not a
 * whole number of --thin steps keeps ceil(warmup / thin) rows, and the
 * header's num_warmup is brought to a multiple of thin so that ArviZ
 * (which rounds num_warmup / thin down) and CmdStan's readers (up) take
 * the same rows as warmup. */
static void test_save_warmup_thin(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200];
    path_in(out, sizeof out, dir, "t.csv");
    th_cli r = th_cli_run((const char *[]){
        "sample", "--model", "logistic", "--data", pima(), "--sampler",
        "mala", "--warmup", "100", "--iter", "30", "--thin", "3",
        "--save-warmup", "--chains", "1", "--seed", "2", "--quiet", "--out",
        out, NULL});
    if (r.status != 0)
        fail_msg("--save-warmup --thin 3 --warmup 100 refused: %s", r.err);
    th_cli_free(&r);
    drift_stancsv *f;
    drift_err e = {{0}};
    assert_int_equal(drift_stancsv_read(out, &f, &e), 0);
    assert_int_equal(meta_u64(f, "num_warmup"), 102);
    assert_int_equal(meta_u64(f, "thin"), 3);
    assert_int_equal(f->n_warmup, 34);
    assert_int_equal(f->n_rows - f->n_warmup, 10);
    drift_stancsv_free(f);
    rm_dir(dir);
    free(dir);
}

static void test_signal(void **state)
{
    (void)state;
    const int sigs[] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        char *dir = tmp_dir();
        char out[4200], errp[4200], o1[4200], o2[4200];
        path_in(out, sizeof out, dir, "o.csv");
        /* Standard error beside the directory, not in it: its progress
         * lines would count as one of the files written there. */
        snprintf(errp, sizeof errp, "%s.stderr", dir);
        path_in(o1, sizeof o1, dir, "o_1.csv");
        path_in(o2, sizeof o2, dir, "o_2.csv");
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fe >= 0);
        pid_t pid = th_cli_spawn(
            (const char *[]){"sample", "--model", "logistic", "--data",
                             pima(), "--sampler", "sgld", "--set", "h=0.0005",
                             "--batch", "20", "--iter", "1000000000",
                             "--chains", "2", "--warmup", "0", "--seed", "3",
                             "--out", out, NULL},
            -1, fe);
        close(fe);
        /* Wait until both chains have opened their files and written
         * rows (so the handler is installed and sampling has begun). */
        for (int t = 0; t < 1000 && count_open_in(pid, dir, 1) < 2; t++)
            usleep(10000);
        assert_int_equal(count_open_in(pid, dir, 1), 2);
        /* Then until each holds rows (a full stdio buffer went out). */
        for (int t = 0; t < 3000 && count_open_in(pid, dir, 65536) < 2; t++)
            usleep(10000);
        kill(pid, sigs[k]);
        int st;
        waitpid(pid, &st, 0);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 128 + sigs[k]);
        char *all = th_slurp(errp), *err = all;
        /* After the progress lines (stderr is a file here), one line:
         * what completed and where. */
        while (!strncmp(err, "Chain ", 6) && strchr(err, '\n'))
            err = strchr(err, '\n') + 1;
        const char *want = k ? "drift: interrupted by SIGTERM: 2 chains "
                               "stopped after "
                             : "drift: interrupted by SIGINT: 2 chains "
                               "stopped after ";
        if (strncmp(err, want, strlen(want)) || !strstr(err, "o_1.csv") ||
            strchr(err, '\n') != err + strlen(err) - 1)
            fail_msg("stderr: %s", all);
        free(all);
        /* Valid, complete files under their names; no temporary left;
         * as many draws in each (the chain behind ran on), as the header
         * says, and a line saying what happened. */
        assert_true(valid_rows(o1) > 0);
        assert_int_equal(valid_rows(o1), valid_rows(o2));
        for (int j = 0; j < 2; j++) {
            drift_stancsv *f;
            drift_err e = {{0}};
            assert_int_equal(drift_stancsv_read(j ? o2 : o1, &f, &e), 0);
            assert_int_equal(meta_u64(f, "num_samples"), f->n_rows);
            drift_stancsv_free(f);
            char *t = th_slurp(j ? o2 : o1);
            assert_non_null(strstr(t, "\n# drift: interrupted by a signal "
                                      "after "));
            free(t);
        }
        assert_int_equal(count_files(dir, ".tmp."), 0);
        unlink(errp);
        rm_dir(dir);
        free(dir);
    }
}

/* A run interrupted in warmup: its chains ran different numbers of warmup
 * iterations, but their files must agree on num_warmup (rstan, CmdStanPy,
 * ArviZ and posterior refuse a set whose counts differ), each chain's own
 * count in a note. */
static void test_signal_in_warmup(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200], o[2][4200];
    path_in(out, sizeof out, dir, "w.csv");
    path_in(o[0], sizeof o[0], dir, "w_1.csv");
    path_in(o[1], sizeof o[1], dir, "w_2.csv");
    pid_t pid = th_cli_spawn(
        (const char *[]){"sample", "--model", "logistic", "--data", pima(),
                         "--sampler", "mala", "--warmup", "1000000000",
                         "--iter", "10", "--chains", "2",
                         "--seed", "3", "--out", out, "--quiet", NULL},
        -1, -1);
    for (int t = 0; t < 1000 && count_open_in(pid, dir, 1) < 2; t++)
        usleep(10000);
    assert_int_equal(count_open_in(pid, dir, 1), 2);
    usleep(300000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 128 + SIGINT);
    uint64_t w[2];
    int notes = 0;
    for (int j = 0; j < 2; j++) {
        drift_stancsv *f;
        drift_err e = {{0}};
        assert_int_equal(drift_stancsv_read(o[j], &f, &e), 0);
        w[j] = meta_u64(f, "num_warmup");
        assert_int_equal(meta_u64(f, "num_samples"), 0);
        drift_stancsv_free(f);
        char *t = th_slurp(o[j]);
        notes += strstr(t, "\n# drift: this chain ran ") != NULL;
        free(t);
    }
    if (w[0] != w[1])
        fail_msg("num_warmup %llu and %llu: readers refuse the set",
                 (unsigned long long)w[0], (unsigned long long)w[1]);
    /* The chains ran at their own pace: one at least ran more. */
    assert_true(notes >= 1);
    rm_dir(dir);
    free(dir);
}

/* Reads everything from fd until EOF/EIO (a pty master whose slave has
 * been closed by the child's exit), waiting for pid. */
static char *drain(int fd, pid_t pid, int *status)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    int exited = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, 100);
        if (r > 0) {
            if (n + 4096 > cap)
                buf = realloc(buf, cap *= 2);
            ssize_t got = read(fd, buf + n, 4096);
            if (got > 0) {
                n += (size_t)got;
                continue;
            }
            if (got < 0 && errno == EINTR)
                continue;
        }
        if (!exited && waitpid(pid, status, WNOHANG) == pid)
            exited = 1;
        if (exited && r <= 0)
            break;
        if (r > 0) /* EOF or EIO */
            break;
    }
    if (!exited)
        waitpid(pid, status, 0);
    buf[n] = '\0';
    return buf;
}

static char *run_on_pty(const char *const *args, int *status)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    pid_t pid = th_cli_spawn(args, -1, slave);
    close(slave);
    char *text = drain(master, pid, status);
    close(master);
    return text;
}

static void test_progress(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200];
    path_in(out, sizeof out, dir, "p.csv");
    int st;
    const char *args[] = {"sample", "--model", "logistic", "--data", pima(),
                          "--sampler", "sgld", "--set", "h=0.0005",
                          "--batch", "20", "--seconds", "1.3", "--seed", "1",
                          "--out", out, "--chains", "1", "--warmup", "0",
                          NULL, NULL};
    char *text = run_on_pty(args, &st);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("status %d: %s", st, text);
    if (!strstr(text, "\rchain 1: iter ") || !strstr(text, " passes, ") ||
        !strstr(text, " draws/s, ETA ") || !strstr(text, "\r\033[K"))
        fail_msg("no progress line on the terminal: '%s'", text);
    free(text);
    /* --quiet: no progress line and no account line on the terminal (the
     * end-of-run warnings about the draws, which this short unconverged
     * sgld run earns, still speak). */
    args[21] = "--quiet";
    text = run_on_pty(args, &st);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_null(strstr(text, "chain 1: iter "));
    assert_null(strstr(text, "\033[K"));
    assert_null(strstr(text, " draws in "));
    free(text);
    /* Not a terminal (a log, CI, a notebook): no line redrawn in place,
     * but CmdStan's periodic lines, whole, ending at 100%, and the
     * account line. */
    args[21] = NULL;
    args[11] = "--iter";
    args[12] = "300000";
    th_cli r = th_cli_run(args);
    assert_int_equal(r.status, 0);
    assert_null(strchr(r.err, '\r'));
    assert_null(strstr(r.err, "ETA"));
    if (!strstr(r.err, "Chain 1 Iteration: ") ||
        !strstr(r.err, "Chain 1 Iteration: 300000 / 300000 [100%]  "
                       "(Sampling)\n"))
        fail_msg("no progress lines in a log: '%s'", r.err);
    assert_non_null(strstr(r.err, "drift: chain 1: 300000 iterations"));
    th_cli_free(&r);
    /* With warmup, the phase of each line: a warmup long enough (most of
     * a second here) that the log's look every 0.1 s falls in it. */
    args[19] = "--warmup";
    args[20] = "1500000";
    r = th_cli_run(args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "/ 1800000 ["));
    assert_non_null(strstr(r.err, "(Warmup)\n"));
    th_cli_free(&r);
    args[19] = "--warmup";
    args[20] = "0";
    /* --quiet: none. */
    args[21] = "--quiet";
    r = th_cli_run(args);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "Iteration"));
    th_cli_free(&r);
    rm_dir(dir);
    free(dir);
}

static void test_chains_reproducible(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char k3[4200], again[4200], one[4200], k2[4200];
    path_in(k3, sizeof k3, dir, "k.csv");
    path_in(again, sizeof again, dir, "a.csv");
    path_in(one, sizeof one, dir, "s.csv");
    path_in(k2, sizeof k2, dir, "t.csv");
    const char *base[] = {"sample", "--model", "logistic", "--data", pima(),
                          "--sampler", "sgld", "--set", "h=0.0005",
                          "--batch", "20", "--iter", "400", "--warmup", "50",
                          "--init", "random", "--seed", "9", "--quiet"};
#define NB (sizeof base / sizeof base[0])
    const char *extra[4][7] = {
        {"--chains", "3", "--out", k3, NULL},
        {"--chains", "3", "--out", again, NULL},
        {"--chain-id", "2", "--chains", "1", "--out", one, NULL},
        {"--chains", "2", "--chain-id", "2", NULL},
    };
    for (int k = 0; k < 4; k++) {
        const char *args[NB + 8];
        size_t n = 0;
        for (size_t j = 0; j < NB; j++)
            args[n++] = base[j];
        for (size_t j = 0; extra[k][j]; j++)
            args[n++] = extra[k][j];
        if (k == 3) {
            args[n++] = "--out";
            args[n++] = k2;
        }
        args[n] = NULL;
        th_cli r = th_cli_run(args);
        if (r.status)
            fail_msg("run %d: %s", k, r.err);
        th_cli_free(&r);
    }
#undef NB
    char p[4][4200];
    const char *names[] = {"k_1.csv", "k_2.csv", "k_3.csv", "a_1.csv",
                           "a_2.csv", "a_3.csv", "s.csv",  "t_2.csv",
                           "t_3.csv"};
    char *text[9];
    for (int k = 0; k < 9; k++) {
        path_in(p[0], sizeof p[0], dir, names[k]);
        text[k] = th_slurp(p[0]);
        assert_non_null(text[k]);
        strip_run_lines(text[k]);
    }
    /* Same seed: same files, whatever the scheduling; chain 2 alone (or
     * first of two) is chain 2 of three (but for the lines naming the
     * file, the chain count and the elapsed times). */
    for (int k = 0; k < 3; k++)
        assert_string_equal(text[k], text[3 + k]);
    assert_string_equal(text[1], text[6]);
    assert_string_equal(text[1], text[7]);
    assert_string_equal(text[2], text[8]);
    assert_non_null(strstr(text[6], "# id = 2\n"));
    /* Different chains draw different streams (and starting points). */
    assert_true(strcmp(text[0], text[1]) != 0);
    for (int k = 0; k < 9; k++)
        free(text[k]);
    rm_dir(dir);
    free(dir);
}

static void test_overflow(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200], model[4200];
    path_in(out, sizeof out, dir, "q.csv");
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    snprintf(model, sizeof model, "%s/quartic.so", tp ? tp : ".");
    char *data = th_write_text("y\n0.5\n-0.3\n1.2\n0.1\n-1\n0.7\n0.2\n-0.4\n"
                               "0.9\n-0.6\n",
                               ".csv");
    th_cli r = th_cli_run((const char *[]){"sample", "--model", model, "--data",
                                    data, "--sampler", "sgld", "--set",
                                    "h=0.05", "--batch", "10", "--init", "1",
                                    "--iter", "1000", "--seed", "1", "--out",
                                    out, "--chains", "1", "--warmup", "0",
                                    NULL});
    /* The gradient (theta - y)^3 overflows long before theta does. */
    if (r.status != 1 || !strstr(r.err, "chain 1, iteration ") ||
        !strstr(r.err, "the gradient for theta is ") ||
        !strstr(r.err, "inf") || !strstr(r.err, "smaller step size"))
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    th_cli_free(&r);
    size_t rows = valid_rows(out);
    assert_true(rows > 5 && rows < 1000);
    rm_dir(dir);
    free(dir);
    unlink(data);
    free(data);
}

static void fixture(char *buf, size_t cap, const char *name)
{
    const char *src = getenv("srcdir");
    snprintf(buf, cap, "%s/tests/fixtures/summary/%s", src ? src : ".", name);
}

static void test_summary_cli(void **state)
{
    (void)state;
    char f[4][4200], csv[] = "/tmp/drift-cli-sum-XXXXXX";
    close(mkstemp(csv));
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "ar4_%d.csv", k + 1);
        fixture(f[k], sizeof f[k], name);
    }
    th_cli r = th_cli_run((const char *[]){"summary", f[0], f[1], f[2], f[3],
                                    "--csv", csv, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "4 chains, 301 draws each (1204 in all)"));
    assert_non_null(strstr(r.out, "ess_bulk"));
    assert_non_null(strstr(r.out, "sampler columns:"));
    assert_non_null(strstr(r.out, "accept_stat__"));
    assert_non_null(strstr(r.out, "warning: R-hat above 1.01"));
    th_cli_free(&r);
    /* The CSV table: the header as stansummary's, values as posterior's. */
    char *text = th_slurp(csv);
    const char *head = "name,mean,mcse,sd,q5,q50,q95,ess_bulk,ess_tail,rhat"
                       "\nlp__,";
    assert_true(strncmp(text, head, strlen(head)) == 0);
    free(text);
    /* Read it with the first column dropped (the reader takes numbers). */
    FILE *in = fopen(csv, "r");
    char line[1024];
    size_t rows = 0;
    assert_non_null(fgets(line, sizeof line, in));
    while (fgets(line, sizeof line, in)) {
        char *comma = strchr(line, ',');
        *comma = '\0';
        const summary_ref *ref = NULL;
        for (size_t k = 0; k < sizeof summary_refs / sizeof summary_refs[0];
             k++)
            if (!strcmp(summary_refs[k].fixture, "ar4") &&
                !strcmp(summary_refs[k].name, line))
                ref = &summary_refs[k];
        assert_non_null(ref);
        char *p = comma + 1;
        for (int j = 0; j < 9; j++) {
            char *end;
            double v = !strncmp(p, "NA", 2) ? NAN : strtod(p, &end);
            if (isnan(v))
                end = p + 2;
            if (!(isnan(v) && isnan(ref->v[j])) &&
                !(fabs(v - ref->v[j]) <= 1e-6))
                fail_msg("%s column %d: %.12g, posterior %.12g", line, j, v,
                         ref->v[j]);
            p = end + 1;
        }
        rows++;
    }
    fclose(in);
    assert_int_equal(rows, 10); /* lp__ and 9 quantities, no __ columns */
    unlink(csv);
    /* CmdStan's files: saved warmup skipped. */
    fixture(f[0], sizeof f[0], "cmdstan_1.csv");
    fixture(f[1], sizeof f[1], "cmdstan_2.csv");
    r = th_cli_run((const char *[]){"summary", f[0], f[1], NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 chains, 200 draws each (400 in all); "
                                  "100 warmup draws per chain skipped"));
    assert_non_null(strstr(r.out, "Sigma.2.1"));
    assert_non_null(strstr(r.out, "divergent__"));
    th_cli_free(&r);
    /* Refusals. */
    expect((const char *[]){"summary", NULL}, 2, "no files given");
    expect((const char *[]){"summary", "/nonexistent.csv", NULL}, 2,
           "/nonexistent.csv: cannot open");
    fixture(f[2], sizeof f[2], "single.csv");
    expect((const char *[]){"summary", f[0], f[2], NULL}, 2,
           "summarise chains of one model");
    char *bad = th_write_text("a,b\n1,2\n3\n", ".csv");
    expect((const char *[]){"summary", bad, NULL}, 2, ":3: error: row has 1");
    unlink(bad);
    free(bad);
}

/* ---- Stan CSV every reader accepts ---------------------------- */

/* The header's counts are the rows' whatever the budget: CmdStan's readers
 * take ceil(num_warmup / thin) warmup rows and ceil(num_samples / thin)
 * draws; a chain without warmup says num_warmup 1, save_warmup 0 (CmdStanPy
 * refuses 0); continuous samplers' chains end with equal counts and a
 * finite lp__. */
static void test_csv_counts(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200], o1[4200], o2[4200];
    path_in(out, sizeof out, dir, "p.csv");
    /* N = 200, 20 rows a step: 3 passes are 30 iterations, 6 of warmup. */
    th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                    "--data", pima(), "--sampler", "sgld",
                                    "--set", "h=0.0005", "--batch", "20",
                                    "--passes", "3", "--warmup", "6",
                                    "--thin", "3", "--save-warmup", "--seed",
                                    "1", "--chains", "1", "--out", out,
                                    "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    drift_stancsv *f;
    drift_err e = {{0}};
    assert_int_equal(drift_stancsv_read(out, &f, &e), DRIFT_OK);
    assert_int_equal(meta_u64(f, "num_warmup"), 6);
    assert_int_equal(meta_u64(f, "num_samples"), 24);
    assert_int_equal(meta_u64(f, "save_warmup"), 1);
    assert_int_equal(meta_u64(f, "thin"), 3);
    assert_int_equal(f->n_warmup, 2);
    assert_int_equal(f->n_rows - f->n_warmup, 8);
    assert_string_equal(drift_stancsv_meta(f, "method"), "sample");
    assert_string_equal(drift_stancsv_meta(f, "metric"), "unit_e");
    assert_non_null(drift_stancsv_footer(f, "Step size"));
    drift_stancsv_free(f);
    /* A --thin that does not divide the saved warmup: accepted, as by
     * CmdStan (test_save_warmup_thin). */
    /* No warmup. */
    r = th_cli_run((const char *[]){"sample", "--model", "logistic", "--data",
                             pima(), "--sampler", "sgld", "--iter", "5",
                             "--warmup", "0", "--save-warmup", "--seed", "1",
                             "--chains", "1", "--out", out, "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    assert_int_equal(drift_stancsv_read(out, &f, &e), DRIFT_OK);
    assert_int_equal(meta_u64(f, "num_warmup"), 1);
    assert_int_equal(meta_u64(f, "save_warmup"), 0);
    assert_int_equal(meta_u64(f, "num_samples"), 5);
    assert_int_equal(f->n_rows, 5);
    assert_int_equal(f->n_warmup, 0);
    drift_stancsv_free(f);
    char *text = th_slurp(out);
    assert_non_null(strstr(text, "\n# drift: no warmup; the header says "
                                 "num_warmup 1 and save_warmup 0"));
    free(text);
    /* Chains of a continuous sampler: a time grid, so unequal counts
     * until the run cuts every file to the smallest.  More chains than
     * processor cores: the queued ones start only as others end, and no
     * chain waits for another (the run would hang if one did). */
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    char model[4200], K[32];
    snprintf(model, sizeof model, "%s/mvn.so", tp ? tp : ".");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned nk = (unsigned)(ncpu > 0 ? ncpu : 1) + 2;
    snprintf(K, sizeof K, "%u", nk);
    path_in(out, sizeof out, dir, "b.csv");
    r = th_cli_run((const char *[]){"sample", "--model", model, "--sampler",
                             "bps", "--iter", "300", "--warmup", "40",
                             "--save-warmup", "--thin", "0.5", "--chains", K,
                             "--seed", "2", "--out", out, "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    path_in(o1, sizeof o1, dir, "b_1.csv");
    assert_int_equal(drift_stancsv_read(o1, &f, &e), DRIFT_OK);
    assert_true(f->n_warmup > 0 && f->n_rows > f->n_warmup);
    assert_int_equal(meta_u64(f, "num_samples"), f->n_rows - f->n_warmup);
    assert_int_equal(meta_u64(f, "num_warmup"), f->n_warmup);
    assert_int_equal(meta_u64(f, "thin"), 1);
    for (size_t i = 0; i < f->n_rows; i++)
        assert_true(isfinite(f->values[i * f->n_cols]));
    char *t1 = th_slurp(o1);
    int dropped = strstr(t1, "\n# drift: dropped from the end of each "
                             "phase") != NULL;
    free(t1);
    for (unsigned k = 2; k <= nk; k++) {
        char name[32];
        snprintf(name, sizeof name, "b_%u.csv", k);
        path_in(o2, sizeof o2, dir, name);
        drift_stancsv *g;
        assert_int_equal(drift_stancsv_read(o2, &g, &e), DRIFT_OK);
        assert_int_equal(g->n_rows, f->n_rows);
        assert_int_equal(g->n_warmup, f->n_warmup);
        assert_int_equal(meta_u64(g, "num_samples"),
                         meta_u64(f, "num_samples"));
        assert_int_equal(meta_u64(g, "num_warmup"), meta_u64(f, "num_warmup"));
        drift_stancsv_free(g);
        char *t = th_slurp(o2);
        dropped += strstr(t, "\n# drift: dropped from the end of each "
                             "phase") != NULL;
        free(t);
    }
    /* The grid leaves some chain longer than the shortest. */
    assert_true(dropped > 0);
    drift_stancsv_free(f);
    rm_dir(dir);
    free(dir);
}

/* The numbers of line `line` (1-based, after the header) of a summary
 * CSV written by drift summary --csv, its name dropped; NA is NaN.
 * Returns how many. */
static size_t summary_row(const char *path, int line, double *v, size_t cap)
{
    char *text = th_slurp(path);
    assert_non_null(text);
    char *p = text;
    for (int k = 0; k < line && p; k++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    assert_non_null(p);
    assert_true(*p != '\0');
    size_t n = 0;
    p = strchr(p, ',');
    while (p && *p == ',' && n < cap) {
        p++;
        char *end;
        v[n++] = strncmp(p, "NA", 2) ? strtod(p, &end) : NAN;
        if (!strncmp(p, "NA", 2))
            end = p + 2;
        p = end;
    }
    free(text);
    return n;
}

/* drift summary of a segments file: the footer's exact moments for mean
 * and sd, the time spent below for quantiles (checked here against a fine
 * grid walked over the rows); --vars and -p; sd 0 for a constant. */
static void test_summary_segments(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200], csv[4200];
    path_in(out, sizeof out, dir, "s.csv");
    path_in(csv, sizeof csv, dir, "sum.csv");
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    char model[4200];
    snprintf(model, sizeof model, "%s/mvn.so", tp ? tp : ".");
    th_cli r = th_cli_run((const char *[]){"sample", "--model", model,
                                    "--sampler", "bps", "--iter", "2000",
                                    "--warmup", "100", "--emit", "segments",
                                    "--seed", "4", "--chains", "1", "--out",
                                    out, "--quiet", NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"summary", out, "-p", "25,50,75", "--csv",
                             csv, "--vars", "x.1", NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "segments each"));
    assert_non_null(strstr(r.out, "exact time averages"));
    /* Segments read as draws give wrong answers: the file says so first,
     * and the summary shows by how much. */
    if (!strstr(r.out, "note: the rows are segments of unequal duration, "
                       "not draws: weight each by duration__") ||
        !strstr(r.out, ", weighted by duration "))
        fail_msg("no note on reading segments: %s", r.out);
    th_cli_free(&r);
    char *seg = th_slurp(out);
    assert_true(!strncmp(strchr(seg, '\n') + 1,
                         "# drift: SEGMENTS, NOT DRAWS (--emit segments)",
                         46));
    free(seg);
    drift_stancsv *f;
    drift_err e = {{0}};
    assert_int_equal(drift_stancsv_read(out, &f, &e), DRIFT_OK);
    /* name,mean,mcse,sd,q25,q50,q75,ess_bulk,ess_tail,rhat: x.1 only. */
    char *text = th_slurp(csv);
    const char *head1 = "name,mean,mcse,sd,q25,q50,q75,ess_bulk,ess_tail,"
                        "rhat\nx.1,";
    assert_true(!strncmp(text, head1, strlen(head1)));
    assert_null(strstr(text, "x.2"));
    free(text);
    double row[16];
    assert_int_equal(summary_row(csv, 1, row, 16), 9);
    double mean = row[0], sd = row[2];
    double T = strtod(drift_stancsv_footer(f, "trajectory_time"), NULL);
    double m = strtod(drift_stancsv_footer(f, "trajectory_mean "
                                              "(unconstrained)"),
                      NULL);
    double v = strtod(drift_stancsv_footer(f, "trajectory_var "
                                              "(unconstrained)"),
                      NULL);
    assert_true(T > 0);
    assert_true(fabs(mean - m) <= 1e-9 * (1 + fabs(m)));
    assert_true(fabs(sd - sqrt(v)) <= 1e-9 * (1 + sqrt(v)));
    /* Quantiles: the fraction of time below each, on a grid of 200 points
     * per segment. */
    long x0 = drift_stancsv_column(f, "x0_1__"), vc = drift_stancsv_column(f, "v_1__"),
         dc = drift_stancsv_column(f, "duration__");
    assert_true(x0 >= 0 && vc >= 0 && dc >= 0);
    for (int j = 0; j < 3; j++) {
        double q = row[3 + j], below = 0, all = 0;
        for (size_t i = f->n_warmup; i < f->n_rows; i++) {
            const double *row = f->values + i * f->n_cols;
            for (int k = 0; k < 200; k++) {
                double s = (k + 0.5) / 200 * row[dc];
                below += (row[x0] + row[vc] * s <= q) * row[dc] / 200;
                all += row[dc] / 200;
            }
        }
        double want = 0.25 * (j + 1);
        if (fabs(below / all - want) > 2e-3)
            fail_msg("quantile %g: %g of the time below it", want,
                     below / all);
    }
    drift_stancsv_free(f);
    /* --vars, -p on the fixtures: posterior's quantile2 of mu and sigma at
     * 2.5% and 97.5% over the four chains (R, make-fixtures' files). */
    char fx[4][4200];
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof name, "ar4_%d.csv", k + 1);
        fixture(fx[k], sizeof fx[k], name);
    }
    r = th_cli_run((const char *[]){"summary", fx[0], fx[1], fx[2], fx[3],
                             "--vars", "sigma,mu", "--percentiles",
                             "2.5,97.5", "--csv", csv, NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    text = th_slurp(csv);
    const char *head = "name,mean,mcse,sd,q2.5,q97.5,ess_bulk,ess_tail,rhat\n"
                       "mu,";
    assert_true(strncmp(text, head, strlen(head)) == 0); /* file order */
    assert_non_null(strstr(text, "\nsigma,"));
    free(text);
    const double want[2][2] = {{-2.0730790022000187, 2.1042740568364007},
                               {0.56781635768154548, 1.7581217592872196}};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(summary_row(csv, k + 1, row, 16), 8);
        for (int j = 0; j < 2; j++)
            assert_true(fabs(row[3 + j] - want[k][j]) < 1e-9);
    }
    /* The warnings judge the quantities shown, not the ones --vars left
     * out (whose statistics were never computed: ESS 0). */
    r = th_cli_run((const char *[]){"summary", fx[0], fx[1], fx[2], fx[3],
                             "--vars", "sigma", NULL});
    assert_int_equal(r.status, 0);
    if (strstr(r.out, "warning"))
        fail_msg("--vars sigma (well mixed) warned:\n%s", r.out);
    th_cli_free(&r);
    r = th_cli_run((const char *[]){"summary", fx[0], fx[1], fx[2], fx[3],
                             "--vars", "sigma,mu", NULL});
    assert_int_equal(r.status, 0);
    if (!strstr(r.out, "R-hat above 1.01 for 1 of 2 quantities (mu;") ||
        !strstr(r.out, "per chain for 1 of 2 quantities (mu; lowest 81)"))
        fail_msg("--vars sigma,mu: expected mu's warnings alone:\n%s",
                 r.out);
    th_cli_free(&r);
    expect((const char *[]){"summary", fx[0], "--vars", "nu", NULL}, 2,
           "--vars: no column 'nu'");
    expect((const char *[]){"summary", fx[0], "-p", "5,101", NULL}, 2,
           "--percentiles 5,101");
    /* A constant column: sd 0. */
    char *c = th_write_text("# a file\nlp__,a,b\n1,0.1,1\n2,0.1,2\n3,0.1,4\n"
                            "4,0.1,3\n",
                            ".csv");
    r = th_cli_run((const char *[]){"summary", c, "--csv", csv, NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    assert_int_equal(summary_row(csv, 2, row, 16), 9); /* a */
    assert_true(row[0] == 0.1 && row[2] == 0 && isnan(row[8]));
    unlink(c);
    free(c);
    rm_dir(dir);
    free(dir);
}

static void test_run_then_summary(void **state)
{
    (void)state;
    char *dir = tmp_dir();
    char out[4200], o1[4200], o2[4200], m1[4200];
    path_in(out, sizeof out, dir, "r.csv");
    path_in(o1, sizeof o1, dir, "r_1.csv");
    path_in(o2, sizeof o2, dir, "r_2.csv");
    path_in(m1, sizeof m1, dir, "r_1_metrics.csv");
    char test[4096];
    const char *src = getenv("srcdir");
    snprintf(test, sizeof test, "%s/examples/logistic/pima-test.csv",
             src ? src : ".");
    th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic", "--data",
                                    pima(), "--sampler", "sgld", "--set",
                                    "h=0.0005", "--batch", "20", "--iter",
                                    "600", "--warmup", "100", "--save-warmup",
                                    "--thin", "2", "--chains", "2",
                                    "--seed", "4", "--test",
                                    test, "--eval-every", "20", "--out", out,
                                    NULL});
    if (r.status)
        fail_msg("%s", r.err);
    assert_non_null(strstr(r.err, "metrics -> "));
    th_cli_free(&r);
    /* Warmup rows are saved (flagged as CmdStan flags them), metrics file
     * beside each draws file. */
    drift_stancsv *f;
    drift_err e;
    assert_int_equal(drift_stancsv_read(o1, &f, &e), DRIFT_OK);
    assert_int_equal(f->n_warmup, 50);
    assert_int_equal(f->n_rows, 350);
    assert_string_equal(drift_stancsv_meta(f, "metrics_file"),
                        "r_1_metrics.csv");
    drift_stancsv_free(f);
    assert_int_equal(drift_stancsv_read(m1, &f, &e), DRIFT_OK);
    assert_string_equal(f->names[4], "lpd");
    assert_string_equal(f->names[5], "accuracy");
    assert_int_equal(f->n_rows, 4); /* 20, 40, 60 passes and the end */
    drift_stancsv_free(f);
    r = th_cli_run((const char *[]){"summary", o1, o2, NULL});
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 chains, 300 draws each (600 in all); "
                                  "50 warmup draws per chain skipped"));
    assert_non_null(strstr(r.out, "held-out metrics on "));
    assert_non_null(strstr(r.out, "accuracy"));
    th_cli_free(&r);
    rm_dir(dir);
    free(dir);
}

static void test_init_and_test_options(void **state)
{
    (void)state;
    const char *d = pima();
    char *json = th_write_text("{\"w\": [0.5, 0, 0, 0, 0, 0, 0, 0]}", ".json");
    char *shortj = th_write_text("{\"w\": [0.5, 0]}", ".json");
    char *badj = th_write_text("{\"w\": [0.5,\n ]}", ".json");
    char *csv = th_write_text("# a previous run\nlp__,w.1,w.2,w.3,w.4,w.5,"
                              "w.6,w.7,w.8\n0,9,9,9,9,9,9,9,9\n"
                              "-1,0.5,0,0,0,0,0,0,0\n",
                              ".csv");
    char out[] = "/tmp/drift-cli-init-XXXXXX";
    close(mkstemp(out));
    const char *inits[] = {json, csv};
    for (int k = 0; k < 2; k++) {
        th_cli r = th_cli_run((const char *[]){"sample", "--model", "logistic",
                                        "--data", d, "--sampler", "sgld",
                                        "--set", "h=1e-9", "--iter", "1",
                                        "--init", inits[k], "--out", out,
                                        "--chains", "1", "--warmup", "0",
                                        "--quiet", NULL});
        if (r.status)
            fail_msg("--init %s: %s", inits[k], r.err);
        th_cli_free(&r);
        drift_stancsv *f;
        drift_err e;
        assert_int_equal(drift_stancsv_read(out, &f, &e), DRIFT_OK);
        assert_string_equal(drift_stancsv_meta(f, "init"), inits[k]);
        /* One tiny step from the given point (w.1 = 0.5, the rest 0). */
        long w1 = drift_stancsv_column(f, "w.1");
        assert_true(w1 >= 0);
        assert_true(fabs(f->values[w1] - 0.5) < 1e-3);
        assert_true(fabs(f->values[w1 + 1]) < 1e-3);
        drift_stancsv_free(f);
    }
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--init", shortj, NULL},
           2, "'w' has 2 elements where the model needs at least 3");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--init", badj, NULL},
           2, ":2:");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--init", "nofile.json",
                            NULL},
           2, "--init nofile.json: no such file");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--init", "-1", NULL},
           2, "--init -1");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--eval-every", "5", NULL},
           2, "--eval-every needs --test FILE");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--test", "/nonexistent.csv",
                            NULL},
           2, "/nonexistent.csv: cannot open data file");
    expect((const char *[]){"sample", "--model", "logistic", "--data", d,
                            "--sampler", "sgld", "--chain-id", "0", NULL},
           2, "--chain-id 0");
    const char *files[] = {json, shortj, badj, csv, out};
    for (int k = 0; k < 5; k++)
        unlink(files[k]);
    free(json);
    free(shortj);
    free(badj);
    free(csv);
}

/* The block `drift samplers` prints for sampler name (up to the next
 * blank line); NULL when absent.  Caller frees. */
static char *sampler_block(const char *out, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s  ", name);
    const char *p = strstr(out, key);
    if (!p)
        return NULL;
    const char *end = strstr(p + 1, "\n\n");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *b = malloc(n + 1);
    assert_non_null(b);
    memcpy(b, p, n);
    b[n] = '\0';
    return b;
}

/* Every Langevin-family sampler is listed with its
 * hyperparameters (names as the papers have them) and columns, and runs
 * end to end from the command line. */
static void test_langevin(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *want[8];
    } s[] = {
        {"lmc", {"    h ", "full-data", NULL}},
        {"mala", {"    h ", "adapt_delta", "0.574", "unit|diag|dense",
                  "accept_stat__", "stepsize__", "full-data", NULL}},
        {"psgld", {"    h ", "    lambda ", "1e-05", "    alpha ", "0.99",
                   NULL}},
        {"sghmc", {"    h ", "    gamma ", "    sigma ", "default auto",
                   "sqrt(2 gamma)", "em|symplectic", "kinetic__", NULL}},
        {"sgnht", {"    h ", "    A ", "xi__", "kinetic__", NULL}},
        {"msgnht", {"    h ", "    A ", "xi.#__", "kinetic__", NULL}},
        {"ewsg", {"    h ", "    gamma ", "    sigma ", "    M ", "    x ",
                  "r_next_r|0|1|r_next_0", "index_accept__", NULL}},
    };
    th_cli r = th_cli_run((const char *[]){"samplers", NULL});
    assert_int_equal(r.status, 0);
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++) {
        char *b = sampler_block(r.out, s[k].name);
        if (!b)
            fail_msg("drift samplers does not list %s:\n%s", s[k].name, r.out);
        for (const char *const *w = s[k].want; *w; w++)
            if (!strstr(b, *w))
                fail_msg("%s's listing lacks '%s':\n%s", s[k].name, *w, b);
        free(b);
    }
    th_cli_free(&r);

    /* End to end: the thermostat on the data-free double well with
     * injected gradient noise, and ewsg's refusal of it. */
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(tp);
    char model[4096], out[] = "/tmp/drift-cli-lgv-XXXXXX";
    snprintf(model, sizeof model, "%s/doublewell.so", tp);
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    r = th_cli_run((const char *[]){"sample", "--model", model, "--sampler", "sgnht",
                             "--set", "A=0", "--set", "h=0.01",
                             "--grad-noise", "1", "--iter", "100", "--seed",
                             "3", "--out", out, "--chains", "1", "--quiet",
                             NULL});
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    char *csv = th_slurp(out);
    assert_non_null(csv);
    assert_non_null(strstr(csv, "lp__,grads__,xi__,kinetic__,treedepth__,"
                                "divergent__,theta"));
    assert_non_null(strstr(csv, "# grad_noise = 1"));
    free(csv);
    unlink(out);
    expect((const char *[]){"sample", "--model", model, "--sampler", "ewsg",
                            "--iter", "10", "--seed", "1", "--out", out,
                            "--quiet", NULL},
           2, "ewsg: the model has no data rows");
    expect((const char *[]){"sample", "--model", model, "--sampler", "ewsg",
                            "--set", "x=2", "--iter", "10", NULL},
           2, "r_next_r|0|1|r_next_0");
    expect((const char *[]){"sample", "--model", model, "--sampler", "psgld",
                            "--set", "alpha=1", "--iter", "10", NULL},
           2, "'alpha' of sampler psgld accepts [0, 1)");
}

/* --test with a .drift model: the test rows replace the training rows file
 * (the data block and --data-set stay); the metrics equal those of the C
 * plugin for the same model, data and seed. */
static void test_lang_heldout(void **state)
{
    (void)state;
    const char *src = getenv("srcdir");
    char model[4200], train[4200], test[4200];
    snprintf(model, sizeof model, "%s/examples/logistic/logistic.drift",
             src ? src : ".");
    snprintf(train, sizeof train, "%s/examples/logistic/pima-train.csv",
             src ? src : ".");
    snprintf(test, sizeof test, "%s/examples/logistic/pima-test.csv",
             src ? src : ".");
    char a[] = "/tmp/drift-cli-lh-a-XXXXXX", b[] = "/tmp/drift-cli-lh-b-XXXXXX";
    close(mkstemp(a));
    close(mkstemp(b));
    const char *common[] = {"--data", train, "--test", test, "--sampler",
                            "sgld", "--set", "h=0.0005", "--batch", "20",
                            "--passes", "200", "--thin", "10", "--seed", "4",
                            "--chains", "1", "--quiet"};
    const char *args_a[32] = {"sample", model}, *args_b[32] = {"sample",
                                                              "--model",
                                                              "logistic"};
    size_t na = 2, nb = 3;
    for (size_t k = 0; k < sizeof common / sizeof common[0]; k++) {
        args_a[na++] = common[k];
        args_b[nb++] = common[k];
    }
    args_a[na++] = "--out";
    args_a[na++] = a;
    args_a[na] = NULL;
    args_b[nb++] = "--out";
    args_b[nb++] = b;
    args_b[nb] = NULL;
    th_cli r = th_cli_run(args_a);
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    r = th_cli_run(args_b);
    assert_int_equal(r.status, 0);
    th_cli_free(&r);
    char ma[4300], mb[4300];
    snprintf(ma, sizeof ma, "%s_metrics", a);
    snprintf(mb, sizeof mb, "%s_metrics", b);
    char *ta = th_slurp(ma), *tb = th_slurp(mb);
    assert_non_null(ta);
    assert_non_null(tb);
    /* The last rows: passes,seconds,iteration,draws,lpd,accuracy. */
    const char *la = strrchr(ta, '\n'), *lb = strrchr(tb, '\n');
    while (la > ta && la[-1] != '\n')
        la--;
    while (lb > tb && lb[-1] != '\n')
        lb--;
    double va[6], vb[6];
    assert_int_equal(sscanf(la, "%lf,%lf,%lf,%lf,%lf,%lf", &va[0], &va[1],
                            &va[2], &va[3], &va[4], &va[5]), 6);
    assert_int_equal(sscanf(lb, "%lf,%lf,%lf,%lf,%lf,%lf", &vb[0], &vb[1],
                            &vb[2], &vb[3], &vb[4], &vb[5]), 6);
    assert_true(va[3] == vb[3] && va[3] == 200);
    assert_true(fabs(va[4] - vb[4]) < 1e-9 * fabs(vb[4]));
    assert_true(va[5] == vb[5]);
    free(ta);
    free(tb);
    const char *files[] = {a, b, ma, mb};
    for (int k = 0; k < 4; k++)
        unlink(files[k]);
    /* A test file that does not fit the rows schema. */
    char *bad = th_write_text("y,x.1,x.2\n1,1,0\n", ".csv");
    expect((const char *[]){"sample", model, "--data", train, "--test", bad,
                            "--sampler", "sgld", "--iter", "5", NULL},
           2, "--test");
    unlink(bad);
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_save_warmup_thin),
        cmocka_unit_test(test_bad_data),
        cmocka_unit_test(test_output),
        cmocka_unit_test(test_divergence),
        cmocka_unit_test(test_setup_budget),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_signal_in_warmup),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_chains_reproducible),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_summary_cli),
        cmocka_unit_test(test_run_then_summary),
        cmocka_unit_test(test_csv_counts),
        cmocka_unit_test(test_summary_segments),
        cmocka_unit_test(test_init_and_test_options),
        cmocka_unit_test(test_langevin),
        cmocka_unit_test(test_lang_heldout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
