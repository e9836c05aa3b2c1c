/* guard.c: a sampling run watched from a parent process.  drift sample
 * forks before the run; the child samples as an unguarded run would and
 * hands every draws file it opens (the descriptor, over a socket) to the
 * parent, which keeps it open.  A shared page tells the parent which
 * plugin call each chain is in and where each file's parts lie.  When the
 * child dies of a signal, calls exit inside a plugin call, or stays in
 * one call longer than --step-timeout, the parent cuts each file it holds
 * to its last whole row, completes it (adaptation block if missing, a
 * "# drift: incomplete" note, the Elapsed Time trailer, the counts in the
 * header) and puts it in place: the draws written so far are kept, and
 * the command ends with status 1 and a message naming chain, iteration
 * and plugin.  Not for the files of a run that ends normally: the child
 * commits those itself (csvout.c, run.c). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/msg.h"
#include "base/stop.h"
#include "base/util.h"
#include "base/writer.h"
#include "csvout.h"
#include "ext.h"
#include "guard.h"

enum { FILE_NONE = 0, FILE_HANDED, FILE_SETTLED };

struct drift_guard_slot {
    atomic_int call;        /* DRIFT_GUARD_* */
    atomic_uint_fast64_t iter;
    atomic_int file;        /* FILE_* */
    drift_csvout_layout L;  /* written by the child; the parent reads it
                               only once the child is gone */
    char path[PATH_MAX];
    char tmp[PATH_MAX];     /* "" when the file has no name */
    char buf[1 << 16];      /* the file's stream buffer: what the child
                               wrote and the file does not hold yet, up to
                               the first NUL (drift_writer_buffer) */
    uint64_t written;       /* the stream's bytes in the file, as counted
                               after each write (drift_writer_buffer) */
};

typedef struct guard_page {
    atomic_int fault_sig;   /* the signal the fault handler saw, or 0 */
    atomic_int fault_chain; /* its chain's index + 1, 0 if none */
    atomic_int exit_chain;  /* the chain (index + 1) whose thread called
                               exit, 0 if none */
    atomic_int done;        /* the child's exit status + 1 once the run
                               has ended and been reported, 0 before */
    unsigned K;
    struct drift_guard_slot slot[];
} guard_page;

static guard_page *page;    /* NULL: unguarded */
static size_t page_bytes;
static int sock = -1;       /* the child's end of the socket */
static _Thread_local drift_guard_slot *thread_slot;
static _Thread_local void *thread_altstack;
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t got_term; /* the parent received SIGTERM */
static volatile sig_atomic_t got_stop; /* the stop signal the parent
                                          received (SIGINT, SIGTERM, SIGHUP),
                                          0 before one */

/* Seconds a chain may stay in the plugin call it was in when a stop signal
 * came before the run is ended from here: the engine stops a chain after
 * its step and inside the gradient oracles, so only a plugin that computes
 * long without calling back (or never returns) holds the run longer; a
 * stop must end the run within a second, its draws kept. */
#define STOP_GRACE 0.6

/* ---- the child ---------------------------------------------------------- */

/* A fault in a chain's thread: note which chain and which signal for the
 * parent, then die of it. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    (void)uc;
    int expect = 0;
    if (page && atomic_compare_exchange_strong(&page->fault_sig, &expect,
                                               sig))
        atomic_store(&page->fault_chain,
                     thread_slot ? (int)(thread_slot - page->slot) + 1 : 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    raise(sig); /* blocked until the handler returns, then fatal */
}

/* exit() called while a chain's thread is in a plugin call (a plugin that
 * exits): note the chain for the parent and leave at once.  Going on with
 * exit would flush every stream without its lock while the other chains
 * still write to theirs, tearing rows; as it is, each stream's buffer and
 * count stay as the parent needs them (drift_writer_buffer). */
static void on_exit_note(int status, void *arg)
{
    (void)arg;
    if (page && thread_slot &&
        atomic_load(&thread_slot->call) != DRIFT_GUARD_IDLE) {
        atomic_store(&page->exit_chain, (int)(thread_slot - page->slot) + 1);
        _exit(status);
    }
}

