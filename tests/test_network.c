/*
 * tests/test_network.c - the generic network API, graph validation, the
 * memory plan and execution on the CPU, through in-tree modules.
 */
#include <config.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static mica_network_t *net;

static mica_dims_t dims1(int64_t n)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = n;
    return d;
}

/* Add a layer with one field (enum by name) and up to two inputs. */
static mica_status_t add(const char *name, const char *type, const char *key,
                         const char *value, const char *a, const char *b,
                         const char *out, const char *origin)
{
    th_fields_t *f = th_fields();
    const char *ins[2] = {a, b}, *outs[1] = {out};
    mica_layer_spec_t spec;
    mica_status_t st;

    if (key)
        th_f_str(f, key, value);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_inputs = b ? 2 : 1;
    spec.inputs = ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = th_fields_view(f);
    spec.origin = origin;
    st = mica_network_add_layer(net, &spec);
    th_fields_free(f);
    return st;
}

static void fresh(int64_t n, mica_dtype_t dtype)
{
    mica_dims_t d = dims1(n);
    mica_network_destroy(net);
    if (mica_network_create(th_context(), &net) != MICA_OK ||
        mica_network_add_input(net, "x", dtype, &d, "t.yaml:2:3") != MICA_OK)
        bail("cannot start a network: %s", mica_context_error(th_context()));
}

static const char *err(void)
{
    return mica_context_error(th_context());
}

static void test_errors(void)
{
    th_fields_t *f;
    mica_layer_spec_t spec;
    const char *in[1] = {"x"}, *out[1] = {"y"};
    mica_dims_t d = dims1(4);

    fresh(4, MICA_FLOAT32);
    ok(add("a", "NoSuchLayer", NULL, NULL, "x", NULL, "y", "t.yaml:5:5") != MICA_OK,
       "unknown type refused");
    contains(err(), "t.yaml:5:5: layer 'a'", "  with position and layer");
    contains(err(), "NoSuchLayer", "  and the type");

    ok(add("a", "Activation", "kind", "relu", "x", NULL, "y", NULL) != MICA_OK,
       "unknown param refused");
    contains(err(), "unknown param 'kind'", "  naming it");

    f = th_fields();
    th_f_int(f, "type", 3);
    th_f_str(f, "type", "relu");
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "a";
    spec.type = "Activation";
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    spec.fields = th_fields_view(f);
    ok(mica_network_add_layer(net, &spec) != MICA_OK, "param given twice refused");
    contains(err(), "given twice", "  saying so");
    th_fields_free(f);

    f = th_fields();
    th_f_float(f, "type", 1.5);
    spec.fields = th_fields_view(f);
    ok(mica_network_add_layer(net, &spec) != MICA_OK, "param of the wrong type");
    contains(err(), "param 'type': expected enum, got float", "  naming both types");
    th_fields_free(f);

    ok(add("a", "Activation", "type", "relux", "x", NULL, "y", NULL) != MICA_OK,
       "bad enum value refused");
    contains(err(), "'relux' is not one of relu, sigmoid", "  listing the values");

    ok(add("a", "Activation", NULL, NULL, "x", NULL, "y", NULL) != MICA_OK,
       "missing required param refused");
    contains(err(), "missing required param 'type'", "  naming it");

    fresh(4, MICA_FLOAT32);
    ok(add("a", "Activation", "type", "relu", "nope", NULL, "y", "t.yaml:7:9") == MICA_OK,
       "undefined input is accepted when added");
    ok(mica_network_validate(net) != MICA_OK, "  and refused by validation");
    contains(err(), "t.yaml:7:9: layer 'a': input 'nope' is not defined",
             "  with position, layer and name");

    fresh(4, MICA_FLOAT32);
    add("a", "Activation", "type", "relu", "x", NULL, "y", NULL);
    add("b", "Activation", "type", "relu", "x", NULL, "y", "t.yaml:9:3");
    ok(mica_network_validate(net) != MICA_OK, "tensor defined twice refused");
    contains(err(), "t.yaml:9:3: layer 'b': tensor 'y' is defined twice",
             "  naming layer and tensor");
    contains(err(), "output of layer 'a'", "  and the first definition");

    fresh(4, MICA_FLOAT32);
    add("a", "Activation", "type", "relu", "x", NULL, "x", NULL);
    ok(mica_network_validate(net) != MICA_OK, "redefining a network input refused");
    contains(err(), "is also a network input", "  saying so");

    fresh(4, MICA_FLOAT32);
    add("a", "ElementWise", "op", "sum", "x", "c", "b_in", NULL);
    add("b", "Activation", "type", "relu", "b_in", NULL, "c", NULL);
    ok(mica_network_validate(net) != MICA_OK, "cycle refused");
    contains(err(), "cycle", "  as a cycle");
    contains(err(), "a -> b -> a", "  with its path");

    fresh(4, MICA_FLOAT32);
    mica_network_add_input(net, "i", MICA_INT32, &d, NULL);
    add("add", "ElementWise", "op", "sum", "x", "i", "y", "t.yaml:4:3");
    ok(mica_network_validate(net) != MICA_OK, "dtype mismatch refused");
    contains(err(), "t.yaml:4:3: layer 'add' (ElementWise)", "  naming the layer");

    fresh(4, MICA_FLOAT32);
    d.nb_dims = 2;
    d.d[0] = 2;
    d.d[1] = 4;
    mica_network_add_input(net, "m", MICA_FLOAT32, &d, NULL);
    d = dims1(3);
    mica_network_add_input(net, "v", MICA_FLOAT32, &d, NULL);
    add("add", "ElementWise", "op", "sum", "m", "v", "y", NULL);
    ok(mica_network_validate(net) != MICA_OK, "rank mismatch refused");
    contains(err(), "layer 'add' (ElementWise)", "  naming the layer");

    fresh(4, MICA_FLOAT32);
    add("a", "Activation", "type", "relu", "x", NULL, "y", NULL);
    mica_network_mark_output(net, "z", "t.yaml:12:11");
    ok(mica_network_validate(net) != MICA_OK, "undefined output refused");
    contains(err(), "t.yaml:12:11: output 'z' is not defined", "  with position");
    ok(mica_network_mark_output(net, "z", NULL) != MICA_OK,
       "marking an output twice refused");

    fresh(4, MICA_FLOAT32);
    ok(add("a", "Activation", "type", "relu", "x", NULL, "y", NULL) == MICA_OK &&
       add("a", "Activation", "type", "relu", "y", NULL, "z", NULL) != MICA_OK,
       "layer name used twice refused");
    contains(err(), "layer name 'a' is already used", "  naming it");
}

