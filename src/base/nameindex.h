/* nameindex.h: a hash index of names (column names of wide data: 10^6 of
 * them), so that finding one, or the first repeated one, takes constant
 * time instead of a scan.  The names are the caller's: the index keeps
 * pointers to them.  Not a general map. */
#ifndef DRIFT_NAMEINDEX_H
#define DRIFT_NAMEINDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct drift_nameslot {
    const char *key;        /* NULL: empty */
    size_t id;
    uint64_t hash;
} drift_nameslot;

typedef struct drift_nameindex {
    size_t cap;             /* slots, a power of two */
    size_t n;
    drift_nameslot *slots;
} drift_nameindex;

/* An empty index sized for about n names; 0, or -1 out of memory. */
int drift_nameindex_init(drift_nameindex *ix, size_t n);
void drift_nameindex_free(drift_nameindex *ix);

/* Adds name with id.  Returns 0 when added; 1 when the name is there
 * already (*prev, when not NULL, gets its id and nothing is added); -1 out
 * of memory. */
int drift_nameindex_add(drift_nameindex *ix, const char *name, size_t id,
                        size_t *prev);

/* The id of name, or -1 when absent. */
long drift_nameindex_find(const drift_nameindex *ix, const char *name);

/* An index of names[0..n) with ids 0..n-1 (later repeats ignored). */
int drift_nameindex_build(drift_nameindex *ix, const char *const *names,
                          size_t n);

#endif
