/* checkpoint.h: a chain saved between two steps and restored in another
 * process (--checkpoint-every, --resume), so that a resumed run's files
 * are the bytes an uninterrupted run writes.  A run's checkpoint is a
 * directory: per chain, chain_ID.state (the engine's part and the
 * sampler's, replaced atomically) and chain_ID.rows (the draws file's
 * bytes up to that state, appended to at each save).  The run uses it as
 * the extension drift_ckpt_ext (ext.h), which saves when it is due.  Not
 * for the run's identity, its command and the fingerprints of its inputs
 * (the CLI's manifest). */
#ifndef DRIFT_CHECKPOINT_H
#define DRIFT_CHECKPOINT_H

#include "chain.h"

/* Saves chain c (opened by drift_ckpt_ext: at its point c->theta, with
 * its clock c->t_start, c->t_warm_end): first the draws file's new bytes
 * into chain_ID.rows, synced, then the state, synced and renamed over the
 * last one.  DRIFT_OK, or an error recorded on the chain. */
int drift_ckpt_save(drift_chain *c);

/* Restores chain c after its init: *found is 0 when the checkpoint holds
 * no state for the chain (it starts afresh: drift_csvout_begin then as
 * usual), else the chain stands where it was saved (c->theta), its draws
 * file holds the rows saved, c->out is set, and c->t_start, c->t_warm_end
 * are moved so that elapsed times go on from the saved ones.  DRIFT_OK,
 * or an error recorded on the chain (a damaged or foreign state file). */
int drift_ckpt_restore(drift_chain *c, int *found);

#endif
