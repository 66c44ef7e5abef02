/*
 * core/manifest/tensors.c - the manifest's tensors by name: `inputs`
 * (execution inputs and shape-tensor inputs), `profiles` (checked here,
 * then given to the network one range at a time), `outputs` and
 * `shape_outputs`, and the table of tensor definitions that catches names
 * defined twice or used without a definition.
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

/*
 * A list of exactly n integers into out.  Dimensions (values 0) are
 * >= 0; a shape tensor's values are any int32.
 */
static mica_status_t int_list(mica__mf_t *mf, yaml_node_t *node,
                              const char *what, int32_t n, int values,
                              int64_t *out)
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
        int good = mica__mf_to_int(it, &out[i]);
        if (values && !(good && out[i] >= INT32_MIN && out[i] <= INT32_MAX))
            return mica__mf_fail(mf, it, "%s: expected an int32 value, got "
                                 "%s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
        if (!values && !(good && out[i] >= 0))
            return mica__mf_fail(mf, it, "%s: expected an integer >= 0, "
                                 "got %s", what,
                                 mica__mf_describe(it, d, sizeof(d)));
    }
    return MICA_OK;
}

/*
 * min, opt, max lists of n values each with min <= opt <= max: the range
 * of input `name` in profile pi, `what` in messages about the lists.
 */
static mica_status_t triple(mica__mf_t *mf, yaml_node_t *node,
                            const char *what, int32_t pi, const char *name,
                            int32_t n, int values, int64_t *mn, int64_t *op,
                            int64_t *mx)
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
        st = int_list(mf, v, w, n, values, dst[k]);
        if (st != MICA_OK)
            return st;
    }
    for (i = 0; i < n; i++) {
        if (mn[i] <= op[i] && op[i] <= mx[i])
            continue;
        if (values)
            return mica__mf_fail(mf, node, "profile %d: value %d of input "
                                 "'%s' needs min <= opt <= max, got "
                                 "%lld/%lld/%lld", (int)pi, (int)i, name,
                                 (long long)mn[i], (long long)op[i],
                                 (long long)mx[i]);
        return mica__mf_fail(mf, node, "profile %d: input '%s' dimension %d "
                             "needs 0 <= min <= opt <= max, got "
                             "%lld/%lld/%lld", (int)pi, name, (int)i,
                             (long long)mn[i], (long long)op[i],
                             (long long)mx[i]);
    }
    return MICA_OK;
}

/* The range of one input within profile pi. */
static mica_status_t one_range(mica__mf_t *mf, int32_t pi, yaml_node_t *val,
                               mica__mf_range_t *r)
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
        return triple(mf, v, what, pi, in->name, r->nb_values, 1, r->vmin,
                      r->vopt, r->vmax);
    }
    st = triple(mf, val, what, pi, in->name, in->dims.nb_dims, 0, r->min.d,
                r->opt.d, r->max.d);
    if (st != MICA_OK)
        return st;
    r->min.nb_dims = r->opt.nb_dims = r->max.nb_dims = in->dims.nb_dims;
    for (i = 0; i < in->dims.nb_dims; i++) {
        int64_t d = in->dims.d[i];
        if (d >= 0 && (r->min.d[i] != d || r->opt.d[i] != d
                       || r->max.d[i] != d))
            return mica__mf_fail(mf, val, "profile %d: input '%s' dimension "
                                 "%d is fixed at %lld, but the profile gives "
                                 "%lld..%lld", (int)pi, in->name, (int)i,
                                 (long long)d, (long long)r->min.d[i],
                                 (long long)r->max.d[i]);
    }
    return MICA_OK;
}

/*
 * Give range r to the network's profile `index`; `key` (the input's name
 * in the profile) is the origin of the core's messages.  A static input's
 * range was checked to be its dimensions and is not passed on.
 */
