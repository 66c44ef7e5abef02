/*
 * modules/conditional/conditional.h - the CUDA launchers of the
 * conditional module.
 */
#ifndef MICA_MOD_CONDITIONAL_H
#define MICA_MOD_CONDITIONAL_H

#include <stddef.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `bytes` of device memory from src to dst on `stream` (nothing when
 * bytes is 0 or dst == src). */
mica_status_t mica__cond_cuda_copy(void *dst, const void *src, size_t bytes,
                                   void *stream, mica_error_t *err);

/*
 * Read one byte of device memory at `src` into the pinned host buffer
 * *pinned (allocated here if NULL) and wait for `stream`: the byte is in
 * *pinned on return.
 */
mica_status_t mica__cond_cuda_fetch(void **pinned, const void *src,
                                    void *stream, mica_error_t *err);

/* Allocate the pinned host buffer of mica__cond_cuda_fetch. */
mica_status_t mica__cond_cuda_host_alloc(void **pinned, mica_error_t *err);

/* Free it (NULL: nothing). */
void mica__cond_cuda_host_free(void *pinned);

#ifdef __cplusplus
}
#endif

#endif
