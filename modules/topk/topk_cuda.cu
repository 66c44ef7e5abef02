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
 * apart.  Kernels:
 *   topk_small   len <= 64: one thread per row, k rounds of "the largest
 *                key below the last one" over the row (k * len reads,
 *                cached).
 *   topk_argmax  k == 1, len <= 1024: one warp per row, a max-reduction
 *                of the keys.
 *   topk_max1    k == 1, longer rows: one block of 512 threads per row,
 *                16-byte loads (4 in flight a thread) where the row is
 *                contiguous and aligned.
 *   topk_select  otherwise: one block of 512 threads per row, a radix
 *                select on the 32-bit value keys (11-bit digits,
 *                shared-memory histograms); usually one histogram pass
 *                and one gathering pass over the row, the candidates
 *                (at most 4096, in shared memory) narrowed to the k
 *                largest by more digit passes there, then bitonic-sorted
 *                (k <= 3840 rounds up to 4096 entries, 32 KiB).
 * Sizes and offsets are 64-bit; rows are walked with grid-stride loops.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "topk.h"

namespace {

enum { BLOCK = 256, WARP = 32, SMALL_LEN = 64 };

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

/* k == 1 over short rows: one warp per row. */
template <typename T>
__global__ void __launch_bounds__(BLOCK)
    topk_argmax(const T *x, T *vals, int32_t *idx, int64_t rows, int64_t len,
                int64_t inner, bool is_max)
{
    const int t = threadIdx.x % WARP;
    const int64_t per_block = BLOCK / WARP;

    /* r is the same for the whole warp. */
    for (int64_t r = blockIdx.x * per_block + threadIdx.x / WARP;
         r < rows; r += (int64_t)gridDim.x * per_block) {
        int64_t ib, ob;
        row_bases(r, len, inner, 1, &ib, &ob);
        const T *row = x + ib;
        uint64_t best = 0;
        for (int64_t j = t; j < len; j += WARP) {
            uint64_t key = key_of(row, inner, j, is_max);
            best = key > best ? key : best;
        }
        best = warp_max64(best);
        if (t == 0) {
            int64_t j = key_index(best);
            vals[ob] = row[j * inner];
            idx[ob] = (int32_t)j;
        }
    }
}

/* VEC elements moved as one aligned access. */
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) vec_t {
    T v[VEC];
};

/* An element's 32-bit order key: larger is better. */
template <typename T>
__device__ __forceinline__ uint32_t okey(T v, bool is_max)
{
    uint32_t k = vkey(v);
    return is_max ? k : ~k;
}

/*
 * f(j, key) for every element j of a row (a block of NT threads, each
 * thread's j increasing).  VEC > 1: the row is contiguous, 16-byte
 * aligned and len % VEC == 0; each thread loads 4 vectors before using
 * them.  VEC == 1: elements `inner` apart, one load each.
 */
template <typename T, int VEC, int NT, typename F>
__device__ __forceinline__ void scan_row(const T *row, int64_t len,
                                         int64_t inner, bool is_max, F f)
{
    if constexpr (VEC > 1) {
        const int64_t nv = len / VEC;
        int64_t q = threadIdx.x;
        for (; q + 3 * NT < nv; q += 4 * NT) {
            vec_t<T, VEC> a[4];
#pragma unroll
            for (int u = 0; u < 4; u++)
                a[u] = *reinterpret_cast<const vec_t<T, VEC> *>(
                    row + (q + u * NT) * VEC);
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    f((q + u * NT) * VEC + e, okey(a[u].v[e], is_max));
        }
        for (; q < nv; q += NT) {
            vec_t<T, VEC> a = *reinterpret_cast<const vec_t<T, VEC> *>(
                row + q * VEC);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                f(q * VEC + e, okey(a.v[e], is_max));
        }
    } else {
        for (int64_t j = threadIdx.x; j < len; j += NT)
            f(j, okey(row[j * inner], is_max));
    }
}

/* k == 1 over long rows: a block of NT threads per row, the largest
 * (key, lowest index) of the row. */
