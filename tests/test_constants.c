/*
 * tests/test_constants.c - Constant layers never run per query
 * (core/constants.c, mica/layer.h's constant_output): the tensor of a
 * Constant read by other layers takes no arena memory and says so
 * (mica_tensor_info_t.constant), its readers read the weights where the
 * engine keeps them, across runs, contexts and a saved and loaded engine;
 * an in-place layer reading it (tests/abi2's InPlaceAdd) never writes
 * into it; a Constant that is a network output still runs, and may be
 * bound to the caller's memory.  On CUDA (where usable) the same
 * network (d = c + ones by ElementWise there: InPlaceAdd has no CUDA
 * implementation) gives the CPU's outputs from the engine's one upload.
 *
 * The network (x [2, 3]):
 *   c = Constant [2, 3];  k = Constant [3] (a network output)
 *   s = x + c;  d = InPlaceAdd(c) = c + 1;  y = s + d
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;
static const float cw[6] = {0.5f, -1.0f, 2.0f, -3.0f, 4.0f, 0.25f};
static const float kw[3] = {7.0f, 8.0f, 9.0f};
static const float ones[6] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};

static const char *err(void)
{
    return mica_context_error(ctx);
}

static void add_constant(mica_network_t *net, const char *name,
                         const float *w, int rank, int64_t d0, int64_t d1)
{
    mica_weights_t wt;
    mica_field_t f;
    mica_fields_t fields = {1, &f};
    const char *outs[1] = {name};
    mica_layer_spec_t spec;

    memset(&wt, 0, sizeof wt);
    wt.dtype = MICA_FLOAT32;
    wt.dims.nb_dims = rank;
    wt.dims.d[0] = d0;
    wt.dims.d[1] = d1;
    wt.count = rank == 1 ? d0 : d0 * d1;
    wt.values = w;
    f.name = "weights";
    f.type = MICA_FIELD_WEIGHTS;
    f.count = 1;
    f.data = &wt;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s: %s", name, err());
}

static mica_engine_t *build(uint32_t device)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_layer_spec_t spec;
    const char *in[1] = {"c"}, *out[1] = {"d"};
    mica_dims_t d;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 3;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK)
        bail("network: %s", err());
    add_constant(net, "c", cw, 2, 2, 3);
    add_constant(net, "k", kw, 1, 3, 0);
    th_add_layer(net, "s", "ElementWise", "op", "sum", "x", "c", "s");
    if (device == MICA_DEVICE_CUDA) {
        /* InPlaceAdd runs on the CPU alone: d = c + ones */
        add_constant(net, "ones", ones, 2, 2, 3);
        th_add_layer(net, "d", "ElementWise", "op", "sum", "c", "ones", "d");
    } else {
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = "d";
        spec.type = "InPlaceAdd";
        spec.nb_inputs = spec.nb_outputs = 1;
        spec.inputs = in;
        spec.outputs = out;
        if (mica_network_add_layer(net, &spec) != MICA_OK)
            bail("InPlaceAdd: %s", err());
    }
    th_add_layer(net, "y", "ElementWise", "op", "sum", "s", "d", "y");
    if (mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_network_mark_output(net, "k", NULL) != MICA_OK)
        bail("outputs: %s", err());
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.passes = "none"; /* the network as written: binding alone */
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", err());
    mica_network_destroy(net);
    return e;
}

static mica_tensor_info_t tensor(mica_engine_t *e, const char *name)
{
    mica_tensor_info_t ti;
    memset(&ti, 0, sizeof ti);
    ti.struct_size = sizeof ti;
    if (mica_engine_tensor(e, mica_engine_find_tensor(e, name), &ti) !=
        MICA_OK)
        bail("tensor %s: %s", name, err());
    return ti;
}

/* One run of context ex: whether y = x + c + (c + 1) and k its weights
 * (k read where the caller bound it, when `kmem`). */
