/*
 * core/format/read.c - the bounds-checked reader of an engine's payload
 * (core/format/format.h).
 */
#include <config.h>

#include "format.h"

#include <stdlib.h>
#include <string.h>

const void *mica__in_take(mica__in_t *r, size_t n)
{
    const void *p;
    if (r->bad || n > r->len - r->pos) {
        r->bad = 1;
        return NULL;
    }
    p = r->p + r->pos;
    r->pos += n;
    return p;
}

uint32_t mica__in_u32(mica__in_t *r)
{
    uint32_t v = 0;
    const void *p = mica__in_take(r, 4);
    if (p)
        memcpy(&v, p, 4);
    return v;
}

int32_t mica__in_i32(mica__in_t *r)
{
    uint32_t u = mica__in_u32(r);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

float mica__in_f32(mica__in_t *r)
{
    float v = 0;
    const void *p = mica__in_take(r, 4);
    if (p)
        memcpy(&v, p, 4);
    return v;
}

int32_t mica__in_index(mica__in_t *r, int32_t n, int allow_none)
{
    int32_t v = mica__in_i32(r);
    if (v < (allow_none ? -1 : 0) || v >= n) {
        r->bad = 1;
        return allow_none ? -1 : 0;
    }
    return v;
}

int64_t mica__in_i64(mica__in_t *r)
{
    int64_t v = 0;
    const void *p = mica__in_take(r, 8);
    if (p)
        memcpy(&v, p, 8);
    return v;
}

/* A count of items, each at least `min_bytes` long: bounded by the data. */
uint32_t mica__in_count(mica__in_t *r, size_t min_bytes)
{
    uint32_t n = mica__in_u32(r);
    if (r->bad || n > MAX_ITEMS || (size_t)n * min_bytes > r->len - r->pos)
        r->bad = 1;
    return r->bad ? 0 : n;
}

/* Bytes as a pointer into the data (not NUL-terminated). */
const void *mica__in_bytes(mica__in_t *r, size_t *n)
{
    uint32_t len = mica__in_u32(r);
    const void *p = mica__in_take(r, len);
    *n = p ? len : 0;
    return p;
}

/*
 * A layer state as a pointer into the data: a length, then (format 2,
 * when not empty) zero padding up to a multiple of STATE_ALIGN from the
 * start of the data.
 */
const void *mica__in_state(mica__in_t *r, size_t *n)
{
    uint32_t len = mica__in_u32(r);
    const unsigned char *pad;
    const void *p;
    size_t k, gap = 0;

    if (r->format >= 2 && len && !r->bad) {
        gap = (STATE_ALIGN - (HEADER_BYTES + r->pos) % STATE_ALIGN) %
              STATE_ALIGN;
        pad = mica__in_take(r, gap);
        for (k = 0; pad && k < gap; k++)
            if (pad[k])
                r->bad = 1;
    }
    p = mica__in_take(r, len);
    *n = p ? len : 0;
    return p;
}

/* A string copied into a fresh NUL-terminated buffer (NULL if bad). */
char *mica__in_str(mica__in_t *r)
{
    size_t n;
    const char *p = mica__in_bytes(r, &n);
    char *s;
    if (!p)
        return NULL;
    s = malloc(n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    if (strlen(s) != n) { /* an embedded NUL */
        free(s);
        r->bad = 1;
        return NULL;
    }
    return s;
}

void mica__in_dims(mica__in_t *r, mica_dims_t *d)
{
    uint32_t n = mica__in_u32(r), i;
    memset(d, 0, sizeof *d);
    if (n > MICA_MAX_DIMS) {
        r->bad = 1;
        return;
    }
    d->nb_dims = (int32_t)n;
    for (i = 0; i < n; i++)
        d->d[i] = mica__in_i64(r);
}
