/* resume.c: a checkpoint's manifest, DIR/run: the run's spec (its model,
 * data, sampler and options by name, with the seed it drew), the
 * directory it ran in, and fingerprints of the build, the model, the
 * data, the sampler plugin and the init file, so that `drift sample
 * --resume DIR` plans the same run again and refuses a checkpoint that
 * belongs to something else.  The
 * chains' own state is the engine's (engine/run/checkpoint.h).  Not for
 * parsing options (sample.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "resume.h"

#define MANIFEST_MAGIC "drift checkpoint 2"
/* A data file is fingerprinted by its size, its modification time and
 * the bytes of its first and last MiB: hashing tens of gigabytes on every
 * start would cost more than the checkpoint saves. */
#define EDGE_BYTES (1u << 20)
/* A manifest is a spec and a few fingerprints: more is not one. */
#define MANIFEST_MAX (1u << 20)

static uint64_t fnv_step(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Hash of bytes [from, to) of fd; 0 with errno set on a read error. */
static int hash_range(int fd, off_t from, off_t to, uint64_t *h)
{
    static unsigned char buf[1 << 16];
    while (from < to) {
        size_t want = (size_t)(to - from) < sizeof buf ? (size_t)(to - from)
                                                       : sizeof buf;
        ssize_t r = pread(fd, buf, want, from);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        *h = fnv_step(*h, buf, (size_t)r);
        from += r;
    }
    return 0;
}

/* "SIZE HASH" of a whole file, or with edges_only "SIZE MTIME HASH" of
 * its first and last EDGE_BYTES; "missing" when it cannot be read. */
static void fingerprint(const char *path, int edges_only, char *out,
                        size_t cap)
{
    /* Not blocking: a FIFO named here must not hang the start. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        snprintf(out, cap, "missing");
        return;
    }
    uint64_t h = 0xcbf29ce484222325ULL;
    off_t n = st.st_size;
    int rc;
    if (!edges_only || n <= 2 * (off_t)EDGE_BYTES) {
        rc = hash_range(fd, 0, n, &h);
    } else {
        rc = hash_range(fd, 0, EDGE_BYTES, &h);
        if (!rc)
            rc = hash_range(fd, n - EDGE_BYTES, n, &h);
    }
    close(fd);
    if (rc)
        snprintf(out, cap, "missing");
    else if (edges_only)
        snprintf(out, cap, "%lld %lld.%09ld %016" PRIx64, (long long)n,
                 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, h);
    else
        snprintf(out, cap, "%lld %016" PRIx64, (long long)n, h);
}

/* The manifest's "file" lines for in: "file KIND PATH\tFINGERPRINT". */
static void file_lines(const ckpt_inputs *in, FILE *f)
{
    char fp[128];
    fingerprint("/proc/self/exe", 0, fp, sizeof fp);
    fprintf(f, "file build %s\t%s\n", "drift " PACKAGE_VERSION, fp);
    if (in->model) {
        fingerprint(in->model, 0, fp, sizeof fp);
        fprintf(f, "file model %s\t%s\n", in->model, fp);
    }
    for (size_t k = 0; k < in->n_data; k++) {
        fingerprint(in->data[k], 1, fp, sizeof fp);
        fprintf(f, "file data %s\t%s\n", in->data[k], fp);
    }
    if (in->sampler) {
        fingerprint(in->sampler, 0, fp, sizeof fp);
        fprintf(f, "file sampler %s\t%s\n", in->sampler, fp);
    }
    if (in->init) {
        fingerprint(in->init, 0, fp, sizeof fp);
        fprintf(f, "file init %s\t%s\n", in->init, fp);
    }
}

void ckpt_dir_for(const char *out, char *buf, size_t cap)
{
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(out, '.');
    size_t stem = dot && dot > (slash ? slash : out) ? (size_t)(dot - out)
                                                     : strlen(out);
    snprintf(buf, cap, "%.*s.ckpt", (int)stem, out);
}

/* The spec's strings (and the directory) are written one per line with
 * backslash and newline escaped. */
static void put_line(FILE *f, const char *key, const char *a)
{
    fputs(key, f);
    for (; *a; a++) {
        if (*a == '\\')
            fputs("\\\\", f);
        else if (*a == '\n')
            fputs("\\n", f);
        else
            fputc(*a, f);
    }
    fputc('\n', f);
}

/* An option's line: "option NAME" for a flag, "option NAME VALUE". */
static void put_option(FILE *f, const char *name, const char *value)
{
    char key[96];
    snprintf(key, sizeof key, "option %s%s", name, value ? " " : "");
    put_line(f, key, value ? value : "");
}

/* The spec's lines, as ckpt_parse reads them back. */
static void put_spec(FILE *f, const drift_spec *spec)
{
    if (spec->model)
        put_line(f, "model ", spec->model);
    for (size_t k = 0; k < spec->n_data; k++)
        put_line(f, "data ", spec->data[k]);
    if (spec->sampler)
        put_line(f, "sampler ", spec->sampler);
    for (size_t k = 0; k < spec->n_options; k++)
        put_option(f, spec->options[k].name, spec->options[k].value);
}

/* Holds the manifest open with an exclusive lock for the run's life (the
 * descriptor is left open on purpose, and shared with the guard's child):
 * two runs never write one checkpoint. */
static int lock_manifest(const char *dir, const char *path, int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr,
                "drift sample: the checkpoint %s is in use by another "
                "drift process (%s is locked); wait for it to end\n",
                dir, path);
        return EXIT_USAGE;
    }
    return 0;
}

