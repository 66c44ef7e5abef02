/*
 * core/manifest/layers.c - the `layers` list.  First pass: each layer's
 * keys, name, type, tensors (entered in the definition table) and params
 * as written.  Second pass, once the modules are loaded: its creator
 * looked up in the registry (so an unknown type names the layer's
 * position), its params checked by core/base/fields.c against the creator's
 * schema, then the layer added to the network with the origins of the
 * layer and of each input name.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"
#include "graph.h"

static const char *const layer_keys[] = {
    "name", "type", "version", "namespace", "implementation", "inputs",
    "outputs", "params", "precision", "loop", "conditional", NULL};

/* An optional scalar string under `key`; *out stays NULL if absent. */
static mica_status_t opt_string(mica__mf_t *mf, yaml_node_t *layer,
                                const char *key, const char *what,
                                const char **out)
{
    yaml_node_t *v = mica__mf_get(mf, layer, key, NULL);
    char w[512];
    *out = NULL;
    if (!v)
        return MICA_OK;
    snprintf(w, sizeof(w), "%s: %s", what, key);
    return mica__mf_string(mf, v, w, out);
}

/* A list of tensor names; `optional` allows ~ entries (NULL). */
static mica_status_t names(mica__mf_t *mf, yaml_node_t *v, const char *what,
                           const char *key, int optional, const char ***out,
                           char ***origins, int32_t *n)
{
    char w[512];
    int32_t i;
    mica_status_t st;

    *n = 0;
    if (!v)
        return MICA_OK;
    snprintf(w, sizeof(w), "%s: %s", what, key);
    st = mica__mf_check_seq(mf, v, w);
    if (st != MICA_OK)
        return st;
    *n = mica__mf_seq_len(v);
    *out = calloc((size_t)*n + 1, sizeof(char *));
    *origins = calloc((size_t)*n + 1, sizeof(char *));
    if (!*out || !*origins)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < *n; i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, v, i);
        (*origins)[i] = mica__mf_origin(mf, it);
        if (!(*origins)[i])
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        if (optional && mica__mf_is_null(it))
            continue;
        snprintf(w, sizeof(w), "%s: %s %d", what, key, (int)i);
        st = mica__mf_string(mf, it, w, &(*out)[i]);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

/* Free n origin strings and their array. */
static void free_origins(char **o, int32_t n)
{
    int32_t i;
    for (i = 0; o && i < n; i++)
        free(o[i]);
    free(o);
}

/*
 * Layer `index` of the list, first pass: check its keys, read its name,
 * type and version, its tensors (defining its outputs) and its params as
 * written, into mf->pending[index].
 */
static mica_status_t one_layer(mica__mf_t *mf, int32_t index,
                               yaml_node_t *node)
{
    mica_manifest_t *m = mf->m;
    mica__mf_layer_t *ml = &m->layers[index];
    mica__mf_pending_t *p = &mf->pending[index];
    yaml_node_t *name_node, *v, *outs_node;
    const char *name = NULL;
    char what[300], d[64];
    int64_t iv;
    int32_t i;
    mica_status_t st;

    p->node = node;
    snprintf(what, sizeof(what), "layers: item %d", (int)index);
    st = mica__mf_check_map(mf, node, layer_keys, what);
    if (st != MICA_OK)
        return st;
    name_node = mica__mf_get(mf, node, "name", NULL);
    if (!name_node)
        return mica__mf_fail(mf, node, "%s: missing key 'name'", what);
    st = mica__mf_string(mf, name_node, "layer name", &name);
    if (st != MICA_OK)
        return st;
    i = mica__index_get(&mf->layer_index, name);
    if (i >= 0)
        return mica__mf_fail(mf, name_node, "layer name '%s' is used "
                             "twice (first at %s)", name,
                             m->layers[i].origin + strlen(mf->path) + 1);
    ml->name = mica__strdup(name);
    ml->origin = mica__mf_origin(mf, node);
    if (!ml->name || !ml->origin ||
        mica__index_put(&mf->layer_index, ml->name, index) != 0)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    snprintf(what, sizeof(what), "layer '%s'", name);

    p->type_node = mica__mf_get(mf, node, "type", NULL);
    if (!p->type_node)
        return mica__mf_fail(mf, node, "%s: missing key 'type'", what);
    st = mica__mf_string(mf, p->type_node, "layer type", &p->type);
    if (st != MICA_OK)
        return st;
    v = mica__mf_get(mf, node, "version", NULL);
    if (v) {
        if (!mica__mf_to_int(v, &iv) || iv < 1 || iv > INT32_MAX)
            return mica__mf_fail(mf, v, "%s: version must be an integer "
                                 ">= 1, got %s", what,
                                 mica__mf_describe(v, d, sizeof(d)));
        p->version = (int32_t)iv;
    }
    if ((st = opt_string(mf, node, "namespace", what, &p->ns)) != MICA_OK
        || (st = opt_string(mf, node, "implementation", what, &p->impl))
               != MICA_OK
        || (st = opt_string(mf, node, "loop", what, &p->loop)) != MICA_OK
        || (st = opt_string(mf, node, "conditional", what, &p->cond))
               != MICA_OK)
        return st;
    v = mica__mf_get(mf, node, "precision", NULL);
    if (v) {
        char w[320];
        snprintf(w, sizeof(w), "%s: precision", what);
        st = mica__mf_dtype(mf, v, w, &ml->precision);
        if (st != MICA_OK)
            return st;
        ml->has_precision = 1;
    }

    st = names(mf, mica__mf_get(mf, node, "inputs", NULL), what, "inputs", 1,
               &p->ins, &p->in_origins, &p->nb_in);
    if (st != MICA_OK)
        return st;
    outs_node = mica__mf_get(mf, node, "outputs", NULL);
    st = names(mf, outs_node, what, "outputs", 0, &p->outs, &p->out_origins,
               &p->nb_out);
    if (st != MICA_OK)
        return st;
    for (i = 0; i < p->nb_out; i++) {
        st = mica__mf_define(mf, p->outs[i], index,
                             mica__mf_seq_item(mf, outs_node, i), what);
        if (st != MICA_OK)
            return st;
    }
    return mica__mf_params(mf, mica__mf_get(mf, node, "params", NULL), node,
                           name, &p->params);
}

