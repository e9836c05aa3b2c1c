/* msg.c: the engine's message sink (see msg.h).  The line sink is a
 * glibc cookie stream: stdio serialises the writes of each call, and the
 * cookie joins what it is handed into lines under its own lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "util.h"

static FILE *sink;  /* NULL: stderr */

FILE *drift_msg_stream(void)
{
    FILE *f = __atomic_load_n(&sink, __ATOMIC_ACQUIRE);
    return f ? f : stderr;
}

FILE *drift_msg_set(FILE *f)
{
    return __atomic_exchange_n(&sink, f, __ATOMIC_ACQ_REL);
}

int drift_msg_kind(const char *line)
{
    unsigned id;
    int n = 0;
    if (sscanf(line, "Chain %u Iteration:%n", &id, &n) == 1 && n > 0)
        return DRIFT_MSG_PROGRESS;
    if (strstr(line, "warning:"))
        return DRIFT_MSG_WARNING;
    return DRIFT_MSG_NOTE;
}

typedef struct line_sink {
    drift_msg_fn fn;
    void *user;
    pthread_mutex_t mu;
    char *buf;          /* the line so far */
    size_t len, cap;
} line_sink;

static void hand_over(line_sink *s)
{
    s->buf[s->len] = '\0';
    s->fn(s->user, drift_msg_kind(s->buf), s->buf);
    s->len = 0;
}

static ssize_t sink_write(void *cookie, const char *data, size_t n)
{
    line_sink *s = cookie;
    pthread_mutex_lock(&s->mu);
    for (size_t k = 0; k < n; k++) {
        if (data[k] == '\n') {
            hand_over(s);
            continue;
        }
        if (s->len + 2 > s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 256;
            char *b = drift_realloc(s->buf, cap);
            if (!b)
                continue; /* out of memory: the line loses bytes */
            s->buf = b;
            s->cap = cap;
        }
        s->buf[s->len++] = data[k];
    }
    pthread_mutex_unlock(&s->mu);
    return (ssize_t)n;
}

static int sink_close(void *cookie)
{
    line_sink *s = cookie;
    if (s->len)
        hand_over(s);
    pthread_mutex_destroy(&s->mu);
    drift_free(s->buf);
    drift_free(s);
    return 0;
}

FILE *drift_msg_open(drift_msg_fn fn, void *user)
{
    line_sink *s = drift_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fn = fn;
    s->user = user;
    pthread_mutex_init(&s->mu, NULL);
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    FILE *f = fopencookie(s, "w", io);
    if (!f) {
        pthread_mutex_destroy(&s->mu);
        drift_free(s);
        return NULL;
    }
    /* Line buffered: each line reaches the callback when it is written. */
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}
