/*
 * tests/test_pass_pointwise.c - the graph pass "pointwise"
 * (core/passes/pointwise.c): networks built with it and without it
 * (no_passes "pointwise"), run on the same seeded inputs, give the same
 * outputs bit for bit on the CPU (and within tolerance on CUDA, where a
 * GPU is usable, against the CPU without it, the CUDA runs captured in
 * CUDA graphs and replayed); and the groups it makes:
 *
 *   - a chain becomes one Pointwise layer with the record of the layers
 *     it replaced;
 *   - Constants of one value (float32, float16) become const lines, and
 *     go;
 *   - a DAG with several inputs and two outputs, one of them also read
 *     inside the group and by a layer outside (a MatrixMultiply);
 *   - a group stays convex: a layer outside that reads one member and
 *     feeds another keeps them apart;
 *   - layers that make shape tensors stay (a Shuffle's reshape dims
 *     computed by ElementWise and Activation from a Shape);
 *   - a type the build prefers an implementation for, and a layer pinned
 *     to one, stay;
 *   - mixed types (float16 in, a cast, a comparison, a Select) and Scale
 *     with broadcasting;
 *   - more inputs than one Pointwise layer takes: several layers;
 *   - inside a loop (tests/manifests/control/sum_even.yaml);
 *   - an engine file with Pointwise layers saves, loads and runs.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define F32 MICA_FLOAT32
#define F16 MICA_FLOAT16

static mica_context_t *ctx;

/* A layer: `ins` and `outs` NULL-terminated, one optional string field. */
static void layer(mica_network_t *net, const char *name, const char *type,
                  const char *const *ins, const char *const *outs,
                  th_fields_t *f)
{
    mica_layer_spec_t spec;
    int ni = 0, no = 0;

    while (ins && ins[ni])
        ni++;
    while (outs[no])
        no++;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_inputs = ni;
    spec.inputs = ins;
    spec.nb_outputs = no;
    spec.outputs = outs;
    spec.fields = f ? th_fields_view(f) : NULL;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("layer %s: %s", name, mica_context_error(ctx));
    th_fields_free(f);
}

#define IN(...) ((const char *const[]){__VA_ARGS__, NULL})
#define EW(op) th_f_str(th_fields(), "op", op)
#define ACT(t) th_f_str(th_fields(), "type", t)

static void input(mica_network_t *net, const char *name, mica_dtype_t t,
                  int nd, const int64_t *d)
{
    mica_dims_t dims;
    memset(&dims, 0, sizeof dims);
    dims.nb_dims = nd;
    memcpy(dims.d, d, sizeof *d * (size_t)nd);
    if (mica_network_add_input(net, name, t, &dims, NULL) != MICA_OK)
        bail("input %s: %s", name, mica_context_error(ctx));
}

/* An engine's layers: how many, how many Pointwise, the records. */
typedef struct shape {
    int layers, pointwise, fused_members;
} shape_t;

static shape_t shape_of(const mica_engine_t *e)
{
    shape_t s = {0, 0, 0};
    int32_t i;
    s.layers = mica_engine_nb_layers(e);
    for (i = 0; i < s.layers; i++) {
        mica_layer_info_t li;
        const char *p;
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        if (mica_engine_layer(e, i, &li) != MICA_OK ||
            strcmp(li.type, "Pointwise"))
            continue;
        s.pointwise++;
        for (p = li.fused ? strchr(li.fused, '(') : NULL; p;
             p = strchr(p + 1, '('))
            s.fused_members++;
    }
    return s;
}

/* The n-th output of run(): names, in the order of the network's. */
static char out_names[8][64];

/* Seeded inputs of an engine's network inputs (floats in [-2, 2] with a
 * NaN and an infinity, integers 0 to 5; the seed is the input's name),
 * run, the outputs into out[] in the order of their names. */
static int run_graphs(mica_engine_t *e, th_tensor_t *out, int *nb_out,
                      int graphs);

