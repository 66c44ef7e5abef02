/*
 * core/exec.c - execution contexts: one arena, one stream, and a clone of
 * every layer instance (as TensorRT clones plugins per context).
 *
 * Shapes are fixed when the context is made, so every layer's descriptors
 * and pointers are computed once; a run is then a loop of enqueue calls.
 */
#include <config.h>

#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mica_exec {
    mica_engine_t *e;
    mica_context_t *ctx;
    const mica__device_t *dev;
    void *stream;
    unsigned char *arena;
    mica_layer_t **instances;
    const void **in_data;       /* per network input: the caller's data */
    void **out_data;            /* per network output: host copies */
    mica_tensor_desc_t *descs;  /* per layer: inputs then outputs */
    void **ptrs;                /* same layout */
    int32_t *first;             /* per layer: index into descs and ptrs */
    int32_t *skip;              /* per layer: every output is empty */
};

static mica_status_t layer_error(mica_exec_t *x, int32_t s,
                                 const mica_error_t *err, const char *what)
{
    const mica__layer_t *l = &x->e->layers[s];
    char at[512];
    return mica__fail(x->ctx, MICA_ERR_RUNTIME, "%slayer '%s' (%s): %s",
                      mica__at(l->origin, at, sizeof at), l->name,
                      l->info.type, mica__error_msg(err, what));
}

/* Clone and configure each instance; fix descriptors and pointers. */
static mica_status_t prepare(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t s, i, total = 0;

    for (s = 0; s < e->nb_layers; s++)
        total += e->layers[s].nb_inputs + e->layers[s].nb_outputs;
    x->instances = calloc((size_t)e->nb_layers + 1, sizeof *x->instances);
    x->descs = calloc((size_t)total + 1, sizeof *x->descs);
    x->ptrs = calloc((size_t)total + 1, sizeof *x->ptrs);
    x->first = calloc((size_t)e->nb_layers + 1, sizeof *x->first);
    x->skip = calloc((size_t)e->nb_layers + 1, sizeof *x->skip);
    if (!x->instances || !x->descs || !x->ptrs || !x->first || !x->skip)
        return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
    total = 0;
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        mica_tensor_desc_t *io = x->descs + total;
        mica_dyn_desc_t dyn[128];
        int32_t n = l->nb_inputs + l->nb_outputs, empty = 1;
        mica_error_t err;

        x->first[s] = total;
        mica__layer_descs(e, l, io);
        for (i = 0; i < n; i++) {
            int32_t t = i < l->nb_inputs ? l->inputs[i]
                                         : l->outputs[i - l->nb_inputs];
            x->ptrs[total + i] = t >= 0 && e->tensors[t].bytes > 0
                                     ? x->arena + e->tensors[t].offset : NULL;
            if (i >= l->nb_inputs && e->tensors[t].bytes > 0)
                empty = 0;
            if (n <= 128) {
                dyn[i].desc = io[i];
                dyn[i].min = dyn[i].max = io[i].dims;
            }
        }
        x->skip[s] = empty;
        total += n;
        mica__error_clear(&err);
        x->instances[s] = l->instance->ops->clone(l->instance, &err);
        if (!x->instances[s])
            return layer_error(x, s, &err, "clone failed");
        if (x->instances[s]->ops->configure &&
            x->instances[s]->ops->configure(x->instances[s], dyn,
                                            l->nb_inputs, dyn + l->nb_inputs,
                                            l->nb_outputs, &err) != MICA_OK)
            return layer_error(x, s, &err, "configure failed");
    }
    return MICA_OK;
}

mica_status_t mica_exec_create(mica_engine_t *engine, mica_exec_t **out)
{
    mica_exec_t *x = calloc(1, sizeof *x);
    mica_status_t st;

    *out = NULL;
    if (!x)
        return mica__fail(engine->ctx, MICA_ERR_NOMEM, "out of host memory");
    x->e = engine;
    x->ctx = engine->ctx;
    x->dev = engine->dev;
    x->in_data = calloc((size_t)engine->nb_inputs + 1, sizeof *x->in_data);
    x->out_data = calloc((size_t)engine->nb_outputs + 1, sizeof *x->out_data);
    if (!x->in_data || !x->out_data) {
        st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
        goto fail;
    }
    if ((st = x->dev->stream_create(x->ctx, &x->stream)) != MICA_OK)
        goto fail;
    if (engine->arena_bytes > 0 &&
        (st = x->dev->alloc(x->ctx, (size_t)engine->arena_bytes,
                            (void **)&x->arena)) != MICA_OK)
        goto fail;
    if ((st = prepare(x)) != MICA_OK)
        goto fail;
    *out = x;
    return MICA_OK;
fail:
    mica_exec_destroy(x);
    return st;
}

void mica_exec_destroy(mica_exec_t *x)
{
    int32_t i;
    if (!x)
        return;
    if (x->stream)
        x->dev->sync(x->ctx, x->stream);
    for (i = 0; x->instances && i < x->e->nb_layers; i++)
        if (x->instances[i])
            x->instances[i]->ops->destroy(x->instances[i]);
    for (i = 0; i < x->e->nb_outputs; i++)
        free(x->out_data[i]);
    if (x->arena)
        x->dev->free(x->arena);
    if (x->stream)
        x->dev->stream_destroy(x->stream);
    free(x->instances);
    free(x->in_data);
    free(x->out_data);
    free(x->descs);
    free(x->ptrs);
    free(x->first);
    free(x->skip);
    free(x);
}

