/* plugin.c: finding, opening and checking plugins.  A descriptor's ABI
 * version is the first thing read and a mismatch is refused before any
 * other field is touched; then its size and build facts; then its tables.
 * Nothing of a refused plugin is ever called again.  Only regular files
 * are opened; scans inspect each plugin in a child process first, and
 * names are looked up as NAME.so before any scan.  Not for running
 * samplers or models. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "chain.h"
#include "hparam.h"
#include "plugin.h"

/* The sizes of the descriptors as ABI version 2 first defined them.  A
 * plugin built with those headers stays loadable after fields are
 * appended (which does not bump the version): the engine reads what the
 * plugin's declared sizes say it has and zero-fills the rest, so every
 * appended field must mean "as before" when zero.  A plugin built with
 * later headers of the same version declares larger sizes; the fields this
 * engine does not know are ignored. */
#define SAMPLER_V2_SIZE                                                    \
    (offsetof(drift_sampler, setup) + sizeof(((drift_sampler *)0)->setup))
#define PLUGIN_V2_SIZE                                                     \
    (offsetof(drift_sampler_plugin, samplers) +                            \
     sizeof(((drift_sampler_plugin *)0)->samplers))

/* Bounds on what a descriptor may declare.  A count larger than its
 * table would make the loader read past the table; these bounds, and the
 * probes below, turn such a count into a refusal. */
#define MAX_SAMPLERS 64
#define MAX_TABLE 256           /* hyperparameters, columns, model options */
#define MAX_ENTRY_SIZE 65536    /* a drift_sampler entry's declared size */
#define MAX_STRING 4096         /* a name, summary or documentation line */

/* Copies the n bytes at p to dst (NULL: only checks them); 1 when they
 * can be read, 0 when not.  Tables and strings a descriptor
 * points to are probed before they are read, so that a count past the end
 * of a table or a stray pointer is refused with a message rather than
 * crashing every command that scans the plugin directory.  (Readable
 * memory past a table's end can still hold anything; the checks of each
 * entry then refuse it.)  The probe copies the bytes into a pipe: the
 * kernel reports an unreadable address as EFAULT where a read would be a
 * segmentation fault. */
static int copy_in(void *dst, const void *p, size_t n)
{
    if (!p)
        return 0;
    if ((uintptr_t)p + n < (uintptr_t)p)
        return 0;
    int fd[2];
    if (pipe2(fd, O_NONBLOCK | O_CLOEXEC)) {
        if (dst) /* cannot probe: trust the plugin, as before */
            memcpy(dst, p, n);
        return 1;
    }
    int ok = 1;
    const char *q = p;
    char sink[4096], *to = dst;
    while (n > 0 && ok) {
        size_t k = n < sizeof sink ? n : sizeof sink; /* <= PIPE_BUF */
        /* The system calls themselves, not the C library's: under
         * AddressSanitizer the library's are intercepted, and the check of
         * their buffers would report the very read this probe makes safe
         * (bytes past a global table are its red zone). */
        ssize_t w = syscall(SYS_write, fd[1], q, k);
        ok = w == (ssize_t)k;
        if (w > 0 && syscall(SYS_read, fd[0], to ? to : sink, (size_t)w) != w)
            ok = 0;
        q += k;
        if (to)
            to += k;
        n -= k;
    }
    close(fd[0]);
    close(fd[1]);
    return ok;
}

static int mapped(const void *p, size_t n) { return copy_in(NULL, p, n); }

/* 1 when s is a NUL-terminated string of at most MAX_STRING bytes in
 * mapped memory (read through copy_in, a page at a time). */
static int mapped_string(const char *s)
{
    if (!s)
        return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const char *p = s;
    char buf[4096];
    while (p - s <= MAX_STRING) {
        uintptr_t left = page - ((uintptr_t)p & (page - 1));
        if (left > sizeof buf)
            left = sizeof buf;
        if (!copy_in(buf, p, left))
            return 0;
        const char *nul = memchr(buf, '\0', left);
        if (nul)
            return (p - s) + (nul - buf) <= MAX_STRING;
        p += left;
    }
    return 0;
}

/* Probes a hyperparameter (or option) table before it is read: its n
 * entries, and every string they point to.  `what` names the count for
 * the message ("n_hparams"). */
static int probe_hparams(const drift_hparam *t, size_t n, const char *who,
                         const char *what, drift_err *e)
{
    if (n > MAX_TABLE)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: declares %s = %zu, more than the %d "
                             "allowed",
                             who, what, n, MAX_TABLE);
    if (n && !mapped(t, n * sizeof *t))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: its table of %s = %zu entries runs into "
                             "unmapped memory (is the count right?)",
                             who, what, n);
    for (size_t k = 0; k < n; k++) {
        drift_hparam h; /* read through the probe: t may lie about n */
        if (!copy_in(&h, &t[k], sizeof h) || !mapped_string(h.name) ||
            (h.choices && !mapped_string(h.choices)) ||
            (h.doc && !mapped_string(h.doc)))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: entry %zu of its %s = %zu has a name, "
                                 "choices or doc that is not a string in "
                                 "memory (is the count right?)",
                                 who, k + 1, what, n);
    }
    return DRIFT_OK;
}

