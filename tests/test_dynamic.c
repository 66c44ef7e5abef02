/*
 * tests/test_dynamic.c - runtime dimensions, optimization profiles, shape
 * tensors and two-phase execution, through the C API, on the CPU and (where
 * a GPU is usable) on CUDA against the CPU.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_context_t *ctx;

static mica_dims_t dims(int n, int64_t a, int64_t b)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = n;
    d.d[0] = a;
    d.d[1] = b;
    return d;
}

static const char *err(void)
{
    return mica_context_error(ctx);
}

/* The networks as written (no graph pass: folding would compute the
 * Constants' sums at build time, and these tests look at the kinds of
 * the tensors the builder sees). */
static mica_engine_t *build(mica_network_t *net, uint32_t device)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.passes = "none";
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", err());
    return e;
}

/* x[-1, 6] -> relu -> y, one profile [1..8, 6]. */
static mica_network_t *relu_net(int two_profiles)
{
    mica_network_t *net;
    mica_dims_t x = dims(2, -1, 6);
    mica_dims_t lo = dims(2, 1, 6), mid = dims(2, 4, 6), hi = dims(2, 8, 6);
    int32_t k;

    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &x, NULL);
    th_add_layer(net, "relu", "Activation", "type", "relu", "x", NULL, "r");
    th_add_layer(net, "twice", "ElementWise", "op", "sum", "r", "r", "y");
    mica_network_mark_output(net, "y", NULL);
    mica_network_add_profile(net, &k);
    if (two_profiles) {
        hi = dims(2, 4, 6);
        mica_network_set_profile_dims(net, k, "x", &lo, &mid, &hi, NULL);
        lo = dims(2, 5, 6);
        mid = dims(2, 6, 6);
        hi = dims(2, 16, 6);
        mica_network_add_profile(net, &k);
    }
    if (mica_network_set_profile_dims(net, k, "x", &lo, &mid, &hi, NULL) != MICA_OK)
        bail("profile: %s", err());
    return net;
}

/* Run with batch n; check y = 2 relu(x). Returns 1 on success. */
static int run_batch(mica_exec_t *x, int64_t n, int32_t want_profile)
{
    mica_dims_t d = dims(2, n, 6);
    mica_tensor_desc_t desc;
    const float *out;
    float *in = malloc(sizeof *in * (size_t)(n * 6 + 1));
    int64_t i;
    int good;

    for (i = 0; i < n * 6; i++)
        in[i] = (float)((i * 7) % 11) - 5.0f;
    good = mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
           mica_exec_run(x) == MICA_OK &&
           mica_exec_get_output(x, "y", &desc, (const void **)&out) == MICA_OK;
    if (!good)
        diag("batch %lld: %s", (long long)n, err());
    good = good && desc.dims.nb_dims == 2 && desc.dims.d[0] == n &&
           desc.dims.d[1] == 6 &&
           (want_profile < 0 || mica_exec_profile(x) == want_profile);
    for (i = 0; good && i < n * 6; i++)
        good = out[i] == (in[i] > 0 ? 2 * in[i] : 0.0f);
    free(in);
    return good;
}

static void test_batches(uint32_t device, const char *dev)
{
    mica_network_t *net = relu_net(0);
    mica_engine_t *e = build(net, device);
    mica_exec_t *x = NULL;
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    const char *name, *meaning;
    mica_dims_t d = dims(2, 9, 6);
    float in[9 * 6] = {0};

    ok(e != NULL, "%s: a network with a runtime dimension builds", dev);
    if (!e) {
        skip_block(9, "no engine");
        mica_network_destroy(net);
        return;
    }
    mica_engine_tensor(e, mica_engine_find_tensor(e, "y"), &ti);
    is_string("[N, 6]", ti.shape, "%s: y's shape is symbolic", dev);
    ok(ti.dims.d[0] == -1 && ti.dims.d[1] == 6, "%s:   with -1 where runtime", dev);
    ok(mica_engine_nb_symbols(e) == 1 &&
       mica_engine_symbol(e, 0, &name, &meaning) == MICA_OK &&
       strcmp(name, "N") == 0 && strcmp(meaning, "x[0]") == 0,
       "%s: the symbol N stands for x[0]", dev);
    mica_exec_create(e, &x);
    ok(run_batch(x, 3, 0), "%s: batch 3", dev);
    ok(run_batch(x, 8, 0), "%s: batch 8 (the profile's max)", dev);
    ok(run_batch(x, 1, 0), "%s: batch 1 (its min)", dev);
    ok(run_batch(x, 0, -1) == 0, "%s: batch 0 is outside [1..8]", dev);
    ok(mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) != MICA_OK, "%s: batch 9 is refused", dev);
    is_string("no profile admits the inputs: input 'x' has shape [9, 6], "
              "outside profile 0's [1..8, 6]", err(),
              "%s:   naming input, shape and range", dev);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

