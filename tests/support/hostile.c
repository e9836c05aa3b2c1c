/* hostile.c: shared machinery of the hostile-input tests (hostile.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"

char *hx_tmpdir(void)
{
    char t[] = "/tmp/drift-hostile-XXXXXX";
    assert_non_null(mkdtemp(t));
    return strdup(t);
}

void hx_rm(const char *dir)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execlp("rm", "rm", "-rf", "--", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

char *hx_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

char *hx_slurp(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    free(p);
    return text;
}

void hx_write(const char *dir, const char *name, const char *text)
{
    char *p = hx_in(dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    free(p);
}

int hx_exists(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    struct stat st;
    int yes = lstat(p, &st) == 0;
    free(p);
    return yes;
}

const char *hx_src(const char *rel)
{
    static char buf[8][4200];
    static int k;
    /* Absolute: drift runs in the test's own directory. */
    static char src[PATH_MAX];
    if (!src[0] && !realpath(getenv("srcdir") ? getenv("srcdir") : ".", src))
        fail_msg("srcdir: %s", strerror(errno));
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", src, rel);
    return b;
}

static void copy(const char *from, const char *dir, const char *name)
{
    char *text = th_slurp(from);
    assert_non_null(text);
    hx_write(dir, name, text);
    free(text);
}

void hx_logistic(const char *dir)
{
    copy(hx_src("examples/logistic/logistic.drift"), dir, "logistic.drift");
    copy(hx_src("examples/logistic/pima-train.csv"), dir, "pima.csv");
}

static struct rlimit nofile, as; /* rlim_cur 0: as inherited */

void hx_set_nofile(unsigned long soft, unsigned long hard)
{
    nofile.rlim_cur = soft;
    nofile.rlim_max = hard;
}

void hx_set_address_space(unsigned long bytes)
{
    as.rlim_cur = as.rlim_max = bytes;
}

pid_t hx_spawn(const char *dir, const char *const *args,
               const char *err_path)
{
    const char *bin = getenv("DRIFT_BIN");
    if (!bin)
        fail_msg("DRIFT_BIN is not set: run with make check");
    const char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    for (const char *const *a = args; *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int out = open("/dev/null", O_WRONLY);
        int err = open(err_path ? err_path : "/dev/null",
                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
            chdir(dir) != 0)
            _exit(126);
        if (nofile.rlim_cur && setrlimit(RLIMIT_NOFILE, &nofile) != 0)
            _exit(126);
        if (as.rlim_cur && setrlimit(RLIMIT_AS, &as) != 0)
            _exit(126);
        /* The stop signals' default actions, none blocked, as from a
         * terminal (a background job's ignored SIGINT would be kept). */
        const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        sigset_t none;
        sigemptyset(&none);
        for (size_t k = 0; k < sizeof stops / sizeof *stops; k++)
            signal(stops[k], SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    return pid;
}

th_cli hx_run(const char *dir, const char *const *args, int limit)
{
    char errp[] = "/tmp/drift-hostile-err-XXXXXX";
    int fe = mkstemp(errp);
    assert_true(fe >= 0);
    close(fe);
    pid_t pid = hx_spawn(dir, args, errp);
    int st = 0, timed_out = 0;
    for (int t = 0; waitpid(pid, &st, WNOHANG) == 0; t++) {
        if (t >= limit * 100) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            timed_out = 1;
            break;
        }
        usleep(10000);
    }
    th_cli r = {timed_out       ? 124
                : WIFEXITED(st) ? WEXITSTATUS(st)
                                : 128 + WTERMSIG(st),
                strdup(""), th_slurp(errp)};
    unlink(errp);
    return r;
}

void hx_expect(const char *dir, const char *const *args, int status,
               const char *needle)
{
    th_cli r = hx_run(dir, args, 120);
    if (r.status != status || !strstr(r.err, needle))
        fail_msg("drift %s ... in %s: exit %d (expected %d), stderr:\n%s\n"
                 "(expected '%s')",
                 args[0], dir, r.status, status, r.err, needle);
    th_cli_free(&r);
}

void hx_make_ckpt(const char *dir, const char *stem, unsigned chains,
                  const char *iters)
{
    char out[256], ch[16], state[300];
    snprintf(out, sizeof out, "%s.csv", stem);
    snprintf(ch, sizeof ch, "%u", chains);
    /* An explicit step size: h=auto's pilots would delay the first
     * save. */
    const char *args[] = {"sample", "logistic.drift", "--data", "pima.csv",
                          "--sampler", "sgld", "--set", "h=1e-4",
                          "--batch", "20", "--chains", ch, "--seed", "3",
                          "--quiet", "--iter", iters,
                          "--thin", "1000", "--checkpoint-every", "20000",
                          "--out", out, NULL};
    pid_t pid = hx_spawn(dir, args, NULL);
    for (int t = 0; t < 6000; t++) {
        int all = 1;
        for (unsigned k = 1; k <= chains && all; k++) {
            snprintf(state, sizeof state, "%s.ckpt/chain_%u.state", stem, k);
            all = hx_exists(dir, state);
        }
        if (all)
            break;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            fail_msg("the checkpointed run ended before its first save "
                     "(status %d)",
                     st);
        usleep(10000);
    }
    /* The whole group: the guard's child holds the checkpoint's lock. */
    kill(-pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    for (int t = 0; t < 500 && kill(-pid, 0) == 0; t++)
        usleep(10000);
    snprintf(state, sizeof state, "%s.ckpt/run", stem);
    assert_true(hx_exists(dir, state));
}

void hx_replace(const char *dir, const char *name, const char *old,
                const char *new_text)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    assert_non_null(text);
    char *at = strstr(text, old);
    if (!at)
        fail_msg("%s holds no '%s'", p, old);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, new_text,
            at + strlen(old));
    assert_int_equal(fclose(f), 0);
    free(text);
    free(p);
}

