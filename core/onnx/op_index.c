/*
 * core/onnx/op_index.c - TopK, ArgMax and ArgMin (TopK, as TensorRT's
 * parser maps them; select_last_index through the axis reversed), and
 * the masks made from indices: Hardmax (TopK's index against a Fill
 * linspace along the axis), Trilu (the Fill linspace j - i against k,
 * then Select) and EyeLike (the same against k, cast).
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- TopK, ArgMax, ArgMin --------------------------------------------------- */

static mica_status_t topk(mica__ox_t *x, mica__ox_node_t *n,
                          mica__ox_value_t *v, int64_t k, int64_t axis,
                          int largest, const char *values,
                          const char *indices, mica__ox_value_t **vo,
                          mica__ox_value_t **io)
{
    mica__ox_layer_t *l;
    int64_t od[MICA_MAX_DIMS];
    int32_t i;
    for (i = 0; i < v->rank; i++)
        od[i] = i == axis ? k : v->d[i];
    l = mica__ox_layer(x, n, "TopK", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_str(x, l, "op", largest ? "max" : "min");
    mica__ox_p_int(x, l, "k", k);
    mica__ox_p_int(x, l, "axis", axis);
    *vo = mica__ox_out(x, l, values, v->dtype, v->rank, od);
    *io = mica__ox_out(x, l, indices, MICA_INT32, v->rank, od);
    if (*vo)
        (*vo)->type = v->type;
    if (*io)
        (*io)->type = OX_INT64;
    return x->st;
}

static mica_status_t op_topk(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *vo = NULL, *io = NULL;
    int64_t k, axis;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (n->opset < 10) {
        k = mica__ox_attr_i(n, "k", -1);
    } else {
        int32_t cnt;
        int64_t *kv = mica__ox_const_ints(x, n, 1, "K", &cnt);
        if (!kv)
            return x->st;
        if (cnt != 1)
            return OX_BAD(x, n, "K must hold one value");
        k = kv[0];
    }
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), v->rank);
    if (axis < 0 || k < 0)
        return OX_BAD(x, n, "axis out of range or negative k");
    topk(x, n, v, k, axis, mica__ox_attr_i(n, "largest", 1) != 0, OUT(0),
         OUT(1), &vo, &io);
    mica__ox_set_out(x, n, 0, vo);
    mica__ox_set_out(x, n, 1, io);
    return x->st;
}

/* v reversed along `axis` (of known length): a Slice with stride -1. */
static mica__ox_value_t *reversed(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, int64_t axis)
{
    int64_t start[MICA_MAX_DIMS], stride[MICA_MAX_DIMS], r = v->rank;
    int32_t i;
    for (i = 0; i < r; i++) {
        start[i] = i == axis ? v->d[i] - 1 : 0;
        stride[i] = i == axis ? -1 : 1;
    }
    return mica__ox_slice(x, n, v, mica__ox_const_i(x, OX_INT64, start, 1, &r),
                          mica__ox_shape_of(x, n, v),
                          mica__ox_const_i(x, OX_INT64, stride, 1, &r),
                          "default", NULL, NULL);
}

/*
 * ArgMax, ArgMin: the indices of a TopK of 1 (the first of equal values,
 * as TensorRT's); select_last_index takes the TopK of the axis reversed,
 * its index i then being length - 1 - i.
 */
static mica_status_t arg(mica__ox_t *x, mica__ox_node_t *n, int largest)
{
    mica__ox_value_t *v, *vo = NULL, *io = NULL;
    int64_t axis;
    int keep = mica__ox_attr_i(n, "keepdims", 1) != 0;
    int last = mica__ox_attr_i(n, "select_last_index", 0) != 0;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    if (last && v->d[axis] < 0)
        return OX_UNSUP(x, n, "select_last_index over an axis whose length "
                        "is known only at run time");
    if (last && !(v = reversed(x, n, v, axis)))
        return x->st;
    if (topk(x, n, v, 1, axis, largest, NULL,
             keep && !last ? OUT(0) : NULL, &vo, &io) != MICA_OK)
        return x->st;
    if (last)
        io = mica__ox_ew(x, n, "sub",
                         mica__ox_scalar_like(x, io, (double)(v->d[axis] - 1)),
                         io, keep ? OUT(0) : NULL);
    if (!keep)
        io = mica__ox_squeeze(x, n, io, &axis, 1, OUT(0));
    mica__ox_set_out(x, n, 0, io);
    return x->st;
}

static mica_status_t op_argmax(mica__ox_t *x, mica__ox_node_t *n)
{
    return arg(x, n, 1);
}

static mica_status_t op_argmin(mica__ox_t *x, mica__ox_node_t *n)
{
    return arg(x, n, 0);
}


/* ---- masks from indices ---------------------------------------------- */

/* A Fill linspace int32 of `dims` (known) with steps `beta`: the index
 * arithmetic sum(beta[i] * index[i]). */
static mica__ox_value_t *iota(mica__ox_t *x, mica__ox_node_t *n,
                              int32_t rank, const int64_t *dims,
                              const double *beta)
{
    mica__ox_layer_t *l = mica__ox_layer(x, n, "Fill", NULL);
    mica__ox_value_t *o;
    mica__ox_p_ints(x, l, "shape", dims, rank);
    mica__ox_p_str(x, l, "op", "linspace");
    mica__ox_p_float(x, l, "alpha", 0);
    mica__ox_p_floats(x, l, "beta", beta, rank);
    mica__ox_p_str(x, l, "dtype", "int32");
    o = mica__ox_out(x, l, NULL, MICA_INT32, rank, dims);
    if (o)
        o->type = OX_INT32;
    return o;
}

