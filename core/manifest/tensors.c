/*
 * core/manifest/tensors.c - the manifest's tensors by name: `inputs`
 * (execution inputs and shape-tensor inputs), `outputs` and
 * `shape_outputs`, and the table of tensor definitions that catches names
 * defined twice or used without a definition (`profiles` are
 * profiles.c's).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

static const char *const input_keys[] = {"dtype", "shape", "shape_tensor",
                                         NULL};

const mica__mf_def_t *mica__mf_lookup(const mica__mf_t *mf, const char *name)
{
    int32_t i = mica__index_get(&mf->def_index, name);
    return i >= 0 ? &mf->defs[i] : NULL;
}

mica_status_t mica__mf_define(mica__mf_t *mf, const char *name,
                              int32_t layer, yaml_node_t *node,
                              const char *who)
{
    const mica__mf_def_t *old = mica__mf_lookup(mf, name);
    char lc[48];
    if (old) {
        mica__mf_linecol(old->node, lc, sizeof(lc));
        if (old->layer < 0)
            return mica__mf_fail(mf, node, "%s: tensor '%s' is already "
                                 "defined as a network input (at %s)", who,
                                 name, lc);
        return mica__mf_fail(mf, node, "%s: tensor '%s' is already defined "
                             "by layer '%s' (at %s)", who, name,
                             mf->m->layers[old->layer].name, lc);
    }
    if (mf->nb_defs == mf->cap_defs) {
        int32_t nc = mf->cap_defs ? mf->cap_defs * 2 : 32;
        mica__mf_def_t *p = realloc(mf->defs, (size_t)nc * sizeof(*p));
        if (!p)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        mf->defs = p;
        mf->cap_defs = nc;
    }
    if (mica__index_put(&mf->def_index, name, mf->nb_defs) != 0)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    mf->defs[mf->nb_defs].name = name;
    mf->defs[mf->nb_defs].layer = layer;
    mf->defs[mf->nb_defs].node = node;
    mf->nb_defs++;
    return MICA_OK;
}

/* ---- inputs ----------------------------------------------------------- */

static mica_status_t one_input(mica__mf_t *mf, yaml_node_t *key,
                               yaml_node_t *val, mica__mf_input_t *in)
{
    char what[256];
    yaml_node_t *dtype, *shape, *st_node;
    mica_status_t st;
    int b;
    char d[64];

    snprintf(what, sizeof(what), "input '%s'", in->name);
    st = mica__mf_check_map(mf, val, input_keys, what);
    if (st != MICA_OK)
        return st;
    dtype = mica__mf_get(mf, val, "dtype", NULL);
    shape = mica__mf_get(mf, val, "shape", NULL);
    st_node = mica__mf_get(mf, val, "shape_tensor", NULL);
    if (!dtype)
        return mica__mf_fail(mf, val, "%s: missing key 'dtype'", what);
    if (!shape)
        return mica__mf_fail(mf, val, "%s: missing key 'shape'", what);
    st = mica__mf_dtype(mf, dtype, what, &in->dtype);
    if (st == MICA_OK)
        st = mica__mf_dims(mf, shape, what, -1, &in->dims);
    if (st != MICA_OK)
        return st;
    if (st_node) {
        if (!mica__mf_to_bool(st_node, &b))
            return mica__mf_fail(mf, st_node, "%s: shape_tensor must be true "
                                 "or false, got %s", what,
                                 mica__mf_describe(st_node, d, sizeof(d)));
        in->shape_tensor = b;
    }
    /* A shape-tensor input: int32 at the network's boundary, 0-D or 1-D
     * with a length fixed at build time. */
    if (in->shape_tensor) {
        if (in->dtype != MICA_INT32)
            return mica__mf_fail(mf, dtype, "%s: a shape tensor input must "
                                 "be int32, not %s", what,
                                 mica_dtype_name(in->dtype));
        if (in->dims.nb_dims > 1)
            return mica__mf_fail(mf, shape, "%s: rank %d, but a shape "
                                 "tensor has rank 0 or 1", what,
                                 (int)in->dims.nb_dims);
        if (in->dims.nb_dims == 1 && in->dims.d[0] < 0)
            return mica__mf_fail(mf, mica__mf_seq_item(mf, shape, 0),
                                 "%s: a shape tensor's length must be "
                                 "fixed, not -1", what);
    }
    in->origin = mica__mf_origin(mf, key);
    if (!in->origin)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    st = mica__mf_define(mf, in->name, -1, key, what);
    if (st != MICA_OK)
        return st;
    if (in->shape_tensor)
        st = mica_network_add_shape_input(mf->m->net, in->name, &in->dims,
                                          in->origin);
    else
        st = mica_network_add_input(mf->m->net, in->name, in->dtype,
                                    &in->dims, in->origin);
    if (st != MICA_OK)
        return mica__mf_core_fail(mf, st, key, what);
    return MICA_OK;
}

