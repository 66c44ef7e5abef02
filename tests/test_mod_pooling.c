/*
 * tests/test_mod_pooling.c - Pooling: the NumPy cases of
 * tests/gen/pool_cases.h (max, average with and without the padding in
 * the count, max_average_blend, windows wholly in the padding, 2D and 3D,
 * asymmetric padding, leading dimensions, empty batches) in float32 and
 * float16 on every implementation against the reference, runtime
 * dimensions within a profile, the formats each implementation takes
 * and the CUDA ones and oneDNN's in channels last, and every error.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cnn_cases.h"
#include "gen/pool_cases.h"

static const char *const impls[] = {"cpu:onednn", "cuda:cuda", "cuda:cudnn",
                                    NULL};

static th_fields_t *pool2d(const char *type, int64_t kh, int64_t kw)
{
    th_fields_t *f = th_fields();
    int64_t k[2];
    k[0] = kh;
    k[1] = kw;
    th_f_str(f, "type", type);
    th_f_ints(f, "window_size", 2, k);
    return f;
}

/* ResNet's stem pooling: max 3x3 stride 2 padding 1. */
static th_fields_t *stem(void)
{
    static const int64_t two[] = {2, 2}, one[] = {1, 1};
    th_fields_t *f = pool2d("max", 3, 3);
    th_f_ints(f, "stride", 2, two);
    th_f_ints(f, "padding", 2, one);
    return f;
}

static th_fields_t *avg_pad(void)
{
    static const int64_t two[] = {2, 2}, pre[] = {1, 0}, post[] = {0, 2};
    th_fields_t *f = pool2d("average", 3, 3);
    th_f_ints(f, "stride", 2, two);
    th_f_ints(f, "pre_padding", 2, pre);
    th_f_ints(f, "post_padding", 2, post);
    th_f_bool(f, "average_count_excludes_padding", 0);
    return f;
}

static th_fields_t *blend(void)
{
    static const int64_t one[] = {1, 1};
    th_fields_t *f = pool2d("max_average_blend", 2, 2);
    th_f_ints(f, "padding", 2, one);
    th_f_float(f, "blend_factor", 0.75);
    return f;
}

static th_fields_t *global(void)
{
    return pool2d("average", 7, 7);
}

/* Dilation (ONNX's dilations): the window's positions two apart, max
 * without padding, average counting a padding of 1; values by hand
 * (x[i][j] = 5 i + j), then every implementation against the reference
 * (cuDNN's takes none: a skip; the builder picks cuda there). */
static void dilated(void)
{
    static const int64_t two[] = {2, 2}, one[] = {1, 1};
    static const double mx[] = {12, 13, 14, 17, 18, 19};
    static const double av[] = {1.5, 3, 3.5, 4, 2, 3, 6, 7, 8, 4, 5.5, 11,
                                12, 13, 6.5, 2.75, 5.5, 6, 6.5, 3.25};
    double xv[20];
    th_tensor_t x, wm, wa;
    th_fields_t *f;
    int i;

    for (i = 0; i < 20; i++)
        xv[i] = i;
    x = th_tensor(MICA_FLOAT32, 4, (const int64_t[]){1, 1, 4, 5}, xv);
    wm = th_tensor(MICA_FLOAT32, 4, (const int64_t[]){1, 1, 2, 3}, mx);
    wa = th_tensor(MICA_FLOAT32, 4, (const int64_t[]){1, 1, 4, 5}, av);
    f = th_f_ints(pool2d("max", 2, 2), "dilation", 2, two);
    th_check("max 2x2 dilation 2", "Pooling", f, 1, &x, 1, &wm, 1e-6);
    f = th_f_ints(pool2d("average", 2, 2), "dilation", 2, two);
    th_f_ints(f, "padding", 2, one);
    th_f_bool(f, "average_count_excludes_padding", 0);
    th_check("average 2x2 dilation 2 padding 1", "Pooling", f, 1, &x, 1,
             &wa, 1e-6);
    for (i = 0; impls[i]; i++) {
        const char *impl = strchr(impls[i], ':') + 1;
        uint32_t dev = strncmp(impls[i], "cuda", 4) ? MICA_DEVICE_CPU
                                                     : MICA_DEVICE_CUDA;
        char label[64];
        snprintf(label, sizeof label, "max dilation 2: %s", impls[i]);
        if (!strcmp(impl, "cudnn")) { /* takes no dilation: cuda runs it */
            skip("%s: cuDNN's pooling has no dilation", label);
            continue;
        }
        th_check_impl(label, "Pooling",
                      th_f_ints(pool2d("max", 2, 2), "dilation", 2, two), 1,
                      &x, 1, dev, impl, 1e-6);
    }
    th_free(&x);
    th_free(&wm);
    th_free(&wa);
}

