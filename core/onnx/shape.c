/*
 * core/onnx/shape.c - what every mapping needs: a value as a tensor
 * (Constant layers for constants, IfConditionalInput layers in a branch),
 * constants made here, and one-layer helpers (reshape, transpose,
 * squeeze, unsqueeze, element-wise, unary, cast, reduce, concatenation,
 * shapes).  Each helper computes on the host when its inputs are small
 * integer constants (shape arithmetic, as TensorRT's parser does with
 * values known at import time), else adds the layer and tracks the
 * output's type and dimensions (-1 where only run time knows them).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_int.h"

/* The largest constant computed on the host. */
#define FOLD_MAX 4096

int64_t mica__ox_axis(int64_t a, int32_t r)
{
    if (a < -r || a >= r)
        return -1;
    return a < 0 ? a + r : a;
}

static int is_int_type(int32_t t)
{
    return t == OX_INT64 || t == OX_INT32 || t == OX_INT8 || t == OX_UINT8 ||
           t == OX_BOOL || t == OX_INT16 || t == OX_UINT16 ||
           t == OX_UINT32 || t == OX_UINT64;
}

/* A constant value of ONNX `type` over `count` host values. */
static mica__ox_value_t *const_new(mica__ox_t *x, int32_t type, int32_t rank,
                                   const int64_t *dims, int is_int)
{
    mica__ox_value_t *v = mica__ox_value_new(x, NULL);
    mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
    int64_t count = 1;
    int32_t i;
    if (!v || !d)
        return NULL;
    v->type = type;
    if (mica__ox_type_mica(type, &v->dtype) != 0) {
        x->st = mica__fail(x->ctx, MICA_ERR_INTERNAL, "constant of type %s",
                           mica__ox_type_name(type));
        return NULL;
    }
    v->rank = rank;
    d->dims.nb_dims = rank;
    for (i = 0; i < rank; i++) {
        v->d[i] = d->dims.d[i] = dims[i];
        count *= dims[i];
    }
    d->count = count;
    d->type = is_int ? OX_INT64 : OX_FLOAT;
    d->raw = mica__ox_alloc(x, (size_t)(count ? count : 1) * 8);
    v->cst = d;
    v->cond = x->cond;
    return x->st == MICA_OK ? v : NULL;
}

mica__ox_value_t *mica__ox_const_i(mica__ox_t *x, int32_t type,
                                   const int64_t *vals, int32_t rank,
                                   const int64_t *dims)
{
    mica__ox_value_t *v = const_new(x, type, rank, dims, 1);
    if (v && v->cst->count)
        memcpy((void *)v->cst->raw, vals, 8 * (size_t)v->cst->count);
    return v;
}

mica__ox_value_t *mica__ox_const_f(mica__ox_t *x, int32_t type,
                                   const double *vals, int32_t rank,
                                   const int64_t *dims)
{
    mica__ox_value_t *v = const_new(x, type, rank, dims, 0);
    int64_t i;
    if (!v)
        return NULL;
    for (i = 0; i < v->cst->count; i++)
        ((float *)v->cst->raw)[i] = (float)vals[i];
    return v;
}

mica__ox_value_t *mica__ox_scalar_like(mica__ox_t *x,
                                       const mica__ox_value_t *v, double val)
{
    int64_t iv = (int64_t)val;
    if (is_int_type(v->type))
        return mica__ox_const_i(x, v->type, &iv, 0, NULL);
    return mica__ox_const_f(x, v->type, &val, 0, NULL);
}

/* A constant with v's values and new dims (no layer). */
static mica__ox_value_t *const_redim(mica__ox_t *x, const mica__ox_value_t *v,
                                     const int64_t *dims, int32_t rank)
{
    mica__ox_value_t *r = mica__ox_value_new(x, NULL);
    mica__ox_data_t *d = mica__ox_alloc(x, sizeof *d);
    int32_t i;
    if (!r || !d)
        return NULL;
    *d = *v->cst;
    r->name = v->name;
    r->type = v->type;
    r->dtype = v->dtype;
    r->rank = rank;
    d->dims.nb_dims = rank;
    for (i = 0; i < rank; i++)
        r->d[i] = d->dims.d[i] = dims[i];
    r->cst = d;
    r->cond = x->cond;
    return r;
}

