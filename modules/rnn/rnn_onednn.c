/*
 * modules/rnn/rnn_onednn.c - RNNv2 on the CPU through oneDNN's RNN
 * primitives (implementation "onednn"): vanilla RNN (relu, tanh), LSTM,
 * and GRU as oneDNN's linear-before-reset GRU (the reset gate applied
 * after the recurrent product, as the reference and cuDNN compute it).
 *
 * One primitive per layer (oneDNN's own multi-layer primitive needs one
 * input size for every layer), each with the layer's directions
 * (bidirectional: oneDNN's concatenated output, forward then backward,
 * as RNNv2's y).  x [N..., T, E] and y [N..., T, D*H] are oneDNN's ntc
 * layouts as they are; the states [N..., L*D, H] are copied to and from
 * its ldnc.  The weights are packed once per instance (at its first run)
 * into oneDNN's ldigo order and gate order (LSTM: i, f, c, o from
 * TensorRT's i, o, f, c; GRU: update, reset, hidden as TensorRT's), then
 * reordered into the layouts the primitive prefers; the biases are
 * summed (wb + rb per gate; the GRU's hidden gate keeps its two, as
 * oneDNN's linear-before-reset GRU takes them).  The primitives are made
 * for one (batch, steps) and again when a run has others.
 *
 * float32 only, and sequences of one length: a run with float16 data,
 * lengths shorter than T or skip input mode runs the reference
 * (mica__rnn_dnnl_run says so).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "mica/kit_half.h"
#include "rnn.h"
#include "kit_cpu.h"
#include "kit_onednn.h"

typedef struct layer_prim {
    dnnl_primitive_t prim;
    dnnl_memory_t src, dst, hi, ho, ci, co; /* user memories (handles set
                                             * at each run) */
    dnnl_memory_t w, wi, b;                 /* the primitive's layouts */
} layer_prim_t;

struct mica__rnn_dnnl {
    int off;                 /* oneDNN cannot be loaded: the reference */
    int64_t batch, steps;    /* what the primitives are made for */
    int32_t threads;
    dnnl_stream_t stream;
    layer_prim_t *layers;    /* L of them, NULL until made */
    float *scratch;          /* layer outputs and states */
    size_t scratch_floats;
};

/* TensorRT's gate of oneDNN's gate g. */
static int32_t mica_gate(int op, int32_t g)
{
    static const int32_t lstm[4] = {MICA__LSTM_I, MICA__LSTM_F, MICA__LSTM_C,
                                    MICA__LSTM_O};
    return op == MICA__RNN_LSTM ? lstm[g] : g;
}

static float wval(const mica_weights_t *w, int64_t i)
{
    if (w->dtype == MICA_FLOAT16)
        return mica_kit_half_to_float(((const uint16_t *)w->values)[i]);
    return ((const float *)w->values)[i];
}

/* Reorder `from` (plain data) into a new memory of md `to`. */
static mica_status_t reorder_into(dnnl_stream_t stream,
                                  const dnnl_memory_desc_t *from, void *data,
                                  const dnnl_memory_desc_t *to,
                                  dnnl_memory_t *out, mica_error_t *err)
{
    dnnl_engine_t e = mica__dnnl_engine();
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_memory_t src = NULL;
    dnnl_exec_arg_t args[2];
    mica_status_t st = MICA_OK;

    *out = NULL;
    MICA__DNNL_TRY(mica__dnnl.memory_create(&src, from, e, data));
    MICA__DNNL_TRY(mica__dnnl.memory_create(out, to, e,
                                            DNNL_MEMORY_ALLOCATE));
    MICA__DNNL_TRY(mica__dnnl.reorder_pd(&rpd, from, e, to, e, NULL));
    MICA__DNNL_TRY(mica__dnnl.primitive_create(&r, rpd));
    args[0].arg = DNNL_ARG_FROM;
    args[0].memory = src;
    args[1].arg = DNNL_ARG_TO;
    args[1].memory = *out;
    MICA__DNNL_TRY(mica__dnnl.execute(r, stream, 2, args));
    MICA__DNNL_TRY(mica__dnnl.stream_wait(stream));
fail:
    if (st != MICA_OK && *out) {
        mica__dnnl.memory_destroy(*out);
        *out = NULL;
    }
    if (r)
        mica__dnnl.primitive_destroy(r);
    if (rpd)
        mica__dnnl.pd_destroy(rpd);
    if (src)
        mica__dnnl.memory_destroy(src);
    return st;
}