/* Hardmax: 1 where the first largest value of the axis is, else 0. */
static mica_status_t op_hardmax(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *vo = NULL, *io = NULL, *it;
    int64_t axis, dims[MICA_MAX_DIMS];
    double beta[MICA_MAX_DIMS];
    int32_t i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", n->opset >= 13 ? -1 : 1),
                         v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    /* Before opset 13 the axes from `axis` on are one: the same for the
     * last axis only. */
    if (n->opset < 13 && axis != v->rank - 1)
        return OX_UNSUP(x, n, "axis %lld before opset 13 (Hardmax over the "
                        "flattened trailing axes): only the last axis",
                        (long long)axis);
    if (v->d[axis] < 0)
        return OX_UNSUP(x, n, "an axis whose length is known only at run "
                        "time");
    for (i = 0; i < v->rank; i++) {
        dims[i] = i == axis ? v->d[i] : 1;
        beta[i] = i == axis;
    }
    if (topk(x, n, v, 1, axis, 1, NULL, NULL, &vo, &io) != MICA_OK)
        return x->st;
    it = iota(x, n, v->rank, dims, beta);
    it = mica__ox_ew(x, n, "equal", it, io, NULL);
    it = mica__ox_cast(x, n, it, v->type, OUT(0));
    if (it)
        mica__ox_set_out(x, n, 0, it);
    return x->st;
}

/*
 * Trilu: x where column - row >= k (upper) or <= k (lower), else 0; k
 * (input 1, default 0) may be known at run time only.  The rows and
 * columns must be known.
 */
static mica_status_t op_trilu(mica__ox_t *x, mica__ox_node_t *n)
{
    static const int64_t lead[MICA_MAX_DIMS] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const double beta[2] = {-1, 1};
    static const int64_t k0 = 0;
    mica__ox_value_t *v, *k = IN(1), *keep, *zero, *o;
    mica__ox_layer_t *l;
    int upper = mica__ox_attr_i(n, "upper", 1) != 0;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->rank < 2)
        return OX_BAD(x, n, "an input of rank %d (at least 2)", (int)v->rank);
    if (v->d[v->rank - 2] < 0 || v->d[v->rank - 1] < 0)
        return OX_UNSUP(x, n, "rows or columns known only at run time");
    if (k && k->rank > 1)
        return OX_BAD(x, n, "k of rank %d (one value)", (int)k->rank);
    if (k && k->rank == 1)
        k = mica__ox_squeeze(x, n, k, lead, 1, NULL);
    if (!k)
        k = mica__ox_const_i(x, OX_INT64, &k0, 0, NULL);
    keep = iota(x, n, 2, &v->d[v->rank - 2], beta);
    keep = mica__ox_unary(x, n, "not", mica__ox_ew(x, n, upper ? "less"
                                                   : "greater", keep, k,
                                                   NULL), NULL);
    if (keep && v->rank > 2)
        keep = mica__ox_unsqueeze(x, n, keep, lead, v->rank - 2, NULL);
    zero = mica__ox_scalar_like(x, v, 0);
    if (zero)
        zero = mica__ox_unsqueeze(x, n, zero, lead, v->rank, NULL);
    if (!keep || !zero)
        return x->st;
    l = mica__ox_layer(x, n, "Select", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, keep));
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_in(x, l, mica__ox_tensor(x, n, zero));
    o = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, v->d);
    if (o) {
        o->type = v->type;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* EyeLike: 1 where column - row is k, else 0, in the input's shape (2-D,
 * known) and `dtype` (default the input's). */
static mica_status_t op_eye_like(mica__ox_t *x, mica__ox_node_t *n)
{
    static const double beta[2] = {-1, 1};
    mica__ox_value_t *v, *e;
    int64_t k = mica__ox_attr_i(n, "k", 0);
    int32_t type;
    mica_dtype_t dt;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    type = (int32_t)mica__ox_attr_i(n, "dtype", v->type);
    if (v->rank != 2)
        return OX_BAD(x, n, "an input of rank %d (2)", (int)v->rank);
    if (v->d[0] < 0 || v->d[1] < 0)
        return OX_UNSUP(x, n, "a shape known only at run time");
    if (mica__ox_type_mica(type, &dt) != 0)
        return OX_UNSUP(x, n, "dtype %s: mica has no such type",
                        mica__ox_type_name(type));
    e = iota(x, n, 2, v->d, beta);
    e = mica__ox_ew(x, n, "equal", e, mica__ox_const_i(x, OX_INT64, &k, 0,
                                                       NULL), NULL);
    e = mica__ox_cast(x, n, e, type, OUT(0));
    if (e)
        mica__ox_set_out(x, n, 0, e);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_index[] = {
    {"TopK", op_topk, "TopK"},
    {"ArgMax", op_argmax, "TopK (and Slice, ElementWise)"},
    {"ArgMin", op_argmin, "TopK (and Slice, ElementWise)"},
    {"Hardmax", op_hardmax, "TopK, Fill, ElementWise, Identity"},
    {"Trilu", op_trilu, "Fill, ElementWise, Unary, Select"},
    {"EyeLike", op_eye_like, "Fill, ElementWise, Identity"},
    {NULL, NULL, NULL},
};
