/*
 * modules/resize/resize.h - the Resize layer: the coordinate arithmetic
 * shared by the CPU reference and the CUDA kernels, and the launcher.
 *
 * The arithmetic is ONNX Resize's (opset 11 and later), in float32 as
 * ONNX Runtime computes it, with TensorRT's names: an output coordinate x
 * along a dimension of input length n_in and output length n_out maps to
 *
 *   half_pixel     (x + 0.5) / scale - 0.5
 *   asymmetric     x / scale
 *   align_corners  x * (n_in - 1) / (n_out - 1), 0 when n_out is 1
 *
 * where scale is n_out / n_in (or the `scales` value given), and to 0
 * when n_out is 1 under the upper_left selector (ONNX's
 * pytorch_half_pixel is half_pixel with it).  Nearest rounds that
 * coordinate (half_down: halves toward minus infinity, half_up: halves
 * away from zero, floor, ceil) and clamps it into the input; linear
 * clamps it into [0, n_in - 1] and weighs the two neighbours.
 */
#ifndef MICA_MOD_RESIZE_H
#define MICA_MOD_RESIZE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enum values of the fields, in their order. */
enum { MICA__RZ_NEAREST, MICA__RZ_LINEAR };
enum { MICA__RZ_ALIGN_CORNERS, MICA__RZ_ASYMMETRIC, MICA__RZ_HALF_PIXEL };
enum { MICA__RZ_HALF_DOWN, MICA__RZ_HALF_UP, MICA__RZ_FLOOR, MICA__RZ_CEIL };
enum { MICA__RZ_FORMULA, MICA__RZ_UPPER_LEFT };

/* Linear interpolates along at most this many (innermost) dimensions. */
#define MICA__RZ_LINEAR_DIMS 3

/*
 * One run: the settings, the input and output dimensions, the scale of
 * each dimension and whether it is resized at all (a dimension of equal
 * lengths and scale 1 maps every coordinate to itself).
 */
typedef struct mica__resize {
    int32_t rank, mode, coord, round, selector;
    int32_t resized[MICA_MAX_DIMS];
    int64_t in[MICA_MAX_DIMS], out[MICA_MAX_DIMS];
    float scale[MICA_MAX_DIMS];
} mica__resize_t;

/* The input coordinate of output coordinate x along dimension k. */
MICA_KIT_HD float mica__resize_coord(const mica__resize_t *r, int32_t k,
                                     int64_t x)
{
    if (r->selector == MICA__RZ_UPPER_LEFT && r->out[k] == 1)
        return 0.0f;
    if (r->coord == MICA__RZ_HALF_PIXEL)
        return ((float)x + 0.5f) / r->scale[k] - 0.5f;
    if (r->coord == MICA__RZ_ASYMMETRIC)
        return (float)x / r->scale[k];
    if (r->out[k] == 1)
        return 0.0f;
    return (float)x * (float)(r->in[k] - 1) / (float)(r->out[k] - 1);
}

/* The input index nearest to coordinate c along dimension k. */
MICA_KIT_HD int64_t mica__resize_nearest(const mica__resize_t *r, int32_t k,
                                         float c)
{
    float f = floorf(c), i;
    switch (r->round) {
    case MICA__RZ_HALF_DOWN: i = c == f + 0.5f ? f : roundf(c); break;
    case MICA__RZ_HALF_UP: i = roundf(c); break;
    case MICA__RZ_FLOOR: i = f; break;
    default: i = ceilf(c); break;
    }
    /* clamp before converting: c may be far outside the input */
    if (!(i > 0.0f))
        return 0;
    if (i >= (float)(r->in[k] - 1))
        return r->in[k] - 1;
    return (int64_t)i;
}

/*
 * The two neighbours of coordinate c along dimension k and their
 * weights: i0 <= i1, w0 for i0 and w1 for i1 (0.5 each on the edge,
 * where i0 == i1).
 */
MICA_KIT_HD void mica__resize_taps(const mica__resize_t *r, int32_t k,
                                   float c, int64_t *i0, int64_t *i1,
                                   float *w0, float *w1)
{
    const float top = (float)(r->in[k] - 1);
    c = c > top ? top : c;
    c = c > 0.0f ? c : 0.0f;
    *i0 = (int64_t)c;
    *i0 = *i0 < r->in[k] - 1 ? *i0 : r->in[k] - 1;
    *i1 = *i0 + 1 < r->in[k] - 1 ? *i0 + 1 : r->in[k] - 1;
    if (*i0 == *i1) {
        *w0 = 0.5f;
        *w1 = 0.5f;
    } else {
        *w0 = fabsf(c - (float)*i1);
        *w1 = fabsf(c - (float)*i0);
    }
}

#ifndef __CUDACC__
/* The CPU's fast path (resize_vec.c): run r from x into y, the input and
 * the output each linear or channels last. */
mica_status_t mica__resize_vec(const mica__resize_t *r,
                               const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out, const void *x,
                               void *y, mica_error_t *err);
#endif

/*
 * The output of run r (its volume n > 0) from x: elements of `esize`
 * bytes for nearest (1, 2 or 4: a data movement), float32 or float16
 * (dtype) for linear.
 */
mica_status_t mica__resize_cuda(const mica__resize_t *r, int64_t n,
                                mica_dtype_t dtype, const void *x, void *y,
                                void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
