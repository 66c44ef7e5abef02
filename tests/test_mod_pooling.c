/*
 * tests/test_mod_pooling.c - Pooling: the NumPy cases of
 * tests/gen/pool_cases.h (max, average with and without the padding in
 * the count, max_average_blend, windows wholly in the padding, 2D and 3D,
 * asymmetric padding, leading dimensions, empty batches) in float32 and
 * float16 on every implementation against the reference, runtime
 * dimensions within a profile, and every error.
 */
#include <config.h>

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
    bigger();
    errors();
    return 0;
}
