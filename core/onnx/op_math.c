/*
 * core/onnx/op_math.c - operators that are formulas over ElementWise,
 * Unary, Activation, Select and Slice layers, as their ONNX function
 * bodies: Gelu, Mod, Shrink, CumSum, OneHot; the windows, as constants.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/*
 * Gelu (opset 20): Activation gelu_erf (approximate "none", x/2 (1 +
 * erf(x / sqrt 2))) or gelu_tanh ("tanh", x/2 (1 + tanh(sqrt(2/pi) (x +
 * 0.044715 x^3)))).
 */
static mica_status_t op_gelu(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *ap = mica__ox_attr_s(x, n, "approximate", "none");
    mica__ox_value_t *v, *t;
    mica__ox_layer_t *l;
    int tanh_ = !strcmp(ap, "tanh");
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (!tanh_ && strcmp(ap, "none"))
        return OX_BAD(x, n, "approximate '%s' (none or tanh)", ap);
    v = IN(0);
    l = mica__ox_layer(x, n, "Activation", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_str(x, l, "type", tanh_ ? "gelu_tanh" : "gelu_erf");
    t = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, v->d);
    if (t) {
        t->type = v->type;
        mica__ox_set_out(x, n, 0, t);
    }
    return x->st;
}

/*
 * Mod: a - q b with q = floor_div(a, b) (fmod 0, integers: the result
 * takes the divisor's sign) or q = a / b truncated (fmod 1, C's fmod:
 * integer div truncates; for floats trunc q = sign(q) floor |q|).
 */
static mica_status_t op_mod(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b, *q;
    int fm = mica__ox_attr_i(n, "fmod", 0) != 0, is_int;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    a = IN(0);
    b = IN(1);
    is_int = mica__ox_is_int(a->type);
    if (!fm && !is_int)
        return OX_BAD(x, n, "fmod 0 on %s (floats need fmod 1)",
                      mica__ox_type_name(a->type));
    q = mica__ox_ew(x, n, fm ? "div" : "floor_div", a, b, NULL);
    if (fm && !is_int)
        q = mica__ox_ew(x, n, "prod", mica__ox_unary(x, n, "sign", q, NULL),
                        mica__ox_unary(x, n, "floor",
                                       mica__ox_unary(x, n, "abs", q, NULL),
                                       NULL), NULL);
    q = mica__ox_ew(x, n, "sub", a, mica__ox_ew(x, n, "prod", q, b, NULL),
                    OUT(0));
    if (q)
        mica__ox_set_out(x, n, 0, q);
    return x->st;
}

/* Select(cond, a, b), the three unsqueezed to one rank. */
static mica__ox_value_t *pick(mica__ox_t *x, mica__ox_node_t *n,
                              mica__ox_value_t *cond, mica__ox_value_t *a,
                              mica__ox_value_t *b, const char *name)
{
    static const int64_t lead[MICA_MAX_DIMS] = {0, 1, 2, 3, 4, 5, 6, 7};
    mica__ox_value_t *v[3];
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    int32_t r = 0, i;
    v[0] = cond;
    v[1] = a;
    v[2] = b;
    for (i = 0; i < 3; i++) {
        if (!v[i])
            return NULL;
        r = v[i]->rank > r ? v[i]->rank : r;
    }
    for (i = 0; i < 3; i++)
        if (v[i] && v[i]->rank < r)
            v[i] = mica__ox_unsqueeze(x, n, v[i], lead, r - v[i]->rank, NULL);
    if (x->st != MICA_OK)
        return NULL;
    l = mica__ox_layer(x, n, "Select", NULL);
    for (i = 0; i < 3; i++)
        mica__ox_in(x, l, mica__ox_tensor(x, n, v[i]));
    o = mica__ox_out(x, l, name, a->dtype, a->rank, a->d);
    if (o)
        o->type = a->type;
    return o;
}

