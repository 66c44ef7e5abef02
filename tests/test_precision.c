/*
 * tests/test_precision.c - layers in float16 where the build allows it:
 * which layers change, where casts go, per-layer precision, results close
 * to the float32 ones, constants clamped to float16's range, on the CPU
 * and (where usable) CUDA.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;

/*
 * x[2, 8] + c (Constant [2, 8]) -> relu -> sum over axis 1 -> y[2].
 * relu_precision: NULL, "float32" or "float16" for the relu layer;
 * const_precision likewise for the Constant.
 */
static mica_network_t *network(const char *relu_precision,
                               const char *const_precision)
{
    mica_network_t *net;
    mica_dims_t d;
    static float w[16];
    mica_weights_t wt;
    mica_field_t f[2];
    mica_fields_t cf = {1, f}, rf = {2, f};
    const char *outs[1] = {"c"}, *ins[1] = {"r"}, *routs[1] = {"y"};
    const char *relu = "relu", *sum = "sum";
    int64_t axes[1] = {1};
    mica_layer_spec_t spec;
    int i;

    for (i = 0; i < 16; i++)
        w[i] = (float)(i % 5) * 0.25f - 0.5f;
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 8;
    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL);
    memset(&wt, 0, sizeof wt);
    wt.dtype = MICA_FLOAT32;
    wt.count = 16;
    wt.values = w;
    wt.dims = d;
    f[0].name = "weights";
    f[0].type = MICA_FIELD_WEIGHTS;
    f[0].count = 1;
    f[0].data = &wt;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "const";
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &cf;
    spec.precision = const_precision;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s", mica_context_error(ctx));
    th_add_layer(net, "add", "ElementWise", "op", "sum", "x", "c", "s");
    {
        mica_field_t a = {"type", MICA_FIELD_STRING, 1, &relu};
        mica_fields_t af = {1, &a};
        const char *ai[1] = {"s"}, *ao[1] = {"r"};
        spec.name = "relu";
        spec.type = "Activation";
        spec.nb_inputs = 1;
        spec.inputs = ai;
        spec.outputs = ao;
        spec.fields = &af;
        spec.precision = relu_precision;
        if (mica_network_add_layer(net, &spec) != MICA_OK)
            bail("%s", mica_context_error(ctx));
    }
    f[0].name = "op";
    f[0].type = MICA_FIELD_STRING;
    f[0].count = 1;
    f[0].data = &sum;
    f[1].name = "axes";
    f[1].type = MICA_FIELD_INT;
    f[1].count = 1;
    f[1].data = axes;
    spec.name = "total";
    spec.type = "Reduce";
    spec.inputs = ins;
    spec.outputs = routs;
    spec.fields = &rf;
    spec.precision = NULL;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s", mica_context_error(ctx));
    mica_network_mark_output(net, "y", NULL);
    return net;
}

static mica_engine_t *build(mica_network_t *net, uint32_t device, int fp16)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.precisions = fp16 ? 1u << MICA_FLOAT16 : 0;
    cfg.no_passes = "pointwise"; /* its layers as written */
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", mica_context_error(ctx));
    return e;
}

/* y for the fixed input; 1 on success. */
static int run(mica_engine_t *e, float *y)
{
    mica_exec_t *x = NULL;
    mica_dims_t d;
    mica_tensor_desc_t desc;
    const void *p;
    float in[16];
    int i, good;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 8;
    for (i = 0; i < 16; i++)
        in[i] = (float)(i % 7) * 0.3f - 0.9f;
    good = e && mica_exec_create(e, &x) == MICA_OK &&
           mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
           mica_exec_run(x) == MICA_OK &&
           mica_exec_get_output(x, "y", &desc, &p) == MICA_OK &&
           desc.dtype == MICA_FLOAT32;
    if (good)
        memcpy(y, p, 2 * sizeof *y);
    mica_exec_destroy(x);
    return good;
}

/* The dtype of tensor `name` in e, -1 if there is none. */
static int dtype_of(mica_engine_t *e, const char *name)
{
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    int32_t t = mica_engine_find_tensor(e, name);
    return t >= 0 && mica_engine_tensor(e, t, &ti) == MICA_OK ? (int)ti.dtype
                                                             : -1;
}

