/*
 * tests/test_abi_formats.c - channels-last formats (mica_format_t)
 * negotiated through supports_format, with tests/abi2's FmtBoth (2x + 1,
 * linear or channels last) and FmtLinear (x + 1, linear only):
 *
 *   x [2, 3, 2, 4] -> FmtBoth -> a -> FmtBoth -> b -> FmtLinear -> y
 *
 * Given x in HWC, both FmtBoth run in HWC with no reorder between them,
 * a reorder (an Identity) goes before FmtLinear, and y is linear, with
 * the values of the same network all in linear; given x linear, nothing
 * changes; in float16 the FmtBoth prefer HWC (the cast to float16 makes
 * it, one reorder before FmtLinear); an output asked for in HWC is made
 * so; an engine file keeps every format.  Identity's reorders on their
 * own, 4-D and 5-D, with a cast, on the CPU against values worked out
 * here and on CUDA against the CPU (skipped without a GPU).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "craft.h"
#include "harness.h"
#include "mica/kit_half.h"

enum { N = 2, C = 3, H = 2, W = 4, V = N * C * H * W };

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

static void layer(mica_network_t *net, const char *name, const char *type,
                  const char *in, const char *out)
{
    mica_layer_spec_t spec;
    const char *ins[1] = {in}, *outs[1] = {out};
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = name;
    spec.type = type;
    spec.nb_inputs = spec.nb_outputs = 1;
    spec.inputs = ins;
    spec.outputs = outs;
    if (mica_network_add_layer(net, &spec) != MICA_OK)
        bail("%s: %s", name, err());
}

/* x -> both1 -> a -> both2 -> b -> lin -> y; formats of x and y asked
 * for; built on the CPU in float32 (half: float16 allowed). */
static mica_engine_t *chain(uint32_t xf, int half)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_dims_t d;

    memset(&d, 0, sizeof d);
    d.nb_dims = 4;
    d.d[0] = N, d.d[1] = C, d.d[2] = H, d.d[3] = W;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_set_format(net, "x", xf, NULL) != MICA_OK)
        bail("network: %s", err());
    layer(net, "both1", "FmtBoth", "x", "a");
    layer(net, "both2", "FmtBoth", "a", "b");
    layer(net, "lin", "FmtLinear", "b", "y");
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    cfg.precisions = half ? 1u << MICA_FLOAT16 : 0;
    if (mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    mica_network_destroy(net);
    return e;
}

/* Logical element (n, c, h, w) of a [N, C, H, W] tensor in format f. */
static int64_t at(uint32_t f, int n, int c, int h, int w)
{
    return f == MICA_FORMAT_HWC ? ((int64_t)(n * H + h) * W + w) * C + c
                                : ((int64_t)(n * C + c) * H + h) * W + w;
}

/* Run e with x's logical values x(i) laid out in format xf; whether y
 * (in format yf) is f(x(i)) within tol. */
static int computes(mica_engine_t *e, uint32_t xf, uint32_t yf,
                    float (*f)(float), float tol)
{
    float x[V];
    const float *y;
    mica_exec_t *ex = NULL;
    mica_tensor_desc_t desc;
    mica_dims_t d;
    int n, c, h, w, good = 1;

    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (h = 0; h < H; h++)
                for (w = 0; w < W; w++)
                    x[at(xf, n, c, h, w)] =
                        (float)(((n * C + c) * H + h) * W + w) * 0.25f - 3;
    memset(&d, 0, sizeof d);
    d.nb_dims = 4;
    d.d[0] = N, d.d[1] = C, d.d[2] = H, d.d[3] = W;
    if (mica_exec_create(e, &ex) != MICA_OK ||
        mica_exec_set_input(ex, "x", &d, x) != MICA_OK ||
        mica_exec_run(ex) != MICA_OK ||
        mica_exec_get_output(ex, "y", &desc, (const void **)&y) != MICA_OK) {
        diag("run: %s", err());
        mica_exec_destroy(ex);
        return 0;
    }
    good = desc.format == (mica_format_t)yf;
    for (n = 0; n < N && good; n++)
        for (c = 0; c < C && good; c++)
            for (h = 0; h < H && good; h++)
                for (w = 0; w < W && good; w++) {
                    float xv = x[at(xf, n, c, h, w)];
                    float yv = y[at(yf, n, c, h, w)];
                    if (fabsf(yv - f(xv)) > tol) {
                        diag("y(%d,%d,%d,%d) = %g, want %g", n, c, h, w,
                             (double)yv, (double)f(xv));
                        good = 0;
                    }
                }
    mica_exec_destroy(ex);
    return good;
}

