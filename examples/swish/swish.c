/* swish.c - Swish, y = x * sigmoid(x), on float32 and float16: a module
 * written with mica's module kit; with CUDA too when built with
 * MICA_KIT_CUDA=1 and swish_cuda.cu (see the Makefile). */
#include <stdint.h>

#include <mica/kit.h>
#include <mica/kit_half.h>

#include "swish.h"

static MICA_KIT_ENQUEUE(swish_cpu)
{
    int64_t i, n = mica_dims_volume(&out[0].dims);
    const uint16_t *h = inputs[0];
    const float *f = inputs[0];

    for (i = 0; i < n; i++) {
        if (in[0].dtype == MICA_FLOAT16)
            ((uint16_t *)outputs[0])[i] =
                mica_kit_float_to_half(swish(mica_kit_half_to_float(h[i])));
        else
            ((float *)outputs[0])[i] = swish(f[i]);
    }
    return MICA_OK;
}

#if MICA_KIT_CUDA
/* swish_cuda.cu */
mica_status_t swish_cuda(mica_dtype_t t, const void *x, void *y, int64_t n,
                         void *stream, mica_error_t *err);

static MICA_KIT_ENQUEUE(swish_gpu)
{
    return swish_cuda(in[0].dtype, inputs[0], outputs[0],
                      mica_dims_volume(&out[0].dims), stream, err);
}
#endif

MICA_KIT_LAYER_PAIR(swish, "Swish", NULL, 0, mica_kit_layer_create,
                    swish_cpu, swish_gpu,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = mica_kit_same_dtypes,
                    .output_dims = mica_kit_same_dims,
                    .supports_format = mica_kit_float_linear)

static const mica_layer_creator_t *const creators[] = {MICA_KIT_PAIR(swish)};

MICA_KIT_ENTRY("swish", "1.0.0", "MIT", "Swish: y = x * sigmoid(x)",
               creators)
