/*
 * tests/test_mod_rnn.c - the RNNv2 layer against the NumPy model
 * (tests/gen/rnn_ref.py, whose values tests/gen/rnn_fixtures.py wrote into
 * tests/rnn_fixtures.h): every op, one and two layers, both directions,
 * skip mode, initial states given and absent, ragged lengths, leading
 * batch dimensions and none, float16; then CUDA against the CPU (skipped
 * without a GPU), runtime batch and steps within one profile, the cuDNN
 * layer's two algorithms (persistent where PyTorch would take it,
 * standard otherwise) on seeded values, empty tensors, and each error
 * with its message.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mica/mica.h"
#include "rnn_fixtures.h"

#define TOL32 1e-4
#define TOL16 1e-2

/* A tensor from n floats. */
static th_tensor_t from_floats(mica_dtype_t t, int nb_dims,
                               const int64_t *dims, const float *v)
{
    th_tensor_t x = th_tensor(t, nb_dims, dims, NULL);
    int64_t i, n = th_volume(&x);
    for (i = 0; i < n; i++)
        th_set(&x, i, v[i]);
    return x;
}

/* A list field from n arrays of counts[k] floats, as 1-D blobs. */
static void list_field(th_fields_t *f, const char *name, int n,
                       const float *const *v, const int64_t *counts,
                       mica_dtype_t t)
{
    th_tensor_t ts[16];
    int k;
    memset(ts, 0, sizeof ts);
    for (k = 0; k < n; k++)
        ts[k] = from_floats(t, 1, &counts[k], v[k]);
    th_f_weights_list(f, name, n, ts);
    for (k = 0; k < n; k++)
        th_free(&ts[k]);
}

/* The fields of case c (weights in the case's dtype). */
static th_fields_t *case_fields(const rnn_case_t *c)
{
    th_fields_t *f = th_fields();
    int ld = c->layers * c->dirs;

    th_f_str(f, "op", c->op);
    th_f_int(f, "layers", c->layers);
    th_f_int(f, "hidden_size", c->hidden);
    th_f_int(f, "max_seq_length", c->max_seq);
    th_f_str(f, "direction", c->dirs == 2 ? "bidirection" : "unidirection");
    th_f_str(f, "input_mode", c->skip ? "skip" : "linear");
    if (c->nb_w > 0)
        list_field(f, "weights", c->nb_w, c->w, c->wn, c->dtype);
    list_field(f, "recurrent_weights", ld, c->r, c->rn, c->dtype);
    if (c->wb)
        list_field(f, "biases", ld, c->wb, c->wbn, c->dtype);
    if (c->rb)
        list_field(f, "recurrent_biases", ld, c->rb, c->rbn, c->dtype);
    return f;
}

/* Dims of a state tensor of case c: x's leading dims, then [L*D, H]. */
static int state_dims(const rnn_case_t *c, int64_t *d)
{
    int k, r = c->nb_xdims;
    for (k = 0; k < r - 2; k++)
        d[k] = c->xdims[k];
    d[r - 2] = c->layers * c->dirs;
    d[r - 1] = c->hidden;
    return r;
}

/* The inputs of case c into in[]; returns their count. */
static int case_inputs(const rnn_case_t *c, th_tensor_t *in)
{
    int64_t sd[8], ld[8];
    int r = state_dims(c, sd), n = 1, k;

    in[0] = from_floats(c->dtype, c->nb_xdims, c->xdims, c->x);
    in[1] = c->h0 ? from_floats(c->dtype, r, sd, c->h0) : th_none();
    in[2] = c->c0 ? from_floats(c->dtype, r, sd, c->c0) : th_none();
    in[3] = th_none();
    if (c->lens) {
        int64_t i, cnt;
        for (k = 0; k < c->lens_rank; k++)
            ld[k] = c->xdims[k];
        in[3] = th_tensor(MICA_INT32, c->lens_rank, ld, NULL);
        cnt = th_volume(&in[3]);
        for (i = 0; i < cnt; i++)
            ((int32_t *)in[3].data)[i] = c->lens[i];
    }
    for (k = 0; k < 4; k++)
        if (in[k].data)
            n = k + 1;
    return n;
}

