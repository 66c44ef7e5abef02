/*
 * modules/rnn/rnn_ref.c - the RNNv2 layer's CPU reference: the cell
 * equations of TensorRT's RNNv2 layer, one sequence, layer and direction
 * at a time, in double.
 *
 * For each gate, the input part gx = W x + Wb and the recurrent part
 * gh = R h + Rb (W the identity in skip mode's layer 0); then
 *   relu, tanh: h' = act(gx + gh)
 *   lstm: i, o, f = sigmoid(gx + gh) of their gates, c~ = tanh(gx + gh) of
 *         the cell gate; c' = f c + i c~; h' = o tanh(c')
 *   gru:  z, r = sigmoid(gx + gh) of their gates; n = tanh(gx + r gh) of
 *         the hidden gate (the reset gate after the recurrent product, as
 *         cuDNN and ONNX's linear_before_reset = 1); h' = (1 - z) n + z h
 * A sequence of length len runs steps 0..len-1 forward, len-1..0
 * backward; Y is zero past len and a direction's final state is the one
 * after its last step.  Layer l > 0 reads layer l-1's Y (forward and
 * backward concatenated).  In float16 the weights are rounded to float16
 * first, as the CUDA implementation holds them.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#include "rnn.h"

/* Element i of a float32 or float16 buffer. */
static double get(const void *v, mica_dtype_t t, int64_t i)
{
    if (t == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)v)[i]);
    return ((const float *)v)[i];
}

static void put(void *v, mica_dtype_t t, int64_t i, double x)
{
    if (t == MICA_FLOAT16)
        ((uint16_t *)v)[i] = mica_kit_float_to_half((float)x);
    else
        ((float *)v)[i] = (float)x;
}

/* Weight i of w as a layer of type t sees it (0 when w is NULL). */
static double weight(const mica_weights_t *w, mica_dtype_t t, int64_t i)
{
    double v;
    if (!w)
        return 0.0;
    v = get(w->values, w->dtype, i);
    if (t == MICA_FLOAT16 && w->dtype != MICA_FLOAT16)
        v = mica_kit_half_to_float(mica_kit_float_to_half((float)v));
    return v;
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* Doubles of scratch: two layer outputs of `steps` x max(E, D*H), the
 * gates' two parts, the hidden and cell states; -1 past 64 bits. */
static int64_t scratch_doubles(const mica__rnn_t *p, int64_t steps)
{
    int64_t dh = (int64_t)p->dirs * p->hidden;
    int64_t width = p->input_size > dh ? p->input_size : dh, n;

    /* gates <= 4 and hidden <= 2^20 (rnn_params.c): the rest is small */
    if (__builtin_mul_overflow(steps, width, &n) ||
        __builtin_mul_overflow(n, (int64_t)2, &n) ||
        __builtin_add_overflow(n, 2 * (int64_t)p->gates * p->hidden +
                                      2 * (int64_t)p->hidden, &n))
        return -1;
    return n;
}

size_t mica__rnn_ref_workspace(const mica__rnn_t *p, int64_t steps)
{
    int64_t n = scratch_doubles(p, steps < 0 ? 0 : steps);
    /* too large: more than the core lets a layer ask for, so refused */
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(double))
        return SIZE_MAX;
    return (size_t)n * sizeof(double);
}

/* Everything one direction of one layer needs. */
typedef struct cell {
    const mica__rnn_t *p;
    mica_dtype_t t;
    const mica_weights_t *w, *r, *wb, *rb; /* w NULL: identity */
    int64_t in;                            /* input size */
    double *gx, *gh;                       /* G*H each */
} cell_t;

