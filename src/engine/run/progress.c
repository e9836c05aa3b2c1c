/* progress.c: drawing the progress line (see progress.h).  The watcher
 * sleeps on a condition variable in 100 ms slices, so a finished run is
 * noticed at once and the line is redrawn at most twice a second. */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "ext.h"
#include "progress.h"

#define REDRAW_S 0.5

struct drift_progress {
    unsigned K, first;
    drift_progress_budget b;
    FILE *f;
    drift_progress_slot *slots;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned n_done;
    double t0;
    int log;            /* DRIFT_PROGRESS_LOG */
    int *logged;        /* per chain: the last tenth printed (-1: none) */
};

void drift_progress_log_lines(drift_progress *p)
{
    if (!p || p->logged)
        return;
    p->logged = drift_calloc(p->K ? p->K : 1, sizeof *p->logged);
    if (!p->logged)
        return; /* out of memory: no lines, the run goes on */
    for (unsigned k = 0; k < p->K; k++)
        p->logged[k] = -1;
    p->log = 1;
}

drift_progress *drift_progress_new(unsigned K, unsigned first,
                                   const drift_progress_budget *b, FILE *f)
{
    drift_progress *p = drift_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->slots = drift_calloc(K ? K : 1, sizeof *p->slots);
    if (!p->slots) {
        drift_free(p);
        return NULL;
    }
    p->K = K;
    p->first = first;
    p->b = *b;
    p->f = f;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->t0 = drift_now();
    return p;
}

void drift_progress_free(drift_progress *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    drift_free(p->logged);
    drift_free(p->slots);
    drift_free(p);
}

drift_progress_slot *drift_progress_slot_at(drift_progress *p, unsigned k)
{
    return p ? &p->slots[k] : NULL;
}

void drift_progress_done(drift_progress *p, unsigned k)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->slots[k].done) {
        p->slots[k].done = 1;
        p->n_done++;
    }
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void fmt_duration(double s, char *buf, size_t cap)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, cap, "--");
    else if (s < 3600)
        snprintf(buf, cap, "%d:%02d", (int)s / 60, (int)s % 60);
    else if (s < 1e7)
        snprintf(buf, cap, "%dh%02d", (int)(s / 3600), (int)s % 3600 / 60);
    else
        snprintf(buf, cap, "--");
}

/* The iteration budget, which the run's plan may set once the chains have
 * begun (drift_progress_replan), read as the watcher reads slots. */
static uint64_t iters_of(const drift_progress *p)
{
    return __atomic_load_n(&p->b.iters, __ATOMIC_RELAXED);
}

static uint64_t warmup_of(const drift_progress *p)
{
    return __atomic_load_n(&p->b.warmup, __ATOMIC_RELAXED);
}

void drift_progress_replan(drift_progress *p, uint64_t iters, uint64_t warmup)
{
    if (!p)
        return;
    __atomic_store_n(&p->b.iters, iters, __ATOMIC_RELAXED);
    __atomic_store_n(&p->b.warmup, warmup, __ATOMIC_RELAXED);
}

