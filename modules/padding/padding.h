/*
 * modules/padding/padding.h - the CUDA launcher of the Padding module.
 */
#ifndef MICA_MOD_PADDING_H
#define MICA_MOD_PADDING_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The padded view of a tensor: `outer` matrices of h x w elements of
 * `esize` bytes (1, 2, 4 or 8) become matrices of oh x ow, element
 * (i, j) of the output taking element (i - top, j - left) of the input
 * where that lies inside it, else zero bits.  top and left are the
 * pre_padding values (negative: the input is cropped).
 */
typedef struct mica__pad {
    int64_t outer, h, w, oh, ow, top, left;
} mica__pad_t;

/* The output of `p` (outer * oh * ow elements, more than 0) on stream. */
mica_status_t mica__padding_cuda(const mica__pad_t *p, size_t esize,
                                 const void *in, void *out, void *stream,
                                 mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
