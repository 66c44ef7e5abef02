/*
 * core/onnx/op_nn.c - the network operators: Conv, ConvTranspose
 * (Convolution, Deconvolution), MaxPool, AveragePool (Pooling), MatMul,
 * Gemm (MatrixMultiply, ElementWise), PRelu (ParametricReLU), Softmax,
 * LogSoftmax (SoftMax, Unary), LRN, the normalizations (element-wise
 * arithmetic with Reduce), Resize and Upsample (Resize), TopK, ArgMax,
 * ArgMin (TopK), Einsum, QuantizeLinear, DequantizeLinear.  Params follow
 * TensorRT's parser; 1-D convolutions and pools get a trailing axis of 1,
 * as there.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
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

static int is_float(const mica__ox_value_t *v)
{
    return v->type == OX_FLOAT || v->type == OX_FLOAT16 ||
           v->type == OX_BFLOAT16;
}

/* ---- windows: kernel, strides, dilations, pads ------------------------- */

typedef struct window {
    int32_t nd;                  /* spatial axes, 2 or 3 after unsqueezing */
    int32_t unsq;                /* 1: a 1-D op made 2-D */
    int64_t k[3], s[3], d[3], pre[3], post[3], out[3];
} window_t;

/*
 * The spatial window of node n over input v (rank 3 to 5) with kernel
 * `kernel` (nd values): strides, dilations, explicit or automatic pads,
 * and the output's spatial length where known.
 */
static mica_status_t window(mica__ox_t *x, mica__ox_node_t *n,
                            const mica__ox_value_t *v, const int64_t *kernel,
                            int32_t nd, int transposed, window_t *w)
{
    const int64_t *a;
    int32_t i, k;
    const char *pad = mica__ox_attr_s(x, n, "auto_pad", "NOTSET");

    memset(w, 0, sizeof *w);
    if (nd < 1 || nd > 3 || v->rank != nd + 2)
        return OX_UNSUP(x, n, "%d spatial axes on an input of rank %d (1, "
                        "2 or 3 spatial axes are supported)", (int)nd,
                        (int)v->rank);
    w->nd = nd;
    for (i = 0; i < nd; i++) {
        w->k[i] = kernel[i];
        w->s[i] = w->d[i] = 1;
    }
    if ((k = mica__ox_attr_ints(n, "strides", &a)) >= 0) {
        if (k != nd)
            return OX_BAD(x, n, "%d strides for %d spatial axes", (int)k,
                          (int)nd);
        for (i = 0; i < nd; i++)
            w->s[i] = a[i];
    }
    if ((k = mica__ox_attr_ints(n, "dilations", &a)) >= 0) {
        if (k != nd)
            return OX_BAD(x, n, "%d dilations for %d spatial axes", (int)k,
                          (int)nd);
        for (i = 0; i < nd; i++)
            w->d[i] = a[i];
    }
    for (i = 0; i < nd; i++)
        if (w->s[i] < 1 || w->d[i] < 1 || w->k[i] < 1)
            return OX_BAD(x, n, "kernel, strides and dilations must be "
                          ">= 1");
    if ((k = mica__ox_attr_ints(n, "pads", &a)) >= 0) {
        if (k != 2 * nd)
            return OX_BAD(x, n, "%d pads for %d spatial axes", (int)k,
                          (int)nd);
        for (i = 0; i < nd; i++) {
            w->pre[i] = a[i];
            w->post[i] = a[nd + i];
        }
    }
    if (!strcmp(pad, "SAME_UPPER") || !strcmp(pad, "SAME_LOWER")) {
        for (i = 0; i < nd; i++) {
            int64_t in = v->d[2 + i], out, total, ek;
            if (in < 0)
                return OX_UNSUP(x, n, "auto_pad %s over a spatial axis "
                                "known only at run time", pad);
            ek = (w->k[i] - 1) * w->d[i] + 1;
            if (transposed) {
                out = in * w->s[i];
                total = w->s[i] * (in - 1) + ek - out;
            } else {
                out = (in + w->s[i] - 1) / w->s[i];
                total = (out - 1) * w->s[i] + ek - in;
            }
            total = total < 0 ? 0 : total;
            if (pad[5] == 'U') {
                w->pre[i] = total / 2;
                w->post[i] = total - total / 2;
            } else {
                w->pre[i] = total - total / 2;
                w->post[i] = total / 2;
            }
        }
    } else if (!strcmp(pad, "VALID")) {
        for (i = 0; i < nd; i++)
            w->pre[i] = w->post[i] = 0;
    } else if (strcmp(pad, "NOTSET")) {
        return OX_BAD(x, n, "auto_pad '%s'", pad);
    }
    for (i = 0; i < nd; i++) {
        int64_t in = v->d[2 + i], ek = (w->k[i] - 1) * w->d[i] + 1;
        w->out[i] = in < 0 ? -1
                    : transposed ? w->s[i] * (in - 1) + ek - w->pre[i]
                                   - w->post[i]
                    : (in + w->pre[i] + w->post[i] - ek) / w->s[i] + 1;
    }
    if (nd == 1) {
        w->nd = 2;
        w->unsq = 1;
        w->k[1] = w->s[1] = w->d[1] = 1;
        w->out[1] = 1;
    }
    return MICA_OK;
}

