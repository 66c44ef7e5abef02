/*
 * core/onnx/op_tensor.c - Constant, Identity, Dropout, Cast, CastLike,
 * Reshape, Transpose, Flatten, Squeeze, Unsqueeze, Concat, DepthToSpace,
 * SpaceToDepth and NonZero: constants, no layer at all, Identity casts,
 * Shuffle reshapes and transposes (by params, or by a shape tensor where
 * only run time knows the shape), Concatenation, and NonZero (a
 * data-dependent size), as TensorRT's parser maps them.  Axes must be
 * constants.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- constants and identities ------------------------------------------- */

static mica_status_t op_constant(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__AttributeProto *a;
    mica__ox_value_t *v = NULL;
    int64_t one = 1;
    if ((a = mica__ox_attr(n, "value")) && a->t) {
        mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
        mica_dtype_t dt;
        if (!d)
            return x->st;
        if ((x->st = mica__ox_tensor_data(x->model, &x->arena, a->t,
                                          "attribute 'value'", d)) != MICA_OK)
            return x->st;
        if (mica__ox_type_mica(mica__ox_weight_type(d->type), &dt) != 0)
            return OX_UNSUP(x, n, "constants of type %s",
                            mica__ox_type_name(d->type));
        v = mica__ox_const_data(x, OUT(0), mica__ox_weight_type(d->type), d);
        if (!v)
            return x->st;
    } else if ((a = mica__ox_attr(n, "value_float")) && a->has_f) {
        double f = a->f;
        v = mica__ox_const_f(x, OX_FLOAT, &f, 0, NULL);
    } else if ((a = mica__ox_attr(n, "value_floats"))) {
        double *f = mica__ox_alloc(x, sizeof *f * (a->n_floats + 1));
        int64_t len = (int64_t)a->n_floats;
        size_t k;
        for (k = 0; f && k < a->n_floats; k++)
            f[k] = a->floats[k];
        v = f ? mica__ox_const_f(x, OX_FLOAT, f, 1, &len) : NULL;
    } else if ((a = mica__ox_attr(n, "value_int")) && a->has_i) {
        v = mica__ox_const_i(x, OX_INT64, &a->i, 0, &one);
    } else if ((a = mica__ox_attr(n, "value_ints"))) {
        int64_t len = (int64_t)a->n_ints;
        v = mica__ox_const_i(x, OX_INT64, a->ints, 1, &len);
    } else if (mica__ox_attr(n, "sparse_value")) {
        return OX_UNSUP(x, n, "sparse constants");
    } else {
        return OX_UNSUP(x, n, "a constant without a value, value_float(s) "
                        "or value_int(s) (strings are not supported)");
    }
    if (v && OUT(0))
        v->name = mica__ox_strdup(x, OUT(0));
    if (v)
        mica__ox_set_out(x, n, 0, v);
    return x->st;
}

/* The output is the input itself: no layer (the graph's outputs get an
 * Identity of their own name where they need one). */
static mica_status_t op_identity(mica__ox_t *x, mica__ox_node_t *n)
{
    if (mica__ox_need(x, n, 1) == MICA_OK)
        mica__ox_set_out(x, n, 0, IN(0));
    return x->st;
}

static mica_status_t op_dropout(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *mode = IN(2);
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (mode && (!mode->cst || mica__ox_data_int(mode->cst, 0)))
        return OX_UNSUP(x, n, "training_mode: only inference (a constant "
                        "false) is supported");
    if (OUT(1)) {
        /* In inference nothing is dropped: the mask is all true. */
        mica__ox_value_t *in = IN(0), *mask;
        if (!mica__ox_dims_known(in))
            return OX_UNSUP(x, n, "the mask output of an input whose shape "
                            "is known only at run time");
        mask = mica__ox_named(x, mica__ox_const_splat(x, OX_BOOL, 1,
                                                      in->rank, in->d),
                              OUT(1));
        if (mask)
            mica__ox_set_out(x, n, 1, mask);
    }
    mica__ox_set_out(x, n, 0, IN(0));
    return x->st;
}