/* A folded constant takes the ONNX name its tensor would have had. */
static mica__ox_value_t *named(mica__ox_t *x, mica__ox_value_t *v,
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

/* Output dims of a reshape: -1 inferred from the input's volume. */
static void reshape_dims(const mica__ox_value_t *v, const int64_t *dims,
                         int32_t rank, int64_t *out)
{
    int64_t vol = mica__ox_volume(v), known = 1;
    int32_t i, hole = -1;
    for (i = 0; i < rank; i++) {
        out[i] = dims[i];
        if (dims[i] < 0)
            hole = i;
        else
            known *= dims[i];
    }
    if (hole >= 0)
        out[hole] = vol >= 0 && known > 0 ? vol / known : -1;
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
    reshape_dims(v, dims, rank, od);
    if (v->cst)
        return named(x, const_redim(x, v, od, rank), name);
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shuffle", "reshape");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "reshape", dims, rank);
    mica__ox_p_bool(x, l, "zero_is_placeholder", 0);
    return mica__ox_out(x, l, name, v->dtype, rank, od);
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
    return mica__ox_out(x, l, name, v->dtype, (int32_t)shape->d[0], NULL);
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

/* Broadcast dimension of a and b (-1 when only run time knows). */
static int64_t bdim(int64_t a, int64_t b)
{
    if (a == 1)
        return b;
    if (b == 1)
        return a;
    if (a < 0)
        return b >= 0 && b != 1 ? b : -1;
    return a;
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

static int is_compare(const char *op)
{
    return !strcmp(op, "equal") || !strcmp(op, "greater") ||
           !strcmp(op, "less");
}

static int is_logic(const char *op)
{
    return !strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor");
}

/* The host value of `op` on integers (TensorRT's int32 semantics). */
static int64_t ew_int(const char *op, int64_t a, int64_t b)
{
    if (!strcmp(op, "sum")) return a + b;
    if (!strcmp(op, "sub")) return a - b;
    if (!strcmp(op, "prod")) return a * b;
    if (!strcmp(op, "max")) return a > b ? a : b;
    if (!strcmp(op, "min")) return a < b ? a : b;
    if (!strcmp(op, "div")) return b ? a / b : 0;
    if (!strcmp(op, "floor_div")) {
        int64_t q;
        if (!b)
            return 0;
        q = a / b;
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
    if (!strcmp(op, "equal")) return a == b;
    if (!strcmp(op, "greater")) return a > b;
    if (!strcmp(op, "less")) return a < b;
    if (!strcmp(op, "and")) return a && b;
    if (!strcmp(op, "or")) return a || b;
    if (!strcmp(op, "xor")) return !a != !b;
    if (!strcmp(op, "pow")) {
        int64_t r = 1;
        if (b < 0)
            return a == 1 ? 1 : 0;
        while (b-- > 0)
            r *= a;
        return r;
    }
    return 0;
}

/* Index into a broadcast input of dims d (rank r) for output index o. */
static int64_t bindex(const int64_t *od, const int64_t *d, int32_t r,
                      int64_t o)
{
    int64_t idx = 0, stride = 1;
    int32_t k;
    for (k = r - 1; k >= 0; k--) {
        int64_t c = o % od[k];
        o /= od[k];
        if (d[k] != 1)
            idx += c * stride;
        stride *= d[k];
    }
    return idx;
}

mica__ox_value_t *mica__ox_ew(mica__ox_t *x, mica__ox_node_t *n,
                              const char *op, mica__ox_value_t *a,
                              mica__ox_value_t *b, const char *name)
{
    int64_t od[MICA_MAX_DIMS];
    int32_t i, r;
    mica__ox_layer_t *l;
    const char *ta, *tb;
    int boolean = is_compare(op) || is_logic(op);

    if (x->st != MICA_OK || mica__ox_broadcast(x, n, &a, &b) != MICA_OK)
        return NULL;
    r = a->rank;
    for (i = 0; i < r; i++)
        od[i] = bdim(a->d[i], b->d[i]);
    if (a->cst && b->cst && is_int_type(a->type)
        && is_int_type(b->type)) {
        int64_t vol = 1, o, *vals;
        for (i = 0; i < r; i++)
            vol *= od[i];
        if (vol <= FOLD_MAX) {
            vals = mica__ox_alloc(x, 8 * (size_t)(vol ? vol : 1));
            for (o = 0; vals && o < vol; o++)
                vals[o] = ew_int(op,
                    mica__ox_data_int(a->cst, bindex(od, a->d, r, o)),
                    mica__ox_data_int(b->cst, bindex(od, b->d, r, o)));
            return vals ? named(x, mica__ox_const_i(x, boolean ? OX_BOOL
                                                    : a->type, vals, r, od),
                                name) : NULL;
        }
    }
    ta = mica__ox_tensor(x, n, a);
    tb = mica__ox_tensor(x, n, b);
    l = mica__ox_layer(x, n, "ElementWise", op);
    mica__ox_in(x, l, ta);
    mica__ox_in(x, l, tb);
    mica__ox_p_str(x, l, "op", op);
    return mica__ox_out(x, l, name, boolean ? MICA_BOOL : a->dtype, r, od);
}

mica__ox_value_t *mica__ox_unary(mica__ox_t *x, mica__ox_node_t *n,
                                 const char *op, mica__ox_value_t *a,
                                 const char *name)
{
    mica__ox_layer_t *l;
    const char *t;
    int boolean = !strcmp(op, "isinf") || !strcmp(op, "isnan");
    if (x->st != MICA_OK)
        return NULL;
    if (a->cst && is_int_type(a->type) && a->cst->count <= FOLD_MAX
        && (!strcmp(op, "neg") || !strcmp(op, "abs") || !strcmp(op, "not"))) {
        int64_t k, *vals = mica__ox_alloc(x, 8 * (size_t)(a->cst->count + 1));
        for (k = 0; vals && k < a->cst->count; k++) {
            int64_t v = mica__ox_data_int(a->cst, k);
            vals[k] = op[0] == 'n' && op[1] == 'e' ? -v
                      : op[0] == 'a' ? (v < 0 ? -v : v) : !v;
        }
        return vals ? named(x, mica__ox_const_i(x, a->type, vals, a->rank,
                                                a->d), name) : NULL;
    }
    t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Unary", op);
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "op", op);
    return mica__ox_out(x, l, name, boolean ? MICA_BOOL : a->dtype, a->rank,
                        a->d);
}

mica__ox_value_t *mica__ox_cast(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *a, int32_t type,
                                const char *name)
{
    mica_dtype_t dt;
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    if (mica__ox_type_mica(type, &dt) != 0) {
        OX_UNSUP(x, n, "casts to %s (no mica type)",
                 mica__ox_type_name(type));
        return NULL;
    }
    if (a->cst && a->cst->count <= FOLD_MAX) {
        int64_t k, cnt = a->cst->count;
        if (is_int_type(type)) {
            int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
            for (k = 0; vals && k < cnt; k++)
                vals[k] = type == OX_BOOL ? mica__ox_data_f(a->cst, k) != 0
                                          : mica__ox_data_int(a->cst, k);
            return vals ? named(x, mica__ox_const_i(x, type, vals, a->rank,
                                                    a->d), name) : NULL;
        } else if (type == OX_FLOAT) {
            double *vals = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
            for (k = 0; vals && k < cnt; k++)
                vals[k] = mica__ox_data_f(a->cst, k);
            return vals ? named(x, mica__ox_const_f(x, type, vals, a->rank,
                                                    a->d), name) : NULL;
        }
    }
    t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Identity", "cast");
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "dtype", mica_dtype_name(dt));
    o = mica__ox_out(x, l, name, dt, a->rank, a->d);
    if (o)
        o->type = type;
    return o;
}

mica__ox_value_t *mica__ox_identity(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *a, const char *name)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Identity", NULL);
    mica__ox_in(x, l, t);
    o = mica__ox_out(x, l, name, a->dtype, a->rank, a->d);
    if (o)
        o->type = a->type;
    return o;
}

mica__ox_value_t *mica__ox_reduce(mica__ox_t *x, mica__ox_node_t *n,
                                  const char *op, mica__ox_value_t *a,
                                  const int64_t *axes, int32_t nb, int keep,
                                  const char *name)
{
    int64_t od[MICA_MAX_DIMS], ax[MICA_MAX_DIMS];
    int red[MICA_MAX_DIMS] = {0};
    int32_t i, r = 0;
    mica__ox_layer_t *l;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    for (i = 0; i < nb; i++) {
        int64_t k = mica__ox_axis(axes[i], a->rank);
        if (k < 0) {
            OX_BAD(x, n, "axis %lld is out of range for rank %d",
                   (long long)axes[i], (int)a->rank);
            return NULL;
        }
        red[k] = 1;
    }
    nb = 0;
    for (i = 0; i < a->rank; i++) {
        if (red[i])
            ax[nb++] = i;
        if (!red[i])
            od[r++] = a->d[i];
        else if (keep)
            od[r++] = 1;
    }
    if (a->cst && is_int_type(a->type) && a->cst->count <= FOLD_MAX
        && a->rank == 1 && nb == 1 && op[0] != 'a') {
        int64_t acc = !strcmp(op, "prod") ? 1 : 0, k;
        for (k = 0; k < a->cst->count; k++) {
            int64_t v = mica__ox_data_int(a->cst, k);
            if (!strcmp(op, "sum")) acc += v;
            else if (!strcmp(op, "prod")) acc *= v;
            else if (!strcmp(op, "max")) acc = !k || v > acc ? v : acc;
            else acc = !k || v < acc ? v : acc;
        }
        return named(x, mica__ox_const_i(x, a->type, &acc, r, od), name);
    }
    t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Reduce", op);
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "op", op);
    mica__ox_p_ints(x, l, "axes", ax, nb);
    mica__ox_p_bool(x, l, "keep_dims", keep);
    return mica__ox_out(x, l, name, a->dtype, r, od);
}

