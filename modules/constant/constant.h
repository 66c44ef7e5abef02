/*
 * modules/constant/constant.h - the CUDA launchers of the Constant module.
 */
#ifndef MICA_MOD_CONSTANT_H
#define MICA_MOD_CONSTANT_H

#include <stddef.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocate `bytes` (at least one) of device memory into *dev and copy
 * `host` there (synchronously). */
mica_status_t mica__constant_cuda_upload(const void *host, size_t bytes,
                                         void **dev, mica_error_t *err);
/* Free what upload allocated (NULL: nothing). */
void mica__constant_cuda_free(void *dev);
/* Queue a device-to-device copy of `bytes` on `stream`. */
mica_status_t mica__constant_cuda_copy(void *dst, const void *src,
                                       size_t bytes, void *stream,
                                       mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