static void test_profiles(uint32_t device, const char *dev)
{
    mica_network_t *net = relu_net(1);
    mica_engine_t *e = build(net, device);
    mica_exec_t *x = NULL;
    mica_dims_t mn, op, mx, d = dims(2, 6, 6);
    int32_t nv;
    const int32_t *a, *b, *c;
    float in[6 * 6] = {0};

    ok(e && mica_engine_nb_profiles(e) == 2, "%s: two profiles", dev);
    if (!e) {
        skip_block(7, "no engine");
        mica_network_destroy(net);
        return;
    }
    ok(mica_engine_profile_input(e, 1, 0, &mn, &op, &mx, &nv, &a, &b, &c) ==
           MICA_OK && mn.d[0] == 5 && op.d[0] == 6 && mx.d[0] == 16 && nv == 0,
       "%s: profile 1 reads back as [5..16]", dev);
    ok(mica_engine_profile_arena_bytes(e, 1) > mica_engine_profile_arena_bytes(e, 0),
       "%s: each profile plans for its own max (%lld vs %lld bytes)", dev,
       (long long)mica_engine_profile_arena_bytes(e, 1),
       (long long)mica_engine_profile_arena_bytes(e, 0));
    mica_exec_create(e, &x);
    ok(run_batch(x, 2, 0), "%s: batch 2 picks profile 0", dev);
    ok(run_batch(x, 12, 1), "%s: batch 12 picks profile 1", dev);
    ok(run_batch(x, 3, 0), "%s: and back to profile 0", dev);
    mica_exec_set_profile(x, 0);
    ok(mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) != MICA_OK, "%s: batch 6 refused with profile 0 forced",
       dev);
    contains(err(), "outside profile 0's [1..4, 6]", "%s:   naming its range", dev);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

/*
 * n: shape input [2]; c: Constant int32 [2] = {3, 4};
 * s = n + c (a shape output), v = c * c (an execution output).
 * c feeds both kinds.
 */
