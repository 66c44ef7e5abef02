/*
 * modules/identity/identity.h - the CUDA launcher of the Identity module.
 */
#ifndef MICA_MOD_IDENTITY_H
#define MICA_MOD_IDENTITY_H

#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Convert n elements from `src` (type sdt) to `dst` (type ddt) on
 * `stream`, with the conversion rules of identity.c. */
mica_status_t mica__identity_cuda_cast(const void *src, mica_dtype_t sdt,
                                       void *dst, mica_dtype_t ddt, int64_t n,
                                       void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