/* Shrink: x + bias below -lambd, x - bias above lambd, else 0. */
static mica_status_t op_shrink(mica__ox_t *x, mica__ox_node_t *n)
{
    double bias = mica__ox_attr_f(n, "bias", 0),
           lambd = mica__ox_attr_f(n, "lambd", 0.5);
    mica__ox_value_t *v, *lo, *hi, *y;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    lo = mica__ox_ew(x, n, "less", v, mica__ox_scalar_like(x, v, -lambd),
                     NULL);
    hi = mica__ox_ew(x, n, "greater", v, mica__ox_scalar_like(x, v, lambd),
                     NULL);
    y = pick(x, n, hi, mica__ox_ew(x, n, "sub", v,
                                   mica__ox_scalar_like(x, v, bias), NULL),
             mica__ox_scalar_like(x, v, 0), NULL);
    y = pick(x, n, lo, mica__ox_ew(x, n, "sum", v,
                                   mica__ox_scalar_like(x, v, bias), NULL),
             y, OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* v moved by `by` along axis a (rank r; by > 0 toward the end, -by
 * first elements zeros; by < 0 toward the start), or reversed along it
 * (rev): a Slice of v's own dims. */
static mica__ox_value_t *along(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *v, int32_t a, int64_t by,
                               int rev, const char *name)
{
    int64_t start[MICA_MAX_DIMS] = {0}, stride[MICA_MAX_DIMS], r = v->rank,
            one = 1;
    mica__ox_value_t *dyn[MICA_MAX_DIMS] = {NULL}, *first;
    int32_t i;
    for (i = 0; i < r; i++)
        stride[i] = 1;
    if (rev) {
        /* from the last element back (a runtime length: its dim - 1) */
        start[a] = v->d[a] - 1;
        stride[a] = -1;
        if (v->d[a] < 0)
            dyn[a] = mica__ox_ew(x, n, "sub", mica__ox_dim(x, n, v, a),
                                 mica__ox_const_i(x, OX_INT64, &one, 1,
                                                  &one), NULL);
    } else {
        start[a] = -by;
    }
    first = mica__ox_vec(x, n, start, dyn, (int32_t)r);
    return x->st == MICA_OK
               ? mica__ox_slice(x, n, v, first, mica__ox_shape_of(x, n, v),
                                mica__ox_const_i(x, OX_INT64, stride, 1, &r),
                                rev ? NULL : "fill", NULL, name)
               : NULL;
}

/*
 * CumSum: the running sums along the axis (a constant, or an input the
 * profile fixes) in ceil(log2 L) steps, each the sum of the values so
 * far and themselves moved by 1, 2, 4, ... (zeros moved in: Hillis and
 * Steele's scan); exclusive moves the result by one more, reverse runs
 * on the axis reversed.  Float sums round in another order than one
 * by one; integers are exact (wrapping as the type does).  The axis'
 * length must be known when the model is imported, or bounded by the
 * profile of the graph input it is.
 */
static mica_status_t op_cumsum(mica__ox_t *x, mica__ox_node_t *n)
{
    int excl = mica__ox_attr_i(n, "exclusive", 0) != 0,
        rev = mica__ox_attr_i(n, "reverse", 0) != 0;
    mica__ox_value_t *v;
    int64_t *ax, a, len, s, lo;
    int32_t count;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    if (!(ax = mica__ox_const_ints(x, n, 1, "the axis", &count)))
        return x->st;
    if (count != 1 || (a = mica__ox_axis(ax[0], v->rank)) < 0)
        return OX_BAD(x, n, "the axis must be one value in [-%d, %d)",
                      (int)v->rank, (int)v->rank);
    /* a runtime length: as many steps as its profile's longest needs
     * (the moves past the length bring zeros) */
    if ((len = v->d[a]) < 0 && !mica__ox_dim_range(x, v, (int32_t)a, &lo,
                                                   &len))
        return OX_UNSUP(x, n, "the summed axis' length known only at run "
                        "time, not from an input's profile");
    if (rev)
        v = along(x, n, v, (int32_t)a, 0, 1, NULL);
    for (s = 1; s < len && x->st == MICA_OK; s *= 2)
        v = mica__ox_ew(x, n, "sum", v, along(x, n, v, (int32_t)a, s, 0,
                                                  NULL), NULL);
    if (excl && x->st == MICA_OK)
        v = along(x, n, v, (int32_t)a, 1, 0, rev ? NULL : OUT(0));
    if (rev && x->st == MICA_OK)
        v = along(x, n, v, (int32_t)a, 0, 1, OUT(0));
    else if (!excl && x->st == MICA_OK)
        v = mica__ox_identity(x, n, v, OUT(0));
    if (v && x->st == MICA_OK)
        mica__ox_set_out(x, n, 0, v);
    return x->st;
}

/*
 * OneHot: Select(equal(indices, the range of depth), on, off), the
 * indices unsqueezed at `axis` and made int32 (a float one truncated; a
 * negative one counts from depth), the range [0, depth) along the new
 * axis.  An index outside [-depth, depth) matches nothing: all off.
 * depth is a constant (or an input the profile fixes).
 */
static mica_status_t op_one_hot(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *idx, *vals, *rng, *on, *off, *eq, *y;
    int64_t axis, depth, shape[MICA_MAX_DIMS], one = 1, zero = 0, i, r;
    int64_t *rv;
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    idx = IN(0);
    vals = IN(2);
    r = idx->rank + 1;
    if (r > MICA_MAX_DIMS)
        return OX_UNSUP(x, n, "more than %d dimensions", MICA_MAX_DIMS);
    if ((axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), (int32_t)r)) <
        0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)r);
    if (!IN(1)->cst || IN(1)->cst->count != 1)
        return OX_UNSUP(x, n, "depth known only at run time");
    depth = (int64_t)mica__ox_data_f(IN(1)->cst, 0);
    if (depth < 1 || depth > MICA__OX_HOST_MAX)
        return OX_BAD(x, n, "depth %lld", (long long)depth);
    if (vals->rank != 1 || vals->d[0] != 2)
        return OX_BAD(x, n, "values must be [off, on]");
    if (!(rv = mica__ox_alloc(x, 8 * (size_t)depth)))
        return x->st;
    for (i = 0; i < depth; i++)
        rv[i] = i;
    for (i = 0; i < r; i++)
        shape[i] = i == axis ? depth : 1;
    rng = mica__ox_const_i(x, OX_INT32, rv, (int32_t)r, shape);
    if (idx->type != OX_INT32)
        idx = mica__ox_cast(x, n, idx, OX_INT32, NULL);
    /* a negative index counts from depth */
    idx = pick(x, n, mica__ox_ew(x, n, "less", idx,
                                 mica__ox_scalar_like(x, idx, 0), NULL),
               mica__ox_ew(x, n, "sum", idx,
                           mica__ox_scalar_like(x, idx, (double)depth), NULL),
               idx, NULL);
    if (x->st != MICA_OK || !idx)
        return x->st;
    idx = mica__ox_unsqueeze(x, n, idx, &axis, 1, NULL);
    eq = mica__ox_ew(x, n, "equal", idx, rng, NULL);
    off = mica__ox_slice(x, n, vals, mica__ox_const_i(x, OX_INT64, &zero, 1,
                                                      &one),
                         mica__ox_const_i(x, OX_INT64, &one, 1, &one), NULL,
                         NULL, NULL, NULL);
    on = mica__ox_slice(x, n, vals, mica__ox_const_i(x, OX_INT64, &one, 1,
                                                     &one),
                        mica__ox_const_i(x, OX_INT64, &one, 1, &one), NULL,
                        NULL, NULL, NULL);
    y = x->st == MICA_OK ? pick(x, n, eq, on, off, OUT(0)) : NULL;
    if (y) {
        /* the output's dims: eq's (on and off broadcast against it) */
        for (i = 0; i < r; i++)
            y->d[i] = eq->d[i];
        y->rank = (int32_t)r;
        mica__ox_set_out(x, n, 0, y);
    }
    return x->st;
}

