/*
 * modules/shape/shape.h - the CUDA launcher of the Shape module.
 */
#ifndef MICA_MOD_SHAPE_H
#define MICA_MOD_SHAPE_H

#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write the `rank` (1..MICA_MAX_DIMS) dimensions `dims` as int32 into the
 * device buffer `dst` on `stream`.  The dimensions travel by value in the
 * kernel's arguments, so nothing on the host needs to outlive the call.
 */
mica_status_t mica__shape_cuda(int32_t *dst, int32_t rank,
                               const int64_t *dims, void *stream,
                               mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
