/*
 * core/onnx/op_tensor.c - ONNX operators that move data or compute shapes:
 * Constant, Identity, Dropout, Cast, Reshape, Transpose, Flatten, Squeeze,
 * Unsqueeze, Concat, Split, Slice, Pad, Expand, Tile, Shape, Size,
 * ConstantOfShape, Range, Gather*, Scatter*, NonZero.
 *
 * As in TensorRT's parser: Shuffle reshapes and transposes, Slice slices,
 * pads (modes fill, reflect, clamp), expands (stride 0) and tiles (mode
 * wrap); shapes known only at run time are shape tensors computed by
 * Shape, Slice, Concatenation and ElementWise layers (on the host, before
 * execution), and the same arithmetic is done here when they are known.
 * Axes and steps must be constants (TensorRT's parser asks the same).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

static mica_status_t need(mica__ox_t *x, mica__ox_node_t *n, int32_t k)
{
    int32_t i;
    if (n->nb_in < k)
        return OX_BAD(x, n, "%d input%s needed, %d given", (int)k,
                      k > 1 ? "s" : "", (int)n->nb_in);
    for (i = 0; i < k; i++)
        if (!n->in[i])
            return OX_BAD(x, n, "input %d is missing", (int)i);
    for (i = 0; i < n->nb_in; i++)
        if (n->in[i] && n->in[i]->rank < 0)
            return OX_UNSUP(x, n, "input %d ('%s') has an unknown rank",
                            (int)i, n->in[i]->name);
    return MICA_OK;
}

/* A 1-D value of length r from an ONNX shape/index input (int64). */
static int vec_ok(mica__ox_t *x, mica__ox_node_t *n, mica__ox_value_t *v,
                  const char *what)
{
    if (v->rank != 1 || v->d[0] < 0)
        return OX_UNSUP(x, n, "%s must be 1-D of a known length", what), 0;
    if (v->type != OX_INT64 && v->type != OX_INT32)
        return OX_BAD(x, n, "%s must be int64 or int32, not %s", what,
                      mica__ox_type_name(v->type)), 0;
    return 1;
}

/* ---- constants and identities ------------------------------------------- */