/* The expected outputs of case c into out[]; returns their count. */
static int case_outputs(const rnn_case_t *c, th_tensor_t *out)
{
    int64_t yd[8], sd[8];
    int r = state_dims(c, sd), k;

    for (k = 0; k < r - 1; k++)
        yd[k] = c->xdims[k];
    yd[r - 1] = (int64_t)c->dirs * c->hidden;
    out[0] = from_floats(c->dtype, r, yd, c->y);
    out[1] = from_floats(c->dtype, r, sd, c->hy);
    if (!c->cy)
        return 2;
    out[2] = from_floats(c->dtype, r, sd, c->cy);
    return 3;
}

static void free_all(th_tensor_t *t, int n)
{
    int k;
    for (k = 0; k < n; k++)
        th_free(&t[k]);
}

static void check_case(const rnn_case_t *c)
{
    th_tensor_t in[4], out[3];
    int nb_in = case_inputs(c, in), nb_out = case_outputs(c, out);
    th_check(c->name, "RNNv2", case_fields(c), nb_in, in, nb_out, out,
             c->dtype == MICA_FLOAT16 ? TOL16 : TOL32);
    free_all(in, 4);
    free_all(out, nb_out);
}

/* ---- the cuDNN layer's algorithms: persistent and standard -------------- */

/* Seeded values in [-scale, scale). */
static float *seeded(int64_t n, float scale, uint32_t *seed)
{
    float *v = malloc(sizeof(float) * (size_t)n);
    int64_t i;
    if (!v)
        bail("out of memory");
    for (i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        v[i] = scale * ((float)(*seed >> 8) / (float)(1u << 23) - 1.0f);
    }
    return v;
}

/*
 * A one-layer unidirectional `op` of hidden size h over x [n, t, e] of
 * dtype dt with seeded weights, CUDA against the CPU reference (no NumPy
 * values: what is checked is that each of cuDNN's paths computes what
 * the reference does).  lens: 0 none, 1 every length t, 2 ragged.
 */
static void path_case(const char *label, mica_dtype_t dt, const char *op,
                      int64_t n, int64_t t, int64_t e, int64_t h, int lens)
{
    const int64_t g = strcmp(op, "lstm") == 0 ? 4 : strcmp(op, "gru") == 0
                                                        ? 3 : 1;
    const int64_t wn = g * h * e, rn = g * h * h, bn = g * h;
    const int64_t xd[3] = {n, t, e};
    const float scale = 1.0f / sqrtf((float)h);
    uint32_t seed = 2024;
    float *w = seeded(wn, scale, &seed), *r = seeded(rn, scale, &seed);
    float *wb = seeded(bn, scale, &seed), *rb = seeded(bn, scale, &seed);
    float *xv = seeded(n * t * e, 1.0f, &seed);
    const float *wl[1] = {w}, *rl[1] = {r}, *wbl[1] = {wb}, *rbl[1] = {rb};
    th_fields_t *f = th_fields();
    th_tensor_t in[4];
    int64_t i;

    th_f_str(f, "op", op);
    th_f_int(f, "layers", 1);
    th_f_int(f, "hidden_size", h);
    th_f_int(f, "max_seq_length", t);
    list_field(f, "weights", 1, wl, &wn, dt);
    list_field(f, "recurrent_weights", 1, rl, &rn, dt);
    list_field(f, "biases", 1, wbl, &bn, dt);
    list_field(f, "recurrent_biases", 1, rbl, &bn, dt);
    in[0] = from_floats(dt, 3, xd, xv);
    in[1] = in[2] = th_none();
    in[3] = th_tensor(MICA_INT32, 1, &n, NULL);
    for (i = 0; i < n; i++)
        ((int32_t *)in[3].data)[i] =
            lens == 2 ? (int32_t)(1 + (i * 5) % t) : (int32_t)t;
    th_check(label, "RNNv2", f, lens ? 4 : 1, in, g == 4 ? 3 : 2, NULL,
             dt == MICA_FLOAT16 ? TOL16 : TOL32);
    free_all(in, 4);
    free(w);
    free(r);
    free(wb);
    free(rb);
    free(xv);
}