typedef struct loaded_file {
    char *path;     /* as given/found */
    char *real;     /* realpath, to load each file once */
    void *handle;
} loaded_file;

struct drift_registry {
    loaded_file *files;
    size_t n_files, cap_files;
    drift_sampler_entry *samplers;
    size_t n_samplers, cap_samplers;
    drift_model_entry *models;
    size_t n_models, cap_models;
    char **problems;
    size_t n_problems, cap_problems;
    char *search_path;
    int scanned;    /* drift_registry_scan ran: names resolve in memory */
};

drift_registry *drift_registry_new(void)
{
    return drift_calloc(1, sizeof(drift_registry));
}

void drift_registry_free(drift_registry *r)
{
    if (!r)
        return;
    for (size_t k = 0; k < r->n_files; k++) {
        if (r->files[k].handle)
            dlclose(r->files[k].handle);
        drift_free(r->files[k].path);
        drift_free(r->files[k].real);
    }
    for (size_t k = 0; k < r->n_problems; k++)
        drift_free(r->problems[k]);
    drift_free(r->files);
    drift_free(r->samplers);
    drift_free(r->models);
    drift_free(r->problems);
    drift_free(r->search_path);
    drift_free(r);
}

/* Grows *arr (of elements of size sz) to hold one more. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    void *p = drift_realloc(*arr, nc * sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

static void add_problem(drift_registry *r, const char *msg)
{
    if (grow((void **)&r->problems, &r->cap_problems, r->n_problems,
             sizeof(char *)))
        return;
    char *m = drift_strdup(msg);
    if (m)
        r->problems[r->n_problems++] = m;
}

static int valid_plugin_name(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (; *s; s++) {
        char ch = *s;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
              ch == '+' || ch == '.'))
            return 0;
    }
    return 1;
}

/* Checks one sampler descriptor (already copied into engine layout). */
static int check_sampler(const drift_sampler *s, const char *path,
                         drift_err *e)
{
    if (!mapped_string(s->name))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: a sampler's name is not a string in "
                             "memory (is n_samplers right?)",
                             path);
    if (!valid_plugin_name(s->name))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: a sampler has an invalid name '%s' "
                             "(letters, digits, '_', '-', '+', '.')",
                             path, s->name ? s->name : "(null)");
    if (!mapped_string(s->summary))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: sampler '%s' has no summary", path,
                             s->name);
    if (!s->init || !s->step)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: sampler '%s' lacks its %s function", path,
                             s->name, s->init ? "step" : "init");
    if (s->state_size > ((size_t)1 << 30))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: sampler '%s' declares an implausible state "
                             "size of %zu bytes",
                             path, s->name, s->state_size);
    char who[4400];
    snprintf(who, sizeof who, "%s: sampler '%s'", path, s->name);
    int rc = probe_hparams(s->hparams, s->n_hparams, who, "n_hparams", e);
    if (rc || (rc = drift_hparams_check(s->hparams, s->n_hparams, who, e)))
        return rc;
    if (s->n_columns && !s->columns)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: declares %zu columns but no names", who,
                             s->n_columns);
    if (s->n_columns > MAX_TABLE)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: declares n_columns = %zu, more than the %d "
                             "allowed",
                             who, s->n_columns, MAX_TABLE);
    if (s->n_columns && !mapped(s->columns, s->n_columns * sizeof(char *)))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: its table of n_columns = %zu names runs "
                             "into unmapped memory (is the count right?)",
                             who, s->n_columns);
    for (size_t k = 0; k < s->n_columns; k++) {
        const char *c = NULL; /* through the probe: the count may lie */
        if (!copy_in(&c, &s->columns[k], sizeof c) ||
            (c && !mapped_string(c)))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: column %zu of n_columns = %zu is not a "
                                 "string in memory (is the count right?)",
                                 who, k + 1, s->n_columns);
        size_t len = c ? strlen(c) : 0;
        if (len < 3 || strcmp(c + len - 2, "__") != 0)
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: diagnostic column '%s' must end in "
                                 "\"__\"",
                                 who, c ? c : "(null)");
        /* '#' only as a vector column's "name.#__". */
        const char *hash = strchr(c, '#');
        if (hash && (!drift_chain_column_is_vector(c) || len < 5 ||
                     strchr(hash + 1, '#')))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: diagnostic column '%s': '#' is only "
                                 "allowed as \"name.#__\", one column per "
                                 "coordinate",
                                 who, c);
        if (!strcmp(c, "lp__") || !strcmp(c, "grads__"))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: column '%s' is the engine's", who, c);
        for (size_t j = 0; j < k; j++)
            if (!strcmp(s->columns[j], c))
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: column '%s' is declared twice",
                                     who, c);
    }
    return DRIFT_OK;
}

