/*
 * core/manifest/tensors.c - the manifest's tensors by name: `inputs`,
 * `profiles` (checked for form and kept; their semantics come later),
 * `outputs` and `shape_outputs`, and the table of tensor definitions that
 * catches names defined twice or used without a definition.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

static const char *const input_keys[] = {"dtype", "shape", "shape_tensor",
                                         NULL};
static const char *const range_keys[] = {"min", "opt", "max", NULL};
static const char *const values_keys[] = {"values", NULL};

const mica__mf_def_t *mica__mf_lookup(const mica__mf_t *mf, const char *name)
{
    int32_t i;
    for (i = 0; i < mf->nb_defs; i++)
        if (!strcmp(mf->defs[i].name, name))
            return &mf->defs[i];
    return NULL;
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
    if (in->shape_tensor) {
        int32_t i;
        if (in->dtype != MICA_INT32 && in->dtype != MICA_INT64)
            return mica__mf_fail(mf, dtype, "%s: a shape tensor must be "
                                 "int32 or int64, not %s", what,
                                 mica_dtype_name(in->dtype));
        if (in->dims.nb_dims > 1)
            return mica__mf_fail(mf, shape, "%s: a shape tensor has rank 0 "
                                 "or 1, not %d", what,
                                 (int)in->dims.nb_dims);
        for (i = 0; i < in->dims.nb_dims; i++)
            if (in->dims.d[i] < 0)
                return mica__mf_fail(mf, shape, "%s: a shape tensor needs a "
                                     "static shape", what);
    }
    in->origin = mica__mf_origin(mf, key);
    if (!in->origin)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    st = mica__mf_define(mf, in->name, -1, key, what);
    if (st != MICA_OK)
        return st;
    st = mica_network_add_input(mf->m->net, in->name, in->dtype, &in->dims,
                                in->origin);
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

/* ---- profiles --------------------------------------------------------- */

static int is_dynamic(const mica__mf_input_t *in)
{
    int32_t i;
    if (in->shape_tensor)
        return 1;
    for (i = 0; i < in->dims.nb_dims; i++)
        if (in->dims.d[i] < 0)
            return 1;
    return 0;
}

/* Index of input `name`, -1 if none. */
static int32_t find_input(const mica_manifest_t *m, const char *name)
{
    int32_t i;
    for (i = 0; i < m->nb_inputs; i++)
        if (!strcmp(m->inputs[i].name, name))
            return i;
    return -1;
}

