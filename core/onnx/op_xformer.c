/*
 * core/onnx/op_xformer.c - the transformer operators onto the
 * Normalization and Attention layers: GroupNormalization,
 * MeanVarianceNormalization, RMSNormalization and Attention (opset 23);
 * LayerNormalization and InstanceNormalization (op_norm.c) and Gelu
 * (op_math.c) call mica__ox_normalization too or map onto Activation.
 */
#include <config.h>

#include <math.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* c with leading 1s up to rank r, in v's type. */
static mica__ox_value_t *like_x(mica__ox_t *x, mica__ox_node_t *n,
                                mica__ox_value_t *c, const mica__ox_value_t *v)
{
    int64_t axes[MICA_MAX_DIMS];
    int32_t i, k = v->rank - c->rank;
    if (c->rank > v->rank) {
        OX_BAD(x, n, "a scale or bias of rank %d for an input of rank %d",
               (int)c->rank, (int)v->rank);
        return NULL;
    }
    if (c->type != v->type)
        c = mica__ox_cast(x, n, c, v->type, NULL);
    for (i = 0; c && i < k; i++)
        axes[i] = i;
    return c && k > 0 ? mica__ox_unsqueeze(x, n, c, axes, k, NULL) : c;
}

mica__ox_value_t *mica__ox_normalization(mica__ox_t *x, mica__ox_node_t *n,
                                         mica__ox_value_t *v,
                                         mica__ox_value_t *scale,
                                         mica__ox_value_t *bias,
                                         uint32_t axes, double eps,
                                         int64_t groups, int rms,
                                         const char *name)
{
    mica__ox_layer_t *l;
    mica__ox_value_t *y;
    const char *tv, *ts, *tb = NULL;

    if (x->st != MICA_OK)
        return NULL;
    if (!isfinite(eps) || eps < 0 || eps > 3.4028234663852886e38) {
        OX_BAD(x, n, "epsilon %g (a finite float32 of 0 or more)", eps);
        return NULL;
    }
    scale = like_x(x, n, scale, v);
    bias = bias ? like_x(x, n, bias, v) : NULL;
    if (!scale || x->st != MICA_OK)
        return NULL;
    tv = mica__ox_tensor(x, n, v);
    ts = mica__ox_tensor(x, n, scale);
    if (bias)
        tb = mica__ox_tensor(x, n, bias);
    l = mica__ox_layer(x, n, "Normalization", NULL);
    mica__ox_in(x, l, tv);
    mica__ox_in(x, l, ts);
    if (bias)
        mica__ox_in(x, l, tb);
    mica__ox_p_int(x, l, "axes", axes);
    mica__ox_p_float(x, l, "epsilon", eps);
    if (groups != 1)
        mica__ox_p_int(x, l, "num_groups", groups);
    if (rms)
        mica__ox_p_bool(x, l, "rms", 1);
    y = mica__ox_out(x, l, name, v->dtype, v->rank, v->d);
    if (y)
        y->type = v->type;
    return y;
}

/* Whether v's type is a float type the Normalization layer takes. */
static int norm_type(mica__ox_t *x, mica__ox_node_t *n,
                     const mica__ox_value_t *v)
{
    if (v->dtype == MICA_FLOAT32 || v->dtype == MICA_FLOAT16 ||
        v->dtype == MICA_BFLOAT16)
        return 1;
    OX_UNSUP(x, n, "input of type %s (float, float16 or bfloat16)",
             mica__ox_type_name(v->type));
    return 0;
}

/* The bitmask of axes axis..rank-1. */
static uint32_t tail_axes(int64_t axis, int32_t r)
{
    uint32_t m = 0;
    int32_t i;
    for (i = (int32_t)axis; i < r; i++)
        m |= 1u << i;
    return m;
}

/*
 * GroupNormalization: opset 21's per-channel scale and bias [C]; opset
 * 18's per-group ones [G] are expanded to [C] where they are constants.
 */