/* Cast's round_mode (opset 24, float8 e8m0): mica's casts round e8m0
 * up, ONNX's default. */
static int cast_mode_ok(mica__ox_t *x, mica__ox_node_t *n, int32_t to)
{
    const char *rm = mica__ox_attr_s(x, n, "round_mode", "up");
    if (to == OX_FLOAT8E8M0 && rm && strcmp(rm, "up")) {
        OX_UNSUP(x, n, "round_mode '%s' (mica's casts to float8e8m0 round "
                 "up)", rm);
        return 0;
    }
    return 1;
}

static mica_status_t cast_to(mica__ox_t *x, mica__ox_node_t *n, int32_t to)
{
    mica__ox_value_t *v = IN(0), *o;
    mica_dtype_t dt;
    if (mica__ox_type_mica(to, &dt) != 0)
        return OX_UNSUP(x, n, "casts to %s: mica has no such type",
                        mica__ox_type_name(to));
    if (!cast_mode_ok(x, n, to))
        return x->st;
    if (dt == v->dtype && !v->cst) {
        /* int64 and int32 are one mica type: a new ONNX type, no layer. */
        o = mica__ox_value_new(x, v->name);
        if (o) {
            *o = *v;
            o->type = to;
            mica__ox_set_out(x, n, 0, o);
        }
        return x->st;
    }
    mica__ox_set_out(x, n, 0, mica__ox_cast_sat(
        x, n, v, to, mica__ox_attr_i(n, "saturate", 1) != 0, OUT(0)));
    return x->st;
}

static mica_status_t op_cast(mica__ox_t *x, mica__ox_node_t *n)
{
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (!mica__ox_attr(n, "to"))
        return OX_BAD(x, n, "no 'to' attribute");
    return cast_to(x, n, (int32_t)mica__ox_attr_i(n, "to", 0));
}

static mica_status_t op_cast_like(mica__ox_t *x, mica__ox_node_t *n)
{
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    return cast_to(x, n, IN(1)->type);
}

/* ---- reshapes --------------------------------------------------------------- */

static mica_status_t op_reshape(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *shape;
    int allowzero = mica__ox_attr_i(n, "allowzero", 0) != 0;
    int64_t d[MICA_MAX_DIMS];
    int32_t i, r, zeros = 0, unknown_zero = 0;

    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (n->opset < 5) {
        const int64_t *s;
        int32_t k = mica__ox_attr_ints(n, "shape", &s);
        int64_t len = k;
        if (k < 0)
            return OX_BAD(x, n, "no 'shape' attribute");
        shape = mica__ox_const_i(x, OX_INT64, s, 1, &len);
    } else {
        if (mica__ox_need(x, n, 2) != MICA_OK)
            return x->st;
        shape = IN(1);
    }
    if (!shape || !mica__ox_vec_ok(x, n, shape, "the shape"))
        return x->st;
    r = (int32_t)shape->d[0];
    if (r > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "a shape of %d dimensions (at most %d)",
                        (int)r, MICA_MAX_DIMS);
    if (!shape->cst) {
        mica__ox_set_out(x, n, 0, mica__ox_reshape_t(x, n, v, shape,
                                                     !allowzero, OUT(0)));
        return x->st;
    }
    for (i = 0; i < r; i++) {
        d[i] = mica__ox_data_int(shape->cst, i);
        if (d[i] == 0 && !allowzero) {
            zeros++;
            if (i < v->rank && v->d[i] >= 0)
                d[i] = v->d[i];
            else
                unknown_zero = 1;
        }
    }
    if (unknown_zero) {
        /* A 0 copies a dimension only run time knows: Shuffle's own
         * placeholder does that. */
        mica__ox_value_t *o = mica__ox_reshape_t(x, n, v, shape, 1, OUT(0));
        for (i = 0; o && i < r; i++)
            o->d[i] = d[i] > 0 ? d[i] : -1;
        mica__ox_set_out(x, n, 0, o);
        return x->st;
    }
    (void)zeros;
    mica__ox_set_out(x, n, 0, mica__ox_reshape(x, n, v, d, r, OUT(0)));
    return x->st;
}

