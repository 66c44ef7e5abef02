/*
 * tests/test_abi_dds.c - data-dependent output sizes (mica_host_t's
 * expr_size), through tests/abi2's Positive (the elements of x above 0,
 * and their count as its size output):
 *
 *   x [N] -> Positive -> p [c], c -> ShapeHook -> y [c]
 *
 * Memory is planned for the bound (N), the count is read back after
 * Positive runs, and everything after it takes the actual shape: y's
 * values and dims, the hook told the count, a count of 0 (ShapeHook then
 * does not run), counts changing from run to run without new input
 * shapes, an engine file.  Refused: a count over its bound (at run
 * time), a size output that is not 0-D, a data-dependent shape that
 * phase 1 would need, a data-dependent layer inside a loop.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "craft.h"
#include "harness.h"

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

static void add(mica_network_t *net, const char *name, const char *type,
                int nin, const char *const *in, int nout,
                const char *const *out, const mica_fields_t *f,
                const char *loop)
{
    mica_layer_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_inputs = nin;
    spec.inputs = in;
    spec.nb_outputs = nout;
    spec.outputs = out;
    spec.fields = f;
    spec.loop = loop;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s: %s", name, err());
}

/* x [N] (N in 1..8) and Positive -> p, c with fields f. */
static mica_network_t *base(const mica_fields_t *f)
{
    static const char *const in[1] = {"x"}, *const out[2] = {"p", "c"};
    mica_network_t *net = NULL;
    mica_dims_t d, mn, op, mx;
    int32_t k;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = -1;
    mn = op = mx = d;
    mn.d[0] = 1;
    op.d[0] = 4;
    mx.d[0] = 8;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_add_profile(net, &k) != MICA_OK ||
        mica_network_set_profile_dims(net, k, "x", &mn, &op, &mx, NULL) !=
            MICA_OK)
        bail("network: %s", err());
    add(net, "pos", "Positive", 1, in, 2, out, f, NULL);
    return net;
}

static mica_engine_t *build(mica_network_t *net)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    mica_engine_build(net, &cfg, &e);
    mica_network_destroy(net);
    return e;
}

/* x [N] -> Positive -> p, c -> ShapeHook -> y; outputs y, c. */
static mica_engine_t *engine(void)
{
    static const char *const in[1] = {"p"}, *const out[1] = {"y"};
    mica_network_t *net = base(NULL);
    mica_engine_t *e;

    add(net, "hook", "ShapeHook", 1, in, 1, out, NULL, NULL);
    if (mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_network_mark_output(net, "c", NULL) != MICA_OK ||
        !(e = build(net)))
        bail("engine: %s", err());
    return e;
}

/* Run x (n values) in ex; whether y is x's positives + add, c their
 * count, and y's dims [count]. */
static int run(mica_exec_t *ex, const float *x, int64_t n, float add)
{
    mica_tensor_desc_t yd, cd;
    const float *y;
    const int32_t *c;
    mica_dims_t d;
    int64_t i, k = 0;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = n;
    if (mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, "y", &yd, (const void **)&y) != MICA_OK ||
        mica_exec_get_output(ex, "c", &cd, (const void **)&c) != MICA_OK) {
        diag("run: %s", err());
        return 0;
    }
    for (i = 0; i < n; i++)
        if (x[i] > 0) {
            if (k >= yd.dims.d[0] || y[k] != x[i] + add) {
                diag("y[%lld] wrong", (long long)k);
                return 0;
            }
            k++;
        }
    if (*c != k || yd.dims.nb_dims != 1 || yd.dims.d[0] != k) {
        diag("count %d, y dims [%lld], want %lld", (int)*c,
             (long long)yd.dims.d[0], (long long)k);
        return 0;
    }
    return 1;
}

static void test_runs(mica_engine_t *e, const char *what)
{
    static const float a[5] = {1, -2, 3, 0, 5};       /* 3 positives */
    static const float b[5] = {-1, 7, -3, 8, -5};     /* 2 */
    static const float z[5] = {-1, -1, 0, -3, 0};     /* none */
    static const float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    mica_exec_t *ex = NULL;

    if (mica_exec_create(e, &ex) != MICA_OK)
        bail("exec: %s", err());
    ok(run(ex, a, 5, 1000 + 3), "%s: the count read back, what follows "
       "shaped by it, the hook told it", what);
    ok(run(ex, b, 5, 2000 + 2), "%s: another count, the same input shape "
       "(no phase 1): read back again", what);
    ok(run(ex, z, 5, 0), "%s: a count of 0: empty outputs (the hook is "
       "told [0], the layer does not run)", what);
    ok(run(ex, f, 8, 4000 + 8), "%s: the bound itself (8 of 8), a new "
       "input shape", what);
    mica_exec_destroy(ex);
}