static mica_status_t op_group_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *sc, *bi, *y;
    int64_t g = mica__ox_attr_i(n, "num_groups", 0), c;
    int32_t k;
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    v = IN(0);
    sc = IN(1);
    bi = IN(2);
    if (!norm_type(x, n, v))
        return x->st;
    if (v->rank < 3)
        return OX_BAD(x, n, "an input of rank %d (at least 3)", (int)v->rank);
    c = v->d[1];
    if (g < 1 || (c > 0 && c % g != 0))
        return OX_BAD(x, n, "num_groups %lld for %lld channels", (long long)g,
                      (long long)c);
    if (sc->rank != 1 || bi->rank != 1)
        return OX_BAD(x, n, "scale and bias of rank %d and %d (1)",
                      (int)sc->rank, (int)bi->rank);
    for (k = 0; k < 2; k++) {
        mica__ox_value_t **p = k ? &bi : &sc;
        if ((*p)->d[0] == c)
            continue;
        if ((*p)->d[0] != g || c < 0 || !(*p)->cst ||
            c > MICA__OX_FOLD_MAX)
            return OX_UNSUP(x, n, "a %s of %lld values for %lld channels "
                            "(per channel, or per group as a constant)",
                            k ? "bias" : "scale", (long long)(*p)->d[0],
                            (long long)c);
        {
            double *e = mica__ox_alloc(x, sizeof(double) * (size_t)(c + 1));
            int64_t i;
            for (i = 0; e && i < c; i++)
                e[i] = mica__ox_data_f((*p)->cst, i / (c / g));
            *p = e ? mica__ox_const_f(x, v->type, e, 1, &c) : NULL;
            if (!*p)
                return x->st;
        }
    }
    /* [C] -> [1, C, 1, ...] */
    {
        int64_t d[MICA_MAX_DIMS];
        int32_t i;
        d[0] = 1;
        d[1] = c;
        for (i = 2; i < v->rank; i++)
            d[i] = 1;
        if (c < 0)
            return OX_UNSUP(x, n, "a channel count known only at run time");
        sc = mica__ox_reshape(x, n, sc, d, v->rank, NULL);
        bi = sc ? mica__ox_reshape(x, n, bi, d, v->rank, NULL) : NULL;
    }
    if (!sc || !bi)
        return x->st;
    y = mica__ox_normalization(x, n, v, sc, bi, tail_axes(2, v->rank),
                               mica__ox_attr_f(n, "epsilon", 1e-5), g, 0,
                               OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* MeanVarianceNormalization: (x - mean) / sqrt(var + 1e-9) over `axes`
 * (default 0, 2, 3), as its function body. */
static mica_status_t op_mvn(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, "axes");
    mica__ox_value_t *v, *one, *y;
    int64_t ones[MICA_MAX_DIMS];
    uint32_t mask = 0;
    int32_t i;
    if (mica__ox_need(x, n, 1) != MICA_OK)
        return x->st;
    v = IN(0);
    if (!norm_type(x, n, v))
        return x->st;
    if (v->rank < 1)
        return OX_BAD(x, n, "an input of rank 0");
    if (a) {
        for (i = 0; i < (int32_t)a->n_ints; i++) {
            int64_t ax = mica__ox_axis(a->ints[i], v->rank);
            if (ax < 0)
                return OX_BAD(x, n, "axis %lld out of range for rank %d",
                              (long long)a->ints[i], (int)v->rank);
            mask |= 1u << ax;
        }
    } else {
        static const int64_t def[] = {0, 2, 3};
        for (i = 0; i < 3; i++) {
            if (def[i] >= v->rank)
                return OX_BAD(x, n, "the default axes 0, 2, 3 for rank %d",
                              (int)v->rank);
            mask |= 1u << def[i];
        }
    }
    if (!mask)
        return OX_BAD(x, n, "no axes");
    for (i = 0; i < v->rank; i++)
        ones[i] = 1;
    one = mica__ox_const_splat(x, v->type, 1.0, v->rank, ones);
    y = one ? mica__ox_normalization(x, n, v, one, NULL, mask, 1e-9, 1, 0,
                                     OUT(0))
            : NULL;
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* RMSNormalization (opset 23): x / sqrt(mean(x^2) + eps) * scale over
 * the axes from `axis` on. */
static mica_status_t op_rms_norm(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *v, *y;
    int64_t axis;
    if (mica__ox_need(x, n, 2) != MICA_OK)
        return x->st;
    v = IN(0);
    if (!norm_type(x, n, v))
        return x->st;
    axis = mica__ox_axis(mica__ox_attr_i(n, "axis", -1), v->rank);
    if (axis < 0)
        return OX_BAD(x, n, "axis out of range for rank %d", (int)v->rank);
    y = mica__ox_normalization(x, n, v, IN(1), NULL,
                               tail_axes(axis, v->rank),
                               mica__ox_attr_f(n, "epsilon", 1e-5), 1, 1,
                               OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

/* ---- Attention ------------------------------------------------------------ */

/* [B, S, H * D] -> [B, H, S, D]: one Shuffle (reshape with placeholders,
 * then a transpose). */
static mica__ox_value_t *split_heads(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, int64_t heads)
{
    static const int64_t perm[] = {0, 2, 1, 3};
    int64_t shape[4] = {0, 0, heads, -1}, d[4];
    mica__ox_layer_t *l;
    mica__ox_value_t *y;
    const char *t;
    if (v->d[2] >= 0 && v->d[2] % heads != 0) {
        OX_BAD(x, n, "a hidden size %lld that %lld heads do not divide",
               (long long)v->d[2], (long long)heads);
        return NULL;
    }
    d[0] = v->d[0];
    d[1] = heads;
    d[2] = v->d[1];
    d[3] = v->d[2] >= 0 ? v->d[2] / heads : -1;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shuffle", "heads");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "reshape", shape, 4);
    mica__ox_p_ints(x, l, "second_transpose", perm, 4);
    y = mica__ox_out(x, l, NULL, v->dtype, 4, d);
    if (y)
        y->type = v->type;
    return y;
}

/* [B, H, S, D] -> [B, S, H * D]. */
static mica__ox_value_t *merge_heads(mica__ox_t *x, mica__ox_node_t *n,
                                     mica__ox_value_t *v, const char *name)
{
    static const int64_t perm[] = {0, 2, 1, 3};
    int64_t shape[3] = {0, 0, -1}, d[3];
    mica__ox_layer_t *l;
    mica__ox_value_t *y;
    const char *t;
    d[0] = v->d[0];
    d[1] = v->d[2];
    d[2] = v->d[1] >= 0 && v->d[3] >= 0 ? v->d[1] * v->d[3] : -1;
    t = mica__ox_tensor(x, n, v);
    l = mica__ox_layer(x, n, "Shuffle", "merge");
    mica__ox_in(x, l, t);
    mica__ox_p_ints(x, l, "first_transpose", perm, 4);
    mica__ox_p_ints(x, l, "reshape", shape, 3);
    y = mica__ox_out(x, l, name, v->dtype, 3, d);
    if (y)
        y->type = v->type;
    return y;
}

/*
 * Attention's output 3, qk_matmul_output, beside the Attention layer (which
 * keeps its scores to itself), from q and k as the layer takes them
 * ([B, H, S, D], past keys concatenated): Q K^T times the scale (mode 0),
 * plus the additive mask and the causal bias, lower right with past keys
 * (mode 1), capped softcap tanh(s / softcap) (mode 2), then SoftMax over
 * the keys (mode 3).  MatrixMultiply, ElementWise, Activation, SoftMax.
 */
static mica__ox_value_t *qk_output(mica__ox_t *x, mica__ox_node_t *n,
                                   mica__ox_value_t *q, mica__ox_value_t *k,
                                   mica__ox_value_t *mask, int causal,
                                   int past, double scale, double softcap)
{
    static const int64_t perm[4] = {0, 1, 3, 2};
    int64_t mode = mica__ox_attr_i(n, "qk_matmul_output_mode", 0);
    mica__ox_value_t *s;
    if (mode < 0 || mode > 3) {
        OX_BAD(x, n, "qk_matmul_output_mode %lld (0 to 3)",
               (long long)mode);
        return NULL;
    }
    if (q->d[1] != k->d[1]) {
        OX_UNSUP(x, n, "qk_matmul_output with %lld query heads and %lld "
                 "key heads", (long long)q->d[1], (long long)k->d[1]);
        return NULL;
    }
    s = mica__ox_transpose(x, n, k, perm, NULL);
    s = s ? mica__ox_matmul(x, n, q, s, NULL) : NULL;
    s = s ? mica__ox_ew(x, n, "prod", s, mica__ox_scalar_like(x, s, scale),
                        mode == 0 ? OUT(3) : NULL) : NULL;
    if (!s || mode == 0)
        return s;
    if (mask && mask->type == 9 /* bool */) {
        OX_UNSUP(x, n, "qk_matmul_output_mode %lld with a bool mask",
                 (long long)mode);
        return NULL;
    }
    if (mask)
        s = mica__ox_ew(x, n, "sum", s, mask, NULL);
    if (s && causal) {
        int64_t sq = q->d[2], sk = k->d[2], i, j, d[4] = {1, 1, 0, 0};
        double *b;
        if (sq < 0 || sk < 0) {
            OX_UNSUP(x, n, "qk_matmul_output of a causal attention over "
                     "lengths known only at run time");
            return NULL;
        }
        b = mica__ox_alloc(x, sizeof *b * (size_t)(sq * sk + 1));
        if (!b)
            return NULL;
        for (i = 0; i < sq; i++)
            for (j = 0; j < sk; j++)
                b[i * sk + j] = j > i + (past ? sk - sq : 0) ? -INFINITY
                                                             : 0.0;
        d[2] = sq;
        d[3] = sk;
        s = mica__ox_ew(x, n, "sum", s, mica__ox_cast(
                            x, n, mica__ox_const_f(x, OX_FLOAT, b, 4, d),
                            q->type, NULL), NULL);
    }
    if (s && mode >= 2 && softcap > 0) {
        s = mica__ox_ew(x, n, "div", s, mica__ox_scalar_like(x, s, softcap),
                        NULL);
        s = mica__ox_act(x, n, "tanh", s, 0, 0, 0, 0, NULL);
        s = s ? mica__ox_ew(x, n, "prod", s, mica__ox_scalar_like(
                                x, s, softcap), NULL) : NULL;
    }
    if (s && mode == 3)
        return mica__ox_softmax(x, n, s, 3, OUT(3));
    return s ? mica__ox_identity(x, n, s, OUT(3)) : NULL;
}

/*
 * Attention (opset 23): Q, K, V of rank 4 [B, H, S, D], or rank 3 [B, S,
 * H * D] with q_num_heads and kv_num_heads; an optional mask (bool or
 * additive, of rank 2 to 4, brought to rank 4); past_key and past_value
 * concatenated before the new keys (present_key, present_value), the
 * causal diagonal then aligned to the end of the keys; the output
 * qk_matmul_output beside it (qk_output).  nonpad_kv_seqlen (opset 24)
 * is refused.
 */
static mica_status_t op_attention(mica__ox_t *x, mica__ox_node_t *n)
{
    mica__ox_value_t *q, *k, *v, *mask = IN(3), *pk = IN(4), *pv = IN(5), *y;
    const Onnx__AttributeProto *sa = mica__ox_attr(n, "scale");
    int causal = mica__ox_attr_i(n, "is_causal", 0) != 0, three;
    double softcap = mica__ox_attr_f(n, "softcap", 0.0);
    mica__ox_layer_t *l;
    const char *tq, *tk, *tv, *tm = NULL;
    int64_t d[4];
    if (mica__ox_need(x, n, 3) != MICA_OK)
        return x->st;
    q = IN(0);
    k = IN(1);
    v = IN(2);
    if (IN(6))
        return OX_UNSUP(x, n, "input 6 (nonpad_kv_seqlen)");
    if (!norm_type(x, n, q))
        return x->st;
    if (q->rank != k->rank || q->rank != v->rank ||
        (q->rank != 3 && q->rank != 4))
        return OX_BAD(x, n, "Q, K, V of ranks %d, %d, %d (all 3 or all 4)",
                      (int)q->rank, (int)k->rank, (int)v->rank);
    if ((pk == NULL) != (pv == NULL))
        return OX_BAD(x, n, "past_key without past_value, or the reverse");
    three = q->rank == 3;
    if (three) {
        int64_t qh = mica__ox_attr_i(n, "q_num_heads", 0),
                kh = mica__ox_attr_i(n, "kv_num_heads", 0);
        if (qh < 1 || kh < 1)
            return OX_BAD(x, n, "inputs of rank 3 without q_num_heads and "
                          "kv_num_heads");
        q = split_heads(x, n, q, qh);
        k = q ? split_heads(x, n, k, kh) : NULL;
        v = k ? split_heads(x, n, v, kh) : NULL;
        if (!v)
            return x->st;
    }
    if (pk) {
        mica__ox_value_t *two[2];
        if (pk->rank != 4 || pv->rank != 4)
            return OX_BAD(x, n, "past_key and past_value of rank %d and %d "
                          "(4)", (int)pk->rank, (int)pv->rank);
        two[0] = pk;
        two[1] = k;
        k = mica__ox_concat(x, n, two, 2, 2, OUT(1));
        two[0] = pv;
        two[1] = v;
        v = k ? mica__ox_concat(x, n, two, 2, 2, OUT(2)) : NULL;
        if (!v)
            return x->st;
        if (OUT(1))
            mica__ox_set_out(x, n, 1, k);
        if (OUT(2))
            mica__ox_set_out(x, n, 2, v);
        /* the new queries are the last of the keys only when as many */
        if (causal && !(q->d[2] >= 0 && q->d[2] == IN(1)->d[three ? 1 : 2]))
            return OX_UNSUP(x, n, "is_causal with past keys where the new "
                            "keys (%lld) are not as many as the queries "
                            "(%lld)", (long long)IN(1)->d[three ? 1 : 2],
                            (long long)q->d[2]);
    } else {
        if (OUT(1))
            mica__ox_set_out(x, n, 1, mica__ox_identity(x, n, k, OUT(1)));
        if (OUT(2))
            mica__ox_set_out(x, n, 2, mica__ox_identity(x, n, v, OUT(2)));
    }
    if (mask) {
        int64_t axes[2] = {0, 1};
        if (mask->rank < 2 || mask->rank > 4)
            return OX_BAD(x, n, "attn_mask of rank %d (2 to 4)",
                          (int)mask->rank);
        if (mask->type != 9 /* bool */ && mask->type != q->type)
            mask = mica__ox_cast(x, n, mask, q->type, NULL);
        if (mask && mask->rank < 4)
            mask = mica__ox_unsqueeze(x, n, mask, axes, 4 - mask->rank, NULL);
        if (!mask)
            return x->st;
    }
    if (OUT(3)) {
        mica__ox_value_t *qk = qk_output(
            x, n, q, k, mask, causal, pk != NULL,
            sa ? sa->f : 1.0 / sqrt((double)(q->d[3] > 0 ? q->d[3] : 1)),
            softcap);
        if (!qk)
            return x->st;
        mica__ox_set_out(x, n, 3, qk);
    }
    tq = mica__ox_tensor(x, n, q);
    tk = mica__ox_tensor(x, n, k);
    tv = mica__ox_tensor(x, n, v);
    if (mask)
        tm = mica__ox_tensor(x, n, mask);
    l = mica__ox_layer(x, n, "Attention", NULL);
    mica__ox_in(x, l, tq);
    mica__ox_in(x, l, tk);
    mica__ox_in(x, l, tv);
    if (mask)
        mica__ox_in(x, l, tm);
    if (causal) {
        mica__ox_p_bool(x, l, "causal", 1);
        if (pk)
            mica__ox_p_str(x, l, "causal_align", "lower_right");
    }
    if (sa)
        mica__ox_p_float(x, l, "scale", sa->f);
    if (softcap > 0)
        mica__ox_p_float(x, l, "softcap", softcap);
    d[0] = q->d[0];
    d[1] = q->d[1];
    d[2] = q->d[2];
    d[3] = v->d[3];
    y = mica__ox_out(x, l, three ? NULL : OUT(0), q->dtype, 4, d);
    if (y)
        y->type = q->type;
    if (y && three)
        y = merge_heads(x, n, y, OUT(0));
    if (y)
        mica__ox_set_out(x, n, 0, y);
    return x->st;
}

const mica__ox_op_t mica__ox_ops_xformer[] = {
    {"GroupNormalization", op_group_norm, "Normalization"},
    {"MeanVarianceNormalization", op_mvn, "Normalization"},
    {"RMSNormalization", op_rms_norm, "Normalization"},
    {"Attention", op_attention, "Attention (Shuffle, Concatenation)"},
    {NULL, NULL, NULL},
};