static int run(mica_engine_t *e, th_tensor_t *out, int *nb_out)
{
    return run_graphs(e, out, nb_out, 0);
}

/* run(); with `graphs`, three runs with CUDA graphs on, the last one's
 * outputs, and the graphs checked: captured, replayed, no failure. */
static int run_graphs(mica_engine_t *e, th_tensor_t *out, int *nb_out,
                      int graphs)
{
    mica_exec_t *x = NULL;
    th_tensor_t in[32];
    int32_t i, n = 0, no, j, k;
    int good = 0;
    uint32_t seed;

    memset(in, 0, sizeof in);
    if (mica_exec_create(e, &x) != MICA_OK)
        goto done;
    for (i = 0; i < mica_engine_nb_tensors(e) && n < 32; i++) {
        mica_tensor_info_t ti;
        int64_t k, v;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (mica_engine_tensor(e, i, &ti) != MICA_OK || !ti.is_input)
            continue;
        in[n] = th_tensor(ti.dtype, ti.dims.nb_dims, ti.dims.d, NULL);
        for (seed = 7, k = 0; ti.name[k]; k++)
            seed = seed * 31u + (unsigned char)ti.name[k];
        for (k = 0; k < ti.dims.nb_dims; k++)
            if (ti.dims.d[k] < 0)
                bail("a runtime dimension in the test networks");
        v = th_volume(&in[n]);
        for (k = 0; k < v; k++) {
            seed = seed * 1103515245u + 12345u;
            if (ti.dtype == F32 || ti.dtype == F16)
                th_set(&in[n], k, k == 3 ? NAN : k == 5 ? INFINITY
                                 : (double)((seed >> 8) % 4001) / 1000.0 - 2);
            else
                th_set(&in[n], k, (double)((seed >> 8) % 6));
        }
        if (mica_exec_set_input(x, ti.name, &in[n].dims, in[n].data) !=
            MICA_OK)
            goto done;
        n++;
    }
    if (graphs && mica_exec_set_cuda_graph(x, 1) != MICA_OK)
        goto done;
    for (i = 0; i < (graphs ? 3 : 1); i++)
        if (mica_exec_run(x) != MICA_OK)
            goto done;
    if (graphs) {
        mica_cuda_graph_counts_t c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (mica_exec_cuda_graph_counts(x, &c) != MICA_OK ||
            c.captures < 1 || c.replays < 1 || c.failures != 0) {
            diag("CUDA graphs: %lld captures, %lld replays, %lld failures "
                 "(%s)", (long long)c.captures, (long long)c.replays,
                 (long long)c.failures, mica_exec_cuda_graph_why(x));
            goto done;
        }
    }
    no = 0;
    for (i = 0; i < mica_engine_nb_tensors(e) && no < 8; i++) {
        mica_tensor_info_t ti;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (mica_engine_tensor(e, i, &ti) != MICA_OK || !ti.is_output)
            continue;
        snprintf(out_names[no++], sizeof out_names[0], "%s", ti.name);
    }
    for (j = 1; j < no; j++) /* by name: engines order tensors their way */
        for (k = j; k > 0 && strcmp(out_names[k - 1], out_names[k]) > 0;
             k--) {
            char t[64];
            memcpy(t, out_names[k], sizeof t);
            memcpy(out_names[k], out_names[k - 1], sizeof t);
            memcpy(out_names[k - 1], t, sizeof t);
        }
    for (j = 0; j < no; j++) {
        mica_tensor_desc_t d;
        const void *data;
        if (mica_exec_get_output(x, out_names[j], &d, &data) != MICA_OK)
            goto done;
        out[j] = th_tensor(d.dtype, d.dims.nb_dims, d.dims.d, NULL);
        memcpy(out[j].data, data,
               (size_t)th_volume(&out[j]) * mica_dtype_size(d.dtype));
    }
    *nb_out = no;
    good = 1;
done:
    if (!good)
        diag("run: %s", mica_context_error(ctx));
    for (i = 0; i < n; i++)
        th_free(&in[i]);
    mica_exec_destroy(x);
    return good;
}

