/*
 * core/base/index.c - a name index: borrowed strings to int32 values in
 * an open-addressing hash table that grows as it fills, so that looking
 * a name up costs the same for ten names as for a million.  The network,
 * the build's tensor table and the manifest loader find names through
 * it (issue 15: a pairwise search made a 100,000-layer manifest take
 * hours).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica_int.h"

/* FNV-1a, 64 bits. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

/* The slot of key: where it is, or the empty slot where it would go.
 * The table always has an empty slot (it is at most half full). */
static size_t slot_of(const mica__index_t *ix, const char *key)
{
    size_t i = (size_t)hash_str(key) & (ix->cap - 1);
    while (ix->keys[i] && strcmp(ix->keys[i], key) != 0)
        i = (i + 1) & (ix->cap - 1);
    return i;
}

/* Grow to at least twice `want` slots; 0 or -1 out of memory. */
static int grow(mica__index_t *ix, size_t want)
{
    mica__index_t g;
    size_t i;

    g.cap = 16;
    while (g.cap < 2 * want + 2)
        g.cap *= 2;
    g.nb = 0;
    g.keys = calloc(g.cap, sizeof *g.keys);
    g.values = calloc(g.cap, sizeof *g.values);
    if (!g.keys || !g.values) {
        free(g.keys);
        free(g.values);
        return -1;
    }
    for (i = 0; i < ix->cap; i++) {
        if (ix->keys[i]) {
            size_t s = slot_of(&g, ix->keys[i]);
            g.keys[s] = ix->keys[i];
            g.values[s] = ix->values[i];
            g.nb++;
        }
    }
    mica__index_free(ix);
    *ix = g;
    return 0;
}

int mica__index_reserve(mica__index_t *ix, size_t n)
{
    if (2 * n + 2 <= ix->cap)
        return 0;
    return grow(ix, n);
}

int mica__index_put(mica__index_t *ix, const char *key, int32_t value)
{
    size_t s;

    if (2 * (ix->nb + 1) + 2 > ix->cap &&
        grow(ix, ix->nb + 1 > 2 * ix->nb ? ix->nb + 1 : 2 * ix->nb) != 0)
        return -1;
    s = slot_of(ix, key);
    if (!ix->keys[s])
        ix->nb++;
    ix->keys[s] = key;
    ix->values[s] = value;
    return 0;
}

int32_t mica__index_get(const mica__index_t *ix, const char *key)
{
    size_t s;

    if (!ix->cap || !key)
        return -1;
    s = slot_of(ix, key);
    return ix->keys[s] ? ix->values[s] : -1;
}

void mica__index_free(mica__index_t *ix)
{
    free(ix->keys);
    free(ix->values);
    ix->keys = NULL;
    ix->values = NULL;
    ix->cap = ix->nb = 0;
}
