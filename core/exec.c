/*
 * core/exec.c - execution contexts: one arena, one stream, a clone of
 * every device layer (as TensorRT clones plugins per context), and the
 * phase-1 state.
 *
 * A run is phase 1 (core/shapes.c: profile choice, shape tensors on the
 * host, every tensor's dims), skipped when no input's shape or shape
 * values changed, then phase 2: a loop of enqueue calls with descriptors
 * and pointers refreshed from phase 1.  The arena is planned per profile
 * for its largest shapes, so a new shape within the profile allocates
 * nothing; only switching to a profile with a larger plan does.
 */
#include <config.h>

#include "exec.h"
#include "registry/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static mica_status_t nomem(mica_exec_t *x)
{
    return mica__fail(x->ctx, MICA_ERR_NOMEM, "out of host memory");
}

static mica_status_t alloc_state(mica_exec_t *x)
{
    mica_engine_t *e = x->e;
    int32_t s, total = 0;

    for (s = 0; s < e->nb_layers; s++)
        total += e->layers[s].nb_inputs + e->layers[s].nb_outputs;
    x->instances = calloc((size_t)e->nb_layers + 1, sizeof *x->instances);
    x->host = calloc((size_t)e->nb_layers + 1, sizeof *x->host);
    x->bound = calloc((size_t)e->nb_tensors + 1, sizeof *x->bound);
    x->host_owned = calloc((size_t)e->nb_layers + 1, sizeof *x->host_owned);
    x->descs = calloc((size_t)total + 1, sizeof *x->descs);
    x->told = calloc((size_t)total + 1, sizeof *x->told);
    x->told_ok = calloc((size_t)e->nb_layers + 1, sizeof *x->told_ok);
    x->ptrs = calloc((size_t)total + 1, sizeof *x->ptrs);
    x->first = calloc((size_t)e->nb_layers + 1, sizeof *x->first);
    x->skip = calloc((size_t)e->nb_layers + 1, sizeof *x->skip);
    x->in_dims = calloc((size_t)e->nb_inputs + 1, sizeof *x->in_dims);
    x->in_data = calloc((size_t)e->nb_inputs + 1, sizeof *x->in_data);
    x->in_set = calloc((size_t)e->nb_inputs + 1, sizeof *x->in_set);
    x->out_data = calloc((size_t)e->nb_outputs + 1, sizeof *x->out_data);
    x->out_cap = calloc((size_t)e->nb_outputs + 1, sizeof *x->out_cap);
    x->out_ready = calloc((size_t)e->nb_outputs + 1, sizeof *x->out_ready);
    x->trips = calloc((size_t)e->nb_constructs + 1, sizeof *x->trips);
    x->iter = calloc((size_t)e->nb_constructs + 1, sizeof *x->iter);
    x->branch = calloc((size_t)e->nb_constructs + 1, sizeof *x->branch);
    if (!x->trips || !x->iter || !x->branch || !x->instances || !x->host || !x->host_owned || !x->bound ||
        !x->descs || !x->told || !x->told_ok ||
        !x->ptrs || !x->first || !x->skip ||
        !x->in_dims || !x->in_data || !x->in_set || !x->out_data ||
        !x->out_cap || !x->out_ready)
        return nomem(x);
    total = 0;
    for (s = 0; s < e->nb_layers; s++) {
        x->first[s] = total;
        total += e->layers[s].nb_inputs + e->layers[s].nb_outputs;
    }
    return mica__shapes_init(e, &x->shapes);
}

/*
 * Clone the layers: one clone per device layer, configured when a profile
 * is chosen; one per host-phase layer, configured now for every profile's
 * range, unless the device clone runs on the CPU and serves both phases.
 * Contexts share nothing mutable, so they may run on different threads.
 */
/* Check clone *inst of layer s (made by creator c). */
static mica_status_t check_clone(mica_exec_t *x, int32_t s,
                                 const mica_layer_creator_t *c,
                                 mica_layer_t **inst)
{
    const mica__layer_t *l = &x->e->layers[s];
    char prefix[768], at[512];
    snprintf(prefix, sizeof prefix, "%slayer '%s' (%s)",
             mica__at(l->origin, at, sizeof at), l->name, l->info.type);
    return mica__check_instance(x->ctx, c, inst, "clone", prefix);
}