static int computes(mica_exec_t *ex, float shift, float *kmem)
{
    float x[6];
    const float *y, *k;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 3;
    for (i = 0; i < 6; i++)
        x[i] = (float)i + shift;
    if (mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, "y", &desc, (const void **)&y) != MICA_OK) {
        diag("run: %s", err());
        return 0;
    }
    for (i = 0; i < 6; i++)
        if (y[i] != x[i] + cw[i] + (cw[i] + 1.0f)) {
            diag("y[%d] = %g, want %g", i, y[i], x[i] + 2 * cw[i] + 1);
            return 0;
        }
    if (kmem)
        k = kmem;
    else if (mica_exec_get_output(ex, "k", &desc, (const void **)&k) !=
             MICA_OK) {
        diag("k: %s", err());
        return 0;
    }
    for (i = 0; i < 3; i++)
        if (k[i] != kw[i]) {
            diag("k[%d] = %g, want %g", i, k[i], kw[i]);
            return 0;
        }
    return 1;
}

static void test_cpu(void)
{
    mica_engine_t *e = build(MICA_DEVICE_CPU), *loaded = NULL;
    mica_exec_t *a = NULL, *b = NULL;
    mica_tensor_info_t c, k, d;
    void *data = NULL;
    size_t size = 0;
    float kmem[3] = {0, 0, 0};
    mica_dims_t kd;

    if (!e)
        bail("the network does not build");
    c = tensor(e, "c");
    k = tensor(e, "k");
    d = tensor(e, "d");
    ok(c.constant == 1 && c.offset == -1, "c, read by layers: a constant "
       "bound to the weights, no arena memory (constant %d, offset %lld)",
       (int)c.constant, (long long)c.offset);
    ok(k.constant == 0 && k.offset >= 0, "k, a network output: computed "
       "into the arena (constant %d, offset %lld)", (int)k.constant,
       (long long)k.offset);
    ok(d.alias != mica_engine_find_tensor(e, "c"), "the in-place layer does "
       "not take over the constant's memory");
    if (mica_exec_create(e, &a) != MICA_OK || mica_exec_create(e, &b) != MICA_OK)
        bail("exec: %s", err());
    ok(computes(a, 0.0f, NULL) && computes(a, 10.0f, NULL) &&
       computes(a, -3.0f, NULL), "three runs read the same weights (the "
       "in-place layer wrote none)");
    ok(computes(b, 1.0f, NULL), "a second context reads them too");
    memset(&kd, 0, sizeof kd);
    kd.nb_dims = 1;
    kd.d[0] = 3;
    ok(mica_exec_bind(b, "k", &kd, kmem) == MICA_OK &&
       computes(b, 2.0f, kmem), "the Constant output bound to the caller's "
       "memory is written there");
    mica_exec_destroy(a);
    mica_exec_destroy(b);
    if (mica_engine_serialize(e, &data, &size) != MICA_OK ||
        mica_engine_deserialize(ctx, data, size, &loaded) != MICA_OK)
        bail("save and load: %s", err());
    c = tensor(loaded, "c");
    ok(c.constant == 1 && c.offset == -1 &&
       mica_exec_create(loaded, &a) == MICA_OK && computes(a, 5.0f, NULL),
       "a loaded engine binds its constant and computes the same");
    mica_exec_destroy(a);
    mica_engine_destroy(loaded);
    mica_free(data);
    mica_engine_destroy(e);
}

static void test_cuda(void)
{
    mica_engine_t *e;
    mica_exec_t *a = NULL, *b = NULL;

    if (!th_cuda()) {
        skip_block(2, "cuda: no usable GPU");
        return;
    }
    e = build(MICA_DEVICE_CUDA);
    ok(e && tensor(e, "c").constant == 1 && mica_exec_create(e, &a) == MICA_OK &&
       computes(a, 0.0f, NULL) && computes(a, 4.0f, NULL),
       "cuda: the constant is uploaded once for the engine and read in "
       "place");
    ok(e && mica_exec_create(e, &b) == MICA_OK && computes(b, 1.0f, NULL),
       "cuda: a second context reads the same copy");
    mica_exec_destroy(a);
    mica_exec_destroy(b);
    mica_engine_destroy(e);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(7 + 2);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/abi2/.libs/abi2.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
    test_cpu();
    test_cuda();
    return 0;
}
