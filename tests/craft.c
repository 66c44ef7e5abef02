/*
 * tests/craft.c - engine files changed on purpose (see tests/craft.h).
 */
#include <config.h>

#include "craft.h"

#include <stdlib.h>
#include <string.h>

#include "mica/mica.h"

uint64_t mica__checksum(const unsigned char *p, size_t n);

void craft_reseal(unsigned char *data, size_t size)
{
    uint64_t payload = size - CRAFT_HEADER;
    uint64_t sum = mica__checksum(data + CRAFT_HEADER, (size_t)payload);
    memcpy(data + 16, &payload, 8);
    memcpy(data + 24, &sum, 8);
}

void craft_put_u32(unsigned char *data, size_t at, uint32_t v)
{
    memcpy(data + at, &v, 4);
}

void craft_put_i64(unsigned char *data, size_t at, int64_t v)
{
    memcpy(data + at, &v, 8);
}

uint32_t craft_get_u32(const unsigned char *data, size_t at)
{
    uint32_t v;
    memcpy(&v, data + at, 4);
    return v;
}

int64_t craft_get_i64(const unsigned char *data, size_t at)
{
    int64_t v;
    memcpy(&v, data + at, 8);
    return v;
}

size_t craft_find(const unsigned char *data, size_t size, const void *needle,
                  size_t n, size_t from)
{
    size_t i;
    for (i = from; n <= size && i + n <= size; i++)
        if (memcmp(data + i, needle, n) == 0)
            return i;
    return SIZE_MAX;
}

/* ---- the walk (the loader's order, core/format/format.h) ---------------- */

typedef struct walk {
    const unsigned char *p;
    size_t size, pos;
    int bad;
} walk_t;

static uint32_t u32(walk_t *w)
{
    uint32_t v = 0;
    if (w->bad || w->size - w->pos < 4) {
        w->bad = 1;
        return 0;
    }
    memcpy(&v, w->p + w->pos, 4);
    w->pos += 4;
    return v;
}

static void skip(walk_t *w, size_t n)
{
    if (w->bad || w->size - w->pos < n)
        w->bad = 1;
    else
        w->pos += n;
}

static void str(walk_t *w)
{
    skip(w, u32(w));
}

static void dims(walk_t *w)
{
    uint32_t n = u32(w);
    skip(w, 8 * (size_t)(n <= 8 ? n : 1000000000u));
}

static void state(walk_t *w, size_t *len_at, size_t *data_at)
{
    size_t at = w->pos;
    uint32_t n = u32(w);
    if (len_at)
        *len_at = at;
    if (n)
        skip(w, (64 - w->pos % 64) % 64);
    if (data_at)
        *data_at = w->pos;
    skip(w, n);
}

/* Record `at` in v[i] if i is among the first CRAFT_MAX. */
static void note(size_t *v, uint32_t i, size_t at)
{
    if (i < CRAFT_MAX)
        v[i] = at;
}

static void layers(walk_t *w, craft_map_t *m)
{
    uint32_t s, n;
    for (s = 0; s < m->nb_layers && !w->bad; s++) {
        str(w);            /* name */
        str(w);            /* origin */
        str(w);            /* ns */
        str(w);            /* type */
        skip(w, 4);        /* version */
        str(w);            /* implementation */
        note(m->layer_flags, s, w->pos);
        skip(w, 4);        /* flags */
        str(w);            /* why */
        skip(w, 12);       /* construct, branch, tactic */
        note(m->layer_inputs, s, w->pos);
        n = u32(w);
        skip(w, 8 * (size_t)n);
        n = u32(w);
        skip(w, 4 * (size_t)n);
        state(w, s < CRAFT_MAX ? &m->layer_state[s] : NULL,
              s < CRAFT_MAX ? &m->layer_state_data[s] : NULL);
        str(w);            /* host implementation */
        state(w, NULL, NULL);
    }
}

static void steps(walk_t *w)
{
    skip(w, 4 * (size_t)u32(w));
}