static void free_layers(mica__rnn_dnnl_t *s, int32_t n)
{
    int32_t l;
    if (!s->layers)
        return;
    for (l = 0; l < n; l++) {
        layer_prim_t *x = &s->layers[l];
        dnnl_memory_t *m[] = {&x->src, &x->dst, &x->hi, &x->ho, &x->ci,
                              &x->co, &x->w, &x->wi, &x->b};
        size_t k;
        if (x->prim)
            mica__dnnl.primitive_destroy(x->prim);
        for (k = 0; k < sizeof m / sizeof m[0]; k++)
            if (*m[k])
                mica__dnnl.memory_destroy(*m[k]);
    }
    free(s->layers);
    s->layers = NULL;
}

/*
 * Make layer l's primitive for (N, T): descriptors, the primitive, its
 * user memories, and the weights packed and reordered.
 */
static mica_status_t make_layer(mica__rnn_dnnl_t *s, const mica__rnn_t *p,
                                int32_t l, int64_t N, int64_t T,
                                mica_error_t *err)
{
    const int64_t H = p->hidden, D = p->dirs, G = p->gates;
    const int64_t C = mica__rnn_in_size(p, l);
    const int64_t GB = p->op == MICA__RNN_GRU ? 4 : G; /* bias gates */
    dnnl_engine_t e = mica__dnnl_engine();
    layer_prim_t *x = &s->layers[l];
    dnnl_memory_desc_t src, dst, it, w_any, wi_any, b_md, w_pl, wi_pl;
    const dnnl_memory_desc_t *q;
    dnnl_dims_t dsrc = {T, N, C}, ddst = {T, N, D * H}, dit = {1, D, N, H};
    dnnl_dims_t dw = {1, D, C, G, H}, dwi = {1, D, H, G, H};
    dnnl_dims_t db = {1, D, GB, H};
    dnnl_rnn_desc_t rd;
    dnnl_rnn_direction_t dir = D == 2 ? dnnl_bidirectional_concat
                                      : dnnl_unidirectional_left2right;
    dnnl_primitive_desc_t pd = NULL;
    float *w = NULL, *wi = NULL, *b = NULL;
    mica_status_t st = MICA_OK;
    int64_t d, g, o, i;

    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&src, 3, dsrc, dnnl_f32, dnnl_ntc));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&dst, 3, ddst, dnnl_f32, dnnl_ntc));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&it, 4, dit, dnnl_f32, dnnl_ldnc));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&w_any, 5, dw, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&wi_any, 5, dwi, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&w_pl, 5, dw, dnnl_f32, dnnl_ldigo));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&wi_pl, 5, dwi, dnnl_f32,
                                        dnnl_ldigo));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&b_md, 4, db, dnnl_f32, dnnl_ldgo));
    if (p->op == MICA__RNN_LSTM)
        MICA__DNNL_TRY(mica__dnnl.lstm_desc(
            &rd, dnnl_forward_inference, dir, &src, &it, &it, &w_any,
            &wi_any, &b_md, &dst, &it, &it, dnnl_rnn_flags_undef));
    else if (p->op == MICA__RNN_GRU)
        MICA__DNNL_TRY(mica__dnnl.lbr_gru_desc(
            &rd, dnnl_forward_inference, dir, &src, &it, &w_any, &wi_any,
            &b_md, &dst, &it, dnnl_rnn_flags_undef));
    else
        MICA__DNNL_TRY(mica__dnnl.rnn_desc(
            &rd, dnnl_forward_inference,
            p->op == MICA__RNN_RELU ? dnnl_eltwise_relu : dnnl_eltwise_tanh,
            dir, &src, &it, &w_any, &wi_any, &b_md, &dst, &it,
            dnnl_rnn_flags_undef, 0.0f, 0.0f));
    MICA__DNNL_TRY(mica__dnnl.pd_create(&pd, &rd, NULL, e, NULL));
    MICA__DNNL_TRY(mica__dnnl.primitive_create(&x->prim, pd));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&x->src, &src, e,
                                            DNNL_MEMORY_NONE));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&x->dst, &dst, e,
                                            DNNL_MEMORY_NONE));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&x->hi, &it, e,
                                            DNNL_MEMORY_NONE));
    MICA__DNNL_TRY(mica__dnnl.memory_create(&x->ho, &it, e,
                                            DNNL_MEMORY_NONE));
    if (p->op == MICA__RNN_LSTM) {
        MICA__DNNL_TRY(mica__dnnl.memory_create(&x->ci, &it, e,
                                                DNNL_MEMORY_NONE));
        MICA__DNNL_TRY(mica__dnnl.memory_create(&x->co, &it, e,
                                                DNNL_MEMORY_NONE));
    }
    /* the weights in ldigo and oneDNN's gate order, the biases summed */
    w = malloc((size_t)(D * C * G * H) * sizeof *w);
    wi = malloc((size_t)(D * H * G * H) * sizeof *wi);
    b = calloc((size_t)(D * GB * H), sizeof *b);
    if (!w || !wi || !b) {
        st = MICA_KIT_FAIL(err, "out of host memory for the weights of "
                           "layer %d", (int)l);
        goto fail;
    }
    for (d = 0; d < D; d++) {
        const int64_t e_ = l * D + d;
        const mica_weights_t *W = mica__rnn_w(p, l, (int32_t)d);
        const mica_weights_t *R = &p->r[e_];
        for (g = 0; g < G; g++) {
            int64_t mg = mica_gate(p->op, (int32_t)g);
            for (o = 0; o < H; o++) {
                int64_t row = mg * H + o;
                for (i = 0; i < C; i++)
                    w[((d * C + i) * G + g) * H + o] = wval(W, row * C + i);
                for (i = 0; i < H; i++)
                    wi[((d * H + i) * G + g) * H + o] = wval(R, row * H + i);
                if (p->wb)
                    b[(d * GB + g) * H + o] += wval(&p->wb[e_], row);
                if (p->rb) {
                    if (p->op == MICA__RNN_GRU && g == MICA__GRU_H)
                        b[(d * GB + 3) * H + o] = wval(&p->rb[e_], row);
                    else
                        b[(d * GB + g) * H + o] += wval(&p->rb[e_], row);
                }
            }
        }
    }
    q = mica__dnnl.pd_query_md(pd, dnnl_query_weights_md, 0);
    if ((st = reorder_into(s->stream, &w_pl, w, q, &x->w, err)) != MICA_OK)
        goto fail;
    q = mica__dnnl.pd_query_md(pd, dnnl_query_weights_md, 1);
    if ((st = reorder_into(s->stream, &wi_pl, wi, q, &x->wi, err)) !=
        MICA_OK)
        goto fail;
    q = mica__dnnl.pd_query_md(pd, dnnl_query_weights_md, 2);
    if ((st = reorder_into(s->stream, &b_md, b, q, &x->b, err)) != MICA_OK)
        goto fail;
