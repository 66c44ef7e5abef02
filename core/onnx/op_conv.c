/*
 * core/onnx/op_conv.c - Conv and ConvTranspose onto Convolution and
 * Deconvolution, MaxPool and AveragePool onto Pooling, as TensorRT's
 * parser maps them: kernels and biases are weights (constants), a 1-D
 * operator is made 2-D with a trailing axis of 1, automatic pads are
 * computed where the spatial size is known (over a runtime axis they are
 * computed as shape tensors and applied by a Slice before the layer),
 * ceil_mode is extra padding at the end.
 */
#include <config.h>

#include <float.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* ---- windows: kernel, strides, dilations, pads ------------------------- */

typedef struct window {
    int32_t nd;                  /* spatial axes, 2 or 3 after unsqueezing */
    int32_t unsq;                /* 1: a 1-D op made 2-D */
    int64_t k[3], s[3], d[3], pre[3], post[3], out[3];
    int dyn[3];                  /* SAME padding over a runtime axis: */
    int lower;                   /* pads of same_pad, SAME_LOWER's */
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
            w->lower = pad[5] == 'L';
            if (in < 0 && transposed)
                return OX_UNSUP(x, n, "auto_pad %s over a spatial axis "
                                "known only at run time", pad);
            if (in < 0) {
                /* same_pad computes them as the network runs */
                w->dyn[i] = 1;
                w->pre[i] = w->post[i] = 0;
                continue;
            }
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

/*
 * v padded along the axes whose SAME padding depends on a runtime size
 * (w->dyn): total = max((ceil(in / s) - 1) * s + extent - in, 0) as
 * shape tensors, split as SAME_UPPER (the odd one after) or SAME_LOWER
 * says, applied by a Slice from -pre over in + total in mode fill with
 * `fill`.  v itself when no axis needs it; NULL after a failure.
 */
static mica__ox_value_t *same_pad(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, const window_t *w,
                                  double fill)
{
    int64_t zeros[MICA_MAX_DIMS] = {0}, one = 1;
    mica__ox_value_t *start[MICA_MAX_DIMS] = {0}, *size[MICA_MAX_DIMS] = {0};
    int32_t i, any = 0;

    for (i = 0; i < v->rank && x->st == MICA_OK; i++) {
        int32_t j = i - 2;
        mica__ox_value_t *in, *s, *c, *tot, *half, *pre;
        if (j < 0 || j >= 3 || !w->dyn[j]) {
            if (v->d[i] < 0)
                size[i] = mica__ox_dim(x, n, v, i);
            continue;
        }
        any = 1;
        in = mica__ox_dim(x, n, v, i);
        s = mica__ox_const_i(x, OX_INT64, &w->s[j], 1, &one);
        c = mica__ox_ew(x, n, "floor_div", mica__ox_ew(x, n, "sum", in,
                        mica__ox_ew(x, n, "sub", s, mica__ox_const_i(
                            x, OX_INT64, &one, 1, &one), NULL), NULL),
                        s, NULL);
        {
            int64_t ek = (w->k[j] - 1) * w->d[j] + 1 - w->s[j];
            tot = mica__ox_ew(x, n, "sub", mica__ox_ew(x, n, "sum",
                              mica__ox_ew(x, n, "prod", c, s, NULL),
                              mica__ox_const_i(x, OX_INT64, &ek, 1, &one),
                              NULL), in, NULL);
        }
        tot = mica__ox_ew(x, n, "max", tot,
                          mica__ox_const_i(x, OX_INT64, zeros, 1, &one), NULL);
        {
            int64_t two = 2;
            half = mica__ox_ew(x, n, "floor_div", tot,
                               mica__ox_const_i(x, OX_INT64, &two, 1, &one),
                               NULL);
        }
        pre = w->lower ? mica__ox_ew(x, n, "sub", tot, half, NULL) : half;
        start[i] = mica__ox_ew(x, n, "sub", mica__ox_const_i(
                                   x, OX_INT64, zeros, 1, &one), pre, NULL);
        size[i] = mica__ox_ew(x, n, "sum", in, tot, NULL);
    }
    if (!any || x->st != MICA_OK)
        return x->st == MICA_OK ? v : NULL;
    {
        mica__ox_value_t *st = mica__ox_vec(x, n, zeros, start, v->rank),
                         *sz = mica__ox_vec(x, n, v->d, size, v->rank);
        if (x->st != MICA_OK)
            return NULL;
        return mica__ox_slice(x, n, v, st, sz, NULL, "fill",
                              mica__ox_scalar_like(x, v, fill), NULL);
    }
}

/* v with a trailing axis of 1 (a 1-D op made 2-D). */
static mica__ox_value_t *trail1(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *v)
{
    int64_t axis = v->rank;
    return mica__ox_unsqueeze(x, n, v, &axis, 1, NULL);
}

/* ---- convolutions ----------------------------------------------------------- */

static mica__ox_value_t *conv_values(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v,
                                     mica__ox_value_t *wv,
                                     mica__ox_value_t *bv, int transposed,
                                     const char *name);

static mica_status_t conv(mica__ox_t *x, mica__ox_node_t *n, int transposed)
{
    mica__ox_value_t *o;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    o = conv_values(x, n, IN(0), IN(1), IN(2), transposed, OUT(0));
    if (o)
        mica__ox_set_out(x, n, 0, o);
    return x->st;
}

mica__ox_value_t *mica__ox_conv(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *v, mica__ox_value_t *w,
                                mica__ox_value_t *b, const char *name)
{
    return conv_values(x, n, v, w, b, 0, name);
}

static mica__ox_value_t *conv_values(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v,
                                     mica__ox_value_t *wv,
                                     mica__ox_value_t *bv, int transposed,
                                     const char *name)
{
    mica__ox_value_t *o, *bias_after = NULL;
    window_t w;
    int64_t group = mica__ox_attr_i(n, "group", 1), kernel[3], maps, od[5];
    int64_t ext[5] = {0, 0, 0, 0, 0}; /* per output axis: zeros added */
    int extend = 0;
    const int64_t *ks;
    int32_t i, nk;
    int as_inputs;
    mica__ox_layer_t *l;
    const char *kw, *bw = NULL, *t;
    mica_dims_t kd;

    if (x->st != MICA_OK)
        return NULL;
    /* A kernel or bias known only at run time: inputs of the layer (as
     * TensorRT 10's), constants folded by the builder where they are
     * computed from constants. */
    as_inputs = !wv->cst || (bv && !bv->cst);
    if (wv->rank < 3 || wv->rank > 5 || wv->rank != v->rank)
        return OX_BAD(x, n, "kernel of rank %d for an input of rank %d",
                      (int)wv->rank, (int)v->rank), NULL;
    if (group < 1)
        return OX_BAD(x, n, "group %lld", (long long)group), NULL;
    nk = wv->rank - 2;
    if (mica__ox_attr_ints(n, "kernel_shape", &ks) == nk)
        for (i = 0; i < nk; i++)
            kernel[i] = ks[i];
    else
        for (i = 0; i < nk; i++)
            kernel[i] = wv->d[2 + i];
    if (window(x, n, v, kernel, nk, transposed, &w) != MICA_OK)
        return NULL;
    maps = transposed ? wv->d[1] * group : wv->d[0];
    if (transposed) {
        const int64_t *a;
        int32_t k;
        int64_t op[3] = {0, 0, 0};
        if ((k = mica__ox_attr_ints(n, "output_padding", &a)) >= 0) {
            if (k != nk)
                return OX_BAD(x, n, "%d output_padding values for %d axes",
                              (int)k, (int)nk), NULL;
            for (i = 0; i < nk; i++)
                op[i] = a[i];
        }
        if ((k = mica__ox_attr_ints(n, "output_shape", &a)) >= 0) {
            const char *pad = mica__ox_attr_s(x, n, "auto_pad", "NOTSET");
            if (k != nk)
                return OX_BAD(x, n, "%d output_shape values for %d axes",
                              (int)k, (int)nk), NULL;
            for (i = 0; i < nk; i++) {
                int64_t in = v->d[2 + i], total;
                if (in < 0)
                    return OX_UNSUP(x, n, "output_shape over an axis known "
                                    "only at run time"), NULL;
                total = w.s[i] * (in - 1) + op[i] + (w.k[i] - 1) * w.d[i] +
                        1 - a[i];
                if (!strcmp(pad, "SAME_UPPER")) {
                    w.pre[i] = total / 2;
                    w.post[i] = total - total / 2;
                } else {
                    w.pre[i] = total - total / 2;
                    w.post[i] = total / 2;
                }
                w.out[i] = a[i] - op[i];
            }
        }
        /* TensorRT's parser: the output padding shortens the padding at
         * the end.  Past it, the output is longer than the transposed
         * convolution's whole extent: those elements get no product,
         * only the bias, so the layer leaves them out (its post padding
         * 0) and a Slice adds them as zeros, the bias added after. */
        for (i = 0; i < nk; i++) {
            w.post[i] -= op[i];
            if (w.out[i] >= 0)
                w.out[i] += op[i];
            if (w.post[i] < 0) {
                ext[2 + i] = -w.post[i];
                if (w.out[i] >= 0)
                    w.out[i] -= ext[2 + i];
                w.post[i] = 0;
                extend = 1;
            }
        }
        if (extend) {
            bias_after = bv;
            bv = NULL;
        }
    }
    if (as_inputs) {
        int64_t axis = wv->rank;
        if (w.unsq)
            wv = mica__ox_unsqueeze(x, n, wv, &axis, 1, NULL);
        if (wv && wv->dtype != v->dtype)
            wv = mica__ox_cast(x, n, wv, v->type, NULL);
        if (bv && bv->dtype != v->dtype)
            bv = mica__ox_cast(x, n, bv, v->type, NULL);
        kw = wv ? mica__ox_tensor(x, n, wv) : NULL;
        bw = bv ? mica__ox_tensor(x, n, bv) : NULL;
    } else {
        kd = wv->cst->dims;
        if (w.unsq)
            kd.d[kd.nb_dims++] = 1;
        kw = mica__ox_weights_add(x, n, wv->name, wv->cst, v->dtype, &kd,
                                  "the kernel");
        if (bv)
            bw = mica__ox_value_weights(x, n, bv);
    }
    v = same_pad(x, n, v, &w, 0.0);
    if (v && w.unsq)
        v = trail1(x, n, v);
    if (!v || x->st != MICA_OK)
        return NULL;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, transposed ? "Deconvolution" : "Convolution",
                       NULL);
    mica__ox_in(x, l, t);
    if (as_inputs) {
        mica__ox_in(x, l, kw);
        if (bw)
            mica__ox_in(x, l, bw);
    }
    mica__ox_p_int(x, l, "num_output_maps", maps);
    window_params(x, l, &w, "kernel_size", 1);
    if (group != 1)
        mica__ox_p_int(x, l, "groups", group);
    if (!as_inputs) {
        mica__ox_p_weights(x, l, "kernel", &kw, 1, 0);
        if (bw)
            mica__ox_p_weights(x, l, "bias", &bw, 1, 0);
    }
    od[0] = v->d[0];
    od[1] = maps;
    for (i = 0; i < w.nd; i++)
        od[2 + i] = w.out[i];
    o = mica__ox_out(x, l, w.unsq || extend ? NULL : name, v->dtype,
                     w.nd + 2, od);
    if (o && extend) {
        /* the output padding past the whole extent, then the bias */
        int64_t r = w.nd + 2, zeros[5] = {0}, bd[5];
        mica__ox_value_t *size = mica__ox_ew(
            x, n, "sum", mica__ox_shape_of(x, n, o),
            mica__ox_const_i(x, OX_INT64, ext, 1, &r), NULL);
        o = size ? mica__ox_slice(x, n, o, mica__ox_const_i(x, OX_INT64,
                                                          zeros, 1, &r),
                                  size, NULL, "fill", NULL,
                                  w.unsq || bias_after ? NULL : name)
                 : NULL;
        if (o && bias_after) {
            for (i = 0; i < r; i++)
                bd[i] = i == 1 ? maps : 1;
            o = mica__ox_ew(x, n, "sum", o,
                            mica__ox_reshape(x, n, bias_after, bd,
                                             (int32_t)r, NULL),
                            w.unsq ? NULL : name);
        }
    }
    if (o && w.unsq) {
        int64_t axis = 3;
        o = mica__ox_squeeze(x, n, o, &axis, 1, name);
    }
    return o;
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

/* LpPool's |v|^p (p 1: Unary abs; 2: ElementWise prod; else both). */
static mica__ox_value_t *lp_power(mica__ox_t *x, mica__ox_node_t *n,
                                  mica__ox_value_t *v, int64_t p)
{
    if (p == 2)
        return mica__ox_ew(x, n, "prod", v, v, NULL);
    v = mica__ox_unary(x, n, "abs", v, NULL);
    return v && p != 1 ? mica__ox_ew(x, n, "pow", v, mica__ox_scalar_like(
                                         x, v, (double)p), NULL) : v;
}

/* LpPool's (volume * the average)^(1/p), named `name`. */
static mica__ox_value_t *lp_root(mica__ox_t *x, mica__ox_node_t *n,
                                 mica__ox_value_t *v, int64_t p,
                                 double volume, const char *name)
{
    v = mica__ox_ew(x, n, "prod", v, mica__ox_scalar_like(x, v, volume),
                    p == 1 ? name : NULL);
    if (!v || p == 1)
        return v;
    if (p == 2)
        return mica__ox_unary(x, n, "sqrt", v, name);
    return mica__ox_ew(x, n, "pow", v, mica__ox_scalar_like(x, v, 1.0 / p),
                       name);
}

/* The Pooling layer of window w over v (NULL: a failure before). */
static mica__ox_value_t *pool_layer(mica__ox_t *x, mica__ox_node_t *n,
                                    mica__ox_value_t *v, const window_t *w,
                                    int avg, int include, const char *name)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *o;
    int64_t od[5];
    int32_t i;
    int dilated = 0;
    if (!v || x->st != MICA_OK)
        return NULL;
    for (i = 0; i < w->nd; i++)
        dilated |= w->d[i] != 1;
    if (w->unsq)
        v = trail1(x, n, v);
    if (!v)
        return NULL;
    l = mica__ox_layer(x, n, "Pooling", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_p_str(x, l, "type", avg ? "average" : "max");
    window_params(x, l, w, "window_size", dilated);
    if (avg)
        mica__ox_p_bool(x, l, "average_count_excludes_padding", !include);
    od[0] = v->d[0];
    od[1] = v->d[1];
    for (i = 0; i < w->nd; i++)
        od[2 + i] = w->out[i];
    o = mica__ox_out(x, l, w->unsq ? NULL : name, v->dtype, w->nd + 2, od);
    if (o)
        o->type = v->type;
    if (o && w->unsq) {
        int64_t axis = 3;
        o = mica__ox_squeeze(x, n, o, &axis, 1, name);
    }
    return o;
}

/* MaxPool (mode 0), AveragePool (1), LpPool (2: the average of |x|^p,
 * padding counted, times the window's volume, to the power 1/p). */
static mica_status_t pool(mica__ox_t *x, mica__ox_node_t *n, int mode)
{
    mica__ox_value_t *v, *o;
    const int64_t *ks;
    int32_t nk, i;
    window_t w;
    int64_t p = mica__ox_attr_i(n, "p", 2);
    int avg = mode != 0, lp = mode == 2;
    int include = lp || mica__ox_attr_i(n, "count_include_pad", 0) != 0;
    double volume = 1;

    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (lp && p < 1)
        return OX_BAD(x, n, "p %lld (at least 1)", (long long)p);
    if (OUT(1))
        return OX_UNSUP(x, n, "the Indices output");
    nk = mica__ox_attr_ints(n, "kernel_shape", &ks);
    if (nk < 1)
        return OX_BAD(x, n, "no kernel_shape");
    if (window(x, n, v, ks, nk, 0, &w) != MICA_OK)
        return x->st;
    if (mica__ox_attr_i(n, "ceil_mode", 0)) {
        /* Round the output up by padding the end; a last window that
         * would start in the padding is dropped (as ONNX Runtime). */
        for (i = 0; i < nk; i++) {
            int64_t in = v->d[2 + i], span, out, extra,
                    ext = (w.k[i] - 1) * w.d[i] + 1;
            if (in < 0)
                return OX_UNSUP(x, n, "ceil_mode over an axis known only "
                                "at run time");
            span = in + w.pre[i] + w.post[i] - ext;
            out = (span + w.s[i] - 1) / w.s[i] + 1;
            if ((out - 1) * w.s[i] >= in + w.pre[i])
                out--;
            extra = (out - 1) * w.s[i] + ext - (in + w.pre[i] + w.post[i]);
            if (extra > 0) {
                if (avg && include)
                    return OX_UNSUP(x, n, "ceil_mode with count_include_pad"
                                    " where the last window overhangs");
                w.post[i] += extra;
            }
            w.out[i] = out;
        }
    }
    if (lp) {
        v = lp_power(x, n, v, p);
        for (i = 0; i < nk; i++)
            volume *= (double)w.k[i];
        if (!v)
            return x->st;
    }
    if (!w.dyn[0] && !w.dyn[1] && !w.dyn[2])
        o = pool_layer(x, n, v, &w, avg, include, lp ? NULL : OUT(0));
    else if (!avg || include)
        o = pool_layer(x, n, same_pad(x, n, v, &w, avg ? 0.0 : -FLT_MAX),
                       &w, avg, include, lp ? NULL : OUT(0));
    else {
        /* The average over the window's part inside the input: that of
         * the input padded with zeros over that of ones padded alike. */
        int64_t ones_d[MICA_MAX_DIMS], zero[MICA_MAX_DIMS] = {0};
        mica__ox_value_t *dyn[MICA_MAX_DIMS] = {0}, *ones, *sum, *cnt;
        double uno = 1.0;
        for (i = 0; i < v->rank; i++) {
            ones_d[i] = 1;
            if (i >= 2 && v->d[i] < 0)
                dyn[i] = mica__ox_dim(x, n, v, i);
        }
        /* ones of [1, 1, spatial...]: a Slice of one 1 in mode clamp */
        ones = mica__ox_const_f(x, v->type, &uno, v->rank, ones_d);
        for (i = 2; i < v->rank; i++)
            ones_d[i] = v->d[i];
        ones = ones ? mica__ox_slice(x, n, ones,
                                     mica__ox_vec(x, n, zero, NULL, v->rank),
                                     mica__ox_vec(x, n, ones_d, dyn, v->rank),
                                     NULL, "clamp", NULL, NULL) : NULL;
        sum = ones ? pool_layer(x, n, same_pad(x, n, v, &w, 0.0), &w, 1,
                                include, NULL) : NULL;
        cnt = sum ? pool_layer(x, n, same_pad(x, n, ones, &w, 0.0), &w, 1,
                               include, NULL) : NULL;
        o = cnt ? mica__ox_ew(x, n, "div", sum, cnt, OUT(0)) : NULL;
    }
    if (o && lp)
        o = lp_root(x, n, o, p, volume, OUT(0));
    mica__ox_set_out(x, n, 0, o);
    return x->st;
}

static mica_status_t op_lp_pool(mica__ox_t *x, mica__ox_node_t *n)
{
    return pool(x, n, 2);
}

static mica_status_t op_max_pool(mica__ox_t *x, mica__ox_node_t *n)
{
    return pool(x, n, 0);
}

static mica_status_t op_average_pool(mica__ox_t *x, mica__ox_node_t *n)
{
    return pool(x, n, 1);
}

const mica__ox_op_t mica__ox_ops_conv[] = {
    {"Conv", op_conv, "Convolution"},
    {"ConvTranspose", op_conv_transpose, "Deconvolution"},
    {"MaxPool", op_max_pool, "Pooling"},
    {"AveragePool", op_average_pool, "Pooling"},
    {"LpPool", op_lp_pool, "Pooling, Unary, ElementWise"},
    {NULL, NULL, NULL},
};
