/* crashy.c: random-walk Metropolis that fails the way a faulty third-party
 * sampler does, at one iteration of one chain: a bad memory access, an
 * abort, a call to exit, or a step that never returns (how = segv, abort,
 * exit, hang; none to behave); or (linger) a thread started there that
 * outlives the run and crashes the process as it exits.  For the guard's tests (engine/run/guard.c):
 * the run must end with a message naming the plugin, chain and iteration,
 * keeping the draws written before.  For tests only: not installed. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drift/sampler.h>

/* A store to a page that cannot be written: a real fault, which the
 * sanitizers (in --enable-sanitizers builds) do not stop first, as they
 * would a store through NULL. */
static void fail_now_segv(void)
{
    volatile char *p = mmap(NULL, 4096, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        *p = 1;
    raise(SIGSEGV);
}

typedef struct crashy {
    size_t d;
    double step, U;
    double *prop;
    int how;
    uint64_t at;
    unsigned chain;
} crashy;

enum { HOW_NONE, HOW_SEGV, HOW_ABORT, HOW_EXIT, HOW_HANG, HOW_LINGER };

/* The lingering thread: waits for the process's exit, then faults. */
static atomic_int exiting;

static void *linger(void *arg)
{
    (void)arg;
    while (!atomic_load(&exiting))
        usleep(1000);
    fail_now_segv();
    return NULL;
}

__attribute__((destructor)) static void at_exit_of_process(void)
{
    atomic_store(&exiting, 1);
    usleep(200000); /* the thread faults meanwhile */
}

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    crashy *s = state;
    s->d = svc->dim(c);
    s->step = hp[0];
    s->how = (int)hp[1];
    s->at = (uint64_t)hp[2];
    s->chain = (unsigned)hp[3];
    s->prop = svc->alloc(c, s->d * sizeof(double));
    if (!s->prop)
        return DRIFT_ENOMEM;
    return svc->U_full(c, theta, &s->U);
}

static void fail_now(int how)
{
    switch (how) {
    case HOW_SEGV: fail_now_segv(); break;
    case HOW_LINGER: {
        pthread_t t;
        if (pthread_create(&t, NULL, linger, NULL) == 0)
            pthread_detach(t);
        break;
    }
    case HOW_ABORT: abort();
    case HOW_EXIT: exit(0);
    case HOW_HANG:
        for (;;)
            pause();
    default: break;
    }
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    crashy *s = state;
    if (svc->iteration(c) == s->at &&
        (s->chain == 0 || svc->chain_id(c) == s->chain))
        fail_now(s->how);
    for (size_t k = 0; k < s->d; k++)
        s->prop[k] = theta[k] + s->step * svc->normal(c);
    double Up;
    int rc = svc->U_full(c, s->prop, &Up);
    if (rc && rc != DRIFT_ENONFINITE)
        return rc;
    if (log(svc->uniform(c)) < s->U - Up) {
        for (size_t k = 0; k < s->d; k++)
            theta[k] = s->prop[k];
        s->U = Up;
    }
    return svc->emit_draw(c, theta, -s->U, NULL);
}

static const drift_hparam hparams[] = {
    {"step", DRIFT_HP_REAL, 0.5, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "proposal standard deviation"},
    {"how", DRIFT_HP_ENUM, 1, 0, 0, 0, "none|segv|abort|exit|hang|linger",
     "how the step fails"},
    {"at", DRIFT_HP_INT, 100, 0, 1e9, 0, NULL,
     "the iteration (0-based) at which it fails"},
    {"chain", DRIFT_HP_INT, 0, 0, 1e6, 0, NULL,
     "the chain id that fails (0: every chain)"},
};

static const drift_sampler samplers[] = {{
    .name = "crashy",
    .summary = "random-walk Metropolis that crashes on purpose (tests only)",
    .hparams = hparams,
    .n_hparams = 4,
    .state_size = sizeof(crashy),
    .flags = DRIFT_SAMPLER_FULL_DATA,
    .init = init,
    .step = step,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    1,
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
