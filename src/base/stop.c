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

static void on_stop_signal(int sig)
{
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
        sigaddset(&sa.sa_mask, caught[k]);
    for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
        sigaction(caught[k], &sa, NULL);
}

void drift_stop_uncatch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
        sigaction(caught[k], &sa, NULL);
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