static void child_begin(pid_t parent)
{
    /* The child dies with the parent (a SIGKILL to the command leaves
     * nothing: the files are unnamed until committed). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        raise(SIGKILL);
    drift_stop_forwarder((int)parent);
    on_exit(on_exit_note, NULL);
    /* SIGBUS stays with mapguard.c (lost pages of a mapped input). */
    const int fatal[] = {SIGSEGV, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof fatal / sizeof *fatal; k++)
        sigaction(fatal[k], &sa, NULL);
}

drift_guard_slot *drift_guard_slot_at(unsigned k)
{
    return page && k < page->K ? &page->slot[k] : NULL;
}

drift_csvout_layout *drift_guard_layout_of(drift_guard_slot *s)
{
    return s ? &s->L : NULL;
}

void drift_guard_thread_begin(drift_guard_slot *s)
{
    if (!s)
        return;
    thread_slot = s;
    /* A stack overflow in a plugin still reaches on_fault. */
    size_t n = 1 << 16;
    thread_altstack = malloc(n);
    if (thread_altstack) {
        stack_t st = {.ss_sp = thread_altstack, .ss_size = n, .ss_flags = 0};
        if (sigaltstack(&st, NULL)) {
            free(thread_altstack);
            thread_altstack = NULL;
        }
    }
}

void drift_guard_thread_end(drift_guard_slot *s)
{
    if (!s)
        return;
    thread_slot = NULL;
    if (thread_altstack) {
        stack_t st = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&st, NULL);
        free(thread_altstack);
        thread_altstack = NULL;
    }
}

void drift_guard_call(drift_guard_slot *s, int what, uint64_t iter)
{
    if (!s)
        return;
    atomic_store_explicit(&s->iter, iter, memory_order_relaxed);
    atomic_store_explicit(&s->call, what, memory_order_release);
}

/* A message of one chain index k with room for one descriptor in cbuf:
 * what drift_guard_file sends and take_fd receives. */
static void fd_message(struct msghdr *m, struct iovec *io, uint32_t *k,
                       char *cbuf, size_t cap)
{
    *io = (struct iovec){k, sizeof *k};
    *m = (struct msghdr){0};
    m->msg_iov = io;
    m->msg_iovlen = 1;
    m->msg_control = cbuf;
    m->msg_controllen = cap;
}

void drift_guard_file(drift_guard_slot *s, drift_writer *w, const char *path)
{
    const char *tmp = drift_writer_temp_name(w);
    int fd = drift_writer_fd(w);
    if (!s || sock < 0 || strlen(path) >= PATH_MAX ||
        (tmp && strlen(tmp) >= PATH_MAX) ||
        drift_writer_buffer(w, s->buf, sizeof s->buf, &s->written))
        return;
    snprintf(s->path, sizeof s->path, "%s", path);
    snprintf(s->tmp, sizeof s->tmp, "%s", tmp ? tmp : "");
    s->L.off_rows = s->L.off_warm_end = s->L.off_samp = -1;
    s->L.at_num_samples = s->L.at_num_warmup = s->L.at_save_warmup =
        s->L.at_engaged = -1;
    s->L.t_start = drift_now();
    s->L.t_warm_end = -1;
    uint32_t k = (uint32_t)(s - page->slot);
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec io;
    struct msghdr m;
    fd_message(&m, &io, &k, cbuf, sizeof cbuf);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    ssize_t n;
    do
        n = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof k)
        atomic_store(&s->file, FILE_HANDED);
}

void drift_guard_file_settled(drift_guard_slot *s)
{
    if (s)
        atomic_store(&s->file, FILE_SETTLED);
}

void drift_guard_child_done(int status)
{
    if (page && !child_pid)
        atomic_store(&page->done, status + 1);
}

/* ---- the parent --------------------------------------------------------- */

/* Stop signals sent to the parent alone (kill PID, timeout(1)) go on to
 * the child; those the terminal sends reach the whole process group, the
 * child included, and are not sent twice. */
static void on_parent_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (sig == SIGTERM)
        got_term = 1;
    if (!got_stop)
        got_stop = sig;
    if (child_pid > 0 && si && si->si_code <= 0)
        kill((pid_t)child_pid, sig);
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (a bad memory access)";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL (an illegal instruction)";
    case SIGFPE: return "SIGFPE (an arithmetic fault)";
    case SIGABRT: return "SIGABRT (abort was called)";
    case SIGKILL: return "SIGKILL";
    case SIGSYS: return "SIGSYS";
    case SIGTRAP: return "SIGTRAP";
    case SIGTERM: return "SIGTERM";
    case SIGQUIT: return "SIGQUIT";
    default: return NULL;
    }
}

