/*
 * tests/test_engine.c - engine files: build, save, load, run equals a
 * direct run (CPU, and CUDA where usable); every damaged file is refused
 * with one line and nothing crashes.
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

/*
 * x[-1, 4] + c (a Constant [1, 4] of weights) -> relu -> y, profile
 * [1..8, 4].  The weights travel in the Constant's saved state.
 */
static mica_network_t *network(void)
{
    mica_network_t *net;
    mica_dims_t xd, lo, hi, cd;
    float w[4] = {0.5f, -1.0f, 2.0f, -3.0f};
    mica_weights_t wt;
    mica_field_t f;
    mica_fields_t fields = {1, &f};
    const char *outs[1] = {"c"};
    mica_layer_spec_t spec;
    int32_t k;

    memset(&xd, 0, sizeof xd);
    xd.nb_dims = 2;
    xd.d[0] = -1;
    xd.d[1] = 4;
    lo = hi = cd = xd;
    lo.d[0] = 1;
    hi.d[0] = 8;
    cd.d[0] = 1;
    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &xd, NULL);
    memset(&wt, 0, sizeof wt);
    wt.dtype = MICA_FLOAT32;
    wt.count = 4;
    wt.values = w;
    wt.dims = cd;
    f.name = "weights";
    f.type = MICA_FIELD_WEIGHTS;
    f.count = 1;
    f.data = &wt;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "bias";
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    spec.origin = "net.yaml:9:5";
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("constant: %s", err());
    th_add_layer(net, "add", "ElementWise", "op", "sum", "x", "c", "s");
    th_add_layer(net, "relu", "Activation", "type", "relu", "s", NULL, "y");
    mica_network_mark_output(net, "y", NULL);
    mica_network_add_profile(net, &k);
    mica_network_set_profile_dims(net, k, "x", &lo, &hi, &hi, NULL);
    return net;
}

/* Run e on 3 rows; the output copied into out[12]. 1 on success. */
static int run3(mica_engine_t *e, float *out)
{
    mica_exec_t *x = NULL;
    mica_dims_t d;
    mica_tensor_desc_t desc;
    const void *p;
    float in[12];
    int i, good;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 3;
    d.d[1] = 4;
    for (i = 0; i < 12; i++)
        in[i] = (float)(i % 5) - 2.0f;
    good = mica_exec_create(e, &x) == MICA_OK &&
           mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
           mica_exec_run(x) == MICA_OK &&
           mica_exec_get_output(x, "y", &desc, &p) == MICA_OK &&
           desc.dims.d[0] == 3;
    if (good)
        memcpy(out, p, sizeof(float) * 12);
    else
        diag("run: %s", err());
    mica_exec_destroy(x);
    return good;
}

static mica_engine_t *build(uint32_t device)
{
    mica_network_t *net = network();
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", err());
    mica_network_destroy(net);
    return e;
}

static void test_round_trip(uint32_t device, const char *dev)
{
    mica_engine_t *e = build(device), *back = NULL, *loaded = NULL;
    void *data = NULL;
    size_t size = 0;
    float a[12], b[12], c[12];
    char path[256];
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};

    if (!e) {
        skip_block(6, "%s: no engine", dev);
        return;
    }
    ok(mica_engine_serialize(e, &data, &size) == MICA_OK && size > 32,
       "%s: serialize (%zu bytes)", dev, size);
    ok(mica_engine_deserialize(ctx, data, size, &back) == MICA_OK,
       "%s: deserialize", dev);
    if (!back)
        diag("%s", err());
    ok(back && run3(e, a) && run3(back, b) && memcmp(a, b, sizeof a) == 0,
       "%s: the loaded engine computes what the built one does", dev);
    ok(back && mica_engine_tensor(back, mica_engine_find_tensor(back, "y"),
                                  &ti) == MICA_OK &&
       strcmp(ti.shape, "[N, 4]") == 0 && mica_engine_nb_profiles(back) == 1,
       "%s: with its symbolic shapes and profile", dev);
    memset(&li, 0, sizeof li);
    li.struct_size = sizeof li;
    if (back)
        mica_engine_layer(back, 0, &li);
    ok(back && li.implementation &&
       mica_engine_device(back) == mica_engine_device(e),
       "%s: for the same device, layer 0 implementation '%s'", dev,
       li.implementation ? li.implementation : "");
    snprintf(path, sizeof path, "%s/test-engine-%s.mica",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", dev);
    ok(mica_engine_save(e, path) == MICA_OK && mica_engine_file_probe(path) &&
       mica_engine_load(ctx, path, &loaded) == MICA_OK && run3(loaded, c) &&
       memcmp(a, c, sizeof a) == 0, "%s: save, probe, load, run", dev);
    remove(path);
    mica_engine_destroy(loaded);
    mica_engine_destroy(back);
    mica_engine_destroy(e);
    mica_free(data);
}

/* Header fields: magic 0, format 8, ABI 12, size 16, checksum 24. */
uint64_t mica__checksum(const unsigned char *p, size_t n);

