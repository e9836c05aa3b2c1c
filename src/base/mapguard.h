/* mapguard.h: memory maps of input files that may shrink or change while
 * a run reads them.  Reading a page of a map past its file's end (someone
 * truncated or rewrote the file) raises SIGBUS; under the guard the lost
 * part of the map reads as zeros instead and the map is marked changed,
 * so the work polls, stops and reports "FILE: changed size during the
 * run" instead of dying.  Not for files drift writes. */
#ifndef DRIFT_MAPGUARD_H
#define DRIFT_MAPGUARD_H

#include <stddef.h>

#include <drift/common.h>

/* Guards the map [addr, addr + len) of the file open as fd (kept open by
 * the caller while guarded), named path in messages.  Returns a handle
 * >= 0, or -1 when the guard table is full (the map is then unguarded).
 * The first call installs the SIGBUS handler. */
int drift_mapguard_add(const void *addr, size_t len, int fd,
                       const char *path);
/* Ends the guard (before the map is unmapped).  -1 is a no-op. */
void drift_mapguard_remove(int h);

/* Whether any guarded map has lost pages (or a poll saw its file change)
 * since the process started, also maps since removed.  Cheap: one
 * relaxed atomic load, for inner loops. */
int drift_mapguard_any(void);

/* DRIFT_EIO with "PATH: changed size during the run ..." when a map lost
 * pages or, with poll set, when an fstat of a guarded file finds its size
 * or modification time changed since it was added; else DRIFT_OK.  The
 * poll costs one fstat per guarded map: call it at pass boundaries. */
int drift_mapguard_check(int poll, drift_err *e);
/* The same for one guard. */
int drift_mapguard_check_one(int h, int poll, drift_err *e);

#endif