static mica_status_t add_range(mica__mf_t *mf, int32_t index,
                               yaml_node_t *key, const mica__mf_range_t *r)
{
    const mica__mf_input_t *in = &mf->m->inputs[r->input];
    int32_t *v = NULL, i, n = r->nb_values;
    char *origin;
    char what[300];
    mica_status_t st;

    if (!is_dynamic(in))
        return MICA_OK;
    origin = mica__mf_origin(mf, key);
    if (in->shape_tensor)
        v = calloc(3 * (size_t)n + 1, sizeof(int32_t));
    if (!origin || (in->shape_tensor && !v)) {
        free(origin);
        return mica__fail(mf->ctx, MICA_ERR_NOMEM, "out of memory");
    }
    if (in->shape_tensor) {
        for (i = 0; i < n; i++) {
            v[i] = (int32_t)r->vmin[i];
            v[n + i] = (int32_t)r->vopt[i];
            v[2 * n + i] = (int32_t)r->vmax[i];
        }
        st = mica_network_set_profile_values(mf->m->net, index, in->name, n,
                                             v, v + n, v + 2 * n, origin);
    } else {
        st = mica_network_set_profile_dims(mf->m->net, index, in->name,
                                           &r->min, &r->opt, &r->max,
                                           origin);
    }
    free(v);
    free(origin);
    if (st != MICA_OK) {
        snprintf(what, sizeof(what), "profile %d: input '%s'", (int)index,
                 in->name);
        return mica__mf_core_fail(mf, st, key, what);
    }
    return MICA_OK;
}

/* Profile i at `pn`: its ranges, checked, then given to the network. */
static mica_status_t one_profile(mica__mf_t *mf, int32_t i, yaml_node_t *pn)
{
    mica_manifest_t *m = mf->m;
    mica__mf_profile_t *p = &m->profiles[m->nb_profiles++];
    yaml_node_pair_t *q;
    mica_status_t st;
    int32_t j, k, index = -1;
    char what[64];

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
        yaml_node_t *key = mica__mf_node(mf, q->key);
        const char *name = mica__mf_scalar(key);
        int32_t idx = find_input(m, name);
        mica__mf_range_t *r;
        if (idx < 0)
            return mica__mf_fail(mf, key, "profile %d: '%s' is not a "
                                 "network input", (int)i, name);
        r = &p->ranges[p->nb_ranges++];
        r->input = idx;
        st = one_range(mf, i, mica__mf_node(mf, q->value), r);
        if (st != MICA_OK)
            return st;
    }
    for (j = 0; j < m->nb_inputs; j++) {
        if (!is_dynamic(&m->inputs[j]))
            continue;
        for (k = 0; k < p->nb_ranges; k++)
            if (p->ranges[k].input == j)
                break;
        if (k == p->nb_ranges) {
            char dims[128];
            return mica__mf_fail(mf, pn, "profile %d does not give input "
                                 "'%s' (shape %s%s)", (int)i,
                                 m->inputs[j].name,
                                 mica__mf_dims_str(&m->inputs[j].dims, dims,
                                                   sizeof(dims)),
                                 m->inputs[j].shape_tensor
                                     ? ", a shape tensor" : "");
        }
    }
    st = mica_network_add_profile(m->net, &index);
    if (st != MICA_OK)
        return mica__mf_core_fail(mf, st, pn, what);
    k = 0;
    for (q = pn->data.mapping.pairs.start; q < pn->data.mapping.pairs.top;
         q++, k++) {
        st = add_range(mf, index, mica__mf_node(mf, q->key), &p->ranges[k]);
        if (st != MICA_OK)
            return st;
    }
    return MICA_OK;
}

mica_status_t mica__mf_profiles(mica__mf_t *mf, yaml_node_t *node,
                                yaml_node_t *root)
{
    mica_manifest_t *m = mf->m;
    mica_status_t st;
    int32_t i, n;

    if (!node || mica__mf_is_null(node)) {
        for (i = 0; i < m->nb_inputs; i++) {
            const mica__mf_def_t *def;
            if (!is_dynamic(&m->inputs[i]))
                continue;
            def = mica__mf_lookup(mf, m->inputs[i].name);
            return mica__mf_fail(mf, def ? def->node : root,
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
        st = one_profile(mf, i, mica__mf_seq_item(mf, node, i));
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