mica__ox_value_t *mica__ox_concat(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t **v, int32_t nb,
                                  int32_t axis, const char *name)
{
    int64_t od[MICA_MAX_DIMS] = {0};
    int32_t i, k, all_const = 1;
    mica__ox_layer_t *l;
    if (x->st != MICA_OK)
        return NULL;
    for (i = 0; i < nb; i++)
        all_const &= v[i]->cst != NULL && is_int_type(v[i]->type) &&
                     v[i]->rank == 1;
    for (k = 0; k < v[0]->rank; k++)
        od[k] = v[0]->d[k];
    for (i = 1; i < nb; i++)
        for (k = 0; k < v[0]->rank; k++) {
            if (k == axis)
                od[k] = od[k] < 0 || v[i]->d[k] < 0 ? -1
                                                    : od[k] + v[i]->d[k];
            else if (od[k] < 0)
                od[k] = v[i]->d[k];
        }
    if (all_const && axis == 0 && od[0] <= FOLD_MAX) {
        int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(od[0] + 1)), j = 0, e;
        for (i = 0; vals && i < nb; i++)
            for (e = 0; e < v[i]->cst->count; e++)
                vals[j++] = mica__ox_data_int(v[i]->cst, e);
        return vals ? named(x, mica__ox_const_i(x, v[0]->type, vals, 1, od),
                            name) : NULL;
    }
    l = mica__ox_layer(x, n, "Concatenation", "concat");
    for (i = 0; i < nb; i++)
        mica__ox_in(x, l, mica__ox_tensor(x, n, v[i]));
    mica__ox_p_int(x, l, "axis", axis);
    {
        mica__ox_value_t *o = mica__ox_out(x, l, name, v[0]->dtype,
                                           v[0]->rank, od);
        if (o)
            o->type = v[0]->type;
        return o;
    }
}