static float chain_f(float x)
{
    return (2 * x + 1) * 2 + 1 + 1;
}

static float both_f(float x)
{
    return 2 * x + 1;
}

/* The format of tensor `name`, -1 if none. */
static int32_t format_of(mica_engine_t *e, const char *name)
{
    mica_tensor_info_t ti = {.struct_size = sizeof(mica_tensor_info_t)};
    int32_t t = mica_engine_find_tensor(e, name);
    return t >= 0 && mica_engine_tensor(e, t, &ti) == MICA_OK
               ? (int32_t)ti.format : -1;
}

/* How many layers are reorders; the first's name into first. */
static int reorders(mica_engine_t *e, char *first, size_t len)
{
    int32_t i, n = 0;
    first[0] = '\0';
    for (i = 0; i < mica_engine_nb_layers(e); i++) {
        mica_layer_info_t li = {.struct_size = sizeof(mica_layer_info_t)};
        if (mica_engine_layer(e, i, &li) == MICA_OK &&
            strncmp(li.name, "reorder:", 8) == 0) {
            if (!n++)
                snprintf(first, len, "%s: %s", li.name, li.choice);
        }
    }
    return n;
}

static void test_chain(void)
{
    mica_engine_t *e = chain(MICA_FORMAT_HWC, 0), *back = NULL;
    char first[256];
    void *data = NULL;
    size_t size = 0;
    int loaded, swept;

    ok(format_of(e, "x") == MICA_FORMAT_HWC &&
       format_of(e, "a") == MICA_FORMAT_HWC &&
       format_of(e, "b") == MICA_FORMAT_HWC &&
       format_of(e, "y") == MICA_FORMAT_LINEAR,
       "x in HWC: both FmtBoth run in HWC, y stays linear");
    ok(reorders(e, first, sizeof first) == 1 &&
       strncmp(first, "reorder:b@linear: ", 18) == 0 &&
       strstr(first, "; a reorder inserted between formats"),
       "  one reorder, before FmtLinear, none between the two FmtBoth");
    ok(computes(e, MICA_FORMAT_HWC, MICA_FORMAT_LINEAR, chain_f, 0),
       "  the values of the network in linear");
    if (mica_engine_serialize(e, &data, &size) != MICA_OK ||
        mica_engine_deserialize(ctx, data, size, &back) != MICA_OK)
        bail("reload: %s", err());
    ok(format_of(back, "a") == MICA_FORMAT_HWC &&
       format_of(back, "x") == MICA_FORMAT_HWC &&
       reorders(back, first, sizeof first) == 1 &&
       computes(back, MICA_FORMAT_HWC, MICA_FORMAT_LINEAR, chain_f, 0),
       "loaded: the same formats, the reorder, the values");
    swept = craft_sweep(ctx, data, size, &loaded);
    ok(swept, "  each of its %zu bytes "
       "changed behind a valid checksum: an engine or one line (%d loaded)",
       size - CRAFT_HEADER, loaded);
    mica_engine_destroy(back);
    mica_free(data);
    mica_engine_destroy(e);

    e = chain(MICA_FORMAT_LINEAR, 0);
    ok(format_of(e, "a") == MICA_FORMAT_LINEAR &&
       reorders(e, first, sizeof first) == 0 &&
       computes(e, MICA_FORMAT_LINEAR, MICA_FORMAT_LINEAR, chain_f, 0),
       "x linear, float32: everything linear, no reorder");
    mica_engine_destroy(e);

    e = chain(MICA_FORMAT_LINEAR, 1);
    ok(format_of(e, "a@float16") == MICA_FORMAT_HWC &&
       format_of(e, "b@float16") == MICA_FORMAT_HWC &&
       format_of(e, "x@float16") == MICA_FORMAT_HWC,
       "float16: HWC preferred, made by the cast itself");
    ok(reorders(e, first, sizeof first) == 1 &&
       strncmp(first, "reorder:b@float16@linear: ", 26) == 0,
       "  one reorder, before FmtLinear");
    ok(computes(e, MICA_FORMAT_LINEAR, MICA_FORMAT_LINEAR, chain_f, 0.02f),
       "  the values, within float16's precision");
    mica_engine_destroy(e);
}

