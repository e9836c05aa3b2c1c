/* mapguard.c: maps of input files that may shrink under a run.  When a
 * mapped file is truncated, reading a page past its new end raises
 * SIGBUS.  The handler here never jumps (no longjmp across BLAS or plugin
 * frames): it maps zero pages over the guarded map from the faulting page
 * to the map's end (mmap MAP_FIXED | MAP_ANONYMOUS, a plain system call),
 * marks the map changed and returns, so the read that faulted, and every
 * later one, reads zeros.  Whatever is computed from those zeros is never
 * kept, because work checks drift_mapguard_any before it commits a
 * result (a draw row, a converted row, a verdict on the data) and stops
 * with the file's name.  A rewrite that keeps the size (cp over the
 * file) raises no signal; the periodic poll (fstat: size and
 * modification time) catches it at the next pass boundary.
 * A SIGBUS outside every guarded map goes to the previous handler, or
 * kills the process as it would have.  Not for the files drift writes. */
#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapguard.h"
#include "util.h"

#define GUARD_SLOTS 64
enum { G_FREE, G_FILLING, G_LIVE };

typedef struct guard {
    atomic_int state;
    atomic_int changed;         /* 1: lost pages; 2: a poll saw a change */
    uintptr_t lo, hi;           /* the map, hi rounded up to a page */
    int fd;
    dev_t dev;
    ino_t ino;
    off_t size;                 /* when added */
    struct timespec mtime;
    atomic_llong new_size;      /* what a poll saw */
    char path[512];             /* for messages (cut if longer) */
} guard;

static guard guards[GUARD_SLOTS];
static atomic_int any_changed;
static atomic_int installed;
static uintptr_t page_size;
static struct sigaction previous;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int k = 0; k < GUARD_SLOTS; k++) {
        guard *g = &guards[k];
        if (atomic_load(&g->state) != G_LIVE || a < g->lo || a >= g->hi)
            continue;
        uintptr_t from = a & ~(page_size - 1);
        void *m = mmap((void *)from, g->hi - from, PROT_READ,
                       MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            break; /* cannot mend it: die of the signal below */
        atomic_store(&g->changed, 1);
        atomic_store(&any_changed, 1);
        return;
    }
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (previous.sa_handler != SIG_DFL &&
               previous.sa_handler != SIG_IGN && previous.sa_handler) {
        previous.sa_handler(sig);
        return;
    }
    /* Not ours: the default action, when the faulting read runs again. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &sa, NULL);
}

static void install(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&installed, &expect, 1))
        return;
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &previous);
}

int drift_mapguard_add(const void *addr, size_t len, int fd,
                       const char *path)
{
    struct stat st;
    if (!addr || !len || fd < 0 || fstat(fd, &st) != 0)
        return -1;
    install();
    for (int k = 0; k < GUARD_SLOTS; k++) {
        guard *g = &guards[k];
        int expect = G_FREE;
        if (!atomic_compare_exchange_strong(&g->state, &expect, G_FILLING))
            continue;
        snprintf(g->path, sizeof g->path, "%s", path ? path : "(data)");
        g->lo = (uintptr_t)addr;
        g->hi = ((uintptr_t)addr + len + page_size - 1) & ~(page_size - 1);
        g->fd = fd;
        g->dev = st.st_dev;
        g->ino = st.st_ino;
        g->size = st.st_size;
        atomic_store(&g->new_size, (long long)st.st_size);
        g->mtime = st.st_mtim;
        atomic_store(&g->changed, 0);
        atomic_store(&g->state, G_LIVE);
        return k;
    }
    return -1;
}

void drift_mapguard_remove(int h)
{
    if (h < 0 || h >= GUARD_SLOTS)
        return;
    guard *g = &guards[h];
    atomic_store(&g->state, G_FREE);
}

int drift_mapguard_any(void)
{
    return atomic_load_explicit(&any_changed, memory_order_relaxed);
}

int drift_mapguard_check_one(int h, int poll, drift_err *e)
{
    if (h < 0 || h >= GUARD_SLOTS)
        return DRIFT_OK;
    guard *g = &guards[h];
    if (atomic_load(&g->state) != G_LIVE)
        return DRIFT_OK;
    int changed = atomic_load(&g->changed);
    struct stat st;
    if (!changed && poll && fstat(g->fd, &st) == 0 &&
        (st.st_size != g->size || st.st_mtim.tv_sec != g->mtime.tv_sec ||
         st.st_mtim.tv_nsec != g->mtime.tv_nsec)) {
        atomic_store(&g->new_size, (long long)st.st_size);
        atomic_store(&g->changed, 2);
        atomic_store(&any_changed, 1);
        changed = 2;
    }
    if (!changed)
        return DRIFT_OK;
    if (changed == 1 || atomic_load(&g->new_size) != (long long)g->size) {
        if (fstat(g->fd, &st) == 0)
            atomic_store(&g->new_size, (long long)st.st_size);
        return drift_err_set(e, DRIFT_EIO,
                             "%s: changed size during the run (%lld bytes "
                             "when opened, %lld now): its rows cannot be "
                             "trusted; leave input files alone while drift "
                             "reads them",
                             g->path, (long long)g->size,
                             atomic_load(&g->new_size));
    }
    return drift_err_set(e, DRIFT_EIO,
                         "%s: was rewritten during the run (same size, "
                         "new modification time): its rows cannot be "
                         "trusted; leave input files alone while drift "
                         "reads them",
                         g->path);
}

int drift_mapguard_check(int poll, drift_err *e)
{
    if (!poll && !drift_mapguard_any())
        return DRIFT_OK;
    for (int k = 0; k < GUARD_SLOTS; k++) {
        int rc = drift_mapguard_check_one(k, poll, e);
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}
