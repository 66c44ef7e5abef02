/*
 * tests/test_abi_inplace.c - in-place layers (mica/layer.h's
 * aliased_input) and the shape-change hook, through tests/abi2's
 * InPlaceAdd (y = x + 1, counting its runs in place) and ShapeHook
 * (y = x + 1000 * calls + rows told).
 *
 * An output takes over its input's memory where the input is read by no
 * later step and is neither a network input nor an output; chains of
 * in-place layers share one buffer; the engine file keeps the plan and a
 * load checks it; where the input cannot be taken over the layer runs
 * with two buffers and computes the same.  The hook is told each new
 * shape once, before the run that uses it, on each context's clone.
 */
#include <config.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "craft.h"
#include "harness.h"

static mica_context_t *ctx;
static int *inplace_runs, *copy_runs;

static const char *err(void)
{
    return mica_context_error(ctx);
}

/* A network of x [N, 3] (N in 1..8) and layers "name:Type:in:out" ... ,
 * with the outputs named in `outs` (comma-separated). */
static mica_engine_t *build(const char *const *layers, int nb,
                            const char *outs)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_dims_t d, mn, op, mx;
    char buf[256], *p, *save;
    int32_t k;
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = -1;
    d.d[1] = 3;
    mn = op = mx = d;
    mn.d[0] = 1;
    op.d[0] = 2;
    mx.d[0] = 8;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_add_profile(net, &k) != MICA_OK ||
        mica_network_set_profile_dims(net, k, "x", &mn, &op, &mx, NULL) !=
            MICA_OK)
        bail("network: %s", err());
    for (i = 0; i < nb; i++) {
        mica_layer_spec_t spec;
        const char *in[1], *out[1];
        snprintf(buf, sizeof buf, "%s", layers[i]);
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = strtok_r(buf, ":", &save);
        spec.type = strtok_r(NULL, ":", &save);
        in[0] = strtok_r(NULL, ":", &save);
        out[0] = strtok_r(NULL, ":", &save);
        spec.nb_inputs = spec.nb_outputs = 1;
        spec.inputs = in;
        spec.outputs = out;
        if (mica_network_add_layer(net, &spec) != MICA_OK)
            bail("%s: %s", layers[i], err());
    }
    snprintf(buf, sizeof buf, "%s", outs);
    for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (mica_network_mark_output(net, p, NULL) != MICA_OK)
            bail("output %s: %s", p, err());
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    /* as written: a layer nothing reads stays (the plan is under test) */
    cfg.passes = "none";
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    mica_network_destroy(net);
    return e;
}

/* The tensor `name`'s info. */
static mica_tensor_info_t tensor(mica_engine_t *e, const char *name)
{
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    if (mica_engine_tensor(e, mica_engine_find_tensor(e, name), &ti) !=
        MICA_OK)
        bail("tensor %s: %s", name, err());
    return ti;
}

/* Whether tensor a takes over b's memory (alias and offset). */
static int takes_over(mica_engine_t *e, const char *a, const char *b)
{
    mica_tensor_info_t ta = tensor(e, a), tb = tensor(e, b);
    return ta.alias == mica_engine_find_tensor(e, b) &&
           ta.offset == tb.offset && ta.offset >= 0;
}

/* Run x with n rows through context ex; whether output `y` is x + add. */
static int adds(mica_exec_t *ex, int64_t n, const char *y, float add)
{
    float x[24];
    const float *out;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    int64_t i;

    for (i = 0; i < 3 * n; i++)
        x[i] = 0.5f * (float)i - 3.0f;
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = n;
    d.d[1] = 3;
    if (mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, y, &desc, (const void **)&out) != MICA_OK) {
        diag("run: %s", err());
        return 0;
    }
    for (i = 0; i < 3 * n; i++)
        if (out[i] != x[i] + add) {
            diag("%s[%lld] = %g, want %g", y, (long long)i, out[i],
                 x[i] + add);
            return 0;
        }
    return 1;
}

/* One run of a fresh context; how many runs were in place (-1 failed). */
static int run_once(mica_engine_t *e, const char *y, float add)
{
    mica_exec_t *ex = NULL;
    int before = *inplace_runs, good;

    if (mica_exec_create(e, &ex) != MICA_OK)
        bail("exec: %s", err());
    good = adds(ex, 5, y, add);
    mica_exec_destroy(ex);
    return good ? *inplace_runs - before : -1;
}

