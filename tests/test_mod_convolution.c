/*
 * tests/test_mod_convolution.c - Convolution and Deconvolution: cases by
 * hand, the NumPy cases of tests/gen/conv_cases.h (2D and 3D, groups,
 * depthwise, dilation, asymmetric padding, strides, leading batch
 * dimensions, zero input channels, empty batches) in float32 and float16
 * on every implementation against the reference, runtime dimensions
 * within a profile, an engine saved and loaded (keeping its tactic), the
 * cudnn implementation's tactics, the formats each implementation takes
 * and the CUDA ones in channels last, the kernel and bias as inputs, and
 * every error.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn_cases.h"
#include "gen/conv_cases.h"

static const char *const impls[] = {"cpu:onednn", "cuda:cuda", "cuda:cudnn",
                                    NULL};

/* Fields of a 2D layer: m maps, kernel k (kh x kw values of w). */
static th_fields_t *conv2d(int64_t m, int64_t kh, int64_t kw,
                           const th_tensor_t *w)
{
    th_fields_t *f = th_fields();
    int64_t k[2];
    k[0] = kh;
    k[1] = kw;
    th_f_int(f, "num_output_maps", m);
    th_f_ints(f, "kernel_size", 2, k);
    th_f_weights(f, "kernel", w);
    return f;
}

static void by_hand(void)
{
    static const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static const double w[] = {1, 0, 0, 1}, b[] = {1};
    static const double want[] = {7, 9, 13, 15};
    static const double dx[] = {1, 2, 3, 4}, dw[] = {1, 1, 1, 1};
    static const double dwant[] = {1, 1, 2, 2, 1, 1, 2, 2,
                                   3, 3, 4, 4, 3, 3, 4, 4};
    static const int64_t two[] = {2, 2};
    th_tensor_t in = th_t(MICA_FLOAT32, x, 4, 1, 1, 3, 3);
    th_tensor_t kw = th_t(MICA_FLOAT32, w, 4, 1, 1, 2, 2);
    th_tensor_t bw = th_t(MICA_FLOAT32, b, 1, 1);
    th_tensor_t e = th_t(MICA_FLOAT32, want, 4, 1, 1, 2, 2);
    th_fields_t *f = conv2d(1, 2, 2, &kw);

    th_pin("reference", NULL);
    th_f_weights(f, "bias", &bw);
    th_check("by hand: 3x3 * diagonal 2x2 + 1", "Convolution", f, 1, &in, 1,
             &e, 1e-6);
    th_free(&in);
    th_free(&kw);
    th_free(&e);
    in = th_t(MICA_FLOAT32, dx, 4, 1, 1, 2, 2);
    kw = th_t(MICA_FLOAT32, dw, 4, 1, 1, 2, 2);
    e = th_t(MICA_FLOAT32, dwant, 4, 1, 1, 4, 4);
    f = conv2d(1, 2, 2, &kw);
    th_f_ints(f, "stride", 2, two);
    th_check("by hand: deconvolution stride 2 spreads each input",
             "Deconvolution", f, 1, &in, 1, &e, 1e-6);
    th_free(&in);
    th_free(&kw);
    th_free(&e);
    th_free(&bw);
    th_pin(NULL, NULL);
}

/* ResNet-like 3x3 and depthwise layers, bigger than the NumPy cases, on
 * each implementation against the reference.  A 3x3 stride 2 layer
 * 6->8 with bias, padding 1, or 1 before and 0 after (asym). */
static th_fields_t *k3x3(int asym)
{
    static const int64_t one[] = {1, 1}, two[] = {2, 2}, zero[] = {0, 0};
    int64_t dims[4] = {8, 6, 3, 3}, i;
    th_tensor_t w = th_tensor(MICA_FLOAT32, 4, dims, NULL), b;
    th_fields_t *f;
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 7) % 13 - 6) / 16);
    f = conv2d(8, 3, 3, &w);
    if (asym) {
        th_f_ints(f, "pre_padding", 2, one);
        th_f_ints(f, "post_padding", 2, zero);
    } else {
        th_f_ints(f, "padding", 2, one);
    }
    th_f_ints(f, "stride", 2, two);
    dims[0] = 8;
    b = th_tensor(MICA_FLOAT32, 1, dims, NULL);
    for (i = 0; i < 8; i++)
        th_set(&b, i, (double)i / 8);
    th_f_weights(f, "bias", &b);
    th_free(&w);
    th_free(&b);
    return f;
}

