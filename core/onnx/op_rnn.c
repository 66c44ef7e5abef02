/*
 * core/onnx/op_rnn.c - LSTM, GRU and RNN onto one RNNv2 layer (TensorRT's
 * IRNNv2Layer): one layer, forward or both directions.
 *
 * What the mapping assumes of RNNv2 (docs/onnx.md): x is [N, S, E] (batch
 * first), hidden and cell are [N, L*D, H], outputs are y [N, S, D*H], the
 * last hidden [N, L*D, H] and, for LSTM, the last cell; weights per layer
 * and direction are [G*H, E] (recurrent [G*H, H]) with the gates in
 * TensorRT's RNNGateType order (LSTM: input, output, forget, cell; GRU:
 * update, reset, hidden), which is ONNX's order, and biases [G*H].  ONNX's
 * time-major tensors are transposed around it.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>

#include "onnx_int.h"

#define IN(k) ((k) < n->nb_in ? n->in[k] : NULL)
#define OUT(k) mica__ox_out_name(n, (k))

/* Rows [row0, row0 + rows) of block d of a constant [D, R, C]. */
static const char *part(mica__ox_t *x, mica__ox_node_t *n,
                        mica__ox_value_t *v, int64_t d, int64_t row0,
                        int64_t rows, const char *tag)
{
    mica__ox_data_t view = *v->cst;
    int64_t cols = v->rank == 3 ? v->d[2] : 1, per = v->d[1] * cols;
    mica_dims_t dims;
    size_t es = mica__ox_type_size(view.type);
    if (!view.splat)
        view.raw = (const uint8_t *)v->cst->raw +
                   (size_t)(d * per + row0 * cols) * es;
    view.count = rows * cols;
    memset(&dims, 0, sizeof dims);
    dims.nb_dims = v->rank == 3 ? 2 : 1;
    dims.d[0] = rows;
    dims.d[1] = cols;
    view.dims = dims;
    return mica__ox_weights_add(x, n, mica__ox_printf(x, "%s.%s%d", n->name,
                                                      tag, (int)d),
                                &view, MICA_FLOAT32, &dims, tag);
}

