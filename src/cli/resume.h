/* resume.h: a checkpoint's manifest (resume.c): the run's spec, its
 * working directory and fingerprints of what the run was made of. */
#ifndef DRIFT_CLI_RESUME_H
#define DRIFT_CLI_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include <drift/drift.h>

/* What a run is made of, fingerprinted in the manifest (NULL: none). */
typedef struct ckpt_inputs {
    const char *model;          /* the .drift file or model plugin */
    const char *const *data;
    size_t n_data;
    const char *sampler;        /* the sampler plugin's file */
    const char *init;           /* an --init file */
} ckpt_inputs;

/* A manifest read back: the run's spec (engine/run/plan.h), owned, and
 * its "file" lines. */
typedef struct ckpt_command {
    char *model, *sampler;      /* NULL: none given */
    char **data;
    size_t n_data;
    drift_option *opts;         /* names and values owned (value NULL: a
                                   flag) */
    size_t n_opts;
    char **files;
    size_t n_files;
} ckpt_command;

/* cmd as a spec, borrowing cmd's strings. */
void ckpt_spec(const ckpt_command *cmd, drift_spec *spec);

/* The checkpoint directory of a run whose draws go to out: its stem with
 * ".ckpt" ("fit.csv" -> "fit.ckpt"). */
void ckpt_dir_for(const char *out, char *buf, size_t cap);

/* A fresh run with --checkpoint-every: creates dir and its manifest (the
 * run's spec, and the seed when it was drawn), refusing a directory that
 * holds an unfinished run's checkpoint, and locks it for the run.  0 or
 * an exit status (the message printed). */
int ckpt_start(const char *dir, const drift_spec *spec, uint64_t seed,
               int have_seed, const ckpt_inputs *in);

/* The n bytes of a manifest (need not end in a NUL), checked and parsed
 * in memory: the first line, the checksum line and each line's form;
 * fills cmd and the run's directory (cwd, an absolute path shorter than
 * cwd_cap).  0; EXIT_USAGE with why saying what is wrong ("is damaged
 * ..."; to follow the file's name); EXIT_RUN_FAILED when out of memory.
 * Reads, loads and writes nothing. */
int ckpt_parse(const char *text, size_t n, ckpt_command *cmd, char *cwd,
               size_t cwd_cap, char *why, size_t why_cap);

/* --resume dir: reads the manifest and changes to the run's directory.
 * 0 or an exit status (the message printed). */
int ckpt_load(const char *dir, ckpt_command *cmd);
void ckpt_command_free(ckpt_command *cmd);

/* Refuses (message, exit status) when the build or an input differs from
 * the manifest's; else locks the checkpoint for the run and returns 0. */
int ckpt_check(const char *dir, const ckpt_command *cmd,
               const ckpt_inputs *in);

/* Before a resumed run loads a plugin given by path (spec holds a '/';
 * kind "sampler" or "model"): refuses (message, exit status) unless the
 * manifest lists that file with the size and hash it has now, so that a
 * manifest edited to name other code never gets it loaded.  A plugin
 * given by name passes (it is found on the plugin search path, and
 * ckpt_check compares it after loading). */
int ckpt_check_plugin(const char *dir, const ckpt_command *cmd,
                      const char *kind, const char *spec);

/* Removes a finished run's checkpoint. */
void ckpt_remove(const char *dir, unsigned first_id, unsigned chains);

#endif