static void reseal(unsigned char *p, size_t size)
{
    uint64_t sum = mica__checksum(p + 32, size - 32);
    memcpy(p + 24, &sum, 8);
}

static void test_damage(void)
{
    mica_engine_t *e = build(MICA_DEVICE_CPU), *out = NULL;
    unsigned char *data = NULL, *copy;
    size_t size = 0, i;
    int refused = 1, survived = 1, one_line = 1;
    uint32_t v;

    if (!e || mica_engine_serialize(e, (void **)&data, &size) != MICA_OK)
        bail("no engine to damage: %s", err());
    copy = malloc(size);
    for (i = 0; i < size; i++)
        if (mica_engine_deserialize(ctx, data, i, &out) == MICA_OK) {
            refused = 0;
            mica_engine_destroy(out);
        } else if (strchr(err(), '\n')) {
            one_line = 0;
        }
    ok(refused, "truncated at each of its %zu byte offsets: refused", size);
    ok(one_line, "  each with one line");
    contains((mica_engine_deserialize(ctx, data, size - 1, &out), err()),
             "is truncated", "  saying it is truncated");
    refused = 1;
    for (i = 0; i < size; i++) {
        memcpy(copy, data, size);
        copy[i] ^= 0x5a;
        if (mica_engine_deserialize(ctx, copy, size, &out) == MICA_OK) {
            refused = 0;
            mica_engine_destroy(out);
        }
    }
    ok(refused, "a flipped byte anywhere: refused");
    /* Damage behind a valid checksum reaches the parser itself. */
    for (i = 32; i < size; i++) {
        memcpy(copy, data, size);
        copy[i] = (unsigned char)(copy[i] + 0x81);
        reseal(copy, size);
        if (mica_engine_deserialize(ctx, copy, size, &out) == MICA_OK)
            mica_engine_destroy(out);
        else if (!err()[0])
            survived = 0;
    }
    ok(survived, "damage behind a valid checksum: an engine or a message, "
       "never a crash");
    memcpy(copy, data, size);
    v = 5;
    memcpy(copy + 8, &v, 4);
    ok(mica_engine_deserialize(ctx, copy, size, &out) != MICA_OK,
       "a format version from the future: refused");
    contains(err(), "format version 5; this mica reads versions 1 to 4",
             "  saying so");
    v = 0;
    memcpy(copy + 8, &v, 4);
    ok(mica_engine_deserialize(ctx, copy, size, &out) != MICA_OK,
       "format version 0: refused");
    contains(err(), "format version 0; this mica reads versions 1 to 4",
             "  saying so");
    /* The format is in the header, outside the checksum. */
    v = 1;
    memcpy(copy + 8, &v, 4);
    ok(mica_engine_deserialize(ctx, copy, size, &out) != MICA_OK &&
       strstr(err(), "is corrupt"), "a format-4 file labelled format 1: "
       "refused as corrupt (format 1 holds a network, not an engine)");
    memcpy(copy, data, size);
    v = 99;
    memcpy(copy + 12, &v, 4);
    ok(mica_engine_deserialize(ctx, copy, size, &out) != MICA_OK,
       "an ABI version this host does not support: refused");
    contains(err(), "ABI version 99", "  naming it");
    memcpy(copy, "NOTMICA!", 8);
    ok(mica_engine_deserialize(ctx, copy, size, &out) != MICA_OK,
       "not an engine at all: refused");
    contains(err(), "not a mica engine", "  saying so");
    free(copy);
    mica_free(data);
    mica_engine_destroy(e);
}

/* A context that lacks the Activation module cannot load the engine. */
static void test_missing_module(void)
{
    mica_engine_t *e = build(MICA_DEVICE_CPU), *out = NULL;
    mica_context_t *small = NULL;
    const char *dir = getenv("MICA_MODULE_DIR");
    const char *keep[] = {"mica_constant.so", "mica_elementwise.so"};
    void *data = NULL;
    size_t size = 0;
    char path[4096];
    int i;

    if (!e || !dir || mica_engine_serialize(e, &data, &size) != MICA_OK) {
        skip_block(2, "no engine or no module folder");
        mica_engine_destroy(e);
        return;
    }
    mica_context_create(&small);
    for (i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, keep[i]);
        mica_context_load_file(small, path);
    }
    ok(mica_engine_deserialize(small, data, size, &out) != MICA_OK,
       "a layer whose module is not loaded: refused");
    contains(mica_context_error(small), "layer 'relu' needs Activation v1 "
             "(implementation 'vec')", "  naming the layer and what it "
             "needs");
    mica_engine_destroy(out);
    mica_context_destroy(small);
    mica_free(data);
    mica_engine_destroy(e);
}

/*
 * Bindings: input and output in the caller's memory on the engine's
 * device, and (CUDA) the caller's stream.
 */
