/*
 * core/exec_run.c - running an execution context: its profile (chosen
 * for the inputs' shapes, or fixed), phase 1 when the inputs changed,
 * the arena for the profile's plan, then upload, enqueue (the program,
 * core/flow.c, or its CUDA graph, core/exec_graph.c), download and sync,
 * and the outputs read back.
 */
#include <config.h>

#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* initialize() every clone once, after its first configure. */
static mica_status_t initialize(mica_exec_t *x)
{
    int32_t s;
    for (s = 0; s < x->e->nb_layers; s++) {
        mica_layer_t *inst[2];
        int32_t k;
        inst[0] = x->instances[s];
        inst[1] = x->host_owned[s] ? x->host[s] : NULL;
        for (k = 0; k < 2; k++) {
            mica_error_t err;
            mica__error_clear(&err);
            if (inst[k] && MICA__HAS_OP(inst[k]->ops, initialize) &&
                inst[k]->ops->initialize(inst[k], k ? NULL : x->stream,
                                         &err) != MICA_OK)
                return mica__exec_layer_error(x, s, &err, "initialize failed");
        }
    }
    x->initialized = 1;
    return MICA_OK;
}

mica_status_t mica_exec_set_profile(mica_exec_t *x, int32_t profile)
{
    int32_t n = x->e->nb_user_profiles > 0 ? x->e->nb_user_profiles : 1;
    if (profile < -1 || profile >= n)
        return mica__fail(x->ctx, MICA_ERR_INVALID,
                          "profile %d does not exist: the engine has %d "
                          "(0..%d)", (int)profile, (int)n, (int)n - 1);
    x->fixed_profile = profile;
    x->dirty = 1;
    return MICA_OK;
}

int32_t mica_exec_profile(const mica_exec_t *x)
{
    return x->profile >= 0 ? x->profile : x->fixed_profile;
}

/* The profile for the inputs as set: the fixed one, or the first fit. */
static mica_status_t pick_profile(mica_exec_t *x, int32_t *out)
{
    mica_engine_t *e = x->e;
    char why[512], all[2048];
    size_t pos = 0;
    int32_t k;

    if (e->nb_user_profiles == 0) {
        *out = 0;
        return MICA_OK;
    }
    if (x->fixed_profile >= 0) {
        if (!mica__profile_admits(e, x->fixed_profile, x->in_dims, &x->shapes,
                                  why, sizeof why))
            return mica__fail(x->ctx, MICA_ERR_INVALID, "%s", why);
        *out = x->fixed_profile;
        return MICA_OK;
    }
    for (k = 0; k < e->nb_user_profiles; k++) {
        if (mica__profile_admits(e, k, x->in_dims, &x->shapes, why, sizeof why)) {
            *out = k;
            return MICA_OK;
        }
        if (pos < sizeof all)
            pos += (size_t)snprintf(all + pos, sizeof all - pos, "%s%s",
                                    k ? "; " : "", why);
    }
    return mica__fail(x->ctx, MICA_ERR_INVALID, "no profile admits the "
                      "inputs: %s", all);
}

/* Switch the device state to profile k: arena and configure. */
static mica_status_t use_profile(mica_exec_t *x, int32_t k)
{
    mica_engine_t *e = x->e;
    int64_t need = e->profiles[k].arena_bytes;
    mica_status_t st;
    int32_t s;

    if (need > x->arena_cap) {
        if (x->arena) {
            x->dev->sync(x->ctx, x->stream);
            x->dev->free(x->arena);
            x->arena = NULL;
            x->arena_cap = 0;
        }
        if ((st = x->dev->alloc(x->ctx, (size_t)need, (void **)&x->arena)) != MICA_OK)
            return st;
        x->arena_cap = need;
    }
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        mica_dyn_desc_t dyn[128];
        mica_error_t err;
        if (!x->instances[s] || !x->instances[s]->ops->configure)
            continue;
        mica__layer_dyn_descs(e, l, k, dyn);
        mica__error_clear(&err);
        if (x->instances[s]->ops->configure(x->instances[s], dyn, l->nb_inputs,
                                            dyn + l->nb_inputs, l->nb_outputs,
                                            &err) != MICA_OK)
            return mica__exec_layer_error(x, s, &err, "configure failed");
    }
    x->profile = k;
    /* configure may have moved memory of the layers that graphs use. */
    mica__graph_forget(x);
    return x->initialized ? MICA_OK : initialize(x);
}