/* A list of exactly n integers >= 0 into out. */
static mica_status_t int_list(mica__mf_t *mf, yaml_node_t *node,
                              const char *what, int32_t n, int64_t *out)
{
    char d[64];
    int32_t i;
    if (!node || node->type != YAML_SEQUENCE_NODE)
        return mica__mf_fail(mf, node, "%s must be a list of %d integers, "
                             "got %s", what, (int)n,
                             mica__mf_describe(node, d, sizeof(d)));
    if (mica__mf_seq_len(node) != n)
        return mica__mf_fail(mf, node, "%s has %d values, %d expected", what,
                             (int)mica__mf_seq_len(node), (int)n);
    for (i = 0; i < n; i++) {
        yaml_node_t *it = mica__mf_seq_item(mf, node, i);
        if (!mica__mf_to_int(it, &out[i]) || out[i] < 0)
            return mica__mf_fail(mf, it, "%s: expected an integer >= 0, "
                                 "got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
    }
    return MICA_OK;
}

/* min, opt, max lists of n values each; min <= opt <= max. */
static mica_status_t triple(mica__mf_t *mf, yaml_node_t *node,
                            const char *what, int32_t n, int64_t *mn,
                            int64_t *op, int64_t *mx)
{
    static const char *const names[3] = {"min", "opt", "max"};
    int64_t *dst[3];
    char w[300];
    int32_t i, k;
    mica_status_t st;

    dst[0] = mn;
    dst[1] = op;
    dst[2] = mx;
    st = mica__mf_check_map(mf, node, range_keys, what);
    if (st != MICA_OK)
        return st;
    for (k = 0; k < 3; k++) {
        yaml_node_t *v = mica__mf_get(mf, node, names[k], NULL);
        if (!v)
            return mica__mf_fail(mf, node, "%s: missing key '%s'", what,
                                 names[k]);
        snprintf(w, sizeof(w), "%s: %s", what, names[k]);
        st = int_list(mf, v, w, n, dst[k]);
        if (st != MICA_OK)
            return st;
    }
    for (i = 0; i < n; i++)
        if (mn[i] > op[i] || op[i] > mx[i])
            return mica__mf_fail(mf, node, "%s: value %d needs min <= opt <= "
                                 "max, got %lld, %lld, %lld", what, (int)i,
                                 (long long)mn[i], (long long)op[i],
                                 (long long)mx[i]);
    return MICA_OK;
}

/* The range of one input within profile pi. */
static mica_status_t one_range(mica__mf_t *mf, int32_t pi, yaml_node_t *key,
                               yaml_node_t *val, mica__mf_range_t *r)
{
    mica_manifest_t *m = mf->m;
    const mica__mf_input_t *in = &m->inputs[r->input];
    char what[300];
    mica_status_t st;
    int32_t i;

    snprintf(what, sizeof(what), "profile %d: input '%s'", (int)pi, in->name);
    if (in->shape_tensor) {
        yaml_node_t *v;
        st = mica__mf_check_map(mf, val, values_keys, what);
        if (st != MICA_OK)
            return st;
        v = mica__mf_get(mf, val, "values", NULL);
        if (!v)
            return mica__mf_fail(mf, val, "%s: missing key 'values' (a shape "
                                 "tensor's range is given by its values)",
                                 what);
        r->nb_values = (int32_t)mica_dims_volume(&in->dims);
        r->vmin = calloc((size_t)r->nb_values + 1, sizeof(int64_t));
        r->vopt = calloc((size_t)r->nb_values + 1, sizeof(int64_t));
        r->vmax = calloc((size_t)r->nb_values + 1, sizeof(int64_t));
        if (!r->vmin || !r->vopt || !r->vmax)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        snprintf(what, sizeof(what), "profile %d: input '%s': values",
                 (int)pi, in->name);
        return triple(mf, v, what, r->nb_values, r->vmin, r->vopt, r->vmax);
    }
    (void)key;
    st = triple(mf, val, what, in->dims.nb_dims, r->min.d, r->opt.d,
                r->max.d);
    if (st != MICA_OK)
        return st;
    r->min.nb_dims = r->opt.nb_dims = r->max.nb_dims = in->dims.nb_dims;
    for (i = 0; i < in->dims.nb_dims; i++) {
        int64_t d = in->dims.d[i];
        if (d >= 0 && (r->min.d[i] != d || r->opt.d[i] != d
                       || r->max.d[i] != d))
            return mica__mf_fail(mf, val, "%s: dimension %d is fixed at "
                                 "%lld, its range must be too", what, (int)i,
                                 (long long)d);
    }
    return MICA_OK;
}

mica_status_t mica__mf_profiles(mica__mf_t *mf, yaml_node_t *node,
                                yaml_node_t *root)
{
    mica_manifest_t *m = mf->m;
    mica_status_t st;
    int32_t i, j, n;
    char what[64];

    if (!node || mica__mf_is_null(node)) {
        for (i = 0; i < m->nb_inputs; i++) {
            if (!is_dynamic(&m->inputs[i]))
                continue;
            return mica__mf_fail(mf, mica__mf_lookup(mf, m->inputs[i].name)
                                         ? mica__mf_lookup(mf,
                                               m->inputs[i].name)->node
                                         : root,
                                 "input '%s' %s: give its range under "
                                 "'profiles'", m->inputs[i].name,
                                 m->inputs[i].shape_tensor
                                     ? "is a shape tensor"
                                     : "has a runtime dimension (-1)");
        }
        return MICA_OK;
    }
    st = mica__mf_check_seq(mf, node, "profiles");
    if (st != MICA_OK)
        return st;
    n = mica__mf_seq_len(node);
    m->profiles = calloc((size_t)(n ? n : 1), sizeof(*m->profiles));
    if (!m->profiles)
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        yaml_node_t *pn = mica__mf_seq_item(mf, node, i);
        mica__mf_profile_t *p = &m->profiles[m->nb_profiles++];
        yaml_node_pair_t *q;
        snprintf(what, sizeof(what), "profile %d", (int)i);
        st = mica__mf_check_map(mf, pn, NULL, what);
        if (st != MICA_OK)
            return st;
        p->origin = mica__mf_origin(mf, pn);
        p->ranges = calloc((size_t)m->nb_inputs + 1, sizeof(*p->ranges));
        if (!p->origin || !p->ranges)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        for (q = pn->data.mapping.pairs.start; q < pn->data.mapping.pairs.top;
             q++) {
            yaml_node_t *k = mica__mf_node(mf, q->key);
            const char *name = mica__mf_scalar(k);
            int32_t idx = find_input(m, name);
            mica__mf_range_t *r;
            if (idx < 0)
                return mica__mf_fail(mf, k, "profile %d: '%s' is not a "
                                     "network input", (int)i, name);
            r = &p->ranges[p->nb_ranges++];
            r->input = idx;
            st = one_range(mf, i, k, mica__mf_node(mf, q->value), r);
            if (st != MICA_OK)
                return st;
        }
        for (j = 0; j < m->nb_inputs; j++) {
            int32_t k;
            if (!is_dynamic(&m->inputs[j]))
                continue;
            for (k = 0; k < p->nb_ranges; k++)
                if (p->ranges[k].input == j)
                    break;
            if (k == p->nb_ranges)
                return mica__mf_fail(mf, pn, "profile %d: no range for input "
                                     "'%s' (%s)", (int)i, m->inputs[j].name,
                                     m->inputs[j].shape_tensor
                                         ? "a shape tensor"
                                         : "it has a runtime dimension");
        }
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
        if (shapes)
            continue;
        origin = mica__mf_origin(mf, it);
        if (!origin)
            return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
        st = mica_network_mark_output(m->net, name, origin);
        free(origin);
        if (st != MICA_OK)
            return mica__mf_core_fail(mf, st, it, key);
    }
    return MICA_OK;
}