static mica_status_t op_transpose(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    const int64_t *perm;
    int64_t p[MICA_MAX_DIMS];
    int seen[MICA_MAX_DIMS] = {0};
    int32_t k, i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    k = mica__ox_attr_ints(n, "perm", &perm);
    if (k >= 0 && k != v->rank)
        return OX_BAD(x, n, "perm has %d entries for rank %d", (int)k,
                      (int)v->rank);
    for (i = 0; i < v->rank; i++) {
        p[i] = k >= 0 ? perm[i] : v->rank - 1 - i;
        if (p[i] < 0 || p[i] >= v->rank || seen[p[i]]++)
            return OX_BAD(x, n, "perm is not a permutation of 0..%d",
                          (int)v->rank - 1);
    }
    mica__ox_set_out(x, n, 0, mica__ox_transpose(x, n, v, p, OUT(0)));
    return x->st;
}

/* The product of dims [a, b) of v: a known count, or a 1-D tensor. */
static mica__ox_value_t *dims_product(mica__ox_t *x, mica__ox_node_t *n,
                                      mica__ox_value_t *v, int32_t a,
                                      int32_t b)
{
    int64_t p = 1, one = 1, zero = 0;
    int32_t i;
    for (i = a; i < b && p >= 0; i++)
        p = v->d[i] < 0 ? -1 : p * v->d[i];
    if (p >= 0)
        return mica__ox_const_i(x, OX_INT64, &p, 1, &one);
    return mica__ox_reduce(x, n, "prod",
                           mica__ox_shape_slice(x, n,
                                                mica__ox_shape_of(x, n, v),
                                                a, b),
                           &zero, 1, 1, NULL);
}

static mica_status_t op_flatten(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *parts[2];
    int64_t axis;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_attr_i(n, "axis", 1);
    if (axis < 0)
        axis += v->rank;
    if (axis < 0 || axis > v->rank)
        return OX_BAD(x, n, "axis %lld is out of range for rank %d",
                      (long long)mica__ox_attr_i(n, "axis", 1), (int)v->rank);
    parts[0] = dims_product(x, n, v, 0, (int32_t)axis);
    parts[1] = dims_product(x, n, v, (int32_t)axis, v->rank);
    if (x->st != MICA_OK)
        return x->st;
    if (parts[0]->cst || parts[1]->cst) {
        int64_t d[2];
        d[0] = parts[0]->cst ? mica__ox_data_int(parts[0]->cst, 0) : -1;
        d[1] = parts[1]->cst ? mica__ox_data_int(parts[1]->cst, 0) : -1;
        mica__ox_set_out(x, n, 0, mica__ox_reshape(x, n, v, d, 2, OUT(0)));
    } else {
        mica__ox_value_t *s = mica__ox_concat(x, n, parts, 2, 0, NULL);
        if (s)
            mica__ox_set_out(x, n, 0, mica__ox_reshape_t(x, n, v, s, 0,
                                                         OUT(0)));
    }
    return x->st;
}

/* Axes from the attribute (older opsets) or a constant input 1. */
static int32_t axes_of(mica__ox_t *x, mica__ox_node_t *n, int64_t since,
                       int64_t **out)
{
    const int64_t *a;
    int32_t k;
    *out = NULL;
    if (n->opset < since) {
        k = mica__ox_attr_ints(n, "axes", &a);
        if (k < 0)
            return -1;
        *out = mica__ox_alloc(x, 8 * (size_t)(k + 1));
        if (*out && k)
            memcpy(*out, a, 8 * (size_t)k);
        return k;
    }
    if (!IN(1))
        return -1;
    *out = mica__ox_const_ints(x, n, 1, "axes", &k);
    return *out ? k : -1;
}