fail:
    if (pd)
        mica__dnnl.pd_destroy(pd);
    free(w);
    free(wi);
    free(b);
    return st;
}

/* The primitives for (N, T), made again when they differ. */
static mica_status_t make(mica__rnn_dnnl_t *s, const mica__rnn_t *p,
                          int64_t N, int64_t T, mica_error_t *err)
{
    const int64_t H = p->hidden, D = p->dirs, L = p->layers;
    int32_t threads = mica__cpu_threads(), l;
    mica_status_t st = MICA_OK;
    size_t need;

    if (s->layers && s->batch == N && s->steps == T && s->threads == threads)
        return MICA_OK;
    free_layers(s, p->layers);
    if (!s->stream)
        MICA__DNNL_TRY(mica__dnnl.stream_create(&s->stream,
                                                mica__dnnl_engine(),
                                                dnnl_stream_default_flags));
    /* two layer outputs [N, T, D*H], four states [D, N, H] */
    need = (size_t)(2 * N * T * D * H + 4 * D * N * H);
    if (need > s->scratch_floats) {
        float *grown = realloc(s->scratch, need * sizeof *grown);
        if (!grown)
            return MICA_KIT_FAIL(err, "out of host memory for %zu floats",
                                 need);
        s->scratch = grown;
        s->scratch_floats = need;
    }
    if (!(s->layers = calloc((size_t)L, sizeof *s->layers)))
        return MICA_KIT_FAIL(err, "out of host memory");
    mica__cpu_omp_threads();
    for (l = 0; l < L && st == MICA_OK; l++)
        st = make_layer(s, p, l, N, T, err);
    if (st != MICA_OK) {
        free_layers(s, p->layers);
        return st;
    }
    s->batch = N;
    s->steps = T;
    s->threads = threads;
fail:
    return st;
}

/* States [N, L*D, H] of layer l into ldnc [D][N][H] (zeros without). */
static void states_in(const float *src, float *dst, const mica__rnn_t *p,
                      int32_t l, int64_t N)
{
    const int64_t H = p->hidden, D = p->dirs, LD = p->layers * D;
    int64_t d, n;
    for (d = 0; d < D; d++)
        for (n = 0; n < N; n++) {
            float *to = dst + (d * N + n) * H;
            if (src)
                memcpy(to, src + (n * LD + l * D + d) * H,
                       (size_t)H * sizeof *to);
            else
                memset(to, 0, (size_t)H * sizeof *to);
        }
}