void hx_copy_payload(const char *dir, const char *name)
{
    const char *tp = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (!tp || !*tp)
        fail_msg("DRIFT_TEST_PLUGIN_DIR is not set: run with make check");
    /* tests/plugins/.libs -> tests/plugins/hostile/.libs */
    size_t n = strlen(tp);
    if (n >= 6 && !strcmp(tp + n - 6, "/.libs"))
        n -= 6;
    char from[4200];
    snprintf(from, sizeof from, "%.*s/hostile/.libs/payload.so", (int)n, tp);
    FILE *in = fopen(from, "rb");
    if (!in)
        fail_msg("%s: %s (build it with make check)", from,
                 strerror(errno));
    char *to = hx_in(dir, name);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[1 << 14];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    chmod(to, 0755);
    free(to);
}

void hx_resum(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    assert_non_null(text);
    char *sum = strstr(text, "\nsum ");
    assert_non_null(sum);
    sum[1] = '\0';
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *q = (const unsigned char *)text; *q; q++) {
        h ^= *q;
        h *= 0x100000001b3ULL;
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "%ssum %016" PRIx64 "\n", text, h);
    assert_int_equal(fclose(f), 0);
    free(text);
    free(p);
}

/* How many temporary files (unnamed, or NAME.tmp.XXXXXX) directly in dir
 * the processes of group pgid hold open. */
static int open_under(pid_t pgid, const char *dir)
{
    DIR *procs = opendir("/proc");
    if (!procs)
        return 0;
    size_t len = strlen(dir);
    int n = 0;
    for (struct dirent *p; (p = readdir(procs));) {
        if (p->d_name[0] < '0' || p->d_name[0] > '9')
            continue;
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/%s/stat", p->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int pgrp = -1;
        if (fgets(line, sizeof line, f)) {
            const char *rp = strrchr(line, ')');
            if (rp)
                sscanf(rp + 2, "%*c %*d %d", &pgrp);
        }
        fclose(f);
        if (pgrp != (int)pgid)
            continue;
        snprintf(path, sizeof path, "/proc/%s/fd", p->d_name);
        DIR *fds = opendir(path);
        if (!fds)
            continue;
        for (struct dirent *d; (d = readdir(fds));) {
            char link[600], target[4200];
            snprintf(link, sizeof link, "%s/%s", path, d->d_name);
            ssize_t k = readlink(link, target, sizeof target - 1);
            if (k <= 0)
                continue;
            target[k] = '\0';
            n += !strncmp(target, dir, len) && target[len] == '/' &&
                 strchr(target + len + 1, '/') == NULL &&
                 (strstr(target, " (deleted)") || strstr(target, ".tmp."));
        }
        closedir(fds);
    }
    closedir(procs);
    return n;
}

int hx_wait_writing(pid_t pgid, const char *dir, int n, int limit)
{
    for (int t = 0; t < limit * 100; t++) {
        if (open_under(pgid, dir) >= n)
            return 1;
        usleep(10000);
    }
    return 0;
}