/*
 * HannWindow, HammingWindow, BlackmanWindow: a constant computed here,
 * a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n in [0, size), N
 * the size (periodic, the default) or the size - 1 (symmetric); the size
 * a constant or an input the profile fixes.
 */
static mica_status_t window(mica__ox_t *x, mica__ox_node_t *n, double a0,
                            double a1, double a2)
{
    int64_t *sz, len, i, type = mica__ox_attr_i(n, "output_datatype", 1);
    int periodic = mica__ox_attr_i(n, "periodic", 1) != 0;
    mica__ox_value_t *o;
    int32_t count;
    double *v, den;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (type != OX_FLOAT && type != OX_FLOAT16 && type != OX_DOUBLE &&
        type != OX_BFLOAT16)
        return OX_UNSUP(x, n, "output_datatype %lld (float types are)",
                        (long long)type);
    if (!(sz = mica__ox_const_ints(x, n, 0, "the size", &count)))
        return x->st;
    if (count != 1 || sz[0] < 0 || sz[0] > MICA__OX_HOST_MAX)
        return OX_BAD(x, n, "the size must be one value in [0, 2^24]");
    len = sz[0];
    den = (double)(periodic ? len : len - 1);
    if (!(v = mica__ox_alloc(x, 8 * (size_t)(len + 1))))
        return x->st;
    for (i = 0; i < len; i++) {
        double t = den > 0 ? 6.283185307179586 * (double)i / den : 0.0;
        v[i] = a0 - a1 * cos(t) + a2 * cos(2.0 * t);
    }
    o = mica__ox_const_f(x, (int32_t)type, v, 1, &len);
    if (o)
        mica__ox_set_out(x, n, 0, mica__ox_named(x, o, OUT(0)));
    return x->st;
}

static mica_status_t op_hann(mica__ox_t *x, mica__ox_node_t *n)
{
    return window(x, n, 0.5, 0.5, 0.0);
}

static mica_status_t op_hamming(mica__ox_t *x, mica__ox_node_t *n)
{
    return window(x, n, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

static mica_status_t op_blackman(mica__ox_t *x, mica__ox_node_t *n)
{
    return window(x, n, 0.42, 0.5, 0.08);
}

const mica__ox_op_t mica__ox_ops_math[] = {
    {"Gelu", op_gelu, "Activation"},
    {"Mod", op_mod, "ElementWise (and Unary)"},
    {"Shrink", op_shrink, "ElementWise, Select"},
    {"CumSum", op_cumsum, "ElementWise, Slice"},
    {"OneHot", op_one_hot, "ElementWise, Select, Slice"},
    {"HannWindow", op_hann, "Constant"},
    {"HammingWindow", op_hamming, "Constant"},
    {"BlackmanWindow", op_blackman, "Constant"},
    {NULL, NULL, NULL},
};