mica__ox_value_t *mica__ox_shape_of(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *v)
{
    int64_t len = v->rank;
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    if (v->rank < 0) {
        OX_UNSUP(x, n, "the shape of '%s', whose rank is unknown", v->name);
        return NULL;
    }
    if (mica__ox_dims_known(v))
        return mica__ox_const_i(x, OX_INT64, v->d, 1, &len);
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shape", "shape");
    mica__ox_in(x, l, t);
    o = mica__ox_out(x, l, NULL, MICA_INT32, 1, &len);
    if (o)
        o->type = OX_INT64;
    return o;
}

mica__ox_value_t *mica__ox_shape_slice(mica__ox_t *x, mica__ox_node_t *n,
                                       mica__ox_value_t *s, int32_t start,
                                       int32_t end)
{
    int64_t len = end - start, st = start, one = 1;
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    if (s->cst) {
        int64_t vals[MICA_MAX_DIMS], i;
        for (i = 0; i < len; i++)
            vals[i] = mica__ox_data_int(s->cst, start + i);
        return mica__ox_const_i(x, s->type, vals, 1, &len);
    }
    t = mica__ox_tensor(x, n, s);
    l = mica__ox_layer(x, n, "Slice", "part");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "start", &st, 1);
    mica__ox_p_ints(x, l, "size", &len, 1);
    mica__ox_p_ints(x, l, "stride", &one, 1);
    o = mica__ox_out(x, l, NULL, s->dtype, 1, &len);
    if (o)
        o->type = s->type;
    return o;
}