static void test_inplace(void)
{
    static const char *const one[] = {"id:Identity:x:t",
                                      "add:InPlaceAdd:t:y"};
    static const char *const read_after[] = {"id:Identity:x:t",
                                             "add:InPlaceAdd:t:y",
                                             "id2:Identity:t:z"};
    static const char *const input[] = {"add:InPlaceAdd:x:y"};
    static const char *const chain[] = {"id:Identity:x:t",
                                        "a1:InPlaceAdd:t:u",
                                        "a2:InPlaceAdd:u:y"};
    mica_engine_t *e, *back = NULL;
    unsigned char *bytes = NULL;
    size_t size = 0;
    craft_map_t map;
    int copies, loaded, swept;

    e = build(one, 2, "y");
    ok(takes_over(e, "y", "t"), "an output takes over its input's memory");
    is_int(1, run_once(e, "y", 1), "  and the layer runs in place (y = x + "
           "1)");
    mica_engine_destroy(e);

    e = build(read_after, 3, "y,z");
    copies = *copy_runs;
    ok(tensor(e, "y").alias == -1 && tensor(e, "y").offset !=
       tensor(e, "t").offset, "not where a later layer reads the input");
    ok(run_once(e, "y", 1) == 0 && *copy_runs == copies + 1,
       "  the layer then runs with two buffers");
    mica_engine_destroy(e);

    e = build(one, 2, "y,t");
    ok(tensor(e, "y").alias == -1 && run_once(e, "y", 1) == 0,
       "nor where the input is a network output");
    mica_engine_destroy(e);
    e = build(input, 1, "y");
    ok(tensor(e, "y").alias == -1 && run_once(e, "y", 1) == 0,
       "nor where it is a network input (its memory may be the caller's)");
    mica_engine_destroy(e);

    e = build(chain, 3, "y");
    ok(takes_over(e, "u", "t") && takes_over(e, "y", "u"),
       "a chain of in-place layers shares one buffer");
    is_int(2, run_once(e, "y", 2), "  both run in place (y = x + 2)");
    if (mica_engine_serialize(e, (void **)&bytes, &size) != MICA_OK ||
        mica_engine_deserialize(ctx, bytes, size, &back) != MICA_OK)
        bail("reload: %s", err());
    ok(takes_over(back, "u", "t") && takes_over(back, "y", "u") &&
       run_once(back, "y", 2) == 2, "loaded: the same plan, in place");
    mica_engine_destroy(back);
    swept = craft_sweep(ctx, bytes, size, &loaded);
    ok(swept, "  each of its %zu bytes "
       "changed behind a valid checksum: an engine or one line (%d loaded)",
       size - CRAFT_HEADER, loaded);
    /* A file that says y takes over nothing: the instances say otherwise,
     * so the plan is made again rather than trusted. */
    if (craft_map(bytes, size, &map) != 0)
        bail("no map");
    craft_put_u32(bytes, map.tensor_dtype[mica_engine_find_tensor(e, "y")] +
                             16, (uint32_t)-1);
    craft_reseal(bytes, size);
    ok(mica_engine_deserialize(ctx, bytes, size, &back) == MICA_OK &&
       takes_over(back, "y", "u") && run_once(back, "y", 2) == 2,
       "a file whose in-place outputs disagree with the layers: planned "
       "again from the layers");
    mica_engine_destroy(back);
    mica_free(bytes);
    mica_engine_destroy(e);
}

static void test_hook(void)
{
    static const char *const hook[] = {"h:ShapeHook:x:y"};
    mica_engine_t *e = build(hook, 1, "y");
    mica_exec_t *a = NULL, *b = NULL;

    if (mica_exec_create(e, &a) != MICA_OK ||
        mica_exec_create(e, &b) != MICA_OK)
        bail("exec: %s", err());
    ok(adds(a, 2, "y", 1000 + 2), "shape_change: told the first shape "
       "before the first run");
    ok(adds(a, 2, "y", 1000 + 2), "  not told again for the same shape");
    ok(adds(a, 5, "y", 2000 + 5), "  told a new shape once");
    ok(adds(a, 2, "y", 3000 + 2), "  and the old one again");
    ok(adds(b, 7, "y", 1000 + 7), "  each context's clone is told its own");
    mica_exec_destroy(a);
    mica_exec_destroy(b);
    mica_engine_destroy(e);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];
    void *h;

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(11 + 5);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/abi2/.libs/abi2.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
    h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    inplace_runs = h ? dlsym(h, "abi2_inplace_runs") : NULL;
    copy_runs = h ? dlsym(h, "abi2_copy_runs") : NULL;
    if (!inplace_runs || !copy_runs)
        bail("abi2's counters: %s", dlerror());
    test_inplace();
    test_hook();
    dlclose(h);
    return 0;
}
