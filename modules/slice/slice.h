/*
 * modules/slice/slice.h - the Slice family: its sample modes, the index
 * mapping shared by the CPU reference and the CUDA kernel, and the CUDA
 * launchers' prototypes.
 *
 * C-compatible.  Under nvcc the mapping is a host and device function, so
 * both implementations read exactly the same elements.
 */
#ifndef MICA_MOD_SLICE_H
#define MICA_MOD_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The modes, in the order of the `mode` field's enum values (TensorRT's
 * SampleMode: kSTRICT_BOUNDS, kWRAP, kCLAMP, kFILL, kREFLECT). */
enum {
    MICA__SLICE_DEFAULT = 0,
    MICA__SLICE_WRAP,
    MICA__SLICE_CLAMP,
    MICA__SLICE_FILL,
    MICA__SLICE_REFLECT,
    MICA__SLICE_MODE_COUNT
};

/*
 * The input index that coordinate x (start + i * stride) reads along an
 * axis of length d, or -1 where the fill value is read instead.  The
 * caller has checked what each mode requires: default, x in [0, d);
 * wrap, clamp and reflect, d > 0.  Reflect mirrors about the centres of
 * the edge elements, repeated indefinitely; a length of 1 repeats it.
 */
MICA_KIT_HD int64_t mica__slice_map(int64_t x, int64_t d, int mode)
{
    int64_t m, p;
    switch (mode) {
    case MICA__SLICE_WRAP:
        m = x % d;
        return m < 0 ? m + d : m;
    case MICA__SLICE_CLAMP:
        return x < 0 ? 0 : x >= d ? d - 1 : x;
    case MICA__SLICE_REFLECT:
        if (d == 1)
            return 0;
        p = 2 * d - 2;
        m = x % p; /* |x| % p, without negating INT64_MIN */
        if (m < 0)
            m = -m;
        return m >= d ? p - m : m;
    default: /* default and fill */
        return x >= 0 && x < d ? x : -1;
    }
}

/*
 * What the kernel needs of one run: rank (<= MICA_MAX_DIMS), and per axis
 * the output length, the input length and element stride, start and
 * stride of the slice.  Passed by value.
 */
typedef struct mica__slice_view {
    int32_t rank;
    int32_t mode;
    int64_t out_dims[MICA_MAX_DIMS];
    int64_t in_dims[MICA_MAX_DIMS];
    int64_t in_strides[MICA_MAX_DIMS];
    int64_t start[MICA_MAX_DIMS];
    int64_t stride[MICA_MAX_DIMS];
} mica__slice_view_t;

/*
 * Queue the slice of `src` into `dst` (n output elements of `esize` bytes:
 * 1, 2 or 4).  Out-of-bounds reads in fill mode give *fill_dev (a device
 * pointer to one element) when fill_dev is not NULL, else the bytes of
 * fill_bits (the fill value already converted to the element type).
 */
mica_status_t mica__slice_cuda(const void *src, void *dst, int64_t n,
                               size_t esize, const mica__slice_view_t *v,
                               const void *fill_dev, uint32_t fill_bits,
                               void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