/* A count of data passes: whole numbers once they are large. */
static void fmt_passes(double v, char *buf, size_t cap)
{
    snprintf(buf, cap, v >= 1000 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

void drift_progress_format(drift_progress *p, double elapsed, char *buf,
                           size_t cap)
{
    uint64_t it_min = UINT64_MAX, draws = 0;
    double passes_min = INFINITY, passes_sum = 0;
    for (unsigned k = 0; k < p->K; k++) {
        uint64_t it = __atomic_load_n(&p->slots[k].iter, __ATOMIC_RELAXED);
        uint64_t g = __atomic_load_n(&p->slots[k].grads, __ATOMIC_RELAXED);
        draws += __atomic_load_n(&p->slots[k].draws, __ATOMIC_RELAXED);
        if (it < it_min)
            it_min = it;
        double ps = p->b.N ? (double)g / (double)p->b.N : 0;
        passes_sum += ps;
        if (ps < passes_min)
            passes_min = ps;
    }
    /* Whichever budget runs out first ends the run. */
    double frac = 0;
    if (iters_of(p))
        frac = fmax(frac, (double)it_min / (double)iters_of(p));
    if (p->b.passes > 0 && p->b.N)
        frac = fmax(frac, passes_min / p->b.passes);
    if (p->b.seconds > 0)
        frac = fmax(frac, elapsed / p->b.seconds);
    frac = fmin(frac, 1.0);
    size_t n = 0;
#define PUT(...)                                                         \
    do {                                                                 \
        int w_ = snprintf(buf + n, cap - n, __VA_ARGS__);                \
        if (w_ > 0)                                                      \
            n = n + (size_t)w_ < cap ? n + (size_t)w_ : cap - 1;         \
    } while (0)
    if (cap == 0)
        return;
    buf[0] = '\0';
    if (p->K == 1)
        PUT("chain %u: ", p->first);
    else
        PUT("chains %u-%u: ", p->first, p->first + p->K - 1);
    PUT("iter %llu", (unsigned long long)it_min);
    if (iters_of(p))
        PUT("/%llu", (unsigned long long)iters_of(p));
    PUT(" (%d%%%s)", (int)(100 * frac),
        it_min < warmup_of(p) ? ", warmup" : "");
    if (p->b.N) {
        char a[32], b[32];
        fmt_passes(passes_sum / p->K, a, sizeof a);
        PUT(", %s", a);
        if (p->b.passes > 0) {
            fmt_passes(p->b.passes, b, sizeof b);
            PUT("/%s", b);
        }
        PUT(" passes");
    }
    PUT(", %.0f draws/s", elapsed > 0 ? (double)draws / elapsed : 0.0);
    char eta[32];
    fmt_duration(frac > 0 ? elapsed * (1 - frac) / frac : INFINITY, eta,
                 sizeof eta);
    PUT(", ETA %s", eta);
#undef PUT
}

/* Chain k's fraction of its budget: iterations, passes or time, whichever
 * runs out first. */
static double chain_fraction(const drift_progress *p, uint64_t it,
                             double passes, double elapsed)
{
    double frac = 0;
    if (iters_of(p))
        frac = fmax(frac, (double)it / (double)iters_of(p));
    if (p->b.passes > 0)
        frac = fmax(frac, passes / p->b.passes);
    if (p->b.seconds > 0)
        frac = fmax(frac, elapsed / p->b.seconds);
    return fmin(frac, 1.0);
}

void drift_progress_log_format(const drift_progress *p, unsigned k,
                               uint64_t it, double passes, char *buf,
                               size_t cap)
{
    const char *phase = it < warmup_of(p) || (it == warmup_of(p) && it &&
                                              iters_of(p) == warmup_of(p))
                            ? "Warmup"
                            : "Sampling";
    double frac = chain_fraction(p, it, passes, drift_now() - p->t0);
    if (iters_of(p)) {
        int w = snprintf(NULL, 0, "%llu", (unsigned long long)iters_of(p));
        snprintf(buf, cap, "Chain %u Iteration: %*llu / %llu [%3d%%]  (%s)",
                 p->first + k, w, (unsigned long long)it,
                 (unsigned long long)iters_of(p), (int)(100 * frac + 1e-9),
                 phase);
    } else if (p->b.passes > 0) {
        snprintf(buf, cap, "Chain %u Iteration: %llu, %.4g / %.4g data "
                           "passes [%3d%%]  (%s)",
                 p->first + k, (unsigned long long)it, passes, p->b.passes,
                 (int)(100 * frac + 1e-9), phase);
    } else {
        snprintf(buf, cap, "Chain %u Iteration: %llu [%3d%%]  (%s)",
                 p->first + k, (unsigned long long)it,
                 (int)(100 * frac + 1e-9), phase);
    }
}

/* DRIFT_PROGRESS_LOG: a line for each chain that passed into a new tenth
 * of its budget since the last look (the first at its first iteration; a
 * finished chain's at its end, when it got there). */
static void log_lines(drift_progress *p, int final)
{
    double elapsed = drift_now() - p->t0;
    for (unsigned k = 0; k < p->K; k++) {
        uint64_t it = __atomic_load_n(&p->slots[k].iter, __ATOMIC_RELAXED);
        uint64_t g = __atomic_load_n(&p->slots[k].grads, __ATOMIC_RELAXED);
        double passes = p->b.N ? (double)g / (double)p->b.N : 0;
        if (it == 0)
            continue;
        int tenth = (int)(10 * chain_fraction(p, it, passes, elapsed) + 1e-9);
        if (tenth == 10 && !final && !p->slots[k].done)
            tenth = 9; /* the 100% line once the chain has ended */
        if (tenth <= p->logged[k])
            continue;
        char line[256];
        drift_progress_log_format(p, k, it, passes, line, sizeof line);
        fprintf(p->f, "%s\n", line);
        p->logged[k] = tenth;
    }
    fflush(p->f);
}

void drift_progress_watch(drift_progress *p)
{
    if (p->log) {
        pthread_mutex_lock(&p->mu);
        while (p->n_done < p->K) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            pthread_mutex_unlock(&p->mu);
            log_lines(p, 0);
            pthread_mutex_lock(&p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        log_lines(p, 1);
        return;
    }
    int drawn = 0;
    double last = 0;
    char line[512];
    pthread_mutex_lock(&p->mu);
    while (p->n_done < p->K) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        double now = drift_now() - p->t0;
        if (p->n_done < p->K && now - last >= REDRAW_S) {
            pthread_mutex_unlock(&p->mu);
            drift_progress_format(p, now, line, sizeof line);
            struct winsize ws;
            size_t cols = 80;
            if (ioctl(fileno(p->f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
                cols = ws.ws_col;
            if (strlen(line) > cols - 1)
                line[cols - 1] = '\0';
            fprintf(p->f, "\r%s\033[K", line);
            fflush(p->f);
            drawn = 1;
            last = now;
            pthread_mutex_lock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (drawn) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
    }
}

/* ---- progress as a run extension (ext.h) -------------------------------- */

static int progress_open(drift_chain *c, drift_chain_result *res)
{
    (void)res;
    if (!c->run)
        return DRIFT_EXT_IDLE;
    c->ext.progress = drift_progress_slot_at(c->run->progress,
                                             drift_run_ext_index(c));
    return c->ext.progress ? DRIFT_EXT_ON : DRIFT_EXT_IDLE;
}

static void progress_replan(drift_chain *c)
{
    const drift_run_config *cfg = c->cfg;
    if (c->run)
        drift_progress_replan(
            c->run->progress,
            cfg->budget.iters ? cfg->budget.warmup + cfg->budget.iters : 0,
            cfg->budget.warmup);
}

static int progress_after_step(drift_chain *c)
{
    drift_progress_note(c->ext.progress, c->iter, c->grads,
                        c->output.draws_written);
    return 0;
}

/* Also for a chain that never started: the line stops waiting for it. */
static void progress_close(drift_chain *c, drift_chain_result *res,
                           int started)
{
    (void)res;
    (void)started;
    if (c->run)
        drift_progress_done(c->run->progress, drift_run_ext_index(c));
    c->ext.progress = NULL;
}

const drift_run_ext drift_progress_ext = {
    .name = "progress",
    .open = progress_open,
    .replan = progress_replan,
    .after_step = progress_after_step,
    .close = progress_close,
};
