/*
 * modules/topk/topk.h - the TopK layer: its limits and the CUDA
 * launcher.
 *
 * The input is seen as [outer, len, inner] with the selection along len;
 * the outputs are [outer, k, inner]: values (x's type) and indices
 * (int32, positions along the axis).  Order: for `max` the largest first,
 * for `min` the smallest first; NaN counts as larger than every number
 * (first for max, last for min); -0 and +0 are equal; equal values come
 * in the order of their indices (lower first).
 */
#ifndef MICA_MOD_TOPK_H
#define MICA_MOD_TOPK_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TensorRT's limit on k. */
#define MICA_TOPK_MAX_K 3840

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * TopK on the device: x of `dtype` (float32, float16, int32) as [outer,
 * len, inner], 1 <= k <= min(len, MICA_TOPK_MAX_K), len < 2^31, every
 * size > 0; values and indices as [outer, k, inner].  `is_max` 1 for
 * max, 0 for min.
 */
mica_status_t mica__topk_cuda(mica_dtype_t dtype, int is_max, int64_t outer,
                              int64_t len, int64_t inner, int32_t k,
                              const void *x, void *values, int32_t *indices,
                              void *stream, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_TOPK_H */