static th_fields_t *mid3x3(void)
{
    return k3x3(0);
}

/* cuDNN does not take asymmetric padding: the cudnn implementation runs
 * the kernel (in NHWC under channels last). */
static th_fields_t *asym3x3(void)
{
    return k3x3(1);
}

static th_fields_t *depthwise(void)
{
    static const int64_t one[] = {1, 1};
    int64_t dims[4] = {6, 1, 3, 3}, i;
    th_tensor_t w = th_tensor(MICA_FLOAT32, 4, dims, NULL);
    th_fields_t *f;
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 5) % 11 - 5) / 8);
    f = conv2d(6, 3, 3, &w);
    th_f_ints(f, "padding", 2, one);
    th_f_int(f, "groups", 6);
    th_free(&w);
    return f;
}

/* ResNet's channel counts (multiples of 8, as the float16 channels-last
 * engines of cuDNN want): 32->64 with bias, 3x3 stride `stride` padding 1
 * (k 3) or 1x1 (k 1); depthwise 3x3 on 64 channels (dw). */
static th_fields_t *wide(int k, int stride, int dw)
{
    int64_t pad[2] = {k / 2, k / 2}, st[2] = {stride, stride};
    int64_t dims[4] = {dw ? 64 : 64, dw ? 1 : 32, k, k}, i;
    th_tensor_t w = th_tensor(MICA_FLOAT32, 4, dims, NULL), b;
    th_fields_t *f;
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 7) % 13 - 6) / 32);
    f = conv2d(64, k, k, &w);
    th_f_ints(f, "padding", 2, pad);
    th_f_ints(f, "stride", 2, st);
    if (dw)
        th_f_int(f, "groups", 64);
    dims[0] = 64;
    b = th_tensor(MICA_FLOAT32, 1, dims, NULL);
    for (i = 0; i < 64; i++)
        th_set(&b, i, (double)(i % 9) / 16);
    th_f_weights(f, "bias", &b);
    th_free(&w);
    th_free(&b);
    return f;
}

static th_fields_t *updeconv(void)
{
    static const int64_t two[] = {2, 2}, one[] = {1, 1};
    int64_t dims[4] = {6, 2, 3, 3}, i;
    th_tensor_t w = th_tensor(MICA_FLOAT32, 4, dims, NULL);
    th_fields_t *f;
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 3) % 7 - 3) / 8);
    f = conv2d(4, 3, 3, &w);
    th_f_ints(f, "stride", 2, two);
    th_f_ints(f, "pre_padding", 2, one);
    th_f_ints(f, "post_padding", 2, two);
    th_f_int(f, "groups", 2);
    th_free(&w);
    return f;
}

