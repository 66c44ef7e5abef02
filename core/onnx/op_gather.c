/*
 * core/onnx/op_gather.c - Gather, GatherElements and GatherND (Gather
 * layers: default, element and nd modes; known values gathered here),
 * ScatterElements, Scatter and ScatterND (Scatter).
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- gather and scatter ------------------------------------------------------ */

static mica__ox_value_t *gather_layer(mica__ox_t *x, mica__ox_node_t *n,
                                      mica__ox_value_t *data,
                                      mica__ox_value_t *idx, const char *mode,
                                      int64_t axis, int64_t batch,
                                      int32_t rank, const int64_t *od)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *td = mica__ox_tensor(x, n, data), *ti;
    if (idx->dtype != MICA_INT32)
        idx = mica__ox_cast(x, n, idx, OX_INT32, NULL);
    ti = idx ? mica__ox_tensor(x, n, idx) : NULL;
    l = mica__ox_layer(x, n, "Gather", NULL);
    mica__ox_in(x, l, td);
    mica__ox_in(x, l, ti);
    if (strcmp(mode, "nd"))
        mica__ox_p_int(x, l, "axis", axis);
    if (strcmp(mode, "default"))
        mica__ox_p_str(x, l, "mode", mode);
    if (batch)
        mica__ox_p_int(x, l, "num_elementwise_dims", batch);
    o = mica__ox_out(x, l, OUT(0), data->dtype, rank, od);
    if (o)
        o->type = data->type;
    return o;
}

static mica_status_t op_gather(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *data, *idx;
    int64_t axis, od[MICA_MAX_DIMS];
    int32_t r = 0, i;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    data = IN(0);
    idx = IN(1);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), data->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d",
                      (int)data->rank);
    if (data->rank + idx->rank - 1 > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "more than %d dimensions", MICA_MAX_DIMS);
    for (i = 0; i < axis; i++)
        od[r++] = data->d[i];
    for (i = 0; i < idx->rank; i++)
        od[r++] = idx->d[i];
    for (i = (int32_t)axis + 1; i < data->rank; i++)
        od[r++] = data->d[i];
    /* Shape arithmetic: a known 1-D data and known indices. */
    if (data->cst && idx->cst && data->rank == 1
        && data->cst->count <= MICA__OX_FOLD_MAX
        && idx->cst->count <= MICA__OX_FOLD_MAX
        && (data->type == OX_INT64 || data->type == OX_INT32)) {
        int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(idx->cst->count + 1)),
                k, len = data->cst->count;
        for (k = 0; vals && k < idx->cst->count; k++) {
            int64_t j = mica__ox_data_int(idx->cst, k);
            j = j < 0 ? j + len : j;
            if (j < 0 || j >= len)
                return OX_BAD(x, n, "index %lld is out of range for %lld "
                              "values", (long long)mica__ox_data_int(
                                  idx->cst, k), (long long)len);
            vals[k] = mica__ox_data_int(data->cst, j);
        }
        if (vals) {
            mica__ox_value_t *o = mica__ox_const_i(x, data->type, vals, r,
                                                   od);
            if (o && OUT(0))
                o->name = mica__ox_strdup(x, OUT(0));
            mica__ox_set_out(x, n, 0, o);
        }
        return x->st;
    }
    {
        /* Known elements of a shape value, gathered by known indices: a
         * constant when every one is known, else kept beside the layer. */
        int64_t kv[MICA_MAX_DIMS], k, all = 1;
        int have = data->has_kv && data->rank == 1 && idx->cst
                   && idx->cst->count <= MICA_MAX_DIMS && data->d[0] >= 0;
        mica__ox_value_t *o;
        for (k = 0; have && k < idx->cst->count; k++) {
            int64_t j = mica__ox_data_int(idx->cst, k);
            j = j < 0 ? j + data->d[0] : j;
            kv[k] = j >= 0 && j < data->d[0] ? data->kv[j] : -1;
            all &= kv[k] >= 0;
        }
        if (have && all) {
            o = mica__ox_const_i(x, data->type, kv, r, od);
            if (o && OUT(0))
                o->name = mica__ox_strdup(x, OUT(0));
        } else {
            o = gather_layer(x, n, data, idx, "default", axis, 0, r, od);
            if (o && have) {
                o->has_kv = 1;
                memcpy(o->kv, kv, sizeof(int64_t) * (size_t)idx->cst->count);
            }
        }
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

static mica_status_t op_gather_elements(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *data, *idx;
    int64_t axis;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    data = IN(0);
    idx = IN(1);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), data->rank);
    if (axis < 0 || idx->rank != data->rank)
        return OX_BAD(x, n, "axis out of range, or indices of another rank");
    mica__ox_set_out(x, n, 0, gather_layer(x, n, data, idx, "element", axis,
                                           0, idx->rank, idx->d));
    return x->st;
}