static void dims_text(const mica_dims_t *d, char *buf, size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "[");
    int32_t i;
    for (i = 0; i < d->nb_dims && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%lld", i ? ", " : "",
                                (long long)d->d[i]);
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

mica_status_t mica_exec_set_input(mica_exec_t *x, const char *name,
                                  const mica_dims_t *dims, const void *data)
{
    int32_t i, k;
    char want[256], got[256];

    for (i = 0; i < x->e->nb_inputs; i++) {
        const mica__tensor_t *t = &x->e->tensors[x->e->input_index[i]];
        if (strcmp(t->name, name) != 0)
            continue;
        if (dims->nb_dims == t->dims.nb_dims) {
            for (k = 0; k < dims->nb_dims; k++)
                if (dims->d[k] != t->dims.d[k])
                    break;
            if (k == dims->nb_dims) {
                if (!data && t->bytes > 0)
                    return mica__fail(x->ctx, MICA_ERR_INVALID,
                                      "input '%s': no data", name);
                x->in_data[i] = data;
                return MICA_OK;
            }
        }
        dims_text(&t->dims, want, sizeof want);
        dims_text(dims, got, sizeof got);
        return mica__fail(x->ctx, MICA_ERR_INVALID,
                          "input '%s': shape %s does not match the engine's "
                          "%s", name, got, want);
    }
    return mica__fail(x->ctx, MICA_ERR_NOT_FOUND,
                      "'%s' is not an input of this network", name);
}

mica_status_t mica_exec_upload(mica_exec_t *x)
{
    int32_t i;
    mica_status_t st;

    for (i = 0; i < x->e->nb_inputs; i++) {
        const mica__tensor_t *t = &x->e->tensors[x->e->input_index[i]];
        if (t->bytes == 0)
            continue;
        if (!x->in_data[i])
            return mica__fail(x->ctx, MICA_ERR_INVALID,
                              "input '%s' was not given", t->name);
        st = x->dev->upload(x->ctx, x->arena + t->offset, x->in_data[i],
                            (size_t)t->bytes, x->stream);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

mica_status_t mica_exec_enqueue(mica_exec_t *x)
{
    int32_t s;

    for (s = 0; s < x->e->nb_layers; s++) {
        const mica__layer_t *l = &x->e->layers[s];
        int32_t f = x->first[s];
        mica_error_t err;
        if (x->skip[s])
            continue;
        mica__error_clear(&err);
        if (x->instances[s]->ops->enqueue(
                x->instances[s], x->descs + f, l->nb_inputs,
                x->descs + f + l->nb_inputs, l->nb_outputs,
                (const void *const *)(x->ptrs + f), x->ptrs + f + l->nb_inputs,
                l->workspace > 0 ? x->arena + l->workspace_offset : NULL,
                x->stream, &err) != MICA_OK)
            return layer_error(x, s, &err, "enqueue failed");
    }
    return MICA_OK;
}

mica_status_t mica_exec_download(mica_exec_t *x)
{
    int32_t i;
    mica_status_t st;

    for (i = 0; i < x->e->nb_outputs; i++) {
        const mica__tensor_t *t = &x->e->tensors[x->e->output_index[i]];
        if (!x->out_data[i]) {
            x->out_data[i] = malloc(t->bytes > 0 ? (size_t)t->bytes : 1);
            if (!x->out_data[i])
                return mica__fail(x->ctx, MICA_ERR_NOMEM,
                                  "out of host memory for output '%s'",
                                  t->name);
        }
        if (t->bytes == 0)
            continue;
        st = x->dev->download(x->ctx, x->out_data[i], x->arena + t->offset,
                              (size_t)t->bytes, x->stream);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

mica_status_t mica_exec_sync(mica_exec_t *x)
{
    return x->dev->sync(x->ctx, x->stream);
}

mica_status_t mica_exec_run(mica_exec_t *x)
{
    mica_status_t st;
    if ((st = mica_exec_upload(x)) != MICA_OK ||
        (st = mica_exec_enqueue(x)) != MICA_OK ||
        (st = mica_exec_download(x)) != MICA_OK)
        return st;
    return mica_exec_sync(x);
}

mica_status_t mica_exec_get_output(mica_exec_t *x, const char *name,
                                   mica_tensor_desc_t *desc, const void **data)
{
    int32_t i;
    for (i = 0; i < x->e->nb_outputs; i++) {
        const mica__tensor_t *t = &x->e->tensors[x->e->output_index[i]];
        if (strcmp(t->name, name) != 0)
            continue;
        if (!x->out_data[i])
            return mica__fail(x->ctx, MICA_ERR_INVALID,
                              "output '%s': the network has not run yet",
                              name);
        memset(desc, 0, sizeof *desc);
        desc->dtype = t->dtype;
        desc->format = MICA_FORMAT_LINEAR;
        desc->dims = t->dims;
        desc->scale = 1.0f;
        *data = x->out_data[i];
        return MICA_OK;
    }
    return mica__fail(x->ctx, MICA_ERR_NOT_FOUND,
                      "'%s' is not an output of this network", name);
}
