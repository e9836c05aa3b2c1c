/* msg.h: where the engine's messages go: progress lines, notes and
 * warnings, written with stdio to drift_msg_stream().  That is stderr
 * unless a run made with a message callback has set a line sink (a stdio
 * stream that hands the callback one complete line at a time).  Not for
 * the CLI's own output, nor for draws. */
#ifndef DRIFT_BASE_MSG_H
#define DRIFT_BASE_MSG_H

#include <stdio.h>

/* The kinds of a line, as drift.h's DRIFT_MESSAGE_* say them. */
enum { DRIFT_MSG_PROGRESS = 0, DRIFT_MSG_NOTE = 1, DRIFT_MSG_WARNING = 2 };

typedef void (*drift_msg_fn)(void *user, int kind, const char *line);

/* Where messages go now: the sink set, else stderr. */
FILE *drift_msg_stream(void);

/* Sets the process's sink (NULL: stderr again) and returns the one it
 * replaces.  The engine's messages are the process's: one sink at a
 * time. */
FILE *drift_msg_set(FILE *sink);

/* A stream that calls fn(user, kind, line) for each complete line written
 * to it, the line without its newline, one call at a time whatever thread
 * writes; the kind read from the line (a "Chain N Iteration:" line is
 * progress, a "warning:" one a warning, the rest notes).  A last line
 * without its newline is handed over at fclose.  NULL when out of
 * memory. */
FILE *drift_msg_open(drift_msg_fn fn, void *user);

/* The kind of line (the rule drift_msg_open uses). */
int drift_msg_kind(const char *line);

#endif