static void bigger(void)
{
    static const int64_t lo[] = {1, 6, 7, 7}, hi[] = {4, 6, 20, 20};
    static const int64_t shapes[][MICA_MAX_DIMS] = {
        {2, 6, 14, 14}, {1, 6, 7, 9}, {4, 6, 20, 17}, {3, 6, 8, 8}};
    const char *const *p;
    th_tensor_t x;
    int64_t dims[4] = {2, 6, 14, 14};

    x = th_tensor(MICA_FLOAT32, 4, dims, NULL);
    for (dims[0] = 0; dims[0] < th_volume(&x); dims[0]++)
        th_set(&x, dims[0], (double)((dims[0] * 3) % 17 - 8) / 8);
    for (p = impls; *p; p++) {
        uint32_t dev = strncmp(*p, "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                    : MICA_DEVICE_CPU;
        const char *impl = strchr(*p, ':') + 1;
        th_check_impl("6->8 3x3 stride 2 on 14x14", "Convolution", mid3x3(),
                      1, &x, 1, dev, impl, 1e-4);
        th_check_impl("depthwise 3x3 on 14x14", "Convolution", depthwise(),
                      1, &x, 1, dev, impl, 1e-4);
        th_check_impl("deconv groups 2 stride 2 on 14x14", "Deconvolution",
                      updeconv(), 1, &x, 1, dev, impl, 1e-4);
        gc_shapes("runtime batch and size: 3x3 stride 2", "Convolution",
                  mid3x3, dev, impl, 4, lo, hi, 4, shapes, 1e-4);
        gc_shapes("runtime batch and size: depthwise", "Convolution",
                  depthwise, dev, impl, 4, lo, hi, 4, shapes, 1e-4);
        gc_shapes("runtime batch and size: deconvolution", "Deconvolution",
                  updeconv, dev, impl, 4, lo, hi, 4, shapes, 1e-4);
    }
    gc_shapes("runtime batch and size: 3x3 stride 2", "Convolution", mid3x3,
              MICA_DEVICE_CPU, "reference", 4, lo, hi, 4, shapes, 0);
    gc_roundtrip("engine saved and loaded", "Convolution", mid3x3(), &x,
                 MICA_DEVICE_CUDA, "cudnn", 1e-4);
    gc_roundtrip("engine saved and loaded", "Deconvolution", updeconv(), &x,
                 MICA_DEVICE_CUDA, "cudnn", 1e-4);
    gc_roundtrip("engine saved and loaded", "Convolution", depthwise(), &x,
                 MICA_DEVICE_CPU, "onednn", 1e-4);
    gc_roundtrip("engine saved and loaded", "Deconvolution", updeconv(), &x,
                 MICA_DEVICE_CPU, "onednn", 1e-4);
    gc_roundtrip("engine saved and loaded", "Convolution", mid3x3(), &x,
                 MICA_DEVICE_CPU, "reference", 1e-4);
    gc_roundtrip("engine saved and loaded", "Deconvolution", updeconv(), &x,
                 MICA_DEVICE_CPU, "reference", 1e-4);
    gc_autotune("depthwise 3x3", "Convolution", depthwise(), &x, 1e-4);
    gc_autotune("6->8 3x3 stride 2", "Convolution", mid3x3(), &x, 1e-4);
    th_free(&x);
}

/* Every tactic autotune times for the cudnn implementation (cuDNN's
 * graph API's engine configurations and its legacy algorithms) computes
 * what the reference does, at batch 1 and 2, float32 and float16
 * channels last (gc_every_tactic). */
static void every_tactic(void)
{
    int64_t d32[4] = {1, 32, 14, 14}, d64[4] = {2, 64, 14, 14}, i;
    th_tensor_t x32 = th_tensor(MICA_FLOAT32, 4, d32, NULL);
    th_tensor_t x64 = th_tensor(MICA_FLOAT32, 4, d64, NULL);

    for (i = 0; i < th_volume(&x32); i++)
        th_set(&x32, i, (double)((i * 5) % 17 - 8) / 8);
    for (i = 0; i < th_volume(&x64); i++)
        th_set(&x64, i, (double)((i * 3) % 19 - 9) / 8);
    gc_every_tactic("tactics: 32->64 3x3 stride 2, float16", "Convolution",
                    wide(3, 2, 0), &x32, 1, 2e-2);
    gc_every_tactic("tactics: 32->64 1x1, float16", "Convolution",
                    wide(1, 1, 0), &x32, 1, 2e-2);
    gc_every_tactic("tactics: 32->64 3x3, float32", "Convolution",
                    wide(3, 1, 0), &x32, 0, 1e-4);
    gc_every_tactic("tactics: depthwise 3x3 on 64, float16", "Convolution",
                    wide(3, 1, 1), &x64, 1, 2e-2);
    th_free(&x32);
    th_free(&x64);
}

/* ---- the cudnn implementation's tactics, without a GPU ------------------ */

/* The bytes of instance l's state (malloc'd; NULL on failure). */
static void *state_of(const mica_layer_t *l, size_t *size)
{
    void *buf;

    *size = 0;
    if (l->ops->serialize(l, NULL, size) != MICA_OK ||
        !(buf = malloc(*size ? *size : 1)))
        return NULL;
    if (l->ops->serialize(l, buf, size) != MICA_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/*
 * The instance answers as mica/layer.h asks, with no device to run on:
 * no tactic before configure; set_tactic takes cuDNN's algorithms + 1
 * and the hand-written kernel's (101), refuses 0, the FFT algorithms
 * (cudnn.h: forward FFT 4 and FFT_TILING 5, backward-data FFT 2 and
 * FFT_TILING 3) and ids past cuDNN's (8 forward, 6 backward-data
 * algorithms); the state is the fields alone, byte for byte the
 * reference's (the engine loader refuses anything after them).
 */
static void tactics_of(const char *type, th_fields_t *(*fields)(void),
                       const int32_t *good, int nb_good, const int32_t *bad,
                       int nb_bad)
{
    mica_layer_t *l, *ref;
    int32_t ids[MICA_MAX_TACTICS];
    void *a = NULL, *b = NULL;
    size_t na, nb;
    int i;

    if (!th_has_impl(type, MICA_DEVICE_CUDA, "cudnn")) {
        skip("%s cudnn: tactics: not in this build", type);
        return;
    }
    l = th_instance(type, MICA_DEVICE_CUDA, "cudnn", fields());
    ref = th_instance(type, MICA_DEVICE_CPU, "reference", fields());
    if (!l || !ref)
        bail("%s: no instance: %s", type, th_error());
    ok(l->ops->tactics && l->ops->tactics(l, ids, MICA_MAX_TACTICS) == 0,
       "%s cudnn: no tactics offered before configure", type);
    for (i = 0; i < nb_good; i++)
        if (!ok(th_set_tactic(l, good[i]) == MICA_OK,
                "%s cudnn: set_tactic(%d) is taken", type, (int)good[i]))
            diag("%s", th_error());
    for (i = 0; i < nb_bad; i++) {
        mica_status_t st = th_set_tactic(l, bad[i]);
        if (!ok(st != MICA_OK && strstr(th_error(), "tactic"),
                "%s cudnn: set_tactic(%d) is refused", type, (int)bad[i]))
            diag("status %d: '%s'", (int)st, th_error());
    }
    a = state_of(l, &na);
    b = state_of(ref, &nb);
    ok(a && b && na == nb && memcmp(a, b, na) == 0,
       "%s cudnn: the state is the fields alone (%zu bytes, the "
       "reference's %zu)", type, na, nb);
    free(a);
    free(b);
    l->ops->destroy(l);
    ref->ops->destroy(ref);
    l = th_instance(type, MICA_DEVICE_CUDA, "cuda", fields());
    ok(l && (l->ops->tactics == NULL ||
             l->ops->tactics(l, ids, MICA_MAX_TACTICS) == 0),
       "%s cuda: the hand-written kernel offers no tactics", type);
    if (l)
        l->ops->destroy(l);
}

static void tactics(void)
{
    static const int32_t conv_good[] = {1, 2, 3, 4, 7, 8, 101};
    static const int32_t conv_bad[] = {0, -1, 5, 6, 9, 100, 102};
    static const int32_t deconv_good[] = {1, 2, 5, 6, 101};
    static const int32_t deconv_bad[] = {0, 3, 4, 7, 100};

    tactics_of("Convolution", mid3x3, conv_good, 7, conv_bad, 7);
    tactics_of("Deconvolution", updeconv, deconv_good, 5, deconv_bad, 5);
}

/* ---- channels last ------------------------------------------------------ */

/* A 3D 4->4 convolution, kernel 3x3x3, padding 1. */
static th_fields_t *conv3d(void)
{
    static const int64_t k[] = {3, 3, 3}, pad[] = {1, 1, 1};
    int64_t dims[5] = {4, 4, 3, 3, 3}, i;
    th_tensor_t w = th_tensor(MICA_FLOAT32, 5, dims, NULL);
    th_fields_t *f = th_fields();
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 7) % 11 - 5) / 16);
    th_f_int(f, "num_output_maps", 4);
    th_f_ints(f, "kernel_size", 3, k);
    th_f_ints(f, "padding", 3, pad);
    th_f_weights(f, "kernel", &w);
    th_free(&w);
    return f;
}

