/*
 * core/onnx/op_quant.c - the integer and quantized operators onto float
 * layers: DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv, as their ONNX definitions compute them,
 * with ElementWise, Unary, Reduce, Identity casts, MatrixMultiply and
 * Convolution (a constant kernel dequantized here into float weights).
 *
 * Integer products are summed in float32: exact while each sum stays
 * within 2^24 (K * 255 * 255 < 2^24, so K up to 258 for uint8 by uint8,
 * 1040 for int8 by int8), within float rounding beyond; a quantized
 * result rounds half to even and saturates as QuantizeLinear does.
 */
#include <config.h>

#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* The range of an integer quantized type, 0 if it is not one. */
static int qrange(int32_t type, double *lo, double *hi)
{
    switch (type) {
    case OX_UINT8: *lo = 0; *hi = 255; return 1;
    case OX_INT8: *lo = -128; *hi = 127; return 1;
    case OX_UINT16: *lo = 0; *hi = 65535; return 1;
    case OX_INT16: *lo = -32768; *hi = 32767; return 1;
    case OX_UINT4: *lo = 0; *hi = 15; return 1;
    case OX_INT4: *lo = -8; *hi = 7; return 1;
    default: return 0;
    }
}

/* The float types QuantizeLinear converts to without rounding to an
 * integer first (the cast rounds to nearest even, saturating as told). */
static int qfloat(int32_t type)
{
    return type == OX_FLOAT8E4M3FN || type == OX_FLOAT8E4M3FNUZ ||
           type == OX_FLOAT8E5M2 || type == OX_FLOAT8E5M2FNUZ ||
           type == OX_FLOAT4E2M1;
}

/* v as float32 (a cast unless it is one). */
static mica__ox_value_t *as_float(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v)
{
    return !v || v->type == OX_FLOAT ? v : mica__ox_cast(x, n, v, OX_FLOAT,
                                                         NULL);
}

/* v as float32, less its zero point zp (NULL: none). */
static mica__ox_value_t *centered(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, mica__ox_value_t *zp)
{
    mica__ox_value_t *f = mica__ox_cast(x, n, v, OX_FLOAT, NULL);
    if (f && zp)
        f = mica__ox_ew(x, n, "sub", f, mica__ox_cast(x, n, zp, OX_FLOAT,
                                                      NULL), NULL);
    return f;
}

/* round(v / scale) + zp, saturated to `type`'s range, as `type`. */
static mica__ox_value_t *requant(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t *v, mica__ox_value_t *scale,
                                 mica__ox_value_t *zp, int32_t type,
                                 const char *name)
{
    double lo, hi;
    if (qfloat(type)) {
        v = mica__ox_ew(x, n, "div", as_float(x, n, v), as_float(x, n, scale),
                        NULL);
        if (v && zp)
            v = mica__ox_ew(x, n, "sum", v, as_float(x, n, zp), NULL);
        return v ? mica__ox_cast_sat(x, n, v, type,
                                     mica__ox_attr_i(n, "saturate", 1) != 0,
                                     name) : NULL;
    }
    if (!qrange(type, &lo, &hi)) {
        OX_UNSUP(x, n, "a quantized type %s (8-, 16- and 4-bit integers, "
                 "float8 and float4 are)", mica__ox_type_name(type));
        return NULL;
    }
    v = mica__ox_ew(x, n, "div", as_float(x, n, v), as_float(x, n, scale),
                    NULL);
    v = v ? mica__ox_unary(x, n, "round", v, NULL) : NULL;
    if (v && zp)
        v = mica__ox_ew(x, n, "sum", v, mica__ox_cast(x, n, zp, OX_FLOAT,
                                                      NULL), NULL);
    v = v ? mica__ox_ew(x, n, "max", v, mica__ox_scalar_like(x, v, lo),
                        NULL) : NULL;
    v = v ? mica__ox_ew(x, n, "min", v, mica__ox_scalar_like(x, v, hi),
                        NULL) : NULL;
    return v ? mica__ox_cast(x, n, v, type, name) : NULL;
}

/* A per-tensor scale or zero point (one element) as 0-D. */
static mica__ox_value_t *scalar(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *v, const char *what)
{
    if (!v)
        return NULL;
    if (mica__ox_volume(v) != 1) {
        OX_UNSUP(x, n, "%s '%s' of more than one element (per tensor only)",
                 what, v->name);
        return NULL;
    }
    return v->rank ? mica__ox_reshape(x, n, v, NULL, 0, NULL) : v;
}