/* x -> FmtBoth -> y, y asked for in HWC. */
static void test_output(void)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_dims_t d;
    char first[256];

    memset(&d, 0, sizeof d);
    d.nb_dims = 4;
    d.d[0] = N, d.d[1] = C, d.d[2] = H, d.d[3] = W;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CPU;
    if (mica_network_create(ctx, &net) != MICA_OK ||
        mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL) != MICA_OK ||
        mica_network_set_format(net, "y", MICA_FORMAT_HWC, NULL) != MICA_OK)
        bail("network: %s", err());
    layer(net, "both", "FmtBoth", "x", "y");
    if (mica_network_mark_output(net, "y", NULL) != MICA_OK ||
        mica_engine_build(net, &cfg, &e) != MICA_OK)
        bail("build: %s", err());
    ok(format_of(e, "y") == MICA_FORMAT_HWC &&
       reorders(e, first, sizeof first) == 1 &&
       computes(e, MICA_FORMAT_LINEAR, MICA_FORMAT_HWC, both_f, 0),
       "an output asked for in HWC: made so (its input reordered)");
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

/* ---- Identity's reorders, CPU and CUDA ----------------------------------- */

/* One Identity from x (rank r, format xf) to y (format yf, dtype yd). */
static mica_status_t reorder(uint32_t device, int32_t r, uint32_t xf,
                             uint32_t yf, const char *yd, const float *x,
                             float *y)
{
    static const int64_t dims[5] = {2, 3, 2, 4, 3};
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *ex = NULL;
    mica_layer_spec_t spec;
    mica_tensor_desc_t desc;
    mica_field_t f = {"dtype", MICA_FIELD_STRING, 1, &yd};
    mica_fields_t fields = {1, &f};
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    const void *out;
    mica_dims_t d;
    mica_status_t st;
    int64_t i, n = 1;

    memset(&d, 0, sizeof d);
    d.nb_dims = r;
    for (i = 0; i < r; i++)
        n *= d.d[i] = dims[i];
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "id";
    spec.type = "Identity";
    spec.nb_inputs = spec.nb_outputs = 1;
    spec.inputs = ins;
    spec.outputs = outs;
    spec.fields = yd ? &fields : NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if ((st = mica_network_create(ctx, &net)) == MICA_OK &&
        (st = mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL)) ==
            MICA_OK &&
        (st = mica_network_set_format(net, "x", xf, NULL)) == MICA_OK &&
        (st = mica_network_set_format(net, "y", yf, NULL)) == MICA_OK &&
        (st = mica_network_add_layer(net, &spec)) == MICA_OK &&
        (st = mica_network_mark_output(net, "y", NULL)) == MICA_OK &&
        (st = mica_engine_build(net, &cfg, &e)) == MICA_OK &&
        (st = mica_exec_create(e, &ex)) == MICA_OK &&
        (st = mica_exec_set_input(ex, "x", &d, x)) == MICA_OK &&
        (st = mica_exec_run(ex)) == MICA_OK &&
        (st = mica_exec_get_output(ex, "y", &desc, &out)) == MICA_OK) {
        for (i = 0; i < n; i++)
            y[i] = desc.dtype == MICA_FLOAT16
                       ? mica_kit_half_to_float(((const uint16_t *)out)[i])
                       : ((const float *)out)[i];
    }
    mica_exec_destroy(ex);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return st;
}