/*
 * What supports_format answers, asked of the instances without a GPU:
 * the CUDA implementations take a 2D Convolution's [N, C, H, W] in HWC
 * (float32 and float16), in and out alike; never Deconvolution, 3D,
 * another rank's format or a rank with more than one batch dimension;
 * on the CPU oneDNN's a 2D Convolution's too, the reference linear only.
 */
static void formats(void)
{
    static const int64_t x4[] = {2, 6, 14, 14}, x5[] = {2, 3, 6, 14, 14};
    static const int64_t d5[] = {2, 4, 5, 6, 6};
    const uint32_t L = MICA_FORMAT_LINEAR, H = MICA_FORMAT_HWC,
                   D = MICA_FORMAT_DHWC;
    const mica_dtype_t F16 = MICA_FLOAT16, F32 = MICA_FLOAT32;
    const char *const gpu[] = {"cuda", "cudnn"};
    const char *c = "Convolution";
    uint32_t cu = MICA_DEVICE_CUDA, cpu = MICA_DEVICE_CPU;
    int k;

    for (k = 0; k < 2; k++) {
        const char *g = gpu[k];
        th_check_formats("2D", c, cu, g, mid3x3(), F16, 4, x4, H, H, 1);
        th_check_formats("2D", c, cu, g, mid3x3(), F32, 4, x4, H, H, 1);
        th_check_formats("2D", c, cu, g, mid3x3(), F16, 4, x4, L, L, 1);
        th_check_formats("2D, formats differ", c, cu, g, mid3x3(), F16, 4,
                         x4, H, L, 0);
        th_check_formats("2D, formats differ", c, cu, g, mid3x3(), F16, 4,
                         x4, L, H, 0);
        th_check_formats("2D, int32", c, cu, g, mid3x3(), MICA_INT32, 4, x4,
                         H, H, 0);
        th_check_formats("2D on rank 4, 5-D format", c, cu, g, mid3x3(),
                         F16, 4, x4, D, D, 0);
        th_check_formats("2D on rank 5 (two batch dims)", c, cu, g,
                         mid3x3(), F16, 5, x5, D, D, 0);
        th_check_formats("2D, asymmetric padding", c, cu, g, asym3x3(),
                         F16, 4, x4, H, H, 1);
        th_check_formats("Deconvolution", "Deconvolution", cu, g,
                         updeconv(), F16, 4, x4, H, H, 0);
        th_check_formats("Deconvolution", "Deconvolution", cu, g,
                         updeconv(), F16, 4, x4, L, L, 1);
        th_check_formats("3D", c, cu, g, conv3d(), F16, 5, d5, D, D, 0);
        th_check_formats("3D", c, cu, g, conv3d(), F16, 5, d5, L, L, 1);
    }
    th_check_formats("2D", c, cpu, "reference", mid3x3(), F16, 4, x4, H, H,
                     0);
    th_check_formats("2D", c, cpu, "onednn", mid3x3(), F16, 4, x4, H, H, 1);
    th_check_formats("2D", c, cpu, "onednn", mid3x3(), F32, 4, x4, H, H, 1);
    th_check_formats("2D, formats differ", c, cpu, "onednn", mid3x3(), F32,
                     4, x4, H, L, 0);
    th_check_formats("Deconvolution", "Deconvolution", cpu, "onednn",
                     updeconv(), F32, 4, x4, H, H, 0);
    th_check_formats("3D", c, cpu, "onednn", conv3d(), F32, 5, d5, D, D, 0);
}

