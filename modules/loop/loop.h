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

/*
 * Trips on the device (a loop in a CUDA graph): slice i = *iter (device
 * memory; len-1-i with `reverse`) of `outer` rows of `len` elements of
 * `row` bytes.  to_slice 0: dst (outer x row) = that slice of src (the
 * Iterator); 1: that slice of dst = src (the LoopOutput).  An i outside
 * [0, len) moves nothing.
 */
mica_status_t mica__loop_cuda_slice(void *dst, const void *src,
                                    int64_t outer, int64_t len, size_t row,
                                    const int64_t *iter, int reverse,
                                    int to_slice, void *stream,
                                    mica_error_t *err);

/*
 * A LoopOutput's exit with the trip count at *trips (device memory): in
 * each of `outer` rows of `len` elements of `inner` bytes at base, the
 * elements from min(*trips, len) on become zeros, and with `reverse`
 * those before are put in reverse order.
 */
mica_status_t mica__loop_cuda_exit(void *base, int64_t outer, int64_t len,
                                   size_t inner, const int64_t *trips,
                                   int reverse, void *stream,
                                   mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
