/*
 * core/onnx/shape.c - what every mapping needs: a value as a tensor
 * (Constant layers for constants, IfConditionalInput layers in a branch),
 * constants made here, a node's outputs, and the shape helpers (reshape,
 * transpose, squeeze, unsqueeze, the broadcast of two ranks); layers.c
 * has the other one-layer helpers.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

int64_t mica__ox_axis(int64_t a, int32_t r)
{
    if (a < -r || a >= r)
        return -1;
    return a < 0 ? a + r : a;
}

int mica__ox_is_int(int32_t t)
{
    return t == OX_INT64 || t == OX_INT32 || t == OX_INT8 || t == OX_UINT8 ||
           t == OX_BOOL || t == OX_INT16 || t == OX_UINT16 ||
           t == OX_UINT32 || t == OX_UINT64;
}

/* A constant value of ONNX `type` over `count` host values (one when
 * `splat`). */
static mica__ox_value_t *const_new(mica__ox_t *x, int32_t type, int32_t rank,
                                   const int64_t *dims, int is_int,
                                   int splat)
{
    mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
    if (!d)
        return NULL;
    if (mica__ox_data_dims(d, rank, dims) != 0
        || (!splat && d->count > MICA__OX_HOST_MAX)) {
        mica__ox_fail(x, NULL, MICA_ERR_UNSUPPORTED, "a constant computed "
                      "at import of rank %d whose dimensions multiply past "
                      "%s", (int)rank, splat ? "2^63" : "2^24 elements");
        return NULL;
    }
    d->type = is_int ? OX_INT64 : OX_FLOAT;
    d->splat = splat;
    d->raw = mica__ox_alloc(x, (size_t)(d->count && !splat ? d->count : 1)
                               * 8);
    return d->raw ? mica__ox_const_data(x, NULL, type, d) : NULL;
}

/* val as an integer constant holds it: truncated, saturated at int64's
 * range (a pooling's -FLT_MAX fill), NaN as 0. */
static int64_t saturate_i64(double val)
{
    if (val != val)
        return 0;
    if (val <= -9223372036854775808.0)
        return INT64_MIN;
    if (val >= 9223372036854775808.0)
        return INT64_MAX;
    return (int64_t)val;
}

mica__ox_value_t *mica__ox_const_i(mica__ox_t *x, int32_t type,
                                   const int64_t *vals, int32_t rank,
                                   const int64_t *dims)
{
    mica__ox_value_t *v = const_new(x, type, rank, dims, 1, 0);
    if (v && v->cst->count)
        memcpy((void *)v->cst->raw, vals, 8 * (size_t)v->cst->count);
    return v;
}

mica__ox_value_t *mica__ox_const_f(mica__ox_t *x, int32_t type,
                                   const double *vals, int32_t rank,
                                   const int64_t *dims)
{
    mica__ox_value_t *v = const_new(x, type, rank, dims, 0, 0);
    int64_t i;
    if (!v)
        return NULL;
    for (i = 0; i < v->cst->count; i++)
        ((float *)v->cst->raw)[i] = (float)vals[i];
    return v;
}

mica__ox_value_t *mica__ox_const_splat(mica__ox_t *x, int32_t type,
                                       double val, int32_t rank,
                                       const int64_t *dims)
{
    int is_int = mica__ox_is_int(type);
    mica__ox_value_t *v = const_new(x, type, rank, dims, is_int, 1);
    int64_t iv = saturate_i64(val);
    float fv = (float)val;
    if (v)
        memcpy((void *)v->cst->raw, is_int ? (void *)&iv : (void *)&fv,
               is_int ? 8 : 4);
    return v;
}

mica__ox_value_t *mica__ox_scalar_like(mica__ox_t *x,
                                       const mica__ox_value_t *v, double val)
{
    int64_t iv = saturate_i64(val);
    if (mica__ox_is_int(v->type))
        return mica__ox_const_i(x, v->type, &iv, 0, NULL);
    return mica__ox_const_f(x, v->type, &val, 0, NULL);
}

/* A constant with v's values and new dims (no layer): only dims of as
 * many elements (reshape_dims checked them; checked again here, as the
 * one place a constant's dims change). */
