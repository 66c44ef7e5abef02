/*
 * modules/topk/topk_cuda.cu - TopK on CUDA.
 *
 * Every element gets a 64-bit key: the high 32 bits order the values
 * (larger is better: the float's bits made monotone, NaN above +inf,
 * -0 as +0, all inverted for `min`), the low 32 bits are ~index, so that
 * equal values prefer the lower index.  Keys are distinct, and the
 * output is the k largest keys in decreasing order.
 *
 * A row is the `len` elements of one (outer, inner) column, `inner`
 * apart.  Three kernels:
 *   topk_small   len <= 64: one thread per row, k rounds of "the largest
 *                key below the last one" over the row (k * len reads,
 *                cached).
 *   topk_argmax  k == 1: one warp (len <= 1024) or one block per row, a
 *                max-reduction of the keys (warp shuffles, then shared
 *                memory).
 *   topk_radix   otherwise: one block per row.  Radix select: 8 passes of
 *                8 bits over the keys, each a 256-bin histogram of the keys
 *                matching the prefix found so far, find the k-th largest
 *                key T; the keys >= T (exactly k) are gathered into shared
 *                memory, bitonic-sorted (k <= 3840 rounds up to 4096
 *                entries, 32 KiB) and written.
 * Sizes and offsets are 64-bit; rows are walked with grid-stride loops.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "topk.h"

namespace {

enum { BLOCK = 256, WARP = 32, SORT_MAX = 4096, SMALL_LEN = 64 };

__device__ __forceinline__ uint32_t vkey(float v)
{
    if (v != v)
        return 0xffffffffu; /* NaN: above everything */
    if (v == 0.0f)
        v = 0.0f; /* -0 is +0 */
    uint32_t u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ uint32_t vkey(uint16_t h)
{
    return vkey(__half2float(__ushort_as_half(h)));
}
__device__ __forceinline__ uint32_t vkey(int32_t v)
{
    return (uint32_t)v ^ 0x80000000u;
}

/* The key of element j of a row. */
template <typename T>
__device__ __forceinline__ uint64_t key_of(const T *row, int64_t inner,
                                           int64_t j, bool is_max)
{
    uint32_t k = vkey(row[j * inner]);
    if (!is_max)
        k = ~k;
    return ((uint64_t)k << 32) | (uint32_t)~(uint32_t)j;
}

__device__ __forceinline__ int64_t key_index(uint64_t key)
{
    return (int64_t)(uint32_t)~(uint32_t)key;
}

/* Row r: where its elements and its outputs start. */
__device__ __forceinline__ void row_bases(int64_t r, int64_t len,
                                          int64_t inner, int32_t k,
                                          int64_t *in_base,
                                          int64_t *out_base)
{
    int64_t o = r / inner, i = r % inner;
    *in_base = o * len * inner + i;
    *out_base = o * (int64_t)k * inner + i;
}

template <typename T>
__global__ void topk_small(const T *x, T *vals, int32_t *idx, int64_t rows,
                           int64_t len, int64_t inner, int32_t k,
                           bool is_max)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
         r < rows; r += (int64_t)gridDim.x * blockDim.x) {
        int64_t ib, ob;
        row_bases(r, len, inner, k, &ib, &ob);
        const T *row = x + ib;
        uint64_t last = ~(uint64_t)0;
        for (int32_t p = 0; p < k; p++) {
            uint64_t best = 0;
            for (int64_t j = 0; j < len; j++) {
                uint64_t key = key_of(row, inner, j, is_max);
                if (key < last && key > best)
                    best = key;
            }
            int64_t j = key_index(best);
            vals[ob + p * inner] = row[j * inner];
            idx[ob + p * inner] = (int32_t)j;
            last = best;
        }
    }
}

