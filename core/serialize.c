/*
 * core/serialize.c - engine files.
 *
 * The layout of the file is in core/engine_format.h.
 */
#include <config.h>

#include "engine_format.h"
#include "graph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


void mica_free(void *p)
{
    free(p);
}

/* ---- writing ------------------------------------------------------------ */

typedef struct out {
    unsigned char *p;
    size_t len, cap;
    int failed;
} out_t;

static void put(out_t *o, const void *data, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        unsigned char *grown;
        while (cap < o->len + n)
            cap *= 2;
        grown = realloc(o->p, cap);
        if (!grown) {
            o->failed = 1;
            return;
        }
        o->p = grown;
        o->cap = cap;
    }
    if (n && data)
        memcpy(o->p + o->len, data, n);
    o->len += n;
}

static void put_u32(out_t *o, uint32_t v) { put(o, &v, sizeof v); }
static void put_i64(out_t *o, int64_t v) { put(o, &v, sizeof v); }

static void put_bytes(out_t *o, const void *data, size_t n)
{
    put_u32(o, (uint32_t)n);
    put(o, data, n);
}

static void put_str(out_t *o, const char *s)
{
    put_bytes(o, s ? s : "", s ? strlen(s) : 0);
}

static void put_dims(out_t *o, const mica_dims_t *d)
{
    int32_t i;
    put_u32(o, (uint32_t)d->nb_dims);
    for (i = 0; i < d->nb_dims; i++)
        put_i64(o, d->d[i]);
}

/* Zero bytes up to the next multiple of STATE_ALIGN from the start. */
static void put_pad(out_t *o)
{
    static const unsigned char zeros[STATE_ALIGN];
    put(o, zeros, (STATE_ALIGN - o->len % STATE_ALIGN) % STATE_ALIGN);
}

/* A layer instance's state, appended as a state (length, padding). */
static mica_status_t put_state(mica_engine_t *e, out_t *o,
                               const mica__layer_t *l, mica_layer_t *inst)
{
    size_t size = 0, len_at, at;
    unsigned char *buf;
    uint32_t v;

    if (!inst->ops->serialize || inst->ops->serialize(inst, NULL, &size) != MICA_OK)
        return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED,
                          "layer '%s' (%s, implementation '%s') cannot be "
                          "serialized", l->name, l->info.type,
                          l->info.implementation);
    if (size > UINT32_MAX)
        return mica__fail(e->ctx, MICA_ERR_UNSUPPORTED, "layer '%s': its "
                          "state of %zu bytes is over the 4 GiB an engine "
                          "file holds per layer", l->name, size);
    /* Written in place: room for the length and the state, then the
     * layer fills it and the length is set to what it wrote; an empty
     * state has no padding. */
    put_u32(o, 0);
    len_at = o->len - 4;
    if (size)
        put_pad(o);
    at = o->len;
    put(o, NULL, size);
    if (o->failed)
        return mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
    buf = o->p + at;
    if (inst->ops->serialize(inst, buf, &size) != MICA_OK ||
        size > o->len - at)
        return mica__fail(e->ctx, MICA_ERR_INTERNAL,
                          "layer '%s': serialize failed", l->name);
    if (!size)
        at = len_at + 4; /* wrote nothing after all: no padding either */
    o->len = at + size;
    v = (uint32_t)size;
    memcpy(o->p + len_at, &v, 4);
    return MICA_OK;
}

/* The loop or conditional (of `kind`) that boundary layer l names, "" for
 * other layers. */
static const char *construct_of(const mica_engine_t *e, const mica__layer_t *l,
                                int32_t kind)
{
    if (l->info.role == MICA_ROLE_NONE || l->info.role == MICA_ROLE_ASSERTION ||
        l->construct < 0 || e->constructs[l->construct].kind != kind)
        return "";
    return e->constructs[l->construct].name;
}

static mica_status_t put_layers(mica_engine_t *e, out_t *o)
{
    int32_t s, i;
    mica_status_t st;

    put_u32(o, (uint32_t)e->nb_layers);
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        int twin = l->host_instance && l->host_instance != l->instance;
        put_str(o, l->name);
        put_str(o, l->origin);
        put_str(o, l->info.ns);
        put_str(o, l->info.type);
        put_u32(o, (uint32_t)l->info.version);
        put_str(o, l->info.implementation);
        put_u32(o, (uint32_t)l->layer_pinned); /* flags: bit 0, pinned */
        put_str(o, l->why);
        put_str(o, construct_of(e, l, MICA_CONSTRUCT_LOOP));
        put_str(o, construct_of(e, l, MICA_CONSTRUCT_CONDITIONAL));
        put_u32(o, (uint32_t)l->nb_inputs);
        for (i = 0; i < l->nb_inputs; i++)
            put_str(o, l->inputs[i] >= 0 ? e->tensors[l->inputs[i]].name : "");
        put_u32(o, (uint32_t)l->nb_outputs);
        for (i = 0; i < l->nb_outputs; i++)
            put_str(o, e->tensors[l->outputs[i]].name);
        if ((st = put_state(e, o, l, l->instance)) != MICA_OK)
            return st;
        put_str(o, twin ? l->host_info.implementation : "");
        if (twin && (st = put_state(e, o, l, l->host_instance)) != MICA_OK)
            return st;
        if (!twin)
            put_u32(o, 0); /* an empty state */
    }
    return MICA_OK;
}

