/*
 * modules/quantize/quantize.h - the Quantize and Dequantize layers: the
 * scalar arithmetic shared by the CPU reference and the CUDA kernels, and
 * the launchers.
 */
#ifndef MICA_MOD_QUANTIZE_H
#define MICA_MOD_QUANTIZE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * int8 of x: x / scale (an IEEE float32 division) rounded half to even,
 * plus the zero point, clamped to [-128, 127].  NaN gives the zero point.
 */
MICA_KIT_HD int8_t mica__quantize(float x, float scale, int32_t zp)
{
    float v = x / scale;
    if (v != v)
        return (int8_t)zp;
    /* exact below 2^24; beyond, far outside the range either way */
    v = rintf(v) + (float)zp;
    return v <= -128.0f ? (int8_t)-128 : v >= 127.0f ? (int8_t)127
                                                      : (int8_t)v;
}

/* The value of int8 x: (x - zero point) * scale, in float32. */
MICA_KIT_HD float mica__dequantize(int8_t x, float scale, int32_t zp)
{
    return (float)((int32_t)x - zp) * scale;
}

/*
 * The layout of one run: scale (and zero point) value (i / inner) % k
 * applies to element i; k is 1 per tensor.  zp NULL: zero.
 */
typedef struct mica__qdq {
    int64_t n, k, inner;
    mica_dtype_t xtype, stype; /* x's type, the scale's (float32/16) */
} mica__qdq_t;

/* Quantize: y (int8) from x (float32 or float16). */
mica_status_t mica__quantize_cuda(const mica__qdq_t *q, const void *x,
                                  const void *scale, const int8_t *zp,
                                  int8_t *y, void *stream, mica_error_t *err);
/* Dequantize: y (of the scale's type) from x (int8). */
mica_status_t mica__dequantize_cuda(const mica__qdq_t *q, const int8_t *x,
                                    const void *scale, const int8_t *zp,
                                    void *y, void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