static mica_engine_t *build(mica_network_t *net, uint32_t device,
                            const char *no_passes, const char *prefer)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    const char *types[1], *impls[1];
    char t[64], *eq;

    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.no_passes = no_passes;
    if (prefer) {
        snprintf(t, sizeof t, "%s", prefer);
        eq = strchr(t, '=');
        *eq = '\0';
        types[0] = t;
        impls[0] = eq + 1;
        cfg.nb_prefer = 1;
        cfg.prefer_types = types;
        cfg.prefer_impls = impls;
    }
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", mica_context_error(ctx));
    return e;
}

/*
 * Build net with every pass and without "pointwise", run both on the
 * CPU, compare; *s gets the shape of the engine with the pass.  Then on
 * CUDA where usable.  Returns 1 if the CPU results are the same.
 */
static int both(const char *label, mica_network_t *net, const char *prefer,
                shape_t *s)
{
    mica_engine_t *a = build(net, MICA_DEVICE_CPU, "pointwise", prefer);
    mica_engine_t *b = build(net, MICA_DEVICE_CPU, NULL, prefer);
    th_tensor_t ya[8], yb[8];
    int na = 0, nb = 0, i, good;
    char why[256] = "";

    memset(ya, 0, sizeof ya);
    memset(yb, 0, sizeof yb);
    good = a && b && run(a, ya, &na) && run(b, yb, &nb) && na == nb;
    for (i = 0; good && i < na; i++)
        good = th_same(&ya[i], &yb[i], 0, 0, why, sizeof why);
    if (!ok(good, "%s: the same outputs with and without the pass (CPU)",
            label))
        diag("%s", why);
    *s = b ? shape_of(b) : (shape_t){0, 0, 0};
    if (th_cuda() && !prefer) {
        mica_engine_t *c = build(net, MICA_DEVICE_CUDA, NULL, prefer);
        th_tensor_t yc[8];
        int nc = 0, gc;
        memset(yc, 0, sizeof yc);
        /* loops and conditionals never run as graphs */
        gc = c && run_graphs(c, yc, &nc, strstr(label, "loop") == NULL) &&
             nc == na;
        for (i = 0; gc && i < na; i++)
            gc = th_same(&ya[i], &yc[i], 2e-3, 2e-3, why, sizeof why);
        if (!ok(gc, "%s: CUDA with the pass, in CUDA graphs, against the "
                "CPU without", label))
            diag("%s", why);
        for (i = 0; i < nc; i++)
            th_free(&yc[i]);
        mica_engine_destroy(c);
    } else if (prefer) {
        skip("%s: CUDA: the CPU implementations it prefers and pins do "
             "not run there", label);
    } else {
        skip("%s: CUDA: no usable GPU", label);
    }
    for (i = 0; i < 8; i++) {
        th_free(&ya[i]);
        th_free(&yb[i]);
    }
    mica_engine_destroy(a);
    mica_engine_destroy(b);
    return good;
}

static mica_network_t *fresh(void)
{
    mica_network_t *net = NULL;
    if (mica_network_create(ctx, &net) != MICA_OK)
        bail("%s", mica_context_error(ctx));
    return net;
}

static void chain(void)
{
    mica_network_t *net = fresh();
    int64_t d[2] = {3, 5}, r[2] = {1, 5};
    shape_t s;

    input(net, "x", F32, 2, d);
    input(net, "b", F32, 2, r);
    layer(net, "add", "ElementWise", IN("x", "b"), IN("t0"), EW("sum"));
    layer(net, "act", "Activation", IN("t0"), IN("t1"),
          th_f_float(ACT("leaky_relu"), "alpha", 0.1));
    layer(net, "mul", "ElementWise", IN("t1", "b"), IN("y"), EW("prod"));
    mica_network_mark_output(net, "y", NULL);
    both("a chain", net, NULL, &s);
    ok(s.layers == 1 && s.pointwise == 1 && s.fused_members == 3,
       "  one Pointwise layer for its 3 layers (%d layers, %d members)",
       s.layers, s.fused_members);
    mica_network_destroy(net);
}

