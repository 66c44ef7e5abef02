/*
 * core/onnx/op_shape.c - Shape, Size, ConstantOfShape and Range: values
 * computed here when the dimensions are known, else Shape, Reduce and
 * Fill layers over shape tensors.
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- shapes ---------------------------------------------------------------- */

static mica_status_t op_shape(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *s;
    int64_t a, b;
    if (mica__ox_need(x, n, 1) != MICA_OK)
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
    if (mica__ox_need(x, n, 1) != MICA_OK)
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

/* ConstantOfShape: a constant of a known shape (one value stored), else
 * a Fill. */
static mica_status_t op_constant_of_shape(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *shape, *o;
    const Onnx__AttributeProto *a = mica__ox_attr(n, "value");
    mica__ox_data_t d;
    int32_t type = OX_FLOAT;
    double val = 0;
    int64_t r, i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    shape = IN(0);
    if (!mica__ox_vec_ok(x, n, shape, "the shape"))
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
            if (dims[i] && vol > INT64_MAX / 4 / dims[i])
                return OX_UNSUP(x, n, "a shape of more than 2^61 elements");
            vol *= dims[i];
        }
        /* One value stored, whatever the size (the onnx wheel's light_*
         * models make every kernel so). */
        o = mica__ox_const_splat(x, type == OX_DOUBLE ? OX_FLOAT : type,
                                 val, (int32_t)r, dims);
        if (o && OUT(0))
            o->name = mica__ox_strdup(x, OUT(0));
        if (o)
            mica__ox_set_out(x, n, 0, o);
        return x->st;
    }
    {
        /* Fill linspace with alpha = value and steps of 0. */
        mica__ox_layer_t *l;
        double beta[MICA_MAX_DIMS] = {0};
        int fl = type == OX_FLOAT || type == OX_FLOAT16;
        const char *t = mica__ox_tensor(x, n, shape);
        if (r == 0)
            return OX_UNSUP(x, n, "a 0-D result known only at run time");
        l = mica__ox_layer(x, n, "Fill", NULL);
        mica__ox_in(x, l, t);
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
        if (o && !fl && type != OX_INT32 && type != OX_INT64)
            o = mica__ox_cast(x, n, o, type, OUT(0));
        else if (o)
            o->type = type;
        if (o)
            mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

/* The integer value a float scalar stands for: a whole constant, or the
 * integer it was cast from; NULL if neither. */
static mica__ox_value_t *int_of(mica__ox_t *x, mica__ox_value_t *v)
{
    if (v->cst) {
        double f = mica__ox_data_f(v->cst, 0);
        int64_t i = (int64_t)f;
        if (f != (double)i || f > 2147483647.0 || f < -2147483648.0)
            return NULL;
        return mica__ox_const_i(x, OX_INT64, &i, 0, NULL);
    }
    return v->from_int && v->from_int->rank == 0 ? v->from_int : NULL;
}

/* Range: values when start, limit and delta are known, else a Fill
 * linspace over a count computed as a shape tensor. */
static mica_status_t op_range(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *s, *l, *d, *o, *cnt;
    int fl;
    int64_t i, count;
    if (mica__ox_need(x, n, 3) != MICA_OK)
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
    {
        /* count = max(-floor_div(start - limit, delta), 0), as [count],
         * in integers where start, limit and delta are integers or
         * integer casts (a Cast of shape values, or whole constants), as
         * exporters write arange over a dimension; else, for a float
         * Range, max(ceil((limit - start) / delta), 0) in its type, as
         * ONNX defines it, cast to int32 (the host computes it). */
        int64_t zero = 0, one = 1;
        mica__ox_value_t *si = fl ? int_of(x, s) : s,
                         *li = fl ? int_of(x, l) : l,
                         *di = fl ? int_of(x, d) : d, *z;
        if (x->st != MICA_OK)
            return x->st;
        z = mica__ox_const_i(x, OX_INT64, &zero, 0, NULL);
        if (!si || !li || !di) {
            cnt = mica__ox_unary(x, n, "ceil", mica__ox_ew(x, n, "div",
                                 mica__ox_ew(x, n, "sub", l, s, NULL), d,
                                 NULL), NULL);
            cnt = cnt ? mica__ox_cast(x, n, cnt, OX_INT64, NULL) : NULL;
            cnt = cnt ? mica__ox_ew(x, n, "max", cnt, z, NULL) : NULL;
        } else {
            cnt = mica__ox_ew(x, n, "floor_div",
                              mica__ox_ew(x, n, "sub", si, li, NULL), di,
                              NULL);
            cnt = cnt ? mica__ox_ew(x, n, "max",
                                    mica__ox_ew(x, n, "sub", z, cnt, NULL),
                                    z, NULL) : NULL;
        }
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
        mica__ox_p_str(x, f, "dtype", fl ? mica_dtype_name(s->dtype)
                                         : "int32");
        o = mica__ox_out(x, f, OUT(0), fl ? s->dtype : MICA_INT32, 1, NULL);
        if (o)
            o->type = s->type;
        mica__ox_set_out(x, n, 0, o);
    }
    return x->st;
}

const mica__ox_op_t mica__ox_ops_shape[] = {
    {"Shape", op_shape, "Shape"},
    {"Size", op_size, "Shape, Reduce"},
    {"ConstantOfShape", op_constant_of_shape, "Constant or Fill"},
    {"Range", op_range, "Constant or Fill"},
    {NULL, NULL, NULL},
};