static void bigger(void)
{
    static const int64_t lo[] = {1, 8, 7, 7}, hi[] = {4, 8, 20, 20};
    static const int64_t shapes[][MICA_MAX_DIMS] = {
        {2, 8, 14, 14}, {1, 8, 7, 9}, {4, 8, 20, 17}};
    static const int64_t glo[] = {1, 8, 7, 7}, ghi[] = {4, 8, 7, 7};
    static const int64_t gshapes[][MICA_MAX_DIMS] = {{2, 8, 7, 7},
                                                     {4, 8, 7, 7}};
    int64_t dims[4] = {2, 8, 14, 14}, i;
    const char *const *p;
    th_tensor_t x = th_tensor(MICA_FLOAT32, 4, dims, NULL);

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, (double)((i * 3) % 17 - 8) / 8);
    for (p = impls; *p; p++) {
        uint32_t dev = strncmp(*p, "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                    : MICA_DEVICE_CPU;
        const char *impl = strchr(*p, ':') + 1;
        th_check_impl("max 3x3 stride 2 padding 1 on 14x14", "Pooling",
                      stem(), 1, &x, 1, dev, impl, 1e-5);
        th_check_impl("average asymmetric padding counted", "Pooling",
                      avg_pad(), 1, &x, 1, dev, impl, 1e-5);
        th_check_impl("blend 0.75 padding 1", "Pooling", blend(), 1, &x, 1,
                      dev, impl, 1e-5);
        gc_shapes("runtime batch and size: max", "Pooling", stem, dev, impl,
                  4, lo, hi, 3, shapes, 1e-5);
        gc_shapes("runtime batch and size: blend", "Pooling", blend, dev,
                  impl, 4, lo, hi, 3, shapes, 1e-5);
        gc_shapes("runtime batch: global average", "Pooling", global, dev,
                  impl, 4, glo, ghi, 2, gshapes, 1e-5);
    }
    th_free(&x);
}

/* ---- channels last ------------------------------------------------------ */

/* A 3D max pooling 2x2x2. */
static th_fields_t *pool3d(void)
{
    static const int64_t k[] = {2, 2, 2};
    th_fields_t *f = th_fields();
    th_f_str(f, "type", "max");
    th_f_ints(f, "window_size", 3, k);
    return f;
}

/*
 * What supports_format answers, asked of the instances without a GPU:
 * the CUDA implementations take 2D pooling of [N, C, H, W] in HWC
 * (float32 and float16), in and out alike; not 3D, not [C, H, W] nor a
 * rank with two batch dimensions; on the CPU oneDNN's as well, the
 * reference linear only.
 */