static mica__ox_value_t *const_redim(mica__ox_t *x, mica__ox_node_t *n,
                                     const mica__ox_value_t *v,
                                     const int64_t *dims, int32_t rank)
{
    mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
    mica__ox_value_t *r;
    if (!d)
        return NULL;
    *d = *v->cst;
    if (mica__ox_data_dims(d, rank, dims) != 0 || d->count != v->cst->count) {
        OX_BAD(x, n, "a reshape of constant '%s' (%lld values) to dimensions "
               "of another size", v->name, (long long)v->cst->count);
        return NULL;
    }
    r = mica__ox_const_data(x, NULL, v->type, d);
    if (r)
        r->name = v->name;
    return r;
}

/* A folded constant takes the ONNX name its tensor would have had. */
mica__ox_value_t *mica__ox_named(mica__ox_t *x, mica__ox_value_t *v,
                                 const char *name)
{
    if (v && name)
        v->name = mica__ox_strdup(x, name);
    return x->st == MICA_OK ? v : NULL;
}

/* ---- values as tensors -------------------------------------------------- */

/* The IfConditionalInput of tensor t for the current branch. */
static const char *cond_input(mica__ox_t *x, mica__ox_cond_t *c,
                              const char *t)
{
    const char *in = mica__ox_names_get(&c->inputs, t);
    mica__ox_layer_t *l;
    const char *o;
    if (in)
        return in;
    l = mica__ox_layer(x, NULL, "IfConditionalInput",
                       mica__ox_printf(x, "%s/in", c->name));
    if (!l)
        return NULL;
    l->cond = c->name;
    l->comment = mica__ox_printf(x, "into If '%s'", c->name);
    mica__ox_in(x, l, t);
    o = mica__ox_tensor_name(x, NULL, l->name, 0);
    if (!o || mica__ox_out_tensor(x, l, o))
        return NULL;
    if (mica__ox_names_put(&c->inputs, t, (void *)o) != 0) {
        x->st = mica__fail(x->ctx, MICA_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return o;
}

/* The tensor of a large splat: a Fill layer (linspace with steps of 0)
 * rather than weights of its full size. */
static const char *splat_fill(mica__ox_t *x, mica__ox_value_t *v)
{
    mica__ox_node_t *none = NULL;
    mica__ox_layer_t *l = mica__ox_layer(x, none, "Fill", v->name);
    double beta[MICA_MAX_DIMS] = {0};
    if (!l)
        return NULL;
    l->comment = mica__ox_printf(x, "constant '%s', every element %.9g",
                                 v->name, mica__ox_data_f(v->cst, 0));
    mica__ox_p_ints(x, l, "shape", v->d, v->rank);
    mica__ox_p_str(x, l, "op", "linspace");
    mica__ox_p_float(x, l, "alpha", mica__ox_data_f(v->cst, 0));
    mica__ox_p_floats(x, l, "beta", beta, v->rank);
    mica__ox_p_str(x, l, "dtype", mica_dtype_name(v->dtype));
    v->tensor = mica__ox_tensor_name(x, v->name, l->name, 0);
    if (!v->tensor || mica__ox_out_tensor(x, l, v->tensor))
        return NULL;
    return v->tensor;
}

const char *mica__ox_tensor(mica__ox_t *x, mica__ox_node_t *n,
                            mica__ox_value_t *v)
{
    mica__ox_cond_t *c;
    if (x->st != MICA_OK || !v)
        return NULL;
    if (!v->tensor && v->cst) {
        mica__ox_layer_t *l;
        const char *w;
        mica__ox_node_t *none = NULL;
        /* A constant made here is named after the node that needs it. */
        if (!*v->name)
            v->name = n ? mica__ox_printf(x, "%s/const", n->name) : "const";
        if (v->cst->splat && v->cst->count > MICA__OX_FOLD_MAX
            && v->rank > 0 && (v->dtype == MICA_FLOAT32
                               || v->dtype == MICA_FLOAT16
                               || v->dtype == MICA_INT32))
            return splat_fill(x, v);
        w = mica__ox_value_weights(x, n, v);
        if (!w)
            return NULL;
        l = mica__ox_layer(x, none, "Constant", v->name);
        if (!l)
            return NULL;
        l->comment = mica__ox_printf(x, "constant '%s'", v->name);
        mica__ox_p_weights(x, l, "weights", &w, 1, 0);
        v->tensor = mica__ox_tensor_name(x, v->name, l->name, 0);
        if (!v->tensor || mica__ox_out_tensor(x, l, v->tensor))
            return NULL;
        return v->tensor;
    }
    if (!v->tensor) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "value '%s' has no "
                           "tensor", v->name);
        return NULL;
    }
    /* In a branch, a tensor made outside it comes in through the branch's
     * IfConditionalInput (one per tensor, at each level of nesting). */
    v->uses++;
    if (x->cond && v->cond != x->cond && !v->cst) {
        mica__ox_cond_t *chain[64];
        int32_t k = 0;
        const char *t = v->tensor;
        for (c = x->cond; c && c != v->cond && k < 64; c = c->parent)
            chain[k++] = c;
        while (k-- > 0 && t)
            t = cond_input(x, chain[k], t);
        return t;
    }
    return v->tensor;
}

