/* test_hostile_output.c: the files a run writes, against what can go
 * wrong with their names and with other runs: a second run on the same
 * --out is refused while the first holds the set (never a set whose
 * chain files come from two runs); every name the run will create is
 * checked before any work (a name that passes the file system's limit
 * once the chain's suffix and the temporary suffix are added is refused
 * at once, not after hours of sampling); and a name holding a line end,
 * which would break the '#' header lines it is written into, is refused
 * with its cause. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"
#include "base/writer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The seed line of dir/name's header. */
static unsigned long seed_of(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    if (!text)
        fail_msg("%s: missing", p);
    const char *at = strstr(text, "#   seed = ");
    assert_non_null(at);
    unsigned long seed = strtoul(at + 11, NULL, 10);
    free(text);
    free(p);
    return seed;
}

static void test_second_run_on_the_same_out(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *first[] = {"sample", "logistic.drift", "--data", "pima.csv",
                           "--sampler", "sgld", "--set", "h=1e-4",
                           "--batch", "20", "--iter", "2000000", "--thin",
                           "1000", "--seed", "111", "--chains", "2",
                           "--quiet", "--out", "fit.csv", NULL};
    pid_t pid = hx_spawn(dir, first, NULL);
    /* The first holds the set from its start. */
    int held = 0;
    for (int t = 0; t < 3000 && !held; t++) {
        held = hx_exists(dir, ".fit.csv.lock");
        if (!held)
            usleep(10000);
    }
    assert_true(held);
    const char *second[] = {"sample", "logistic.drift", "--data", "pima.csv",
                            "--sampler", "sgld", "--set", "h=1e-4",
                            "--batch", "20", "--iter", "2000", "--seed",
                            "222", "--chains", "2", "--quiet", "--out",
                            "fit.csv", NULL};
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid)
        fail_msg("the first run ended before the second started");
    hx_expect(dir, second, 2, "another drift run is writing this output "
                              "set");
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* Every file from the first run, and the lock gone with it. */
    assert_int_equal(seed_of(dir, "fit_1.csv"), 111);
    assert_int_equal(seed_of(dir, "fit_2.csv"), 111);
    assert_false(hx_exists(dir, ".fit.csv.lock"));
    /* Once it is done, the set is free. */
    hx_expect(dir, second, 0, "");
    assert_int_equal(seed_of(dir, "fit_1.csv"), 222);
    assert_int_equal(seed_of(dir, "fit_2.csv"), 222);
    hx_rm(dir);
    free(dir);
}

static void test_name_too_long_once_suffixed(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    /* 255 bytes: a valid name, but NAME_1.csv is 257. */
    char name[300];
    memset(name, 'a', 251);
    strcpy(name + 251, ".csv");
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "20000000",
                          "--chains", "2", "--quiet", "--out", name, NULL};
    double t0 = now();
    hx_expect(dir, args, 2, "_1.csv: the name is 257 bytes");
    /* Refused before any work (the run would take a minute). */
    assert_true(now() - t0 < 20);
    /* One chain: the name itself, with no room for its temporary. */
    const char *one[] = {"sample", "logistic.drift", "--data", "pima.csv",
                         "--sampler", "sgld", "--set", "h=1e-4",
                         "--batch", "20", "--iter", "20000000",
                         "--chains", "1", "--quiet", "--out", name, NULL};
    hx_expect(dir, one, 2, "give a name of at most 244 bytes");
    /* A name that fits is written, whole. */
    strcpy(name + 230, ".csv");
    const char *fits[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "2000",
                          "--chains", "2", "--quiet", "--out", name, NULL};
    hx_expect(dir, fits, 0, "");
    name[230] = '\0';
    strcat(name, "_2.csv");
    assert_true(hx_exists(dir, name));
    hx_rm(dir);
    free(dir);
}