/*
 * oneDNN's implementation against the reference: `op` with `layers`
 * layers and `dirs` directions over x [n, t, e], initial states given,
 * seeded weights (a skip where oneDNN is not built).
 */
static void onednn_case(const char *op, int64_t layers, int64_t dirs,
                        int64_t n, int64_t t, int64_t e, int64_t h)
{
    const int64_t g = strcmp(op, "lstm") == 0 ? 4 : strcmp(op, "gru") == 0
                                                        ? 3 : 1;
    const int64_t ld = layers * dirs, bn = g * h;
    const int64_t xd[3] = {n, t, e}, sd[3] = {n, ld, h};
    int64_t wn[8], rn[8], bns[8];
    const float *wl[8], *rl[8], *wbl[8], *rbl[8];
    float *owned[40];
    uint32_t seed = 77;
    th_fields_t *f = th_fields();
    th_tensor_t in[3];
    char label[96];
    float *xv, *hv, *cv;
    int64_t k, no = 0;

    for (k = 0; k < ld; k++) {
        int64_t in_size = k < dirs ? e : dirs * h;
        wn[k] = g * h * in_size;
        rn[k] = g * h * h;
        bns[k] = bn;
        wl[k] = owned[no++] = seeded(wn[k], 0.5f, &seed);
        rl[k] = owned[no++] = seeded(rn[k], 0.5f, &seed);
        wbl[k] = owned[no++] = seeded(bn, 0.5f, &seed);
        rbl[k] = owned[no++] = seeded(bn, 0.5f, &seed);
    }
    xv = owned[no++] = seeded(n * t * e, 1.0f, &seed);
    hv = owned[no++] = seeded(n * ld * h, 1.0f, &seed);
    cv = owned[no++] = seeded(n * ld * h, 1.0f, &seed);
    th_f_str(f, "op", op);
    th_f_int(f, "layers", layers);
    th_f_int(f, "hidden_size", h);
    th_f_int(f, "max_seq_length", t);
    th_f_str(f, "direction", dirs == 2 ? "bidirection" : "unidirection");
    list_field(f, "weights", (int)ld, wl, wn, MICA_FLOAT32);
    list_field(f, "recurrent_weights", (int)ld, rl, rn, MICA_FLOAT32);
    list_field(f, "biases", (int)ld, wbl, bns, MICA_FLOAT32);
    list_field(f, "recurrent_biases", (int)ld, rbl, bns, MICA_FLOAT32);
    in[0] = from_floats(MICA_FLOAT32, 3, xd, xv);
    in[1] = from_floats(MICA_FLOAT32, 3, sd, hv);
    in[2] = from_floats(MICA_FLOAT32, 3, sd, cv);
    snprintf(label, sizeof label, "onednn %s, %d layer(s), %d direction(s), "
             "%d x %d", op, (int)layers, (int)dirs, (int)n, (int)t);
    th_check_impl(label, "RNNv2", f, g == 4 ? 3 : 2, in, g == 4 ? 3 : 2,
                  MICA_DEVICE_CPU, "onednn", TOL32);
    free_all(in, 3);
    for (k = 0; k < no; k++)
        free(owned[k]);
}

static void test_onednn(void)
{
    onednn_case("lstm", 2, 2, 3, 6, 5, 7);
    onednn_case("gru", 2, 2, 3, 6, 5, 7);
    onednn_case("gru", 1, 1, 1, 9, 16, 8);
    onednn_case("tanh", 2, 1, 2, 4, 3, 5);
    onednn_case("relu", 1, 2, 2, 4, 3, 5);
    onednn_case("lstm", 1, 1, 4, 30, 64, 32);
}

