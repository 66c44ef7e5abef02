/*
 * core/manifest/profiles.c - the `profiles` list: for each optimization
 * profile, the min/opt/max of every input with runtime dimensions (and
 * the values of every shape-tensor input), checked against the inputs'
 * declarations and handed to the network.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

static const char *const range_keys[] = {"min", "opt", "max", NULL};
static const char *const values_keys[] = {"values", NULL};

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