static int check_model(const drift_model_plugin *m, const char *path,
                       drift_err *e)
{
    if (!mapped_string(m->name))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model's name is not a string in "
                             "memory",
                             path);
    if (!valid_plugin_name(m->name))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: the model has an invalid name '%s'", path,
                             m->name ? m->name : "(null)");
    if (!mapped_string(m->summary) || !m->create)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: model '%s' lacks its %s", path, m->name,
                             m->summary ? "create function" : "summary");
    char who[4400];
    snprintf(who, sizeof who, "%s: model '%s'", path, m->name);
    int rc = probe_hparams(m->options, m->n_options, who, "n_options", e);
    return rc ? rc : drift_hparams_check(m->options, m->n_options, who, e);
}

static int version_refusal(const char *path, const char *kind, uint32_t got,
                           uint32_t want, drift_err *e)
{
    return drift_err_set(e, DRIFT_EPLUGIN,
                         "%s: refused: built for drift %s ABI version %u, "
                         "but this drift loads version %u; rebuild it "
                         "against this drift's headers (pkg-config --cflags "
                         "drift)",
                         path, kind, got, want);
}

static int fact_refusal(const char *path, const char *fact, uint32_t got,
                        uint32_t want, drift_err *e)
{
    return drift_err_set(e, DRIFT_EPLUGIN,
                         "%s: refused: built with %s = %u, this drift has "
                         "%u; rebuild it for this platform",
                         path, fact, got, want);
}

/* Adds the samplers of a sampler plugin descriptor. */
static int take_samplers(drift_registry *r, const char *path,
                         const char *license,
                         const drift_sampler_plugin *d, int strict,
                         drift_err *e)
{
    uint32_t version;
    if (!mapped(d, sizeof version))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: %s() returned a pointer to "
                             "unmapped memory",
                             path, DRIFT_SAMPLER_ENTRY);
    memcpy(&version, d, sizeof version); /* the first field, read alone */
    if (version != DRIFT_SAMPLER_ABI_VERSION)
        return version_refusal(path, "sampler", version,
                               DRIFT_SAMPLER_ABI_VERSION, e);
    if (!mapped(d, PLUGIN_V2_SIZE) || d->struct_size < PLUGIN_V2_SIZE)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: descriptor is %u bytes, expected "
                             "at least %zu for ABI version %u",
                             path, d->struct_size, (size_t)PLUGIN_V2_SIZE,
                             version);
    if (d->size_t_size != sizeof(size_t))
        return fact_refusal(path, "sizeof(size_t)", d->size_t_size,
                            (uint32_t)sizeof(size_t), e);
    if (d->double_size != sizeof(double))
        return fact_refusal(path, "sizeof(double)", d->double_size,
                            (uint32_t)sizeof(double), e);
    if (d->services_version > DRIFT_SERVICES_VERSION)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: it needs drift's services version "
                             "%u, but this drift offers version %u; upgrade "
                             "drift, or rebuild the plugin against this "
                             "drift's headers (pkg-config --cflags drift)",
                             path, d->services_version,
                             DRIFT_SERVICES_VERSION);
    if (d->sampler_size < SAMPLER_V2_SIZE || d->sampler_size > MAX_ENTRY_SIZE)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: its drift_sampler is %u bytes, "
                             "expected at least %zu for ABI version %u",
                             path, d->sampler_size, (size_t)SAMPLER_V2_SIZE,
                             version);
    if (d->n_samplers == 0 || !d->samplers)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: the descriptor lists no samplers",
                             path);
    if (d->n_samplers > MAX_SAMPLERS)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: n_samplers = %zu, more than the "
                             "%d allowed",
                             path, d->n_samplers, MAX_SAMPLERS);
    if (!mapped(d->samplers, d->n_samplers * d->sampler_size))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: its table of n_samplers = %zu "
                             "entries runs into unmapped memory (is the "
                             "count right?)",
                             path, d->n_samplers);
    /* Check every sampler before adding any, so a plugin is all or
     * nothing. */
    drift_sampler *copies = drift_calloc(d->n_samplers, sizeof *copies);
    if (!copies)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    char where[4200];
    snprintf(where, sizeof where, "%s: refused", path);
    for (size_t k = 0; k < d->n_samplers; k++) {
        /* Entries are sampler_size bytes apart; copy what both layouts
         * share (copies[] is zeroed, so fields the plugin lacks read 0). */
        const char *src = (const char *)d->samplers + k * d->sampler_size;
        size_t have = d->sampler_size < sizeof(drift_sampler)
                          ? d->sampler_size
                          : sizeof(drift_sampler);
        memcpy(&copies[k], src, have);
        int rc = check_sampler(&copies[k], where, e);
        if (rc) {
            drift_free(copies);
            return rc;
        }
        for (size_t j = 0; j < k; j++)
            if (!strcmp(copies[j].name, copies[k].name)) {
                drift_free(copies);
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: refused: sampler '%s' is listed "
                                     "twice",
                                     path, copies[k].name);
            }
    }
    for (size_t k = 0; k < d->n_samplers; k++) {
        const drift_sampler_entry *prev = NULL;
        int again = 0;
        for (size_t j = 0; j < r->n_samplers; j++)
            if (!strcmp(r->samplers[j].s.name, copies[k].name)) {
                if (r->samplers[j].path == path)
                    again = 1; /* this file's, registered before */
                else if (!prev)
                    prev = &r->samplers[j];
            }
        if (again)
            continue;
        if (prev) {
            char msg[1024];
            snprintf(msg, sizeof msg,
                     "sampler '%s' in %s is shadowed by the one in %s, "
                     "which was found first (the install directory is "
                     "searched before DRIFT_PLUGIN_PATH, whose directories "
                     "are searched left to right)",
                     copies[k].name, path, prev->path);
            /* A file loaded by explicit path is registered regardless:
             * lookups by its path find its entries, lookups by name the
             * first found. */
            if (!strict) {
                add_problem(r, msg);
                continue;
            }
        }
        if (grow((void **)&r->samplers, &r->cap_samplers, r->n_samplers,
                 sizeof *r->samplers)) {
            drift_free(copies);
            return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
        }
        r->samplers[r->n_samplers].s = copies[k];
        r->samplers[r->n_samplers].path = path;
        r->samplers[r->n_samplers].license = license;
        r->n_samplers++;
    }
    drift_free(copies);
    return DRIFT_OK;
}

