/*
 * modules/select/select.h - the CUDA launcher of the Select module.
 */
#ifndef MICA_MOD_SELECT_H
#define MICA_MOD_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * out[i] = cond[i] ? then[i] : else[i] over the output's `rank` dims
 * `dims` (volume n > 0), elements of `esize` bytes (1, 2, 4 or 8); the
 * inputs are read through element strides (0 along broadcast axes):
 * cstr for cond (bools, one byte each), tstr for then, estr for else.
 */
mica_status_t mica__select_cuda(void *dst, const void *cond,
                                const void *then_, const void *else_,
                                size_t esize, int32_t rank,
                                const int64_t *dims, const int64_t *cstr,
                                const int64_t *tstr, const int64_t *estr,
                                int64_t n, void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
