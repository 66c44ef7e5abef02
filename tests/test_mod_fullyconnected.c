/*
 * tests/test_mod_fullyconnected.c - FullyConnected: the NumPy cases of
 * tests/gen/fc_cases.h (the last three dimensions flattened, leading
 * dimensions, with and without bias, empty batches) in float32 and
 * float16 on every implementation against the reference, zero input
 * values, a runtime batch, and the errors.
 */
#include <config.h>

#include <string.h>

#include "cnn_cases.h"
#include "gen/fc_cases.h"

static const char *const impls[] = {"cpu:onednn", "cuda:cublas", NULL};

static th_fields_t *fc(int64_t k, int64_t count, int64_t bias)
{
    th_fields_t *f = th_fields();
    int64_t d[1], i;
    th_tensor_t w;

    th_f_int(f, "num_outputs", k);
    d[0] = count;
    w = th_tensor(MICA_FLOAT32, 1, d, NULL);
    for (i = 0; i < count; i++)
        th_set(&w, i, (double)((i * 5) % 9 - 4) / 8);
    th_f_weights(f, "kernel", &w);
    th_free(&w);
    if (bias > 0) {
        d[0] = bias;
        w = th_tensor(MICA_FLOAT32, 1, d, NULL);
        for (i = 0; i < bias; i++)
            th_set(&w, i, (double)i / 4);
        th_f_weights(f, "bias", &w);
        th_free(&w);
    }
    return f;
}

/* ResNet's classifier, smaller: 64 x 1 x 1 to 10. */
static th_fields_t *head(void)
{
    return fc(10, 640, 10);
}

static void bigger(void)
{
    static const int64_t lo[] = {1, 64, 1, 1}, hi[] = {9, 64, 1, 1};
    static const int64_t shapes[][MICA_MAX_DIMS] = {
        {4, 64, 1, 1}, {1, 64, 1, 1}, {9, 64, 1, 1}};
    int64_t dims[4] = {4, 64, 1, 1}, i;
    const char *const *p;
    th_tensor_t x = th_tensor(MICA_FLOAT32, 4, dims, NULL);

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, (double)((i * 3) % 17 - 8) / 8);
    for (p = impls; *p; p++) {
        uint32_t dev = strncmp(*p, "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                    : MICA_DEVICE_CPU;
        const char *impl = strchr(*p, ':') + 1;
        th_check_impl("64 to 10", "FullyConnected", head(), 1, &x, 1, dev,
                      impl, 1e-5);
        gc_shapes("runtime batch", "FullyConnected", head, dev, impl, 4, lo,
                  hi, 3, shapes, 1e-5);
    }
    th_free(&x);
    {
        /* No input value (C = 0): the bias. */
        static const double want[] = {0, 0.25, 0.5, 0, 0.25, 0.5};
        th_tensor_t z, e;
        dims[0] = 2;
        dims[1] = 0;
        dims[2] = 3;
        dims[3] = 1;
        z = th_tensor(MICA_FLOAT32, 4, dims, NULL);
        e = th_t(MICA_FLOAT32, want, 4, 2, 3, 1, 1);
        th_pin("reference", NULL);
        th_check("no input values: the bias", "FullyConnected", fc(3, 0, 3),
                 1, &z, 1, &e, 0);
        th_pin(NULL, NULL);
        for (p = impls; *p; p++)
            th_check_impl("no input values: the bias", "FullyConnected",
                          fc(3, 0, 3), 1, &z, 1,
                          strncmp(*p, "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                       : MICA_DEVICE_CPU,
                          strchr(*p, ':') + 1, 0);
        th_free(&z);
        th_free(&e);
    }
}

static void error(const char *label, th_fields_t *f, int rank,
                  const char *needle)
{
    static const int64_t d[] = {1, 2, 2, 2};
    th_tensor_t x = th_tensor(MICA_FLOAT32, rank, d + 4 - rank, NULL);
    th_check_error(label, "FullyConnected", f, 1, &x, 1, needle);
    th_free(&x);
}

int main(void)
{
    size_t i;

    plan_lazy();
    th_context();
    for (i = 0; i < sizeof fc_cases / sizeof fc_cases[0]; i++) {
        gc_run(&fc_cases[i], impls, 1e-5, 2e-3);
        gc_dynamic(&fc_cases[i], 3, NULL, 0, impls, 1e-5);
    }
    bigger();
    error("kernel for another input size", fc(2, 12, 0), 4,
          "kernel has 12 values but num_outputs (2) x C*H*W of the input (8) "
          "is 16");
    /* 8 x 2^62 is 0 in 64 bits: an empty kernel would seem to fit */
    error("2^62 outputs of an empty kernel", fc((int64_t)1 << 62, 0, 0), 4,
          "kernel has 0 values but num_outputs (4611686018427387904) x "
          "C*H*W of the input (8) is more than 2^63 - 1");
    error("kernel not a multiple of the outputs", fc(2, 7, 0), 4,
          "kernel has 7 values, not a multiple of num_outputs (2)");
    error("no outputs", fc(0, 8, 0), 4, "num_outputs is 0: it must be >= 1");
    error("bias of the wrong size", fc(2, 16, 3), 4,
          "bias is 3 float32 values: give 2 float32 or float16 values "
          "(num_outputs)");
    error("rank 2 input", fc(2, 8, 0), 2,
          "input has rank 2 but FullyConnected needs rank >= 3 "
          "([..., C, H, W])");
    return 0;
}