void mica__exec_refresh(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    const mica__eprofile_t *p = &e->profiles[x->profile];
    int32_t s, i;

    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        mica_tensor_desc_t *io = x->descs + x->first[s];
        void **ptr = x->ptrs + x->first[s];
        int empty = 1;
        if (!l->run_device)
            continue;
        mica__layer_descs(e, l, x->shapes.dims, io);
        for (i = 0; i < l->nb_inputs + l->nb_outputs; i++) {
            int32_t t = i < l->nb_inputs ? l->inputs[i]
                                         : l->outputs[i - l->nb_inputs];
            int32_t kind = i < l->nb_inputs ? l->input_kinds[i] : MICA_INPUT_DATA;
            if (t < 0)
                ptr[i] = NULL;
            else if (kind == MICA_INPUT_SHAPE)
                ptr[i] = x->shapes.host[t];
            else if (x->bound[t])
                ptr[i] = x->bound[t];
            else if (e->tensors[t].const_host)
                ptr[i] = e->tensors[t].const_at;
            else
                ptr[i] = p->offset[t] >= 0 ? mica__arena_at(x, p->offset[t])
                                           : NULL;
            if (i >= l->nb_inputs && e->tensors[t].need_e &&
                mica_dims_volume(&io[i].dims) > 0)
                empty = 0;
        }
        x->skip[s] = empty || l->bound;
    }
}

/* Whether the descriptors a and b of n tensors differ in what a layer
 * sees of them: type, format, dims, scale. */
static int differ(const mica_tensor_desc_t *a, const mica_tensor_desc_t *b,
                  int32_t n)
{
    int32_t i, j;
    for (i = 0; i < n; i++) {
        if (a[i].dtype != b[i].dtype || a[i].format != b[i].format ||
            a[i].scale != b[i].scale || a[i].dims.nb_dims != b[i].dims.nb_dims)
            return 1;
        for (j = 0; j < a[i].dims.nb_dims; j++)
            if (a[i].dims.d[j] != b[i].dims.d[j])
                return 1;
    }
    return 0;
}

mica_status_t mica__exec_tell_shapes(mica_exec_t *x, int32_t from,
                                     int32_t to)
{
    mica_engine_t *e = x->e;
    int32_t s;

    for (s = from; s < to && s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica_tensor_desc_t *io = x->descs + x->first[s];
        mica_tensor_desc_t *told = x->told + x->first[s];
        int32_t n = l->nb_inputs + l->nb_outputs;
        mica_layer_t *inst = x->instances[s];
        mica_error_t err;
        if (!l->run_device || !inst ||
            !MICA__HAS_OP(inst->ops, shape_change) ||
            (x->told_ok[s] && !differ(io, told, n)))
            continue;
        memcpy(told, io, sizeof *io * (size_t)n);
        x->told_ok[s] = 0;
        mica__error_clear(&err);
        if (inst->ops->shape_change(inst, io, l->nb_inputs, io + l->nb_inputs,
                                    l->nb_outputs, &err) != MICA_OK)
            return mica__exec_layer_error(x, s, &err, "shape_change failed");
        x->told_ok[s] = 1;
        /* It may have moved memory of its own that graphs point to. */
        mica__graph_forget(x);
    }
    return MICA_OK;
}

