/*
 * core/engine.c - what an engine tells about itself, and its end.
 */
#include <config.h>

#include "graph.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void mica__layer_descs(const mica_engine_t *e, const mica__layer_t *l,
                       const mica_dims_t *dims, mica_tensor_desc_t *io)
{
    int32_t i, n = l->nb_inputs + l->nb_outputs;

    memset(io, 0, sizeof *io * (size_t)n);
    for (i = 0; i < n; i++) {
        int32_t t = i < l->nb_inputs ? l->inputs[i]
                                     : l->outputs[i - l->nb_inputs];
        io[i].format = MICA_FORMAT_LINEAR;
        io[i].scale = 1.0f;
        if (t < 0) {          /* omitted optional input */
            io[i].dtype = MICA_FLOAT32;
            io[i].dims.nb_dims = 1;
            io[i].dims.d[0] = 0;
            continue;
        }
        io[i].dtype = e->tensors[t].dtype;
        io[i].format = (mica_format_t)e->tensors[t].format;
        io[i].dims = dims[t];
        io[i].scale = e->tensors[t].scale;
    }
}

void mica__layer_dyn_descs(const mica_engine_t *e, const mica__layer_t *l,
                           int32_t k, mica_dyn_desc_t *dyn)
{
    const mica__eprofile_t *p = &e->profiles[k];
    mica_tensor_desc_t io[128];
    int32_t i, n = l->nb_inputs + l->nb_outputs;

    mica__layer_descs(e, l, p->topt, io);
    for (i = 0; i < n; i++) {
        int32_t t = i < l->nb_inputs ? l->inputs[i]
                                     : l->outputs[i - l->nb_inputs];
        dyn[i].desc = io[i];
        dyn[i].min = t >= 0 ? p->tmin[t] : io[i].dims;
        dyn[i].max = t >= 0 ? p->tmax[t] : io[i].dims;
    }
}

mica_status_t mica__engine_layer_fail(const mica_engine_t *e, int32_t step,
                                      const mica_error_t *err,
                                      const char *fallback)
{
    const mica__layer_t *l = &e->layers[step];
    char at[512];
    return mica__fail(e->ctx, MICA_ERR_INVALID, "%slayer '%s' (%s): %s",
                      mica__at(l->origin, at, sizeof at), l->name,
                      l->info.type,
                      err ? mica__error_msg(err, fallback) : fallback);
}

static void profile_free(mica_engine_t *e, mica__eprofile_t *p)
{
    int32_t i;
    for (i = 0; p->ranges && i < e->nb_inputs; i++)
        mica__range_free(&p->ranges[i]);
    free(p->ranges);
    free(p->tmin);
    free(p->topt);
    free(p->tmax);
    free(p->bytes);
    free(p->offset);
    free(p->workspace);
    free(p->workspace_offset);
}

void mica__engine_free(mica_engine_t *e)
{
    int32_t i;
    if (!e)
        return;
    mica__index_free(&e->tensor_names);
    free(e->input_pos);
    for (i = 0; e->layers && i < e->nb_layers; i++) {
        mica__layer_t *l = &e->layers[i];
        if (l->host_instance && l->host_instance != l->instance)
            l->host_instance->ops->destroy(l->host_instance);
        if (l->instance)
            l->instance->ops->destroy(l->instance);
        free(l->name);
        free(l->origin);
        free(l->inputs);
        free(l->outputs);
        free(l->input_kinds);
        free(l->device_error);
        free(l->why);
        free(l->fused);
    }
    free(e->layers);
    for (i = 0; e->tensors && i < e->nb_tensors; i++) {
        free(e->tensors[i].name);
        free(e->tensors[i].shape_text);
        free(e->tensors[i].values);
    }
    free(e->tensors);
    free(e->input_index);
    free(e->output_index);
    free(e->shape_output_index);
    for (i = 0; i < e->nb_symbols; i++) {
        free(e->symbols[i].name);
        free(e->symbols[i].meaning);
    }
    free(e->symbols);
    free(e->size_syms);
    for (i = 0; e->profiles && i < e->nb_profiles; i++)
        profile_free(e, &e->profiles[i]);
    free(e->profiles);
    mica__constructs_free(e);
    mica__expr_builder_destroy(e->eb);
    mica__pass_records_free(e->passes, e->nb_passes);
    mica__constants_free(e);
    pthread_mutex_destroy(&e->const_lock);
    /* Last: the layers destroyed above may have pointed into them. */
    if (e->bytes)
        mica__bytes_release(e->bytes, e->bytes_size, e->bytes_unmap);
    free(e);
}

