/*
 * core/onnx/op_nn.c - MatMul and Gemm (MatrixMultiply, ElementWise),
 * PRelu (ParametricReLU), Softmax and LogSoftmax (SoftMax, Unary), LRN,
 * Einsum, QuantizeLinear and DequantizeLinear (Quantize, Dequantize), as
 * TensorRT's parser maps them.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

static int is_float(const mica__ox_value_t *v)
{
    return v->type == OX_FLOAT || v->type == OX_FLOAT16 ||
           v->type == OX_BFLOAT16;
}

/* ---- matrix products ---------------------------------------------------- */

static mica__ox_value_t *matmul(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *a, mica__ox_value_t *b,
                                const char *op_a, const char *op_b,
                                const char *name);

mica__ox_value_t *mica__ox_matmul(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *a, mica__ox_value_t *b,
                                  const char *name)
{
    return matmul(x, n, a, b, a->rank == 1 ? "vector" : "none",
                  b->rank == 1 ? "vector" : "none", name);
}

static mica__ox_value_t *matmul(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *a, mica__ox_value_t *b,
                                const char *op_a, const char *op_b,
                                const char *name)
{
    int va = !strcmp(op_a, "vector"), vb = !strcmp(op_b, "vector");
    int32_t ba = a->rank - (va ? 1 : 2), bb = b->rank - (vb ? 1 : 2), i, r = 0;
    int64_t axes[MICA_MAX_DIMS], od[MICA_MAX_DIMS];
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    if (ba < 0 || bb < 0) {
        OX_BAD(x, n, "inputs of rank %d and %d", (int)a->rank, (int)b->rank);
        return NULL;
    }
    for (i = 0; i < MICA_MAX_DIMS; i++)
        axes[i] = i;
    if (ba < bb)
        a = mica__ox_unsqueeze(x, n, a, axes, bb - ba, NULL);
    else if (bb < ba)
        b = mica__ox_unsqueeze(x, n, b, axes, ba - bb, NULL);
    if (!a || !b)
        return NULL;
    ba = ba > bb ? ba : bb;
    for (i = 0; i < ba; i++) {
        int64_t p = a->d[i], q = b->d[i];
        od[r++] = p == 1 ? q : q == 1 ? p : p < 0 ? q : p;
    }
    if (!va)
        od[r++] = a->d[a->rank - (strcmp(op_a, "transpose") ? 2 : 1)];
    if (!vb)
        od[r++] = b->d[b->rank - (strcmp(op_b, "transpose") ? 1 : 2)];
    l = mica__ox_layer(x, n, "MatrixMultiply", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, a));
    mica__ox_in(x, l, mica__ox_tensor(x, n, b));
    if (strcmp(op_a, "none"))
        mica__ox_p_str(x, l, "op_a", op_a);
    if (strcmp(op_b, "none"))
        mica__ox_p_str(x, l, "op_b", op_b);
    o = mica__ox_out(x, l, name, a->dtype, r, od);
    if (o)
        o->type = a->type;
    return o;
}

static mica_status_t op_matmul(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    a = IN(0);
    b = IN(1);
    if (a->rank < 1 || b->rank < 1)
        return OX_BAD(x, n, "0-D inputs");
    mica__ox_set_out(x, n, 0, matmul(x, n, a, b,
                                     a->rank == 1 ? "vector" : "none",
                                     b->rank == 1 ? "vector" : "none",
                                     OUT(0)));
    return x->st;
}

/* A constant float value times f (a new constant of the same type). */
static mica__ox_value_t *scaled(mica__ox_t *x, mica__ox_value_t *v, double f)
{
    double *vals = mica__ox_alloc(x, 8 * (size_t)(v->cst->count + 1));
    int64_t i;
    mica__ox_value_t *o;
    for (i = 0; vals && i < v->cst->count; i++)
        vals[i] = mica__ox_data_f(v->cst, i) * f;
    o = vals ? mica__ox_const_f(x, v->type, vals, v->rank, v->d) : NULL;
    if (o)
        o->name = v->name;
    return o;
}