mica_status_t mica__exec_check_plan(mica_exec_t *x, int32_t k)
{
    mica_engine_t *e = x->e;
    char dims[256];
    int32_t t;

    for (t = 0; t < e->nb_tensors; t++) {
        int64_t bytes;
        if (!e->tensors[t].need_e)
            continue;
        bytes = mica_dims_volume(&x->shapes.dims[t]) *
                (int64_t)mica_dtype_size(e->tensors[t].dtype);
        if (bytes > e->profiles[k].bytes[t]) {
            mica__dims_text(&x->shapes.dims[t], dims, sizeof dims);
            return mica__fail(x->ctx, MICA_ERR_INVALID,
                              "tensor '%s' has shape %s here (%lld bytes), "
                              "more than profile %d planned for it (%lld "
                              "bytes)", e->tensors[t].name, dims,
                              (long long)bytes, (int)k,
                              (long long)e->profiles[k].bytes[t]);
        }
    }
    return MICA_OK;
}

static mica_status_t infer_shapes(mica_exec_t *x);

/* Layers' hooks run here (configure, shape_change): with the context's
 * CPU thread count, as its runs have. */
mica_status_t mica_exec_infer_shapes(mica_exec_t *x)
{
    int32_t old = mica__threads_enter(x->threads);
    mica_status_t st = infer_shapes(x);
    mica__threads_enter(old);
    return st;
}

static mica_status_t infer_shapes(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t i, k;
    mica_status_t st;

    if (!x->dirty)
        return MICA_OK;
    for (i = 0; i < e->nb_inputs; i++) {
        const mica__tensor_t *t = &e->tensors[e->input_index[i]];
        if (!x->in_set[i] &&
            (t->need_e || t->need_s || t->need_dims || t->is_shape_input))
            return mica__fail(x->ctx, MICA_ERR_INVALID,
                              "input '%s' was not given", t->name);
    }
    /* The profile (and so configure) before phase 1: the host phase may
     * run the same CPU clones as the device phase. */
    if ((st = pick_profile(x, &k)) != MICA_OK ||
        (k != x->profile && (st = use_profile(x, k)) != MICA_OK) ||
        (st = mica__shapes_run(e, &x->shapes, x->in_dims, 1, x->host)) != MICA_OK ||
        (st = mica__exec_check_plan(x, k)) != MICA_OK ||
        (st = mica__flow_check_dims(x)) != MICA_OK)
        return st;
    mica__exec_refresh(x);
    /* Past a layer that makes a data-dependent size, the shapes are its
     * bound's until it has run: told then (core/dds.c). */
    if ((st = mica__exec_tell_shapes(x, 0, mica__dds_next(e, -1) + 1)) !=
        MICA_OK)
        return st;
    for (i = 0; i < e->nb_outputs; i++)
        x->out_ready[i] = 0;
    x->dirty = 0;
    x->shapes_gen++; /* a graph's key may have changed */
    return MICA_OK;
}

mica_status_t mica_exec_upload(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t i;
    mica_status_t st;

    if ((st = mica_exec_infer_shapes(x)) != MICA_OK ||
        (x->timing && (st = mica__timing_stage(x, MICA__STAGE_UPLOAD, 0)) !=
                          MICA_OK))
        return st;
    for (i = 0; i < e->nb_inputs; i++) {
        int32_t t = e->input_index[i];
        int64_t bytes = mica_dims_volume(&x->in_dims[i]) *
                        (int64_t)mica_dtype_size(e->tensors[t].dtype);
        if (!e->tensors[t].need_e || bytes == 0 || x->bound[t])
            continue;
        if (!x->in_data[i])
            return mica__fail(x->ctx, MICA_ERR_INVALID,
                              "input '%s' was not given", e->tensors[t].name);
        st = x->dev->upload(x->ctx,
                            mica__arena_at(x, e->profiles[x->profile].offset[t]),
                            x->in_data[i], (size_t)bytes, x->stream);
        if (st != MICA_OK)
            return st;
    }
    return x->timing ? mica__timing_stage(x, MICA__STAGE_UPLOAD, 1) : MICA_OK;
}

