/*
 * modules/nonzero/nonzero.h - what the CPU reference and the CUDA kernel
 * of the NonZero module share: which elements are non-zero, and the CUDA
 * launcher.
 */
#ifndef MICA_MOD_NONZERO_H
#define MICA_MOD_NONZERO_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How an element is tested: by its bits, so that every type needs one
 * of five tests (float16 and bfloat16 alike: all bits but the sign). */
typedef enum nonzero_kind {
    NONZERO_F32 = 0,  /* a float: != 0 (-0 is zero, NaN is not) */
    NONZERO_F16 = 1,  /* float16, bfloat16: bits other than the sign */
    NONZERO_B8 = 2,   /* int8, uint8, bool: any bit */
    NONZERO_I32 = 3,
    NONZERO_I64 = 4
} nonzero_kind_t;

/* Whether element i of x (of kind k) is non-zero. */
MICA_KIT_HD int nonzero_at(const void *x, int32_t k, int64_t i)
{
    switch (k) {
    case NONZERO_F32: return ((const float *)x)[i] != 0.0f;
    case NONZERO_F16: return (((const uint16_t *)x)[i] & 0x7fffu) != 0;
    case NONZERO_B8: return ((const uint8_t *)x)[i] != 0;
    case NONZERO_I32: return ((const int32_t *)x)[i] != 0;
    default: return ((const int64_t *)x)[i] != 0;
    }
}

/* The dimensions of the input, by value for the kernel. */
typedef struct nonzero_dims {
    int32_t rank;
    int32_t reserved_;
    int64_t d[MICA_MAX_DIMS];
} nonzero_dims_t;

/*
 * Write the coordinates of the n non-zero elements of x (kind k, shape
 * dims) into idx, [rank, count] row-major (count, the number of
 * non-zeros, known only at the end: the kernel counts first), and count
 * into *count, all on the device, on `stream`.
 */
mica_status_t mica__nonzero_cuda(const void *x, int32_t k, int64_t n,
                                 const nonzero_dims_t *dims, int32_t *idx,
                                 int32_t *count, void *stream,
                                 mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