void mica_engine_destroy(mica_engine_t *engine)
{
    mica__engine_free(engine);
}

uint32_t mica_engine_device(const mica_engine_t *engine)
{
    return engine->device;
}

int32_t mica_engine_nb_tensors(const mica_engine_t *engine)
{
    return engine->nb_tensors;
}

mica_status_t mica_engine_tensor(const mica_engine_t *engine, int32_t index,
                                 mica_tensor_info_t *info)
{
    const mica__tensor_t *t;
    mica_tensor_info_t full;
    if (index < 0 || index >= engine->nb_tensors)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "tensor index %d out of range (0..%d)", (int)index,
                          (int)engine->nb_tensors - 1);
    t = &engine->tensors[index];
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.dtype = t->dtype;
    full.name = t->name;
    full.dims = t->dims;
    full.shape = t->shape_text;
    /* A tensor read only for its dims (Shape's input) is an execution
     * tensor whose data is never needed: it gets no memory. */
    full.kind = t->need_e && t->need_s      ? MICA_TENSOR_BOTH
                : t->need_s                 ? MICA_TENSOR_SHAPE
                : t->need_e || t->need_dims ? MICA_TENSOR_EXECUTION
                                            : MICA_TENSOR_UNUSED;
    full.is_input = t->is_input;
    full.is_output = t->is_output;
    full.is_shape_output = t->is_shape_output;
    full.producer = t->producer;
    full.offset = engine->profiles ? engine->profiles[0].offset[index] : -1;
    full.bytes = engine->profiles ? engine->profiles[0].bytes[index] : 0;
    full.alias = t->alias;
    full.format = t->format;
    full.constant = t->const_host != NULL;
    mica__fill_out(info, &full, sizeof full,
                   offsetof(mica_tensor_info_t, is_shape_output));
    return MICA_OK;
}

void mica__engine_index(mica_engine_t *e)
{
    int32_t i;
    if ((e->input_pos = malloc(sizeof *e->input_pos *
                               ((size_t)e->nb_tensors + 1)))) {
        for (i = 0; i < e->nb_tensors; i++)
            e->input_pos[i] = -1;
        for (i = e->nb_inputs - 1; i >= 0; i--)
            e->input_pos[e->input_index[i]] = i;
    }
    if (mica__index_reserve(&e->tensor_names, (size_t)e->nb_tensors) != 0)
        return;
    for (i = e->nb_tensors - 1; i >= 0; i--)
        if (mica__index_put(&e->tensor_names, e->tensors[i].name, i) != 0) {
            mica__index_free(&e->tensor_names);
            return;
        }
}

int32_t mica_engine_find_tensor(const mica_engine_t *engine, const char *name)
{
    int32_t i;
    if (engine->tensor_names.cap)
        return mica__index_get(&engine->tensor_names, name);
    for (i = 0; i < engine->nb_tensors; i++)
        if (strcmp(engine->tensors[i].name, name) == 0)
            return i;
    return -1;
}

int32_t mica_engine_nb_layers(const mica_engine_t *engine)
{
    return engine->nb_layers;
}

mica_status_t mica_engine_layer(const mica_engine_t *engine, int32_t index,
                                mica_layer_info_t *info)
{
    const mica__layer_t *l;
    mica_layer_info_t full;
    if (index < 0 || index >= engine->nb_layers)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "layer index %d out of range (0..%d)", (int)index,
                          (int)engine->nb_layers - 1);
    l = &engine->layers[index];
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.version = l->info.version;
    full.name = l->name;
    full.type = l->info.type;
    full.ns = l->info.ns;
    full.implementation = l->info.implementation;
    full.module_file = l->info.module_file;
    full.role = l->info.role;
    full.nb_inputs = l->nb_inputs;
    full.nb_outputs = l->nb_outputs;
    full.inputs = l->inputs;
    full.outputs = l->outputs;
    full.workspace = engine->profiles ? engine->profiles[0].workspace[index] : 0;
    full.choice = l->why ? l->why : "";
    full.construct = l->construct;
    full.branch = l->branch;
    full.tactic = l->tactic;
    full.fused = l->fused;
    mica__fill_out(info, &full, sizeof full,
                   offsetof(mica_layer_info_t, choice));
    return MICA_OK;
}

