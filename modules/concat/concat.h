/*
 * modules/concat/concat.h - the CUDA launcher of the Concatenation module.
 */
#ifndef MICA_MOD_CONCAT_H
#define MICA_MOD_CONCAT_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Copy one input slab into the output: `outer` rows of `row` bytes from
 * `src` (contiguous) to `dst` + r * `out_row` (row r), on `stream`.  `dst`
 * already points at the input's offset inside the first output row.
 * Nothing is launched when outer or row is 0.
 */
mica_status_t mica__concat_cuda_copy(void *dst, const void *src,
                                     int64_t outer, int64_t row,
                                     int64_t out_row, void *stream,
                                     mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
