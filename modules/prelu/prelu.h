/*
 * modules/prelu/prelu.h - the ParametricReLU module: the scalar function
 * shared by the CPU reference and the CUDA kernel, and the launcher.
 */
#ifndef MICA_MOD_PRELU_H
#define MICA_MOD_PRELU_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x where x >= 0, else slope * x (NaN stays NaN). */
MICA_KIT_HD float mica__prelu(float x, float slope)
{
    return x >= 0.0f || x != x ? x : slope * x;
}

/*
 * y[i] = prelu(x[...], slope[...]) over the broadcast view v (input 0 x,
 * input 1 slope; n > 0 output elements), dtype float32 or float16.
 */
mica_status_t mica__prelu_cuda(mica_dtype_t dtype, const mica_kit_bcast_t *v,
                               int64_t n, const void *x, const void *slope,
                               void *y, void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