/* Both CUDA implementations and oneDNN's run in NHWC (network input
 * and output in HWC, no reorder) against the reference, float32 and
 * float16. */
static void channels_last(void)
{
    static const int64_t dims[4] = {2, 6, 14, 14};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16};
    static const double tols[] = {1e-4, 1e-2};
    static const uint32_t devs[] = {MICA_DEVICE_CPU, MICA_DEVICE_CUDA,
                                    MICA_DEVICE_CUDA};
    const char *const gpu[] = {"onednn", "cuda", "cudnn"};
    int t, k;

    th_channels_last(1);
    th_channels_last_cpu(1);
    for (t = 0; t < 2; t++) {
        th_tensor_t x = th_tensor(types[t], 4, dims, NULL);
        char label[128];
        int64_t i;
        for (i = 0; i < th_volume(&x); i++)
            th_set(&x, i, (double)((i * 3) % 17 - 8) / 8);
        for (k = 0; k < 3; k++) {
            snprintf(label, sizeof label, "channels last %s: 6->8 3x3 "
                     "stride 2", mica_dtype_name(types[t]));
            th_check_impl(label, "Convolution", mid3x3(), 1, &x, 1, devs[k],
                          gpu[k], tols[t]);
            snprintf(label, sizeof label, "channels last %s: depthwise 3x3",
                     mica_dtype_name(types[t]));
            th_check_impl(label, "Convolution", depthwise(), 1, &x, 1,
                          devs[k], gpu[k], tols[t]);
            snprintf(label, sizeof label, "channels last %s: asymmetric "
                     "padding", mica_dtype_name(types[t]));
            th_check_impl(label, "Convolution", asym3x3(), 1, &x, 1,
                          devs[k], gpu[k], tols[t]);
        }
        th_free(&x);
    }
    th_channels_last(0);
    th_channels_last_cpu(0);
}

/* ---- errors ------------------------------------------------------------- */

static void error(const char *label, const char *type, th_fields_t *f,
                  int rank, const int64_t *xdims, mica_dtype_t dt,
                  const char *needle)
{
    th_tensor_t x = th_tensor(dt, rank, xdims, NULL);
    th_check_error(label, type, f, 1, &x, 1, needle);
    th_free(&x);
}