/*
 * DynamicQuantizeLinear: scale = (max(x, 0) - min(x, 0)) / 255 over the
 * whole tensor, zero point round(-min / scale) in [0, 255], y the uint8
 * quantization of x.
 */
static mica_status_t op_dynamic_quantize(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *mn, *mx, *scale, *zpf, *zero;
    int64_t axes[MICA_MAX_DIMS];
    int32_t i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->type != OX_FLOAT)
        return OX_BAD(x, n, "input of type %s (float)",
                      mica__ox_type_name(v->type));
    for (i = 0; i < v->rank; i++)
        axes[i] = i;
    zero = mica__ox_scalar_like(x, v, 0);
    mn = mica__ox_reduce(x, n, "min", v, axes, v->rank, 0, NULL);
    mx = mica__ox_reduce(x, n, "max", v, axes, v->rank, 0, NULL);
    mn = mn ? mica__ox_ew(x, n, "min", mn, zero, NULL) : NULL;
    mx = mx ? mica__ox_ew(x, n, "max", mx, zero, NULL) : NULL;
    scale = mn && mx ? mica__ox_ew(x, n, "sub", mx, mn, NULL) : NULL;
    scale = scale ? mica__ox_ew(x, n, "div", scale,
                                mica__ox_scalar_like(x, v, 255),
                                OUT(1)) : NULL;
    /* zero point: round(0 - min / scale), saturated (a float here). */
    zpf = scale ? mica__ox_ew(x, n, "div", mn, scale, NULL) : NULL;
    zpf = zpf ? mica__ox_ew(x, n, "sub", zero, zpf, NULL) : NULL;
    zpf = zpf ? mica__ox_unary(x, n, "round", zpf, NULL) : NULL;
    zpf = zpf ? mica__ox_ew(x, n, "max", zpf, zero, NULL) : NULL;
    zpf = zpf ? mica__ox_ew(x, n, "min", zpf,
                            mica__ox_scalar_like(x, v, 255), NULL) : NULL;
    if (!zpf)
        return x->st;
    mica__ox_set_out(x, n, 0, requant(x, n, v, scale, zpf, OX_UINT8,
                                      OUT(0)));
    mica__ox_set_out(x, n, 1, scale);
    mica__ox_set_out(x, n, 2, mica__ox_cast(x, n, zpf, OX_UINT8, OUT(2)));
    return x->st;
}

/* A zero point that runs along axis `axis` of a rank-r tensor (1-D of
 * length d), or per tensor: shaped to broadcast against it. */
static mica__ox_value_t *along(mica__ox_t *x, mica__ox_node_t *n,
                               mica__ox_value_t *zp, int32_t axis, int32_t r)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t i;
    if (!zp || mica__ox_volume(zp) == 1)
        return zp ? scalar(x, n, zp, "a zero point") : NULL;
    if (zp->rank != 1 || zp->d[0] < 0) {
        OX_UNSUP(x, n, "scale or zero point '%s' of rank %d (one value, or "
                 "one per row or column; no blocks)", zp->name,
                 (int)zp->rank);
        return NULL;
    }
    for (i = 0; i < r; i++)
        d[i] = i == axis ? zp->d[0] : 1;
    return mica__ox_reshape(x, n, zp, d, r, NULL);
}

/* MatMulInteger: (A - a_zp) (B - b_zp) in int32 (a_zp per row of A or per
 * tensor, b_zp per column of B or per tensor). */
static mica_status_t op_matmul_integer(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b, *y;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    if (IN(0)->rank < 1 || IN(1)->rank < 2)
        return OX_UNSUP(x, n, "inputs of rank %d and %d (A of rank 1 or "
                        "more, B of rank 2 or more)", (int)IN(0)->rank,
                        (int)IN(1)->rank);
    a = centered(x, n, IN(0), along(x, n, IN(2), IN(0)->rank - 2,
                                    IN(0)->rank));
    b = centered(x, n, IN(1), along(x, n, IN(3), IN(1)->rank - 1,
                                    IN(1)->rank));
    y = a && b ? mica__ox_matmul(x, n, a, b, NULL) : NULL;
    y = y ? mica__ox_unary(x, n, "round", y, NULL) : NULL;
    if (y)
        mica__ox_set_out(x, n, 0, mica__ox_cast(x, n, y, OX_INT32, OUT(0)));
    return x->st;
}