static void scalars(void)
{
    mica_network_t *net = fresh();
    int64_t d[2] = {3, 4}, one[2] = {1, 1};
    th_tensor_t a = th_tensor(F32, 2, one, NULL), b = th_tensor(F16, 2, one,
                                                                NULL);
    shape_t s;

    th_set(&a, 0, 0.70710678);
    th_set(&b, 0, -2.5);
    input(net, "x", F32, 2, d);
    input(net, "h", F16, 2, d);
    layer(net, "ca", "Constant", NULL, IN("ka"),
          th_f_weights(th_fields(), "weights", &a));
    layer(net, "cb", "Constant", NULL, IN("kb"),
          th_f_weights(th_fields(), "weights", &b));
    layer(net, "m", "ElementWise", IN("x", "ka"), IN("t0"), EW("prod"));
    layer(net, "e", "Unary", IN("t0"), IN("t1"), EW("erf"));
    layer(net, "s", "ElementWise", IN("h", "kb"), IN("t2"), EW("sum"));
    layer(net, "c", "Identity", IN("t2"), IN("t3"),
          th_f_str(th_fields(), "dtype", "float32"));
    layer(net, "y", "ElementWise", IN("t1", "t3"), IN("y"), EW("max"));
    mica_network_mark_output(net, "y", NULL);
    both("Constants of one value", net, NULL, &s);
    ok(s.layers == 1 && s.pointwise == 1,
       "  written in the program: one layer left (%d)", s.layers);
    th_free(&a);
    th_free(&b);
    mica_network_destroy(net);
}

static void dag(void)
{
    mica_network_t *net = fresh();
    int64_t d[2] = {4, 4};
    shape_t s;

    input(net, "a", F32, 2, d);
    input(net, "b", F32, 2, d);
    input(net, "c", F32, 2, d);
    layer(net, "t", "ElementWise", IN("a", "b"), IN("t"), EW("sub"));
    layer(net, "u", "Activation", IN("t"), IN("u"), ACT("relu"));
    layer(net, "v", "Activation", IN("t"), IN("v"), ACT("sigmoid"));
    layer(net, "w", "ElementWise", IN("u", "v"), IN("w"), EW("prod"));
    layer(net, "y", "ElementWise", IN("w", "c"), IN("y"), EW("max"));
    layer(net, "mm", "MatrixMultiply", IN("t", "c"), IN("m"), NULL);
    layer(net, "z", "Unary", IN("w"), IN("z"), EW("exp"));
    mica_network_mark_output(net, "y", NULL);
    mica_network_mark_output(net, "z", NULL);
    mica_network_mark_output(net, "m", NULL);
    both("a DAG with two outputs and a tensor read outside", net, NULL, &s);
    ok(s.layers == 2 && s.pointwise == 1 && s.fused_members == 6,
       "  one Pointwise layer for 6 layers, beside the MatrixMultiply (%d "
       "layers, %d members)", s.layers, s.fused_members);
    mica_network_destroy(net);
}

static void convex(void)
{
    mica_network_t *net = fresh();
    int64_t d[2] = {2, 6};
    shape_t s;

    input(net, "x", F32, 2, d);
    layer(net, "e1", "Activation", IN("x"), IN("a"), ACT("tanh"));
    layer(net, "sm", "SoftMax", IN("a"), IN("b"),
          th_f_int(th_fields(), "axis", 1));
    layer(net, "e2", "ElementWise", IN("a", "b"), IN("y"), EW("sum"));
    mica_network_mark_output(net, "y", NULL);
    both("a path out of the group and back", net, NULL, &s);
    ok(s.pointwise == 0 && s.layers == 3,
       "  keeps both layers apart (%d Pointwise)", s.pointwise);
    mica_network_destroy(net);
}