int32_t mica_engine_nb_constructs(const mica_engine_t *engine)
{
    return engine->nb_constructs;
}

mica_status_t mica_engine_construct(const mica_engine_t *engine,
                                    int32_t index, mica_construct_info_t *info)
{
    const mica__construct_t *c;
    mica_construct_info_t full;
    if (index < 0 || index >= engine->nb_constructs)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "construct index %d out of range (the engine has "
                          "%d loops and conditionals)", (int)index,
                          (int)engine->nb_constructs);
    c = &engine->constructs[index];
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.kind = (uint32_t)c->kind;
    full.name = c->name;
    full.parent = c->parent;
    full.first_layer = c->begin;
    full.end_layer = c->end;
    full.branch = c->branch;
    mica__fill_out(info, &full, sizeof full, sizeof full);
    return MICA_OK;
}

int32_t mica_engine_nb_inputs(const mica_engine_t *engine)
{
    return engine->nb_inputs;
}

int32_t mica_engine_input(const mica_engine_t *engine, int32_t i)
{
    return i >= 0 && i < engine->nb_inputs ? engine->input_index[i] : -1;
}

int32_t mica_engine_nb_outputs(const mica_engine_t *engine)
{
    return engine->nb_outputs;
}

int32_t mica_engine_output(const mica_engine_t *engine, int32_t i)
{
    return i >= 0 && i < engine->nb_outputs ? engine->output_index[i] : -1;
}

int64_t mica_engine_arena_bytes(const mica_engine_t *engine)
{
    return mica_engine_profile_arena_bytes(engine, 0);
}

int32_t mica_engine_nb_profiles(const mica_engine_t *engine)
{
    return engine->nb_user_profiles;
}

int64_t mica_engine_profile_arena_bytes(const mica_engine_t *engine,
                                        int32_t profile)
{
    return profile >= 0 && profile < engine->nb_profiles
               ? engine->profiles[profile].arena_bytes : -1;
}

mica_status_t mica_engine_profile_input(const mica_engine_t *engine,
                                        int32_t profile, int32_t input,
                                        mica_dims_t *min, mica_dims_t *opt,
                                        mica_dims_t *max, int32_t *nb_values,
                                        const int32_t **min_values,
                                        const int32_t **opt_values,
                                        const int32_t **max_values)
{
    const mica__range_t *r;
    const mica__tensor_t *t;

    if (profile < 0 || profile >= engine->nb_user_profiles || input < 0 ||
        input >= engine->nb_inputs)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "profile %d, input %d: out of range (%d profiles, "
                          "%d inputs)", (int)profile, (int)input,
                          (int)engine->nb_user_profiles,
                          (int)engine->nb_inputs);
    r = &engine->profiles[profile].ranges[input];
    t = &engine->tensors[engine->input_index[input]];
    *min = *opt = *max = t->dims;
    *nb_values = 0;
    *min_values = *opt_values = *max_values = NULL;
    if (!r->set)
        return MICA_OK;
    *min = r->min;
    *opt = r->opt;
    *max = r->max;
    *nb_values = r->nb_values;
    if (r->nb_values) {
        *min_values = r->vmin;
        *opt_values = r->vopt;
        *max_values = r->vmax;
    }
    return MICA_OK;
}

int32_t mica_engine_nb_symbols(const mica_engine_t *engine)
{
    return engine->nb_symbols;
}

mica_status_t mica_engine_symbol(const mica_engine_t *engine, int32_t index,
                                 const char **name, const char **meaning)
{
    if (index < 0 || index >= engine->nb_symbols)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "symbol index %d out of range (0..%d)", (int)index,
                          (int)engine->nb_symbols - 1);
    *name = engine->symbols[index].name;
    *meaning = engine->symbols[index].meaning;
    return MICA_OK;
}

int32_t mica_engine_nb_passes(const mica_engine_t *engine)
{
    return engine->nb_passes;
}

mica_status_t mica_engine_pass(const mica_engine_t *engine, int32_t index,
                               mica_pass_info_t *info)
{
    mica_pass_info_t full;
    if (index < 0 || index >= engine->nb_passes)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "pass index %d out of range (the engine records "
                          "%d passes)", (int)index, (int)engine->nb_passes);
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.name = engine->passes[index].name;
    full.summary = engine->passes[index].summary;
    full.changed = engine->passes[index].changed;
    mica__fill_out(info, &full, sizeof full, sizeof full);
    return MICA_OK;
}