static int take_model(drift_registry *r, const char *path,
                      const char *license,
                      const drift_model_plugin *m, int strict, drift_err *e)
{
    uint32_t version;
    if (!mapped(m, sizeof version))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: %s() returned a pointer to "
                             "unmapped memory",
                             path, DRIFT_MODEL_ENTRY);
    memcpy(&version, m, sizeof version);
    if (version != DRIFT_MODEL_ABI_VERSION)
        return version_refusal(path, "model", version,
                               DRIFT_MODEL_ABI_VERSION, e);
    if (!mapped(m, sizeof(drift_model_plugin)) ||
        m->struct_size < sizeof(drift_model_plugin))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: descriptor is %u bytes, expected "
                             "at least %zu",
                             path, m->struct_size,
                             sizeof(drift_model_plugin));
    if (m->size_t_size != sizeof(size_t))
        return fact_refusal(path, "sizeof(size_t)", m->size_t_size,
                            (uint32_t)sizeof(size_t), e);
    if (m->double_size != sizeof(double))
        return fact_refusal(path, "sizeof(double)", m->double_size,
                            (uint32_t)sizeof(double), e);
    char where[4200];
    snprintf(where, sizeof where, "%s: refused", path);
    int rc = check_model(m, where, e);
    if (rc)
        return rc;
    for (size_t j = 0; j < r->n_models; j++)
        if (!strcmp(r->models[j].m->name, m->name) &&
            r->models[j].path == path)
            return DRIFT_OK; /* this file's, registered before */
    for (size_t j = 0; j < r->n_models; j++)
        if (!strcmp(r->models[j].m->name, m->name)) {
            char msg[1024];
            snprintf(msg, sizeof msg,
                     "model '%s' in %s is shadowed by the one in %s, which "
                     "was found first",
                     m->name, path, r->models[j].path);
            if (!strict) {
                add_problem(r, msg);
                return DRIFT_OK;
            }
            break;
        }
    if (grow((void **)&r->models, &r->cap_models, r->n_models,
             sizeof *r->models))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    r->models[r->n_models].m = m;
    r->models[r->n_models].path = path;
    r->models[r->n_models].license = license;
    r->n_models++;
    return DRIFT_OK;
}

/* The licence an opened plugin states (DRIFT_PLUGIN_LICENSE), or NULL. */
static const char *license_of(void *handle)
{
    const char *l = dlsym(handle, DRIFT_LICENSE_SYMBOL);
    /* A statement, not a document: a short printable line. */
    if (!l)
        return NULL;
    size_t n = 0;
    while (n < 80 && l[n] >= ' ' && l[n] < 127)
        n++;
    return n > 0 && l[n] == '\0' ? l : NULL;
}

/* Registers what an opened file offers.  Run again on a file already
 * open (an explicit path to a file a scan loaded), it registers what the
 * scan left out, such as samplers shadowed by name. */
static int take_file(drift_registry *r, loaded_file *f, int strict,
                     drift_err *e)
{
    /* dlsym returns void *; converting it to a function pointer is what
     * POSIX requires to work. */
    void *sym_s = dlsym(f->handle, DRIFT_SAMPLER_ENTRY);
    void *sym_m = dlsym(f->handle, DRIFT_MODEL_ENTRY);
    if (!sym_s && !sym_m) {
        drift_err_set(e, DRIFT_EPLUGIN,
                      "%s: refused: not a drift plugin (it exports neither "
                      "%s nor %s)",
                      f->path, DRIFT_SAMPLER_ENTRY, DRIFT_MODEL_ENTRY);
        goto refuse;
    }
    if (sym_s) {
        drift_sampler_entry_fn fn;
        memcpy(&fn, &sym_s, sizeof fn);
        const drift_sampler_plugin *d = fn();
        if (!d) {
            drift_err_set(e, DRIFT_EPLUGIN,
                          "%s: refused: %s() returned NULL", f->path,
                          DRIFT_SAMPLER_ENTRY);
            goto refuse;
        }
        if (take_samplers(r, f->path, license_of(f->handle), d, strict, e))
            goto refuse;
    }
    if (sym_m) {
        drift_model_entry_fn fn;
        memcpy(&fn, &sym_m, sizeof fn);
        const drift_model_plugin *m = fn();
        if (!m) {
            drift_err_set(e, DRIFT_EPLUGIN,
                          "%s: refused: %s() returned NULL", f->path,
                          DRIFT_MODEL_ENTRY);
            goto refuse;
        }
        if (take_model(r, f->path, license_of(f->handle), m, strict, e))
            goto refuse;
    }
    return DRIFT_OK;
refuse:
    /* Keep the handle open: entries added before the refusal (none, as
     * take_samplers is all or nothing) would otherwise dangle. */
    return DRIFT_EPLUGIN;
}