static const char *call_name(int call)
{
    switch (call) {
    case DRIFT_GUARD_SETUP: return "setup";
    case DRIFT_GUARD_INIT: return "init";
    case DRIFT_GUARD_STEP: return "step";
    case DRIFT_GUARD_FINISH: return "finish";
    default: return NULL;
    }
}

/* The offset after the last newline of the file's first `size` bytes
 * (0 if none); -1 on a read error. */
static off_t last_line_end(int fd, off_t size)
{
    char buf[1 << 16];
    off_t at = size;
    while (at > 0) {
        size_t want = at < (off_t)sizeof buf ? (size_t)at : sizeof buf;
        ssize_t k = pread(fd, buf, want, at - (off_t)want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k != (ssize_t)want)
            return -1;
        for (size_t i = want; i > 0; i--)
            if (buf[i - 1] == '\n')
                return at - (off_t)want + (off_t)i;
        at -= (off_t)want;
    }
    return 0;
}

/* Rows (lines not starting with '#') between offsets a and b, which are
 * line starts; -1 on a read error. */
static int64_t count_rows(int fd, off_t a, off_t b)
{
    char buf[1 << 16];
    int64_t rows = 0;
    int at_start = 1;
    while (a < b) {
        size_t want = b - a < (off_t)sizeof buf ? (size_t)(b - a)
                                                : sizeof buf;
        ssize_t k = pread(fd, buf, want, a);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        for (ssize_t i = 0; i < k; i++) {
            if (at_start && buf[i] != '#')
                rows++;
            at_start = buf[i] == '\n';
        }
        a += k;
    }
    return rows;
}

/* Completes slot s's file (descriptor fd) as the child would have on a
 * failure, with `why` as its note, and puts it in place.  Returns the
 * rows kept, or -1 (message in e) when nothing could be kept (the file
 * then has not reached its first row, or cannot be written). */
static int64_t rescue_file(drift_guard_slot *s, int fd, const char *why,
                           double t_end, drift_err *e)
{
    const drift_csvout_layout *L = &s->L;
    const char *tmp = s->tmp[0] ? s->tmp : NULL;
    off_t size = lseek(fd, 0, SEEK_END);
    /* The rows still in the stream's buffer when the child died, less
     * what a write had put in the file before the buffer was cleared. */
    size_t fresh = strnlen(s->buf, sizeof s->buf);
    size_t skip = size > 0 && (uint64_t)size > s->written
                      ? (size_t)((uint64_t)size - s->written)
                      : 0;
    while (fresh > skip && s->buf[fresh - 1] != '\n')
        fresh--;
    if (size >= 0 && fresh > skip &&
        pwrite(fd, s->buf + skip, fresh - skip, size) ==
            (ssize_t)(fresh - skip))
        size += (off_t)(fresh - skip);
    off_t end = size < 0 ? -1 : last_line_end(fd, size);
    if (end >= 0 && L->off_samp < 0 && L->off_warm_end >= 0 &&
        end > L->off_warm_end)
        end = L->off_warm_end; /* a block cut short: written again */
    if (end < 0 || L->off_rows < 0 || end < L->off_rows) {
        if (tmp)
            unlink(tmp);
        close(fd);
        drift_err_set(e, DRIFT_EIO, "%s: no draw had been written", s->path);
        return -1;
    }
    int block = L->off_samp >= 0 && L->off_samp <= end;
    int64_t warm = count_rows(fd, L->off_rows, block ? L->off_warm_end : end);
    int64_t samp = block ? count_rows(fd, L->off_samp, end) : 0;
    drift_writer *w = NULL;
    if (warm < 0 || samp < 0 || ftruncate(fd, end) != 0 ||
        lseek(fd, end, SEEK_SET) != end ||
        drift_writer_adopt(fd, s->path, tmp, &w, e)) {
        if (!w) {
            if (tmp)
                unlink(tmp);
            close(fd);
        }
        drift_writer_abort(w);
        drift_err_set(e, DRIFT_EIO, "%s: cannot complete the file: %s",
                      s->path, strerror(errno));
        return -1;
    }
    FILE *f = drift_writer_file(w);
    if (!block)
        drift_csvout_write_block(f, L->step, L->metric_kind, L->d, NULL);
    fprintf(f, "# drift: incomplete: %s\n", why);
    double warm_end = L->t_warm_end >= 0 ? L->t_warm_end : t_end;
    drift_csvout_write_elapsed(f, warm_end - L->t_start, t_end - warm_end);
    uint64_t thin = L->thin ? L->thin : 1;
    uint64_t iter = atomic_load(&s->iter);
    uint64_t num_warmup = L->save_warmup ? (uint64_t)warm * thin
                          : iter < L->warmup ? iter
                                             : L->warmup;
    int patched = fflush(f) == 0;
    patched = patched &&
              !drift_csvout_patch(fd, L->at_num_samples,
                                  (uint64_t)samp * thin,
                                  DRIFT_CSVOUT_COUNT_WIDTH) &&
              !drift_csvout_patch(fd, L->at_num_warmup,
                                  num_warmup ? num_warmup : 1,
                                  DRIFT_CSVOUT_COUNT_WIDTH) &&
              !drift_csvout_patch(fd, L->at_save_warmup,
                                  (uint64_t)(L->save_warmup && warm > 0), 1) &&
              !drift_csvout_patch(fd, L->at_engaged, (uint64_t)L->engaged, 1);
    if (!patched) {
        drift_writer_abort(w);
        drift_err_set(e, DRIFT_EIO, "%s: cannot complete the file: %s",
                      s->path, strerror(errno));
        return -1;
    }
    if (drift_writer_commit(w, e))
        return -1;
    return warm + samp;
}