/* A chain of n relus over 1024 floats: memory is reused by liveness. */
static void test_chain(void)
{
    enum { N = 1024, L = 12 };
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_build_config_t cfg;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    mica_tensor_desc_t desc;
    const void *out;
    float in[N];
    char a[16], b[16];
    int i, good = 1;
    mica_dims_t d = dims1(N);

    fresh(N, MICA_FLOAT32);
    for (i = 0; i < L; i++) {
        snprintf(a, sizeof a, i ? "t%d" : "x", i);
        snprintf(b, sizeof b, "t%d", i + 1);
        if (i % 2)
            add(b, "ElementWise", "op", "sum", a, a, b, NULL);
        else
            add(b, "Activation", "type", "relu", a, NULL, b, NULL);
    }
    mica_network_mark_output(net, b, NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    ok(mica_engine_build(net, &cfg, &e) == MICA_OK, "chain builds");
    if (!e) {
        diag("%s", err());
        skip_block(8, "no engine");
        return;
    }
    is_int(L, mica_engine_nb_layers(e), "  with %d layers", L);
    is_int(L + 1, mica_engine_nb_tensors(e), "  and %d tensors", L + 1);
    ok(mica_engine_arena_bytes(e) <= 3 * N * 4,
       "  memory reused by liveness: %lld bytes for %d tensors of %d",
       (long long)mica_engine_arena_bytes(e), L + 1, N * 4);
    ok(mica_engine_layer(e, 0, &li) == MICA_OK &&
       (strcmp(li.implementation, "reference") == 0 ||
        strcmp(li.implementation, "vec") == 0),
       "  a CPU implementation (the reference, or its vector kernels) is "
       "chosen on the CPU");
    ok(mica_engine_tensor(e, L, &ti) == MICA_OK && ti.is_output &&
       strcmp(ti.shape, "[1024]") == 0, "  output shape is [1024]");
    for (i = 0; i < N; i++)
        in[i] = (float)(i % 7) - 3.0f;
    ok(mica_exec_create(e, &x) == MICA_OK &&
       mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) == MICA_OK &&
       mica_exec_get_output(x, b, &desc, &out) == MICA_OK, "chain runs");
    for (i = 0; x && out && i < N; i++) {
        float want = in[i] > 0 ? in[i] * 64.0f : 0.0f; /* 6 doublings */
        if (((const float *)out)[i] != want)
            good = 0;
    }
    ok(good, "  with the right values");
    d.d[0] = N + 1;
    ok(x && mica_exec_set_input(x, "x", &d, in) != MICA_OK,
       "an input of the wrong shape is refused");
    contains(err(), "shape [1025] does not match the engine's [1024]",
             "  naming both shapes");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

static char why[256];
static int autotune;
static mica_engine_t *last_engine; /* kept by chosen() when asked */
static int keep_engine;

/* The implementation a one-Twin network gets, "" if the build fails. */
static const char *chosen_as(mica_dtype_t dtype, const char *pin,
                             const char *cfg_prefer, const char *env)
{
    static char impl[64];
    const char *in[1] = {"x"}, *out[1] = {"y"};
    const char *types[1] = {"Twin"}, *impls[1] = {cfg_prefer};
    mica_build_config_t cfg;
    mica_layer_spec_t spec;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    mica_engine_t *e = NULL;

    fresh(4, dtype);
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "twin";
    spec.type = "Twin";
    spec.implementation = pin;
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    mica_network_add_layer(net, &spec);
    mica_network_mark_output(net, "y", NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.nb_prefer = cfg_prefer ? 1 : 0;
    cfg.autotune = autotune;
    cfg.prefer_types = types;
    cfg.prefer_impls = impls;
    if (env)
        setenv("MICA_PREFER", env, 1);
    else
        unsetenv("MICA_PREFER");
    impl[0] = why[0] = '\0';
    if (mica_engine_build(net, &cfg, &e) == MICA_OK &&
        mica_engine_layer(e, 0, &li) == MICA_OK) {
        snprintf(impl, sizeof impl, "%s", li.implementation);
        snprintf(why, sizeof why, "%s", li.choice);
    }
    unsetenv("MICA_PREFER");
    if (keep_engine)
        last_engine = e;
    else
        mica_engine_destroy(e);
    return impl;
}

static const char *chosen(const char *pin, const char *cfg_prefer,
                          const char *env)
{
    return chosen_as(MICA_FLOAT32, pin, cfg_prefer, env);
}

/* The implementation of layer 0 of e loaded back with deploy choice `pref`. */
static const char *reloaded(mica_engine_t *e, const char *pref)
{
    static char impl[64];
    mica_engine_t *back = NULL;
    mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
    void *data = NULL;
    size_t size = 0;

    impl[0] = why[0] = '\0';
    mica_context_set_prefer(th_context(), pref);
    if (e && mica_engine_serialize(e, &data, &size) == MICA_OK &&
        mica_engine_deserialize(th_context(), data, size, &back) == MICA_OK &&
        mica_engine_layer(back, 0, &li) == MICA_OK) {
        snprintf(impl, sizeof impl, "%s", li.implementation);
        snprintf(why, sizeof why, "%s", li.choice);
    }
    mica_context_set_prefer(th_context(), NULL);
    mica_engine_destroy(back);
    mica_free(data);
    return impl;
}

/* initialize and terminate: once per clone, around its enqueues. */
static void test_lifecycle(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    int *init = handle ? dlsym(handle, "choice_initialized") : NULL;
    int *term = handle ? dlsym(handle, "choice_terminated") : NULL;
    mica_exec_t *x = NULL, *y = NULL;
    mica_dims_t d;
    float in[4] = {1, 2, 3, 4};
    int i0, t0;

    if (!init || !term) {
        skip_block(4, "cannot read the choice module's counters");
        if (handle)
            dlclose(handle);
        return;
    }
    keep_engine = 1;
    chosen(NULL, NULL, NULL);
    keep_engine = 0;
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    i0 = *init;
    t0 = *term;
    mica_exec_create(last_engine, &x);
    mica_exec_create(last_engine, &y);
    ok(*init == i0, "initialize waits for the first run");
    ok(mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) == MICA_OK && mica_exec_run(x) == MICA_OK &&
       mica_exec_set_input(y, "x", &d, in) == MICA_OK &&
       mica_exec_run(y) == MICA_OK && *init == i0 + 2,
       "initialize: once per execution context");
    mica_exec_destroy(x);
    ok(*term == t0 + 1, "terminate when a context goes");
    mica_exec_destroy(y);
    mica_engine_destroy(last_engine);
    ok(*term == t0 + 2 && *init == i0 + 2, "and for each context, once");
    dlclose(handle);
}

/* Int8 scales reach the layers' descriptors, and engine files keep them. */
static void test_scales(void)
{
    mica_dims_t d;
    mica_engine_t *e = NULL, *back = NULL;
    mica_exec_t *x = NULL;
    mica_tensor_desc_t desc;
    const float *out = NULL;
    int8_t in[4] = {-4, 2, 7, 100};
    void *data = NULL;
    size_t size = 0;
    mica_build_config_t cpu; /* Dequant is a CPU layer */

    memset(&cpu, 0, sizeof cpu);
    cpu.struct_size = sizeof cpu;
    cpu.device = MICA_DEVICE_CPU;

    fresh(4, MICA_INT8);
    th_add_layer(net, "dq", "Dequant", NULL, NULL, "x", NULL, "y");
    mica_network_mark_output(net, "y", NULL);
    ok(mica_network_set_scale(net, "x", 0.5f, NULL) == MICA_OK &&
       mica_network_set_scale(net, "y", 0.25f, NULL) == MICA_OK,
       "scales set on an input and an output");
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 4;
    ok(mica_engine_build(net, &cpu, &e) == MICA_OK &&
       mica_engine_serialize(e, &data, &size) == MICA_OK &&
       mica_engine_deserialize(th_context(), data, size, &back) == MICA_OK &&
       mica_exec_create(back, &x) == MICA_OK &&
       mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
       mica_exec_run(x) == MICA_OK &&
       mica_exec_get_output(x, "y", &desc, (const void **)&out) == MICA_OK &&
       out[0] == -8 && out[1] == 4 && out[2] == 14 && out[3] == 200 &&
       desc.scale == 0.25f,
       "the layer sees them (x * 0.5 / 0.25), through an engine file too");
    ok(mica_network_set_scale(net, "nope", 2.0f, "t.yaml:3:1") == MICA_OK &&
       mica_network_validate(net) != MICA_OK &&
       strstr(err(), "t.yaml:3:1: scale of 'nope': no such tensor"),
       "a scale for a tensor that does not exist: refused at build");
    ok(mica_network_set_scale(net, "x", -1.0f, NULL) != MICA_OK,
       "a negative scale: refused");
    mica_exec_destroy(x);
    mica_engine_destroy(back);
    mica_engine_destroy(e);
    mica_free(data);
}

/* Which implementation a build takes, in each case of precedence. */
static void test_choice(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];

    snprintf(path, sizeof path, "%s/tests/choice/.libs/choice.so",
             top ? top : ".");
    if (mica_context_load_file(th_context(), path) != MICA_OK) {
        diag("%s", err());
        skip_block(30, "the choice test module is not built");
        return;
    }
    is_string("fast", chosen(NULL, NULL, NULL),
              "the highest priority wins by default");
    is_string("alt", chosen(NULL, "alt", NULL), "modules.prefer comes next");
    is_string("reference", chosen(NULL, NULL, "Activation=cuda,Twin=reference"),
              "then MICA_PREFER, for what the manifest leaves open");
    is_string("alt", chosen(NULL, "alt", "Twin=reference"),
              "modules.prefer before MICA_PREFER");
    is_string("reference", chosen("reference", "alt", "Twin=fast"),
              "the layer's own pin before both");
    is_string("fast", chosen(NULL, "nope", NULL),
              "an unknown preference falls back to the priority");
    is_string("", chosen("nope", NULL, NULL),
              "an unknown pinned implementation fails the build");
    is_string("alt", chosen_as(MICA_FLOAT16, NULL, NULL, NULL),
              "float16, which 'fast' refuses, goes to the next priority");
    contains(why, "accepting these types ('fast' refused them)",
             "  and says why");
    is_string("", chosen_as(MICA_FLOAT16, "fast", NULL, NULL),
              "a pinned implementation that refuses the types fails");
    contains(mica_context_error(th_context()), "not supported by "
             "implementation 'fast'", "  saying so");

    /* Deploy time: a saved engine takes the context's choice on load,
     * except for a layer that pinned its implementation. */
    keep_engine = 1;
    chosen(NULL, NULL, NULL);
    is_string("fast", reloaded(last_engine, NULL), "a loaded engine keeps "
              "its saved implementation");
    contains(why, "the highest priority for cpu", "  and the reason it was "
             "chosen then");
    is_string("reference", reloaded(last_engine, "Twin=reference"),
              "the deploy-time choice replaces it on load");
    contains(why, "the deploy-time choice", "  and says so");
    mica_engine_destroy(last_engine);
    chosen("alt", NULL, NULL);
    is_string("alt", reloaded(last_engine, "Twin=reference"),
              "but not a layer's own pin");
    mica_engine_destroy(last_engine);
    keep_engine = 0;
    test_lifecycle(path);
    test_scales();
    autotune = 1;
    is_string("alt", chosen(NULL, NULL, NULL),
              "autotune keeps the fastest measured implementation");
    contains(why, "the fastest measured: fast", "  and says so, with times");
    is_string("reference", chosen("reference", NULL, NULL),
              "  but not over the layer's own pin");
    autotune = 0;
    ok(mica_context_set_prefer(th_context(), "Twin") != MICA_OK,
       "a deploy-time choice must be Type=implementation");
    contains(mica_context_error(th_context()), "'Twin' is not "
             "Type=implementation", "  saying so");
}

int main(void)
{
    plan_lazy();
    th_context();
    test_errors();
    test_chain();
    test_choice();
    mica_network_destroy(net);
    return exit_status();
}