/* The window as params: padding (symmetric) or pre/post padding. */
static void window_params(mica__ox_t *x, mica__ox_layer_t *l,
                          const window_t *w, const char *ksize, int dil)
{
    int32_t i, sym = 1;
    mica__ox_p_ints(x, l, ksize, w->k, w->nd);
    mica__ox_p_ints(x, l, "stride", w->s, w->nd);
    for (i = 0; i < w->nd; i++)
        sym &= w->pre[i] == w->post[i];
    if (sym) {
        mica__ox_p_ints(x, l, "padding", w->pre, w->nd);
    } else {
        mica__ox_p_ints(x, l, "pre_padding", w->pre, w->nd);
        mica__ox_p_ints(x, l, "post_padding", w->post, w->nd);
    }
    if (dil)
        mica__ox_p_ints(x, l, "dilation", w->d, w->nd);
}

/* v with a trailing axis of 1 (a 1-D op made 2-D). */
static mica__ox_value_t *trail1(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *v)
{
    int64_t axis = v->rank;
    return mica__ox_unsqueeze(x, n, v, &axis, 1, NULL);
}

/* ---- convolutions ----------------------------------------------------------- */

static mica_status_t conv(mica__ox_t *x, mica__ox_node_t *n, int transposed)
{
    mica__ox_value_t *v, *wv, *bv, *o;
    window_t w;
    int64_t group = mica__ox_attr_i(n, "group", 1), kernel[3], maps, od[5];
    const int64_t *ks;
    int32_t i, nk;
    mica__ox_layer_t *l;
    const char *kw, *bw = NULL, *t;
    mica_dims_t kd;

    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    wv = IN(1);
    bv = IN(2);
    if (!wv->cst)
        return OX_UNSUP(x, n, "a kernel known only at run time (the %s "
                        "layer takes its kernel as weights)",
                        transposed ? "Deconvolution" : "Convolution");
    if (bv && !bv->cst)
        return OX_UNSUP(x, n, "a bias known only at run time");
    if (wv->rank < 3 || wv->rank > 5 || wv->rank != v->rank)
        return OX_BAD(x, n, "kernel of rank %d for an input of rank %d",
                      (int)wv->rank, (int)v->rank);
    if (group < 1)
        return OX_BAD(x, n, "group %lld", (long long)group);
    nk = wv->rank - 2;
    if (mica__ox_attr_ints(n, "kernel_shape", &ks) == nk)
        for (i = 0; i < nk; i++)
            kernel[i] = ks[i];
    else
        for (i = 0; i < nk; i++)
            kernel[i] = wv->d[2 + i];
    if (window(x, n, v, kernel, nk, transposed, &w) != MICA_OK)
        return x->st;
    maps = transposed ? wv->d[1] * group : wv->d[0];
    if (transposed) {
        const int64_t *a;
        int32_t k;
        int64_t op[3] = {0, 0, 0};
        if ((k = mica__ox_attr_ints(n, "output_padding", &a)) >= 0) {
            if (k != nk)
                return OX_BAD(x, n, "%d output_padding values for %d axes",
                              (int)k, (int)nk);
            for (i = 0; i < nk; i++)
                op[i] = a[i];
        }
        if ((k = mica__ox_attr_ints(n, "output_shape", &a)) >= 0) {
            const char *pad = mica__ox_attr_s(x, n, "auto_pad", "NOTSET");
            if (k != nk)
                return OX_BAD(x, n, "%d output_shape values for %d axes",
                              (int)k, (int)nk);
            for (i = 0; i < nk; i++) {
                int64_t in = v->d[2 + i], total;
                if (in < 0)
                    return OX_UNSUP(x, n, "output_shape over an axis known "
                                    "only at run time");
                total = w.s[i] * (in - 1) + op[i] + (w.k[i] - 1) * w.d[i] +
                        1 - a[i];
                if (!strcmp(pad, "SAME_UPPER")) {
                    w.pre[i] = total / 2;
                    w.post[i] = total - total / 2;
                } else {
                    w.pre[i] = total - total / 2;
                    w.post[i] = total / 2;
                }
                w.out[i] = a[i];
                op[i] = 0;
            }
        }
        /* TensorRT's parser: the output padding shortens the padding at
         * the end (a negative one extends the output). */
        for (i = 0; i < nk; i++) {
            w.post[i] -= op[i];
            if (w.out[i] >= 0)
                w.out[i] += op[i];
        }
    }
    kd = wv->cst->dims;
    if (w.unsq)
        kd.d[kd.nb_dims++] = 1;
    kw = mica__ox_weights_add(x, n, wv->name, wv->cst, v->dtype, &kd,
                              "the kernel");
    if (bv)
        bw = mica__ox_value_weights(x, n, bv);
    if (w.unsq)
        v = trail1(x, n, v);
    if (!v || x->st != MICA_OK)
        return x->st;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, transposed ? "Deconvolution" : "Convolution",
                       NULL);
    mica__ox_in(x, l, t);
    mica__ox_p_int(x, l, "num_output_maps", maps);
    window_params(x, l, &w, "kernel_size", 1);
    if (group != 1)
        mica__ox_p_int(x, l, "groups", group);
    mica__ox_p_weights(x, l, "kernel", &kw, 1, 0);
    if (bw)
        mica__ox_p_weights(x, l, "bias", &bw, 1, 0);
    od[0] = v->d[0];
    od[1] = maps;
    for (i = 0; i < w.nd; i++)
        od[2 + i] = w.out[i];
    o = mica__ox_out(x, l, w.unsq ? NULL : OUT(0), v->dtype, w.nd + 2, od);
    if (o && w.unsq) {
        int64_t axis = 3;
        o = mica__ox_squeeze(x, n, o, &axis, 1, OUT(0));
    }
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_conv(mica__ox_t *x, mica__ox_node_t *n)
{
    return conv(x, n, 0);
}