static void states_out(const float *src, float *dst, const mica__rnn_t *p,
                       int32_t l, int64_t N)
{
    const int64_t H = p->hidden, D = p->dirs, LD = p->layers * D;
    int64_t d, n;
    for (d = 0; d < D; d++)
        for (n = 0; n < N; n++)
            memcpy(dst + (n * LD + l * D + d) * H, src + (d * N + n) * H,
                   (size_t)H * sizeof *dst);
}

mica_status_t mica__rnn_dnnl_run(mica__rnn_dnnl_t **state,
                                 const char *name, const mica__rnn_t *p,
                                 const mica__rnn_run_t *run,
                                 const void *const *inputs,
                                 void *const *outputs, int *taken,
                                 mica_error_t *err)
{
    const int64_t N = run->batch, T = run->steps, H = p->hidden,
                  D = p->dirs;
    const int32_t *lens = run->has_lens ? inputs[MICA__RNN_IN_LENS] : NULL;
    mica__rnn_dnnl_t *s = *state;
    float *ya, *yb, *hi, *ho, *ci, *co;
    mica_status_t st;
    int64_t n;
    int32_t l;

    *taken = 0;
    if (run->dtype != MICA_FLOAT32 || p->skip || N == 0 || T == 0)
        return MICA_OK;
    for (n = 0; lens && n < N; n++)
        if (lens[n] != T)
            return MICA_OK;
    if (!s) {
        if (!(s = *state = calloc(1, sizeof *s)))
            return MICA_KIT_FAIL(err, "out of host memory");
        if (mica__dnnl_open(err) != MICA_OK) {
            mica_kit_host->log(MICA_LOG_WARNING, name,
                               "oneDNN cannot be loaded: RNNv2 runs the "
                               "reference");
            s->off = 1;
        }
    }
    if (s->off)
        return MICA_OK;
    if ((st = make(s, p, N, T, err)) != MICA_OK)
        return st;
    ya = s->scratch;
    yb = ya + N * T * D * H;
    hi = yb + N * T * D * H;
    ho = hi + D * N * H;
    ci = ho + D * N * H;
    co = ci + D * N * H;
    mica__cpu_omp_threads();
    for (l = 0; l < p->layers; l++) {
        layer_prim_t *x = &s->layers[l];
        const void *in = l == 0 ? inputs[MICA__RNN_IN_X] : (l % 2 ? ya : yb);
        void *out = l == p->layers - 1 ? outputs[0] : (l % 2 ? yb : ya);
        dnnl_exec_arg_t args[9];
        int k = 0;

        states_in(run->has_h ? inputs[MICA__RNN_IN_H] : NULL, hi, p, l, N);
        mica__dnnl.memory_set(x->src, (void *)in);
        mica__dnnl.memory_set(x->dst, out);
        mica__dnnl.memory_set(x->hi, hi);
        mica__dnnl.memory_set(x->ho, ho);
        args[k].arg = DNNL_ARG_SRC_LAYER;
        args[k++].memory = x->src;
        args[k].arg = DNNL_ARG_SRC_ITER;
        args[k++].memory = x->hi;
        args[k].arg = DNNL_ARG_WEIGHTS_LAYER;
        args[k++].memory = x->w;
        args[k].arg = DNNL_ARG_WEIGHTS_ITER;
        args[k++].memory = x->wi;
        args[k].arg = DNNL_ARG_BIAS;
        args[k++].memory = x->b;
        args[k].arg = DNNL_ARG_DST_LAYER;
        args[k++].memory = x->dst;
        args[k].arg = DNNL_ARG_DST_ITER;
        args[k++].memory = x->ho;
        if (p->op == MICA__RNN_LSTM) {
            states_in(run->has_c ? inputs[MICA__RNN_IN_C] : NULL, ci, p, l,
                      N);
            mica__dnnl.memory_set(x->ci, ci);
            mica__dnnl.memory_set(x->co, co);
            args[k].arg = DNNL_ARG_SRC_ITER_C;
            args[k++].memory = x->ci;
            args[k].arg = DNNL_ARG_DST_ITER_C;
            args[k++].memory = x->co;
        }
        MICA__DNNL_TRY(mica__dnnl.execute(x->prim, s->stream, k, args));
        MICA__DNNL_TRY(mica__dnnl.stream_wait(s->stream));
        states_out(ho, outputs[1], p, l, N);
        if (p->op == MICA__RNN_LSTM)
            states_out(co, outputs[2], p, l, N);
    }
    *taken = 1;
fail:
    return st;
}

void mica__rnn_dnnl_free(mica__rnn_dnnl_t *s, const mica__rnn_t *p)
{
    if (!s)
        return;
    free_layers(s, p->layers);
    if (s->stream)
        mica__dnnl.stream_destroy(s->stream);
    free(s->scratch);
    free(s);
}