static mica_status_t op_gather_nd(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *data, *idx;
    int64_t b = mica__ox_attr_i(n, "batch_dims", 0), kk, od[MICA_MAX_DIMS];
    int32_t r = 0, i;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    data = IN(0);
    idx = IN(1);
    if (b < 0 || b > 1)
        return OX_UNSUP(x, n, "batch_dims %lld (0 and 1 are supported)",
                        (long long)b);
    kk = idx->rank ? idx->d[idx->rank - 1] : -1;
    if (kk < 0)
        return OX_UNSUP(x, n, "the last dimension of the indices must be "
                        "known");
    for (i = 0; i < idx->rank - 1; i++)
        od[r++] = idx->d[i];
    for (i = (int32_t)(b + kk); i < data->rank; i++)
        od[r++] = data->d[i];
    mica__ox_set_out(x, n, 0, gather_layer(x, n, data, idx, "nd", 0, b, r,
                                           od));
    return x->st;
}

static mica_status_t scatter(mica__ox_t *x, mica__ox_node_t *n,
                             const char *mode)
{
    mica__ox_value_t *data, *idx, *upd, *o;
    mica__ox_layer_t *l;
    const char *red = mica__ox_attr_s(x, n, "reduction", "none");
    int64_t axis = 0;
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    if (strcmp(red, "none"))
        return OX_UNSUP(x, n, "reduction '%s' (only none)", red);
    data = IN(0);
    idx = IN(1);
    upd = IN(2);
    if (!strcmp(mode, "element")) {
        axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), data->rank);
        if (axis < 0)
            return OX_BAD(x, n, "axis out of range for rank %d",
                          (int)data->rank);
    }
    if (idx->dtype != MICA_INT32)
        idx = mica__ox_cast(x, n, idx, OX_INT32, NULL);
    if (!idx)
        return x->st;
    l = mica__ox_layer(x, n, "Scatter", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, data));
    mica__ox_in(x, l, mica__ox_tensor(x, n, idx));
    mica__ox_in(x, l, mica__ox_tensor(x, n, upd));
    mica__ox_p_str(x, l, "mode", mode);
    if (!strcmp(mode, "element"))
        mica__ox_p_int(x, l, "axis", axis);
    o = mica__ox_out(x, l, OUT(0), data->dtype, data->rank, data->d);
    if (o)
        o->type = data->type;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_scatter_elements(mica__ox_t *x, mica__ox_node_t *n)
{
    return scatter(x, n, "element");
}

static mica_status_t op_scatter_nd(mica__ox_t *x, mica__ox_node_t *n)
{
    return scatter(x, n, "nd");
}

/*
 * Compress: the slices (or, without an axis, the elements of the
 * flattened input) whose condition is true: Gather of NonZero(condition)
 * (a data-dependent length).  A condition shorter than the axis leaves
 * the slices past it out, as ONNX says.
 */
static mica_status_t op_compress(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__AttributeProto *has_axis = mica__ox_attr(n, "axis");
    mica__ox_value_t *data, *cond, *nz, *idx;
    mica__ox_layer_t *l;
    int64_t axis = 0, od[MICA_MAX_DIMS], d[2], flat = -1;
    int32_t i;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    data = IN(0);
    cond = IN(1);
    if (cond->rank != 1)
        return OX_BAD(x, n, "the condition must be 1-D");
    if (!has_axis)
        data = mica__ox_reshape(x, n, data, &flat, 1, NULL);
    else if ((axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0),
                                   data->rank)) < 0)
        return OX_BAD(x, n, "axis out of range for rank %d",
                      (int)data->rank);
    if (!data)
        return x->st;
    /* the indices of the true elements: NonZero's [1, K] as [K] */
    d[0] = 1;
    d[1] = -1;
    l = mica__ox_layer(x, n, "NonZero", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, cond));
    nz = mica__ox_out(x, l, NULL, MICA_INT32, 2, d);
    mica__ox_out(x, l, NULL, MICA_INT32, 0, d);
    if (!nz)
        return x->st;
    nz->type = OX_INT32;
    idx = mica__ox_reshape(x, n, nz, &flat, 1, NULL);
    if (!idx)
        return x->st;
    for (i = 0; i < data->rank; i++)
        od[i] = i == axis ? -1 : data->d[i];
    mica__ox_set_out(x, n, 0, gather_layer(x, n, data, idx, "default", axis,
                                           0, data->rank, od));
    return x->st;
}

const mica__ox_op_t mica__ox_ops_gather[] = {
    {"Gather", op_gather, "Gather"},
    {"Compress", op_compress, "NonZero, Shuffle, Gather"},
    {"GatherElements", op_gather_elements, "Gather"},
    {"GatherND", op_gather_nd, "Gather"},
    {"ScatterElements", op_scatter_elements, "Scatter"},
    {"Scatter", op_scatter_elements, "Scatter"},
    {"ScatterND", op_scatter_nd, "Scatter"},
    {NULL, NULL, NULL},
};
