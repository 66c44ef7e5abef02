/*
 * core/network.c - building a network through the generic C API.
 *
 * The core knows no layer type: a layer is a type name resolved in the
 * registry, tensor names in and out, and fields checked against the
 * creator's schema.  Graph-wide checks live in validate.c.
 */
#include <config.h>

#include "graph.h"
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mica_status_t mica_network_create(mica_context_t *ctx, mica_network_t **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    (*out)->ctx = ctx;
    return MICA_OK;
}

static void free_strv(char **v, int32_t n)
{
    int32_t i;
    if (!v)
        return;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void layer_free(mica__net_layer_t *l)
{
    free(l->name);
    free(l->type);
    free(l->ns);
    free(l->implementation);
    free(l->origin);
    free(l->loop);
    free(l->conditional);
    free_strv(l->inputs, l->nb_inputs);
    free_strv(l->input_origins, l->nb_inputs);
    free_strv(l->outputs, l->nb_outputs);
    mica__fields_free(&l->fields);
    while (l->nb_others > 0)
        mica__fields_free(&l->others[--l->nb_others].fields);
    free(l->others);
    free(l->host_impl);
    free(l->saved_why);
    free(l->note);
    free(l->fused);
    free(l->formats);
}

void mica_network_destroy(mica_network_t *net)
{
    int32_t i, j;
    if (!net)
        return;
    for (i = 0; i < net->nb_profiles; i++) {
        for (j = 0; j < net->profiles[i].nb_ranges; j++)
            mica__range_free(&net->profiles[i].ranges[j]);
        free(net->profiles[i].ranges);
    }
    free(net->profiles);
    free_strv(net->scale_names, net->nb_scales);
    free_strv(net->scale_origins, net->nb_scales);
    free(net->scales);
    mica__network_formats_free(net);
    free_strv(net->shape_outputs, net->nb_shape_outputs);
    free_strv(net->shape_output_origins, net->nb_shape_outputs);
    for (i = 0; i < net->nb_inputs; i++) {
        free(net->inputs[i].name);
        free(net->inputs[i].origin);
    }
    free(net->inputs);
    for (i = 0; i < net->nb_layers; i++)
        layer_free(&net->layers[i]);
    free(net->layers);
    mica__index_free(&net->layer_names);
    free_strv(net->outputs, net->nb_outputs);
    free_strv(net->output_origins, net->nb_outputs);
    for (i = 0; i < net->nb_blobs; i++)
        free(net->blobs[i]);
    free(net->blobs);
    free(net);
}

mica_status_t mica__network_keep(mica_network_t *net, void *blob)
{
    void **grown = realloc(net->blobs, sizeof *grown *
                           ((size_t)net->nb_blobs + 1));
    if (!grown) {
        free(blob);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    net->blobs = grown;
    net->blobs[net->nb_blobs++] = blob;
    return MICA_OK;
}

/* A copy of the n strings of v (entries may be NULL); NULL v gives NULLs. */
static char **dup_strv(const char *const *v, int32_t n, int *failed)
{
    char **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    int32_t i;
    if (!out) {
        *failed = 1;
        return NULL;
    }
    for (i = 0; v && i < n; i++)
        if (v[i] && !(out[i] = mica__strdup(v[i])))
            *failed = 1;
    return out;
}

/* The checks of a layer spec that do not need the registry. */
static mica_status_t check_spec(mica_network_t *net,
                                const mica_layer_spec_t *spec,
                                const char *where)
{
    mica_context_t *ctx = net->ctx;
    int32_t i;

    if (!mica__valid_name(spec->name))
        return mica__fail(ctx, MICA_ERR_INVALID, "%sa layer needs a name",
                          where);
    if (!mica__valid_name(spec->type))
        return mica__fail(ctx, MICA_ERR_INVALID, "%slayer '%s': no type",
                          where, spec->name);
    if (spec->nb_inputs < 0 || spec->nb_outputs < 0 ||
        (spec->nb_inputs && !spec->inputs) ||
        (spec->nb_outputs && !spec->outputs))
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "%slayer '%s': malformed inputs or outputs", where,
                          spec->name);
    i = mica__index_get(&net->layer_names, spec->name);
    if (i >= 0)
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "%slayer name '%s' is already used%s%s", where,
                          spec->name, net->layers[i].origin ? " at " : "",
                          net->layers[i].origin ? net->layers[i].origin : "");
    for (i = 0; i < spec->nb_outputs; i++)
        if (!mica__valid_name(spec->outputs[i]))
            return mica__fail(ctx, MICA_ERR_INVALID,
                              "%slayer '%s': output %d has no name", where,
                              spec->name, (int)i);
    return MICA_OK;
}