static mica_status_t clone_layers(mica_exec_t *x)
{
    int32_t s;
    for (s = 0; s < x->e->nb_layers; s++) {
        const mica__layer_t *l = &x->e->layers[s];
        mica_dyn_desc_t all[128];
        mica_error_t err;
        mica__error_clear(&err);
        if (l->run_device && !l->bound) {
            x->instances[s] = l->instance->ops->clone(l->instance, &err);
            if (!x->instances[s])
                return mica__exec_layer_error(x, s, &err, "clone failed");
            if (check_clone(x, s, l->info.creator, &x->instances[s]) !=
                MICA_OK)
                return MICA_ERR_INVALID;
            /* A clone is told its tactic, whatever it copied. */
            if (l->tactic &&
                x->instances[s]->ops->set_tactic(x->instances[s], l->tactic,
                                                 &err) != MICA_OK)
                return mica__exec_layer_error(x, s, &err,
                                              "set_tactic failed");
        }
        if (!l->run_host)
            continue;
        if (l->host_instance == l->instance && x->instances[s]) {
            x->host[s] = x->instances[s];
            continue;
        }
        x->host[s] = l->host_instance->ops->clone(l->host_instance, &err);
        if (!x->host[s])
            return mica__exec_layer_error(x, s, &err, "clone failed");
        if (check_clone(x, s, l->host_info.creator, &x->host[s]) != MICA_OK)
            return MICA_ERR_INVALID;
        x->host_owned[s] = 1;
        if (!x->host[s]->ops->configure)
            continue;
        mica__host_ranges(x->e, l, all);
        if (x->host[s]->ops->configure(x->host[s], all, l->nb_inputs,
                                       all + l->nb_inputs, l->nb_outputs,
                                       &err) != MICA_OK)
            return mica__exec_layer_error(x, s, &err, "configure failed");
    }
    return MICA_OK;
}

/* terminate() and destroy a clone. */
static void release(mica_exec_t *x, mica_layer_t *inst)
{
    if (!inst)
        return;
    if (x->initialized && MICA__HAS_OP(inst->ops, terminate))
        inst->ops->terminate(inst);
    inst->ops->destroy(inst);
}

mica_status_t mica_exec_create(mica_engine_t *engine, mica_exec_t **out)
{
    mica_exec_t *x = calloc(1, sizeof *x);
    mica_status_t st;
    int32_t i;

    *out = NULL;
    if (!x)
        return mica__fail(engine->ctx, MICA_ERR_NOMEM, "out of host memory");
    x->e = engine;
    x->ctx = engine->ctx;
    x->dev = engine->dev;
    x->fixed_profile = -1;
    x->profile = -1;
    x->dirty = 1;
    if ((st = alloc_state(x)) != MICA_OK ||
        (st = mica__constants_ready(engine, x->ctx)) != MICA_OK ||
        (st = x->dev->stream_create(x->ctx, &x->own_stream)) != MICA_OK ||
        (st = clone_layers(x)) != MICA_OK)
        goto fail;
    for (i = 0; i < engine->nb_inputs; i++)
        x->in_dims[i] = engine->tensors[engine->input_index[i]].dims;
    x->stream = x->own_stream;
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
    if (x->own_stream && x->own_stream != x->stream)
        x->dev->sync(x->ctx, x->own_stream);
    mica__graph_free(x);
    for (i = 0; x->instances && i < x->e->nb_layers; i++) {
        if (x->host && x->host_owned[i])
            release(x, x->host[i]);
        release(x, x->instances[i]);
    }
    mica__timing_free(x); /* before out_data: it frees pinned copies */
    for (i = 0; x->out_data && i < x->e->nb_outputs; i++)
        free(x->out_data[i]);
    if (x->arena)
        x->dev->free(x->arena);
    if (x->own_stream)
        x->dev->stream_destroy(x->own_stream);
    free(x->bound);
    mica__shapes_free(x->e, &x->shapes);
    free(x->instances);
    free(x->host);
    free(x->host_owned);
    free(x->in_dims);
    free(x->in_data);
    free(x->in_set);
    free(x->out_data);
    free(x->out_cap);
    free(x->out_ready);
    free(x->descs);
    free(x->told);
    free(x->told_ok);
    free(x->ptrs);
    free(x->first);
    free(x->skip);
    free(x->trips);
    free(x->iter);
    free(x->branch);
    free(x);
}

/* The position of network input `name`, -1 if none. */
static int32_t input_of(const mica_exec_t *x, const char *name)
{
    int32_t i;
    if (x->e->input_pos && x->e->tensor_names.cap) {
        i = mica_engine_find_tensor(x->e, name);
        return i < 0 ? -1 : x->e->input_pos[i];
    }
    for (i = 0; i < x->e->nb_inputs; i++)
        if (strcmp(x->e->tensors[x->e->input_index[i]].name, name) == 0)
            return i;
    return -1;
}

/* Check dims against input i and take them; marks phase 1 to redo. */
static mica_status_t take_dims(mica_exec_t *x, int32_t i,
                               const mica_dims_t *dims)
{
    const mica__tensor_t *t = &x->e->tensors[x->e->input_index[i]];
    char got[256], what[512];
    int32_t k;

    int64_t bytes;

    if (dims->nb_dims != t->dims.nb_dims) {
        snprintf(got, sizeof got, "of rank %d", (int)dims->nb_dims);
        goto mismatch;
    }
    mica__dims_text(dims, got, sizeof got);
    for (k = 0; k < dims->nb_dims; k++)
        if (dims->d[k] < 0 || (t->dims.d[k] >= 0 && dims->d[k] != t->dims.d[k]))
            goto mismatch;
    snprintf(what, sizeof what, "input '%s'", t->name);
    if (mica__tensor_bytes(x->ctx, what, dims, t->dtype, &bytes) != MICA_OK)
        return MICA_ERR_INVALID;
    for (k = 0; k < dims->nb_dims; k++)
        if (dims->d[k] != x->in_dims[i].d[k])
            x->dirty = 1;
    x->in_dims[i] = *dims;
    x->in_set[i] = 1;
    return MICA_OK;
mismatch:
    return mica__fail(x->ctx, MICA_ERR_INVALID,
                      "input '%s': shape %s does not match the engine's %s",
                      t->name, got, t->shape_text);
}

