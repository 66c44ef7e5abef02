/*
 * core/engine.c - what an engine tells about itself, and its end.
 */
#include <config.h>

#include "graph.h"

#include <stdlib.h>
#include <string.h>

void mica__layer_descs(const mica_engine_t *e, const mica__layer_t *l,
                       mica_tensor_desc_t *io)
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
        io[i].dims = e->tensors[t].dims;
    }
}

void mica__engine_free(mica_engine_t *e)
{
    int32_t i;
    if (!e)
        return;
    for (i = 0; e->layers && i < e->nb_layers; i++) {
        mica__layer_t *l = &e->layers[i];
        if (l->instance)
            l->instance->ops->destroy(l->instance);
        mica__fields_free(&l->fields);
        free(l->name);
        free(l->origin);
        free(l->inputs);
        free(l->outputs);
    }
    free(e->layers);
    for (i = 0; e->tensors && i < e->nb_tensors; i++) {
        free(e->tensors[i].name);
        free(e->tensors[i].shape_text);
    }
    free(e->tensors);
    free(e->input_index);
    free(e->output_index);
    mica__expr_builder_destroy(e->eb);
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
    if (index < 0 || index >= engine->nb_tensors)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "tensor index %d out of range (0..%d)", (int)index,
                          (int)engine->nb_tensors - 1);
    t = &engine->tensors[index];
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    info->dtype = t->dtype;
    info->name = t->name;
    info->dims = t->dims;
    info->shape = t->shape_text;
    info->kind = MICA_TENSOR_EXECUTION;
    info->is_input = t->is_input;
    info->is_output = t->is_output;
    info->producer = t->producer;
    info->offset = t->offset;
    info->bytes = t->bytes;
    return MICA_OK;
}

int32_t mica_engine_find_tensor(const mica_engine_t *engine, const char *name)
{
    int32_t i;
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
    if (index < 0 || index >= engine->nb_layers)
        return mica__fail(engine->ctx, MICA_ERR_INVALID,
                          "layer index %d out of range (0..%d)", (int)index,
                          (int)engine->nb_layers - 1);
    l = &engine->layers[index];
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    info->version = l->info.version;
    info->name = l->name;
    info->type = l->info.type;
    info->ns = l->info.ns;
    info->implementation = l->info.implementation;
    info->module_file = l->info.module_file;
    info->role = l->info.role;
    info->nb_inputs = l->nb_inputs;
    info->nb_outputs = l->nb_outputs;
    info->inputs = l->inputs;
    info->outputs = l->outputs;
    info->workspace = l->workspace;
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
    return engine->arena_bytes;
}