/* Copy the spec's names into l and append l to the network. */
static mica_status_t append(mica_network_t *net, const mica_layer_spec_t *spec,
                            mica__net_layer_t *l)
{
    mica__net_layer_t *grown;
    int failed = 0;

    l->version = spec->version;
    l->nb_inputs = spec->nb_inputs;
    l->nb_outputs = spec->nb_outputs;
    l->name = mica__strdup(spec->name);
    l->type = mica__strdup(spec->type);
    l->ns = mica__strdup(spec->ns ? spec->ns : "");
    l->implementation = mica__strdup(spec->implementation);
    l->origin = mica__strdup(spec->origin);
    l->loop = mica__strdup(spec->loop);
    l->conditional = mica__strdup(spec->conditional);
    if (spec->struct_size >= offsetof(mica_layer_spec_t, precision) +
                                 sizeof spec->precision && spec->precision) {
        mica_dtype_t dt;
        if (mica_dtype_parse(spec->precision, &dt) != MICA_OK ||
            (dt != MICA_FLOAT32 && dt != MICA_FLOAT16)) {
            char at[512];
            layer_free(l);
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%slayer '%s': precision '%s' is not float32 "
                              "or float16", mica__at(spec->origin, at, sizeof at),
                              spec->name, spec->precision);
        }
        l->precision = (int32_t)dt + 1;
    }
    l->inputs = dup_strv(spec->inputs, spec->nb_inputs, &failed);
    l->input_origins = dup_strv(spec->input_origins, spec->nb_inputs, &failed);
    l->outputs = dup_strv(spec->outputs, spec->nb_outputs, &failed);
    if (failed || !l->name || !l->type || !l->ns)
        goto nomem;
    if (net->nb_layers == net->cap_layers) {
        int32_t cap = net->cap_layers ? 2 * net->cap_layers : 16;
        grown = realloc(net->layers, sizeof *grown * (size_t)cap);
        if (!grown)
            goto nomem;
        net->layers = grown;
        net->cap_layers = cap;
    }
    if (mica__index_put(&net->layer_names, l->name, net->nb_layers) != 0)
        goto nomem;
    net->layers[net->nb_layers++] = *l;
    return MICA_OK;
nomem:
    layer_free(l);
    return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
}