/* The float kernel of a constant quantized one: (w - zp) * scale, zp and
 * scale per tensor or per output channel (axis 0); scale NULL is 1. */
static mica__ox_value_t *kernel(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *w, mica__ox_value_t *zp,
                                mica__ox_value_t *scale)
{
    int64_t i, per, c, cnt;
    double *vals;
    mica__ox_value_t *o;
    if (!w->cst || (zp && !zp->cst) || (scale && !scale->cst)) {
        OX_UNSUP(x, n, "a kernel, its zero point or scale known only at "
                 "run time (the Convolution layer takes its kernel as "
                 "weights)");
        return NULL;
    }
    cnt = w->cst->count;
    c = w->rank ? w->d[0] : 1;
    per = c ? cnt / c : 0;
    if ((zp && zp->cst->count != 1 && zp->cst->count != c)
        || (scale && scale->cst->count != 1 && scale->cst->count != c)) {
        OX_BAD(x, n, "a zero point or scale of neither one element nor one "
               "per output channel (%lld)", (long long)c);
        return NULL;
    }
    vals = mica__ox_alloc(x, 8 * (size_t)(cnt + 1));
    for (i = 0; vals && i < cnt; i++) {
        int64_t ch = per ? i / per : 0;
        double z = zp ? mica__ox_data_f(zp->cst, zp->cst->count == 1 ? 0 : ch)
                      : 0,
               s = scale ? mica__ox_data_f(scale->cst, scale->cst->count == 1
                                                       ? 0 : ch) : 1;
        vals[i] = (mica__ox_data_f(w->cst, i) - z) * s;
    }
    o = vals ? mica__ox_const_f(x, OX_FLOAT, vals, w->rank, w->d) : NULL;
    if (o)
        o->name = mica__ox_printf(x, "%s.float", w->name);
    return o;
}

/* ConvInteger: the convolution of x - x_zp with w - w_zp, in int32. */
static mica_status_t op_conv_integer(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *w, *y;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = centered(x, n, IN(0), scalar(x, n, IN(2), "the input's zero point"));
    w = kernel(x, n, IN(1), IN(3), NULL);
    y = v && w ? mica__ox_conv(x, n, v, w, NULL, NULL) : NULL;
    y = y ? mica__ox_unary(x, n, "round", y, NULL) : NULL;
    if (y)
        mica__ox_set_out(x, n, 0, mica__ox_cast(x, n, y, OX_INT32, OUT(0)));
    return x->st;
}

/* QLinearMatMul: quantize((a - a_zp) a_scale (b - b_zp) b_scale). */
static mica_status_t op_qlinear_matmul(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b, *y, *s;
    if (mica__ox_need(x, n, 8) != MICA_OK)
        return x->st;
    a = centered(x, n, IN(0), along(x, n, IN(2), IN(0)->rank - 2,
                                    IN(0)->rank));
    a = a ? mica__ox_ew(x, n, "prod", a, as_float(x, n, along(
                            x, n, IN(1), IN(0)->rank - 2, IN(0)->rank)),
                        NULL) : NULL;
    b = centered(x, n, IN(3), along(x, n, IN(5), IN(3)->rank - 1,
                                    IN(3)->rank));
    b = b ? mica__ox_ew(x, n, "prod", b, as_float(x, n, along(
                            x, n, IN(4), IN(3)->rank - 1, IN(3)->rank)),
                        NULL) : NULL;
    y = a && b ? mica__ox_matmul(x, n, a, b, NULL) : NULL;
    s = scalar(x, n, IN(6), "the output's scale");
    if (y && s)
        mica__ox_set_out(x, n, 0, requant(x, n, y, s, scalar(x, n, IN(7),
                                          "the output's zero point"),
                                          IN(7)->type, OUT(0)));
    return x->st;
}

/* QLinearConv: quantize(conv((x - x_zp) x_scale, (w - w_zp) w_scale) +
 * bias x_scale w_scale). */
