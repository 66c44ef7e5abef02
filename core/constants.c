/*
 * core/constants.c - constants bound, not computed: a layer whose
 * outputs never change (mica/layer.h's constant_output: a Constant's
 * weights) does not run per query.  Its output tensors take no arena
 * memory; every reader is given the values where they already are: the
 * layer instance's own bytes (the manifest's weights copied once, or the
 * engine file mapped) on a device of host memory (the CPU), and on
 * another device (CUDA) one copy per engine, in one block, uploaded by
 * the first execution context made, which every context shares.  A
 * constant that is a network output is left to run: the caller may bind
 * its own memory to an output.
 */
#include <config.h>

#include "graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Offsets in the device block: 256-byte aligned, as the arena's. */
#define CONST_ALIGN 256

/* Whether output o of layer s may be bound to `bytes` of values. */
static int may_bind(const mica_engine_t *e, int32_t s, int32_t o,
                    size_t bytes)
{
    const mica__layer_t *l = &e->layers[s];
    const mica__tensor_t *t = &e->tensors[l->outputs[o]];
    int64_t want;

    if (!t->need_e || t->is_output || t->is_shape_output ||
        t->format != MICA_FORMAT_LINEAR ||
        mica_dims_bytes_checked(&t->dims, t->dtype, &want) != 0)
        return 0;
    /* dims of -1 (a shape known only at run time) make `want` differ */
    return (uint64_t)want == (uint64_t)bytes;
}

mica_status_t mica__constants_find(mica_engine_t *e)
{
    int32_t s, o;

    for (s = 0; s < e->nb_layers; s++) {
        mica__layer_t *l = &e->layers[s];
        const mica_layer_ops_t *ops = l->instance ? l->instance->ops : NULL;
        const void *host[4];
        size_t bytes[4];
        int all = 1;
        l->bound = 0;
        if (!ops || !l->run_device || l->construct >= 0 ||
            l->info.role != MICA_ROLE_NONE || l->nb_outputs < 1 ||
            l->nb_outputs > 4 || !MICA__HAS_OP(ops, constant_output))
            continue;
        for (o = 0; o < l->nb_outputs && all; o++) {
            bytes[o] = 0;
            host[o] = ops->constant_output(l->instance, o, &bytes[o]);
            all = (host[o] || bytes[o] == 0) && may_bind(e, s, o, bytes[o]);
        }
        if (!all)
            continue;
        l->bound = 1;
        for (o = 0; o < l->nb_outputs; o++) {
            mica__tensor_t *t = &e->tensors[l->outputs[o]];
            t->const_host = host[o];
            t->const_bytes = bytes[o];
            t->const_at = NULL;
        }
    }
    return MICA_OK;
}

/* Bytes of the device block and each bound tensor's offset in it. */
static mica_status_t layout(mica_engine_t *e, mica_context_t *ctx,
                            size_t *total, size_t *offset)
{
    int32_t t;
    size_t n = 0;

    for (t = 0; t < e->nb_tensors; t++) {
        size_t b = e->tensors[t].const_bytes;
        offset[t] = n;
        if (!e->tensors[t].const_host || !b)
            continue;
        if (b > SIZE_MAX - n - CONST_ALIGN)
            return mica__fail(ctx, MICA_ERR_INVALID, "the engine's constants "
                              "need more bytes than this machine addresses");
        n += (b + CONST_ALIGN - 1) / CONST_ALIGN * CONST_ALIGN;
    }
    *total = n;
    return MICA_OK;
}

/* Upload every bound tensor into one block on the device. */
static mica_status_t upload(mica_engine_t *e, mica_context_t *ctx)
{
    size_t total = 0, *offset = calloc((size_t)e->nb_tensors + 1,
                                       sizeof *offset);
    void *stream = NULL;
    unsigned char *block = NULL;
    mica_status_t st;
    int32_t t;

    if (!offset)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    if ((st = layout(e, ctx, &total, offset)) != MICA_OK || total == 0)
        goto done;
    if ((st = e->dev->alloc(ctx, total, (void **)&block)) != MICA_OK ||
        (st = e->dev->stream_create(ctx, &stream)) != MICA_OK)
        goto done;
    for (t = 0; t < e->nb_tensors && st == MICA_OK; t++)
        if (e->tensors[t].const_host && e->tensors[t].const_bytes)
            st = e->dev->upload(ctx, block + offset[t],
                                e->tensors[t].const_host,
                                e->tensors[t].const_bytes, stream);
    if (st == MICA_OK)
        st = e->dev->sync(ctx, stream);
done:
    if (stream)
        e->dev->stream_destroy(stream);
    if (st == MICA_OK) {
        e->const_block = block;
        for (t = 0; t < e->nb_tensors; t++)
            if (e->tensors[t].const_host)
                e->tensors[t].const_at = block ? block + offset[t] : NULL;
    } else if (block) {
        e->dev->free(block);
    }
    free(offset);
    return st;
}

mica_status_t mica__constants_ready(mica_engine_t *e, mica_context_t *ctx)
{
    mica_status_t st = MICA_OK;
    int32_t t;

    pthread_mutex_lock(&e->const_lock);
    if (!e->const_ready) {
        if (mica__device_desc(e->device)->host_memory) {
            for (t = 0; t < e->nb_tensors; t++)
                e->tensors[t].const_at = (void *)e->tensors[t].const_host;
        } else {
            st = upload(e, ctx);
        }
        e->const_ready = st == MICA_OK;
    }
    pthread_mutex_unlock(&e->const_lock);
    return st;
}

void mica__constants_free(mica_engine_t *e)
{
    if (e->const_block)
        e->dev->free(e->const_block);
    e->const_block = NULL;
}
