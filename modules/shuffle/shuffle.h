/*
 * modules/shuffle/shuffle.h - the CUDA launchers of the Shuffle module.
 */
#ifndef MICA_MOD_SHUFFLE_H
#define MICA_MOD_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * dst = src transposed: src has `rank` (<= MICA_MAX_DIMS) dims `dims`,
 * row-major; dst has dims dims[perm[0]], ..., dims[perm[rank-1]], and
 * dst[c_0, ..., c_{rank-1}] = src at the coordinates where coordinate
 * perm[i] is c_i.  Elements are `esize` bytes (1, 2, 4 or 8).
 */
mica_status_t mica__shuffle_cuda_transpose(const void *src, int32_t rank,
                                           const int64_t *dims,
                                           const int64_t *perm, void *dst,
                                           size_t esize, void *stream,
                                           mica_error_t *err);
/* Queue a device-to-device copy of `bytes`. */
mica_status_t mica__shuffle_cuda_copy(void *dst, const void *src,
                                      size_t bytes, void *stream,
                                      mica_error_t *err);

#ifndef __CUDACC__
/* The CPU's transpose of implementation vec (shuffle_vec.c): dst =
 * src of dims[rank] with output axis k being input axis perm[k]. */
void mica__shuffle_transpose_vec(const void *src, int32_t rank,
                                 const int64_t *dims, const int64_t *perm,
                                 void *dst, size_t esize);
#endif

#ifdef __cplusplus
}
#endif

#endif