static mica_status_t op_qlinear_conv(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *w, *b = NULL, *y, *s, *xs, *ws;
    if (mica__ox_need(x, n, 8) != MICA_OK)
        return x->st;
    xs = scalar(x, n, IN(1), "the input's scale");
    v = centered(x, n, IN(0), scalar(x, n, IN(2), "the input's zero point"));
    v = v && xs ? mica__ox_ew(x, n, "prod", v, xs, NULL) : NULL;
    w = kernel(x, n, IN(3), IN(5), IN(4));
    ws = IN(4);
    if (IN(8) && w && xs) {
        /* The int32 bias in units of x_scale * w_scale (per channel). */
        mica__ox_value_t *bias = IN(8);
        int64_t c = bias->cst ? bias->cst->count : -1, i;
        double *vals;
        if (!bias->cst || !xs->cst || !ws->cst
            || (ws->cst->count != 1 && ws->cst->count != c))
            return OX_UNSUP(x, n, "a bias or scales known only at run time");
        vals = mica__ox_alloc(x, 8 * (size_t)(c + 1));
        for (i = 0; vals && i < c; i++)
            vals[i] = mica__ox_data_f(bias->cst, i) *
                      mica__ox_data_f(xs->cst, 0) *
                      mica__ox_data_f(ws->cst, ws->cst->count == 1 ? 0 : i);
        b = vals ? mica__ox_const_f(x, OX_FLOAT, vals, 1, &c) : NULL;
        if (b)
            b->name = mica__ox_printf(x, "%s.bias", n->name);
    }
    y = v && w ? mica__ox_conv(x, n, v, w, b, NULL) : NULL;
    s = scalar(x, n, IN(6), "the output's scale");
    if (y && s)
        mica__ox_set_out(x, n, 0, requant(x, n, y, s, scalar(x, n, IN(7),
                                          "the output's zero point"),
                                          IN(7)->type, OUT(0)));
    return x->st;
}

mica_status_t mica__ox_qdq_uint8(mica__ox_t *x, mica__ox_node_t *n,
                                 int quantize, int64_t axis)
{
    mica__ox_value_t *v = IN(0), *scale, *zp, *y;
    int32_t r = v->rank, otype = IN(2) ? IN(2)->type : OX_UINT8;
    if (!IN(2) && mica__ox_attr_i(n, "output_dtype", 0) != 0)
        otype = (int32_t)mica__ox_attr_i(n, "output_dtype", 0);
    if (mica__ox_attr_i(n, "block_size", 0) != 0)
        return OX_UNSUP(x, n, "block_size %lld (per tensor or per axis)",
                        (long long)mica__ox_attr_i(n, "block_size", 0));
    if (IN(1)->rank == 1 && IN(1)->d[0] != 1) {
        axis = mica__ox_axis(axis, r);
        if (axis < 0)
            return OX_BAD(x, n, "axis out of range for rank %d", (int)r);
    } else {
        axis = 0;
    }
    scale = along(x, n, IN(1), (int32_t)axis, r);
    zp = along(x, n, IN(2), (int32_t)axis, r);
    if (!scale || (IN(2) && !zp))
        return x->st;
    if (quantize) {
        y = requant(x, n, v, scale, zp, otype, OUT(0));
    } else if (IN(1)->type == OX_FLOAT) {
        y = centered(x, n, v, zp);
        y = y ? mica__ox_ew(x, n, "prod", y, scale, OUT(0)) : NULL;
    } else { /* computed in float32, given in the scale's type */
        y = centered(x, n, v, zp);
        y = y ? mica__ox_ew(x, n, "prod", y, as_float(x, n, scale), NULL)
              : NULL;
        y = y ? mica__ox_cast(x, n, y, IN(1)->type, OUT(0)) : NULL;
    }
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_quant[] = {
    {"DynamicQuantizeLinear", op_dynamic_quantize,
     "Reduce, ElementWise, Unary, Identity"},
    {"MatMulInteger", op_matmul_integer,
     "Identity, ElementWise, MatrixMultiply, Unary"},
    {"ConvInteger", op_conv_integer, "Identity, ElementWise, Convolution"},
    {"QLinearMatMul", op_qlinear_matmul,
     "Identity, ElementWise, MatrixMultiply, Unary"},
    {"QLinearConv", op_qlinear_conv, "Identity, ElementWise, Convolution"},
    {NULL, NULL, NULL},
};