int ckpt_start(const char *dir, const drift_spec *spec, uint64_t seed,
               int have_seed, const ckpt_inputs *in)
{
    char path[4200], tmp[4220], cwd[4096];
    snprintf(path, sizeof path, "%s/run", dir);
    if (access(path, F_OK) == 0) {
        fprintf(stderr,
                "drift sample: %s holds the checkpoint of a run that did not "
                "finish: continue it with 'drift sample --resume %s', or "
                "remove the directory to start again\n",
                dir, dir);
        return EXIT_USAGE;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "drift sample: --checkpoint-every: cannot create %s: "
                        "%s\n",
                dir, strerror(errno));
        return EXIT_USAGE;
    }
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "drift sample: --checkpoint-every: the working "
                        "directory: %s\n",
                strerror(errno));
        return EXIT_USAGE;
    }
    snprintf(tmp, sizeof tmp, "%s/run.tmp", dir);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fprintf(stderr, "drift sample: --checkpoint-every: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    fprintf(f, "%s\n", MANIFEST_MAGIC);
    put_line(f, "# continue this run with: drift sample --resume ", dir);
    put_line(f, "cwd ", cwd);
    file_lines(in, f);
    put_spec(f, spec);
    if (!have_seed) {
        char s[32];
        snprintf(s, sizeof s, "%" PRIu64, seed);
        put_option(f, "seed", s);
    }
    if (fclose(f) != 0 || !text) {
        free(text);
        fprintf(stderr, "drift sample: --checkpoint-every: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    /* The last line sums the others: a changed byte is refused. */
    uint64_t h = fnv_step(0xcbf29ce484222325ULL, (const unsigned char *)text,
                          len);
    f = fopen(tmp, "w");
    int bad = !f;
    if (f) {
        bad |= fwrite(text, 1, len, f) != len;
        bad |= fprintf(f, "sum %016" PRIx64 "\n", h) < 0;
        bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
        bad |= fclose(f) != 0;
    }
    free(text);
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "drift sample: --checkpoint-every: %s: %s\n", path,
                strerror(errno));
        unlink(tmp);
        return EXIT_USAGE;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? EXIT_USAGE : lock_manifest(dir, path, fd);
}

/* All of the manifest path into *buf, *n bytes (NUL-terminated after
 * them).  0, or an exit status (message printed). */
static int read_manifest(const char *dir, const char *path, char **buf,
                         size_t *n)
{
    *buf = NULL;
    *n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int err = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "drift sample: --resume %s: no checkpoint there "
                        "(%s: %s)\n",
                dir, path, err ? strerror(err) : "not a regular file");
        return EXIT_USAGE;
    }
    if (st.st_size > (off_t)MANIFEST_MAX) {
        close(fd);
        fprintf(stderr, "drift sample: --resume %s: %s is %lld bytes, more "
                        "than a checkpoint manifest holds (%u): not a drift "
                        "checkpoint manifest\n",
                dir, path, (long long)st.st_size, MANIFEST_MAX);
        return EXIT_USAGE;
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *b = malloc(size + 1);
    if (!b) {
        close(fd);
        fprintf(stderr, "drift sample: --resume: out of memory\n");
        return EXIT_RUN_FAILED;
    }
    while (got < size) {
        ssize_t r = read(fd, b + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    b[got] = '\0';
    *buf = b;
    *n = got;
    return 0;
}

/* An argument or the directory as put_line wrote it: "\\" and "\n" are
 * the only escapes.  NULL (errno EINVAL) for any other, or ENOMEM. */
static char *unescape(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *end = s + n; s < end; s++) {
        if (*s != '\\') {
            *o++ = *s;
            continue;
        }
        if (s + 1 == end || (s[1] != '\\' && s[1] != 'n')) {
            free(out);
            errno = EINVAL;
            return NULL;
        }
        s++;
        *o++ = *s == 'n' ? '\n' : '\\';
    }
    *o = '\0';
    return out;
}

/* Whether a "file" line's rest (n bytes) is "KIND PATH\tFINGERPRINT"
 * with a kind file_lines writes. */
static int file_line_ok(const char *s, size_t n)
{
    static const char *const kinds[] = {"build ", "model ", "data ",
                                        "sampler ", "init "};
    /* The fingerprint holds no tab; a path may. */
    const char *tab = s + n;
    while (tab > s && tab[-1] != '\t')
        tab--;
    if (tab == s || tab == s + n)
        return 0;
    tab--;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t m = strlen(kinds[k]);
        if ((size_t)(tab - s) > m && !memcmp(s, kinds[k], m))
            return 1;
    }
    return 0;
}

