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

/*
 * A Shuffle as one gather: the input of logical dims in_dims[r] lying at
 * element strides in_str (its format's), the first transpose p1 (NULL:
 * none), a reshape to mid[m], the second transpose p2 (NULL: none), an
 * output whose logical axis i lies at stride out_str[i].  Fills
 * g_dims[m], g_str[m] (in the output's memory order) for
 * mica__vec_gather (kit_vec.h) and returns 1, or returns 0 where the reshape
 * is not a view of the transposed input.
 */
int mica__shuffle_as_gather(int32_t r, const int64_t *in_dims,
                            const int64_t *in_str, const int64_t *p1,
                            int32_t m, const int64_t *mid,
                            const int64_t *p2, const int64_t *out_str,
                            int64_t *g_dims, int64_t *g_str);
#endif

#ifdef __cplusplus
}
#endif

#endif