/* ---- outputs -------------------------------------------------------------- */

const char *mica__ox_out_name(const mica__ox_node_t *n, int32_t k)
{
    const Onnx__NodeProto *p = n->proto;
    return k >= 0 && (size_t)k < p->n_output && *p->output[k]
           ? p->output[k] : NULL;
}

mica_status_t mica__ox_set_out(mica__ox_t *x, mica__ox_node_t *n, int32_t k,
                               mica__ox_value_t *v)
{
    const char *name = mica__ox_out_name(n, k);
    if (x->st != MICA_OK)
        return x->st;
    if (!v)
        return x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "no value");
    if (!name)
        return MICA_OK;
    /* A tensor named here and read by nothing yet takes the ONNX name. */
    if (v->gen && !v->uses && v->layer && !mica__ox_names_has(&x->tensors,
                                                              name)) {
        const char *t = mica__ox_tensor_name(x, name, NULL, 0);
        if (!t)
            return x->st;
        v->layer->out[v->slot] = t;
        v->tensor = t;
        v->name = t;
        v->gen = 0;
    }
    return mica__ox_bind(x, name, v);
}

/* ---- one-layer helpers ---------------------------------------------------- */

/*
 * Output dims of a reshape of v to `dims` (rank r): one -1 is inferred
 * from v's volume where it is known.  Refused (a failure naming n): a
 * dimension below -1, two -1s, and, where v's volume is known, dims of
 * another volume (or a -1 that no whole number fills).  A constant's
 * volume is always known: no reshape re-dims its values wrongly.
 */
static mica_status_t reshape_dims(mica__ox_t *x, mica__ox_node_t *n,
                                  const mica__ox_value_t *v,
                                  const int64_t *dims, int32_t rank,
                                  int64_t *out)
{
    int64_t vol = v->cst ? v->cst->count : mica__ox_volume(v), known = 1;
    int32_t i, hole = -1;
    char ds[160];
    size_t m = 0;
    ds[0] = '\0';
    for (i = 0; i < rank && m < sizeof ds; i++)
        m += (size_t)snprintf(ds + m, sizeof ds - m, "%s%lld", i ? ", " : "",
                              (long long)dims[i]);
    for (i = 0; i < rank; i++) {
        out[i] = dims[i];
        if (dims[i] < -1 || (dims[i] == -1 && hole >= 0))
            return OX_BAD(x, n, "a reshape to [%s]: at most one -1 and no "
                          "other negative dimension", ds);
        if (dims[i] == -1)
            hole = i;
        else if (known >= 0 && dims[i]
                 && known > INT64_MAX / dims[i])
            known = -1;
        else if (known >= 0)
            known *= dims[i];
    }
    if (vol < 0)
        return MICA_OK;
    if (known < 0 || (hole < 0 && known != vol)
        || (hole >= 0 && (known == 0 || vol % known != 0)))
        return OX_BAD(x, n, "a reshape of %lld elements (%s'%s') to [%s]",
                      (long long)vol, v->cst ? "constant " : "", v->name, ds);
    if (hole >= 0)
        out[hole] = vol / known;
    return MICA_OK;
}