static void test_engine(void)
{
    mica_engine_t *e = engine(), *back = NULL;
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    const char *name, *meaning;
    void *data = NULL;
    size_t size = 0;
    int loaded, swept;

    ok(mica_engine_tensor(e, mica_engine_find_tensor(e, "p"), &ti) ==
           MICA_OK && strcmp(ti.shape, "[c]") == 0 && ti.bytes == 8 * 4,
       "p has the shape [c], planned for its bound (8 floats)");
    ok(mica_engine_symbol(e, mica_engine_nb_symbols(e) - 1, &name,
                          &meaning) == MICA_OK && strcmp(name, "c") == 0 &&
       strcmp(meaning, "the value of c, read once layer 'pos' has run (at "
              "most N)") == 0, "the symbol c says what it stands for");
    test_runs(e, "built");
    if (mica_engine_serialize(e, &data, &size) != MICA_OK ||
        mica_engine_deserialize(ctx, data, size, &back) != MICA_OK)
        bail("reload: %s", err());
    test_runs(back, "loaded");
    swept = craft_sweep(ctx, data, size, &loaded);
    ok(swept, "each of its %zu bytes "
       "changed behind a valid checksum: an engine or one line (%d loaded)",
       size - CRAFT_HEADER, loaded);
    mica_engine_destroy(back);
    mica_free(data);
    mica_engine_destroy(e);
}

static void test_refusals(void)
{
    static const char *const p[1] = {"p"}, *const s[1] = {"s"};
    static const char *const shuffled[2] = {"x", "s"}, *const z[1] = {"z"};
    static const float a[5] = {1, -2, 3, 0, 5};
    int64_t lie = 100, yes = 1;
    mica_field_t fl = {"lie", MICA_FIELD_INT, 1, &lie};
    mica_field_t fb = {"bad_size", MICA_FIELD_BOOL, 1, &yes};
    mica_fields_t lying = {1, &fl}, bad = {1, &fb};
    mica_network_t *net;
    mica_engine_t *e;
    mica_exec_t *ex = NULL;
    mica_dims_t d;

    net = base(&lying);
    mica_network_mark_output(net, "p", NULL);
    e = build(net);
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 5;
    ok(e && mica_exec_create(e, &ex) == MICA_OK &&
       mica_exec_set_input(ex, "x", &d, a) == MICA_OK &&
       mica_exec_run(ex) == MICA_ERR_RUNTIME,
       "a count over its bound: the run fails");
    contains(err(), "layer 'pos' (Positive): its data-dependent size 'c' "
             "is 103, outside 0..5", "  naming the count and the bound");
    mica_exec_destroy(ex);
    mica_engine_destroy(e);

    net = base(&bad);
    mica_network_mark_output(net, "p", NULL);
    ok(!(e = build(net)), "a size output that is not 0-D: refused");
    contains(err(), "layer 'pos' (Positive): 'c' is a data-dependent size, "
             "so it must be a 0-D int32 or int64 output, not int32 [1]",
             "  saying so");
    mica_engine_destroy(e);

    /* Shape(p) -> s, then x reshaped by s: phase 1 would need p's shape. */
    net = base(NULL);
    add(net, "shape", "Shape", 1, p, 1, s, NULL, NULL);
    add(net, "reshape", "Shuffle", 2, shuffled, 1, z, NULL, NULL);
    mica_network_mark_output(net, "z", NULL);
    ok(!(e = build(net)), "a data-dependent shape that phase 1 would need: "
       "refused");
    contains(err(), "layer 'shape' (Shape) computes shape tensors before "
             "execution, but 'p' [c] has a data-dependent shape, known only "
             "once layer 'pos' has run on the device", "  saying why");
    mica_engine_destroy(e);
}

/* tests/manifests/abi/dds_in_loop.yaml: Positive inside a loop. */
static void test_loop(void)
{
    const char *top = getenv("MICA_TOP_SRCDIR");
    char path[4096];
    mica_manifest_t *m = NULL;

    if (!top) {
        skip_block(2, "MICA_TOP_SRCDIR not set");
        return;
    }
    snprintf(path, sizeof path, "%s/tests/manifests/abi/dds_in_loop.yaml",
             top);
    ok(mica_manifest_load(ctx, path, &m) == MICA_ERR_UNSUPPORTED && !m,
       "a data-dependent size inside a loop: refused");
    contains(err(), "dds_in_loop.yaml:13:5: layer 'pos' (Positive) has a "
             "data-dependent size ('c'): it cannot be inside loop or "
             "conditional 'L'", "  saying so");
    mica_manifest_destroy(m);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(2 + 4 + 4 + 1 + 6 + 2);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/abi2/.libs/abi2.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
    test_engine();
    test_refusals();
    test_loop();
    return 0;
}