static void test_paths(void)
{
    const mica_dtype_t F16 = MICA_FLOAT16, F32 = MICA_FLOAT32;

    path_case("float16 LSTM, 8 x 12 steps, 128/128 (persistent)", F16,
              "lstm", 8, 12, 128, 128, 0);
    path_case("float16 LSTM, lengths all T (persistent)", F16, "lstm", 16,
              10, 128, 256, 1);
    path_case("float16 LSTM, ragged lengths (standard)", F16, "lstm", 16, 10,
              128, 128, 2);
    path_case("float16 tanh RNN, 24 x 9, 256/128 (persistent)", F16, "tanh",
              24, 9, 256, 128, 0);
    path_case("float16 LSTM, batch 12 (standard)", F16, "lstm", 12, 7, 128,
              128, 0);
    path_case("float16 GRU, batch 8 (standard)", F16, "gru", 8, 7, 128, 128,
              0);
    path_case("float16 LSTM, one sequence (standard)", F16, "lstm", 1, 9, 128,
              128, 0);
    path_case("float16 LSTM, one step (persistent)", F16, "lstm", 8, 1, 128,
              128, 0);
    path_case("float32 LSTM, 5 x 7, 24/16, ragged (standard)", F32, "lstm", 5,
              7, 24, 16, 2);
}

/* ---- runtime batch and steps within one profile -------------------------- */

static mica_dims_t dims3(int64_t a, int64_t b, int64_t c)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 3;
    d.d[0] = a;
    d.d[1] = b;
    d.d[2] = c;
    return d;
}

static mica_dims_t dims1(int64_t a)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = a;
    return d;
}

/* The network of dyn_a / dyn_b: x [-1, -1, E], states [-1, 2, H], lengths
 * [-1], one profile of 1..4 sequences of 1..6 steps. */
static mica_engine_t *dyn_engine(uint32_t device, const rnn_case_t *c)
{
    mica_context_t *ctx = th_context();
    mica_network_t *net = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    const char *ins[4] = {"x", "h0", "c0", "lens"};
    const char *outs[3] = {"y", "hy", "cy"};
    const int64_t E = c->input_size, H = c->hidden, LD = 2;
    mica_dims_t x = dims3(-1, -1, E), s = dims3(-1, LD, H), l = dims1(-1);
    mica_dims_t x0 = dims3(1, 1, E), x1 = dims3(2, 5, E), x2 = dims3(4, 6, E);
    mica_dims_t s0 = dims3(1, LD, H), s1 = dims3(2, LD, H);
    mica_dims_t s2 = dims3(4, LD, H), l0 = dims1(1), l1 = dims1(2);
    mica_dims_t l2 = dims1(4);
    th_fields_t *f = case_fields(c);
    int32_t k;
    int i;

    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &x, NULL) ||
        mica_network_add_input(net, "h0", MICA_FLOAT32, &s, NULL) ||
        mica_network_add_input(net, "c0", MICA_FLOAT32, &s, NULL) ||
        mica_network_add_input(net, "lens", MICA_INT32, &l, NULL) ||
        mica_network_add_profile(net, &k) ||
        mica_network_set_profile_dims(net, k, "x", &x0, &x1, &x2, NULL) ||
        mica_network_set_profile_dims(net, k, "h0", &s0, &s1, &s2, NULL) ||
        mica_network_set_profile_dims(net, k, "c0", &s0, &s1, &s2, NULL) ||
        mica_network_set_profile_dims(net, k, "lens", &l0, &l1, &l2, NULL))
        bail("dyn: %s", mica_context_error(ctx));
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "rnn";
    spec.type = "RNNv2";
    spec.nb_inputs = 4;
    spec.inputs = ins;
    spec.nb_outputs = 3;
    spec.outputs = outs;
    spec.fields = th_fields_view(f);
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("dyn: %s", mica_context_error(ctx));
    for (i = 0; i < 3; i++)
        if (mica_network_mark_output(net, outs[i], NULL) != MICA_OK)
            bail("dyn: %s", mica_context_error(ctx));
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("dyn: %s", mica_context_error(ctx));
    mica_network_destroy(net);
    th_fields_free(f);
    return e;
}