int craft_map(const unsigned char *data, size_t size, craft_map_t *m)
{
    walk_t w = {data, size, CRAFT_HEADER, 0};
    uint32_t c[11], i, k, n, kind;
    uint32_t format = size >= CRAFT_HEADER ? craft_get_u32(data, 8) : 0;

    memset(m, 0, sizeof *m);
    if (format != 3 && format != 4)
        return -1;
    skip(&w, 4); /* device */
    m->counts = w.pos;
    for (i = 0; i < 11; i++)
        c[i] = u32(&w);
    m->nb_tensors = c[0];
    m->nb_layers = c[1];
    m->nb_symbols = c[2];
    m->nb_exprs = c[3];
    m->nb_constructs = c[4];
    m->nb_prog = c[5];
    m->nb_inputs = c[6];
    m->nb_profiles = c[10];
    for (i = 0; i < m->nb_symbols && !w.bad; i++) {
        kind = u32(&w);
        skip(&w, 8);       /* input, tensor */
        note(m->symbol_axis, i, w.pos);
        skip(&w, 4);
        str(&w);
        str(&w);
        if (kind == 3)     /* a data-dependent size: its bound */
            skip(&w, 4);
    }
    for (i = 0; i < m->nb_exprs && !w.bad; i++) {
        note(m->expr_kind, i, w.pos);
        kind = u32(&w);
        skip(&w, kind == 101 ? 4 : 8);
        skip(&w, 16);      /* lo, hi */
    }
    for (i = 0; i < m->nb_tensors && !w.bad; i++) {
        uint32_t flags;
        str(&w);
        note(m->tensor_dtype, i, w.pos);
        skip(&w, 4);
        flags = u32(&w);
        skip(&w, 20);      /* producer, first_symbol, alias, format,
                              scale */
        str(&w);           /* shape text */
        note(m->tensor_rank, i, w.pos);
        skip(&w, 4 * (size_t)u32(&w));
        if (flags & 128)
            skip(&w, 4 * (size_t)u32(&w));
    }
    skip(&w, 4 * ((size_t)c[6] + c[7] + c[8]));
    layers(&w, m);
    for (k = 0; k < m->nb_constructs && !w.bad; k++) {
        str(&w);
        skip(&w, 12);      /* kind, parent, branch */
        note(m->construct_begin, k, w.pos);
        skip(&w, 24);      /* begin, end, live, trip_limit, entry, cond */
        steps(&w);
        steps(&w);
        steps(&w);
    }
    for (i = 0; i < m->nb_prog && !w.bad; i++) {
        note(m->prog, i, w.pos);
        skip(&w, 16);
    }
    for (k = 0; k < m->nb_profiles && !w.bad; k++) {
        for (i = 0; i < m->nb_inputs && !w.bad; i++) {
            if (k == 0)
                note(m->profile_range, i, w.pos);
            if (!u32(&w))
                continue;
            dims(&w);
            dims(&w);
            dims(&w);
            n = u32(&w);
            skip(&w, 12 * (size_t)n);
        }
        for (i = 0; i < m->nb_tensors && !w.bad; i++) {
            dims(&w);
            dims(&w);
            dims(&w);
            if (k == 0)
                note(m->plan_bytes, i, w.pos);
            skip(&w, 16);
        }
        skip(&w, 16 * (size_t)m->nb_layers);
        if (k == 0)
            m->arena = w.pos;
        skip(&w, 8);
    }
    m->fusion = 0;
    if (!w.bad && (format >= 4 || w.pos < size)) {
        uint32_t n, i;
        m->fusion = w.pos;
        n = u32(&w);
        for (i = 0; i < n && !w.bad; i++) {
            note(m->fusion_layer, i, w.pos);
            skip(&w, 4);
            str(&w);
        }
    }
    m->passes = 0;
    if (!w.bad && format >= 4) {
        uint32_t n, i;
        m->passes = w.pos;
        n = u32(&w);
        for (i = 0; i < n && !w.bad; i++) {
            note(m->pass_name, i, w.pos);
            str(&w);
            str(&w);
            skip(&w, 8);
        }
    }
    m->end = w.pos;
    return w.bad || w.pos != size ? -1 : 0;
}

int craft_sweep(struct mica_context *ctx, const unsigned char *data,
                size_t size, int *loaded)
{
    unsigned char *c = malloc(size);
    size_t i;
    int good = c != NULL;

    *loaded = 0;
    for (i = CRAFT_HEADER; good && i < size; i++) {
        mica_engine_t *e = NULL;
        const char *msg;
        memcpy(c, data, size);
        c[i] = (unsigned char)(c[i] + 0x81);
        craft_reseal(c, size);
        if (mica_engine_deserialize(ctx, c, size, &e) == MICA_OK) {
            (*loaded)++;
            mica_engine_destroy(e);
            continue;
        }
        msg = mica_context_error(ctx);
        good = msg[0] && !strchr(msg, '\n');
    }
    free(c);
    return good;
}