/* Why the child ended, in words, for the messages and the files' notes;
 * whether the files are to be rescued; the command's exit status. */
typedef struct ending {
    char why[512];
    int rescue;
    int status;             /* the command's exit status */
} ending;

/* "chain K: sampler 'S' VERB at iteration I, in its CALL: DETAIL" */
static void say_chain(ending *en, const drift_guard_config *g, unsigned k,
                      const char *verb, const char *detail)
{
    const drift_guard_slot *s = &page->slot[k];
    const char *cn = call_name(atomic_load(&s->call));
    snprintf(en->why, sizeof en->why,
             "chain %u: sampler '%s' %s at iteration %llu%s%s: %s",
             g->first_id + k, g->sampler, verb,
             (unsigned long long)atomic_load(&s->iter), cn ? ", in its " : "",
             cn ? cn : "", detail);
}

/* The first chain in a plugin call, or -1. */
static int chain_in_call(void)
{
    for (unsigned k = 0; k < page->K; k++)
        if (atomic_load(&page->slot[k].call) != DRIFT_GUARD_IDLE)
            return (int)k;
    return -1;
}

static void judge(const drift_guard_config *g, int wstatus, int hung,
                  int hung_chain, ending *en)
{
    en->rescue = 1;
    en->status = 1;
    char what[128];
    if (hung < 0) {
        snprintf(en->why, sizeof en->why,
                 "mpirun ended the job (SIGTERM: another rank failed, or the "
                 "job was interrupted) and this rank did not stop within "
                 "%g s, waiting for the other ranks",
                 g->term_grace);
        return;
    }
    if (hung == 2) {
        char sb[32];
        const char *sn = sig_name(got_stop);
        if (!sn) {
            snprintf(sb, sizeof sb, "signal %d", (int)got_stop);
            sn = sb;
        }
        snprintf(what, sizeof what,
                 "no return within %g s of %s (the stop asked for)",
                 STOP_GRACE, sn);
        say_chain(en, g, (unsigned)hung_chain, "did not stop", what);
        en->status = 128 + got_stop;
        return;
    }
    if (hung) {
        snprintf(what, sizeof what, "no return for %g s (--step-timeout)",
                 g->step_timeout);
        say_chain(en, g, (unsigned)hung_chain, "stopped answering", what);
        return;
    }
    if (WIFEXITED(wstatus)) {
        int k = atomic_load(&page->exit_chain);
        if (!k) { /* a normal end: the child said what it had to */
            en->rescue = 0;
            en->status = WEXITSTATUS(wstatus);
            return;
        }
        snprintf(what, sizeof what, "exit status %d", WEXITSTATUS(wstatus));
        say_chain(en, g, (unsigned)k - 1, "called exit", what);
        return;
    }
    int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        /* A second stop signal: the child left at once, as asked. */
        en->rescue = 0;
        en->status = 128 + sig;
        return;
    }
    const char *name = sig_name(sig);
    char sbuf[32];
    if (!name) {
        snprintf(sbuf, sizeof sbuf, "signal %d", sig);
        name = sbuf;
    }
    int k = atomic_load(&page->fault_sig) == sig
                ? atomic_load(&page->fault_chain)
                : 0;
    if (!k && sig != SIGKILL && sig != SIGBUS)
        k = chain_in_call() + 1; /* 0 when no chain was in a call */
    if (k) {
        say_chain(en, g, (unsigned)k - 1, "crashed", name);
    } else if (sig == SIGKILL) {
        snprintf(en->why, sizeof en->why,
                 "the sampling process was killed (SIGKILL; the kernel does "
                 "this when memory runs out)");
    } else {
        snprintf(en->why, sizeof en->why,
                 "the sampling process died of %s", name);
    }
}