static void shapes(void)
{
    mica_network_t *net = fresh();
    int64_t d[3] = {2, 3, 4};
    shape_t s;
    th_tensor_t two = th_t(MICA_INT32, (double[]){1, 3, 1}, 1, 3);

    input(net, "x", F32, 3, d);
    layer(net, "shape", "Shape", IN("x"), IN("s"), NULL);
    layer(net, "two", "Constant", NULL, IN("k"),
          th_f_weights(th_fields(), "weights", &two));
    layer(net, "div", "ElementWise", IN("s", "k"), IN("h"),
          EW("floor_div"));
    layer(net, "abs", "Unary", IN("h"), IN("g"), EW("abs"));
    layer(net, "mul", "ElementWise", IN("g", "k"), IN("dims"), EW("prod"));
    layer(net, "reshape", "Shuffle", IN("x", "dims"), IN("r"), NULL);
    layer(net, "act", "Activation", IN("r"), IN("y0"), ACT("relu"));
    layer(net, "neg", "Unary", IN("y0"), IN("y"), EW("neg"));
    mica_network_mark_output(net, "y", NULL);
    both("shape tensors", net, NULL, &s);
    ok(s.pointwise == 1 && s.fused_members == 2,
       "  only the layers of data fuse (%d Pointwise, %d members)",
       s.pointwise, s.fused_members);
    th_free(&two);
    mica_network_destroy(net);
}

static void preferred(void)
{
    mica_network_t *net = fresh();
    int64_t d[1] = {9};
    shape_t s;
    const char *pin_ins[] = {"t2", NULL};
    mica_layer_spec_t spec;
    const char *outs[] = {"y", NULL};
    th_fields_t *f = ACT("relu");

    input(net, "x", F32, 1, d);
    layer(net, "a", "ElementWise", IN("x", "x"), IN("t0"), EW("sum"));
    layer(net, "b", "Unary", IN("t0"), IN("t1"), EW("abs"));
    layer(net, "c", "Unary", IN("t1"), IN("t2"), EW("sqrt"));
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "d";
    spec.type = "Activation";
    spec.implementation = "reference"; /* pinned */
    spec.nb_inputs = 1;
    spec.inputs = pin_ins;
    spec.nb_outputs = 1;
    spec.outputs = outs;
    spec.fields = th_fields_view(f);
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s", mica_context_error(ctx));
    th_fields_free(f);
    mica_network_mark_output(net, "y", NULL);
    both("--prefer ElementWise=reference, a pinned layer", net,
         "ElementWise=reference", &s);
    ok(s.pointwise == 1 && s.fused_members == 2 && s.layers == 3,
       "  only the two Unary layers fuse (%d layers, %d members)", s.layers,
       s.fused_members);
    mica_network_destroy(net);
}

static void mixed(void)
{
    mica_network_t *net = fresh();
    int64_t d[4] = {2, 3, 2, 2}, c[4] = {1, 3, 1, 1};
    th_tensor_t sc = th_t(F32, (double[]){0.5, -2, 3}, 1, 3);
    shape_t s;

    input(net, "h", F16, 4, d);
    input(net, "bias", F16, 4, c);
    input(net, "x", F32, 4, d);
    layer(net, "add", "ElementWise", IN("h", "bias"), IN("a"), EW("sum"));
    layer(net, "cast", "Identity", IN("a"), IN("af"),
          th_f_str(th_fields(), "dtype", "float32"));
    layer(net, "bn", "Scale", IN("af"), IN("s"),
          th_f_weights(th_f_str(th_fields(), "mode", "channel"), "scale",
                       &sc));
    layer(net, "gt", "ElementWise", IN("s", "x"), IN("g"), EW("greater"));
    layer(net, "sel", "Select", IN("g", "s", "x"), IN("m"), NULL);
    layer(net, "copy", "Identity", IN("m"), IN("y"), NULL);
    layer(net, "cnt", "Identity", IN("g"), IN("n"),
          th_f_str(th_fields(), "dtype", "int32"));
    mica_network_mark_output(net, "y", NULL);
    mica_network_mark_output(net, "n", NULL);
    mica_network_mark_output(net, "a", NULL);
    both("float16 in, casts, Scale per channel, a comparison, Select", net,
         NULL, &s);
    ok(s.pointwise == 1 && s.layers == 1 && s.fused_members == 7,
       "  one Pointwise layer for all 7 (%d layers, %d members)", s.layers,
       s.fused_members);
    th_free(&sc);
    mica_network_destroy(net);
}

