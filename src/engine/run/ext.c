/* ext.c: the run extensions in the order their hooks run, and the loops
 * over them that are not the core loop's (the checks before a run, the
 * run-level setup, the blocks of a checkpoint).  The hooks themselves
 * live with their features (ext.h).  Not for the step loop (run.c). */
#include "config.h"

#include "ext.h"

/* The order is the order of the hooks in the step loop: the gates (the
 * input maps, then the ranks' agreement) before anything reads a step's
 * results, then progress, checkpoints and held-out metrics; the checks
 * run in the same order. */
const drift_run_ext *const drift_run_exts[] = {
    &drift_guard_ext,
    &drift_maps_ext,
    &drift_shard_ext,
    &drift_tune_ext,
    &drift_progress_ext,
    &drift_ckpt_ext,
    &drift_heldout_ext,
    &drift_watch_ext,
};

_Static_assert(sizeof drift_run_exts / sizeof drift_run_exts[0] <=
                   DRIFT_RUN_MAX_EXTS,
               "more extensions than DRIFT_RUN_MAX_EXTS");

const unsigned drift_run_n_exts =
    sizeof drift_run_exts / sizeof drift_run_exts[0];

int drift_run_ext_check(const drift_run_config *cfg, drift_err *e)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++) {
        const drift_run_ext *x = drift_run_exts[k];
        int rc = x->check ? x->check(cfg, e) : DRIFT_OK;
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}

int drift_run_ext_setup(drift_chain *c)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++) {
        const drift_run_ext *x = drift_run_exts[k];
        if (x->setup && x->setup(c))
            return -1;
    }
    return 0;
}

int drift_run_ext_ckpt(drift_chain *c)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++) {
        const drift_run_ext *x = drift_run_exts[k];
        int rc = x->ckpt ? x->ckpt(c) : DRIFT_OK;
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}