/* A 2D layer of m maps and a kernel of n values, kernel_size 3x3. */
static th_fields_t *conv_n(int64_t m, int64_t n, mica_dtype_t dt)
{
    int64_t d[1];
    th_tensor_t w;
    th_fields_t *f;
    d[0] = n;
    w = th_tensor(dt, 1, d, NULL);
    f = conv2d(m, 3, 3, &w);
    th_free(&w);
    return f;
}

static void errors(void)
{
    static const int64_t x4[] = {1, 2, 5, 5}, x3[] = {2, 5, 5};
    static const int64_t small[] = {1, 2, 2, 2}, c3[] = {1, 3, 5, 5};
    static const int64_t one[] = {1}, three[] = {1, 1, 1};
    static const int64_t neg[] = {-1, 0}, pad[] = {1, 1};
    static const int64_t lo[] = {1, 2, 2, 5}, hi[] = {1, 2, 9, 5};
    th_fields_t *f;
    th_tensor_t b;
    int64_t d[1];

    error("kernel size not a multiple", "Convolution",
          conv_n(2, 17, MICA_FLOAT32), 4, x4, MICA_FLOAT32,
          "kernel has 17 values, not a multiple of num_output_maps (2) x "
          "kernel_size [3, 3]: Convolution expects a kernel [M, C/groups, "
          "kernel...]");
    f = conv_n(4, 36, MICA_FLOAT32);
    th_f_int(f, "groups", 3);
    error("groups not dividing the maps", "Convolution", f, 4, x4,
          MICA_FLOAT32,
          "groups is 3: it must be >= 1 and divide num_output_maps (4)");
    f = conv_n(0, 36, MICA_FLOAT32);
    error("no output maps", "Convolution", f, 4, x4, MICA_FLOAT32,
          "num_output_maps is 0: it must be >= 1");
    f = th_fields();
    th_f_int(f, "num_output_maps", 1);
    th_f_ints(f, "kernel_size", 1, one);
    d[0] = 2;
    b = th_tensor(MICA_FLOAT32, 1, d, NULL);
    th_f_weights(f, "kernel", &b);
    error("a 1D kernel", "Convolution", f, 4, x4, MICA_FLOAT32,
          "kernel_size has 1 value: give 2 (2D) or 3 (3D)");
    f = conv_n(2, 36, MICA_FLOAT32);
    th_f_ints(f, "stride", 3, three);
    error("stride of the wrong length", "Convolution", f, 4, x4, MICA_FLOAT32,
          "stride has 3 values but the window has 2 spatial dimensions");
    f = conv_n(2, 36, MICA_FLOAT32);
    th_f_ints(f, "padding", 2, neg);
    error("negative padding", "Convolution", f, 4, x4, MICA_FLOAT32,
          "padding [-1, 0]: every value must be >= 0");
    {
        static const int64_t huge[] = {1, (int64_t)1 << 33};
        f = conv_n(2, 36, MICA_FLOAT32);
        th_f_ints(f, "dilation", 2, huge);
        error("a dilation of 2^33", "Convolution", f, 4, x4, MICA_FLOAT32,
              "dilation [1, 8589934592]: every value must be >= 1 and <= "
              "2147483647");
    }
    {
        /* the engine fuzzer's finding: maps x kernel taps past 64 bits */
        int64_t n36[1] = {36};
        th_tensor_t k36 = th_tensor(MICA_FLOAT32, 1, n36, NULL);
        error("2^62 output maps of a 2x2 kernel", "Convolution",
              conv2d(((int64_t)1 << 62) + 2, 2, 2, &k36), 4, x4, MICA_FLOAT32,
              "num_output_maps (4611686018427387906) x kernel_size [2, 2] is "
              "more than 2^63 - 1 kernel values");
        error("a kernel_size of 2^31 - 1 squared, 4 maps", "Convolution",
              conv2d(4, INT32_MAX, INT32_MAX, &k36), 4, x4, MICA_FLOAT32,
              "num_output_maps (4) x kernel_size [2147483647, 2147483647] is "
              "more than 2^63 - 1 kernel values");
        error("2^62 output maps of a 2x2 transposed kernel", "Deconvolution",
              conv2d(((int64_t)1 << 62) + 2, 2, 2, &k36), 4, x4, MICA_FLOAT32,
              "num_output_maps / groups (4611686018427387906) x kernel_size "
              "[2, 2] is more than 2^63 - 1 kernel values");
        th_free(&k36);
    }
    f = conv_n(2, 36, MICA_FLOAT32);
    th_f_ints(f, "padding", 2, pad);
    th_f_ints(f, "post_padding", 2, pad);
    error("padding and post_padding", "Convolution", f, 4, x4, MICA_FLOAT32,
          "give either padding or pre_padding and post_padding, not both");
    error("rank 3 input to a 2D convolution", "Convolution",
          conv_n(2, 36, MICA_FLOAT32), 3, x3, MICA_FLOAT32,
          "input has rank 3 but a 2D Convolution needs rank >= 4 "
          "([N, C, H, W])");
    error("input channels differ from the kernel's", "Convolution",
          conv_n(2, 36, MICA_FLOAT32), 4, c3, MICA_FLOAT32,
          "input has 3 channels (dimension 1) but the kernel (36 values) is "
          "made for 2 with num_output_maps 2 and groups 1");
    error("input smaller than the kernel", "Convolution",
          conv_n(2, 36, MICA_FLOAT32), 4, small, MICA_FLOAT32,
          "input dimension 2 is 2: with padding 0+0 it is smaller than the "
          "window (3)");
    error("int32 input", "Convolution", conv_n(2, 36, MICA_FLOAT32), 4, x4,
          MICA_INT32, "takes float32 or float16 input, got int32");
    error("int32 kernel", "Convolution", conv_n(2, 36, MICA_INT32), 4, x4,
          MICA_FLOAT32, "kernel is int32: give float32 or float16 weights");
    f = conv_n(2, 36, MICA_FLOAT32);
    d[0] = 3;
    th_free(&b);
    b = th_tensor(MICA_FLOAT32, 1, d, NULL);
    th_f_weights(f, "bias", &b);
    th_free(&b);
    error("bias of the wrong size", "Convolution", f, 4, x4, MICA_FLOAT32,
          "bias has 3 values but num_output_maps is 2");
    f = conv_n(2, 3 * 9, MICA_FLOAT32);
    th_f_int(f, "groups", 2);
    error("deconvolution channels not divided by groups", "Deconvolution", f,
          4, c3, MICA_FLOAT32,
          "kernel has 27 values, so 3 input channels, which groups (2) does "
          "not divide");
    {
        static const int64_t k2[] = {2, 2}, p2[] = {2, 2};
        static const int64_t tiny[] = {1, 2, 1, 1};
        f = th_fields();
        th_f_int(f, "num_output_maps", 1);
        th_f_ints(f, "kernel_size", 2, k2);
        d[0] = 8;
        b = th_tensor(MICA_FLOAT32, 1, d, NULL);
        th_f_weights(f, "kernel", &b);
        th_free(&b);
        th_f_ints(f, "padding", 2, p2);
        error("deconvolution output below 0", "Deconvolution", f, 4, tiny,
              MICA_FLOAT32,
              "input dimension 2 is 1: with stride 1, a window of 2 and "
              "padding 2+2 the output would be smaller than 0");
    }
    th_dynamic(0, (int)(sizeof lo / sizeof lo[0]), lo, hi);
    error("a profile whose smallest input is below the kernel",
          "Convolution", conv_n(2, 36, MICA_FLOAT32), 4, x4, MICA_FLOAT32,
          "input dimension 2 is 2 (the profile's smallest): with padding "
          "0+0 it is smaller than the window (3)");
    th_dynamic(-1, 0, NULL, NULL);
}