/* *out from the escaped n bytes at s: 0, 1 where *out was set already or
 * an escape is malformed, -1 out of memory. */
static int take_string(char **out, const char *s, size_t n)
{
    if (*out)
        return 1;
    char *v = unescape(s, n);
    if (!v)
        return errno == ENOMEM ? -1 : 1;
    *out = v;
    return 0;
}

/* An option line's rest (n bytes at s): "NAME" or "NAME VALUE", the name
 * lower-case letters, digits and dashes.  0, 1 malformed, -1 out of
 * memory. */
static int take_option(ckpt_command *cmd, const char *s, size_t n)
{
    size_t m = 0;
    while (m < n && s[m] != ' ')
        m++;
    if (m == 0 || m > 64)
        return 1;
    for (size_t k = 0; k < m; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= '0' && s[k] <= '9') ||
              s[k] == '-'))
            return 1;
    drift_option *o = realloc(cmd->opts, (cmd->n_opts + 1) * sizeof *o);
    if (!o)
        return -1;
    cmd->opts = o;
    char *name = strndup(s, m), *value = NULL;
    if (!name)
        return -1;
    if (m < n && !(value = unescape(s + m + 1, n - m - 1))) {
        free(name);
        return errno == ENOMEM ? -1 : 1;
    }
    o[cmd->n_opts++] = (drift_option){name, value};
    return 0;
}

void ckpt_spec(const ckpt_command *cmd, drift_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->model = cmd->model;
    spec->sampler = cmd->sampler;
    spec->data = (const char *const *)cmd->data;
    spec->n_data = cmd->n_data;
    spec->options = cmd->opts;
    spec->n_options = cmd->n_opts;
}