/* Run case c on exec x and compare with its expected outputs. */
static int dyn_run(mica_exec_t *x, const rnn_case_t *c)
{
    static const char *const names[4] = {"x", "h0", "c0", "lens"};
    static const char *const outs[3] = {"y", "hy", "cy"};
    th_tensor_t in[4], want[3];
    int nb_in = case_inputs(c, in), good = 1, i;
    char why[256];

    case_outputs(c, want);
    for (i = 0; i < nb_in && good; i++)
        good = mica_exec_set_input(x, names[i], &in[i].dims, in[i].data) ==
               MICA_OK;
    good = good && mica_exec_run(x) == MICA_OK;
    if (!good)
        diag("%s: %s", c->name, mica_context_error(th_context()));
    for (i = 0; i < 3 && good; i++) {
        mica_tensor_desc_t d;
        const void *data;
        th_tensor_t got;
        if (mica_exec_get_output(x, outs[i], &d, &data) != MICA_OK) {
            good = 0;
            break;
        }
        got = th_tensor(d.dtype, d.dims.nb_dims, d.dims.d, NULL);
        memcpy(got.data, data, (size_t)th_volume(&got) * 4);
        if (!th_same(&want[i], &got, TOL32, TOL32, why, sizeof why)) {
            diag("%s: output %s: %s", c->name, outs[i], why);
            good = 0;
        }
        th_free(&got);
    }
    free_all(in, 4);
    free_all(want, 3);
    return good;
}