/* Takes a descriptor the child sent; returns 0 at the end of the stream
 * (the child is gone), 1 otherwise. */
static int take_fd(int s, int *fds)
{
    uint32_t k;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec io;
    struct msghdr m;
    fd_message(&m, &io, &k, cbuf, sizeof cbuf);
    ssize_t n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0)
        return 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm;
         cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        int fd;
        memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        if (n == (ssize_t)sizeof k && k < page->K) {
            if (fds[k] >= 0)
                close(fds[k]);
            fds[k] = fd;
        } else {
            close(fd);
        }
    }
    return 1;
}

static int supervise(const drift_guard_config *g, pid_t pid, int s)
{
    unsigned K = page->K;
    int *fds = calloc(K, sizeof *fds);
    uint64_t *seen_iter = calloc(K, sizeof *seen_iter);
    int *seen_call = calloc(K, sizeof *seen_call);
    double *since = calloc(K, sizeof *since);
    if (!fds || !seen_iter || !seen_call || !since) {
        /* Cannot watch: wait for the child and pass its status on. */
        free(fds);
        free(seen_iter);
        free(seen_call);
        free(since);
        int ws;
        while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
            ;
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
    }
    for (unsigned k = 0; k < K; k++)
        fds[k] = -1;
    int open_sock = 1, wstatus = 0, ended = 0, hung = 0, hung_chain = -1;
    double term_at = 0, stop_at = 0;
    while (!ended) {
        struct pollfd p = {s, POLLIN, 0};
        /* Polled often enough to keep to term_grace and STOP_GRACE. */
        int n = poll(&p, open_sock ? 1 : 0,
                     g->term_grace > 0 || got_stop ? 20 : 200);
        if (n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
            open_sock = take_fd(s, fds);
        pid_t w = waitpid(pid, &wstatus, WNOHANG);
        if (w == pid) {
            ended = 1;
            break;
        }
        /* A rank of a job mpirun ends: its child may wait in MPI for a
         * rank that is gone, and mpirun kills this process soon after its
         * SIGTERM; the files are completed here before that. */
        if (got_term && g->term_grace > 0) {
            double now = drift_now();
            if (!term_at)
                term_at = now;
            else if (now - term_at > g->term_grace) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
                    ;
                hung = -1;
                ended = 1;
                break;
            }
        }
        /* A chain in one plugin call at one iteration for longer than
         * --step-timeout has hung; after a stop signal, for longer than
         * STOP_GRACE from the signal, it is not going to stop on its own
         * (ranks of an MPI job keep term_grace above). */
        double now = drift_now(), limit = g->step_timeout;
        if (got_stop && g->term_grace <= 0) {
            if (!stop_at) {
                stop_at = now;
                for (unsigned k = 0; k < K; k++)
                    since[k] = now;
            }
            limit = limit > 0 && limit < STOP_GRACE ? limit : STOP_GRACE;
        }
        if (limit <= 0)
            continue;
        for (unsigned k = 0; k < K; k++) {
            int call = atomic_load(&page->slot[k].call);
            uint64_t it = atomic_load(&page->slot[k].iter);
            if (call != seen_call[k] || it != seen_iter[k] || !since[k]) {
                seen_call[k] = call;
                seen_iter[k] = it;
                since[k] = now;
            } else if (call != DRIFT_GUARD_IDLE && now - since[k] > limit) {
                hung = stop_at ? 2 : 1;
                hung_chain = (int)k;
                break;
            }
        }
        if (hung) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
                ;
            ended = 1;
        }
    }
    /* What the child sent before it died is still in the socket. */
    while (open_sock) {
        struct pollfd p = {s, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0)
            break;
        open_sock = take_fd(s, fds);
    }
    ending en;
    judge(g, wstatus, hung, hung_chain, &en);
    /* A child that had ended its run, every file in place and every
     * chain reported, and then died (a thread a plugin left running, a
     * plugin's exit code): the run stands as reported. */
    int done = atomic_load(&page->done);
    if (done && en.rescue && hung == 0) {
        char how[64];
        if (WIFSIGNALED(wstatus)) {
            const char *name = sig_name(WTERMSIG(wstatus));
            if (name)
                snprintf(how, sizeof how, "died of %s", name);
            else
                snprintf(how, sizeof how, "died of signal %d",
                         WTERMSIG(wstatus));
        } else {
            snprintf(how, sizeof how, "called exit (status %d)",
                     WEXITSTATUS(wstatus));
        }
        fflush(stdout);
        fprintf(drift_msg_stream(),
                "drift: warning: %s%sthe sampling process %s after the run "
                "had ended and been reported (its files were in place): "
                "likely a thread a sampler plugin left running, or the "
                "plugin's code at exit; the results above stand\n",
                g->who ? g->who : "", g->who ? ": " : "", how);
        en.rescue = 0;
        en.status = done - 1;
    }
    if (hung < 0) {
        /* Killed after mpirun's SIGTERM: with every file already in
         * place (the child was leaving the job) there is nothing to say
         * beyond mpirun's own account. */
        int pending = 0;
        for (unsigned k = 0; k < K; k++)
            pending |= fds[k] >= 0 &&
                       atomic_load(&page->slot[k].file) == FILE_HANDED;
        if (!pending) {
            en.rescue = 0;
            en.status = 128 + SIGTERM;
        }
    }
    double t_end = drift_now();
    if (en.rescue) {
        fflush(stdout);
        fprintf(drift_msg_stream(), "drift sample: %s%s%s; the run stops\n",
                g->who ? g->who : "", g->who ? ": " : "", en.why);
        for (unsigned k = 0; k < K; k++) {
            drift_guard_slot *sl = &page->slot[k];
            if (fds[k] < 0 || atomic_load(&sl->file) != FILE_HANDED)
                continue;
            char note[700];
            snprintf(note, sizeof note,
                     "the run ended early (%s%s%.500s); the draws before "
                     "iteration %llu of this chain are valid",
                     g->who ? g->who : "", g->who ? ": " : "", en.why,
                     (unsigned long long)atomic_load(&sl->iter));
            drift_err e = {{0}};
            int64_t rows = rescue_file(sl, fds[k], note, t_end, &e);
            fds[k] = -1; /* rescue_file closed it */
            if (rows < 0)
                fprintf(drift_msg_stream(), "drift: chain %u: %s\n",
                        g->first_id + k, e.msg);
            else
                fprintf(drift_msg_stream(),
                        "drift: chain %u: %lld draws kept in %s, marked "
                        "incomplete\n",
                        g->first_id + k, (long long)rows, sl->path);
            /* A file that had not reached its first draw is no file:
             * nothing was put in place, nothing is left. */
        }
        /* Every chain is accounted for: those with no file (queued
         * behind the running ones, or stopped before their first draw)
         * are said to have none, in ranges. */
        for (unsigned k = 0; k < K;) {
            drift_guard_slot *sl = &page->slot[k];
            if (atomic_load(&sl->file) != FILE_NONE) {
                k++;
                continue;
            }
            unsigned j = k;
            while (j + 1 < K &&
                   atomic_load(&page->slot[j + 1].file) == FILE_NONE)
                j++;
            if (j > k)
                fprintf(drift_msg_stream(),
                        "drift: chains %u-%u: no file (they had not begun "
                        "sampling: queued behind the running chains, or "
                        "still in setup)\n",
                        g->first_id + k, g->first_id + j);
            else
                fprintf(drift_msg_stream(),
                        "drift: chain %u: no file (it had not begun "
                        "sampling: queued behind the running chains, or "
                        "still in setup)\n",
                        g->first_id + k);
            k = j + 1;
        }
    }
    for (unsigned k = 0; k < K; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    free(fds);
    free(seen_iter);
    free(seen_call);
    free(since);
    if (!en.rescue && en.status > 128 && en.status - 128 < NSIG) {
        /* Die of the child's stop signal, as an unguarded run would (the
         * output set's locks, held here, released first). */
        int sig = en.status - 128;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(sig, &sa, NULL);
        if (WIFSIGNALED(wstatus)) {
            drift_writer_unlock_all();
            raise(sig);
        }
    }
    return en.status;
}

