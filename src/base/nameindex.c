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
    return h ^ (h >> 29);
}

static int alloc_slots(drift_nameindex *ix, size_t cap)
{
    ix->keys = drift_calloc(cap, sizeof *ix->keys);
    ix->ids = drift_calloc(cap, sizeof *ix->ids);
    if (!ix->keys || !ix->ids) {
        drift_free(ix->keys);
        drift_free(ix->ids);
        ix->keys = NULL;
        ix->ids = NULL;
        return -1;
    }
    ix->cap = cap;
    return 0;
}

int drift_nameindex_init(drift_nameindex *ix, size_t n)
{
    memset(ix, 0, sizeof *ix);
    size_t cap = 16;
    while (cap < 2 * n + 2 && cap < ((size_t)1 << 62))
        cap *= 2;
    return alloc_slots(ix, cap);
}

void drift_nameindex_free(drift_nameindex *ix)
{
    drift_free(ix->keys);
    drift_free(ix->ids);
    memset(ix, 0, sizeof *ix);
}

static size_t slot_of(const drift_nameindex *ix, const char *name)
{
    size_t k = (size_t)hash(name) & (ix->cap - 1);
    while (ix->keys[k] && strcmp(ix->keys[k], name) != 0)
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
        if (ix->keys[k]) {
            size_t s = slot_of(&bigger, ix->keys[k]);
            bigger.keys[s] = ix->keys[k];
            bigger.ids[s] = ix->ids[k];
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
    size_t k = slot_of(ix, name);
    if (ix->keys[k]) {
        if (prev)
            *prev = ix->ids[k];
        return 1;
    }
    ix->keys[k] = name;
    ix->ids[k] = id;
    ix->n++;
    return 0;
}

long drift_nameindex_find(const drift_nameindex *ix, const char *name)
{
    if (!ix->cap)
        return -1;
    size_t k = slot_of(ix, name);
    return ix->keys[k] ? (long)ix->ids[k] : -1;
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