static void test_dynamic(uint32_t device, const char *dev)
{
    mica_engine_t *e;
    mica_exec_t *x = NULL;

    if (device == MICA_DEVICE_CUDA && !th_cuda()) {
        skip("runtime batch and steps: %s: no usable GPU", dev);
        skip("runtime batch and steps: %s, second shape: no usable GPU", dev);
        return;
    }
    e = dyn_engine(device, &c_dyn_a);
    if (!e || mica_exec_create(e, &x) != MICA_OK) {
        ok(0, "runtime batch and steps: %s: builds", dev);
        ok(0, "runtime batch and steps: %s, second shape", dev);
        mica_engine_destroy(e);
        return;
    }
    ok(dyn_run(x, &c_dyn_a), "runtime batch and steps: %s: 2 x 5", dev);
    ok(dyn_run(x, &c_dyn_b), "runtime batch and steps: %s, second shape: "
       "3 x 3", dev);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* ---- empty tensors ------------------------------------------------------- */

/* A one-layer unidirectional LSTM, E 3, H 4: lstm_1l_uni_states's. */
static th_fields_t *lstm_fields(void)
{
    return case_fields(&c_lstm_1l_uni_states);
}

static void test_empty(void)
{
    const rnn_case_t *c = &c_lstm_1l_uni_states;
    int64_t xd[3] = {2, 0, 3}, sd[3] = {2, 1, 4}, yd[3] = {2, 0, 4};
    th_tensor_t in[3], want[3];

    /* No step: the final states are the initial ones. */
    in[0] = th_tensor(MICA_FLOAT32, 3, xd, NULL);
    in[1] = from_floats(MICA_FLOAT32, 3, sd, c->h0);
    in[2] = from_floats(MICA_FLOAT32, 3, sd, c->c0);
    want[0] = th_tensor(MICA_FLOAT32, 3, yd, NULL);
    want[1] = from_floats(MICA_FLOAT32, 3, sd, c->h0);
    want[2] = from_floats(MICA_FLOAT32, 3, sd, c->c0);
    th_check("no steps: final states are the initial ones", "RNNv2",
             lstm_fields(), 3, in, 3, want, TOL32);
    free_all(want, 3);
    /* ... or zeros without them. */
    want[0] = th_tensor(MICA_FLOAT32, 3, yd, NULL);
    want[1] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    want[2] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    th_check("no steps, no initial states: zeros", "RNNv2", lstm_fields(), 1,
             in, 3, want, TOL32);
    free_all(in, 3);
    free_all(want, 3);
    /* No sequence: every output empty. */
    xd[0] = sd[0] = yd[0] = 0;
    xd[1] = yd[1] = 5;
    in[0] = th_tensor(MICA_FLOAT32, 3, xd, NULL);
    want[0] = th_tensor(MICA_FLOAT32, 3, yd, NULL);
    want[1] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    want[2] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    th_check("no sequence: empty outputs", "RNNv2", lstm_fields(), 1, in, 3,
             want, TOL32);
    free_all(in, 1);
    free_all(want, 3);
}

/* ---- errors -------------------------------------------------------------- */

/* Fields of case lstm_1l_uni_states (no biases) with list `name`
 * replaced by `n` entries of `count` values of type t (n 0: left out). */
static th_fields_t *lstm_with(const char *name, int n, int64_t count,
                              mica_dtype_t t)
{
    const rnn_case_t *c = &c_lstm_1l_uni_states;
    th_fields_t *f = th_fields();
    th_tensor_t ts[4];
    int k;

    memset(ts, 0, sizeof ts);
    th_f_str(f, "op", "lstm");
    th_f_int(f, "layers", 1);
    th_f_int(f, "hidden_size", 4);
    th_f_int(f, "max_seq_length", 5);
    if (strcmp(name, "weights"))
        list_field(f, "weights", 1, c->w, c->wn, MICA_FLOAT32);
    if (strcmp(name, "recurrent_weights"))
        list_field(f, "recurrent_weights", 1, c->r, c->rn, MICA_FLOAT32);
    for (k = 0; k < n; k++)
        ts[k] = th_tensor(t, 1, &count, NULL);
    if (n > 0)
        th_f_weights_list(f, name, n, ts);
    for (k = 0; k < n; k++)
        th_free(&ts[k]);
    return f;
}

static void test_errors(void)
{
    const rnn_case_t *c = &c_lstm_1l_uni_states;
    int64_t xd[3] = {2, 5, 3}, bad[3] = {2, 6, 3}, sd[3] = {2, 2, 4};
    int64_t ld[1] = {2};
    th_tensor_t in[4];
    th_fields_t *f;
    int64_t n0 = 48, n1 = 128, bad1 = 64;
    th_tensor_t w[4];

    in[0] = from_floats(MICA_FLOAT32, 3, xd, c->x);
    th_check_error("a weights entry of the wrong size", "RNNv2",
                   lstm_with("weights", 1, 40, MICA_FLOAT32), 1, in, 3,
                   "weights[0] (layer 0, forward) has 40 values, not a "
                   "positive multiple of 4 gates x hidden_size 4");
    th_check_error("a recurrent weights entry of the wrong size", "RNNv2",
                   lstm_with("recurrent_weights", 1, 48, MICA_FLOAT32), 1, in,
                   3, "recurrent_weights[0] (layer 0, forward) has 48 values, "
                   "expected 64 (4 gates x hidden_size 4 x hidden_size 4)");
    th_check_error("a bias entry of the wrong size", "RNNv2",
                   lstm_with("biases", 1, 4, MICA_FLOAT32), 1, in, 3,
                   "biases[0] (layer 0, forward) has 4 values, expected 16 "
                   "(4 gates x hidden_size 4)");
    th_check_error("too many entries", "RNNv2",
                   lstm_with("recurrent_biases", 2, 16, MICA_FLOAT32), 1, in,
                   3, "'recurrent_biases' has 2 entries, expected 1 (one per "
                   "layer and direction)");
    th_check_error("int32 weights", "RNNv2",
                   lstm_with("biases", 1, 16, MICA_INT32), 1, in, 3,
                   "biases[0] (layer 0, forward) is int32; RNNv2 weights are "
                   "float32 or float16");
    /* Layer 1 of a bidirectional LSTM reads 2 x 4 values. */
    f = th_fields();
    th_f_str(f, "op", "lstm");
    th_f_int(f, "layers", 2);
    th_f_int(f, "hidden_size", 4);
    th_f_int(f, "max_seq_length", 5);
    th_f_str(f, "direction", "bidirection");
    w[0] = th_tensor(MICA_FLOAT32, 1, &n0, NULL);
    w[1] = th_tensor(MICA_FLOAT32, 1, &n0, NULL);
    w[2] = th_tensor(MICA_FLOAT32, 1, &n1, NULL);
    w[3] = th_tensor(MICA_FLOAT32, 1, &bad1, NULL);
    th_f_weights_list(f, "weights", 4, w);
    free_all(w, 4);
    list_field(f, "recurrent_weights", 4, c_lstm_2l_bi_ragged.r,
               c_lstm_2l_bi_ragged.rn, MICA_FLOAT32);
    th_check_error("layer 1's weights of the wrong size", "RNNv2", f, 1, in, 3,
                   "weights[3] (layer 1, backward) has 64 values, expected "
                   "128 (4 gates x hidden_size 4 x input size 8)");
    th_free(&in[0]);
    in[0] = th_tensor(MICA_FLOAT32, 3, bad, NULL);
    th_check_error("more steps than max_seq_length", "RNNv2",
                   lstm_with("biases", 0, 0, MICA_FLOAT32), 1, in, 3,
                   "input 0 (x) has 6 steps, more than max_seq_length (5)");
    th_free(&in[0]);
    {
        /* the engine fuzzer's finding: a profile of up to 2^62 steps (of
         * an empty batch, which the core now refuses) made the CPU
         * workspace's size overflow; steps beyond max_seq_length are
         * refused where the profile is known */
        static const int64_t lo[3] = {1, 1, 3}, e[3] = {1, 5, 3};
        static const int64_t hi[3] = {1, (int64_t)1 << 40, 3};
        in[0] = th_tensor(MICA_FLOAT32, 3, e, NULL);
        th_dynamic(0, 3, lo, hi);
        th_check_error("a profile of up to 2^40 steps", "RNNv2",
                       lstm_with("biases", 0, 0, MICA_FLOAT32), 1, in, 3,
                       "input 0 (x) has up to 1099511627776 steps, "
                       "more than max_seq_length (5)");
        th_dynamic(-1, 0, NULL, NULL);
        th_free(&in[0]);
    }
    bad[1] = 5;
    bad[2] = 2;
    in[0] = th_tensor(MICA_FLOAT32, 3, bad, NULL);
    th_check_error("x of the wrong size", "RNNv2",
                   lstm_with("biases", 0, 0, MICA_FLOAT32), 1, in, 3,
                   "input 0 (x) has 2 values per step but weights[0] is for "
                   "3");
    f = case_fields(&c_lstm_skip_2l_uni);
    th_check_error("skip mode needs E = H", "RNNv2", f, 1, in, 3,
                   "input 0 (x) has 2 values per step but input_mode 'skip' "
                   "needs hidden_size (4)");
    th_free(&in[0]);
    in[0] = from_floats(MICA_FLOAT32, 3, xd, c->x);
    in[1] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    th_check_error("hidden of the wrong shape", "RNNv2",
                   lstm_with("biases", 0, 0, MICA_FLOAT32), 2, in, 3,
                   "input 1 (hidden) must end in [1, 4] (layers x "
                   "directions, hidden_size)");
    th_free(&in[1]);
    sd[1] = 1;
    in[1] = th_none();
    in[2] = th_tensor(MICA_FLOAT32, 3, sd, NULL);
    th_check_error("a cell state for a GRU", "RNNv2",
                   case_fields(&c_gru_1l_uni_ragged), 3, in, 2,
                   "input 2 (cell) is for op 'lstm' only");
    th_free(&in[2]);
    in[2] = th_none();
    in[3] = th_tensor(MICA_INT32, 1, ld, NULL);
    ((int32_t *)in[3].data)[0] = 5;
    ((int32_t *)in[3].data)[1] = 0;
    th_check_error("a sequence length of 0", "RNNv2",
                   lstm_with("biases", 0, 0, MICA_FLOAT32), 4, in, 3,
                   "seq_lengths[1] is 0; every length must be within 1..5 "
                   "(the steps of input 0)");
    ((int32_t *)in[3].data)[1] = 6;
    th_check_error("a sequence length beyond T", "RNNv2",
                   lstm_with("biases", 0, 0, MICA_FLOAT32), 4, in, 3,
                   "seq_lengths[1] is 6");
    free_all(in, 4);
    in[0] = th_tensor(MICA_INT32, 3, xd, NULL);
    th_check_error("int32 x", "RNNv2", lstm_with("biases", 0, 0,
                                                 MICA_FLOAT32), 1, in, 3,
                   "input 0 (x) is int32; RNNv2 takes float32 or float16");
    th_free(&in[0]);
}

int main(void)
{
    size_t i, n = sizeof rnn_cases / sizeof rnn_cases[0];

    plan_lazy();
    th_context();
    for (i = 0; i < n; i++)
        check_case(rnn_cases[i]);
    test_dynamic(MICA_DEVICE_CPU, "cpu");
    test_dynamic(MICA_DEVICE_CUDA, "cuda");
    test_paths();
    test_onednn();
    test_empty();
    test_errors();
    return exit_status();
}
