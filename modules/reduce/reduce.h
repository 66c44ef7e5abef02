/*
 * modules/reduce/reduce.h - the CUDA launcher of the Reduce module.
 */
#ifndef MICA_MOD_REDUCE_H
#define MICA_MOD_REDUCE_H

#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operations, in the order of the `op` param's values. */
enum {
    MICA_REDUCE_SUM = 0,
    MICA_REDUCE_PROD = 1,
    MICA_REDUCE_MAX = 2,
    MICA_REDUCE_MIN = 3,
    MICA_REDUCE_AVG = 4
};

/*
 * Reduce `src` (row-major, `rank` dims `dims`, type `dtype`: float32,
 * float16, int32 or int8) over the axes whose bits are set in `mask`, into
 * `dst` (the kept axes in order), with the rules of reduce.c.
 */
mica_status_t mica__reduce_cuda(const void *src, void *dst,
                                mica_dtype_t dtype, int32_t op, int32_t rank,
                                const int64_t *dims, uint32_t mask,
                                void *stream, mica_error_t *err);

#ifndef __CUDACC__
/*
 * The CPU's fast path (reduce_vec.c): y = the reduction of x over the
 * axes of `mask`, float32 or float16 in any format each; *taken 0 (and
 * MICA_OK) for other types, which the caller gives to the reference.
 */
mica_status_t mica__reduce_vec(int32_t op, uint32_t mask, int keep_dims,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out, const void *x,
                               void *y, int *taken, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