mica__ox_value_t *mica__ox_dim(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v, int32_t i)
{
    int64_t one = 1;
    if (v->d[i] >= 0)
        return mica__ox_const_i(x, OX_INT64, &v->d[i], 1, &one);
    return mica__ox_shape_slice(x, n, mica__ox_shape_of(x, n, v), i, i + 1);
}

mica__ox_value_t *mica__ox_vec(mica__ox_t *x, mica__ox_node_t *n,
                               const int64_t *known, mica__ox_value_t **dyn,
                               int32_t r)
{
    mica__ox_value_t *parts[MICA_MAX_DIMS];
    int64_t one = 1, len = r;
    int32_t i, any = 0;
    for (i = 0; i < r; i++)
        any |= dyn && dyn[i] != NULL;
    if (!any)
        return mica__ox_const_i(x, OX_INT64, known, 1, &len);
    for (i = 0; i < r && x->st == MICA_OK; i++)
        parts[i] = dyn && dyn[i] ? dyn[i]
                   : mica__ox_const_i(x, OX_INT64, &known[i], 1, &one);
    return x->st == MICA_OK ? mica__ox_concat(x, n, parts, r, 0, NULL) : NULL;
}

/* Param `name` of l from a constant, or input tensor (slot order kept). */
static void slice_arg(mica__ox_t *x, mica__ox_node_t *n, mica__ox_layer_t *l,
                      const char *name, mica__ox_value_t *v, int input)
{
    int64_t vals[MICA_MAX_DIMS];
    int32_t i;
    if (!v) {
        if (input)
            mica__ox_in(x, l, NULL);
        return;
    }
    if (v->cst) {
        for (i = 0; i < v->cst->count && i < MICA_MAX_DIMS; i++)
            vals[i] = mica__ox_data_int(v->cst, i);
        mica__ox_p_ints(x, l, name, vals, (int32_t)v->cst->count);
        if (input)
            mica__ox_in(x, l, NULL);
    } else {
        mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    }
}

mica__ox_value_t *mica__ox_slice(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t *v, mica__ox_value_t *start,
                                 mica__ox_value_t *size,
                                 mica__ox_value_t *stride, const char *mode,
                                 mica__ox_value_t *fill, const char *name)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    int64_t od[MICA_MAX_DIMS];
    int32_t i, r = v->rank, tensors;
    const char *t;
    if (x->st != MICA_OK)
        return NULL;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Slice", "slice");
    mica__ox_in(x, l, t);
    /* Inputs after the last tensor argument are left out. */
    tensors = fill && !fill->cst ? 4 : stride && !stride->cst ? 3
              : !size->cst ? 2 : !start->cst ? 1 : 0;
    slice_arg(x, n, l, "start", start, tensors >= 1);
    slice_arg(x, n, l, "size", size, tensors >= 2);
    slice_arg(x, n, l, "stride", stride, tensors >= 3);
    if (mode && strcmp(mode, "default"))
        mica__ox_p_str(x, l, "mode", mode);
    if (fill && fill->cst)
        mica__ox_p_float(x, l, "fill_value", mica__ox_data_f(fill->cst, 0));
    else if (fill)
        mica__ox_in(x, l, mica__ox_tensor(x, n, fill));
    for (i = 0; i < r; i++)
        od[i] = size->cst ? mica__ox_data_int(size->cst, i) : -1;
    o = mica__ox_out(x, l, name, v->dtype, r, od);
    if (o)
        o->type = v->type;
    return o;
}