/* The kernel (and a bias) as inputs 1 and 2 (no kernel param): the same
 * results as with them as weights, on the reference and on cuda (cudnn
 * and onednn decline such a layer), Convolution with groups and
 * asymmetric padding and Deconvolution with groups and stride 2; and the
 * checks of their shapes. */
static void kernel_inputs(void)
{
    static const int64_t two[] = {2, 2}, pre[] = {1, 0}, post[] = {0, 1};
    int64_t xd[4] = {2, 6, 9, 7}, wd[4] = {8, 3, 3, 3}, bd[1] = {8};
    int64_t dwd[4] = {6, 4, 2, 2}, i, k;
    th_tensor_t x = th_tensor(MICA_FLOAT32, 4, xd, NULL);
    th_tensor_t w = th_tensor(MICA_FLOAT32, 4, wd, NULL);
    th_tensor_t dw = th_tensor(MICA_FLOAT32, 4, dwd, NULL);
    th_tensor_t b = th_tensor(MICA_FLOAT32, 1, bd, NULL);
    th_tensor_t in[3], want;
    th_fields_t *f;

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, (double)((i * 7) % 19 - 9) / 8);
    for (i = 0; i < th_volume(&w); i++)
        th_set(&w, i, (double)((i * 5) % 13 - 6) / 8);
    for (i = 0; i < th_volume(&dw); i++)
        th_set(&dw, i, (double)((i * 3) % 11 - 5) / 8);
    for (i = 0; i < 8; i++)
        th_set(&b, i, (double)i / 4 - 1);
    for (k = 0; k < 2; k++) {
        const char *type = k ? "Deconvolution" : "Convolution";
        const th_tensor_t *kern = k ? &dw : &w;
        int64_t maps = 8;
        /* with weights: what the inputs must give */
        f = conv2d(maps, k ? 2 : 3, k ? 2 : 3, kern);
        th_f_int(f, "groups", 2);
        if (k) {
            th_f_ints(f, "stride", 2, two);
        } else {
            th_f_ints(f, "pre_padding", 2, pre);
            th_f_ints(f, "post_padding", 2, post);
        }
        th_f_weights(f, "bias", &b);
        th_pin("reference", NULL);
        if (th_run(MICA_DEVICE_CPU, type, f, 1, &x, 1, &want) != MICA_OK)
            bail("%s with weights: %s", type, th_error());
        th_fields_free(f);
        th_pin(NULL, NULL);
        f = th_fields();
        th_f_int(f, "num_output_maps", maps);
        th_f_ints(f, "kernel_size", 2, k ? two : (const int64_t[]){3, 3});
        th_f_int(f, "groups", 2);
        if (k) {
            th_f_ints(f, "stride", 2, two);
        } else {
            th_f_ints(f, "pre_padding", 2, pre);
            th_f_ints(f, "post_padding", 2, post);
        }
        in[0] = x;
        in[1] = *kern;
        in[2] = b;
        th_check(k ? "Deconvolution: kernel and bias as inputs"
                   : "Convolution: kernel and bias as inputs",
                 type, f, 3, in, 1, &want, 1e-5);
        th_free(&want);
    }
    /* the checks: a kernel for other maps, a bias of another size, a
     * bias as weights with a kernel input */
    f = th_fields();
    th_f_int(f, "num_output_maps", 4);
    th_f_ints(f, "kernel_size", 2, (const int64_t[]){3, 3});
    th_f_int(f, "groups", 2);
    in[0] = x;
    in[1] = w;
    th_check_error("kernel input for 8 maps, num_output_maps 4",
                   "Convolution", f, 2, in, 1,
                   "the kernel (input 1) is made for 8 output maps");
    f = th_fields();
    th_f_int(f, "num_output_maps", 8);
    th_f_ints(f, "kernel_size", 2, (const int64_t[]){3, 3});
    in[2] = th_t(MICA_FLOAT32, (const double[]){1, 2, 3}, 1, 3);
    th_check_error("kernel input for 3 channels, the input has 6",
                   "Convolution", f, 3, in, 1,
                   "input has 6 channels but the kernel (input 1) is made "
                   "for 3");
    f = th_fields();
    th_f_int(f, "num_output_maps", 8);
    th_f_ints(f, "kernel_size", 2, (const int64_t[]){3, 3});
    th_f_int(f, "groups", 2);
    th_check_error("bias of 3 values as input 2", "Convolution", f, 3, in,
                   1, "the bias (input 2) has 3 values");
    th_free(&in[2]);
    f = th_fields();
    th_f_int(f, "num_output_maps", 8);
    th_f_ints(f, "kernel_size", 2, (const int64_t[]){3, 3});
    th_f_int(f, "groups", 2);
    th_f_weights(f, "bias", &b);
    th_check_error("bias weights with a kernel input", "Convolution", f, 2,
                   in, 1, "give the bias as input 2 too");
    th_free(&x);
    th_free(&w);
    th_free(&dw);
    th_free(&b);
}

int main(void)
{
    static const int spatial2[] = {0, 1}, spatial3[] = {0, 1, 2};
    size_t i;

    plan_lazy();
    th_context();
    by_hand();
    for (i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        const gen_case_t *c = &conv_cases[i];
        int nd = c->fields[1].n; /* kernel_size */
        gc_run(c, impls, 1e-4, 1e-2);
        gc_dynamic(c, nd + 1, nd == 2 ? spatial2 : spatial3, nd, impls,
                   1e-4);
    }
    bigger();
    kernel_inputs();
    every_tactic();
    tactics();
    formats();
    channels_last();
    errors();
    return 0;
}
