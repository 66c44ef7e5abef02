/*
 * core/onnx/layers.c - one-layer helpers: element-wise, unary, cast,
 * identity, reduce, concatenation, shapes and slices.  Each computes on
 * the host when its inputs are small integer constants (shape arithmetic,
 * as TensorRT's parser does with values known at import time), else adds
 * the layer and tracks the output's type and dimensions (-1 where only
 * run time knows them).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "onnx_int.h"

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
    if (!strcmp(op, "bitwise_and")) return a & b;
    if (!strcmp(op, "bitwise_or")) return a | b;
    if (!strcmp(op, "bitwise_xor")) return a ^ b;
    /* shifts take unsigned types: a's bits as they are; what passes the
     * type's width the constant's store drops */
    if (!strcmp(op, "shift_left"))
        return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a << b);
    if (!strcmp(op, "shift_right"))
        return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a >> b);
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

mica__ox_value_t *mica__ox_fold_pick(mica__ox_t *x, const mica__ox_value_t *v,
                                     int32_t rank, const int64_t *od,
                                     const int64_t *src)
{
    int64_t count = mica__ox_dims_count(od, rank), k;
    mica__ox_value_t *o;
    if (x->st != MICA_OK || !v->cst || count < 0
        || count > MICA__OX_MOVE_MAX)
        return NULL;
    for (k = 0; k < count; k++)
        if (src[k] < 0 || src[k] >= v->cst->count)
            return NULL;
    if (mica__ox_is_int(v->type)) {
        int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(count + 1));
        for (k = 0; vals && k < count; k++)
            vals[k] = mica__ox_data_int(v->cst, src[k]);
        o = vals ? mica__ox_const_i(x, v->type, vals, rank, od) : NULL;
    } else {
        double *vals = mica__ox_alloc(x, 8 * (size_t)(count + 1));
        for (k = 0; vals && k < count; k++)
            vals[k] = mica__ox_data_f(v->cst, src[k]);
        o = vals ? mica__ox_const_f(x, v->type, vals, rank, od) : NULL;
    }
    return o;
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
    for (i = 0; i < r; i++) {
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i]
            && a->d[i] != 1 && b->d[i] != 1) {
            OX_BAD(x, n, "dimension %d is %lld in '%s' and %lld in '%s': "
                   "they do not broadcast", (int)i, (long long)a->d[i],
                   a->name, (long long)b->d[i], b->name);
            return NULL;
        }
        od[i] = bdim(a->d[i], b->d[i]);
    }
    if (a->cst && b->cst && mica__ox_is_int(a->type)
        && mica__ox_is_int(b->type)) {
        int64_t vol = mica__ox_dims_count(od, r), o, *vals;
        if (vol >= 0 && vol <= MICA__OX_FOLD_MAX) {
            vals = mica__ox_alloc(x, 8 * (size_t)(vol ? vol : 1));
            for (o = 0; vals && o < vol; o++)
                vals[o] = ew_int(op,
                    mica__ox_data_int(a->cst, bindex(od, a->d, r, o)),
                    mica__ox_data_int(b->cst, bindex(od, b->d, r, o)));
            return vals ? mica__ox_named(x, mica__ox_const_i(x, boolean ? OX_BOOL
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
    if (a->cst && mica__ox_is_int(a->type) && a->cst->count <= MICA__OX_FOLD_MAX
        && (!strcmp(op, "neg") || !strcmp(op, "abs") || !strcmp(op, "not"))) {
        int64_t k, *vals = mica__ox_alloc(x, 8 * (size_t)(a->cst->count + 1));
        for (k = 0; vals && k < a->cst->count; k++) {
            int64_t v = mica__ox_data_int(a->cst, k);
            vals[k] = op[0] == 'n' && op[1] == 'e' ? -v
                      : op[0] == 'a' ? (v < 0 ? -v : v) : !v;
        }
        return vals ? mica__ox_named(x, mica__ox_const_i(x, a->type, vals, a->rank,
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
    return mica__ox_cast_sat(x, n, a, type, 1, name);
}

mica__ox_value_t *mica__ox_cast_sat(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *a, int32_t type,
                                    int saturate, const char *name)
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
    if (a->cst && a->cst->count <= MICA__OX_FOLD_MAX) {
        int64_t k, cnt = a->cst->count;
        if (mica__ox_is_int(type)) {
            int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
            for (k = 0; vals && k < cnt; k++)
                vals[k] = type == OX_BOOL ? mica__ox_data_f(a->cst, k) != 0
                                          : mica__ox_data_int(a->cst, k);
            return vals ? mica__ox_named(x, mica__ox_const_i(x, type, vals, a->rank,
                                                    a->d), name) : NULL;
        } else if (type == OX_FLOAT) {
            double *vals = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
            for (k = 0; vals && k < cnt; k++)
                vals[k] = mica__ox_data_f(a->cst, k);
            return vals ? mica__ox_named(x, mica__ox_const_f(x, type, vals, a->rank,
                                                    a->d), name) : NULL;
        }
    }
    t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Identity", "cast");
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "dtype", mica_dtype_name(dt));
    if (!saturate)
        mica__ox_p_bool(x, l, "saturate", 0);
    o = mica__ox_out(x, l, name, dt, a->rank, a->d);
    if (o) {
        o->type = type;
        if (a->has_kv && mica__ox_is_int(type)) {
            o->has_kv = 1;
            memcpy(o->kv, a->kv, sizeof o->kv);
        }
        /* Remembered: a float Range over integer casts counts in ints. */
        if (mica__ox_is_int(a->type) && !mica__ox_is_int(type))
            o->from_int = a;
    }
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
    if (a->type == OX_BOOL && (!strcmp(op, "max") || !strcmp(op, "min"))) {
        /* bool's any / all: through int32 (Reduce takes no bool) */
        mica__ox_value_t *v = mica__ox_reduce(
            x, n, op, mica__ox_cast(x, n, a, OX_INT32, NULL), axes, nb, keep,
            NULL);
        return v ? mica__ox_cast(x, n, v, OX_BOOL, name) : NULL;
    }
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
    if (a->cst && mica__ox_is_int(a->type) && a->cst->count <= MICA__OX_FOLD_MAX
        && a->rank == 1 && nb == 1 && op[0] != 'a') {
        int64_t acc = !strcmp(op, "prod") ? 1 : 0, k;
        for (k = 0; k < a->cst->count; k++) {
            int64_t v = mica__ox_data_int(a->cst, k);
            if (!strcmp(op, "sum")) acc += v;
            else if (!strcmp(op, "prod")) acc *= v;
            else if (!strcmp(op, "max")) acc = !k || v > acc ? v : acc;
            else acc = !k || v < acc ? v : acc;
        }
        return mica__ox_named(x, mica__ox_const_i(x, a->type, &acc, r, od), name);
    }
    t = mica__ox_tensor(x, n, a);
    l = mica__ox_layer(x, n, "Reduce", op);
    mica__ox_in(x, l, t);
    mica__ox_p_str(x, l, "op", op);
    mica__ox_p_ints(x, l, "axes", ax, nb);
    mica__ox_p_bool(x, l, "keep_dims", keep);
    return mica__ox_out(x, l, name, a->dtype, r, od);
}

/* Whether every input is a constant of one kind (integers or floats). */
static int all_const_any(mica__ox_value_t *const *v, int32_t nb)
{
    int32_t i;
    for (i = 0; i < nb; i++)
        if (!v[i]->cst || mica__ox_is_int(v[i]->type)
                          != mica__ox_is_int(v[0]->type))
            return 0;
    return 1;
}

/* Constants concatenated along `axis` (weights assembled in the graph),
 * od the output's dims (checked by the caller); NULL (no failure) where
 * the inputs' dims do not tile od. */
static mica__ox_value_t *concat_fold(mica__ox_t *x, mica__ox_value_t *const *v,
                                     int32_t nb, int32_t axis,
                                     const int64_t *od)
{
    int32_t r = v[0]->rank, i, k;
    int64_t outer = 1, total = mica__ox_dims_count(od, r), at = 0, o, e;
    int fl = !mica__ox_is_int(v[0]->type);
    int64_t *iv = NULL;
    double *fv = NULL;
    mica__ox_value_t *c;
    for (k = 0; k < axis; k++)
        outer *= od[k];
    for (i = 0; i < nb; i++)
        if (!mica__ox_cst_ok(v[i]))
            return NULL;
    if (fl)
        fv = mica__ox_alloc(x, 8 * (size_t)(total + 1));
    else
        iv = mica__ox_alloc(x, 8 * (size_t)(total + 1));
    if (!fv && !iv)
        return NULL;
    /* Each input contributes count / outer values per outer index. */
    for (o = 0; o < outer; o++)
        for (i = 0; i < nb; i++) {
            int64_t per = outer ? v[i]->cst->count / outer : 0;
            for (e = 0; e < per && at < total; e++, at++) {
                if (fl)
                    fv[at] = mica__ox_data_f(v[i]->cst, o * per + e);
                else
                    iv[at] = mica__ox_data_int(v[i]->cst, o * per + e);
            }
        }
    if (at != total)
        return NULL;
    c = fl ? mica__ox_const_f(x, v[0]->type, fv, r, od)
           : mica__ox_const_i(x, v[0]->type, iv, r, od);
    return c;
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
    if (axis < 0 || axis >= v[0]->rank) {
        OX_BAD(x, n, "axis %d is out of range for rank %d", (int)axis,
               (int)v[0]->rank);
        return NULL;
    }
    for (i = 0; i < nb; i++) {
        if (v[i]->rank != v[0]->rank) {
            OX_BAD(x, n, "input %d has rank %d, input 0 rank %d", (int)i,
                   (int)v[i]->rank, (int)v[0]->rank);
            return NULL;
        }
        all_const &= v[i]->cst != NULL && mica__ox_is_int(v[i]->type) &&
                     v[i]->rank == 1;
    }
    for (k = 0; k < v[0]->rank; k++)
        od[k] = v[0]->d[k];
    for (i = 1; i < nb; i++)
        for (k = 0; k < v[0]->rank; k++) {
            if (k == axis)
                od[k] = od[k] < 0 || v[i]->d[k] < 0
                        || od[k] > INT64_MAX - v[i]->d[k]
                        ? -1 : od[k] + v[i]->d[k];
            else if (od[k] >= 0 && v[i]->d[k] >= 0 && od[k] != v[i]->d[k]) {
                OX_BAD(x, n, "dimension %d of input %d is %lld, of input 0 "
                       "%lld", (int)k, (int)i, (long long)v[i]->d[k],
                       (long long)od[k]);
                return NULL;
            } else if (od[k] < 0)
                od[k] = v[i]->d[k];
        }
    if (all_const && axis == 0 && od[0] >= 0
        && od[0] <= MICA__OX_FOLD_MAX) {
        int64_t *vals = mica__ox_alloc(x, 8 * (size_t)(od[0] + 1)), j = 0, e;
        /* Each input's count is its length (the checked type), so the
         * lengths add up to od[0]: the copy stays in vals. */
        for (i = 0; vals && i < nb; i++)
            for (e = 0; e < v[i]->cst->count && j < od[0]; e++)
                vals[j++] = mica__ox_data_int(v[i]->cst, e);
        return vals ? mica__ox_named(x, mica__ox_const_i(x, v[0]->type, vals, 1, od),
                            name) : NULL;
    }
    if (all_const_any(v, nb) && mica__ox_dims_count(od, v[0]->rank) >= 0
        && mica__ox_dims_count(od, v[0]->rank) <= MICA__OX_MOVE_MAX) {
        mica__ox_value_t *o = concat_fold(x, v, nb, axis, od);
        if (o || x->st != MICA_OK)
            return mica__ox_named(x, o, name);
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
        if (o && v[0]->rank == 1 && axis == 0 && od[0] >= 0
            && od[0] <= MICA_MAX_DIMS && mica__ox_is_int(v[0]->type)) {
            int64_t j = 0, e;
            for (i = 0; i < nb; i++)
                for (e = 0; e < v[i]->d[0]; e++, j++)
                    o->kv[j] = v[i]->cst ? mica__ox_data_int(v[i]->cst, e)
                               : v[i]->has_kv ? v[i]->kv[e] : -1;
            o->has_kv = 1;
        }
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
    if (o) {
        int32_t i;
        o->type = OX_INT64;
        o->has_kv = 1;
        for (i = 0; i < v->rank; i++)
            o->kv[i] = v->d[i];
    }
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
    if (s->rank != 1 || start < 0 || len < 0 || len > MICA_MAX_DIMS
        || (s->d[0] >= 0 && end > s->d[0])) {
        OX_BAD(x, n, "elements [%d, %d) of '%s', a value of rank %d and "
               "length %lld", (int)start, (int)end, s->name, (int)s->rank,
               (long long)(s->rank == 1 ? s->d[0] : -1));
        return NULL;
    }
    if (s->cst) {
        int64_t vals[MICA_MAX_DIMS], i;
        for (i = 0; i < len; i++)
            vals[i] = mica__ox_data_int(s->cst, start + i);
        return mica__ox_const_i(x, s->type, vals, 1, &len);
    }
    if (s->has_kv && len == 1 && s->kv[start] >= 0) {
        /* An element known here though the vector is not. */
        int64_t val = s->kv[start];
        return mica__ox_const_i(x, s->type, &val, 1, &len);
    }
    t = mica__ox_tensor(x, n, s);
    l = mica__ox_layer(x, n, "Slice", "part");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "start", &st, 1);
    mica__ox_p_ints(x, l, "size", &len, 1);
    mica__ox_p_ints(x, l, "stride", &one, 1);
    o = mica__ox_out(x, l, NULL, s->dtype, 1, &len);
    if (o) {
        int64_t i;
        o->type = s->type;
        o->has_kv = s->has_kv;
        for (i = 0; s->has_kv && i < len; i++)
            o->kv[i] = s->kv[start + i];
    }
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

int mica__ox_axes_at(mica__ox_t *x, mica__ox_node_t *n, const int64_t *axes,
                     int32_t na, int32_t r, int32_t *at)
{
    int32_t i, k;
    for (i = 0; i < r; i++)
        at[i] = -1;
    for (k = 0; k < na; k++) {
        int64_t a = mica__ox_axis(axes[k], r);
        if (a < 0 || at[a] >= 0) {
            OX_BAD(x, n, "axes: %lld is out of range or repeated for rank "
                   "%d", (long long)axes[k], (int)r);
            return -1;
        }
        at[a] = k;
    }
    return 0;
}

mica__ox_value_t *mica__ox_vec_at(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *part, const int32_t *at,
                                  int32_t off, const int64_t *known,
                                  mica__ox_value_t **dyn, int32_t r)
{
    mica__ox_value_t *d[MICA_MAX_DIMS];
    int64_t k[MICA_MAX_DIMS];
    int32_t i;
    for (i = 0; i < r && x->st == MICA_OK; i++) {
        k[i] = known[i];
        d[i] = dyn ? dyn[i] : NULL;
        if (at[i] < 0)
            continue;
        if (part->cst)
            k[i] = mica__ox_data_int(part->cst, off + at[i]), d[i] = NULL;
        else
            d[i] = mica__ox_shape_slice(x, n, part, off + at[i],
                                        off + at[i] + 1);
    }
    return x->st == MICA_OK ? mica__ox_vec(x, n, k, d, r) : NULL;
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
        if (v->cst->count > MICA_MAX_DIMS) {
            OX_BAD(x, n, "%s has %lld values (at most %d)", name,
                   (long long)v->cst->count, MICA_MAX_DIMS);
            return;
        }
        for (i = 0; i < v->cst->count; i++)
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
    if (v->cst && start->cst && size->cst && (!stride || stride->cst)
        && (!mode || !strcmp(mode, "default")) && v->rank == r
        && start->cst->count == r && size->cst->count == r
        && (!stride || stride->cst->count == r)) {
        /* Shape arithmetic: a small constant sliced here. */
        int64_t sz[MICA_MAX_DIMS], *src, cnt, k;
        int ok = 1;
        for (i = 0; i < r; i++) {
            sz[i] = mica__ox_data_int(size->cst, i);
            ok &= sz[i] >= 0;
        }
        cnt = ok ? mica__ox_dims_count(sz, r) : -1;
        src = cnt >= 0 && cnt <= MICA__OX_MOVE_MAX
              ? mica__ox_alloc(x, 8 * (size_t)(cnt + 1)) : NULL;
        for (k = 0; src && k < cnt; k++) {
            int64_t rest = k, at = 0, stride_in = 1;
            int32_t a;
            for (a = r - 1; a >= 0; a--) {
                int64_t c = rest % sz[a], pos;
                rest /= sz[a];
                pos = mica__ox_data_int(start->cst, a) +
                      c * (stride ? mica__ox_data_int(stride->cst, a) : 1);
                if (pos < 0 || pos >= v->d[a])
                    break;
                at += pos * stride_in;
                stride_in *= v->d[a];
            }
            if (a >= 0)
                break;
            src[k] = at;
        }
        if (src && k == cnt) {
            o = mica__ox_fold_pick(x, v, r, sz, src);
            if (o)
                return mica__ox_named(x, o, name);
        }
        if (x->st != MICA_OK)
            return NULL;
    }
    if (start->rank != 1 || start->d[0] != r || size->rank != 1
        || size->d[0] != r || (stride && (stride->rank != 1
                                          || stride->d[0] != r))) {
        OX_BAD(x, n, "a slice of '%s' (rank %d) needs start, size and "
               "stride of %d values each", v->name, (int)r, (int)r);
        return NULL;
    }
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