static mica_status_t op_conv_transpose(mica__ox_t *x, mica__ox_node_t *n)
{
    return conv(x, n, 1);
}

/* ---- pooling --------------------------------------------------------------- */

static mica_status_t pool(mica__ox_t *x, mica__ox_node_t *n, int avg)
{
    mica__ox_value_t *v, *o;
    const int64_t *ks;
    int32_t nk, i;
    window_t w;
    mica__ox_layer_t *l;
    int64_t od[5];
    int include = mica__ox_attr_i(n, "count_include_pad", 0) != 0;

    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (OUT(1))
        return OX_UNSUP(x, n, "the Indices output");
    nk = mica__ox_attr_ints(n, "kernel_shape", &ks);
    if (nk < 1)
        return OX_BAD(x, n, "no kernel_shape");
    if (window(x, n, v, ks, nk, 0, &w) != MICA_OK)
        return x->st;
    for (i = 0; i < w.nd; i++)
        if (w.d[i] != 1)
            return OX_UNSUP(x, n, "dilations (the Pooling layer has none)");
    if (mica__ox_attr_i(n, "ceil_mode", 0)) {
        /* Round the output up by padding the end; a last window that
         * would start in the padding is dropped (as ONNX Runtime). */
        for (i = 0; i < nk; i++) {
            int64_t in = v->d[2 + i], span, out, extra;
            if (in < 0)
                return OX_UNSUP(x, n, "ceil_mode over an axis known only "
                                "at run time");
            span = in + w.pre[i] + w.post[i] - w.k[i];
            out = (span + w.s[i] - 1) / w.s[i] + 1;
            if ((out - 1) * w.s[i] >= in + w.pre[i])
                out--;
            extra = (out - 1) * w.s[i] + w.k[i] - (in + w.pre[i] + w.post[i]);
            if (extra > 0) {
                if (avg && include)
                    return OX_UNSUP(x, n, "ceil_mode with count_include_pad"
                                    " where the last window overhangs");
                w.post[i] += extra;
            }
            w.out[i] = out;
        }
    }
    if (w.unsq)
        v = trail1(x, n, v);
    if (!v)
        return x->st;
    l = mica__ox_layer(x, n, "Pooling", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_str(x, l, "type", avg ? "average" : "max");
    {
        window_t pw = w;
        window_params(x, l, &pw, "window_size", 0);
    }
    if (avg)
        mica__ox_p_bool(x, l, "average_count_excludes_padding", !include);
    od[0] = v->d[0];
    od[1] = v->d[1];
    for (i = 0; i < w.nd; i++)
        od[2 + i] = w.out[i];
    o = mica__ox_out(x, l, w.unsq ? NULL : OUT(0), v->dtype, w.nd + 2, od);
    if (o && w.unsq) {
        int64_t axis = 3;
        o = mica__ox_squeeze(x, n, o, &axis, 1, OUT(0));
    }
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_max_pool(mica__ox_t *x, mica__ox_node_t *n)
{
    return pool(x, n, 0);
}

static mica_status_t op_average_pool(mica__ox_t *x, mica__ox_node_t *n)
{
    return pool(x, n, 1);
}

/* ---- matrix products ---------------------------------------------------- */

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
    if (need(x, n, 2) != MICA_OK)
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
    if (need(x, n, 2) != MICA_OK)
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
    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    s = IN(1);
    if (s->rank > v->rank)
        return OX_BAD(x, n, "the slope has a higher rank than the input");
    for (i = 0; i < v->rank - s->rank; i++)
        axes[i] = i;
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

static mica__ox_value_t *softmax_layer(mica__ox_t *x, mica__ox_node_t *n,
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
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_attr_i(n, "axis", n->opset >= 13 ? -1 : 1);
    axis = mica__ox_axis(axis, v->rank ? v->rank : 1);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    if (v->rank == 0)
        return OX_UNSUP(x, n, "a 0-D input");
    if (n->opset >= 13 || axis == v->rank - 1) {
        y = softmax_layer(x, n, v, axis, log ? NULL : OUT(0));
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
        y = flat ? softmax_layer(x, n, flat, 1, NULL) : NULL;
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
    if (need(x, n, 1) != MICA_OK)
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

/* ---- normalizations ----------------------------------------------------- */

/* A per-channel value [C] reshaped to [C, 1, ...] for rank r (axis 1). */
static mica__ox_value_t *per_channel(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *c, int32_t r)
{
    int64_t d[MICA_MAX_DIMS];
    int32_t i;
    if (!c)
        return NULL;
    if (c->rank != 1) {
        OX_BAD(x, n, "a per-channel input of rank %d", (int)c->rank);
        return NULL;
    }
    d[0] = c->d[0];
    for (i = 1; i < r - 1; i++)
        d[i] = 1;
    return mica__ox_reshape(x, n, c, d, r - 1, NULL);
}

/* BatchNormalization (inference): y = x * s + b, folded where scale, bias,
 * mean and variance are constants, else computed as written. */
static mica_status_t op_batch_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *sc, *bi, *me, *va, *s, *b, *y;
    double eps = mica__ox_attr_f(n, "epsilon", 1e-5);
    int64_t c, i;
    if (need(x, n, 5) != MICA_OK)
        return x->st;
    if (mica__ox_attr_i(n, "training_mode", 0) || OUT(1) || OUT(2))
        return OX_UNSUP(x, n, "training mode (only inference)");
    v = IN(0);
    sc = IN(1);
    bi = IN(2);
    me = IN(3);
    va = IN(4);
    if (v->rank < 2)
        return OX_BAD(x, n, "an input of rank %d", (int)v->rank);
    c = sc->rank == 1 ? sc->d[0] : -1;
    if (sc->cst && bi->cst && me->cst && va->cst && c >= 0
        && bi->cst->count == c && me->cst->count == c && va->cst->count == c) {
        double *ws = mica__ox_alloc(x, 8 * (size_t)(c + 1)),
               *wb = mica__ox_alloc(x, 8 * (size_t)(c + 1));
        for (i = 0; ws && wb && i < c; i++) {
            ws[i] = mica__ox_data_f(sc->cst, i) /
                    sqrt(mica__ox_data_f(va->cst, i) + eps);
            wb[i] = mica__ox_data_f(bi->cst, i) -
                    mica__ox_data_f(me->cst, i) * ws[i];
        }
        s = ws ? mica__ox_const_f(x, v->type, ws, 1, &c) : NULL;
        b = wb ? mica__ox_const_f(x, v->type, wb, 1, &c) : NULL;
        if (s)
            s->name = mica__ox_printf(x, "%s.scale", n->name);
        if (b)
            b->name = mica__ox_printf(x, "%s.shift", n->name);
        s = per_channel(x, n, s, v->rank);
        b = per_channel(x, n, b, v->rank);
        y = s && b ? mica__ox_ew(x, n, "prod", v, s, NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "sum", y, b, OUT(0)) : NULL;
    } else {
        mica__ox_value_t *den;
        den = mica__ox_ew(x, n, "sum", per_channel(x, n, va, v->rank),
                          mica__ox_scalar_like(x, v, eps), NULL);
        den = den ? mica__ox_unary(x, n, "sqrt", den, NULL) : NULL;
        y = den ? mica__ox_ew(x, n, "sub", v,
                              per_channel(x, n, me, v->rank), NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "div", y, den, NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "prod", y, per_channel(x, n, sc, v->rank),
                            NULL) : NULL;
        y = y ? mica__ox_ew(x, n, "sum", y, per_channel(x, n, bi, v->rank),
                            OUT(0)) : NULL;
    }
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* (v - mean) / sqrt(var + eps) over `axes`; mean and 1/std if asked. */
static mica__ox_value_t *normalize(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *v, const int64_t *axes,
                                   int32_t nb, double eps,
                                   mica__ox_value_t **mean,
                                   mica__ox_value_t **inv)
{
    mica__ox_value_t *m, *d, *var, *is;
    m = mica__ox_reduce(x, n, "avg", v, axes, nb, 1, NULL);
    d = m ? mica__ox_ew(x, n, "sub", v, m, NULL) : NULL;
    var = d ? mica__ox_ew(x, n, "prod", d, d, NULL) : NULL;
    var = var ? mica__ox_reduce(x, n, "avg", var, axes, nb, 1, NULL) : NULL;
    var = var ? mica__ox_ew(x, n, "sum", var, mica__ox_scalar_like(x, v, eps),
                            NULL) : NULL;
    var = var ? mica__ox_unary(x, n, "sqrt", var, NULL) : NULL;
    is = var ? mica__ox_unary(x, n, "recip", var, NULL) : NULL;
    if (mean)
        *mean = m;
    if (inv)
        *inv = is;
    return is ? mica__ox_ew(x, n, "prod", d, is, NULL) : NULL;
}

static mica_status_t op_instance_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *y;
    int64_t axes[MICA_MAX_DIMS];
    int32_t i;
    if (need(x, n, 3) != MICA_OK)
        return x->st;
    v = IN(0);
    if (v->rank < 3)
        return OX_BAD(x, n, "an input of rank %d", (int)v->rank);
    for (i = 2; i < v->rank; i++)
        axes[i - 2] = i;
    y = normalize(x, n, v, axes, v->rank - 2,
                  mica__ox_attr_f(n, "epsilon", 1e-5), NULL, NULL);
    y = y ? mica__ox_ew(x, n, "prod", y, per_channel(x, n, IN(1), v->rank),
                        NULL) : NULL;
    y = y ? mica__ox_ew(x, n, "sum", y, per_channel(x, n, IN(2), v->rank),
                        OUT(0)) : NULL;
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

static mica_status_t op_layer_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *y, *mean = NULL, *inv = NULL;
    int64_t axis, axes[MICA_MAX_DIMS];
    int32_t i;
    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    for (i = (int32_t)axis; i < v->rank; i++)
        axes[i - axis] = i;
    y = normalize(x, n, v, axes, v->rank - (int32_t)axis,
                  mica__ox_attr_f(n, "epsilon", 1e-5), &mean, &inv);
    y = y ? mica__ox_ew(x, n, "prod", y, IN(1), IN(2) ? NULL : OUT(0)) : NULL;
    if (y && IN(2))
        y = mica__ox_ew(x, n, "sum", y, IN(2), OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    if (y && OUT(1))
        mica__ox_set_out(x, n, 1, mica__ox_identity(x, n, mean, OUT(1)));
    if (y && OUT(2))
        mica__ox_set_out(x, n, 2, mica__ox_identity(x, n, inv, OUT(2)));
    return x->st;
}

/* ---- resize ------------------------------------------------------------ */

static mica_status_t resize(mica__ox_t *x, mica__ox_node_t *n,
                            mica__ox_value_t *v, mica__ox_value_t *scales,
                            mica__ox_value_t *sizes, const char *mode,
                            const char *coord, const char *rounding)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    const char *sel = "formula";
    int64_t od[MICA_MAX_DIMS];
    int32_t i;

    if (!strcmp(mode, "cubic"))
        return OX_UNSUP(x, n, "mode cubic (nearest and linear are)");
    if (strcmp(mode, "nearest") && strcmp(mode, "linear"))
        return OX_BAD(x, n, "mode '%s'", mode);
    if (!strcmp(coord, "pytorch_half_pixel")) {
        coord = "half_pixel";
        sel = "upper_left";
    } else if (strcmp(coord, "half_pixel") && strcmp(coord, "align_corners")
               && strcmp(coord, "asymmetric")) {
        return OX_UNSUP(x, n, "coordinate_transformation_mode '%s'", coord);
    }
    if (mica__ox_attr_i(n, "exclude_outside", 0))
        return OX_UNSUP(x, n, "exclude_outside");
    if (mica__ox_attr_i(n, "antialias", 0))
        return OX_UNSUP(x, n, "antialias");
    if (mica__ox_attr(n, "axes"))
        return OX_UNSUP(x, n, "the axes attribute");
    if (sizes && sizes->rank == 1 && sizes->d[0] != v->rank)
        return OX_BAD(x, n, "sizes has %lld values for rank %d",
                      (long long)sizes->d[0], (int)v->rank);
    if (scales && !scales->cst)
        return OX_UNSUP(x, n, "scales known only at run time (give sizes, "
                        "or constant scales)");
    if (scales && scales->cst->count != v->rank)
        return OX_BAD(x, n, "%lld scales for rank %d",
                      (long long)scales->cst->count, (int)v->rank);
    l = mica__ox_layer(x, n, "Resize", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    if (sizes && !sizes->cst)
        mica__ox_in(x, l, mica__ox_tensor(x, n, sizes));
    mica__ox_p_str(x, l, "mode", mode);
    for (i = 0; i < v->rank; i++)
        od[i] = -1;
    if (sizes && sizes->cst) {
        for (i = 0; i < v->rank; i++)
            od[i] = mica__ox_data_int(sizes->cst, i);
        mica__ox_p_ints(x, l, "output_shape", od, v->rank);
    } else if (scales) {
        double f[MICA_MAX_DIMS];
        for (i = 0; i < v->rank; i++) {
            f[i] = mica__ox_data_f(scales->cst, i);
            od[i] = v->d[i] < 0 ? -1 : (int64_t)floor(v->d[i] * f[i]);
        }
        mica__ox_p_floats(x, l, "scales", f, v->rank);
    }
    mica__ox_p_str(x, l, "coordinate_transformation", coord);
    if (!strcmp(mode, "nearest"))
        mica__ox_p_str(x, l, "nearest_rounding", rounding);
    mica__ox_p_str(x, l, "selector_for_single_pixel", sel);
    o = mica__ox_out(x, l, OUT(0), v->dtype, v->rank, od);
    if (o)
        o->type = v->type;
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_resize(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *scales = NULL, *sizes = NULL;
    const char *mode = mica__ox_attr_s(x, n, "mode", "nearest"), *coord,
               *nm, *round;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    if (n->opset < 11) {
        scales = IN(1);
        coord = "asymmetric";
        round = "floor";
    } else {
        scales = IN(2);
        sizes = IN(3);
        if (scales && scales->cst && scales->cst->count == 0)
            scales = NULL;
        coord = mica__ox_attr_s(x, n, "coordinate_transformation_mode",
                                "half_pixel");
        nm = mica__ox_attr_s(x, n, "nearest_mode", "round_prefer_floor");
        round = !strcmp(nm, "round_prefer_floor") ? "half_down"
                : !strcmp(nm, "round_prefer_ceil") ? "half_up"
                : !strcmp(nm, "floor") ? "floor"
                : !strcmp(nm, "ceil") ? "ceil" : NULL;
        if (!round)
            return OX_BAD(x, n, "nearest_mode '%s'", nm);
        if (!strcmp(coord, "tf_crop_and_resize"))
            return OX_UNSUP(x, n, "coordinate_transformation_mode "
                            "tf_crop_and_resize");
    }
    if (!scales && !sizes)
        return OX_BAD(x, n, "neither scales nor sizes");
    if (scales && sizes)
        return OX_BAD(x, n, "both scales and sizes");
    return resize(x, n, IN(0), scales, sizes, mode, coord, round);
}

static mica_status_t op_upsample(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *scales = IN(1);
    const char *mode = mica__ox_attr_s(x, n, "mode", "nearest");
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    if (!strcmp(mode, "bilinear"))
        mode = "linear";
    if (n->opset < 9) {
        const Onnx__AttributeProto *a = mica__ox_attr(n, "scales");
        double f[MICA_MAX_DIMS];
        int64_t len;
        size_t i;
        if (!a || a->n_floats > MICA_MAX_DIMS)
            return OX_BAD(x, n, "no scales");
        for (i = 0; i < a->n_floats; i++)
            f[i] = a->floats[i];
        len = (int64_t)a->n_floats;
        scales = mica__ox_const_f(x, OX_FLOAT, f, 1, &len);
    }
    if (!scales)
        return OX_BAD(x, n, "no scales");
    return resize(x, n, IN(0), scales, NULL, mode, "asymmetric", "floor");
}

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
    if (need(x, n, 1) != MICA_OK)
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

static mica_status_t arg(mica__ox_t *x, mica__ox_node_t *n, int largest)
{
    mica__ox_value_t *v, *vo = NULL, *io = NULL;
    int64_t axis;
    int keep = mica__ox_attr_i(n, "keepdims", 1) != 0;
    if (need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (mica__ox_attr_i(n, "select_last_index", 0))
        return OX_UNSUP(x, n, "select_last_index");
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", 0), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    if (topk(x, n, v, 1, axis, largest, NULL, keep ? OUT(0) : NULL, &vo,
             &io) != MICA_OK)
        return x->st;
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
    if (need(x, n, 1) != MICA_OK)
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
    if (need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    scale = IN(1);
    zp = IN(2);
    if (scale->rank > 1)
        return OX_UNSUP(x, n, "a scale of rank %d (0-D or 1-D)",
                        (int)scale->rank);
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
    {"Conv", op_conv, "Convolution"},
    {"ConvTranspose", op_conv_transpose, "Deconvolution"},
    {"MaxPool", op_max_pool, "Pooling"},
    {"AveragePool", op_average_pool, "Pooling"},
    {"MatMul", op_matmul, "MatrixMultiply"},
    {"Gemm", op_gemm, "MatrixMultiply, ElementWise"},
    {"PRelu", op_prelu, "ParametricReLU"},
    {"Softmax", op_softmax, "SoftMax"},
    {"LogSoftmax", op_log_softmax, "SoftMax, Unary"},
    {"LRN", op_lrn, "LRN"},
    {"BatchNormalization", op_batch_norm, "ElementWise"},
    {"InstanceNormalization", op_instance_norm,
     "Reduce, ElementWise, Unary"},
    {"LayerNormalization", op_layer_norm, "Reduce, ElementWise, Unary"},
    {"Resize", op_resize, "Resize"},
    {"Upsample", op_upsample, "Resize"},
    {"TopK", op_topk, "TopK"},
    {"ArgMax", op_argmax, "TopK"},
    {"ArgMin", op_argmin, "TopK"},
    {"Einsum", op_einsum, "Einsum"},
    {"QuantizeLinear", op_quantize, "Quantize"},
    {"DequantizeLinear", op_dequantize, "Dequantize"},
    {NULL, NULL, NULL},
};