/* One step: h (and c) from input x. */
static void step(const cell_t *k, const double *x, double *h, double *c)
{
    int64_t H = k->p->hidden, G = k->p->gates, g, j, i;

    for (g = 0; g < G; g++)
        for (j = 0; j < H; j++) {
            int64_t row = g * H + j;
            double ax = weight(k->wb, k->t, row), ah = weight(k->rb, k->t, row);
            if (k->w)
                for (i = 0; i < k->in; i++)
                    ax += weight(k->w, k->t, row * k->in + i) * x[i];
            else
                ax += x[j];
            for (i = 0; i < H; i++)
                ah += weight(k->r, k->t, row * H + i) * h[i];
            k->gx[row] = ax;
            k->gh[row] = ah;
        }
    for (j = 0; j < H; j++) {
        const double *a = k->gx, *b = k->gh;
        switch (k->p->op) {
        case MICA__RNN_RELU:
            h[j] = a[j] + b[j] > 0 ? a[j] + b[j] : 0.0;
            break;
        case MICA__RNN_TANH:
            h[j] = tanh(a[j] + b[j]);
            break;
        case MICA__RNN_LSTM: {
            double ig = sigmoid(a[MICA__LSTM_I * H + j] + b[MICA__LSTM_I * H + j]);
            double og = sigmoid(a[MICA__LSTM_O * H + j] + b[MICA__LSTM_O * H + j]);
            double fg = sigmoid(a[MICA__LSTM_F * H + j] + b[MICA__LSTM_F * H + j]);
            double cg = tanh(a[MICA__LSTM_C * H + j] + b[MICA__LSTM_C * H + j]);
            c[j] = fg * c[j] + ig * cg;
            h[j] = og * tanh(c[j]);
            break;
        }
        default: { /* GRU */
            double z = sigmoid(a[MICA__GRU_Z * H + j] + b[MICA__GRU_Z * H + j]);
            double r = sigmoid(a[MICA__GRU_R * H + j] + b[MICA__GRU_R * H + j]);
            double n = tanh(a[MICA__GRU_H * H + j] + r * b[MICA__GRU_H * H + j]);
            h[j] = (1.0 - z) * n + z * h[j];
            break;
        }
        }
    }
}

mica_status_t mica__rnn_reference(const mica__rnn_t *p,
                                  const mica__rnn_run_t *run,
                                  const void *const *inputs,
                                  void *const *outputs, void *ws,
                                  mica_error_t *err)
{
    const int64_t H = p->hidden, D = p->dirs, L = p->layers, T = run->steps;
    const int64_t LD = L * D, DH = D * H, E = p->input_size;
    const int64_t width = E > DH ? E : DH;
    const mica_dtype_t t = run->dtype;
    const int32_t *lens = run->has_lens ? inputs[MICA__RNN_IN_LENS] : NULL;
    const void *h0 = run->has_h ? inputs[MICA__RNN_IN_H] : NULL;
    const void *c0 = run->has_c ? inputs[MICA__RNN_IN_C] : NULL;
    double *seq_in = ws, *seq_out = seq_in + T * width;
    double *h = seq_out + T * width, *c = h + H;
    cell_t k;
    int64_t b, l, d, s, j;

    if (!ws && scratch_doubles(p, T) > 0)
        return MICA_KIT_FAIL(err, "no workspace for the reference");
    k.p = p;
    k.t = t;
    k.gx = c + H;
    k.gh = k.gx + p->gates * H;
    for (b = 0; b < run->batch; b++) {
        const int64_t len = lens ? lens[b] : T;
        /* Layer 0's input: this sequence of x. */
        for (s = 0; s < T; s++)
            for (j = 0; j < E; j++)
                seq_in[s * width + j] =
                    get(inputs[MICA__RNN_IN_X], t, (b * T + s) * E + j);
        for (l = 0; l < L; l++) {
            memset(seq_out, 0, sizeof *seq_out * (size_t)(T * width));
            for (d = 0; d < D; d++) {
                const int64_t e = l * D + d, state = (b * LD + e) * H;
                k.w = mica__rnn_w(p, (int32_t)l, (int32_t)d);
                k.r = &p->r[e];
                k.wb = p->wb ? &p->wb[e] : NULL;
                k.rb = p->rb ? &p->rb[e] : NULL;
                k.in = mica__rnn_in_size(p, (int32_t)l);
                for (j = 0; j < H; j++) {
                    h[j] = h0 ? get(h0, t, state + j) : 0.0;
                    c[j] = c0 ? get(c0, t, state + j) : 0.0;
                }
                for (s = 0; s < len; s++) {
                    int64_t at = d == 0 ? s : len - 1 - s;
                    step(&k, seq_in + at * width, h, c);
                    memcpy(seq_out + at * width + d * H, h,
                           sizeof *h * (size_t)H);
                }
                for (j = 0; j < H; j++) {
                    put(outputs[1], t, state + j, h[j]);
                    if (p->op == MICA__RNN_LSTM)
                        put(outputs[2], t, state + j, c[j]);
                }
            }
            /* The next layer reads this one's output. */
            memcpy(seq_in, seq_out, sizeof *seq_in * (size_t)(T * width));
        }
        for (s = 0; s < T; s++)
            for (j = 0; j < DH; j++)
                put(outputs[0], t, (b * T + s) * DH + j,
                    seq_in[s * width + j]);
    }
    return MICA_OK;
}