static void formats(void)
{
    static const int64_t x4[] = {2, 8, 14, 14}, x3[] = {8, 14, 14};
    static const int64_t x5[] = {2, 8, 4, 14, 14};
    const uint32_t L = MICA_FORMAT_LINEAR, H = MICA_FORMAT_HWC,
                   D = MICA_FORMAT_DHWC;
    const mica_dtype_t F16 = MICA_FLOAT16, F32 = MICA_FLOAT32;
    const char *const gpu[] = {"cuda", "cudnn"};
    const char *p = "Pooling";
    uint32_t cu = MICA_DEVICE_CUDA, cpu = MICA_DEVICE_CPU;
    int k;

    for (k = 0; k < 2; k++) {
        const char *g = gpu[k];
        th_check_formats("2D", p, cu, g, stem(), F16, 4, x4, H, H, 1);
        th_check_formats("2D", p, cu, g, stem(), F32, 4, x4, H, H, 1);
        th_check_formats("2D blend", p, cu, g, blend(), F16, 4, x4, H, H, 1);
        th_check_formats("2D", p, cu, g, stem(), F16, 4, x4, L, L, 1);
        th_check_formats("2D, formats differ", p, cu, g, stem(), F16, 4, x4,
                         H, L, 0);
        th_check_formats("2D on rank 3", p, cu, g, stem(), F16, 3, x3, H, H,
                         0);
        th_check_formats("2D on rank 5", p, cu, g, stem(), F16, 5, x5, D, D,
                         0);
        th_check_formats("3D", p, cu, g, pool3d(), F16, 5, x5, D, D, 0);
        th_check_formats("3D", p, cu, g, pool3d(), F16, 5, x5, L, L, 1);
    }
    th_check_formats("2D", p, cpu, "reference", stem(), F16, 4, x4, H, H, 0);
    th_check_formats("2D", p, cpu, "onednn", stem(), F16, 4, x4, H, H, 1);
    th_check_formats("2D", p, cpu, "onednn", stem(), F32, 4, x4, H, H, 1);
    th_check_formats("2D, formats differ", p, cpu, "onednn", stem(), F32, 4,
                     x4, H, L, 0);
    th_check_formats("3D", p, cpu, "onednn", pool3d(), F32, 5, x5, D, D, 0);
}

/* A max pooling 2x2 stride 2 with pre-padding 2: its first windows lie
 * wholly in the padding (oneDNN's then hands the problem to the
 * reference, which reads channels last too). */
static th_fields_t *empty_first(void)
{
    static const int64_t two[] = {2, 2}, zero[] = {0, 0};
    th_fields_t *f = pool2d("max", 2, 2);
    th_f_ints(f, "stride", 2, two);
    th_f_ints(f, "pre_padding", 2, two);
    th_f_ints(f, "post_padding", 2, zero);
    return f;
}

/* The CUDA implementations and oneDNN's run in NHWC (network input and
 * output in HWC, no reorder) against the reference, float32 and
 * float16: cuDNN's NHWC pooling (stem, global) and the kernel
 * (asymmetric padding, blend); oneDNN's nhwc, and the reference in
 * channels last for windows wholly in the padding. */
static void channels_last(void)
{
    static const int64_t dims[4] = {2, 8, 14, 14}, gdims[4] = {3, 8, 7, 7};
    static const mica_dtype_t types[] = {MICA_FLOAT32, MICA_FLOAT16};
    static const double tols[] = {1e-5, 2e-3};
    static const uint32_t devs[] = {MICA_DEVICE_CPU, MICA_DEVICE_CUDA,
                                    MICA_DEVICE_CUDA};
    const char *const gpu[] = {"onednn", "cuda", "cudnn"};
    int t, k;

    th_channels_last(1);
    th_channels_last_cpu(1);
    for (t = 0; t < 2; t++) {
        th_tensor_t x = th_tensor(types[t], 4, dims, NULL);
        th_tensor_t gx = th_tensor(types[t], 4, gdims, NULL);
        const char *dt = mica_dtype_name(types[t]);
        char label[128];
        int64_t i;
        for (i = 0; i < th_volume(&x); i++)
            th_set(&x, i, (double)((i * 3) % 17 - 8) / 8);
        for (i = 0; i < th_volume(&gx); i++)
            th_set(&gx, i, (double)((i * 5) % 13 - 6) / 8);
        for (k = 0; k < 3; k++) {
            snprintf(label, sizeof label, "channels last %s: max 3x3 "
                     "stride 2 padding 1", dt);
            th_check_impl(label, "Pooling", stem(), 1, &x, 1, devs[k],
                          gpu[k], tols[t]);
            snprintf(label, sizeof label, "channels last %s: average "
                     "asymmetric padding counted", dt);
            th_check_impl(label, "Pooling", avg_pad(), 1, &x, 1, devs[k],
                          gpu[k], tols[t]);
            snprintf(label, sizeof label, "channels last %s: blend", dt);
            th_check_impl(label, "Pooling", blend(), 1, &x, 1, devs[k],
                          gpu[k], tols[t]);
            snprintf(label, sizeof label, "channels last %s: global "
                     "average", dt);
            th_check_impl(label, "Pooling", global(), 1, &gx, 1, devs[k],
                          gpu[k], tols[t]);
        }
        snprintf(label, sizeof label, "channels last %s: windows wholly in "
                 "the padding", dt);
        th_check_impl(label, "Pooling", empty_first(), 1, &x, 1,
                      MICA_DEVICE_CPU, "onednn", tols[t]);
        th_free(&x);
        th_free(&gx);
    }
    th_channels_last(0);
    th_channels_last_cpu(0);
}

