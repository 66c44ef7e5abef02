/*
 * core/rewrite.c - networks rewritten for a second build: what the
 * float16 pass (core/precision.c) and the formats pass (core/formats.c)
 * share.  A rewritten network has the inputs, profiles, scales, outputs
 * and formats of the original, its layers copied in the built engine's
 * execution order with some tensors renamed, and Identity layers
 * inserted (casts, reorders), each with a note for inspect.
 */
#include <config.h>

#include "graph.h"

#include <stdlib.h>
#include <string.h>

mica_status_t mica__rewrite_frame(const mica_network_t *net,
                                  mica_network_t *out)
{
    int32_t i, k, index;
    mica_status_t st = MICA_OK;

    for (i = 0; i < net->nb_inputs && st == MICA_OK; i++) {
        const mica__net_input_t *in = &net->inputs[i];
        st = in->is_shape
                 ? mica_network_add_shape_input(out, in->name, &in->dims,
                                                in->origin)
                 : mica_network_add_input(out, in->name, in->dtype, &in->dims,
                                          in->origin);
    }
    for (k = 0; k < net->nb_profiles && st == MICA_OK; k++) {
        st = mica_network_add_profile(out, &index);
        for (i = 0; i < net->profiles[k].nb_ranges && st == MICA_OK; i++) {
            const mica__range_t *r = &net->profiles[k].ranges[i];
            if (!r->set)
                continue;
            st = r->nb_values
                     ? mica_network_set_profile_values(
                           out, index, net->inputs[i].name, r->nb_values,
                           r->vmin, r->vopt, r->vmax, r->origin)
                     : mica_network_set_profile_dims(out, index,
                                                     net->inputs[i].name,
                                                     &r->min, &r->opt, &r->max,
                                                     r->origin);
        }
    }
    for (i = 0; i < net->nb_scales && st == MICA_OK; i++)
        st = mica_network_set_scale(out, net->scale_names[i], net->scales[i],
                                    net->scale_origins[i]);
    for (i = 0; i < net->nb_formats && st == MICA_OK; i++)
        st = mica_network_set_format(out, net->format_names[i],
                                     net->formats[i], net->format_origins[i]);
    for (i = 0; i < net->nb_outputs && st == MICA_OK; i++)
        st = mica_network_mark_output(out, net->outputs[i],
                                      net->output_origins[i]);
    for (i = 0; i < net->nb_shape_outputs && st == MICA_OK; i++)
        st = mica_network_mark_shape_output(out, net->shape_outputs[i],
                                            net->shape_output_origins[i]);
    return st;
}

/* On out's last layer: its formats (n of them, NULL: none) and note. */
static mica_status_t finish(mica_network_t *out, const uint32_t *formats,
                            int32_t n, const char *note)
{
    mica__net_layer_t *l = &out->layers[out->nb_layers - 1];
    if (formats) {
        l->formats = calloc((size_t)n + 1, sizeof *l->formats);
        if (!l->formats)
            return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
        memcpy(l->formats, formats, sizeof *formats * (size_t)n);
    }
    if (note && !(l->note = mica__strdup(note)))
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    return MICA_OK;
}

mica_status_t mica__rewrite_layer(mica_network_t *out,
                                  const mica__net_layer_t *nl,
                                  const char *const *names,
                                  const mica_fields_t *fields,
                                  const uint32_t *formats, const char *note)
{
    mica_layer_spec_t spec;
    mica_status_t st;

    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.version = nl->version;
    spec.name = nl->name;
    spec.type = nl->type;
    spec.ns = nl->ns;
    spec.implementation = nl->implementation;
    spec.nb_inputs = nl->nb_inputs;
    spec.nb_outputs = nl->nb_outputs;
    spec.inputs = names;
    spec.outputs = names + nl->nb_inputs;
    spec.fields = fields ? fields : &nl->fields.view;
    spec.origin = nl->origin;
    spec.input_origins = (const char *const *)nl->input_origins;
    spec.loop = nl->loop;
    spec.conditional = nl->conditional;
    /* Its own weights are borrowed from the network it comes from;
     * fields given are the caller's, copied. */
    if ((st = fields ? mica_network_add_layer(out, &spec)
                     : mica__network_add_borrowed(out, &spec)) != MICA_OK)
        return st;
    out->layers[out->nb_layers - 1].precision = nl->precision;
    if (nl->fused && !(out->layers[out->nb_layers - 1].fused =
                           mica__strdup(nl->fused)))
        return mica__fail(out->ctx, MICA_ERR_NOMEM, "out of host memory");
    return finish(out, formats, nl->nb_inputs + nl->nb_outputs,
                  note ? note : nl->note);
}

mica_status_t mica__rewrite_identity(mica_network_t *out, const char *name,
                                     const char *from, const char *to,
                                     const char *dtype,
                                     const uint32_t *formats,
                                     const char *note)
{
    mica_field_t f;
    mica_fields_t fields = {1, &f};
    const char *ins[1] = {from}, *outs[1] = {to};
    mica_layer_spec_t spec;
    mica_status_t st;

    f.name = "dtype";
    f.type = MICA_FIELD_STRING;
    f.count = 1;
    f.data = &dtype;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = "Identity";
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = dtype ? &fields : NULL;
    if ((st = mica_network_add_layer(out, &spec)) != MICA_OK)
        return st;
    return finish(out, formats, 2, note);
}
