/* ckptio.c: the bytes of a checkpoint, block by block: the ckpt_bytes
 * and ckpt_restoring services that the engine's parts (the output file's
 * layout, the sampler's state) call while a chain is saved or restored.
 * Not for what is saved, when, or where (checkpoint.c). */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "ckptio.h"

int drift_ckpt_put(drift_ckpt_io *io, const void *p, size_t n)
{
    if (io->len + n > io->cap) {
        size_t cap = io->cap ? io->cap : 4096;
        while (cap < io->len + n)
            cap *= 2;
        unsigned char *b = drift_realloc(io->buf, cap);
        if (!b)
            return DRIFT_ENOMEM;
        io->buf = b;
        io->cap = cap;
    }
    if (n)
        memcpy(io->buf + io->len, p, n);
    io->len += n;
    return DRIFT_OK;
}

int drift_ckpt_block(drift_chain *c, void *p, size_t n)
{
    drift_ckpt_io *io = c->ext.ckpt ? c->ext.ckpt->io : NULL;
    if (!io)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "chain %u: ckpt_bytes called outside a "
                                "checkpoint",
                                c->id);
    uint64_t len = n;
    if (!io->restoring) {
        if (drift_ckpt_put(io, &len, sizeof len) || drift_ckpt_put(io, p, n))
            return drift_chain_fail(c, DRIFT_ENOMEM,
                                    "out of memory saving a checkpoint");
        return DRIFT_OK;
    }
    if (io->len - io->at < sizeof len)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: the checkpoint ends where %zu more "
                                "bytes were expected (written by another "
                                "build of the sampler?)",
                                io->path, n);
    memcpy(&len, io->buf + io->at, sizeof len);
    if (len != n || io->len - io->at - sizeof len < n)
        return drift_chain_fail(c, DRIFT_EINVAL,
                                "%s: a block of %llu bytes where %zu are "
                                "read now: the checkpoint was written by "
                                "another build of the engine or sampler",
                                io->path, (unsigned long long)len, n);
    if (n)
        memcpy(p, io->buf + io->at + sizeof len, n);
    io->at += sizeof len + n;
    return DRIFT_OK;
}

int drift_ckpt_restoring(drift_chain *c)
{
    return c->ext.ckpt && c->ext.ckpt->io ? c->ext.ckpt->io->restoring : 0;
}