/* ---- errors ------------------------------------------------------------- */

static void error(const char *label, th_fields_t *f, int rank,
                  const int64_t *xdims, mica_dtype_t dt, const char *needle)
{
    th_tensor_t x = th_tensor(dt, rank, xdims, NULL);
    th_check_error(label, "Pooling", f, 1, &x, 1, needle);
    th_free(&x);
}

static void errors(void)
{
    static const int64_t x4[] = {1, 2, 5, 5}, x2[] = {5, 5};
    static const int64_t small[] = {1, 2, 2, 2}, one[] = {2};
    static const int64_t lo[] = {1, 2, 1, 5}, hi[] = {1, 2, 9, 5};
    th_fields_t *f = th_fields();

    th_f_str(f, "type", "max");
    th_f_ints(f, "window_size", 1, one);
    error("a 1D window", f, 4, x4, MICA_FLOAT32,
          "window_size has 1 value: give 2 (2D) or 3 (3D)");
    f = pool2d("max_average_blend", 2, 2);
    th_f_float(f, "blend_factor", 1.5);
    error("blend_factor above 1", f, 4, x4, MICA_FLOAT32,
          "blend_factor is 1.5: it must be in [0, 1]");
    error("rank 2 input", pool2d("max", 2, 2), 2, x2, MICA_FLOAT32,
          "input has rank 2 but a 2D Pooling needs rank >= 3");
    error("input smaller than the window", pool2d("average", 3, 3), 4, small,
          MICA_FLOAT32,
          "input dimension 2 is 2: with padding 0+0 it is smaller than the "
          "window (3)");
    error("int32 input", pool2d("max", 2, 2), 4, x4, MICA_INT32,
          "takes float32 or float16 input, got int32");
    {
        /* window and stride past int32, whose product would leave int64 */
        static const int64_t big[] = {(int64_t)1 << 40, 1};
        f = pool2d("max", (int64_t)1 << 40, 1);
        th_f_ints(f, "stride", 2, big);
        error("a window of 2^40", f, 4, x4, MICA_FLOAT32,
              "window_size [1099511627776, 1]: every value must be >= 1 and "
              "<= 2147483647");
    }
    th_dynamic(0, (int)(sizeof lo / sizeof lo[0]), lo, hi);
    error("a profile whose smallest input is below the window",
          pool2d("max", 2, 2), 4, x4, MICA_FLOAT32,
          "input dimension 2 is 1 (the profile's smallest): with padding 0+0 "
          "it is smaller than the window (2)");
    th_dynamic(-1, 0, NULL, NULL);
}

int main(void)
{
    static const int spatial[] = {0, 1, 2};
    size_t i;

    plan_lazy();
    th_context();
    for (i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
        const gen_case_t *c = &pool_cases[i];
        int nd = c->fields[1].n; /* window_size */
        gc_run(c, impls, 1e-5, 2e-3);
        gc_dynamic(c, nd, spatial, nd, impls, 1e-5);
    }
    dilated();
    bigger();
    formats();
    channels_last();
    errors();
    return 0;
}