template <typename T, int VEC, int NT>
__global__ void __launch_bounds__(NT)
    topk_max1(const T *x, T *vals, int32_t *idx, int64_t rows, int64_t len,
              int64_t inner, bool is_max)
{
    __shared__ uint64_t scratch[NT / WARP];
    const int lane = threadIdx.x % WARP;

    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t ib, ob;
        row_bases(r, len, inner, 1, &ib, &ob);
        const T *row = x + ib;
        uint64_t best = 0; /* below every key */
        scan_row<T, VEC, NT>(row, len, inner, is_max,
                             [&](int64_t j, uint32_t key) {
                                 uint64_t k64 = ((uint64_t)key << 32) |
                                                (uint32_t)~(uint32_t)j;
                                 best = k64 > best ? k64 : best;
                             });
        best = warp_max64(best);
        if (lane == 0)
            scratch[threadIdx.x / WARP] = best;
        __syncthreads();
        best = lane < NT / WARP ? scratch[lane] : 0;
        best = warp_max64(best);
        if (threadIdx.x == 0) {
            int64_t j = key_index(best);
            vals[ob] = row[j * inner];
            idx[ob] = (int32_t)j;
        }
        __syncthreads(); /* before the next row writes scratch */
    }
}

enum { MAX1_NT = 512, SEL_NT = 512, SEL_BINS = 2048, SEL_CAP = 4096 };

/*
 * The bin of the need-th largest key counted from the top of hist (need
 * >= 1, at most the sum of hist): its index, the count of the bins above
 * it and its own count, into *bin, *above, *count (shared).  Each of the
 * SEL_NT threads owns SEL_BINS / SEL_NT consecutive bins; suffix sums
 * over threads by warp shuffles, then over warps through `wsum`.
 */
__device__ __forceinline__ void find_bin(const uint32_t *hist, uint32_t need,
                                         uint32_t *wsum, uint32_t *bin,
                                         uint32_t *above, uint32_t *count)
{
    constexpr int PER = SEL_BINS / SEL_NT, NW = SEL_NT / WARP;
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    const int b0 = threadIdx.x * PER;
    uint32_t mine = 0, incl, higher = 0;

#pragma unroll
    for (int i = 0; i < PER; i++)
        mine += hist[b0 + i];
    incl = mine; /* inclusive suffix sum over the warp's lanes */
#pragma unroll
    for (int o = 1; o < WARP; o *= 2) {
        uint32_t v = __shfl_down_sync(0xffffffffu, incl, o);
        if (lane + o < WARP)
            incl += v;
    }
    if (lane == 0)
        wsum[w] = incl;
    __syncthreads();
    for (int i = w + 1; i < NW; i++)
        higher += wsum[i];
    higher += incl - mine; /* every bin above this thread's */
#pragma unroll
    for (int i = PER - 1; i >= 0; i--) {
        uint32_t h = hist[b0 + i];
        if (higher < need && higher + h >= need) {
            *bin = (uint32_t)(b0 + i);
            *above = higher;
            *count = h;
        }
        higher += h;
    }
}

/*
 * Of the n distinct 64-bit keys sel[0..n) (k < n <= SEL_CAP), keep the
 * k largest in sel[0..k) (in any order) and return k: a radix select in
 * shared memory, 11 bits a pass from the top, until the keys at or above
 * the found prefix are exactly k (at the latest when all 64 bits are
 * known: the keys are distinct); then each thread takes its keys into
 * registers and, after a barrier, writes back those it keeps.  Every
 * thread of the block calls it; it ends with a barrier.
 */