static mica_status_t op_squeeze(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    int64_t *axes, all[MICA_MAX_DIMS];
    int32_t k, i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    k = axes_of(x, n, 13, &axes);
    if (x->st != MICA_OK)
        return x->st;
    if (k < 0) {
        /* A runtime dimension of an input whose profile keeps it above
         * 1 stays (the result's rank is fixed when the network is
         * built); one that may be 1 is refused. */
        for (i = k = 0; i < v->rank; i++) {
            int64_t lo, hi;
            if (v->d[i] < 0 && mica__ox_dim_range(x, v, i, &lo, &hi)
                && (lo > 1 || hi < 1))
                continue;
            if (v->d[i] < 0)
                return OX_UNSUP(x, n, "squeezing every axis of length 1 "
                                "when dimension %d is known only at run "
                                "time and its profile does not keep it "
                                "above 1 (give axes)", (int)i);
            if (v->d[i] == 1)
                all[k++] = i;
        }
        axes = all;
    }
    mica__ox_set_out(x, n, 0, mica__ox_squeeze(x, n, v, axes, k, OUT(0)));
    return x->st;
}

static mica_status_t op_unsqueeze(mica__ox_t *x, mica__ox_node_t *n)
{
    int64_t *axes;
    int32_t k;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    k = axes_of(x, n, 13, &axes);
    if (x->st != MICA_OK)
        return x->st;
    if (k < 0)
        return OX_BAD(x, n, "no axes");
    mica__ox_set_out(x, n, 0, mica__ox_unsqueeze(x, n, IN(0), axes, k,
                                                 OUT(0)));
    return x->st;
}

/* ---- concatenation and slicing ---------------------------------------------- */

static mica_status_t op_concat(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t **v;
    int64_t axis;
    int32_t i, nb = 0;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = mica__ox_alloc(x, sizeof *v * (size_t)n->nb_in);
    if (!v)
        return x->st;
    for (i = 0; i < n->nb_in; i++)
        if (n->in[i])
            v[nb++] = n->in[i];
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), v[0]->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis %lld is out of range for rank %d",
                      (long long)mica__ox_attr_i(n, "axis", 0),
                      (int)v[0]->rank);
    for (i = 1; i < nb; i++)
        if (v[i]->rank != v[0]->rank)
            return OX_BAD(x, n, "input %d has rank %d, input 0 rank %d",
                          (int)i, (int)v[i]->rank, (int)v[0]->rank);
    if (nb == 1)
        mica__ox_set_out(x, n, 0, mica__ox_identity(x, n, v[0], OUT(0)));
    else
        mica__ox_set_out(x, n, 0, mica__ox_concat(x, n, v, nb,
                                                  (int32_t)axis, OUT(0)));
    return x->st;
}

/*
 * DepthToSpace and SpaceToDepth: a reshape to 6-D, a transpose, a
 * reshape back (ONNX's definitions; DCR and CRD orders).  C, H and W
 * must be known; N may be a runtime dimension.
 */