mica__ox_value_t *mica__ox_reshape(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *dims,
                                   int32_t rank, const char *name)
{
    int64_t od[MICA_MAX_DIMS];
    mica__ox_layer_t *l;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    if (rank < 0 || rank > MICA_MAX_DIMS) {
        OX_UNSUP(x, n, "a reshape to %d dimensions (at most %d)", (int)rank,
                 MICA_MAX_DIMS);
        return NULL;
    }
    if (reshape_dims(x, n, v, dims, rank, od) != MICA_OK)
        return NULL;
    if (v->cst)
        return mica__ox_named(x, const_redim(x, n, v, od, rank), name);
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shuffle", "reshape");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "reshape", dims, rank);
    mica__ox_p_bool(x, l, "zero_is_placeholder", 0);
    {
        mica__ox_value_t *o = mica__ox_out(x, l, name, v->dtype, rank, od);
        if (o && v->has_kv) {
            /* A shape value re-dimmed (0-D <-> [1]): its elements stay. */
            o->type = v->type;
            o->has_kv = 1;
            memcpy(o->kv, v->kv, sizeof o->kv);
        }
        return o;
    }
}

mica__ox_value_t *mica__ox_reshape_t(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v,
                                     mica__ox_value_t *shape, int zero,
                                     const char *name)
{
    mica__ox_layer_t *l;
    const char *t, *s;
    if (x->st != MICA_OK)
        return NULL;
    if (shape->rank != 1 || shape->d[0] < 0 || shape->d[0] > MICA_MAX_DIMS) {
        OX_UNSUP(x, n, "a shape of unknown length");
        return NULL;
    }
    if (shape->cst && !zero) {
        int64_t d[MICA_MAX_DIMS];
        int32_t i;
        for (i = 0; i < shape->d[0]; i++)
            d[i] = mica__ox_data_int(shape->cst, i);
        return mica__ox_reshape(x, n, v, d, (int32_t)shape->d[0], name);
    }
    t = mica__ox_tensor(x, n, v);
    s = mica__ox_tensor(x, n, shape);
    l = mica__ox_layer(x, n, "Shuffle", "reshape");
    mica__ox_in(x, l, t);
    mica__ox_in(x, l, s);
    mica__ox_p_bool(x, l, "zero_is_placeholder", zero);
    {
        /* The dims the shape's known elements give: a positive value, or
         * a 0 that copies a known dim of v. */
        int64_t od[MICA_MAX_DIMS];
        int32_t i, r = (int32_t)shape->d[0];
        for (i = 0; i < r; i++) {
            int64_t k = shape->has_kv ? shape->kv[i] : -1;
            od[i] = k > 0 ? k
                    : k == 0 && zero ? (i < v->rank ? v->d[i] : -1)
                    : k == 0 ? 0 : -1;
        }
        return mica__ox_out(x, l, name, v->dtype, r, od);
    }
}

mica__ox_value_t *mica__ox_transpose(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, const int64_t *perm,
                                     const char *name)
{
    int64_t od[MICA_MAX_DIMS];
    int32_t i;
    mica__ox_layer_t *l;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    for (i = 0; i < v->rank; i++)
        od[i] = v->d[perm[i]];
    if (v->cst && mica__ox_volume(v) <= MICA__OX_MOVE_MAX) {
        /* Shape arithmetic: a small constant transposed here. */
        int64_t cnt = mica__ox_volume(v), k, in_stride[MICA_MAX_DIMS],
                *src = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
        mica__ox_value_t *o;
        for (i = v->rank - 1, k = 1; i >= 0; i--) {
            in_stride[i] = k;
            k *= v->d[i];
        }
        for (k = 0; src && k < cnt; k++) {
            int64_t rest = k, at = 0;
            for (i = v->rank - 1; i >= 0; i--) {
                at += (rest % od[i]) * in_stride[perm[i]];
                rest /= od[i];
            }
            src[k] = at;
        }
        o = src ? mica__ox_fold_pick(x, v, v->rank, od, src) : NULL;
        if (o)
            return mica__ox_named(x, o, name);
        if (x->st != MICA_OK)
            return NULL;
    }
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shuffle", "transpose");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "first_transpose", perm, v->rank);
    return mica__ox_out(x, l, name, v->dtype, v->rank, od);
}

