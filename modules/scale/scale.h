/*
 * modules/scale/scale.h - the Scale module: the scalar function shared by
 * the CPU reference and the CUDA kernel, and the CUDA helpers.
 */
#ifndef MICA_MOD_SCALE_H
#define MICA_MOD_SCALE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (x * scale + shift) ^ power; without use_power the power (1) is left
 * out, so that the usual case costs no powf. */
MICA_KIT_HD float mica__scale(float x, float shift, float scale, float power,
                              int use_power)
{
    float v = x * scale + shift;
    return use_power ? powf(v, power) : v;
}

/*
 * The coefficients of a layer on the device: `k` shifts, then k scales,
 * then k powers (3 k floats), element i of the input using coefficient
 * (i / inner) % k.
 */
typedef struct mica__scale_run {
    const float *coef; /* device memory */
    int64_t k, inner;
    int use_power;
} mica__scale_run_t;

/* Copy 3 k floats to new device memory *dev (synchronously). */
mica_status_t mica__scale_cuda_upload(const float *host, int64_t k,
                                      float **dev, mica_error_t *err);
/* Free what mica__scale_cuda_upload allocated (NULL: nothing). */
void mica__scale_cuda_free(float *dev);
/* y = scale of x, n > 0 elements of dtype float32 or float16. */
mica_status_t mica__scale_cuda(mica_dtype_t dtype, const mica__scale_run_t *r,
                               int64_t n, const void *x, void *y,
                               void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