/* What kind of thing a non-regular file is, for messages. */
static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* 1 when st (a file or directory) can be written by someone other than
 * its owner, this user or root: world-writable, or group-writable and
 * owned by another user.  A world-writable directory with the sticky bit
 * (/tmp) lets others add files but not replace ours: it passes when the
 * file in it (file_uid) is ours or root's. */
static int foreign_writable(const struct stat *st, int is_dir,
                            uid_t file_uid)
{
    uid_t me = getuid();
    if (st->st_mode & S_IWOTH) {
        if (is_dir && (st->st_mode & S_ISVTX) &&
            (file_uid == me || file_uid == 0))
            return 0;
        return 1;
    }
    return (st->st_mode & S_IWGRP) && st->st_uid != me && st->st_uid != 0;
}

/* The checks made before a file is opened: it is a regular file (links
 * are followed; a dangling one is refused), and neither it nor its
 * directory can be written by others than its owner or root. */
static int check_file(const char *path, drift_err *e)
{
    struct stat st;
    if (stat(path, &st)) {
        struct stat lst;
        if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: skipped: a dangling symbolic link",
                                 path);
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: cannot load plugin: %s", path,
                             errno == ENOENT ? "no such file"
                                             : strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: skipped: %s, not a regular file", path,
                             file_kind(st.st_mode));
    if (foreign_writable(&st, 0, st.st_uid))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: the file is writable by others "
                             "than its owner (mode %03o); chmod go-w it",
                             path, (unsigned)(st.st_mode & 0777));
    char real[PATH_MAX];
    if (!realpath(path, real))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: cannot load plugin: %s", path,
                             strerror(errno));
    char *slash = strrchr(real, '/');
    if (slash == real)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    struct stat dst;
    if (!stat(real, &dst) && foreign_writable(&dst, 1, st.st_uid))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: refused: its directory %s is writable by "
                             "others than its owner (mode %03o)",
                             path, real, (unsigned)(dst.st_mode & 0777));
    return DRIFT_OK;
}

/* Opens path and registers what it offers.  strict: refusals and
 * shadowing are errors (an explicit path) rather than problems.  *known
 * (may be NULL) gets the path under which the file was loaded before, or
 * NULL when this call loaded it. */
static int load_file(drift_registry *r, const char *path, int strict,
                     drift_err *e, const char **known)
{
    if (known)
        *known = NULL;
    int rc = check_file(path, e);
    if (rc)
        return rc;
    char real[PATH_MAX];
    if (!realpath(path, real))
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: cannot load plugin: no such file", path);
    for (size_t k = 0; k < r->n_files; k++)
        if (!strcmp(r->files[k].real, real)) {
            /* Already loaded (perhaps under another name): an explicit
             * path registers what a scan left out, or repeats the
             * refusal. */
            if (known)
                *known = r->files[k].path;
            return strict ? take_file(r, &r->files[k], 1, e) : DRIFT_OK;
        }
    if (grow((void **)&r->files, &r->cap_files, r->n_files,
             sizeof *r->files))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    loaded_file *f = &r->files[r->n_files];
    memset(f, 0, sizeof *f);
    f->path = drift_strdup(path);
    f->real = drift_strdup(real);
    if (!f->path || !f->real) {
        drift_free(f->path);
        drift_free(f->real);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    dlerror();
    f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->handle) {
        const char *why = dlerror();
        drift_err_set(e, DRIFT_EPLUGIN, "%s: cannot load plugin: %s", path,
                      why ? why : "dlopen failed");
        drift_free(f->path);
        drift_free(f->real);
        return DRIFT_EPLUGIN;
    }
    r->n_files++;
    return take_file(r, f, strict, e);
}