__device__ __forceinline__ uint64_t warp_max64(uint64_t v)
{
#pragma unroll
    for (int o = WARP / 2; o > 0; o /= 2) {
        uint64_t w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return v;
}

/* k == 1.  PER_ROW threads (WARP or BLOCK) per row. */
template <typename T, int PER_ROW>
__global__ void __launch_bounds__(BLOCK)
    topk_argmax(const T *x, T *vals, int32_t *idx, int64_t rows, int64_t len,
                int64_t inner, bool is_max)
{
    __shared__ uint64_t scratch[BLOCK / WARP];
    const int t = threadIdx.x % PER_ROW, lane = threadIdx.x % WARP;
    const int64_t per_block = BLOCK / PER_ROW;

    for (int64_t r = blockIdx.x * per_block + threadIdx.x / PER_ROW;
         r < rows; r += (int64_t)gridDim.x * per_block) {
        int64_t ib, ob;
        row_bases(r, len, inner, 1, &ib, &ob);
        const T *row = x + ib;
        uint64_t best = 0;
        for (int64_t j = t; j < len; j += PER_ROW) {
            uint64_t key = key_of(row, inner, j, is_max);
            best = key > best ? key : best;
        }
        best = warp_max64(best);
        if (PER_ROW > WARP) {
            if (lane == 0)
                scratch[threadIdx.x / WARP] = best;
            __syncthreads();
            best = lane < BLOCK / WARP ? scratch[lane] : 0;
            best = warp_max64(best);
            __syncthreads();
        }
        if (t == 0) {
            int64_t j = key_index(best);
            vals[ob] = row[j * inner];
            idx[ob] = (int32_t)j;
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(BLOCK)
    topk_radix(const T *x, T *vals, int32_t *idx, int64_t rows, int64_t len,
               int64_t inner, int32_t k, int32_t sort_n, bool is_max)
{
    __shared__ uint32_t hist[256];
    __shared__ uint64_t sel[SORT_MAX];
    __shared__ uint64_t prefix_s;
    __shared__ int32_t remaining_s, nsel;

    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t ib, ob;
        row_bases(r, len, inner, k, &ib, &ob);
        const T *row = x + ib;
        uint64_t prefix = 0, mask = 0;

        if (threadIdx.x == 0) {
            remaining_s = k;
            nsel = 0;
        }
        for (int shift = 56; shift >= 0; shift -= 8) {
            for (int b = threadIdx.x; b < 256; b += BLOCK)
                hist[b] = 0;
            __syncthreads();
            for (int64_t j = threadIdx.x; j < len; j += BLOCK) {
                uint64_t key = key_of(row, inner, j, is_max);
                if ((key & mask) == prefix)
                    atomicAdd(&hist[(key >> shift) & 0xff], 1u);
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                /* The bin holding the remaining-th largest key: the
                 * keys of higher bins are all taken. */
                int32_t rem = remaining_s, b = 255;
                uint32_t above = 0;
                while (b > 0 && above + hist[b] < (uint32_t)rem)
                    above += hist[b--];
                remaining_s = rem - (int32_t)above;
                prefix_s = prefix | ((uint64_t)b << shift);
            }
            __syncthreads();
            prefix = prefix_s;
            mask |= (uint64_t)0xff << shift;
        }
        /* prefix is now the k-th largest key: exactly k keys are >= it. */
        for (int64_t j = threadIdx.x; j < len; j += BLOCK) {
            uint64_t key = key_of(row, inner, j, is_max);
            if (key >= prefix) {
                int32_t at = atomicAdd(&nsel, 1);
                if (at < SORT_MAX)
                    sel[at] = key;
            }
        }
        for (int32_t p = k + threadIdx.x; p < sort_n; p += BLOCK)
            sel[p] = 0; /* below every key */
        __syncthreads();
        /* Bitonic sort of sel[0..sort_n), decreasing. */
        for (int32_t size = 2; size <= sort_n; size *= 2)
            for (int32_t stride = size / 2; stride > 0; stride /= 2) {
                for (int32_t i = threadIdx.x; i < sort_n; i += BLOCK) {
                    int32_t pi = i ^ stride;
                    if (pi > i) {
                        uint64_t a = sel[i], b = sel[pi];
                        bool down = (i & size) == 0;
                        if (down ? a < b : a > b) {
                            sel[i] = b;
                            sel[pi] = a;
                        }
                    }
                }
                __syncthreads();
            }
        for (int32_t p = threadIdx.x; p < k; p += BLOCK) {
            int64_t j = key_index(sel[p]);
            vals[ob + p * inner] = row[j * inner];
            idx[ob + p * inner] = (int32_t)j;
        }
        __syncthreads(); /* before the next row reuses the shared state */
    }
}

unsigned grid_for(int64_t rows, int64_t per_block)
{
    int64_t b = (rows + per_block - 1) / per_block;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

template <typename T>
void launch(bool is_max, int64_t outer, int64_t len, int64_t inner,
            int32_t k, const void *xv, void *vv, int32_t *idx, cudaStream_t s)
{
    const T *x = (const T *)xv;
    T *vals = (T *)vv;
    int64_t rows = outer * inner;
    int32_t sort_n = 1;

    if (len <= SMALL_LEN) {
        topk_small<T><<<grid_for(rows, BLOCK), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, k, is_max);
    } else if (k == 1 && len <= 1024) {
        topk_argmax<T, WARP><<<grid_for(rows, BLOCK / WARP), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, is_max);
    } else if (k == 1) {
        topk_argmax<T, BLOCK><<<grid_for(rows, 1), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, is_max);
    } else {
        while (sort_n < k)
            sort_n *= 2;
        topk_radix<T><<<grid_for(rows, 1), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, k, sort_n, is_max);
    }
}

} // namespace

extern "C" mica_status_t mica__topk_cuda(mica_dtype_t dtype, int is_max,
                                         int64_t outer, int64_t len,
                                         int64_t inner, int32_t k,
                                         const void *x, void *values,
                                         int32_t *indices, void *stream,
                                         mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (outer <= 0 || inner <= 0 || len <= 0 || k <= 0)
        return MICA_OK; /* never a zero-block grid */
    if (k > len || k > MICA_TOPK_MAX_K || len > INT32_MAX)
        return MICA_KIT_FAIL(err, "TopK on CUDA: k %d does not fit a row "
                             "of %lld", (int)k, (long long)len);
    switch (dtype) {
    case MICA_FLOAT32:
        launch<float>(is_max != 0, outer, len, inner, k, x, values, indices,
                      s);
        break;
    case MICA_FLOAT16:
        launch<uint16_t>(is_max != 0, outer, len, inner, k, x, values,
                         indices, s);
        break;
    case MICA_INT32:
        launch<int32_t>(is_max != 0, outer, len, inner, k, x, values, indices,
                        s);
        break;
    default:
        return MICA_KIT_FAIL(err, "TopK on CUDA takes float32, float16 or "
                             "int32, got %s",
                             mica_kit_host->dtype_name(dtype));
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