static void test_line_end_in_a_name(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    {
        char *from = hx_in(dir, "pima.csv"), *to = hx_in(dir, "d\nx.csv");
        char *text = th_slurp(from);
        FILE *f = fopen(to, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        free(text);
        free(from);
        free(to);
    }
    const char *data[] = {"sample", "logistic.drift", "--data", "d\nx.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "200", "--chains",
                          "1", "--quiet", "--out", "nl.csv", NULL};
    hx_expect(dir, data, 2, "--data 'd\\x0ax.csv' holds a line end");
    assert_false(hx_exists(dir, "nl.csv"));
    const char *out[] = {"sample", "logistic.drift", "--data", "pima.csv",
                         "--sampler", "sgld", "--set", "h=1e-4",
                         "--batch", "20", "--iter", "200", "--chains",
                         "1", "--quiet", "--out", "a\nb.csv", NULL};
    hx_expect(dir, out, 2, "holds a line end");
    assert_false(hx_exists(dir, "a\nb.csv"));
    const char *set[] = {"sample", "logistic.drift", "--data", "pima.csv",
                         "--data-set", "s=1\r", "--sampler", "sgld", "--set",
                         "h=1e-4", "--batch", "20", "--iter", "200",
                         "--chains", "1", "--quiet", "--out", "cr.csv",
                         NULL};
    hx_expect(dir, set, 2, "holds a carriage return");
    hx_rm(dir);
    free(dir);
}

/* A long run into dir/name, stopped by SIGINT once change (a shell
 * command run in dir) has been made to its output while it wrote: its
 * exit status and message. */
static th_cli changed_while_running(const char *dir, const char *name,
                                    const char *change)
{
    char err[4200];
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "100000000", "--thin",
                          "1000", "--seed", "1", "--chains", "1", "--quiet",
                          "--out", name, NULL};
    pid_t pid = hx_spawn(dir, args, err);
    char *sub = strdup(name);
    char *slash = strrchr(sub, '/');
    char *where = slash ? (*slash = '\0', hx_in(dir, sub)) : strdup(dir);
    if (!hx_wait_writing(pid, where, 1, 60))
        fail_msg("the run never began writing %s", name);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", dir, change);
    assert_int_equal(system(cmd), 0);
    kill(pid, SIGINT);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    th_cli r = {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                strdup(""), th_slurp(err)};
    free(sub);
    free(where);
    return r;
}

/* Checked at the start, and again when the file is put in place: what
 * appeared at the name meanwhile is never replaced, and the draws are
 * kept beside it under a name the message gives. */
static void test_output_changed_during_the_run(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    struct {
        const char *name, *change, *kind;
    } cases[] = {
        {"b.csv", "mkfifo b.csv", "it is now a FIFO"},
        {"a.csv", "mkdir a.csv", "it is now a directory"},
        {"d.csv", "mknod d.csv c 1 3", "it is now a character device"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (k == 2 && geteuid() != 0)
            continue; /* mknod needs root */
        th_cli r = changed_while_running(dir, cases[k].name, cases[k].change);
        char kept[64];
        snprintf(kept, sizeof kept, "the file is kept as %s.kept.",
                 cases[k].name);
        if (r.status == 0 || !strstr(r.err, cases[k].kind) ||
            !strstr(r.err, kept))
            fail_msg("%s: exit %d, stderr:\n%s", cases[k].change, r.status,
                     r.err);
        th_cli_free(&r);
        /* Still what appeared there. */
        char *p = hx_in(dir, cases[k].name);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_false(S_ISREG(st.st_mode));
        free(p);
    }
    /* The output's directory swapped for a link elsewhere: the file is
     * put where the start-up check looked, never in the link's target. */
    char *sub = hx_in(dir, "sub"), *other = hx_in(dir, "other");
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(mkdir(other, 0755), 0);
    th_cli r = changed_while_running(dir, "sub/c.csv",
                                     "mv sub sub.old && ln -s other sub");
    th_cli_free(&r);
    assert_false(hx_exists(dir, "other/c.csv"));
    assert_true(hx_exists(dir, "sub.old/c.csv"));
    free(sub);
    free(other);
    hx_rm(dir);
    free(dir);
}

/* The replacement that puts a finished file in place looks at what is at
 * the name and replaces it in one step (an exchange of names), so a FIFO,
 * device or directory that appears after the check above and before the
 * rename is never replaced either: here each is at the name when the
 * replacement runs, and survives it; a regular file or a link to one is
 * replaced, and a free name taken. */
static void test_replace_is_atomic(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    int D = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(D >= 0);
    char cmd[4300];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkfifo fifo && mkdir sub && echo old >reg && "
             "echo target >t && ln -s t link", dir);
    assert_int_equal(system(cmd), 0);
    struct {
        const char *to, *refused; /* what the message names, or NULL */
    } cases[] = {
        {"fifo", "a FIFO (named pipe)"}, {"sub", "a directory"},
        {"reg", NULL}, {"link", NULL}, {"free", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int f = openat(D, "new", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(f >= 0);
        assert_int_equal(write(f, "new\n", 4), 4);
        close(f);
        const char *is = "unset";
        int err = drift_rename_over_file(D, "new", cases[k].to, &is);
        struct stat st;
        if (cases[k].refused) {
            if (err != EEXIST || !is || strcmp(is, cases[k].refused))
                fail_msg("%s: err %d, now_is %s", cases[k].to, err,
                         is ? is : "NULL");
            assert_int_equal(fstatat(D, cases[k].to, &st, 0), 0);
            assert_false(S_ISREG(st.st_mode));
            assert_int_equal(fstatat(D, "new", &st, 0), 0);
            assert_true(S_ISREG(st.st_mode) && st.st_size == 4);
            unlinkat(D, "new", 0);
        } else {
            if (err != 0 || is != NULL)
                fail_msg("%s: err %d", cases[k].to, err);
            assert_int_equal(fstatat(D, cases[k].to, &st, AT_SYMLINK_NOFOLLOW),
                             0);
            assert_true(S_ISREG(st.st_mode) && st.st_size == 4);
            assert_int_not_equal(fstatat(D, "new", &st, 0), 0);
        }
    }
    /* The link was replaced, not written through: its target is intact. */
    assert_int_equal(fstatat(D, "t", &(struct stat){0}, 0), 0);
    char *txt = hx_slurp(dir, "t");
    assert_string_equal(txt, "target\n");
    free(txt);
    close(D);
    hx_rm(dir);
    free(dir);
}

/* 300 chains under a limit of 64 open files: refused before any chain
 * runs, naming the limit, and no file left (a half-written set of 59
 * complete-looking chains is what a summary would take for the run);
 * with room under the hard limit, the soft one is raised and every chain
 * written. */
static void test_open_file_limit(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--iter", "20", "--warmup", "0",
                          "--seed", "1", "--chains", "300", "--quiet",
                          "--out", "c.csv", NULL};
    hx_set_nofile(64, 64);
    hx_expect(dir, args, 2, "more than this process may open (64");
    assert_false(hx_exists(dir, "c_1.csv"));
    assert_false(hx_exists(dir, "c_300.csv"));
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 1024) {
        hx_set_nofile(64, rl.rlim_max);
        hx_expect(dir, args, 0, "");
        assert_true(hx_exists(dir, "c_1.csv"));
        assert_true(hx_exists(dir, "c_300.csv"));
    }
    hx_set_nofile(0, 0);
    hx_rm(dir);
    free(dir);
}

