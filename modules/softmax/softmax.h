/*
 * modules/softmax/softmax.h - the SoftMax family (SoftMax,
 * RaggedSoftMax): the launchers of the CUDA kernels.
 *
 * Both layers see their input as [outer, len, inner]: softmax runs along
 * the middle axis, `len` elements `inner` apart.  RaggedSoftMax always has
 * inner == 1 and a bound per row: elements at or past the row's bound
 * are 0 in the output.
 *
 * float32 and float16; float16 is computed in float (widened once,
 * rounded once).  Every row is
 *     y[j] = exp(x[j] - m) / sum_i exp(x[i] - m),   m = max_i x[i]
 * which cannot overflow whatever the magnitude of x.
 */
#ifndef MICA_MOD_SOFTMAX_H
#define MICA_MOD_SOFTMAX_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * SoftMax on the device over outer * len * inner > 0 elements of `dtype`
 * (float32, float16), along the middle axis, on `stream`.
 */
mica_status_t mica__softmax_cuda(mica_dtype_t dtype, int64_t outer,
                                 int64_t len, int64_t inner, const void *x,
                                 void *y, void *stream, mica_error_t *err);

/*
 * RaggedSoftMax on the device: rows rows of len > 0 elements; row r is a
 * softmax over its first clamp(bounds[r], 0, len) elements and 0 past
 * them.  bounds is int32 device memory, one per row.
 */
mica_status_t mica__ragged_softmax_cuda(mica_dtype_t dtype, int64_t rows,
                                        int64_t len, const void *x,
                                        const int32_t *bounds, void *y,
                                        void *stream, mica_error_t *err);
#endif

#ifndef __CUDACC__
/* The CPU's vector kernels (softmax_vec.c): the softmax of x [outer,
 * len, inner] along len into y; 0 (nothing done) where they do not
 * take it (another type). */
int mica__softmax_vec(mica_dtype_t t, int64_t outer, int64_t len,
                      int64_t inner, const void *x, void *y);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_SOFTMAX_H */