static void test_shape_tensors(uint32_t device, const char *dev)
{
    mica_network_t *net;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_tensor_desc_t desc;
    const int32_t *out;
    mica_dims_t d2 = dims(1, 2, 0);
    int32_t k, lo[2] = {0, 0}, mid[2] = {2, 2}, hi[2] = {10, 10};
    int32_t vals[2] = {5, 7}, big[2] = {5, 11};
    int32_t cdata[2] = {3, 4};
    mica_weights_t w;
    mica_field_t f;
    mica_fields_t fields = {1, &f};
    const char *outs[1] = {"c"};
    mica_layer_spec_t spec;

    mica_network_create(ctx, &net);
    mica_network_add_shape_input(net, "n", &d2, NULL);
    memset(&w, 0, sizeof w);
    w.dtype = MICA_INT32;
    w.count = 2;
    w.values = cdata;
    w.dims = d2;
    f.name = "weights";
    f.type = MICA_FIELD_WEIGHTS;
    f.count = 1;
    f.data = &w;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "const";
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    mica_network_add_layer(net, &spec);
    th_add_layer(net, "sum", "ElementWise", "op", "sum", "n", "c", "s");
    th_add_layer(net, "square", "ElementWise", "op", "prod", "c", "c", "v");
    mica_network_mark_shape_output(net, "s", NULL);
    mica_network_mark_output(net, "v", NULL);
    mica_network_add_profile(net, &k);
    mica_network_set_profile_values(net, k, "n", 2, lo, mid, hi, NULL);
    e = build(net, device);
    ok(e != NULL, "%s: a network with a shape-tensor input builds", dev);
    if (!e) {
        skip_block(8, "no engine");
        mica_network_destroy(net);
        return;
    }
    mica_engine_tensor(e, mica_engine_find_tensor(e, "c"), &ti);
    is_int(MICA_TENSOR_BOTH, ti.kind, "%s: the Constant is both E and S", dev);
    mica_engine_tensor(e, mica_engine_find_tensor(e, "s"), &ti);
    is_int(MICA_TENSOR_SHAPE, ti.kind, "%s: n + c is a shape tensor", dev);
    mica_engine_tensor(e, mica_engine_find_tensor(e, "v"), &ti);
    is_int(MICA_TENSOR_EXECUTION, ti.kind, "%s: c * c is an execution tensor", dev);
    mica_engine_tensor(e, mica_engine_find_tensor(e, "n"), &ti);
    is_int(MICA_TENSOR_SHAPE, ti.kind, "%s: n is a shape tensor", dev);
    mica_exec_create(e, &x);
    ok(mica_exec_set_input(x, "n", &d2, vals) == MICA_OK &&
       mica_exec_run(x) == MICA_OK &&
       mica_exec_get_output(x, "s", &desc, (const void **)&out) == MICA_OK &&
       out[0] == 8 && out[1] == 11, "%s: shape output computed in phase 1", dev);
    ok(mica_exec_get_output(x, "v", &desc, (const void **)&out) == MICA_OK &&
       out[0] == 9 && out[1] == 16, "%s: execution output on the device", dev);
    if (mica_exec_get_output(x, "v", &desc, (const void **)&out) == MICA_OK)
        diag("v = [%d, %d]", (int)out[0], (int)out[1]);
    else
        diag("v: %s", err());
    ok(mica_exec_set_input(x, "n", &d2, big) == MICA_OK &&
       mica_exec_run(x) != MICA_OK, "%s: shape values outside the profile", dev);
    contains(err(), "input 'n' has values [5, 11], outside profile 0's "
             "values [0..10, 0..10]", "%s:   refused, naming them", dev);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

/* Empty tensors: batch 0 through Activation and Reduce. */
static void test_empty(uint32_t device, const char *dev)
{
    mica_network_t *net;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    mica_dims_t xd = dims(2, -1, 3), lo = dims(2, 0, 3), hi = dims(2, 4, 3);
    mica_dims_t d0 = dims(2, 0, 3);
    mica_tensor_desc_t desc;
    const float *out;
    float none[1] = {0};
    int32_t k;
    int64_t axes[1] = {0};
    mica_field_t f[2];
    mica_fields_t fields = {2, f};
    const char *ins[1] = {"r"}, *outs[1] = {"s"}, *op = "sum";
    mica_layer_spec_t spec;

    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &xd, NULL);
    th_add_layer(net, "relu", "Activation", "type", "relu", "x", NULL, "r");
    f[0].name = "op";
    f[0].type = MICA_FIELD_STRING;
    f[0].count = 1;
    f[0].data = &op;
    f[1].name = "axes";
    f[1].type = MICA_FIELD_INT;
    f[1].count = 1;
    f[1].data = axes;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "sum";
    spec.type = "Reduce";
    spec.nb_inputs = 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = &fields;
    mica_network_add_layer(net, &spec);
    mica_network_mark_output(net, "r", NULL);
    mica_network_mark_output(net, "s", NULL);
    mica_network_add_profile(net, &k);
    mica_network_set_profile_dims(net, k, "x", &lo, &hi, &hi, NULL);
    e = build(net, device);
    if (!e) {
        skip_block(2, "no engine");
        mica_network_destroy(net);
        return;
    }
    mica_exec_create(e, &x);
    ok(mica_exec_set_input(x, "x", &d0, none) == MICA_OK &&
       mica_exec_run(x) == MICA_OK &&
       mica_exec_get_output(x, "r", &desc, (const void **)&out) == MICA_OK &&
       desc.dims.d[0] == 0 && desc.dims.d[1] == 3,
       "%s: a [0, 3] input gives a [0, 3] output", dev);
    ok(mica_exec_get_output(x, "s", &desc, (const void **)&out) == MICA_OK &&
       desc.dims.nb_dims == 1 && desc.dims.d[0] == 3 && out[0] == 0 &&
       out[1] == 0 && out[2] == 0, "%s: the sum over an empty axis is 0", dev);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

static void test_errors(void)
{
    mica_network_t *net;
    mica_engine_t *e;
    mica_dims_t xd = dims(2, -1, 6), fd = dims(1, 2, 0), lo = dims(2, 1, 6);
    mica_dims_t hi = dims(2, 8, 6);
    int32_t k;

    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &xd, "t.yaml:3:3");
    th_add_layer(net, "relu", "Activation", "type", "relu", "x", NULL, "y");
    mica_network_mark_output(net, "y", NULL);
    ok(mica_engine_build(net, NULL, &e) != MICA_OK,
       "a runtime dimension without a profile is refused");
    contains(err(), "t.yaml:3:3: input 'x' has a runtime dimension: the "
             "network needs an optimization profile", "  saying what is missing");
    mica_network_add_profile(net, &k);
    ok(mica_network_set_profile_dims(net, k, "x", &hi, &lo, &hi, NULL) != MICA_OK,
       "min > opt is refused");
    contains(err(), "needs 0 <= min <= opt <= max, got 8/1/8", "  with the values");
    mica_network_destroy(net);

    mica_network_create(ctx, &net);
    mica_network_add_input(net, "f", MICA_INT32, &fd, "t.yaml:4:3");
    th_add_layer(net, "sum", "ElementWise", "op", "sum", "f", "f", "y");
    mica_network_mark_shape_output(net, "y", NULL);
    ok(mica_engine_build(net, NULL, &e) != MICA_OK,
       "a network input used as a shape tensor must be declared one");
    contains(err(), "t.yaml:4:3: input 'f' is used as a shape tensor by layer "
             "'sum' but is not declared as one", "  naming it and its reader");
    mica_network_destroy(net);

    mica_network_create(ctx, &net);
    mica_network_add_shape_input(net, "n", &fd, NULL);
    mica_network_add_input(net, "f", MICA_FLOAT32, &fd, NULL);
    th_add_layer(net, "id", "Identity", "dtype", "float32", "n", NULL, "y");
    mica_network_mark_shape_output(net, "y", "t.yaml:9:17");
    mica_network_add_profile(net, &k);
    {
        int32_t v[2] = {1, 1};
        mica_network_set_profile_values(net, k, "n", 2, v, v, v, NULL);
    }
    ok(mica_engine_build(net, NULL, &e) != MICA_OK,
       "an output for shapes must be int32");
    contains(err(), "'y' is an output for shapes, so it must be int32, but it "
             "is float32", "  saying so");
    ok(mica_network_add_shape_input(net, "m", &xd, NULL) != MICA_OK,
       "a shape-tensor input of rank 2 is refused");
    mica_network_destroy(net);
}