/* The method commands (optimize, laplace, pathfinder, variational,
 * log-prob, generate) write their files as sample does: an output naming
 * one of the run's inputs (the data, the draws read, the mode, the
 * inits), or a directory, is refused before any work with exit 2, and the
 * input is left as it was. */
static void test_method_outputs_spare_inputs(void **state)
{
    (void)state;
    char *m = th_write_text("rows { y : real }\n"
                            "param { mu : real }\n"
                            "datum { y ~ normal(mu, 1) }\n"
                            "generated { z = normal_rng(mu, 1) }\n",
                            ".drift");
    const char *ytext = "y\n0.5\n1.5\n";
    char *d = th_write_text(ytext, ".csv");
    char *fit = th_write_text("lp__,mu\n0,1\n0,2\n", ".csv");
    char *pt = th_write_text("{\"mu\": 1}", ".json");
    const char *fit_text = "lp__,mu\n0,1\n0,2\n";
    const char *cases[][16] = {
        {"optimize", m, "--data", d, "--out", d, NULL},
        {"laplace", m, "--data", d, "--out", d, NULL},
        {"laplace", m, "--data", d, "--mode", fit, "--out", fit, NULL},
        {"log-prob", m, "--data", d, "--point", pt, "--out", d, NULL},
        {"log-prob", m, "--data", d, "--draws", fit, "--out", fit, NULL},
        {"generate", m, "--data", d, "--draws", fit, "--out", fit, NULL},
        {"pathfinder", m, "--data", d, "--out", d, NULL},
        {"pathfinder", m, "--data", d, "--init", pt, "--out", pt, NULL},
        {"optimize", m, "--data", d, "--out", "/tmp", NULL},
        {"pathfinder", m, "--data", d, "--out", "/tmp", NULL},
        {"variational", m, "--data", d, "--out", d, NULL},
        {"variational", m, "--data", d, "--init", pt, "--out", pt, NULL},
        {"variational", m, "--data", d, "--out", "/tmp", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        th_cli r = th_cli_run(cases[k]);
        if (r.status != 2)
            fail_msg("case %zu (%s): exit %d: %s", k, cases[k][0], r.status,
                     r.err);
        th_cli_free(&r);
        char *now_d = th_slurp(d), *now_fit = th_slurp(fit);
        if (strcmp(now_d, ytext) || strcmp(now_fit, fit_text))
            fail_msg("case %zu (%s): an input was changed", k, cases[k][0]);
        free(now_d);
        free(now_fit);
    }
    unlink(m);
    unlink(d);
    unlink(fit);
    unlink(pt);
    free(m);
    free(d);
    free(fit);
    free(pt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_run_on_the_same_out),
        cmocka_unit_test(test_name_too_long_once_suffixed),
        cmocka_unit_test(test_line_end_in_a_name),
        cmocka_unit_test(test_output_changed_during_the_run),
        cmocka_unit_test(test_replace_is_atomic),
        cmocka_unit_test(test_open_file_limit),
        cmocka_unit_test(test_method_outputs_spare_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
