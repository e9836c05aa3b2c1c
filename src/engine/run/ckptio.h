/* ckptio.h: the bytes of a checkpoint, block by block, as the engine's
 * parts and the sampler's checkpoint callback save and restore them.  Not
 * for what a checkpoint holds or where it lives (checkpoint.h). */
#ifndef DRIFT_CKPTIO_H
#define DRIFT_CKPTIO_H

#include "chain.h"

/* What a save or a restore is doing; c->ext.ckpt->io points at it
 * meanwhile. */
typedef struct drift_ckpt_io {
    int restoring;
    unsigned char *buf;     /* the state's bytes: built, or read */
    size_t len, cap, at;    /* at: the read cursor */
    const char *path;       /* for messages */
} drift_ckpt_io;

/* A checkpointed chain's state (c->ext.ckpt, made by the checkpoint
 * extension's open): the save or restore in progress (NULL: none), the
 * draws file's bytes already in the checkpoint (-1: none yet) and their
 * FNV-1a hash, when the last save was, and at which iteration
 * (UINT64_MAX: none in this process). */
typedef struct drift_ckpt_chain {
    drift_ckpt_io *io;
    int64_t rows;
    uint64_t rows_hash;
    double at;
    uint64_t saved_at;
} drift_ckpt_chain;

/* Appends the n bytes at p to io's buffer, growing it: DRIFT_OK or
 * DRIFT_ENOMEM. */
int drift_ckpt_put(drift_ckpt_io *io, const void *p, size_t n);

/* Saves the n bytes at p as one block (its length, then the bytes), or
 * restores them, as c->ext.ckpt->io says (the ckpt_bytes service).  A block whose
 * saved length is not n is refused: the checkpoint was written by another
 * build.  DRIFT_OK, or an error recorded on the chain. */
int drift_ckpt_block(drift_chain *c, void *p, size_t n);

/* The ckpt_restoring service: 1 while c is restored, else 0. */
int drift_ckpt_restoring(drift_chain *c);

#endif