static void test_bind(uint32_t device, const char *dev)
{
    static const float bias[4] = {0.5f, -1.0f, 2.0f, -3.0f};
    mica_engine_t *e = build(device);
    mica_exec_t *x = NULL;
    mica_dims_t d, yd;
    float in[5 * 4], out[5 * 4];
    void *din = in, *dout = out, *stream = NULL;
    int i, good = 1;
    mica_tensor_desc_t desc;
    const void *p;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 5;
    d.d[1] = 4;
    for (i = 0; i < 20; i++)
        in[i] = (float)(i % 7) - 3.0f;
#ifdef MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA &&
        (cudaMalloc(&din, sizeof in) != cudaSuccess ||
         cudaMalloc(&dout, sizeof out) != cudaSuccess ||
         cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice) != cudaSuccess ||
         cudaStreamCreate((cudaStream_t *)&stream) != cudaSuccess))
        bail("cuda setup failed");
#endif
    ok(e && mica_exec_create(e, &x) == MICA_OK &&
       mica_exec_bind(x, "x", &d, din) == MICA_OK &&
       mica_exec_tensor_dims(x, "y", &yd) == MICA_OK && yd.d[0] == 5 &&
       mica_exec_bind(x, "y", NULL, dout) == MICA_OK &&
       (!stream || mica_exec_set_stream(x, stream) == MICA_OK) &&
       mica_exec_run(x) == MICA_OK, "%s: a run with bound input and output%s",
       dev, stream ? " on the caller's stream" : "");
#ifdef MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA &&
        cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess)
        good = 0;
#endif
    for (i = 0; i < 20; i++) {
        float want = in[i] + bias[i % 4];
        good &= out[i] == (want > 0 ? want : 0.0f);
    }
    ok(good, "%s:   writes the caller's output memory", dev);
    ok(x && mica_exec_get_output(x, "y", &desc, &p) != MICA_OK &&
       strstr(err(), "bound to the caller's memory"),
       "%s:   and get_output points there", dev);
    ok(x && mica_exec_set_stream(x, device == MICA_DEVICE_CPU ? (void *)1 : NULL) ==
               (device == MICA_DEVICE_CPU ? MICA_ERR_INVALID : MICA_OK),
       "%s: %s", dev, device == MICA_DEVICE_CPU
                          ? "a stream is refused on the CPU"
                          : "back to the context's own stream");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
#ifdef MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        cudaFree(din);
        cudaFree(dout);
        cudaStreamDestroy((cudaStream_t)stream);
    }
#endif
}

/* One thread's share: many runs of its own context, checked each time. */
typedef struct worker {
    mica_exec_t *x;
    int64_t rows;
    int good;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    static const float bias[4] = {0.5f, -1.0f, 2.0f, -3.0f};
    float in[8 * 4];
    mica_dims_t d;
    mica_tensor_desc_t desc;
    const float *out;
    int r, i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = w->rows;
    d.d[1] = 4;
    w->good = 1;
    for (r = 0; r < 200 && w->good; r++) {
        for (i = 0; i < w->rows * 4; i++)
            in[i] = (float)((r + i * 3) % 9) - 4.0f;
        if (mica_exec_set_input(w->x, "x", &d, in) != MICA_OK ||
            mica_exec_run(w->x) != MICA_OK ||
            mica_exec_get_output(w->x, "y", &desc, (const void **)&out) !=
                MICA_OK || desc.dims.d[0] != w->rows) {
            w->good = 0;
            break;
        }
        for (i = 0; i < w->rows * 4; i++) {
            float want = in[i] + bias[i % 4];
            if (out[i] != (want > 0 ? want : 0.0f))
                w->good = 0;
        }
    }
    return NULL;
}

/* Two execution contexts of one engine, on two threads at once. */
static void test_threads(uint32_t device, const char *dev)
{
    mica_engine_t *e = build(device);
    worker_t w[2] = {{NULL, 3, 0}, {NULL, 7, 0}};
    pthread_t th[2];
    int i, started = 0;

    for (i = 0; e && i < 2; i++)
        if (mica_exec_create(e, &w[i].x) != MICA_OK)
            diag("exec: %s", err());
    for (i = 0; e && w[0].x && w[1].x && i < 2; i++)
        started += pthread_create(&th[i], NULL, work, &w[i]) == 0;
    for (i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    ok(started == 2 && w[0].good && w[1].good,
       "%s: two contexts of one engine on two threads, 200 runs each", dev);
    for (i = 0; i < 2; i++)
        mica_exec_destroy(w[i].x);
    mica_engine_destroy(e);
}

int main(void)
{
    plan_lazy();
    ctx = th_context();
    test_round_trip(MICA_DEVICE_CPU, "cpu");
    test_damage();
    test_missing_module();
    test_threads(MICA_DEVICE_CPU, "cpu");
    test_bind(MICA_DEVICE_CPU, "cpu");
    if (th_cuda()) {
        test_round_trip(MICA_DEVICE_CUDA, "cuda");
        test_threads(MICA_DEVICE_CUDA, "cuda");
        test_bind(MICA_DEVICE_CUDA, "cuda");
    } else {
        skip_block(11, "cuda: no usable GPU");
    }
    return exit_status();
}