static mica_status_t rnn(mica__ox_t *x, mica__ox_node_t *n, const char *op,
                         int64_t gates)
{
    mica__ox_value_t *v, *w, *r, *b, *h0, *c0, *sl, *y, *hy, *cy;
    const char *dir = mica__ox_attr_s(x, n, "direction", "forward");
    int64_t hs = mica__ox_attr_i(n, "hidden_size", 0), nd, s, d, t102[3],
            perm4[4] = {1, 2, 0, 3}, od[4];
    int layout = mica__ox_attr_i(n, "layout", 0) != 0;
    const char *ws[2], *rs[2], *bw[2], *br[2];
    const Onnx__AttributeProto *acts = mica__ox_attr(n, "activations");
    mica__ox_layer_t *l;

    if (n->nb_in < 3 || !IN(0) || !IN(1) || !IN(2))
        return OX_BAD(x, n, "X, W and R are needed");
    v = IN(0);
    w = IN(1);
    r = IN(2);
    b = IN(3);
    sl = IN(4);
    h0 = IN(5);
    c0 = IN(6);
    if (IN(7))
        return OX_UNSUP(x, n, "peepholes (P)");
    if (mica__ox_attr(n, "clip"))
        return OX_UNSUP(x, n, "clip");
    if (mica__ox_attr_i(n, "input_forget", 0))
        return OX_UNSUP(x, n, "input_forget");
    if (!strcmp(op, "gru") && !mica__ox_attr_i(n, "linear_before_reset", 0))
        return OX_UNSUP(x, n, "linear_before_reset 0 (RNNv2's GRU applies "
                        "the reset gate after the recurrent product, as "
                        "cuDNN)");
    if (acts) {
        static const char *const lstm[] = {"Sigmoid", "Tanh", "Tanh"},
                                 *const gru[] = {"Sigmoid", "Tanh"};
        size_t i, per = !strcmp(op, "lstm") ? 3 : !strcmp(op, "gru") ? 2 : 1;
        for (i = 0; i < acts->n_strings; i++) {
            const char *want = per == 3 ? lstm[i % 3] : per == 2 ? gru[i % 2]
                               : op[0] == 'r' ? "Relu" : "Tanh";
            if (acts->strings[i].len != strlen(want)
                || memcmp(acts->strings[i].data, want, strlen(want)))
                return OX_UNSUP(x, n, "activations other than the "
                                "defaults");
        }
    }
    if (!strcmp(dir, "forward"))
        nd = 1;
    else if (!strcmp(dir, "bidirectional"))
        nd = 2;
    else
        return OX_UNSUP(x, n, "direction '%s' (forward and bidirectional)",
                        dir);
    if (!w->cst || !r->cst || (b && !b->cst))
        return OX_UNSUP(x, n, "weights known only at run time");
    if (v->rank != 3 || w->rank != 3 || r->rank != 3 || w->d[0] != nd
        || r->d[0] != nd || w->d[1] != gates * hs || r->d[1] != gates * hs
        || r->d[2] != hs || (b && (b->rank != 2 || b->d[1] != 2 * gates * hs)))
        return OX_BAD(x, n, "X, W, R or B do not have the shapes of "
                      "hidden_size %lld and %lld direction(s)", (long long)hs,
                      (long long)nd);
    if (v->type != OX_FLOAT)
        return OX_UNSUP(x, n, "%s data (float)", mica__ox_type_name(v->type));
    s = v->d[layout ? 1 : 0];
    for (d = 0; d < nd; d++) {
        ws[d] = part(x, n, w, d, 0, gates * hs, "W");
        rs[d] = part(x, n, r, d, 0, gates * hs, "R");
        if (b) {
            bw[d] = part(x, n, b, d, 0, gates * hs, "Wb");
            br[d] = part(x, n, b, d, gates * hs, gates * hs, "Rb");
        }
    }
    if (x->st != MICA_OK)
        return x->st;
    /* Batch first around the layer. */
    t102[0] = 1;
    t102[1] = 0;
    t102[2] = 2;
    if (!layout)
        v = mica__ox_transpose(x, n, v, t102, NULL);
    if (h0)
        h0 = mica__ox_transpose(x, n, h0, t102, NULL);
    if (c0)
        c0 = mica__ox_transpose(x, n, c0, t102, NULL);
    if (sl && sl->dtype != MICA_INT32)
        sl = mica__ox_cast(x, n, sl, OX_INT32, NULL);
    if (x->st != MICA_OK)
        return x->st;
    l = mica__ox_layer(x, n, "RNNv2", NULL);
    mica__ox_in(x, l, mica__ox_tensor(x, n, v));
    mica__ox_in(x, l, h0 ? mica__ox_tensor(x, n, h0) : NULL);
    mica__ox_in(x, l, c0 ? mica__ox_tensor(x, n, c0) : NULL);
    mica__ox_in(x, l, sl ? mica__ox_tensor(x, n, sl) : NULL);
    while (l && l->nb_in > 1 && !l->in[l->nb_in - 1])
        l->nb_in--;
    mica__ox_p_str(x, l, "op", op);
    mica__ox_p_int(x, l, "layers", 1);
    mica__ox_p_int(x, l, "hidden_size", hs);
    /* A sequence length known only at run time: the layer takes any up
     * to max_seq_length, and the build sizes it for the profile's
     * largest, which bounds it (RNNv2 checks it against this). */
    mica__ox_p_int(x, l, "max_seq_length", s >= 0 ? s : INT32_MAX);
    mica__ox_p_str(x, l, "direction", nd == 2 ? "bidirection"
                                              : "unidirection");
    mica__ox_p_weights(x, l, "weights", ws, (int32_t)nd, 1);
    mica__ox_p_weights(x, l, "recurrent_weights", rs, (int32_t)nd, 1);
    if (b) {
        mica__ox_p_weights(x, l, "biases", bw, (int32_t)nd, 1);
        mica__ox_p_weights(x, l, "recurrent_biases", br, (int32_t)nd, 1);
    }
    od[0] = v->d[0];
    od[1] = s;
    od[2] = nd * hs;
    y = mica__ox_out(x, l, NULL, MICA_FLOAT32, 3, od);
    od[1] = nd;
    od[2] = hs;
    hy = mica__ox_out(x, l, NULL, MICA_FLOAT32, 3, od);
    cy = !strcmp(op, "lstm") ? mica__ox_out(x, l, NULL, MICA_FLOAT32, 3, od)
                             : NULL;
    if (x->st != MICA_OK)
        return x->st;
    /* y [N, S, D*H] -> [N, S, D, H] -> ONNX's [S, D, N, H] (layout 0) or
     * [N, S, D, H] (layout 1). */
    if (OUT(0)) {
        int64_t d4[4];
        d4[0] = v->d[0];
        d4[1] = s;
        d4[2] = nd;
        d4[3] = hs;
        if (d4[0] >= 0 && d4[1] >= 0) {
            y = mica__ox_reshape(x, n, y, d4, 4, layout ? OUT(0) : NULL);
        } else {
            /* N or S known only at run time: 0s copy them. */
            int64_t p4[4] = {0, 0, nd, hs};
            l = mica__ox_layer(x, n, "Shuffle", "reshape");
            mica__ox_in(x, l, mica__ox_tensor(x, n, y));
            mica__ox_p_ints(x, l, "reshape", p4, 4);
            mica__ox_p_bool(x, l, "zero_is_placeholder", 1);
            y = mica__ox_out(x, l, layout ? OUT(0) : NULL, MICA_FLOAT32, 4,
                             d4);
        }
        if (y && !layout)
            y = mica__ox_transpose(x, n, y, perm4, OUT(0));
        mica__ox_set_out(x, n, 0, y);
    }
    if (OUT(1))
        mica__ox_set_out(x, n, 1, layout ? mica__ox_identity(x, n, hy, OUT(1))
                                         : mica__ox_transpose(x, n, hy, t102,
                                                              OUT(1)));
    if (OUT(2) && cy)
        mica__ox_set_out(x, n, 2, layout ? mica__ox_identity(x, n, cy, OUT(2))
                                         : mica__ox_transpose(x, n, cy, t102,
                                                              OUT(2)));
    return x->st;
}

static mica_status_t op_lstm(mica__ox_t *x, mica__ox_node_t *n)
{
    return rnn(x, n, "lstm", 4);
}

static mica_status_t op_gru(mica__ox_t *x, mica__ox_node_t *n)
{
    return rnn(x, n, "gru", 3);
}

static mica_status_t op_rnn(mica__ox_t *x, mica__ox_node_t *n)
{
    const Onnx__AttributeProto *a = mica__ox_attr(n, "activations");
    int relu = a && a->n_strings && a->strings[0].len == 4
               && !memcmp(a->strings[0].data, "Relu", 4);
    return rnn(x, n, relu ? "relu" : "tanh", 1);
}

const mica__ox_op_t mica__ox_ops_rnn[] = {
    {"LSTM", op_lstm, "RNNv2"},
    {"GRU", op_gru, "RNNv2"},
    {"RNN", op_rnn, "RNNv2"},
    {NULL, NULL, NULL},
};
