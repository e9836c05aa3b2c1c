/* maps.c: the run extension (ext.h) that watches the input maps while a
 * chain steps: a memory-mapped input that lost pages (read as zeros
 * since) or whose file changed stops the chain, so that no row comes from
 * data that are not the data the run began with (emit.c writes none after
 * the change).  Not for the maps themselves (base/mapguard.c). */
#include "config.h"

#include "base/mapguard.h"
#include "ext.h"
#include "shard.h"

/* A map that lost pages, or a poll's fstat: kept out of maps_gate so
 * that the step loop's common case (nothing to do) stays a few
 * instructions. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static int maps_check(drift_chain *c, int poll)
{
    drift_err ge = {{0}};
    int grc = drift_mapguard_check(poll, &ge);
    if (!grc)
        return 0;
    drift_chain_fail(c, grc, "%s", ge.msg);
    if (!c->ext.shard)
        return 1;
    drift_shard_defer(c); /* the ranks' gate fails every rank */
    return 0;
}

/* After each step: at once when a map has signalled, else every
 * DRIFT_EXT_POLL_EVERY steps (an fstat of each file). */
static int maps_gate(drift_chain *c)
{
    int poll = c->iter % DRIFT_EXT_POLL_EVERY == 0;
    if (!poll && !drift_mapguard_any())
        return 0;
    return maps_check(c, poll);
}

static int maps_open(drift_chain *c, drift_chain_result *res)
{
    (void)c;
    (void)res;
    return DRIFT_EXT_ON;
}

/* Once the sampler has finished: a change during its last steps. */
static void maps_finish(drift_chain *c)
{
    if (c->failed)
        return;
    drift_err ge = {{0}};
    int grc = drift_mapguard_check(1, &ge);
    if (grc)
        drift_chain_fail(c, grc, "%s", ge.msg);
}

const drift_run_ext drift_maps_ext = {
    .name = "maps",
    .open = maps_open,
    .gate = maps_gate,
    .finish = maps_finish,
};