mica_status_t mica__mf_inputs(mica__mf_t *mf, yaml_node_t *node)
{
    mica_manifest_t *m = mf->m;
    yaml_node_pair_t *p;
    mica_status_t st;
    int32_t n;

    st = mica__mf_check_map(mf, node, NULL, "inputs");
    if (st != MICA_OK)
        return st;
    n = (int32_t)(node->data.mapping.pairs.top
                  - node->data.mapping.pairs.start);
    m->inputs = calloc((size_t)(n ? n : 1), sizeof(*m->inputs));
    if (!m->inputs)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = mica__mf_node(mf, p->key);
        mica__mf_input_t *in = &m->inputs[m->nb_inputs++];
        in->name = mica__strdup(mica__mf_scalar(k));
        if (!in->name)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        st = one_input(mf, k, mica__mf_node(mf, p->value), in);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

/* ---- outputs ---------------------------------------------------------- */

mica_status_t mica__mf_outputs(mica__mf_t *mf, yaml_node_t *node, int shapes)
{
    mica_manifest_t *m = mf->m;
    const char *key = shapes ? "shape_outputs" : "outputs";
    char ***list = shapes ? &m->shape_outputs : &m->outputs;
    int32_t *count = shapes ? &m->nb_shape_outputs : &m->nb_outputs;
    mica_status_t st;
    int32_t i, j, n;
    char lc[48];

    st = mica__mf_check_seq(mf, node, key);
    if (st != MICA_OK)
        return st;
    n = mica__mf_seq_len(node);
    *list = calloc((size_t)n + 1, sizeof(char *));
    if (!*list)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, node, i);
        const char *name;
        char what[64];
        char *origin;
        snprintf(what, sizeof(what), "%s: item %d", key, (int)i);
        st = mica__mf_string(mf, it, what, &name);
        if (st != MICA_OK)
            return st;
        for (j = 0; j < i; j++) {
            yaml_node_t *o = mica__mf_seq_item(mf, node, j);
            if (!strcmp(mica__mf_scalar(o), name))
                return mica__mf_fail(mf, it, "%s: '%s' is listed twice "
                                     "(first at %s)", key, name,
                                     mica__mf_linecol(o, lc, sizeof(lc)));
        }
        if (!mica__mf_lookup(mf, name))
            return mica__mf_fail(mf, it, "%s: tensor '%s' is not defined (no "
                                 "input or layer output has that name)", key,
                                 name);
        (*list)[(*count)++] = mica__strdup(name);
        if (!(*list)[*count - 1])
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        origin = mica__mf_origin(mf, it);
        if (!origin)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        st = shapes ? mica_network_mark_shape_output(m->net, name, origin)
                    : mica_network_mark_output(m->net, name, origin);
        free(origin);
        if (st != MICA_OK)
            return mica__mf_core_fail(mf, st, it, key);
    }
    return MICA_OK;
}
