/* stop.h: stopping long work when a signal asks for it: the request
 * (an atomic the handler sets and loops poll) and the handlers the
 * commands install.  Not for what work does when it stops. */
#ifndef DRIFT_STOP_H
#define DRIFT_STOP_H

/* Asks every loop that polls drift_stop_requested to stop at its next
 * check.  The first request's signal number is kept (sig 0 counts as
 * SIGINT).  Async-signal-safe. */
void drift_stop_request(int sig);

/* 0, or the signal that asked to stop.  Cheap: one relaxed atomic load. */
int drift_stop_requested(void);

/* Forgets a request (before new work that should not see an old one). */
void drift_stop_clear(void);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP: the first such signal
 * requests a stop (the work ends cleanly and says so); a second one while
 * stopping removes the named temporary files of open writers
 * (drift_writer_cleanup_signal) and ends the process by that signal.
 * drift_stop_uncatch puts the start's actions back.  A signal the process
 * was started with ignored stays ignored, as the caller asked: nohup
 * ignores SIGHUP so that a run outlives its terminal, and a shell without
 * job control starts background jobs with SIGINT ignored so that Ctrl-C
 * on the script leaves them running (CmdStan, which catches nothing,
 * behaves the same; SIGTERM still stops such a run cleanly). */
void drift_stop_catch(void);
void drift_stop_uncatch(void);

/* Notes which stop signals the process was started with ignored; main
 * calls it first, before any handler is installed (the other functions
 * here call it too, for programs that do not). */
void drift_stop_note_start(void);

/* Whether sig (SIGINT, SIGTERM or SIGHUP) was ignored at the start. */
int drift_stop_ignored(int sig);

/* The process (pid) that forwards to this one the stop signals sent to it
 * (guard.c's parent), 0 for none.  A signal sent to the whole process
 * group arrives twice, directly and forwarded: the handlers take the two
 * copies, when they come within a second of each other, as one signal. */
void drift_stop_forwarder(int pid);

/* "SIGINT", "SIGTERM", "SIGHUP", or "signal N" into buf. */
const char *drift_stop_signal_name(int sig, char *buf, unsigned long cap);

#endif