int ckpt_parse(const char *text, size_t n, ckpt_command *cmd, char *cwd,
               size_t cwd_cap, char *why, size_t why_cap)
{
    int rc;
    memset(cmd, 0, sizeof *cmd);
    if (cwd_cap)
        cwd[0] = '\0';
    size_t magic = strlen(MANIFEST_MAGIC);
    if (n < magic + 1 || memcmp(text, MANIFEST_MAGIC, magic) ||
        text[magic] != '\n' || memchr(text, '\0', n)) {
        snprintf(why, why_cap, "is not a drift checkpoint manifest");
        return EXIT_USAGE;
    }
    /* The last line: "sum HASH" of every byte before it. */
    const char *last = n >= 2 ? text + n - 2 : text;
    while (last > text && *last != '\n')
        last--;
    last++;
    uint64_t want = 0;
    int ok = text[n - 1] == '\n' && text + n - last == 21 &&
             !memcmp(last, "sum ", 4);
    for (int k = 4; ok && k < 20; k++) {
        char ch = last[k];
        int v = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                         : -1;
        ok = v >= 0;
        want = want << 4 | (uint64_t)(ok ? v : 0);
    }
    if (!ok ||
        fnv_step(0xcbf29ce484222325ULL, (const unsigned char *)text,
                 (size_t)(last - text)) != want) {
        snprintf(why, why_cap, "is damaged (its checksum does not match): "
                               "the command cannot be trusted to be the "
                               "run's");
        return EXIT_USAGE;
    }
    int have_cwd = 0;
    const char *bad = NULL;
    for (const char *line = text + magic + 1; line < last && !bad;) {
        const char *nl = memchr(line, '\n', (size_t)(last - line));
        size_t len = (size_t)(nl - line);
        if (len >= 4 && !memcmp(line, "cwd ", 4)) {
            char *v = unescape(line + 4, len - 4);
            if (!v && errno == ENOMEM)
                goto oom;
            if (!v || have_cwd || !v[0] || strlen(v) >= cwd_cap ||
                v[0] != '/')
                bad = "its directory line";
            else
                memcpy(cwd, v, strlen(v) + 1);
            free(v);
            have_cwd = 1;
        } else if (len >= 6 && !memcmp(line, "model ", 6)) {
            if ((rc = take_string(&cmd->model, line + 6, len - 6)) < 0)
                goto oom;
            if (rc)
                bad = "the model line";
        } else if (len >= 8 && !memcmp(line, "sampler ", 8)) {
            if ((rc = take_string(&cmd->sampler, line + 8, len - 8)) < 0)
                goto oom;
            if (rc)
                bad = "the sampler line";
        } else if (len >= 5 && !memcmp(line, "data ", 5)) {
            char **d = realloc(cmd->data, (cmd->n_data + 1) * sizeof *d);
            if (!d)
                goto oom;
            cmd->data = d;
            d[cmd->n_data] = NULL;
            if ((rc = take_string(&d[cmd->n_data], line + 5, len - 5)) < 0)
                goto oom;
            if (rc)
                bad = "a data line";
            else
                cmd->n_data++;
        } else if (len >= 7 && !memcmp(line, "option ", 7)) {
            if ((rc = take_option(cmd, line + 7, len - 7)) < 0)
                goto oom;
            if (rc)
                bad = "an option";
        } else if (len >= 5 && !memcmp(line, "file ", 5)) {
            if (!file_line_ok(line + 5, len - 5)) {
                bad = "a file line";
            } else {
                char *l = strndup(line, len);
                char **x = realloc(cmd->files,
                                   (cmd->n_files + 1) * sizeof *x);
                if (x)
                    cmd->files = x;
                if (!l || !x) {
                    free(l);
                    goto oom;
                }
                x[cmd->n_files++] = l;
            }
        } else if (len == 0 || line[0] != '#') {
            bad = "a line drift does not write";
        }
        line = nl + 1;
    }
    if (bad) {
        ckpt_command_free(cmd);
        snprintf(why, why_cap, "is not a manifest drift wrote (%s is "
                               "malformed)",
                 bad);
        return EXIT_USAGE;
    }
    if (!cmd->model || !have_cwd) {
        ckpt_command_free(cmd);
        snprintf(why, why_cap, "is incomplete (no model or directory)");
        return EXIT_USAGE;
    }
    return 0;
oom:
    ckpt_command_free(cmd);
    snprintf(why, why_cap, "out of memory");
    return EXIT_RUN_FAILED;
}

int ckpt_load(const char *dir, ckpt_command *cmd)
{
    char path[4200];
    memset(cmd, 0, sizeof *cmd);
    snprintf(path, sizeof path, "%s/run", dir);
    char *text;
    size_t n;
    int rc = read_manifest(dir, path, &text, &n);
    if (rc)
        return rc;
    char cwd[4096], why[200];
    rc = ckpt_parse(text, n, cmd, cwd, sizeof cwd, why, sizeof why);
    free(text);
    if (rc == EXIT_RUN_FAILED) {
        fprintf(stderr, "drift sample: --resume: out of memory\n");
        return rc;
    }
    if (rc) {
        fprintf(stderr, "drift sample: --resume %s: %s %s", dir, path, why);
        if (!strncmp(why, "is damaged", 10))
            fprintf(stderr, "; start the run again (remove %s)", dir);
        fputc('\n', stderr);
        return rc;
    }
    /* The command's paths are relative to where it ran. */
    if (chdir(cwd) != 0) {
        fprintf(stderr, "drift sample: --resume %s: the run's directory %s: "
                        "%s\n",
                dir, cwd, strerror(errno));
        ckpt_command_free(cmd);
        return EXIT_USAGE;
    }
    return 0;
}

