/*
 * modules/gather/gather.h - the Gather family: its modes, the index
 * arithmetic shared by the CPU reference and the CUDA kernel, and the
 * CUDA launcher's prototype.
 *
 * C-compatible.  Under nvcc mica__gather_src is a host and device
 * function, so both implementations read exactly the same elements.
 */
#ifndef MICA_MOD_GATHER_H
#define MICA_MOD_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The modes, in the order of the `mode` field's enum values. */
enum {
    MICA__GATHER_DEFAULT = 0,
    MICA__GATHER_ND,
    MICA__GATHER_ELEMENT,
    MICA__GATHER_MODE_COUNT
};

/*
 * One run, in elements, passed by value.  With b the elementwise (batch)
 * coordinate when num_elementwise_dims is 1 (else 0):
 *   default  output [b, outer, nidx, inner] reads data
 *            b * data_b + (o * dA + k) * inner + i, k = indices[b * idx_b
 *            + j] (idx_b and data_b are 0 where that side broadcasts);
 *   element  output coordinates c (the indices' dims, `rank` of them, in
 *            odims) read data at c with c[axis] replaced by the index;
 *            dstrides and ddims are data's;
 *   nd       output [b, m, inner] (r = b * M + m) reads data b * data_b
 *            + sum over t < K of k_t * dstrides[t] + i with k_t =
 *            indices[r * K + t] checked against ddims[t].
 * An index below 0 counts from the end; one still outside gives zero.
 */
typedef struct mica__gather_view {
    int32_t mode;
    int32_t rank;
    int32_t axis;
    int32_t k;
    int64_t outer, nidx, inner, da, m;
    int64_t data_b, idx_b;
    int64_t odims[MICA_MAX_DIMS];
    int64_t ddims[MICA_MAX_DIMS];
    int64_t dstrides[MICA_MAX_DIMS];
} mica__gather_view_t;

/* k counted from the end when negative; -1 when outside [0, d). */
MICA_KIT_HD int64_t mica__gather_norm(int64_t k, int64_t d)
{
    if (k < 0)
        k += d;
    return k >= 0 && k < d ? k : -1;
}

/* The data element output element i reads, or -1 for a zero. */
MICA_KIT_HD int64_t mica__gather_src(const mica__gather_view_t *v,
                                         const int32_t *idx, int64_t i)
{
    int64_t rest, off, k, c, b;
    int32_t a;

    switch (v->mode) {
    case MICA__GATHER_ELEMENT:
        rest = i;
        off = 0;
        for (a = v->rank - 1; a >= 0; a--) {
            c = rest % v->odims[a];
            rest /= v->odims[a];
            if (a == v->axis) {
                k = mica__gather_norm(idx[i], v->ddims[a]);
                if (k < 0)
                    return -1;
                off += k * v->dstrides[a];
            } else {
                off += c * v->dstrides[a];
            }
        }
        return off;
    case MICA__GATHER_ND:
        rest = i / v->inner;
        b = rest / v->m;
        off = b * v->data_b + i % v->inner;
        for (a = 0; a < v->k; a++) {
            k = mica__gather_norm(idx[rest * v->k + a], v->ddims[a]);
            if (k < 0)
                return -1;
            off += k * v->dstrides[a];
        }
        return off;
    default:
        off = i % v->inner;
        rest = i / v->inner;
        c = rest % v->nidx; /* position in the indices */
        rest /= v->nidx;
        b = rest / v->outer;
        k = mica__gather_norm(idx[b * v->idx_b + c], v->da);
        if (k < 0)
            return -1;
        return b * v->data_b + ((rest % v->outer) * v->da + k) * v->inner +
               off;
    }
}

/*
 * Queue the gather of n output elements of `esize` bytes (1, 2, 4 or 8)
 * from data into dst, indices int32, all device pointers.
 */
mica_status_t mica__gather_cuda(const void *data, const int32_t *indices,
                                void *dst, int64_t n, size_t esize,
                                const mica__gather_view_t *v, void *stream,
                                mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