/*
 * Layer `index`, second pass: its creator (an unknown type or version is
 * reported at its `type`), its params checked by that creator's schema,
 * then the layer added to the network.
 */
static mica_status_t resolve(mica__mf_t *mf, int32_t index)
{
    mica__mf_layer_t *ml = &mf->m->layers[index];
    mica__mf_pending_t *p = &mf->pending[index];
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};
    mica__fields_src_t src;
    mica__fields_t fields;
    mica_layer_spec_t spec;
    char what[300], msg[MICA_ERROR_MAX];
    mica_status_t st;

    snprintf(what, sizeof(what), "layer '%s'", ml->name);
    st = mica_registry_find(mf->ctx, p->ns, p->type, p->version, p->impl, 0,
                            &info);
    if (st != MICA_OK) {
        snprintf(msg, sizeof(msg), "%s", mica_context_error(mf->ctx));
        return mica__mf_fail_st(mf, st, p->type_node, "%s: %s", what,
                                msg[0] ? msg : "unknown layer type");
    }
    memset(&src, 0, sizeof(src));
    src.layer = ml->name;
    src.origin = ml->origin;
    src.params_origin = p->params.origin;
    src.manifest = 1;
    src.weights = mica__mf_params_weights;
    src.user = mf;
    src.borrow_weights = 1; /* the manifest's, which outlive its network */
    st = mica__fields_validate(&src, info.creator, p->params.given,
                               p->params.nb_given, &fields, msg, sizeof(msg));
    if (st != MICA_OK)
        return mica__fail(mf->ctx, st, "%s", msg);

    memset(&spec, 0, sizeof(spec));
    spec.struct_size = sizeof(spec);
    spec.version = p->version;
    spec.name = ml->name;
    spec.type = p->type;
    spec.ns = p->ns;
    spec.implementation = p->impl;
    spec.nb_inputs = p->nb_in;
    spec.nb_outputs = p->nb_out;
    spec.inputs = p->ins;
    spec.outputs = p->outs;
    spec.origin = ml->origin;
    spec.input_origins = (const char *const *)p->in_origins;
    spec.loop = p->loop;
    spec.conditional = p->cond;
    spec.precision = ml->has_precision ? mica_dtype_name(ml->precision) : NULL;
    st = mica__network_add_checked(mf->m->net, &spec, info.creator, &fields);
    if (st != MICA_OK)
        st = mica__mf_core_fail(mf, st, p->node, what);
    return st;
}

mica_status_t mica__mf_layers_resolve(mica__mf_t *mf)
{
    mica_status_t st;
    int32_t i;

    for (i = 0; i < mf->m->nb_layers; i++)
        if ((st = resolve(mf, i)) != MICA_OK)
            return st;
    return MICA_OK;
}

void mica__mf_layers_free(mica__mf_t *mf)
{
    int32_t i;

    for (i = 0; mf->pending && i < mf->m->nb_layers; i++) {
        mica__mf_pending_t *p = &mf->pending[i];
        free(p->ins);
        free(p->outs);
        free_origins(p->in_origins, p->nb_in);
        free_origins(p->out_origins, p->nb_out);
        mica__mf_params_free(&p->params);
    }
    free(mf->pending);
    mf->pending = NULL;
}

/* Every layer input names a defined tensor. */
static mica_status_t check_inputs(mica__mf_t *mf, yaml_node_t *node)
{
    int32_t i, j;
    for (i = 0; i < mica__mf_seq_len(node); i++) {
        yaml_node_t *ln = mica__mf_seq_item(mf, node, i);
        yaml_node_t *ins = mica__mf_get(mf, ln, "inputs", NULL);
        for (j = 0; j < mica__mf_seq_len(ins); j++) {
            yaml_node_t *it = mica__mf_seq_item(mf, ins, j);
            const char *s = mica__mf_scalar(it);
            if (!s || mica__mf_is_null(it) || mica__mf_lookup(mf, s))
                continue;
            return mica__mf_fail(mf, it, "layer '%s': input %d: tensor '%s' "
                                 "is not defined (no input or layer output "
                                 "has that name)", mf->m->layers[i].name,
                                 (int)j, s);
        }
    }
    return MICA_OK;
}

mica_status_t mica__mf_layers(mica__mf_t *mf, yaml_node_t *node)
{
    mica_manifest_t *m = mf->m;
    mica_status_t st;
    int32_t i, n;

    st = mica__mf_check_seq(mf, node, "layers");
    if (st != MICA_OK)
        return st;
    n = mica__mf_seq_len(node);
    m->layers = calloc((size_t)(n ? n : 1), sizeof(*m->layers));
    mf->pending = calloc((size_t)(n ? n : 1), sizeof(*mf->pending));
    if (!m->layers || !mf->pending)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        m->nb_layers = i + 1;
        st = one_layer(mf, i, mica__mf_seq_item(mf, node, i));
        if (st != MICA_OK)
            return st;
    }
    return check_inputs(mf, node);
}