int drift_registry_load(drift_registry *r, const char *path, drift_err *e)
{
    return load_file(r, path, 1, e, NULL);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Seconds a plugin may take to be inspected in a child process:
 * DRIFT_PLUGIN_TIMEOUT when set to a positive number, else 5. */
static double probe_timeout(void)
{
    const char *v = getenv("DRIFT_PLUGIN_TIMEOUT");
    char *end;
    double t = v && *v ? strtod(v, &end) : 0;
    return v && *v && !*end && t > 0 && t < 1e6 ? t : 5.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* snprintf into a message buffer, where truncating a long path is
 * expected. */
static void say(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

/* Inspects path in a child process: the child opens it, runs its entry
 * points and checks its descriptors exactly as load_file would, and
 * writes the refusal (or nothing) to a pipe.  A plugin that crashes, exits
 * or hangs there (past probe_timeout()) harms only the child.  0 when the
 * child found it loadable; otherwise msg says why (naming path). */
static int probe_file(const char *path, char *msg, size_t cap)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) {
        say(msg, cap, "%s: skipped: cannot inspect it (pipe: %s)",
                 path, strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        say(msg, cap, "%s: skipped: cannot inspect it (fork: %s)",
                 path, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        /* A crash must show as the signal, whatever handlers the parent
         * installed (test frameworks catch SIGSEGV). */
        int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
        for (size_t k = 0; k < sizeof fatal / sizeof *fatal; k++)
            signal(fatal[k], SIG_DFL);
        drift_registry *c = drift_registry_new();
        drift_err e = {{0}};
        const char *out = "";
        if (!c)
            out = "out of memory";
        else if (load_file(c, path, 0, &e, NULL))
            out = e.msg;
        size_t len = strlen(out);
        while (len > 0) {
            ssize_t w = write(fd[1], out, len);
            if (w <= 0)
                break;
            out += w;
            len -= (size_t)w;
        }
        _exit(0); /* no atexit handlers, no plugin destructors */
    }
    close(fd[1]);
    size_t used = 0;
    msg[0] = '\0';
    double limit = probe_timeout(), start = now_s();
    int timed_out = 0;
    for (;;) {
        double left = limit - (now_s() - start);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {fd[0], POLLIN, 0};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            timed_out = n == 0;
            break;
        }
        char buf[512];
        ssize_t got = read(fd[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break; /* end of file: the child is done */
        for (ssize_t k = 0; k < got && used + 1 < cap; k++)
            msg[used++] = buf[k];
        msg[used] = '\0';
    }
    close(fd[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        say(msg, cap,
                 "%s: skipped: still loading after %g s (it hangs in its "
                 "constructor or entry point; DRIFT_PLUGIN_TIMEOUT sets "
                 "the limit)",
                 path, limit);
        return -1;
    }
    if (WIFSIGNALED(status)) {
        say(msg, cap,
                 "%s: skipped: it crashed with signal %d (%s) while being "
                 "loaded",
                 path, WTERMSIG(status), strsignal(WTERMSIG(status)));
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        say(msg, cap,
                 "%s: skipped: it called exit(%d) while being loaded", path,
                 WEXITSTATUS(status));
        return -1;
    }
    if (used)
        return -1; /* the child's refusal, as load_file words it */
    return 0;
}

/* Loads the *.so files of dir in name order, each inspected first in a
 * child process (probe_file). */
static void scan_dir(drift_registry *r, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 4 || strcmp(ent->d_name + len - 3, ".so") != 0)
            continue;
        if (grow((void **)&names, &cap, n, sizeof *names))
            break;
        names[n] = drift_strdup(ent->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; k < n; k++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        drift_err e;
        char msg[sizeof e.msg];
        if (check_file(path, &e))
            add_problem(r, e.msg);
        else if (probe_file(path, msg, sizeof msg))
            add_problem(r, msg);
        else if (load_file(r, path, 0, &e, NULL))
            add_problem(r, e.msg);
        drift_free(names[k]);
    }
    drift_free(names);
}

static int append_path(drift_registry *r, const char *dirs)
{
    if (!dirs || !*dirs)
        return 0;
    size_t old = r->search_path ? strlen(r->search_path) : 0;
    char *p = drift_realloc(r->search_path, old + strlen(dirs) + 2);
    if (!p)
        return -1;
    if (old)
        p[old++] = ':';
    strcpy(p + old, dirs);
    r->search_path = p;
    return 0;
}

/* 1 when dir, an entry of the search path, is absolute; a relative one
 * would resolve against the working directory, so it is refused (once per
 * registry) with a problem. */
static int absolute_dir(drift_registry *r, const char *dir)
{
    if (dir[0] == '/')
        return 1;
    char msg[PATH_MAX + 200];
    snprintf(msg, sizeof msg,
             "%s: refused: a relative entry in the plugin search path "
             "(DRIFT_PLUGIN_PATH entries must be absolute directories)",
             dir);
    for (size_t k = 0; k < r->n_problems; k++)
        if (!strcmp(r->problems[k], msg))
            return 0;
    add_problem(r, msg);
    return 0;
}

static void scan_list(drift_registry *r, const char *list)
{
    if (!list)
        return;
    char *copy = drift_strdup(list);
    if (!copy)
        return;
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir;
         dir = strtok_r(NULL, ":", &save))
        if (absolute_dir(r, dir))
            scan_dir(r, dir);
    drift_free(copy);
}

/* Splits an absolute path into its components (no empty ones, no "."),
 * in place; returns their number, or -1 when path is not absolute or has
 * more than max components. */
static int path_components(char *path, char **comp, int max)
{
    if (path[0] != '/')
        return -1;
    int n = 0;
    char *save = NULL;
    for (char *c = strtok_r(path, "/", &save); c;
         c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, "."))
            continue;
        if (n == max)
            return -1;
        comp[n++] = c;
    }
    return n;
}

/* The plugin directory of a relocated install: the configured plugin
 * directory's place relative to the configured bindir, applied to the
 * directory this executable runs from.  0 with out set when that
 * directory exists, -1 otherwise. */
static int relocated_dir(const char *bindir, const char *plugindir,
                         char *out, size_t cap)
{
    char exe[PATH_MAX], bin[PATH_MAX], plug[PATH_MAX];
    if (!realpath("/proc/self/exe", exe))
        return -1;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    /* Installed where it was configured to be: nothing is relocated. */
    char real_bin[PATH_MAX];
    if (!strcmp(exe, bindir) ||
        (realpath(bindir, real_bin) && !strcmp(exe, real_bin)))
        return -1;
    if (snprintf(bin, sizeof bin, "%s", bindir) >= (int)sizeof bin ||
        snprintf(plug, sizeof plug, "%s", plugindir) >= (int)sizeof plug)
        return -1;
    char *bc[256], *pc[256];
    int nb = path_components(bin, bc, 256);
    int np = path_components(plug, pc, 256);
    if (nb < 0 || np < 0)
        return -1;
    int common = 0;
    while (common < nb && common < np && !strcmp(bc[common], pc[common]))
        common++;
    size_t used = (size_t)snprintf(out, cap, "%s", exe);
    for (int k = common; k < nb && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "/..");
    for (int k = common; k < np && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "/%s", pc[k]);
    if (used >= cap)
        return -1;
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(out, real) || stat(real, &st) || !S_ISDIR(st.st_mode))
        return -1;
    if (snprintf(out, cap, "%s", real) >= (int)cap)
        return -1;
    return 0;
}