static mica_status_t op_constant(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__AttributeProto *a;
    mica__ox_value_t *v = NULL;
    int64_t one = 1;
    if ((a = mica__ox_attr(n, "value")) && a->t) {
        mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
        int32_t k;
        if (!d)
            return x->st;
        if ((x->st = mica__ox_tensor_data(x->model, &x->arena, a->t,
                                          "attribute 'value'", d)) != MICA_OK)
            return x->st;
        v = mica__ox_value_new(x, OUT(0));
        if (!v)
            return x->st;
        v->type = d->type;
        if (mica__ox_type_mica(d->type, &v->dtype) != 0) {
            if (d->type != OX_DOUBLE)
                return OX_UNSUP(x, n, "constants of type %s",
                                mica__ox_type_name(d->type));
            v->type = OX_FLOAT;
            v->dtype = MICA_FLOAT32;
        }
        v->rank = d->dims.nb_dims;
        for (k = 0; k < v->rank; k++)
            v->d[k] = d->dims.d[k];
        v->cst = d;
        v->cond = x->cond;
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
    if (need(x, n, 1) == MICA_OK)
        mica__ox_set_out(x, n, 0, IN(0));
    return x->st;
}

static mica_status_t op_dropout(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *mode = IN(2);
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    if (mode && (!mode->cst || mica__ox_data_int(mode->cst, 0)))
        return OX_UNSUP(x, n, "training_mode: only inference (a constant "
                        "false) is supported");
    if (OUT(1))
        return OX_UNSUP(x, n, "the mask output");
    mica__ox_set_out(x, n, 0, IN(0));
    return x->st;
}

static mica_status_t cast_to(mica__ox_t *x, mica__ox_node_t *n, int32_t to)
{
    mica__ox_value_t *v = IN(0), *o;
    mica_dtype_t dt;
    if (mica__ox_type_mica(to, &dt) != 0)
        return OX_UNSUP(x, n, "casts to %s: mica has no such type",
                        mica__ox_type_name(to));
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
    mica__ox_set_out(x, n, 0, mica__ox_cast(x, n, v, to, OUT(0)));
    return x->st;
}

static mica_status_t op_cast(mica__ox_t *x, mica__ox_node_t *n)
{
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    if (!mica__ox_attr(n, "to"))
        return OX_BAD(x, n, "no 'to' attribute");
    return cast_to(x, n, (int32_t)mica__ox_attr_i(n, "to", 0));
}

static mica_status_t op_cast_like(mica__ox_t *x, mica__ox_node_t *n)
{
    if (need(x, n, 2) != MICA_OK)
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

    if (need(x, n, 1) != MICA_OK)
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
        if (need(x, n, 2) != MICA_OK)
            return x->st;
        shape = IN(1);
    }
    if (!shape || !vec_ok(x, n, shape, "the shape"))
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
    if (need(x, n, 1) != MICA_OK)
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
    if (need(x, n, 1) != MICA_OK)
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
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    k = axes_of(x, n, 13, &axes);
    if (x->st != MICA_OK)
        return x->st;
    if (k < 0) {
        for (i = k = 0; i < v->rank; i++) {
            if (v->d[i] < 0)
                return OX_UNSUP(x, n, "squeezing every axis of length 1 "
                                "when dimension %d is known only at run "
                                "time (give axes)", (int)i);
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
    if (need(x, n, 1) != MICA_OK)
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
    if (need(x, n, 1) != MICA_OK)
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

/* Slice [start, start + len) of axis a of v, the rest whole. */
static mica__ox_value_t *slice_axis(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *v, int32_t a,
                                    int64_t start, int64_t len,
                                    const char *name)
{
    int64_t st[MICA_MAX_DIMS] = {0}, sz[MICA_MAX_DIMS];
    mica__ox_value_t *dyn[MICA_MAX_DIMS] = {0}, *size;
    int32_t i;
    for (i = 0; i < v->rank; i++) {
        sz[i] = i == a ? len : v->d[i];
        if (sz[i] < 0)
            dyn[i] = mica__ox_dim(x, n, v, i);
    }
    st[a] = start;
    size = mica__ox_vec(x, n, sz, dyn, v->rank);
    if (!size)
        return NULL;
    {
        int64_t r = v->rank;
        mica__ox_value_t *o = mica__ox_slice(x, n, v,
            mica__ox_const_i(x, OX_INT64, st, 1, &r), size, NULL, NULL,
            NULL, name);
        for (i = 0; o && i < v->rank; i++)
            o->d[i] = sz[i];
        return o;
    }
}

static mica_status_t op_split(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v;
    int64_t axis, len, *split = NULL, start = 0;
    int32_t k = -1, i;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    len = v->d[axis];
    if (len < 0)
        return OX_UNSUP(x, n, "splitting axis %lld, whose length is known "
                        "only at run time", (long long)axis);
    if (n->opset < 13) {
        const int64_t *s;
        k = mica__ox_attr_ints(n, "split", &s);
        if (k >= 0) {
            split = mica__ox_alloc(x, 8 * (size_t)(k + 1));
            if (split && k)
                memcpy(split, s, 8 * (size_t)k);
        }
    } else if (IN(1)) {
        split = mica__ox_const_ints(x, n, 1, "split", &k);
    }
    if (x->st != MICA_OK)
        return x->st;
    if (k >= 0 && k != n->nb_out)
        return OX_BAD(x, n, "split has %d entries for %d outputs", (int)k,
                      (int)n->nb_out);
    for (i = 0; i < n->nb_out && x->st == MICA_OK; i++) {
        int64_t part = split ? split[i]
                       : (len + n->nb_out - 1) / n->nb_out;
        if (!split && start + part > len)
            part = len - start;
        if (part < 0 || start + part > len)
            return OX_BAD(x, n, "the split sizes exceed the axis length "
                          "%lld", (long long)len);
        mica__ox_set_out(x, n, i, slice_axis(x, n, v, (int32_t)axis, start,
                                             part, OUT(i)));
        start += part;
    }
    if (split && start != len && x->st == MICA_OK)
        return OX_BAD(x, n, "the split sizes add up to %lld, the axis has "
                      "%lld", (long long)start, (long long)len);
    return x->st;
}

/* Clamp v (a 1-D value) to [lo, hi] elementwise (values or constants). */
static mica__ox_value_t *clamp(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v, mica__ox_value_t *lo,
                               mica__ox_value_t *hi)
{
    v = mica__ox_ew(x, n, "max", v, lo, NULL);
    return v ? mica__ox_ew(x, n, "min", v, hi, NULL) : NULL;
}

/*
 * Slice: starts and ends may be known only at run time (the ONNX rules
 * of negative values and clamping become shape arithmetic); axes and
 * steps must be constants.
 */
static mica_status_t op_slice(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *starts, *ends, *dims, *s, *e, *size, *start,
                     *stride;
    mica__ox_value_t *pa[MICA_MAX_DIMS] = {0}, *pb[MICA_MAX_DIMS] = {0};
    int64_t axes[MICA_MAX_DIMS], steps[MICA_MAX_DIMS], k, i, r;
    int64_t neg[MICA_MAX_DIMS], hi_s[MICA_MAX_DIMS], lo_e[MICA_MAX_DIMS],
            sgn[MICA_MAX_DIMS], mag[MICA_MAX_DIMS], zeros[MICA_MAX_DIMS] = {0};
    int64_t full_st[MICA_MAX_DIMS], full_sz[MICA_MAX_DIMS],
            full_sd[MICA_MAX_DIMS];
    int seen[MICA_MAX_DIMS] = {0};

    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    r = v->rank;
    if (n->opset < 10) {
        const int64_t *a;
        int32_t ka = mica__ox_attr_ints(n, "starts", &a);
        int64_t len = ka;
        if (ka < 0)
            return OX_BAD(x, n, "no 'starts' attribute");
        starts = mica__ox_const_i(x, OX_INT64, a, 1, &len);
        ka = mica__ox_attr_ints(n, "ends", &a);
        if (ka != len)
            return OX_BAD(x, n, "'ends' and 'starts' differ in length");
        ends = mica__ox_const_i(x, OX_INT64, a, 1, &len);
        ka = mica__ox_attr_ints(n, "axes", &a);
        k = len;
        for (i = 0; i < k; i++) {
            axes[i] = ka >= 0 ? (i < ka ? a[i] : 0) : i;
            steps[i] = 1;
        }
        if (ka >= 0 && ka != k)
            return OX_BAD(x, n, "'axes' and 'starts' differ in length");
    } else {
        int32_t ka;
        if (need(x, n, 3) != MICA_OK)
            return x->st;
        starts = IN(1);
        ends = IN(2);
        if (!vec_ok(x, n, starts, "starts") || !vec_ok(x, n, ends, "ends"))
            return x->st;
        k = starts->d[0];
        if (ends->d[0] != k)
            return OX_BAD(x, n, "ends and starts differ in length");
        if (IN(3)) {
            int64_t *a = mica__ox_const_ints(x, n, 3, "axes", &ka);
            if (!a)
                return x->st;
            if (ka != k)
                return OX_BAD(x, n, "axes and starts differ in length");
            memcpy(axes, a, 8 * (size_t)k);
        } else {
            for (i = 0; i < k; i++)
                axes[i] = i;
        }
        if (IN(4)) {
            int64_t *a = mica__ox_const_ints(x, n, 4, "steps", &ka);
            if (!a)
                return x->st;
            if (ka != k)
                return OX_BAD(x, n, "steps and starts differ in length");
            memcpy(steps, a, 8 * (size_t)k);
        } else {
            for (i = 0; i < k; i++)
                steps[i] = 1;
        }
    }
    if (!starts || !ends)
        return x->st;
    if (k > r)
        return OX_BAD(x, n, "%lld axes for rank %lld", (long long)k,
                      (long long)r);
    for (i = 0; i < k; i++) {
        int64_t a = mica__ox_axis(axes[i], (int32_t)r);
        if (a < 0 || seen[a]++)
            return OX_BAD(x, n, "axis %lld is out of range or repeated",
                          (long long)axes[i]);
        if (!steps[i])
            return OX_BAD(x, n, "a step of 0");
        axes[i] = a;
        neg[i] = steps[i] < 0;
        hi_s[i] = neg[i] ? -1 : 0;
        lo_e[i] = neg[i] ? -1 : 0;
        sgn[i] = neg[i] ? -1 : 1;
        mag[i] = neg[i] ? -steps[i] : steps[i];
    }
    /* dims of the sliced axes; the ONNX rules as arithmetic. */
    for (i = 0; i < k; i++)
        pa[i] = mica__ox_dim(x, n, v, (int32_t)axes[i]);
    if (x->st != MICA_OK)
        return x->st;
    dims = k ? mica__ox_concat(x, n, pa, (int32_t)k, 0, NULL) : NULL;
    if (k && dims) {
        mica__ox_value_t *zero = mica__ox_const_i(x, OX_INT64, zeros, 1, &k),
                         *hs, *le, *sg, *mg, *one;
        int64_t ones[MICA_MAX_DIMS];
        for (i = 0; i < k; i++)
            ones[i] = 1;
        hs = mica__ox_ew(x, n, "sum", dims,
                         mica__ox_const_i(x, OX_INT64, hi_s, 1, &k), NULL);
        le = mica__ox_const_i(x, OX_INT64, lo_e, 1, &k);
        sg = mica__ox_const_i(x, OX_INT64, sgn, 1, &k);
        mg = mica__ox_const_i(x, OX_INT64, mag, 1, &k);
        one = mica__ox_const_i(x, OX_INT64, ones, 1, &k);
        if (x->st != MICA_OK)
            return x->st;
        /* Values beyond int32 are clamped first (INT64_MAX means "to the
         * end"); dims are int32 in mica. */
        if (starts->cst || ends->cst) {
            int64_t lim = (int64_t)1 << 31, j;
            int64_t cs[MICA_MAX_DIMS], ce[MICA_MAX_DIMS];
            for (j = 0; j < k; j++) {
                if (starts->cst) {
                    cs[j] = mica__ox_data_int(starts->cst, j);
                    cs[j] = cs[j] > lim - 1 ? lim - 1 : cs[j] < -lim ? -lim
                                                                     : cs[j];
                }
                if (ends->cst) {
                    ce[j] = mica__ox_data_int(ends->cst, j);
                    ce[j] = ce[j] > lim - 1 ? lim - 1 : ce[j] < -lim ? -lim
                                                                     : ce[j];
                }
            }
            if (starts->cst)
                starts = mica__ox_const_i(x, OX_INT64, cs, 1, &k);
            if (ends->cst)
                ends = mica__ox_const_i(x, OX_INT64, ce, 1, &k);
        }
        /* x < 0 ? x + d : x, as x + d * (x < 0) with ints. */
        s = mica__ox_ew(x, n, "sum", starts,
                        mica__ox_ew(x, n, "prod", dims,
                                    mica__ox_cast(x, n,
                                        mica__ox_ew(x, n, "less", starts,
                                                    zero, NULL),
                                        OX_INT64, NULL), NULL), NULL);
        e = mica__ox_ew(x, n, "sum", ends,
                        mica__ox_ew(x, n, "prod", dims,
                                    mica__ox_cast(x, n,
                                        mica__ox_ew(x, n, "less", ends,
                                                    zero, NULL),
                                        OX_INT64, NULL), NULL), NULL);
        s = s ? clamp(x, n, s, zero, hs) : NULL;
        e = e ? clamp(x, n, e, le, hs) : NULL;
        /* size = max(floor_div((e - s) * sgn + mag - 1, mag), 0) */
        size = e && s ? mica__ox_ew(x, n, "sub", e, s, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "prod", size, sg, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "sum", size,
                                  mica__ox_ew(x, n, "sub", mg, one, NULL),
                                  NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "floor_div", size, mg, NULL) : NULL;
        size = size ? mica__ox_ew(x, n, "max", size, zero, NULL) : NULL;
        if (x->st != MICA_OK || !size)
            return x->st;
    } else {
        s = size = NULL;
    }
    /* The full vectors: sliced axes from above, the others whole. */
    for (i = 0; i < r; i++) {
        full_st[i] = 0;
        full_sd[i] = 1;
        full_sz[i] = v->d[i];
        pa[i] = pb[i] = NULL;
        if (v->d[i] < 0)
            pb[i] = mica__ox_dim(x, n, v, (int32_t)i);
    }
    for (i = 0; i < k; i++) {
        int64_t a = axes[i];
        full_sd[a] = steps[i];
        if (s->cst)
            full_st[a] = mica__ox_data_int(s->cst, i);
        else
            pa[a] = mica__ox_shape_slice(x, n, s, (int32_t)i, (int32_t)i + 1);
        pb[a] = NULL;
        if (size->cst)
            full_sz[a] = mica__ox_data_int(size->cst, i);
        else
            pb[a] = mica__ox_shape_slice(x, n, size, (int32_t)i,
                                         (int32_t)i + 1);
    }
    start = mica__ox_vec(x, n, full_st, pa, (int32_t)r);
    size = mica__ox_vec(x, n, full_sz, pb, (int32_t)r);
    stride = mica__ox_const_i(x, OX_INT64, full_sd, 1, &r);
    if (x->st != MICA_OK)
        return x->st;
    {
        mica__ox_value_t *o = mica__ox_slice(x, n, v, start, size, stride,
                                             NULL, NULL, OUT(0));
        for (i = 0; o && i < r; i++)
            o->d[i] = pb[i] ? -1 : full_sz[i];
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* Pad: a Slice from -pre over dims + pre + post (fill, reflect, clamp). */
static mica_status_t op_pad(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *pads, *fill = NULL, *pre, *post, *dims, *start,
                     *size;
    const char *mode, *smode;
    int64_t r;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    r = v->rank;
    mode = mica__ox_attr_s(x, n, "mode", "constant");
    smode = !strcmp(mode, "constant") ? "fill"
            : !strcmp(mode, "reflect") ? "reflect"
            : !strcmp(mode, "edge") ? "clamp" : NULL;
    if (!smode)
        return OX_UNSUP(x, n, "mode '%s' (constant, reflect and edge are)",
                        mode);
    if (n->opset < 11) {
        const int64_t *p;
        int32_t k = mica__ox_attr_ints(n, "pads", &p);
        int64_t len = k;
        double val = mica__ox_attr_f(n, "value", 0.0);
        if (k < 0)
            return OX_BAD(x, n, "no 'pads' attribute");
        pads = mica__ox_const_i(x, OX_INT64, p, 1, &len);
        if (val != 0)
            fill = mica__ox_scalar_like(x, v, val);
    } else {
        if (need(x, n, 2) != MICA_OK)
            return x->st;
        pads = IN(1);
        fill = IN(2);
        if (IN(3))
            return OX_UNSUP(x, n, "the axes input");
    }
    if (!pads || !vec_ok(x, n, pads, "pads"))
        return x->st;
    if (pads->d[0] != 2 * r)
        return OX_BAD(x, n, "pads has %lld values for rank %lld",
                      (long long)pads->d[0], (long long)r);
    if (fill && fill->rank > 1)
        return OX_BAD(x, n, "the constant value must be a scalar");
    if (fill && fill->rank == 1)
        fill = mica__ox_reshape(x, n, fill, NULL, 0, NULL);
    if (strcmp(smode, "fill"))
        fill = NULL;
    pre = mica__ox_shape_slice(x, n, pads, 0, (int32_t)r);
    post = mica__ox_shape_slice(x, n, pads, (int32_t)r, 2 * (int32_t)r);
    dims = mica__ox_shape_of(x, n, v);
    if (x->st != MICA_OK)
        return x->st;
    start = mica__ox_unary(x, n, "neg", pre, NULL);
    size = mica__ox_ew(x, n, "sum", dims,
                       mica__ox_ew(x, n, "sum", pre, post, NULL), NULL);
    if (x->st != MICA_OK)
        return x->st;
    mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v, start, size, NULL,
                                             smode, fill, OUT(0)));
    return x->st;
}

/* Expand: a Slice with stride 0 along the axes of length 1. */
static mica_status_t op_expand(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *shape, *dims, *size, *stride, *start;
    int64_t r, i, zeros[MICA_MAX_DIMS] = {0};
    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    shape = IN(1);
    if (!vec_ok(x, n, shape, "the shape"))
        return x->st;
    r = shape->d[0] > v->rank ? shape->d[0] : v->rank;
    if (r > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "more than %d dimensions", MICA_MAX_DIMS);
    if (v->rank < r) {
        int64_t axes[MICA_MAX_DIMS];
        for (i = 0; i < r - v->rank; i++)
            axes[i] = i;
        v = mica__ox_unsqueeze(x, n, v, axes, (int32_t)(r - v->rank), NULL);
    }
    if (shape->d[0] < r) {
        int64_t ones[MICA_MAX_DIMS], len = r - shape->d[0];
        mica__ox_value_t *parts[2];
        for (i = 0; i < len; i++)
            ones[i] = 1;
        parts[0] = mica__ox_const_i(x, OX_INT64, ones, 1, &len);
        parts[1] = shape;
        shape = mica__ox_concat(x, n, parts, 2, 0, NULL);
    }
    if (!v || !shape)
        return x->st;
    dims = mica__ox_shape_of(x, n, v);
    /* size = max(shape, dims) (1 broadcasts); stride = min(dims - 1, 1). */
    size = mica__ox_ew(x, n, "max", shape, dims, NULL);
    if (mica__ox_dims_known(v)) {
        int64_t sd[MICA_MAX_DIMS];
        for (i = 0; i < r; i++)
            sd[i] = v->d[i] == 1 ? 0 : 1;
        stride = mica__ox_const_i(x, OX_INT64, sd, 1, &r);
    } else {
        int64_t ones[MICA_MAX_DIMS];
        mica__ox_value_t *one;
        for (i = 0; i < r; i++)
            ones[i] = 1;
        one = mica__ox_const_i(x, OX_INT64, ones, 1, &r);
        stride = mica__ox_ew(x, n, "min",
                             mica__ox_ew(x, n, "sub", dims, one, NULL), one,
                             NULL);
    }
    start = mica__ox_const_i(x, OX_INT64, zeros, 1, &r);
    if (x->st != MICA_OK)
        return x->st;
    mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v, start, size, stride,
                                             NULL, NULL, OUT(0)));
    return x->st;
}

/* Tile: a Slice in mode wrap over dims * repeats. */
static mica_status_t op_tile(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *reps, *size;
    int64_t r, zeros[MICA_MAX_DIMS] = {0};
    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    reps = IN(1);
    if (!vec_ok(x, n, reps, "repeats"))
        return x->st;
    r = v->rank;
    if (reps->d[0] != r)
        return OX_BAD(x, n, "repeats has %lld values for rank %lld",
                      (long long)reps->d[0], (long long)r);
    size = mica__ox_ew(x, n, "prod", mica__ox_shape_of(x, n, v), reps, NULL);
    if (size)
        mica__ox_set_out(x, n, 0, mica__ox_slice(x, n, v,
            mica__ox_const_i(x, OX_INT64, zeros, 1, &r), size, NULL, "wrap",
            NULL, OUT(0)));
    return x->st;
}

/* ---- shapes ---------------------------------------------------------------- */

static mica_status_t op_shape(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *s;
    int64_t a, b;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    a = mica__ox_attr_i(n, "start", 0);
    b = mica__ox_attr_i(n, "end", v->rank);
    a = a < 0 ? a + v->rank : a;
    b = b < 0 ? b + v->rank : b;
    a = a < 0 ? 0 : a > v->rank ? v->rank : a;
    b = b < 0 ? 0 : b > v->rank ? v->rank : b;
    s = mica__ox_shape_of(x, n, v);
    if (s && (a != 0 || b != v->rank))
        s = mica__ox_shape_slice(x, n, s, (int32_t)a,
                                 (int32_t)(b > a ? b : a));
    if (s && s->cst && OUT(0))
        s->name = mica__ox_strdup(x, OUT(0));
    if (s)
        mica__ox_set_out(x, n, 0, s);
    return x->st;
}

static mica_status_t op_size(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *s;
    int64_t zero = 0, vol;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    vol = mica__ox_volume(v);
    if (vol >= 0) {
        s = mica__ox_const_i(x, OX_INT64, &vol, 0, NULL);
        if (s && OUT(0))
            s->name = mica__ox_strdup(x, OUT(0));
    } else {
        s = mica__ox_reduce(x, n, "prod", mica__ox_shape_of(x, n, v), &zero,
                            1, 0, OUT(0));
    }
    if (s)
        mica__ox_set_out(x, n, 0, s);
    return x->st;
}

/* ConstantOfShape: values of a small known shape, else a Fill. */
static mica_status_t op_constant_of_shape(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *shape, *o;
    const Onnx__AttributeProto *a = mica__ox_attr(n, "value");
    mica__ox_data_t d;
    int32_t type = OX_FLOAT;
    double val = 0;
    int64_t r, i;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    shape = IN(0);
    if (!vec_ok(x, n, shape, "the shape"))
        return x->st;
    if (a && a->t) {
        if ((x->st = mica__ox_tensor_data(x->model, &x->arena, a->t,
                                          "attribute 'value'", &d))
            != MICA_OK)
            return x->st;
        if (d.count != 1)
            return OX_BAD(x, n, "'value' must hold one element");
        type = d.type;
        val = mica__ox_data_f(&d, 0);
    }
    r = shape->d[0];
    if (r > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "more than %d dimensions", MICA_MAX_DIMS);
    if (shape->cst) {
        int64_t dims[MICA_MAX_DIMS], vol = 1;
        for (i = 0; i < r; i++) {
            dims[i] = mica__ox_data_int(shape->cst, i);
            if (dims[i] < 0)
                return OX_BAD(x, n, "dimension %lld is %lld", (long long)i,
                              (long long)dims[i]);
            vol *= dims[i];
        }
        if (vol <= 65536) {
            if (type == OX_FLOAT || type == OX_FLOAT16 || type == OX_DOUBLE
                || type == OX_BFLOAT16) {
                double *vals = mica__ox_alloc(x, 8 * (size_t)(vol + 1));
                for (i = 0; vals && i < vol; i++)
                    vals[i] = val;
                o = vals ? mica__ox_const_f(x, type == OX_DOUBLE ? OX_FLOAT
                                            : type, vals, (int32_t)r, dims)
                         : NULL;
            } else {
                int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(vol + 1));
                for (i = 0; vals && i < vol; i++)
                    vals[i] = (int64_t)val;
                o = vals ? mica__ox_const_i(x, type, vals, (int32_t)r, dims)
                         : NULL;
            }
            if (o && OUT(0))
                o->name = mica__ox_strdup(x, OUT(0));
            if (o)
                mica__ox_set_out(x, n, 0, o);
            return x->st;
        }
    }
    {
        /* Fill linspace with alpha = value and steps of 0. */
        mica__ox_layer_t *l;
        double beta[MICA_MAX_DIMS] = {0};
        int fl = type == OX_FLOAT || type == OX_FLOAT16;
        const char *t = shape->cst ? NULL : mica__ox_tensor(x, n, shape);
        if (r == 0)
            return OX_UNSUP(x, n, "a 0-D result known only at run time");
        l = mica__ox_layer(x, n, "Fill", NULL);
        if (t)
            mica__ox_in(x, l, t);
        else {
            int64_t dims[MICA_MAX_DIMS];
            for (i = 0; i < r; i++)
                dims[i] = mica__ox_data_int(shape->cst, i);
            mica__ox_p_ints(x, l, "shape", dims, (int32_t)r);
        }
        mica__ox_p_str(x, l, "op", "linspace");
        mica__ox_p_float(x, l, "alpha", val);
        mica__ox_p_floats(x, l, "beta", beta, (int32_t)r);
        mica__ox_p_str(x, l, "dtype", fl ? (type == OX_FLOAT ? "float32"
                                                             : "float16")
                                         : "int32");
        o = mica__ox_out(x, l, fl || type == OX_INT32 || type == OX_INT64
                         ? OUT(0) : NULL,
                         fl ? (type == OX_FLOAT ? MICA_FLOAT32 : MICA_FLOAT16)
                            : MICA_INT32, (int32_t)r, NULL);
        for (i = 0; o && shape->cst && i < r; i++)
            o->d[i] = mica__ox_data_int(shape->cst, i);
        if (o && !fl && type != OX_INT32 && type != OX_INT64)
            o = mica__ox_cast(x, n, o, type, OUT(0));
        else if (o)
            o->type = type;
        if (o)
            mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* Range: values when start, limit and delta are known, else an int32
 * Fill linspace over a count computed as a shape tensor. */
static mica_status_t op_range(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *s, *l, *d, *o, *cnt;
    int fl;
    int64_t i, count;
    if (need(x, n, 3) != MICA_OK)
        return x->st;
    s = IN(0);
    l = IN(1);
    d = IN(2);
    if (s->rank != 0 || l->rank != 0 || d->rank != 0)
        return OX_BAD(x, n, "start, limit and delta must be scalars");
    fl = s->type == OX_FLOAT || s->type == OX_FLOAT16;
    if (s->cst && l->cst && d->cst) {
        double a = mica__ox_data_f(s->cst, 0), b = mica__ox_data_f(l->cst, 0),
               c = mica__ox_data_f(d->cst, 0), q;
        if (c == 0)
            return OX_BAD(x, n, "delta is 0");
        q = (b - a) / c;
        count = q <= 0 ? 0 : (int64_t)q + ((double)(int64_t)q < q);
        if (!fl) {
            int64_t ia = mica__ox_data_int(s->cst, 0),
                    ib = mica__ox_data_int(l->cst, 0),
                    ic = mica__ox_data_int(d->cst, 0), *vals;
            count = ic > 0 ? (ib - ia + ic - 1) / ic : (ia - ib - ic - 1) / -ic;
            count = count < 0 ? 0 : count;
            vals = mica__ox_alloc(x, 8 * (size_t)(count + 1));
            for (i = 0; vals && i < count; i++)
                vals[i] = ia + i * ic;
            o = vals ? mica__ox_const_i(x, s->type, vals, 1, &count) : NULL;
        } else {
            double *vals = mica__ox_alloc(x, 8 * (size_t)(count + 1));
            for (i = 0; vals && i < count; i++)
                vals[i] = (float)a + (float)i * (float)c;
            o = vals ? mica__ox_const_f(x, s->type, vals, 1, &count) : NULL;
        }
        if (o && OUT(0))
            o->name = mica__ox_strdup(x, OUT(0));
        if (o)
            mica__ox_set_out(x, n, 0, o);
        return x->st;
    }
    if (fl)
        return OX_UNSUP(x, n, "a float Range whose start, limit or delta "
                        "is known only at run time (mica computes the "
                        "count as an int32 shape tensor)");
    /* count = max(-floor_div(start - limit, delta), 0), as [count]. */
    {
        int64_t zero = 0, one = 1;
        mica__ox_value_t *z = mica__ox_const_i(x, s->type, &zero, 0, NULL);
        cnt = mica__ox_ew(x, n, "floor_div",
                          mica__ox_ew(x, n, "sub", s, l, NULL), d, NULL);
        cnt = cnt ? mica__ox_ew(x, n, "max",
                                mica__ox_ew(x, n, "sub", z, cnt, NULL), z,
                                NULL) : NULL;
        cnt = cnt ? mica__ox_reshape(x, n, cnt, &one, 1, NULL) : NULL;
    }
    if (!cnt)
        return x->st;
    {
        mica__ox_layer_t *f = mica__ox_layer(x, n, "Fill", NULL);
        mica__ox_in(x, f, mica__ox_tensor(x, n, cnt));
        mica__ox_in(x, f, mica__ox_tensor(x, n, s));
        mica__ox_in(x, f, mica__ox_tensor(x, n, d));
        mica__ox_p_str(x, f, "op", "linspace");
        mica__ox_p_str(x, f, "dtype", "int32");
        o = mica__ox_out(x, f, OUT(0), MICA_INT32, 1, NULL);
        if (o)
            o->type = s->type;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

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
    if (need(x, n, 2) != MICA_OK)
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
    if (data->cst && idx->cst && data->rank == 1 && data->cst->count <= 4096
        && (data->type == OX_INT64 || data->type == OX_INT32)) {
        int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(idx->cst->count + 1)),
                k;
        for (k = 0; vals && k < idx->cst->count; k++) {
            int64_t j = mica__ox_data_int(idx->cst, k);
            j = j < 0 ? j + data->d[0] : j;
            if (j < 0 || j >= data->d[0])
                return OX_BAD(x, n, "index %lld is out of range for %lld "
                              "values", (long long)mica__ox_data_int(
                                  idx->cst, k), (long long)data->d[0]);
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
    mica__ox_set_out(x, n, 0, gather_layer(x, n, data, idx, "default", axis,
                                           0, r, od));
    return x->st;
}

static mica_status_t op_gather_elements(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *data, *idx;
    int64_t axis;
    if (need(x, n, 2) != MICA_OK)
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
    if (need(x, n, 2) != MICA_OK)
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
    if (need(x, n, 3) != MICA_OK)
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

static mica_status_t op_nonzero(mica__ox_t *x, mica__ox_node_t *n)
{
    return OX_UNSUP(x, n, "its output shape depends on the input's values, "
                    "and mica has no layer with a data-dependent output "
                    "shape");
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
    {"Split", op_split, "Slice"},
    {"Slice", op_slice, "Slice"},
    {"Pad", op_pad, "Slice"},
    {"Expand", op_expand, "Slice"},
    {"Tile", op_tile, "Slice"},
    {"Shape", op_shape, "Shape"},
    {"Size", op_size, "Shape, Reduce"},
    {"ConstantOfShape", op_constant_of_shape, "Constant or Fill"},
    {"Range", op_range, "Constant or Fill"},
    {"Gather", op_gather, "Gather"},
    {"GatherElements", op_gather_elements, "Gather"},
    {"GatherND", op_gather_nd, "Gather"},
    {"ScatterElements", op_scatter_elements, "Scatter"},
    {"Scatter", op_scatter_elements, "Scatter"},
    {"ScatterND", op_scatter_nd, "Scatter"},
    {"NonZero", op_nonzero, NULL},
    {NULL, NULL, NULL},
};
