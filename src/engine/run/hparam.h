/* hparam.h: validation of hyperparameter tables (samplers' and models')
 * and of the `name=value` settings a user gives for them.  The engine does
 * this once so that no plugin parses or range-checks its own options. */
#ifndef DRIFT_HPARAM_H
#define DRIFT_HPARAM_H

#include <stddef.h>

#include <drift/common.h>

/* Checks a plugin's table: identifiers, unique names, defaults inside
 * bounds, enum choices present.  `who` names the plugin in messages. */
int drift_hparams_check(const drift_hparam *t, size_t n, const char *who,
                        drift_err *e);

/* Fills vals[n] with the defaults, then applies each "name=value" of
 * settings.  A step size (DRIFT_HP_STEP_SIZE) not set, or set to "auto",
 * gets NaN: the run chooses it (tune.h).  `opt` is the command-line option the settings came from
 * ("--set") and `who` the owner ("sampler sgld"), both for messages.
 * was_set[n] (may be NULL) records which were given. */
int drift_hparams_apply(const drift_hparam *t, size_t n, const char *opt,
                        const char *who, char *const *settings,
                        size_t n_settings, double *vals,
                        unsigned char *was_set, drift_err *e);

/* Index of the step size (the entry flagged DRIFT_HP_STEP_SIZE) in t,
 * or -1.  When a run's value of it is NaN the run chooses it (tune.h)
 * before the chains start. */
long drift_hparams_step_size(const drift_hparam *t, size_t n);

/* Index of name in t, or -1. */
long drift_hparams_find(const drift_hparam *t, size_t n, const char *name);

/* Writes v as a user would type it for h ("0.001", "ptu", "true"). */
void drift_hparam_format(const drift_hparam *h, double v, char *buf,
                         size_t cap);
/* Writes h's range ("(0, inf)", "ptu|ppu|tmu", "true|false"). */
void drift_hparam_range(const drift_hparam *h, char *buf, size_t cap);
/* "real", "int", "enum", "bool". */
const char *drift_hparam_type_name(const drift_hparam *h);

#endif