void drift_registry_install_dir(char *out, size_t cap)
{
    if (cap == 0)
        return;
    if (relocated_dir(DRIFT_BINDIR, DRIFT_PLUGINDIR, out, cap))
        snprintf(out, cap, "%s", DRIFT_PLUGINDIR);
}

/* Sets r->search_path: the install directory (or DRIFT_PLUGIN_DIR in its
 * place: tests and uninstalled builds use it so an installed drift cannot
 * shadow the plugins under test), then DRIFT_PLUGIN_PATH. */
static int set_search_path(drift_registry *r, drift_err *e)
{
    char install[PATH_MAX];
    const char *base = getenv("DRIFT_PLUGIN_DIR");
    if (!base || !*base) {
        drift_registry_install_dir(install, sizeof install);
        base = install;
    }
    const char *user = getenv("DRIFT_PLUGIN_PATH");
    drift_free(r->search_path);
    r->search_path = NULL;
    if (append_path(r, base) || append_path(r, user))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    return DRIFT_OK;
}

int drift_registry_scan(drift_registry *r, drift_err *e)
{
    int rc = set_search_path(r, e);
    if (rc)
        return rc;
    r->scanned = 1;
    scan_list(r, r->search_path);
    return DRIFT_OK;
}

/* 1 when a sampler (want_model 0) or model called name is registered. */
static int registered(const drift_registry *r, const char *name,
                      int want_model)
{
    if (want_model) {
        for (size_t k = 0; k < r->n_models; k++)
            if (!strcmp(r->models[k].m->name, name))
                return 1;
    } else {
        for (size_t k = 0; k < r->n_samplers; k++)
            if (!strcmp(r->samplers[k].s.name, name))
                return 1;
    }
    return 0;
}

/* Resolves a name without opening every plugin: in search order, the
 * file NAME.so of each directory is opened (it alone), and the first that
 * offers NAME is taken.  Only when none does (a name provided by a file of
 * another name, such as agld.so's svrg-ld, or an unknown name) is the
 * whole path scanned, each plugin inspected in a child process first. */
static void find_name(drift_registry *r, const char *name, int want_model)
{
    drift_err e;
    if (r->scanned || registered(r, name, want_model))
        return;
    if (!valid_plugin_name(name) || set_search_path(r, &e)) {
        drift_registry_scan(r, &e);
        return;
    }
    char *copy = drift_strdup(r->search_path);
    if (!copy)
        return;
    char *save = NULL;
    int found = 0;
    for (char *dir = strtok_r(copy, ":", &save); dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        if (!absolute_dir(r, dir))
            continue;
        char path[PATH_MAX];
        struct stat lst;
        if (snprintf(path, sizeof path, "%s/%s.so", dir, name) >=
                (int)sizeof path ||
            lstat(path, &lst))
            continue;
        if (load_file(r, path, 0, &e, NULL))
            add_problem(r, e.msg);
        found = registered(r, name, want_model);
    }
    drift_free(copy);
    if (!found)
        drift_registry_scan(r, &e);
}

static int is_path(const char *spec)
{
    return strchr(spec, '/') != NULL;
}

/* The path under which a file load_file just accepted is registered:
 * `known` when it had been loaded before, else this load's (the last
 * file opened). */
static const char *loaded_path(const drift_registry *r, const char *known)
{
    return known ? known : r->files[r->n_files - 1].path;
}