/* Where logical element i of a [2, 3, 2, 4(, 3)] tensor of rank r lies in
 * format f. */
static int64_t place(int32_t r, uint32_t f, int64_t i)
{
    static const int64_t dims[5] = {2, 3, 2, 4, 3};
    int64_t c[5], stride[5], s = 1, off = 0;
    int32_t k;

    for (k = r - 1; k >= 0; k--) {
        c[k] = i % dims[k];
        i /= dims[k];
    }
    if (f == MICA_FORMAT_LINEAR) {
        for (k = r - 1; k >= 0; k--) {
            stride[k] = s;
            s *= dims[k];
        }
    } else { /* N, the spatial dims, C */
        stride[1] = 1;
        s = dims[1];
        for (k = r - 1; k >= 2; k--) {
            stride[k] = s;
            s *= dims[k];
        }
        stride[0] = s;
    }
    for (k = 0; k < r; k++)
        off += c[k] * stride[k];
    return off;
}

static void check_reorder(int32_t r, uint32_t xf, uint32_t yf, const char *yd)
{
    static const char *const fname[] = {"linear", "hwc", "dhwc"};
    enum { M = 2 * 3 * 2 * 4 * 3 };
    float x[M], want[M], cpu[M], gpu[M];
    int64_t i, n = r == 4 ? M / 3 : M;
    int good = 1;
    char label[128];

    snprintf(label, sizeof label, "Identity %s -> %s%s%s, rank %d",
             fname[xf], fname[yf], yd ? ", cast to " : "", yd ? yd : "",
             (int)r);
    for (i = 0; i < n; i++) {
        x[place(r, xf, i)] = (float)i * 0.5f - 7;
        want[place(r, yf, i)] = (float)i * 0.5f - 7;
    }
    if (reorder(MICA_DEVICE_CPU, r, xf, yf, yd, x, cpu) != MICA_OK) {
        diag("%s", err());
        good = 0;
    }
    for (i = 0; good && i < n; i++)
        good = cpu[i] == want[i];
    ok(good, "%s: on the CPU", label);
    if (!th_cuda()) {
        skip_block(1, "%s: no usable GPU", label);
        return;
    }
    good = reorder(MICA_DEVICE_CUDA, r, xf, yf, yd, x, gpu) == MICA_OK &&
           memcmp(gpu, cpu, sizeof(float) * (size_t)n) == 0;
    if (!good)
        diag("%s", err());
    ok(good, "%s: on CUDA, as on the CPU", label);
}

int main(void)
{
    const char *top = getenv("MICA_TOP_BUILDDIR");
    char path[4096];

    if (!top)
        skip_all("MICA_TOP_BUILDDIR not set");
    plan(9 + 1 + 2 * 6);
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/abi2/.libs/abi2.so", top);
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("%s: %s", path, err());
    test_chain();
    test_output();
    check_reorder(4, MICA_FORMAT_LINEAR, MICA_FORMAT_HWC, NULL);
    check_reorder(4, MICA_FORMAT_HWC, MICA_FORMAT_LINEAR, NULL);
    check_reorder(4, MICA_FORMAT_LINEAR, MICA_FORMAT_HWC, "float16");
    check_reorder(4, MICA_FORMAT_HWC, MICA_FORMAT_HWC, "float16");
    check_reorder(5, MICA_FORMAT_LINEAR, MICA_FORMAT_DHWC, NULL);
    check_reorder(5, MICA_FORMAT_DHWC, MICA_FORMAT_LINEAR, NULL);
    return 0;
}
