/*
 * tests/test_mod_lrn.c - LRN: the NumPy cases of tests/gen/lrn_cases.h
 * (windows 1 to 15, windows wider than the channels, leading dimensions,
 * negative alpha) in float32 and float16 on every implementation against
 * the reference, cuDNN's bounds (beta 0.01, k 1e-5), runtime dimensions,
 * and the range errors.
 */
#include <config.h>

#include <string.h>

#include "cnn_cases.h"
#include "gen/lrn_cases.h"

static const char *const impls[] = {"cpu:onednn", "cuda:cuda", "cuda:cudnn",
                                    NULL};

static th_fields_t *lrn(int64_t window, double alpha, double beta, double k)
{
    th_fields_t *f = th_fields();
    th_f_int(f, "window", window);
    th_f_float(f, "alpha", alpha);
    th_f_float(f, "beta", beta);
    th_f_float(f, "k", k);
    return f;
}

static th_fields_t *alexnet(void)
{
    return lrn(5, 1e-4, 0.75, 2.0);
}

static void bigger(void)
{
    static const int64_t lo[] = {1, 16, 3, 3}, hi[] = {3, 16, 12, 12};
    static const int64_t shapes[][MICA_MAX_DIMS] = {{2, 16, 6, 5},
                                                    {3, 16, 12, 3}};
    int64_t dims[4] = {2, 16, 6, 5}, i;
    const char *const *p;
    th_tensor_t x = th_tensor(MICA_FLOAT32, 4, dims, NULL);

    for (i = 0; i < th_volume(&x); i++)
        th_set(&x, i, (double)((i * 7) % 33 - 16) / 2);
    for (p = impls; *p; p++) {
        uint32_t dev = strncmp(*p, "cuda:", 5) == 0 ? MICA_DEVICE_CUDA
                                                    : MICA_DEVICE_CPU;
        const char *impl = strchr(*p, ':') + 1;
        th_check_impl("AlexNet's LRN (5, 1e-4, 0.75, 2) on 16 channels",
                      "LRN", alexnet(), 1, &x, 1, dev, impl, 1e-5);
        th_check_impl("window 15, alpha 1, beta 2, k 0.5", "LRN",
                      lrn(15, 1.0, 2.0, 0.5), 1, &x, 1, dev, impl, 1e-4);
        /* cuDNN's bounds exactly, which their float roundings miss. */
        th_check_impl("window 15, alpha 1e-3, beta 0.01, k 1e-5", "LRN",
                      lrn(15, 1e-3, 0.01, 1e-5), 1, &x, 1, dev, impl, 1e-5);
        gc_shapes("runtime batch and size", "LRN", alexnet, dev, impl, 4, lo,
                  hi, 2, shapes, 1e-5);
    }
    /* oneDNN's LRN on channels-last x and y (no reorder) */
    th_channels_last_cpu(1);
    th_check_impl("channels last: AlexNet's LRN on 16 channels", "LRN",
                  alexnet(), 1, &x, 1, MICA_DEVICE_CPU, "onednn", 1e-5);
    th_check_impl("channels last: window 15, alpha 1, beta 2, k 0.5", "LRN",
                  lrn(15, 1.0, 2.0, 0.5), 1, &x, 1, MICA_DEVICE_CPU,
                  "onednn", 1e-4);
    th_channels_last_cpu(0);
    th_free(&x);
}

static void error(const char *label, th_fields_t *f, int rank,
                  const char *needle)
{
    static const int64_t d[] = {1, 4, 2, 2};
    th_tensor_t x = th_tensor(MICA_FLOAT32, rank, d + 4 - rank, NULL);
    th_check_error(label, "LRN", f, 1, &x, 1, needle);
    th_free(&x);
}

int main(void)
{
    static const int spatial[] = {0, 1};
    size_t i;

    plan_lazy();
    th_context();
    for (i = 0; i < sizeof lrn_cases / sizeof lrn_cases[0]; i++) {
        gc_run(&lrn_cases[i], impls, 1e-5, 2e-3);
        gc_dynamic(&lrn_cases[i], 3, spatial, 2, impls, 1e-5);
    }
    bigger();
    error("an even window", lrn(4, 1e-4, 0.75, 1), 4,
          "window is 4: it must be odd, from 1 to 15");
    error("a window of 17", lrn(17, 1e-4, 0.75, 1), 4,
          "window is 17: it must be odd, from 1 to 15");
    error("alpha too large", lrn(3, 1e21, 0.75, 1), 4,
          "alpha is 1e+21: it must be in [-1e+20, 1e+20]");
    error("beta too small", lrn(3, 1e-4, 0.001, 1), 4,
          "beta is 0.001: it must be in [0.01, 100000]");
    error("k too small", lrn(3, 1e-4, 0.75, 0), 4,
          "k is 0: it must be in [1e-05, 1e+10]");
    error("rank 2 input", lrn(3, 1e-4, 0.75, 1), 2,
          "input has rank 2 but LRN needs rank >= 3 ([..., C, H, W])");
    return 0;
}