static mica_status_t enqueue(mica_exec_t *x)
{
    mica_status_t st;

    if ((st = mica_exec_infer_shapes(x)) != MICA_OK)
        return st;
    if (!x->timing)
        return mica__graph_enqueue(x);
    if ((st = mica__timing_stage(x, MICA__STAGE_ENQUEUE, 0)) != MICA_OK ||
        (st = mica__graph_enqueue(x)) != MICA_OK)
        return st;
    return mica__timing_stage(x, MICA__STAGE_ENQUEUE, 1);
}

/* The layers run with the context's CPU thread count
 * (core/base/threads.c). */
mica_status_t mica_exec_enqueue(mica_exec_t *x)
{
    int32_t old = mica__threads_enter(x->threads);
    mica_status_t st = enqueue(x);
    mica__threads_enter(old);
    return st;
}

mica_status_t mica_exec_download(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t i;
    mica_status_t st;

    if ((st = mica_exec_infer_shapes(x)) != MICA_OK ||
        (x->timing && (st = mica__timing_stage(x, MICA__STAGE_DOWNLOAD, 0)) !=
                          MICA_OK))
        return st;
    for (i = 0; i < e->nb_outputs; i++) {
        int32_t t = e->output_index[i];
        size_t bytes = (size_t)mica_dims_volume(&x->shapes.dims[t]) *
                       mica_dtype_size(e->tensors[t].dtype);
        if (x->timing) {
            if ((st = mica__timing_output_room(x, i, bytes)) != MICA_OK)
                return st;
        } else if (x->out_cap[i] < bytes || !x->out_data[i]) {
            void *grown = realloc(x->out_data[i], bytes ? bytes : 1);
            if (!grown)
                return mica__fail(x->ctx, MICA_ERR_NOMEM,
                                  "out of host memory for output '%s'",
                                  e->tensors[t].name);
            x->out_data[i] = grown;
            x->out_cap[i] = bytes;
        }
        x->out_ready[i] = 1;
        if (bytes == 0 || x->bound[t])
            continue;
        st = x->dev->download(x->ctx, x->out_data[i],
                              mica__arena_at(x, e->profiles[x->profile].offset[t]),
                              bytes, x->stream);
        if (st != MICA_OK)
            return st;
    }
    return x->timing ? mica__timing_stage(x, MICA__STAGE_DOWNLOAD, 1)
                     : MICA_OK;
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
    mica_engine_t *e = x->e;
    int32_t i, t = -1;
    const void *p = NULL;

    for (i = 0; i < e->nb_outputs && t < 0; i++)
        if (strcmp(e->tensors[e->output_index[i]].name, name) == 0) {
            t = e->output_index[i];
            p = x->out_ready[i] && !x->dirty ? x->out_data[i] : NULL;
        }
    for (i = 0; i < e->nb_shape_outputs && t < 0; i++)
        if (strcmp(e->tensors[e->shape_output_index[i]].name, name) == 0) {
            t = e->shape_output_index[i];
            p = x->profile >= 0 && !x->dirty ? x->shapes.host[t] : NULL;
        }
    if (t < 0)
        return mica__fail(x->ctx, MICA_ERR_NOT_FOUND,
                          "'%s' is not an output of this network", name);
    if (x->bound[t])
        return mica__fail(x->ctx, MICA_ERR_INVALID, "output '%s' is bound to "
                          "the caller's memory: read it there", name);
    if (!p)
        return mica__fail(x->ctx, MICA_ERR_INVALID,
                          "output '%s': the network has not run with the "
                          "inputs as set", name);
    memset(desc, 0, sizeof *desc);
    desc->dtype = e->tensors[t].dtype;
    desc->format = (mica_format_t)e->tensors[t].format;
    desc->dims = x->shapes.dims[t];
    desc->scale = e->tensors[t].scale;
    *data = p;
    return MICA_OK;
}