/* Gemm: MatrixMultiply with transposes; alpha and beta scale the
 * constant B and C where they are constants, else an ElementWise prod. */
static mica_status_t op_gemm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *a, *b, *c, *y;
    double alpha = mica__ox_attr_f(n, "alpha", 1.0),
           beta = mica__ox_attr_f(n, "beta", 1.0);
    int ta = mica__ox_attr_i(n, "transA", 0) != 0,
        tb = mica__ox_attr_i(n, "transB", 0) != 0;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    a = IN(0);
    b = IN(1);
    c = IN(2);
    if (a->rank != 2 || b->rank != 2)
        return OX_BAD(x, n, "A and B must be 2-D");
    if (alpha != 1 && b->cst && is_float(b)) {
        b = scaled(x, b, alpha);
        alpha = 1;
    }
    y = matmul(x, n, a, b, ta ? "transpose" : "none",
               tb ? "transpose" : "none",
               alpha == 1 && !(c && beta != 0) ? OUT(0) : NULL);
    if (y && alpha != 1)
        y = mica__ox_ew(x, n, "prod", y, mica__ox_scalar_like(x, y, alpha),
                        c && beta != 0 ? NULL : OUT(0));
    if (y && c && beta != 0) {
        if (beta != 1)
            c = c->cst ? scaled(x, c, beta)
                       : mica__ox_ew(x, n, "prod", c,
                                     mica__ox_scalar_like(x, c, beta), NULL);
        if (c)
            y = mica__ox_ew(x, n, "sum", y, c, OUT(0));
    }
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* PRelu: the slope broadcasts from the right; ParametricReLU takes it at
 * x's rank. */