/* Reshape v to `rank` dims where out[i] is v's dim src[i] (or 1 for -1):
 * by params when at most one dim is unknown, else by a shape tensor. */
static mica__ox_value_t *regroup(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t *v, const int32_t *src,
                                 int32_t rank, const char *name)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t i, unknown = 0;
    for (i = 0; i < rank; i++) {
        d[i] = src[i] < 0 ? 1 : v->d[src[i]];
        unknown += d[i] < 0;
    }
    if (unknown <= 1)
        return mica__ox_reshape(x, n, v, d, rank, name);
    {
        mica__ox_value_t *shape = mica__ox_shape_of(x, n, v), *parts[8],
                         *one;
        int64_t onev = 1, od[MICA_MAX_DIMS];
        one = mica__ox_const_i(x, OX_INT64, &onev, 1, &onev);
        for (i = 0; i < rank && x->st == MICA_OK; i++)
            parts[i] = src[i] < 0 ? one
                       : mica__ox_shape_slice(x, n, shape, src[i],
                                              src[i] + 1);
        shape = mica__ox_concat(x, n, parts, rank, 0, NULL);
        v = shape ? mica__ox_reshape_t(x, n, v, shape, 0, name) : NULL;
        for (i = 0; v && i < rank; i++)
            od[i] = d[i];
        if (v)
            memcpy(v->d, od, sizeof(int64_t) * (size_t)rank);
        return v;
    }
}

mica__ox_value_t *mica__ox_unsqueeze(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, const int64_t *axes,
                                     int32_t nb, const char *name)
{
    int32_t src[MICA_MAX_DIMS], rank = v->rank + nb, i, k, j = 0;
    if (x->st != MICA_OK)
        return NULL;
    if (rank > MICA_MAX_DIMS) {
        OX_UNSUP(x, n, "the result would have %d dimensions (at most %d)",
                 (int)rank, MICA_MAX_DIMS);
        return NULL;
    }
    for (i = 0; i < rank; i++)
        src[i] = 0;
    for (k = 0; k < nb; k++) {
        int64_t a = mica__ox_axis(axes[k], rank);
        if (a < 0 || src[a] == -1) {
            OX_BAD(x, n, "axis %lld is out of range or repeated",
                   (long long)axes[k]);
            return NULL;
        }
        src[a] = -1;
    }
    for (i = 0; i < rank; i++)
        if (src[i] != -1)
            src[i] = j++;
    return regroup(x, n, v, src, rank, name);
}

mica__ox_value_t *mica__ox_squeeze(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *axes,
                                   int32_t nb, const char *name)
{
    int32_t src[MICA_MAX_DIMS], drop[MICA_MAX_DIMS] = {0}, rank = 0, i, k;
    if (x->st != MICA_OK)
        return NULL;
    for (k = 0; k < nb; k++) {
        int64_t a = mica__ox_axis(axes[k], v->rank);
        if (a < 0) {
            OX_BAD(x, n, "axis %lld is out of range for rank %d",
                   (long long)axes[k], (int)v->rank);
            return NULL;
        }
        if (v->d[a] > 1 || v->d[a] == 0) {
            OX_BAD(x, n, "cannot squeeze axis %lld of length %lld",
                   (long long)axes[k], (long long)v->d[a]);
            return NULL;
        }
        drop[a] = 1;
    }
    for (i = 0; i < v->rank; i++)
        if (!drop[i])
            src[rank++] = i;
    return regroup(x, n, v, src, rank, name);
}

mica_status_t mica__ox_broadcast(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t **a, mica__ox_value_t **b)
{
    mica__ox_value_t **lo = (*a)->rank < (*b)->rank ? a : b;
    int32_t diff = abs((*a)->rank - (*b)->rank), i;
    int64_t axes[MICA_MAX_DIMS];
    if (x->st != MICA_OK || !diff || (*a)->rank < 0 || (*b)->rank < 0)
        return x->st;
    for (i = 0; i < diff; i++)
        axes[i] = i;
    *lo = mica__ox_unsqueeze(x, n, *lo, axes, diff, NULL);
    return x->st;
}

