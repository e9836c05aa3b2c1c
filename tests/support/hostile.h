/* hostile.h: what the tests of the drift command against hostile files
 * share (test_hostile_*.c): scratch directories, small files, and drift
 * run as a user runs it, in a directory of the test's choosing, with a
 * time limit (a hang is a failure).  Not for production code. */
#ifndef DRIFT_TEST_HOSTILE_H
#define DRIFT_TEST_HOSTILE_H

#include <sys/types.h>

#include "harness.h"

/* A fresh directory under /tmp (caller frees, and removes it with
 * hx_rm). */
char *hx_tmpdir(void);
void hx_rm(const char *dir);
/* dir/name, malloc'd. */
char *hx_in(const char *dir, const char *name);
/* The whole of dir/name, malloc'd (NULL when it cannot be read). */
char *hx_slurp(const char *dir, const char *name);
/* Writes text to dir/name. */
void hx_write(const char *dir, const char *name, const char *text);
/* Whether dir/name exists (as anything, a dangling link included). */
int hx_exists(const char *dir, const char *name);
/* The absolute path of a file under srcdir. */
const char *hx_src(const char *rel);
/* Copies the examples' logistic model and Pima data into dir as
 * logistic.drift and pima.csv. */
void hx_logistic(const char *dir);

/* Replaces the first occurrence of old in dir/name (which must hold
 * it) by new_text. */
void hx_replace(const char *dir, const char *name, const char *old,
                const char *new_text);
/* Recomputes the checksum line ("sum HASH", FNV-1a of the bytes before
 * it) of a checkpoint manifest dir/name after a test edited it, as one
 * who forges a manifest would. */
void hx_resum(const char *dir, const char *name);
/* Copies tests/plugins/hostile/payload.so to dir/name: a shared object
 * whose constructor creates the file DRIFT_TEST_PAYLOAD_MARK names. */
void hx_copy_payload(const char *dir, const char *name);

/* The limit on open files (RLIMIT_NOFILE) of the runs hx_spawn starts
 * from now on (soft 0: as this process has it). */
void hx_set_nofile(unsigned long soft, unsigned long hard);
/* The limit on address space (RLIMIT_AS, ulimit -v) of those runs, in
 * bytes (0: as this process has it). */
void hx_set_address_space(unsigned long bytes);

/* Starts drift with args (NULL-terminated) in dir, its own process group
 * leader, standard error to err_path (NULL: /dev/null). */
pid_t hx_spawn(const char *dir, const char *const *args,
               const char *err_path);
/* Runs drift with args in dir, killed after limit seconds: status as
 * th_cli_run gives it, 124 for a timeout. */
th_cli hx_run(const char *dir, const char *const *args, int limit);
/* drift args in dir must exit with status and say needle on stderr. */
void hx_expect(const char *dir, const char *const *args, int status,
               const char *needle);

/* Waits (up to limit seconds) until the processes of group pgid (a run
 * hx_spawn started, its guard's child included) are writing n temporary
 * files directly in dir (a draws file before it is put in place, named
 * or not); returns whether they were. */
int hx_wait_writing(pid_t pgid, const char *dir, int n, int limit);

/* A checkpoint to resume: a checkpointed sgld run of the logistic model
 * (hx_logistic's files in dir, --out STEM.csv, chains chains of iters
 * iterations, a draw kept every 1000, a save every 20000) killed with
 * SIGKILL after its first save of every chain; leaves dir/STEM.ckpt. */
void hx_make_ckpt(const char *dir, const char *stem, unsigned chains,
                  const char *iters);

#endif