__device__ __forceinline__ int keep_top(uint64_t *sel, int n, int k,
                                        uint32_t *hist, uint32_t *wsum,
                                        uint32_t *f_bin, uint32_t *f_above,
                                        uint32_t *f_count, int32_t *nsel)
{
    constexpr int PER = SEL_CAP / SEL_NT;
    uint64_t prefix = 0, mine[PER];
    uint32_t above = 0;
    int known = 0;

    while (known < 64) {
        const int bits = 64 - known < 11 ? 64 - known : 11;
        const int shift = 64 - known - bits;
        const uint32_t digit = (1u << bits) - 1;
        for (int b = threadIdx.x; b < SEL_BINS; b += SEL_NT)
            hist[b] = 0;
        __syncthreads();
        for (int p = threadIdx.x; p < n; p += SEL_NT) {
            uint64_t key = sel[p];
            if (known == 0 || (key >> (64 - known)) == prefix)
                atomicAdd(&hist[(uint32_t)(key >> shift) & digit], 1u);
        }
        __syncthreads();
        find_bin(hist, (uint32_t)k - above, wsum, f_bin, f_above, f_count);
        __syncthreads();
        prefix = (prefix << bits) | *f_bin;
        known += bits;
        above += *f_above;
        if (above + *f_count == (uint32_t)k)
            break;
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int p = threadIdx.x + i * SEL_NT;
        mine[i] = p < n ? sel[p] : 0;
    }
    if (threadIdx.x == 0)
        *nsel = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int p = threadIdx.x + i * SEL_NT;
        if (p < n && (known == 64 ? mine[i] >= prefix
                                  : (mine[i] >> (64 - known)) >= prefix)) {
            int32_t at = atomicAdd(nsel, 1);
            if (at < k)
                sel[at] = mine[i];
        }
    }
    __syncthreads();
    return k;
}

/*
 * Radix select on the 32-bit keys, one block of SEL_NT threads per row:
 * a pass histograms the next digit (11, 11, then 10 bits) of the keys
 * that match the digits found so far, and finds the digit of the k-th
 * largest key.  As soon as the keys at or above the found prefix number
 * at most SEL_CAP (usually after the first pass), a second read of the
 * row gathers them into shared memory as 64-bit keys (key, ~index);
 * otherwise, after the third pass, the k-th key T is known exactly and
 * the row is read once more in index order: every key above T and the
 * first k - above keys equal to T (lowest indices).  Of more than k
 * gathered keys, keep_top keeps the k largest; the k are then
 * bitonic-sorted (decreasing) and written.
 */