static void put_profiles(mica_engine_t *e, out_t *o)
{
    int32_t k, i;

    put_u32(o, (uint32_t)e->nb_user_profiles);
    for (k = 0; k < e->nb_user_profiles; k++)
        for (i = 0; i < e->nb_inputs; i++) {
            const mica__range_t *r = &e->profiles[k].ranges[i];
            put_u32(o, (uint32_t)r->set);
            if (!r->set)
                continue;
            put_dims(o, &r->min);
            put_dims(o, &r->opt);
            put_dims(o, &r->max);
            put_u32(o, (uint32_t)r->nb_values);
            put(o, r->vmin, sizeof(int32_t) * (size_t)r->nb_values);
            put(o, r->vopt, sizeof(int32_t) * (size_t)r->nb_values);
            put(o, r->vmax, sizeof(int32_t) * (size_t)r->nb_values);
        }
}

mica_status_t mica_engine_serialize(const mica_engine_t *engine, void **data,
                                    size_t *size)
{
    mica_engine_t *e = (mica_engine_t *)engine;
    out_t o = {NULL, 0, 0, 0};
    uint64_t payload, sum;
    uint32_t v, n;
    int32_t i;
    mica_status_t st;

    *data = NULL;
    *size = 0;
    put(&o, ENGINE_MAGIC, 8);
    v = ENGINE_FORMAT;
    put(&o, &v, 4);
    v = MICA_ABI_VERSION;
    put(&o, &v, 4);
    put(&o, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16); /* sizes, below */
    put_u32(&o, e->device);
    put_u32(&o, (uint32_t)e->nb_inputs);
    for (i = 0; i < e->nb_inputs; i++) {
        const mica__tensor_t *t = &e->tensors[e->input_index[i]];
        put_str(&o, t->name);
        put_u32(&o, (uint32_t)t->dtype);
        put_u32(&o, (uint32_t)t->is_shape_input);
        put_dims(&o, &t->dims);
    }
    put_profiles(e, &o);
    if ((st = put_layers(e, &o)) != MICA_OK)
        goto fail;
    put_u32(&o, (uint32_t)e->nb_outputs);
    for (i = 0; i < e->nb_outputs; i++)
        put_str(&o, e->tensors[e->output_index[i]].name);
    put_u32(&o, (uint32_t)e->nb_shape_outputs);
    for (i = 0; i < e->nb_shape_outputs; i++)
        put_str(&o, e->tensors[e->shape_output_index[i]].name);
    put_u32(&o, (uint32_t)e->nb_profiles);
    for (i = 0; i < e->nb_profiles; i++)
        put_i64(&o, e->profiles[i].arena_bytes);
    for (i = n = 0; i < e->nb_tensors; i++)
        n += e->tensors[i].scale != 1.0f;
    put_u32(&o, n);
    for (i = 0; i < e->nb_tensors; i++)
        if (e->tensors[i].scale != 1.0f) {
            put_str(&o, e->tensors[i].name);
            put(&o, &e->tensors[i].scale, sizeof(float));
        }
    if (o.failed) {
        st = mica__fail(e->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto fail;
    }
    payload = o.len - HEADER_BYTES;
    sum = mica__checksum(o.p + HEADER_BYTES, (size_t)payload);
    memcpy(o.p + 16, &payload, 8);
    memcpy(o.p + 24, &sum, 8);
    *data = o.p;
    *size = o.len;
    return MICA_OK;
fail:
    free(o.p);
    return st;
}

mica_status_t mica_engine_save(const mica_engine_t *engine, const char *path)
{
    void *data;
    size_t size;
    char *tmp;
    FILE *f;
    mica_status_t st;
    int good;

    if ((st = mica_engine_serialize(engine, &data, &size)) != MICA_OK)
        return st;
    tmp = mica__asprintf("%s.tmp%ld", path, (long)getpid());
    if (!tmp) {
        free(data);
        return mica__fail(engine->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    f = fopen(tmp, "wb");
    good = f && fwrite(data, 1, size, f) == size;
    good = (f && fclose(f) == 0) && good;
    if (good && rename(tmp, path) != 0)
        good = 0;
    if (!good) {
        st = mica__fail(engine->ctx, MICA_ERR_IO, "cannot write engine file "
                        "'%s': %s", path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    free(data);
    return st;
}
