/* nameindex.c: open addressing with linear probing over FNV-1a hashes,
 * kept at most half full.  Not a general map (no removal). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "nameindex.h"
#include "util.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    /* FNV's low bits vary little between names that differ in their
     * last digits (x.1, x.2, ...): mix every bit into them. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static int alloc_slots(drift_nameindex *ix, size_t cap)
{
    ix->slots = drift_calloc(cap, sizeof *ix->slots);
    if (!ix->slots)
        return -1;
    ix->cap = cap;
    return 0;
}

int drift_nameindex_init(drift_nameindex *ix, size_t n)
{
    memset(ix, 0, sizeof *ix);
    size_t cap = 16;
    while (cap < 2 * n + 2 && cap < ((size_t)1 << 58))
        cap *= 2;
    return alloc_slots(ix, cap);
}

void drift_nameindex_free(drift_nameindex *ix)
{
    drift_free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

/* The slot holding name (hash h), or the empty one where it would go.
 * The hash is kept in the slot, so a probe past another name costs no
 * string comparison (and no second cache miss). */
static size_t slot_of(const drift_nameindex *ix, const char *name, uint64_t h)
{
    size_t k = (size_t)h & (ix->cap - 1);
    while (ix->slots[k].key &&
           (ix->slots[k].hash != h || strcmp(ix->slots[k].key, name) != 0))
        k = (k + 1) & (ix->cap - 1);
    return k;
}

static int grow(drift_nameindex *ix)
{
    drift_nameindex bigger;
    memset(&bigger, 0, sizeof bigger);
    if (alloc_slots(&bigger, ix->cap * 2))
        return -1;
    for (size_t k = 0; k < ix->cap; k++)
        if (ix->slots[k].key) {
            size_t s = slot_of(&bigger, ix->slots[k].key, ix->slots[k].hash);
            bigger.slots[s] = ix->slots[k];
        }
    bigger.n = ix->n;
    drift_nameindex_free(ix);
    *ix = bigger;
    return 0;
}

int drift_nameindex_add(drift_nameindex *ix, const char *name, size_t id,
                        size_t *prev)
{
    if (2 * (ix->n + 1) > ix->cap && grow(ix))
        return -1;
    uint64_t h = hash(name);
    size_t k = slot_of(ix, name, h);
    if (ix->slots[k].key) {
        if (prev)
            *prev = ix->slots[k].id;
        return 1;
    }
    ix->slots[k] = (drift_nameslot){name, id, h};
    ix->n++;
    return 0;
}

long drift_nameindex_find(const drift_nameindex *ix, const char *name)
{
    if (!ix->cap)
        return -1;
    size_t k = slot_of(ix, name, hash(name));
    return ix->slots[k].key ? (long)ix->slots[k].id : -1;
}

int drift_nameindex_build(drift_nameindex *ix, const char *const *names,
                          size_t n)
{
    if (drift_nameindex_init(ix, n))
        return -1;
    for (size_t k = 0; k < n; k++)
        if (drift_nameindex_add(ix, names[k], k, NULL) < 0) {
            drift_nameindex_free(ix);
            return -1;
        }
    return 0;
}