void ckpt_command_free(ckpt_command *cmd)
{
    free(cmd->model);
    free(cmd->sampler);
    for (size_t k = 0; k < cmd->n_data; k++)
        free(cmd->data[k]);
    free(cmd->data);
    for (size_t k = 0; k < cmd->n_opts; k++) {
        free((char *)cmd->opts[k].name);
        free((char *)cmd->opts[k].value);
    }
    free(cmd->opts);
    for (size_t k = 0; k < cmd->n_files; k++)
        free(cmd->files[k]);
    free(cmd->files);
    memset(cmd, 0, sizeof *cmd);
}

int ckpt_check(const char *dir, const ckpt_command *cmd,
               const ckpt_inputs *in)
{
    char *now = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&now, &len);
    if (!f)
        return EXIT_RUN_FAILED;
    file_lines(in, f);
    fclose(f);
    /* Each saved line must be among today's, and as many of them. */
    size_t n_now = 0;
    int rc = 0;
    for (char *l = now; *l; l = strchr(l, '\n') + 1)
        n_now++;
    for (size_t k = 0; k < cmd->n_files && !rc; k++) {
        const char *saved = cmd->files[k];
        size_t n = strlen(saved);
        const char *hit = NULL;
        for (const char *l = now; *l; l = strchr(l, '\n') + 1)
            if (!strncmp(l, saved, n) && l[n] == '\n')
                hit = l;
        if (hit)
            continue;
        /* Name what differs: the kind and path before the tab. */
        const char *tab = strchr(saved, '\t');
        int head = tab ? (int)(tab - saved) - 5 : (int)n - 5;
        if (!strncmp(saved, "file build ", 11))
            fprintf(stderr,
                    "drift sample: --resume %s: refused: the checkpoint was "
                    "written by another build of drift (the program was "
                    "rebuilt or upgraded since); finish the run with that "
                    "build, or start it again (remove %s)\n",
                    dir, dir);
        else
            fprintf(stderr,
                    "drift sample: --resume %s: refused: the %.*s changed "
                    "since the checkpoint was written, so the run cannot go "
                    "on as it began; start it again (remove %s)\n",
                    dir, head, saved + 5, dir);
        rc = EXIT_USAGE;
    }
    if (!rc && n_now != cmd->n_files) {
        fprintf(stderr, "drift sample: --resume %s: refused: the run's "
                        "inputs are not those the checkpoint was written "
                        "for\n",
                dir);
        rc = EXIT_USAGE;
    }
    free(now);
    if (rc)
        return rc;
    char path[4200];
    snprintf(path, sizeof path, "%s/run", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "drift sample: --resume %s: %s: %s\n", dir, path,
                strerror(errno));
        return EXIT_USAGE;
    }
    return lock_manifest(dir, path, fd);
}

int ckpt_check_plugin(const char *dir, const ckpt_command *cmd,
                      const char *kind, const char *spec)
{
    if (!spec || !strchr(spec, '/'))
        return 0; /* a name: found on the plugin search path */
    char file[4096];
    snprintf(file, sizeof file, "%s", spec);
    /* A sampler may be picked from a file as PATH:NAME. */
    char *colon = strrchr(file, ':');
    if (colon && !strchr(colon, '/'))
        *colon = '\0';
    char want[4200];
    int n = snprintf(want, sizeof want, "file %s %s\t", kind, file);
    for (size_t k = 0; k < cmd->n_files; k++) {
        if (strncmp(cmd->files[k], want, (size_t)n))
            continue;
        char now[128];
        fingerprint(file, 0, now, sizeof now);
        if (!strcmp(cmd->files[k] + n, now))
            return 0;
        fprintf(stderr,
                "drift sample: --resume %s: refused: the %s plugin %s is not "
                "the file the checkpoint was written with (its size or "
                "contents changed); it is not loaded\n",
                dir, kind, file);
        return EXIT_USAGE;
    }
    fprintf(stderr,
            "drift sample: --resume %s: refused: the checkpoint's command "
            "loads the %s plugin %s, which its manifest does not list (the "
            "manifest %s/run was altered); it is not loaded\n",
            dir, kind, file, dir);
    return EXIT_USAGE;
}

void ckpt_remove(const char *dir, unsigned first_id, unsigned chains)
{
    char path[4200];
    for (unsigned k = 0; k < chains; k++) {
        snprintf(path, sizeof path, "%s/chain_%u.state", dir, first_id + k);
        unlink(path);
        snprintf(path, sizeof path, "%s/chain_%u.state.tmp", dir,
                 first_id + k);
        unlink(path);
        snprintf(path, sizeof path, "%s/chain_%u.rows", dir, first_id + k);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/run", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/run.tmp", dir);
    unlink(path);
    rmdir(dir);
}