int drift_registry_sampler(drift_registry *r, const char *spec,
                           const drift_sampler_entry **out, drift_err *e)
{
    *out = NULL;
    if (is_path(spec)) {
        /* An explicit path means that file, whatever the search path
         * holds: its samplers are the entries registered under its path
         * (loading it registers them even when a sampler of the same name
         * was found first). */
        char file[PATH_MAX];
        const char *want = NULL;
        snprintf(file, sizeof file, "%s", spec);
        char *colon = strrchr(file, ':');
        if (colon && !strchr(colon, '/')) {
            *colon = '\0';
            want = colon + 1;
        }
        const char *known;
        int rc = load_file(r, file, 1, e, &known);
        if (rc)
            return rc;
        const char *fpath = loaded_path(r, known);
        size_t found = 0;
        char list[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < r->n_samplers; k++) {
            const drift_sampler_entry *s = &r->samplers[k];
            if (s->path != fpath || (want && strcmp(s->s.name, want)))
                continue;
            if (!found)
                *out = s;
            used += (size_t)snprintf(list + used,
                                     used < sizeof list ? sizeof list - used
                                                        : 0,
                                     "%s%s", found ? ", " : "", s->s.name);
            found++;
        }
        if (found == 1)
            return DRIFT_OK;
        *out = NULL;
        if (found > 1)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s offers several samplers (%s); pick one "
                                 "with --sampler %s:NAME",
                                 file, list, file);
        if (want)
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s offers no sampler '%s'", file, want);
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: offers no sampler (it may be a model "
                             "plugin)",
                             file);
    }
    find_name(r, spec, 0);
    for (size_t k = 0; k < r->n_samplers; k++)
        if (!strcmp(r->samplers[k].s.name, spec)) {
            *out = &r->samplers[k];
            return DRIFT_OK;
        }
    const char *names[256] = {0};
    char list[1024] = "";
    size_t m = r->n_samplers < 256 ? r->n_samplers : 256, used = 0;
    for (size_t k = 0; k < m; k++) {
        names[k] = r->samplers[k].s.name;
        used += (size_t)snprintf(list + used,
                                 used < sizeof list ? sizeof list - used : 0,
                                 "%s%s", k ? ", " : "", names[k]);
    }
    const char *near = drift_closest(spec, names, m);
    char hint[128] = "";
    if (near)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    if (m == 0)
        return drift_err_set(e, DRIFT_EINVAL,
                             "unknown sampler '%s': no sampler plugins were "
                             "found (searched %s; set DRIFT_PLUGIN_PATH)",
                             spec, r->search_path ? r->search_path : "");
    return drift_err_set(e, DRIFT_EINVAL,
                         "unknown sampler '%s'%s Installed samplers: %s "
                         "(see 'drift samplers')",
                         spec, near ? hint : ";", list);
}

int drift_registry_model(drift_registry *r, const char *spec,
                         const drift_model_entry **out, drift_err *e)
{
    *out = NULL;
    if (is_path(spec)) {
        /* As for samplers: the model registered under this file's path. */
        const char *known;
        int rc = load_file(r, spec, 1, e, &known);
        if (rc)
            return rc;
        const char *fpath = loaded_path(r, known);
        for (size_t k = 0; k < r->n_models; k++)
            if (r->models[k].path == fpath) {
                *out = &r->models[k];
                return DRIFT_OK;
            }
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: offers no model (it may be a sampler "
                             "plugin)",
                             spec);
    }
    find_name(r, spec, 1);
    for (size_t k = 0; k < r->n_models; k++)
        if (!strcmp(r->models[k].m->name, spec)) {
            *out = &r->models[k];
            return DRIFT_OK;
        }
    const char *names[256] = {0};
    char list[1024] = "";
    size_t m = r->n_models < 256 ? r->n_models : 256, used = 0;
    for (size_t k = 0; k < m; k++) {
        names[k] = r->models[k].m->name;
        used += (size_t)snprintf(list + used,
                                 used < sizeof list ? sizeof list - used : 0,
                                 "%s%s", k ? ", " : "", names[k]);
    }
    const char *near = drift_closest(spec, names, m);
    char hint[128] = "";
    if (near)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    return drift_err_set(e, DRIFT_EINVAL,
                         "unknown model '%s'%s Installed models: %s "
                         "(a .drift file or a plugin path also works)",
                         spec, near ? hint : ";", m ? list : "none");
}

size_t drift_registry_n_samplers(const drift_registry *r)
{
    return r->n_samplers;
}
const drift_sampler_entry *drift_registry_sampler_at(const drift_registry *r,
                                                     size_t k)
{
    return k < r->n_samplers ? &r->samplers[k] : NULL;
}
size_t drift_registry_n_models(const drift_registry *r) { return r->n_models; }
const drift_model_entry *drift_registry_model_at(const drift_registry *r,
                                                 size_t k)
{
    return k < r->n_models ? &r->models[k] : NULL;
}
size_t drift_registry_n_problems(const drift_registry *r)
{
    return r->n_problems;
}
const char *drift_registry_problem(const drift_registry *r, size_t k)
{
    return k < r->n_problems ? r->problems[k] : NULL;
}
const char *drift_registry_search_path(const drift_registry *r)
{
    return r->search_path ? r->search_path : "";
}