/* Add a layer; `borrow`: its weights outlive the network (no copy). */
static mica_status_t add_layer(mica_network_t *net,
                               const mica_layer_spec_t *spec, int borrow)
{
    mica_context_t *ctx = net->ctx;
    mica__net_layer_t l;
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica__fields_src_t src;
    mica__given_t *given = NULL;
    char at[512], err[MICA_ERROR_MAX];
    const char *where;
    mica_status_t st;
    int32_t i, n;

    if (!spec || spec->struct_size < offsetof(mica_layer_spec_t, precision))
        return mica__fail(ctx, MICA_ERR_INVALID,
                          "mica_network_add_layer: spec.struct_size must be "
                          "sizeof(mica_layer_spec_t)");
    where = mica__at(spec->origin, at, sizeof at);
    if ((st = check_spec(net, spec, where)) != MICA_OK)
        return st;
    st = mica_registry_find(ctx, spec->ns, spec->type, spec->version,
                            spec->implementation, 0, &info);
    if (st != MICA_OK) {
        /* Keep the registry's message, put the position and layer first. */
        char msg[MICA_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", mica_context_error(ctx));
        return mica__fail(ctx, st, "%slayer '%s': %s", where, spec->name, msg);
    }
    memset(&l, 0, sizeof l);
    n = spec->fields ? spec->fields->nb_fields : 0;
    if (n > 0 && !(given = calloc((size_t)n, sizeof *given)))
        return mica__fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    for (i = 0; i < n; i++) {
        given[i].name = spec->fields->fields[i].name;
        given[i].typed = &spec->fields->fields[i];
    }
    memset(&src, 0, sizeof src);
    src.layer = spec->name;
    src.origin = spec->origin;
    src.borrow_weights = borrow;
    st = mica__fields_validate(&src, info.creator, given, n, &l.fields, err,
                               sizeof err);
    free(given);
    if (st != MICA_OK)
        return mica__fail(ctx, st, "%s", err);
    l.checked_with = info.creator;
    return append(net, spec, &l);
}

mica_status_t mica_network_add_layer(mica_network_t *net,
                                     const mica_layer_spec_t *spec)
{
    return add_layer(net, spec, 0);
}

mica_status_t mica__network_add_borrowed(mica_network_t *net,
                                         const mica_layer_spec_t *spec)
{
    return add_layer(net, spec, 1);
}

mica_status_t mica__network_add_checked(mica_network_t *net,
                                        const mica_layer_spec_t *spec,
                                        const mica_layer_creator_t *creator,
                                        mica__fields_t *fields)
{
    mica__net_layer_t l;
    char at[512];
    mica_status_t st;

    if ((st = check_spec(net, spec, mica__at(spec->origin, at, sizeof at))) !=
        MICA_OK) {
        mica__fields_free(fields);
        return st;
    }
    memset(&l, 0, sizeof l);
    l.fields = *fields;
    l.checked_with = creator;
    memset(fields, 0, sizeof *fields);
    return append(net, spec, &l);
}

mica_status_t mica__net_layer_params(mica_network_t *net,
                                     mica__net_layer_t *nl,
                                     const mica_layer_creator_t *c,
                                     const mica_fields_t **out)
{
    mica__fields_for_t *grown;
    mica__fields_src_t src;
    mica__given_t *given;
    char err[MICA_ERROR_MAX];
    mica_status_t st;
    int32_t i, n;

    *out = NULL;
    if (!nl->checked_with || mica__schema_same(c, nl->checked_with)) {
        *out = &nl->fields.view;
        return MICA_OK;
    }
    for (i = 0; i < nl->nb_others; i++)
        if (mica__schema_same(c, nl->others[i].creator)) {
            *out = &nl->others[i].fields.view;
            return MICA_OK;
        }
    /* A schema not met yet: check the params given, once. */
    grown = realloc(nl->others, sizeof *grown * (size_t)(nl->nb_others + 1));
    if (!grown)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    nl->others = grown;
    if (!(given = mica__fields_given(&nl->fields, &n)))
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    memset(&src, 0, sizeof src);
    src.layer = nl->name;
    src.origin = nl->origin;
    st = mica__fields_validate(&src, c, given, n,
                               &nl->others[nl->nb_others].fields, err,
                               sizeof err);
    free(given);
    if (st != MICA_OK)
        return mica__fail(net->ctx, st, "%s", err);
    nl->others[nl->nb_others].creator = c;
    *out = &nl->others[nl->nb_others++].fields.view;
    return MICA_OK;
}

mica_status_t mica__network_add_saved(mica_network_t *net,
                                     const mica__saved_layer_t *s,
                                     uint32_t state_flags)
{
    mica_layer_spec_t spec;
    mica__net_layer_t l;
    char at[512];
    mica_status_t st;

    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = s->name;
    spec.type = s->type;
    spec.ns = s->ns;
    spec.version = s->version;
    spec.implementation = s->implementation;
    spec.loop = s->loop && s->loop[0] ? s->loop : NULL;
    spec.conditional = s->conditional && s->conditional[0] ? s->conditional
                                                            : NULL;
    spec.nb_inputs = s->nb_inputs;
    spec.inputs = (const char *const *)s->input_names;
    spec.nb_outputs = s->nb_outputs;
    spec.outputs = (const char *const *)s->output_names;
    spec.origin = s->origin[0] ? s->origin : NULL;
    if ((st = check_spec(net, &spec, mica__at(spec.origin, at, sizeof at))) !=
        MICA_OK)
        return st;
    memset(&l, 0, sizeof l);
    l.from_state = 1;
    l.state_pinned = (s->flags & MICA__SAVED_LAYER_PINNED) != 0;
    l.state = (void *)s->state;
    l.state_size = s->state_size;
    l.state_flags = state_flags;
    if (s->host_impl[0]) {
        l.host_impl = mica__strdup(s->host_impl);
        l.host_state = (void *)s->host_state;
        l.host_state_size = s->host_state_size;
    }
    l.saved_why = mica__strdup(s->why);
    if ((s->host_impl[0] && !l.host_impl) || !l.saved_why) {
        layer_free(&l);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    return append(net, &spec, &l);
}
