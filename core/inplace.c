/*
 * core/inplace.c - outputs that take over an input's memory: in-place
 * layers (mica/layer.h's aliased_input), decided once every tensor's
 * lifetime is known, for the memory plan (core/plan.c), which then gives
 * the tensors of one chain one buffer.
 *
 * An output takes over its layer's input where the layer asks for it and
 * the input is read by no later step (its lifetime, stretched over the
 * loops it crosses, ends at this layer), is not a network input (the
 * caller may bind its own memory there) nor an output nor a shape-tensor
 * input nor a bound constant (the engine's weights, core/constants.c), reaches the layer once, is read as data, has the output's type
 * and memory format, and has not been taken over by another output
 * already.
 */
#include <config.h>

#include "graph.h"

#include <string.h>

/* Whether input i of layer s may be taken over by output o (above). */
static int may(const mica_engine_t *e, int32_t s, int32_t i, int32_t o)
{
    const mica__layer_t *l = &e->layers[s];
    const mica__tensor_t *in, *out = &e->tensors[l->outputs[o]];
    int32_t t = l->inputs[i], j;

    if (t < 0 || l->input_kinds[i] != MICA_INPUT_DATA)
        return 0;
    in = &e->tensors[t];
    for (j = 0; j < l->nb_inputs; j++)
        if (j != i && l->inputs[j] == t)
            return 0;
    for (j = 0; j < e->nb_tensors; j++)
        if (e->tensors[j].alias == t)
            return 0;
    return in->need_e && out->need_e && !in->is_input && !in->is_output &&
           !in->const_host &&
           !in->is_shape_input && !in->is_shape_output &&
           in->live_to == s && in->dtype == out->dtype &&
           in->format == out->format && out->alias < 0;
}

mica_status_t mica__inplace(mica_engine_t *e)
{
    int32_t s, o, i, t;

    for (t = 0; t < e->nb_tensors; t++)
        e->tensors[t].alias = -1;
    for (s = 0; s < e->nb_layers; s++) {
        const mica__layer_t *l = &e->layers[s];
        const mica_layer_ops_t *ops = l->instance->ops;
        if (!l->run_device || !MICA__HAS_OP(ops, aliased_input))
            continue;
        for (o = 0; o < l->nb_outputs; o++) {
            i = ops->aliased_input(l->instance, o);
            if (i < 0)
                continue;
            if (i >= l->nb_inputs)
                return mica__engine_layer_fail(e, s, NULL, "its output "
                                               "would take over an input "
                                               "it does not have");
            if (may(e, s, i, o))
                e->tensors[l->outputs[o]].alias = l->inputs[i];
        }
    }
    return MICA_OK;
}

int32_t mica__alias_root(const mica_engine_t *e, int32_t t)
{
    int32_t n = 0;
    while (e->tensors[t].alias >= 0 && n++ < e->nb_tensors)
        t = e->tensors[t].alias;
    return t;
}
