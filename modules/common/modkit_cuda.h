/*
 * modules/common/modkit_cuda.h - what the modules' CUDA implementations
 * share that needs no kernel: device copies and the read-back of a scalar
 * through a pinned host buffer (a TripLimit's count or predicate, a
 * Condition).  Built only with CUDA (libmicamodkit_cuda.la); a module
 * that uses it links it and the CUDA runtime.
 */
#ifndef MICA_MODKIT_CUDA_H
#define MICA_MODKIT_CUDA_H

#include <stddef.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `bytes` of device memory on `stream` (nothing when bytes is 0 or
 * dst == src). */
mica_status_t mica__mod_cuda_copy(void *dst, const void *src, size_t bytes,
                                  void *stream, mica_error_t *err);

/* Allocate an 8-byte pinned host buffer into *pinned. */
mica_status_t mica__mod_cuda_host_alloc(void **pinned, mica_error_t *err);

/* Free a buffer of mica__mod_cuda_host_alloc (NULL: nothing). */
void mica__mod_cuda_host_free(void *pinned);

/*
 * Read `bytes` (at most 8) of device memory at `src` into the pinned host
 * buffer *pinned (allocated here if NULL) and wait for `stream`: the bytes
 * are in *pinned on return.
 */
mica_status_t mica__mod_cuda_fetch(void **pinned, const void *src,
                                   size_t bytes, void *stream,
                                   mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