static void test_device(uint32_t device, const char *dev)
{
    mica_network_t *net = network(NULL, NULL), *keep;
    mica_engine_t *e32 = build(net, device, 0), *e16 = build(net, device, 1);
    mica_engine_t *back = NULL, *mixed;
    float y32[2] = {0, 0}, y16[2] = {0, 0}, yb[2] = {0, 0};
    void *data = NULL;
    size_t size = 0;

    ok(e32 && mica_engine_nb_layers(e32) == 4 &&
       mica_engine_find_tensor(e32, "s@float16") < 0,
       "%s: without float16, nothing changes", dev);
    ok(e16 && dtype_of(e16, "s@float16") == MICA_FLOAT16 &&
       dtype_of(e16, "r@float16") == MICA_FLOAT16 &&
       dtype_of(e16, "y@float16") == MICA_FLOAT16 &&
       dtype_of(e16, "y") == MICA_FLOAT32,
       "%s: with float16, add, relu and the sum run in float16", dev);
    ok(e16 && mica_engine_find_tensor(e16, "x@float16") >= 0 &&
       mica_engine_find_tensor(e16, "c@float16") >= 0 &&
       dtype_of(e16, "c") == MICA_FLOAT32 && mica_engine_nb_layers(e16) == 7,
       "%s:   the Constant stays float32; casts for x, c and y (7 layers)",
       dev);
    ok(run(e32, y32) && run(e16, y16) &&
       fabs(y16[0] - y32[0]) <= 1e-2 * (1 + fabs(y32[0])) &&
       fabs(y16[1] - y32[1]) <= 1e-2 * (1 + fabs(y32[1])),
       "%s:   results within float16's precision of float32's (%g %g vs %g %g)",
       dev, y16[0], y16[1], y32[0], y32[1]);
    ok(e16 && mica_engine_serialize(e16, &data, &size) == MICA_OK &&
       mica_engine_deserialize(ctx, data, size, &back) == MICA_OK &&
       run(back, yb) && memcmp(yb, y16, sizeof yb) == 0,
       "%s:   and an engine file keeps it", dev);
    keep = network("float32", NULL);
    mixed = build(keep, device, 1);
    ok(mixed && dtype_of(mixed, "r") == MICA_FLOAT32 &&
       mica_engine_find_tensor(mixed, "s") >= 0 &&
       dtype_of(mixed, "r@float16") == MICA_FLOAT16,
       "%s: a layer with precision float32 stays float32, casts around it",
       dev);
    mica_engine_destroy(mixed);
    mica_network_destroy(keep);
    keep = network("float16", NULL);
    mixed = build(keep, device, 0);
    ok(mixed && dtype_of(mixed, "r@float16") == MICA_FLOAT16 &&
       dtype_of(mixed, "s") == MICA_FLOAT32 &&
       dtype_of(mixed, "r") == MICA_FLOAT32 &&
       mica_engine_find_tensor(mixed, "y@float16") < 0,
       "%s: precision float16 on one layer alone, without the build's "
       "float16: casts around it only", dev);
    mica_engine_destroy(mixed);
    mica_network_destroy(keep);
    mica_free(data);
    mica_engine_destroy(back);
    mica_engine_destroy(e16);
    mica_engine_destroy(e32);
    mica_network_destroy(net);
}

/*
 * y = x * c, c a Constant holding -3e38 (a mask's "minus infinity", as
 * Hugging Face writes finfo(float32).min): in float16 c is clamped to
 * -65504, so that x = 0 gives 0, not 0 * -inf = NaN.
 */
static void test_clamp(uint32_t device, const char *dev)
{
    mica_network_t *net;
    mica_engine_t *e;
    mica_dims_t d;
    static const float w[4] = {-3e38f, 1.0f, 70000.0f, -2.0f};
    static const float in[4] = {0.0f, 3.0f, 1.0f, 1.0f};
    mica_weights_t wt;
    mica_field_t f = {"weights", MICA_FIELD_WEIGHTS, 1, &wt};
    mica_fields_t cf = {1, &f};
    const char *outs[1] = {"c"};
    mica_layer_spec_t spec;
    mica_exec_t *x = NULL;
    mica_tensor_desc_t desc;
    const void *p = NULL;
    const float *y;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL);
    memset(&wt, 0, sizeof wt);
    wt.dtype = MICA_FLOAT32;
    wt.count = 4;
    wt.values = w;
    wt.dims = d;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "const";
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &cf;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s", mica_context_error(ctx));
    th_add_layer(net, "mul", "ElementWise", "op", "prod", "x", "c", "y");
    mica_network_mark_output(net, "y", NULL);
    e = build(net, device, 1);
    ok(e && dtype_of(e, "y@float16") == MICA_FLOAT16 &&
       mica_exec_create(e, &x) == MICA_OK &&
       mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) == MICA_OK &&
       mica_exec_get_output(x, "y", &desc, &p) == MICA_OK,
       "%s: a Constant beyond float16's range, read in float16, runs", dev);
    y = p;
    ok(y && y[0] == 0.0f && y[1] == 3.0f && y[2] == 65504.0f &&
       y[3] == -2.0f,
       "%s:   clamped to +-65504: 0 * -3e38 is 0, not NaN (%g %g %g %g)",
       dev, y ? y[0] : 0, y ? y[1] : 0, y ? y[2] : 0, y ? y[3] : 0);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

static void test_errors(void)
{
    mica_network_t *net = network(NULL, "float16");
    mica_engine_t *e = build(net, MICA_DEVICE_CPU, 0);
    mica_layer_spec_t spec;
    const char *outs[1] = {"q"}, *ins[1] = {"x"};

    ok(!e, "precision float16 on a layer that cannot take it fails");
    contains(mica_context_error(ctx), "layer 'const' (Constant): precision "
             "float16 is asked for, but implementation 'reference' does not "
             "run it in float16", "  naming the layer and implementation");
    mica_engine_destroy(e);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "bad";
    spec.type = "Identity";
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.precision = "int8";
    ok(mica_network_add_layer(net, &spec) != MICA_OK,
       "a precision other than float32 or float16 is refused");
    contains(mica_context_error(ctx), "precision 'int8' is not float32 or "
             "float16", "  saying so");
    mica_network_destroy(net);
}

int main(void)
{
    plan_lazy();
    ctx = th_context();
    test_device(MICA_DEVICE_CPU, "cpu");
    test_clamp(MICA_DEVICE_CPU, "cpu");
    test_errors();
    if (th_cuda()) {
        test_device(MICA_DEVICE_CUDA, "cuda");
        test_clamp(MICA_DEVICE_CUDA, "cuda");
    } else {
        skip_block(9, "cuda: no usable GPU");
    }
    return exit_status();
}