mica_status_t mica_exec_set_input(mica_exec_t *x, const char *name,
                                  const mica_dims_t *dims, const void *data)
{
    mica_engine_t *e = x->e;
    int32_t i = input_of(x, name);
    mica_status_t st;

    if (i >= 0) {
        const mica__tensor_t *t = &e->tensors[e->input_index[i]];
        int64_t n = mica_dims_volume(dims);
        if (!data && n > 0)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "input '%s': no data",
                              name);
        if ((st = take_dims(x, i, dims)) != MICA_OK)
            return st;
        if (x->bound[e->input_index[i]]) {
            x->bound[e->input_index[i]] = NULL; /* data instead of binding */
            x->dirty = 1;
        }
        if (t->is_shape_input) {
            /* Shape values are read now: phase 1 needs them on the host. */
            int32_t ti = e->input_index[i];
            size_t bytes = sizeof(int32_t) * (size_t)n;
            if (x->shapes.host_cap[ti] < bytes || !x->shapes.host[ti]) {
                void *grown = realloc(x->shapes.host[ti], bytes ? bytes : 1);
                if (!grown)
                    return nomem(x);
                x->shapes.host[ti] = grown;
                x->shapes.host_cap[ti] = bytes;
            }
            if (bytes)
                memcpy(x->shapes.host[ti], data, bytes);
            data = x->shapes.host[ti];
            x->dirty = 1;
        }
        x->in_data[i] = data;
        return MICA_OK;
    }
    return mica__fail(x->ctx, MICA_ERR_NOT_FOUND,
                      "'%s' is not an input of this network", name);
}

mica_status_t mica_exec_bind(mica_exec_t *x, const char *name,
                             const mica_dims_t *dims, void *ptr)
{
    mica_engine_t *e = x->e;
    int32_t i = input_of(x, name), t = -1;
    mica_status_t st;

    if (i >= 0) {
        t = e->input_index[i];
        if (e->tensors[t].is_shape_input)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "input '%s' is a "
                              "shape tensor: give its values with "
                              "mica_exec_set_input", name);
        if (!dims && ptr)
            return mica__fail(x->ctx, MICA_ERR_INVALID, "binding input '%s' "
                              "needs its dims", name);
        if (ptr && (st = take_dims(x, i, dims)) != MICA_OK)
            return st;
        x->in_data[i] = NULL;
    } else {
        for (i = 0; i < e->nb_outputs && t < 0; i++)
            if (strcmp(e->tensors[e->output_index[i]].name, name) == 0)
                t = e->output_index[i];
        if (t < 0)
            return mica__fail(x->ctx, MICA_ERR_NOT_FOUND, "'%s' is neither "
                              "an input nor an output of this network", name);
    }
    x->bound[t] = ptr;
    x->dirty = 1; /* pointers are refreshed with phase 1 */
    return MICA_OK;
}

mica_status_t mica_exec_set_stream(mica_exec_t *x, void *stream)
{
    mica_status_t st;
    const mica__device_desc_t *d = mica__device_desc(x->e->device);
    if (stream && !d->streams)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "a stream is for an "
                          "engine on a device with streams; this one runs on "
                          "the %s", d->title);
    /* Work queued on the old stream finishes first. */
    if ((st = x->dev->sync(x->ctx, x->stream)) != MICA_OK)
        return st;
    x->stream = stream ? stream : x->own_stream;
    return MICA_OK;
}

mica_status_t mica_exec_tensor_dims(mica_exec_t *x, const char *name,
                                    mica_dims_t *dims)
{
    int32_t t = mica_engine_find_tensor(x->e, name);
    mica_status_t st;

    if (t < 0)
        return mica__fail(x->ctx, MICA_ERR_NOT_FOUND, "'%s' is not a tensor "
                          "of this network", name);
    if ((st = mica_exec_infer_shapes(x)) != MICA_OK)
        return st;
    *dims = x->shapes.dims[t];
    return MICA_OK;
}


mica_status_t mica_exec_set_threads(mica_exec_t *x, int32_t threads)
{
    if (threads < 0)
        return mica__fail(x->ctx, MICA_ERR_INVALID, "a thread count must "
                          "be 0 (the default) or more, got %d",
                          (int)threads);
    x->threads = threads;
    return MICA_OK;
}

int32_t mica_exec_threads(const mica_exec_t *x)
{
    return x->threads;
}