static mica_status_t depth_space(mica__ox_t *x, mica__ox_node_t *n,
                                 int to_space)
{
    static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2},
                         crd[6] = {0, 1, 4, 2, 5, 3},
                         s2d[6] = {0, 3, 5, 1, 2, 4};
    mica__ox_value_t *v, *o;
    int64_t b = mica__ox_attr_i(n, "blocksize", 0), six[6], four[4], N, C,
            H, W;
    const char *mode = to_space ? mica__ox_attr_s(x, n, "mode", "DCR")
                                : "DCR";
    int is_crd = mode && !strcmp(mode, "CRD");
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->rank != 4 || b <= 0)
        return OX_BAD(x, n, "an input of rank %d and blocksize %lld (rank 4, "
                      "a positive blocksize)", (int)v->rank, (long long)b);
    if (mode && !is_crd && strcmp(mode, "DCR"))
        return OX_BAD(x, n, "mode '%s' (DCR or CRD)", mode);
    N = v->d[0] < 0 ? -1 : v->d[0];
    C = v->d[1];
    H = v->d[2];
    W = v->d[3];
    if (C < 0 || H < 0 || W < 0)
        return OX_UNSUP(x, n, "channels, height or width known only at run "
                        "time");
    if (to_space ? C % (b * b) != 0 : H % b != 0 || W % b != 0)
        return OX_BAD(x, n, "dimensions %lldx%lldx%lld do not divide by the "
                      "blocksize %lld", (long long)C, (long long)H,
                      (long long)W, (long long)b);
    six[0] = N;
    if (!to_space) {
        six[1] = C; six[2] = H / b; six[3] = b; six[4] = W / b; six[5] = b;
        four[1] = C * b * b; four[2] = H / b; four[3] = W / b;
    } else if (is_crd) {
        six[1] = C / (b * b); six[2] = b; six[3] = b; six[4] = H; six[5] = W;
        four[1] = C / (b * b); four[2] = H * b; four[3] = W * b;
    } else {
        six[1] = b; six[2] = b; six[3] = C / (b * b); six[4] = H; six[5] = W;
        four[1] = C / (b * b); four[2] = H * b; four[3] = W * b;
    }
    four[0] = N;
    o = mica__ox_reshape(x, n, v, six, 6, NULL);
    o = o ? mica__ox_transpose(x, n, o, !to_space ? s2d : is_crd ? crd : dcr,
                               NULL) : NULL;
    o = o ? mica__ox_reshape(x, n, o, four, 4, OUT(0)) : NULL;
    if (o) {
        o->type = v->type;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* NonZero: the layer's indices (int32 in mica, ONNX's int64) [rank, n],
 * n known once it has run; its count, a second output, goes unused. */
static mica_status_t op_nonzero(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *o;
    mica__ox_layer_t *l;
    int64_t d[2];

    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->rank < 0)
        return OX_UNSUP(x, n, "an input of unknown rank");
    d[0] = v->rank;
    d[1] = -1;
    l = mica__ox_layer(x, n, "NonZero", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    o = mica__ox_out(x, l, OUT(0), MICA_INT32, 2, d);
    mica__ox_out(x, l, NULL, MICA_INT32, 0, d);
    if (o) {
        o->type = OX_INT64;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

static mica_status_t op_depth_to_space(mica__ox_t *x, mica__ox_node_t *n)
{
    return depth_space(x, n, 1);
}

static mica_status_t op_space_to_depth(mica__ox_t *x, mica__ox_node_t *n)
{
    return depth_space(x, n, 0);
}

const mica__ox_op_t mica__ox_ops_tensor[] = {
    {"Constant", op_constant, "Constant (where a layer reads it)"},
    {"Identity", op_identity, "(none)"},
    {"Dropout", op_dropout, "(none: inference)"},
    {"Cast", op_cast, "Identity"},
    {"CastLike", op_cast_like, "Identity"},
    {"Reshape", op_reshape, "Shuffle"},
    {"Transpose", op_transpose, "Shuffle"},
    {"Flatten", op_flatten, "Shuffle"},
    {"Squeeze", op_squeeze, "Shuffle"},
    {"Unsqueeze", op_unsqueeze, "Shuffle"},
    {"Concat", op_concat, "Concatenation"},
    {"DepthToSpace", op_depth_to_space, "Shuffle"},
    {"SpaceToDepth", op_space_to_depth, "Shuffle"},
    {"NonZero", op_nonzero, "NonZero"},
    {NULL, NULL, NULL},
};
