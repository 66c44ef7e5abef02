/*
 * modules/identity/identity_vec.c - Identity's fast paths on the CPU
 * (implementation "vec"): reorders between linear and channels last as
 * tiled transposes on several threads, and float32 <-> float16 casts as
 * vector conversions (F16C where the CPU has it), on several threads
 * for large tensors.  Both give exactly the reference's bytes (a reorder
 * moves elements; the casts round to nearest even as
 * mica_kit_float_to_half does).  Every other case is the reference's
 * (the caller's fallback).
 */
#include <config.h>

#include <string.h>

#include "identity.h"
#include "kit_vec.h"

/* Rows and columns of a tile: 32 x 32 elements of 4 bytes fit the L1
 * cache twice. */
#define TILE 32

/* One transpose job: nb matrices of `rows` x `cols` elements of es
 * bytes, dst[b][c][r] = src[b][r][c]. */
typedef struct tjob {
    const unsigned char *src;
    unsigned char *dst;
    int64_t rows, cols, blocks_per_matrix;
    size_t es;
} tjob_t;

#define TRANSPOSE_TILE(T)                                                   \
    do {                                                                    \
        const T *s_ = (const T *)(const void *)s;                           \
        T *d_ = (T *)(void *)d;                                             \
        for (c0 = 0; c0 < j->cols; c0 += TILE) {                            \
            int64_t c1 = c0 + TILE < j->cols ? c0 + TILE : j->cols, r, c;   \
            for (r = r0; r < r1; r++)                                       \
                for (c = c0; c < c1; c++)                                   \
                    d_[c * j->rows + r] = s_[r * j->cols + c];              \
        }                                                                   \
    } while (0)

static void transpose_range(void *data, int64_t begin, int64_t end)
{
    const tjob_t *j = data;
    int64_t it;

    for (it = begin; it < end; it++) {
        int64_t b = it / j->blocks_per_matrix;
        int64_t r0 = (it % j->blocks_per_matrix) * TILE, c0;
        int64_t r1 = r0 + TILE < j->rows ? r0 + TILE : j->rows;
        size_t m = (size_t)(j->rows * j->cols) * j->es;
        const unsigned char *s = j->src + (size_t)b * m;
        unsigned char *d = j->dst + (size_t)b * m;
        switch (j->es) {
        case 4: TRANSPOSE_TILE(uint32_t); break;
        case 2: TRANSPOSE_TILE(uint16_t); break;
        case 8: TRANSPOSE_TILE(uint64_t); break;
        default: TRANSPOSE_TILE(uint8_t); break;
        }
    }
}

/* A reorder between linear and channels last as nb transposes. */
static int reorder(const mica_tensor_desc_t *in,
                   const mica_tensor_desc_t *out, const void *x, void *y)
{
    int32_t r = in->dims.nb_dims, k;
    int64_t n, c, sp = 1, items, grain;
    tjob_t j;

    if (r < 4 || in->dtype != out->dtype ||
        (in->format != MICA_FORMAT_LINEAR &&
         in->format != mica_kit_channels_last(r)) ||
        (out->format != MICA_FORMAT_LINEAR &&
         out->format != mica_kit_channels_last(r)))
        return 0;
    n = in->dims.d[0];
    c = in->dims.d[1];
    for (k = 2; k < r; k++)
        sp *= in->dims.d[k];
    if (n * c * sp == 0)
        return 1;
    j.src = x;
    j.dst = y;
    j.es = mica_dtype_size(in->dtype);
    /* linear [n][c][sp] -> [n][sp][c]; channels last the other way */
    j.rows = in->format == MICA_FORMAT_LINEAR ? c : sp;
    j.cols = in->format == MICA_FORMAT_LINEAR ? sp : c;
    j.blocks_per_matrix = (j.rows + TILE - 1) / TILE;
    items = n * j.blocks_per_matrix;
    grain = MICA__CPU_GRAIN / (TILE * j.cols) + 1;
    mica__cpu_for(items, grain, transpose_range, &j);
    return 1;
}

typedef struct cjob {
    const unsigned char *x;
    unsigned char *y;
    mica_dtype_t tx, ty;
} cjob_t;

static void cast_range(void *data, int64_t begin, int64_t end)
{
    const cjob_t *j = data;
    float buf[MICA__VEC_BLOCK];
    size_t sx = mica_dtype_size(j->tx), sy = mica_dtype_size(j->ty);
    int64_t i, m;

    for (i = begin; i < end; i += m) {
        m = end - i < MICA__VEC_BLOCK ? end - i : MICA__VEC_BLOCK;
        if (j->tx == MICA_FLOAT32) {
            mica__vec_from_f32(j->y + (size_t)i * sy, j->ty,
                               (const float *)(const void *)j->x + i, m);
        } else if (j->ty == MICA_FLOAT32) {
            mica__vec_to_f32((float *)(void *)j->y + i, j->tx,
                             j->x + (size_t)i * sx, m);
        } else {
            mica__vec_to_f32(buf, j->tx, j->x + (size_t)i * sx, m);
            mica__vec_from_f32(j->y + (size_t)i * sy, j->ty, buf, m);
        }
    }
}

int mica__identity_vec(const mica_tensor_desc_t *in,
                       const mica_tensor_desc_t *out, const void *x, void *y)
{
    int64_t n = mica_dims_volume(&out->dims);
    cjob_t j;

    if (in->format != out->format)
        return reorder(in, out, x, y);
    if (!((in->dtype == MICA_FLOAT32 && out->dtype == MICA_FLOAT16) ||
          (in->dtype == MICA_FLOAT16 && out->dtype == MICA_FLOAT32)))
        return 0;
    j.x = x;
    j.y = y;
    j.tx = in->dtype;
    j.ty = out->dtype;
    mica__cpu_for(n, MICA__CPU_GRAIN, cast_range, &j);
    return 1;
}