int drift_guard_start(const drift_guard_config *g, int *parent, int *status,
                      drift_err *e)
{
    *parent = 0;
    *status = 0;
    const char *off = getenv("DRIFT_GUARD");
    if (off && !strcmp(off, "0"))
        return DRIFT_OK;
    unsigned K = g->chains ? g->chains : 1;
    size_t bytes = sizeof(guard_page) + (size_t)K * sizeof(drift_guard_slot);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return drift_err_set(e, DRIFT_EIO,
                             "cannot watch the run from a second process "
                             "(shared memory: %s); a crashing sampler will "
                             "lose its draws",
                             strerror(errno));
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
        int err = errno;
        munmap(m, bytes);
        return drift_err_set(e, DRIFT_EIO,
                             "cannot watch the run from a second process "
                             "(socket: %s); a crashing sampler will lose "
                             "its draws",
                             strerror(err));
    }
    page = m;
    page_bytes = bytes;
    page->K = K;
    pid_t me = getpid();
    fflush(NULL); /* nothing buffered may be written twice */
    /* A stop signal between the fork and the parent's forwarding handler
     * would stop the parent's (idle) copy of the run alone, and the child
     * would sample on: the signals wait, blocked, until the handler is
     * in place (the child starts with none pending, and a request made
     * before the fork is in its memory already). */
    sigset_t stops, was;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stops, &was);
    pid_t pid = fork();
    if (pid <= 0)
        pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (pid < 0) {
        int err = errno;
        close(sv[0]);
        close(sv[1]);
        munmap(m, bytes);
        page = NULL;
        return drift_err_set(e, DRIFT_EIO,
                             "cannot watch the run from a second process "
                             "(fork: %s); a crashing sampler will lose its "
                             "draws",
                             strerror(err));
    }
    if (pid == 0) {
        close(sv[0]);
        sock = sv[1];
        child_begin(me);
        return DRIFT_OK;
    }
    close(sv[1]);
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_parent_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    const int fwd[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof fwd / sizeof *fwd; k++)
        if (!drift_stop_ignored(fwd[k])) /* ignored as the caller asked */
            sigaction(fwd[k], &sa, NULL);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    *parent = 1;
    *status = supervise(g, pid, sv[0]);
    close(sv[0]);
    munmap(page, page_bytes);
    page = NULL;
    return DRIFT_OK;
}

/* ---- the guard as a run extension (ext.h) ------------------------------- */

/* The chain's slot, its thread, and its draws file handed to the parent.
 * (The marks around each plugin call, drift_guard_call, are made where
 * the calls are.) */
static int guard_open(drift_chain *c, drift_chain_result *res)
{
    drift_guard_slot *s = drift_guard_slot_at(drift_run_ext_index(c));
    if (!s)
        return DRIFT_EXT_IDLE;
    c->ext.guard = s;
    c->output.layout = drift_guard_layout_of(s);
    drift_guard_thread_begin(s);
    if (c->output.w)
        drift_guard_file(s, c->output.w, res->path);
    return DRIFT_EXT_IDLE;
}

static void guard_close(drift_chain *c, drift_chain_result *res, int started)
{
    (void)res;
    (void)started;
    drift_guard_thread_end(c->ext.guard);
}

const drift_run_ext drift_guard_ext = {
    .name = "guard",
    .open = guard_open,
    .close = guard_close,
};