static void many_inputs(void)
{
    mica_network_t *net = fresh();
    int64_t d[1] = {16};
    char name[16], prev[16], out[16];
    shape_t s;
    int i;

    input(net, "x0", F32, 1, d);
    snprintf(prev, sizeof prev, "x0");
    for (i = 1; i <= 30; i++) {
        snprintf(name, sizeof name, "x%d", i);
        snprintf(out, sizeof out, "s%d", i);
        input(net, name, F32, 1, d);
        layer(net, out, "ElementWise", IN(prev, name), IN(out),
              EW(i % 3 ? "sum" : "max"));
        snprintf(prev, sizeof prev, "%s", out);
    }
    mica_network_mark_output(net, prev, NULL);
    both("31 inputs", net, NULL, &s);
    ok(s.pointwise >= 2 && s.fused_members == 30,
       "  several Pointwise layers (%d), every layer in one (%d)",
       s.pointwise, s.fused_members);
    mica_network_destroy(net);
}

static void loop_and_engine(void)
{
    char path[4096];
    const char *src = getenv("MICA_TOP_SRCDIR");
    mica_manifest_t *m = NULL;
    shape_t s;
    mica_engine_t *e;
    void *data = NULL;
    size_t size = 0;

    snprintf(path, sizeof path, "%s/tests/manifests/control/sum_even.yaml",
             src ? src : ".");
    if (!src || mica_manifest_load(ctx, path, &m) != MICA_OK) {
        skip_block(3, "no source tree (MICA_TOP_SRCDIR): %s",
                   mica_context_error(ctx));
        return;
    }
    both("inside a loop (sum_even.yaml)", mica_manifest_network(m), NULL,
         &s);
    ok(s.pointwise >= 1, "  Pointwise layers in the loop (%d)", s.pointwise);
    mica_manifest_destroy(m);

    /* an engine file with Pointwise layers */
    {
        mica_network_t *net = fresh();
        int64_t d[2] = {3, 5};
        mica_engine_t *back = NULL;
        th_tensor_t ya[2], yb[2];
        int na = 0, nb = 0, good;
        char why[256] = "";

        input(net, "x", F32, 2, d);
        layer(net, "a", "Unary", IN("x"), IN("t"), EW("exp"));
        layer(net, "b", "ElementWise", IN("t", "x"), IN("y"), EW("div"));
        mica_network_mark_output(net, "y", NULL);
        e = build(net, MICA_DEVICE_CPU, NULL, NULL);
        good = e && mica_engine_serialize(e, &data, &size) == MICA_OK &&
               mica_engine_deserialize(ctx, data, size, &back) == MICA_OK &&
               shape_of(back).pointwise == 1 && run(e, ya, &na) &&
               run(back, yb, &nb) && na == 1 && nb == 1 &&
               th_same(&ya[0], &yb[0], 0, 0, why, sizeof why);
        if (!ok(good, "an engine with a Pointwise layer saves, loads and "
                "runs the same"))
            diag("%s %s", why, mica_context_error(ctx));
        if (good) {
            th_free(&ya[0]);
            th_free(&yb[0]);
        }
        mica_free(data);
        mica_engine_destroy(back);
        mica_engine_destroy(e);
        mica_network_destroy(net);
    }
}

int main(void)
{
    ctx = th_context();
    plan_lazy();
    chain();
    scalars();
    dag();
    convex();
    shapes();
    preferred();
    mixed();
    many_inputs();
    loop_and_engine();
    return exit_status();
}
