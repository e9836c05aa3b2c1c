/* stop.c: stopping long work on a signal.  The handler only sets a
 * lock-free atomic (async-signal-safe, and race-free for the chain
 * threads that poll it); a second signal during the clean stop removes
 * the named temporary files and lets the signal end the process.  Not
 * for what work does when it stops (run.c, rowstore.c, the commands). */
#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stop.h"
#include "writer.h"

#if ATOMIC_INT_LOCK_FREE != 2
#error "the stop request needs a lock-free atomic int"
#endif

static atomic_int stop_sig;

void drift_stop_request(int sig)
{
    int expect = 0;
    atomic_compare_exchange_strong(&stop_sig, &expect, sig ? sig : SIGINT);
}

int drift_stop_requested(void)
{
    return atomic_load_explicit(&stop_sig, memory_order_relaxed);
}

void drift_stop_clear(void) { atomic_store(&stop_sig, 0); }

static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CAUGHT (sizeof caught / sizeof caught[0])

/* Which of them the process was started with ignored, noted before any
 * handler of ours replaced the disposition (known: noted yet). */
static int ignored[N_CAUGHT];
static int known;

void drift_stop_note_start(void)
{
    if (known)
        return;
    for (size_t k = 0; k < N_CAUGHT; k++) {
        struct sigaction old;
        ignored[k] = sigaction(caught[k], NULL, &old) == 0 &&
                     !(old.sa_flags & SA_SIGINFO) &&
                     old.sa_handler == SIG_IGN;
    }
    known = 1;
}

int drift_stop_ignored(int sig)
{
    drift_stop_note_start();
    for (size_t k = 0; k < N_CAUGHT; k++)
        if (caught[k] == sig)
            return ignored[k];
    return 0;
}

/* The process that forwards the signals sent to it (guard.c's parent),
 * or 0; and the last stop signal taken: its number, whether it came from
 * the forwarder, and when (CLOCK_MONOTONIC nanoseconds). */
static atomic_int forwarder;
static atomic_int last_sig, last_forwarded;
static atomic_llong last_ns;

void drift_stop_forwarder(int pid) { atomic_store(&forwarder, pid); }

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Whether sig is the copy of a signal just taken: a signal sent to the
 * whole process group reaches this process both directly and through the
 * forwarder, within moments of each other; that is one signal, not the
 * second one that ends the process. */
static int duplicate(int sig, const siginfo_t *si)
{
    int fwd = atomic_load(&forwarder);
    int from_fwd = fwd && si && si->si_code <= 0 && si->si_pid == fwd;
    long long t = now_ns();
    int dup = atomic_load(&last_sig) == sig &&
              atomic_load(&last_forwarded) != from_fwd &&
              t - atomic_load(&last_ns) < 1000000000LL;
    atomic_store(&last_sig, sig);
    atomic_store(&last_forwarded, from_fwd);
    atomic_store(&last_ns, t);
    return fwd && dup;
}

static void on_stop_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (duplicate(sig, si))
        return;
    int expect = 0;
    if (atomic_compare_exchange_strong(&stop_sig, &expect, sig))
        return;
    /* The second signal: leave now, taking named temporaries along.  The
     * signal stays blocked until this handler returns, then its default
     * action ends the process. */
    drift_writer_cleanup_signal();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    raise(sig);
}

void drift_stop_catch(void)
{
    drift_stop_note_start();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < N_CAUGHT; k++)
        sigaddset(&sa.sa_mask, caught[k]);
    for (size_t k = 0; k < N_CAUGHT; k++)
        if (!ignored[k])
            sigaction(caught[k], &sa, NULL);
}

void drift_stop_uncatch(void)
{
    drift_stop_note_start();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    for (size_t k = 0; k < N_CAUGHT; k++) {
        sa.sa_handler = ignored[k] ? SIG_IGN : SIG_DFL;
        sigaction(caught[k], &sa, NULL);
    }
}

const char *drift_stop_signal_name(int sig, char *buf, unsigned long cap)
{
    const char *n = sig == SIGINT    ? "SIGINT"
                    : sig == SIGTERM ? "SIGTERM"
                    : sig == SIGHUP  ? "SIGHUP"
                                     : NULL;
    if (n)
        snprintf(buf, cap, "%s", n);
    else
        snprintf(buf, cap, "signal %d", sig);
    return buf;
}
