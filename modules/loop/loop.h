/*
 * modules/loop/loop.h - the CUDA launchers of the loop module.
 */
#ifndef MICA_MOD_LOOP_H
#define MICA_MOD_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Copy `rows` rows of `width` bytes on `stream`, row r from
 * src + r * spitch to dst + r * dpitch (device memory, rows that do not
 * overlap).  Nothing to do when rows or width is 0.
 */
mica_status_t mica__loop_cuda_copy_rows(void *dst, size_t dpitch,
                                        const void *src, size_t spitch,
                                        size_t width, int64_t rows,
                                        void *stream, mica_error_t *err);

/*
 * Zero `rows` rows of `width` bytes on `stream`, row r at
 * dst + r * pitch (device memory).  Nothing to do when rows or width is 0.
 */
mica_status_t mica__loop_cuda_zero_rows(void *dst, size_t pitch, size_t width,
                                        int64_t rows, void *stream,
                                        mica_error_t *err);

/*
 * In each of `rows` rows of `pitch` bytes starting at `base` (device
 * memory), reverse the order of the first `count` elements of `inner`
 * bytes each, on `stream`.
 */
mica_status_t mica__loop_cuda_reverse(void *base, int64_t rows, size_t pitch,
                                      size_t inner, int64_t count,
                                      void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