static mica_status_t op_prelu(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *s, *o;
    mica__ox_layer_t *l;
    int64_t axes[MICA_MAX_DIMS];
    int32_t i;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    s = IN(1);
    if (s->rank > v->rank)
        return OX_BAD(x, n, "the slope has a higher rank than the input");
    for (i = 0; i < v->rank - s->rank; i++)
        axes[i] = i;
    /* Before opset 7 a 1-D slope is per channel (axis 1), not numpy's
     * broadcast from the last axis. */
    if (n->opset < 7 && s->rank == 1 && v->rank >= 2 && s->d[0] != 1)
        for (i = 1; i < v->rank - 1; i++)
            axes[i] = i + 1;
    if (s->rank < v->rank)
        s = mica__ox_unsqueeze(x, n, s, axes, v->rank - s->rank, NULL);
    if (s && s->type != v->type)
        s = mica__ox_cast(x, n, s, v->type, NULL);
    if (!s)
        return x->st;
    l = mica__ox_layer(x, n, "ParametricReLU", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_in(x, l, mica__ox_tensor(x, n, s));
    o = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, v->d);
    if (o)
        o->type = v->type;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

/* ---- softmax, LRN ----------------------------------------------------------- */

mica__ox_value_t *mica__ox_softmax(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, int64_t axis,
                                   const char *name)
{
    mica__ox_layer_t *l = mica__ox_layer(x, n, "SoftMax", NULL);
    mica__ox_value_t *o;
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_int(x, l, "axis", axis);
    o = mica__ox_out(x, l, name, v->dtype, v->rank, v->d);
    if (o)
        o->type = v->type;
    return o;
}

/*
 * Softmax over one axis (opset 13), or, before opset 13, over everything
 * from `axis` on: the input seen as 2-D [outer, inner], then reshaped
 * back.  LogSoftmax adds a log (as TensorRT's parser).
 */
static mica_status_t softmax(mica__ox_t *x, mica__ox_node_t *n, int log)
{
    mica__ox_value_t *v, *y;
    int64_t axis;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_attr_i(n, "axis", n->opset >= 13 ? -1 : 1);
    axis = mica__ox_axis(axis, v->rank ? v->rank : 1);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    if (v->rank == 0)
        return OX_UNSUP(x, n, "a 0-D input");
    if (n->opset >= 13 || axis == v->rank - 1) {
        y = mica__ox_softmax(x, n, v, axis, log ? NULL : OUT(0));
    } else {
        int64_t d[2] = {1, 1};
        int32_t i;
        mica__ox_value_t *flat;
        for (i = 0; i < v->rank; i++) {
            int64_t *p = i < axis ? &d[0] : &d[1];
            *p = *p < 0 || v->d[i] < 0 ? -1 : *p * v->d[i];
        }
        if (d[0] < 0 && d[1] < 0)
            return OX_UNSUP(x, n, "flattening two sides known only at run "
                            "time");
        flat = mica__ox_reshape(x, n, v, d, 2, NULL);
        y = flat ? mica__ox_softmax(x, n, flat, 1, NULL) : NULL;
        if (y && mica__ox_dims_known(v))
            y = mica__ox_reshape(x, n, y, v->d, v->rank, log ? NULL : OUT(0));
        else if (y)
            y = mica__ox_reshape_t(x, n, y, mica__ox_shape_of(x, n, v), 0,
                                   log ? NULL : OUT(0));
    }
    if (y && log)
        y = mica__ox_unary(x, n, "log", y, OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

static mica_status_t op_softmax(mica__ox_t *x, mica__ox_node_t *n)
{
    return softmax(x, n, 0);
}

static mica_status_t op_log_softmax(mica__ox_t *x, mica__ox_node_t *n)
{
    return softmax(x, n, 1);
}

static mica_status_t op_lrn(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *o;
    mica__ox_layer_t *l;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (!mica__ox_attr(n, "size"))
        return OX_BAD(x, n, "no 'size' attribute");
    l = mica__ox_layer(x, n, "LRN", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_int(x, l, "window", mica__ox_attr_i(n, "size", 1));
    mica__ox_p_float(x, l, "alpha", mica__ox_attr_f(n, "alpha", 0.0001));
    mica__ox_p_float(x, l, "beta", mica__ox_attr_f(n, "beta", 0.75));
    mica__ox_p_float(x, l, "k", mica__ox_attr_f(n, "bias", 1.0));
    o = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, v->d);
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

/* ---- Einsum ---------------------------------------------------------------- */

static mica_status_t op_einsum(mica__ox_t *x, mica__ox_node_t *n)
{
    const char *eq = mica__ox_attr_s(x, n, "equation", NULL), *p, *arrow;
    int64_t size[128], od[MICA_MAX_DIMS];
    int count[128] = {0};
    int32_t term = 0, pos = 0, r = 0, i;
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    char spaced[256];

    if (!eq)
        return OX_BAD(x, n, "no equation");
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    if (n->nb_in > 2)
        return OX_UNSUP(x, n, "%d inputs (the Einsum layer takes one or two)",
                        (int)n->nb_in);
    if (strstr(eq, "..."))
        return OX_UNSUP(x, n, "ellipses in the equation");
    for (i = 0; i < 128; i++)
        size[i] = -1;
    arrow = strstr(eq, "->");
    for (p = eq; *p && (!arrow || p < arrow); p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == ',') {
            if (n->in[term] && pos != n->in[term]->rank)
                return OX_BAD(x, n, "term %d has %d letters for rank %d",
                              (int)term, (int)pos, (int)n->in[term]->rank);
            term++;
            pos = 0;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            if (term >= n->nb_in || pos >= n->in[term]->rank)
                return OX_BAD(x, n, "the equation does not fit the inputs");
            if (n->in[term]->d[pos] >= 0)
                size[ch] = n->in[term]->d[pos];
            count[ch]++;
            pos++;
        } else if (ch != ' ') {
            return OX_BAD(x, n, "character '%c' in the equation", ch);
        }
    }
    if (arrow) {
        for (p = arrow + 2; *p; p++)
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
                if (r == MICA_MAX_DIMS)
                    return OX_UNSUP(x, n, "more than %d output axes",
                                    MICA_MAX_DIMS);
                od[r++] = size[(unsigned char)*p];
            }
    } else {
        for (i = 'A'; i <= 'z'; i++)
            if (count[i] == 1 && r < MICA_MAX_DIMS)
                od[r++] = size[i];
    }
    /* The equation as given, without spaces. */
    for (p = eq, i = 0; *p && i < (int32_t)sizeof spaced - 1; p++)
        if (*p != ' ')
            spaced[i++] = *p;
    spaced[i] = '\0';
    l = mica__ox_layer(x, n, "Einsum", NULL);
    for (i = 0; i < n->nb_in; i++)
        mica__ox_in(x, l, mica__ox_tensor(x, n, n->in[i]));
    mica__ox_p_str(x, l, "equation", mica__ox_strdup(x, spaced));
    o = mica__ox_out(x, l, OUT(0), n->in[0]->dtype, r, od);
    if (o)
        o->type = n->in[0]->type;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

/* ---- quantization --------------------------------------------------------- */

static mica_status_t qdq(mica__ox_t *x, mica__ox_node_t *n, int quantize)
{
    mica__ox_value_t *v, *scale, *zp, *o;
    mica__ox_layer_t *l;
    int64_t axis = mica__ox_attr_i(n, "axis", 1);
    int32_t otype;
    mica_dtype_t od;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    scale = IN(1);
    zp = IN(2);
    /* Other types than int8 (the Quantize and Dequantize layers'),
     * scales other than float32 or a block size: their formula in
     * float layers (op_quant.c). */
    if ((quantize && (!zp || zp->type != OX_INT8))
        || (!quantize && v->type != OX_INT8) || scale->type != OX_FLOAT
        || mica__ox_attr_i(n, "block_size", 0) != 0)
        return mica__ox_qdq_uint8(x, n, quantize, axis);
    if (scale->rank > 1)
        return OX_UNSUP(x, n, "a scale of rank %d (0-D or 1-D)",
                        (int)scale->rank);
    /* One element is per tensor, whatever its rank (as ONNX Runtime
     * reads it). */
    if (scale->rank == 1 && scale->d[0] == 1) {
        scale = mica__ox_reshape(x, n, scale, NULL, 0, NULL);
        if (zp && zp->rank == 1 && zp->d[0] == 1)
            zp = mica__ox_reshape(x, n, zp, NULL, 0, NULL);
        if (!scale || (zp && !zp))
            return x->st;
    }
    l = mica__ox_layer(x, n, quantize ? "Quantize" : "Dequantize", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_in(x, l, mica__ox_tensor(x, n, scale));
    if (zp)
        mica__ox_in(x, l, mica__ox_tensor(x, n, zp));
    if (scale->rank == 1) {
        axis = mica__ox_axis(axis, v->rank);
        if (axis < 0)
            return OX_BAD(x, n, "axis out of range for rank %d",
                          (int)v->rank);
        mica__ox_p_int(x, l, "axis", axis);
    }
    otype = quantize ? (zp ? zp->type : OX_UINT8) : scale->type;
    if (mica__ox_type_mica(otype, &od) != 0)
        return OX_UNSUP(x, n, "output type %s", mica__ox_type_name(otype));
    o = mica__ox_out(x, l, OUT(0), od, v->rank, v->d);
    if (o)
        o->type = otype;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_quantize(mica__ox_t *x, mica__ox_node_t *n)
{
    return qdq(x, n, 1);
}

static mica_status_t op_dequantize(mica__ox_t *x, mica__ox_node_t *n)
{
    return qdq(x, n, 0);
}

const mica__ox_op_t mica__ox_ops_nn[] = {
    {"MatMul", op_matmul, "MatrixMultiply"},
    {"Gemm", op_gemm, "MatrixMultiply, ElementWise"},
    {"PRelu", op_prelu, "ParametricReLU"},
    {"Softmax", op_softmax, "SoftMax"},
    {"LogSoftmax", op_log_softmax, "SoftMax, Unary"},
    {"LRN", op_lrn, "LRN"},
    {"Einsum", op_einsum, "Einsum"},
    {"QuantizeLinear", op_quantize, "Quantize"},
    {"DequantizeLinear", op_dequantize, "Dequantize"},
    {NULL, NULL, NULL},
};
