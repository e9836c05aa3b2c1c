/* plugin.h: the plugin loader.  Finds sampler and model plugins on the
 * search path (the install's plugin directory, or DRIFT_PLUGIN_DIR in its
 * place, then DRIFT_PLUGIN_PATH), checks each descriptor's ABI version and
 * build facts before reading anything else, validates hyperparameter
 * tables, and resolves names.  Not for running samplers (chain.c). */
#ifndef DRIFT_PLUGIN_H
#define DRIFT_PLUGIN_H

#include <drift/model.h>
#include <drift/sampler.h>

typedef struct drift_registry drift_registry;

/* One sampler as the registry knows it: a copy of the plugin's
 * descriptor (zero-extended to this engine's layout) and its file. */
typedef struct drift_sampler_entry {
    drift_sampler s;
    const char *path;
    const char *license;    /* the plugin's DRIFT_PLUGIN_LICENSE (NULL:
                               not stated) */
} drift_sampler_entry;

typedef struct drift_model_entry {
    const drift_model_plugin *m;
    const char *path;
    const char *license;    /* as for samplers */
} drift_model_entry;

/* An empty registry (nothing loaded). */
drift_registry *drift_registry_new(void);
void drift_registry_free(drift_registry *r);

/* The install's plugin directory as this process sees it, into out (cap
 * bytes).  drift is relocatable: when the running executable is not in
 * the bindir it was configured with (an install staged with DESTDIR, or a
 * whole install tree moved elsewhere), the directory at the configured
 * plugin directory's place relative to the configured bindir, counted from
 * the executable's own directory (/proc/self/exe), is used when it exists;
 * otherwise the configured plugin directory (DRIFT_PLUGINDIR).
 * DRIFT_PLUGIN_DIR, when set, replaces this directory in scans. */
void drift_registry_install_dir(char *out, size_t cap);

/* Loads every plugin on the search path.  Files that are refused are
 * recorded as problems (drift_registry_problems), not errors: one bad
 * plugin does not hide the good ones.  Only regular files not writable
 * by others than their owner or root, in absolute directories, are
 * considered; each is first loaded in a child process with a time limit
 * (DRIFT_PLUGIN_TIMEOUT seconds, default 5), and one that crashes, exits
 * or hangs there is a problem and is never opened in this process. */
int drift_registry_scan(drift_registry *r, drift_err *e);

/* Loads one file given by path; its refusal is an error.  Its samplers
 * and models are registered even when their names are taken (lookups by
 * name still find the first registered). */
int drift_registry_load(drift_registry *r, const char *path, drift_err *e);

/* The sampler called name.  Unless the registry was scanned, a name is
 * looked up by opening NAME.so of each search directory (that file alone);
 * only when none offers it is the path scanned (drift_registry_scan).
 * With a '/' in spec it is loaded from that path
 * (optionally "path:name" to pick one of several).  A path means that
 * file even when a sampler of the same name was found first on the search
 * path, and asking again for a path already loaded finds the same entry.
 * Unknown names get a message listing the installed samplers and the
 * closest one. */
int drift_registry_sampler(drift_registry *r, const char *spec,
                           const drift_sampler_entry **out, drift_err *e);
int drift_registry_model(drift_registry *r, const char *spec,
                         const drift_model_entry **out, drift_err *e);

size_t drift_registry_n_samplers(const drift_registry *r);
const drift_sampler_entry *drift_registry_sampler_at(const drift_registry *r,
                                                     size_t k);
size_t drift_registry_n_models(const drift_registry *r);
const drift_model_entry *drift_registry_model_at(const drift_registry *r,
                                                 size_t k);

/* Messages about refused or shadowed plugins found while scanning. */
size_t drift_registry_n_problems(const drift_registry *r);
const char *drift_registry_problem(const drift_registry *r, size_t k);

/* The directories searched, in order, joined by ':' (for messages). */
const char *drift_registry_search_path(const drift_registry *r);

#endif