template <typename T, int VEC>
__global__ void __launch_bounds__(SEL_NT)
    topk_select(const T *x, T *vals, int32_t *idx, int64_t rows, int64_t len,
                int64_t inner, int32_t k, bool is_max)
{
    __shared__ uint32_t hist[SEL_BINS];
    __shared__ uint64_t sel[SEL_CAP];
    __shared__ uint32_t wsum[SEL_NT / WARP];
    __shared__ uint32_t f_bin, f_above, f_count;
    __shared__ int32_t nsel;
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;

    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t ib, ob;
        row_bases(r, len, inner, k, &ib, &ob);
        const T *row = x + ib;
        uint32_t prefix = 0, above = 0, count = 0;
        int known = 0, n = 0;

        if (threadIdx.x == 0)
            nsel = 0;
        for (int pass = 0; pass < 3 && n == 0; pass++) {
            const int bits = pass < 2 ? 11 : 10;
            const int shift = 32 - known - bits;
            const uint32_t digit = (1u << bits) - 1;
            for (int b = threadIdx.x; b < SEL_BINS; b += SEL_NT)
                hist[b] = 0;
            __syncthreads();
            scan_row<T, VEC, SEL_NT>(
                row, len, inner, is_max, [&](int64_t, uint32_t key) {
                    if (known == 0 || (key >> (32 - known)) == prefix)
                        atomicAdd(&hist[(key >> shift) & digit], 1u);
                });
            __syncthreads();
            find_bin(hist, (uint32_t)k - above, wsum, &f_bin, &f_above,
                     &f_count);
            __syncthreads();
            prefix = (prefix << bits) | f_bin;
            known += bits;
            above += f_above;
            count = f_count;
            if (above + count <= SEL_CAP) { /* gather every key >= prefix */
                const int keep = 32 - known;
                scan_row<T, VEC, SEL_NT>(
                    row, len, inner, is_max, [&](int64_t j, uint32_t key) {
                        if ((key >> keep) >= prefix) {
                            int32_t at = atomicAdd(&nsel, 1);
                            if (at < SEL_CAP)
                                sel[at] = ((uint64_t)key << 32) |
                                          (uint32_t)~(uint32_t)j;
                        }
                    });
                n = (int)(above + count);
            }
        }
        if (n == 0) {
            /* prefix is the k-th key T; above < k keys beat it and too
             * many equal it: take those of the lowest indices. */
            const uint32_t need = (uint32_t)k - above;
            uint32_t eq_before = 0;
            for (int64_t base = 0; base < len; base += SEL_NT) {
                int64_t j = base + threadIdx.x;
                uint32_t key = j < len ? okey(row[j * inner], is_max) : 0;
                bool gt = j < len && key > prefix;
                bool eq = j < len && key == prefix;
                unsigned bal = __ballot_sync(0xffffffffu, eq);
                uint32_t rank = eq_before +
                                __popc(bal & ((1u << lane) - 1u)), total = 0;
                if (lane == 0)
                    wsum[w] = __popc(bal);
                __syncthreads();
                for (int i = 0; i < SEL_NT / WARP; i++) {
                    rank += i < w ? wsum[i] : 0;
                    total += wsum[i];
                }
                if (gt || (eq && rank < need)) {
                    int32_t at = atomicAdd(&nsel, 1);
                    if (at < SEL_CAP)
                        sel[at] = ((uint64_t)key << 32) |
                                  (uint32_t)~(uint32_t)j;
                }
                eq_before += total;
                __syncthreads(); /* before wsum is written again */
            }
            n = k;
        }
        if (n > k) {
            __syncthreads(); /* the gathered keys are all in sel */
            n = keep_top(sel, n, k, hist, wsum, &f_bin, &f_above, &f_count,
                         &nsel);
        }
        int32_t sort_n = 2;
        while (sort_n < n)
            sort_n *= 2;
        __syncthreads();
        for (int32_t p = n + threadIdx.x; p < sort_n; p += SEL_NT)
            sel[p] = 0; /* below every key */
        __syncthreads();
        /* Bitonic sort of sel[0..sort_n), decreasing: one thread per
         * compared pair. */
        for (int32_t size = 2; size <= sort_n; size *= 2)
            for (int32_t stride = size / 2; stride > 0; stride /= 2) {
                for (int32_t p = threadIdx.x; p < sort_n / 2; p += SEL_NT) {
                    int32_t i = ((p & ~(stride - 1)) << 1) |
                                (p & (stride - 1));
                    uint64_t a = sel[i], b = sel[i + stride];
                    bool down = (i & size) == 0;
                    if (down ? a < b : a > b) {
                        sel[i] = b;
                        sel[i + stride] = a;
                    }
                }
                __syncthreads();
            }
        for (int32_t p = threadIdx.x; p < k; p += SEL_NT) {
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

template <typename T, int VEC>
void launch_long(bool is_max, int64_t rows, int64_t len, int64_t inner,
                 int32_t k, const T *x, T *vals, int32_t *idx, cudaStream_t s)
{
    if (k == 1)
        topk_max1<T, VEC, MAX1_NT><<<grid_for(rows, 1), MAX1_NT, 0, s>>>(
            x, vals, idx, rows, len, inner, is_max);
    else
        topk_select<T, VEC><<<grid_for(rows, 1), SEL_NT, 0, s>>>(
            x, vals, idx, rows, len, inner, k, is_max);
}

template <typename T>
void launch(bool is_max, int64_t outer, int64_t len, int64_t inner,
            int32_t k, const void *xv, void *vv, int32_t *idx, cudaStream_t s)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    const T *x = (const T *)xv;
    T *vals = (T *)vv;
    int64_t rows = outer * inner;

    if (len <= SMALL_LEN)
        topk_small<T><<<grid_for(rows, BLOCK), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, k, is_max);
    else if (k == 1 && len <= 1024)
        topk_argmax<T><<<grid_for(rows, BLOCK / WARP), BLOCK, 0, s>>>(
            x, vals, idx, rows, len, inner, is_max);
    else if (inner == 1 && (uintptr_t)x % 16 == 0 && len % VEC == 0)
        launch_long<T, VEC>(is_max, rows, len, inner, k, x, vals, idx, s);
    else
        launch_long<T, 1>(is_max, rows, len, inner, k, x, vals, idx, s);
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