/*
 * A shape tensor whose length is only known at run time: Slice of a
 * constant with its size from a shape input, used as reshape dims.
 */
static void test_runtime_length(void)
{
    mica_network_t *net;
    mica_engine_t *e = NULL;
    mica_dims_t d1 = dims(1, 1, 0), d4 = dims(1, 4, 0), xd = dims(1, 24, 0);
    int32_t k, cdata[4] = {2, 3, 4, 1}, lo[1] = {1}, hi[1] = {4};
    int64_t zero[1] = {0}, one[1] = {1};
    mica_weights_t w;
    mica_field_t cf = {"weights", MICA_FIELD_WEIGHTS, 1, &w};
    mica_field_t sf[2] = {{"start", MICA_FIELD_INT, 1, zero},
                          {"stride", MICA_FIELD_INT, 1, one}};
    mica_fields_t cfs = {1, &cf}, sfs = {2, sf};
    const char *c_out[1] = {"c"}, *s_in[4] = {"c", NULL, "n", NULL};
    const char *s_out[1] = {"s"};
    mica_layer_spec_t spec;

    mica_network_create(ctx, &net);
    mica_network_add_input(net, "x", MICA_FLOAT32, &xd, NULL);
    mica_network_add_shape_input(net, "n", &d1, NULL);
    memset(&w, 0, sizeof w);
    w.dtype = MICA_INT32;
    w.count = 4;
    w.values = cdata;
    w.dims = d4;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "const";
    spec.type = "Constant";
    spec.nb_outputs = 1;
    spec.outputs = c_out;
    spec.fields = &cfs;
    mica_network_add_layer(net, &spec);
    spec.name = "slice";
    spec.type = "Slice";
    spec.nb_inputs = 4;
    spec.inputs = s_in;
    spec.outputs = s_out;
    spec.fields = &sfs;
    spec.origin = "t.yaml:7:5";
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("slice: %s", err());
    th_add_layer(net, "reshape", "Shuffle", NULL, NULL, "x", "s", "y");
    mica_network_mark_output(net, "y", NULL);
    mica_network_add_profile(net, &k);
    mica_network_set_profile_values(net, k, "n", 1, lo, hi, hi, NULL);
    ok(mica_engine_build(net, NULL, &e) != MICA_OK,
       "a shape tensor whose length is known only at run time is refused");
    contains(err(), "t.yaml:7:5: layer 'slice' (Slice): 's' is used as a shape "
             "tensor, but its shape [n[0]] is not a build-time constant",
             "  naming the layer, the tensor and its shape");
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

int main(void)
{
    plan_lazy();
    ctx = th_context();
    test_batches(MICA_DEVICE_CPU, "cpu");
    test_profiles(MICA_DEVICE_CPU, "cpu");
    test_shape_tensors(MICA_DEVICE_CPU, "cpu");
    test_empty(MICA_DEVICE_CPU, "cpu");
    test_errors();
    test_runtime_length();
    if (th_cuda()) {
        test_batches(MICA_DEVICE_CUDA, "cuda");
        test_profiles(MICA_DEVICE_CUDA, "cuda");
        test_shape_tensors(MICA_DEVICE_CUDA, "cuda");
        test_empty(MICA_DEVICE_CUDA, "cuda");
    } else {
        skip_block(29, "cuda: no usable GPU");
    }
    return exit_status();
}
