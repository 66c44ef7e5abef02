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

#ifdef __cplusplus
}
#endif

#endif
