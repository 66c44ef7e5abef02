/*
 * modules/softmax/softmax_cuda.cu - SoftMax and RaggedSoftMax on CUDA.
 *
 * The input is [outer, len, inner] with the softmax along len.
 *
 * inner == 1 (the axis is the innermost, and every RaggedSoftMax):
 *   len <= 1024      softmax_group: a group of G lanes per row (G from 4
 *                    to 32, about 16 elements a lane: short rows need few
 *                    shuffles and a warp holds several); the row is read
 *                    once into registers, then max, sum and the output
 *                    come from registers: one read and one write.
 *   len <= 8192      softmax_block: one block of 256 threads per row, the
 *                    row in registers the same way; each thread takes
 *                    exp(x - its own max) and its sum at once, and the
 *                    block merges the (max, sum) pairs in one round (one
 *                    barrier per row).
 *   longer           softmax_online: one block per row; a pass keeps a
 *                    running (max, sum) per thread, merged across the
 *                    block, then a second pass writes: two reads, one
 *                    write.
 * The launch table's choices for rows of 128 and 4096 were measured on
 * an H100 (bench/README.md).
 * inner > 1 (a strided axis): len <= 32, softmax_strided, one thread per
 * column (outer, inner) with the column in registers, neighbouring
 * threads reading neighbouring addresses; longer, softmax_cols, a block
 * of 32 warps per tile of 32 adjacent columns, each warp reading whole
 * row segments of the tile (online max and sum, merged in shared memory,
 * then a second pass writes).
 *
 * VEC: 16-byte loads and stores (4 float32 or 8 float16) where the
 * pointers are 16-byte aligned and len is a multiple of VEC; else VEC 1.
 * Arithmetic in float (exponentials by __expf, ex2.approx); float16 is
 * widened on load and rounded on store.
 * Rows are walked with grid-stride loops (64-bit indices), so any number
 * of rows fits a grid of at most 65535 * 8 blocks.
 *
 * RaggedSoftMax passes `bounds` (NULL for SoftMax): a row uses its first
 * `active` elements and writes 0 past them.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "softmax.h"

namespace {

enum { BLOCK = 256, WARP = 32 };

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(uint16_t v)
{
    return __half2float(__ushort_as_half(v));
}
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ uint16_t from_f<uint16_t>(float v)
{
    return __half_as_ushort(__float2half_rn(v));
}

/* VEC elements moved as one aligned access. */
template <typename T, int VEC> struct alignas(sizeof(T) * VEC) vec_t {
    T v[VEC];
};

template <typename T, int VEC>
__device__ __forceinline__ void load_vec(const T *p, float *out)
{
    vec_t<T, VEC> c = *reinterpret_cast<const vec_t<T, VEC> *>(p);
#pragma unroll
    for (int k = 0; k < VEC; k++)
        out[k] = to_f(c.v[k]);
}

template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T *p, const float *in)
{
    vec_t<T, VEC> c;
#pragma unroll
    for (int k = 0; k < VEC; k++)
        c.v[k] = from_f<T>(in[k]);
    *reinterpret_cast<vec_t<T, VEC> *>(p) = c;
}

/* The elements of row `row` that take part. */
__device__ __forceinline__ int64_t active_len(const int32_t *bounds,
                                              int64_t row, int64_t len)
{
    if (!bounds)
        return len;
    int64_t b = bounds[row];
    return b < 0 ? 0 : b > len ? len : b;
}

/*
 * The row in registers: thread `t` of `nt` holds elements
 * (c * nt + t) * VEC + k of the row, c < CHUNKS, k < VEC.  Returns the
 * thread's maximum over the active elements; absent ones hold -inf.
 */
template <typename T, int VEC, int CHUNKS>
__device__ __forceinline__ float load_row(const T *xr, int64_t len,
                                          int64_t active, int t, int nt,
                                          float (&v)[CHUNKS][VEC])
{
    float m = -INFINITY;
#pragma unroll
    for (int c = 0; c < CHUNKS; c++) {
        int64_t base = ((int64_t)c * nt + t) * VEC;
        if (base < len) {
            load_vec<T, VEC>(xr + base, v[c]);
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++)
                v[c][k] = -INFINITY;
        }
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            if (base + k >= active)
                v[c][k] = -INFINITY;
            m = fmaxf(m, v[c][k]);
        }
    }
    return m;
}

/* No row: -inf everywhere (returned too). */
template <int VEC, int CHUNKS>
__device__ __forceinline__ float fill_row(float (&v)[CHUNKS][VEC])
{
#pragma unroll
    for (int c = 0; c < CHUNKS; c++)
#pragma unroll
        for (int k = 0; k < VEC; k++)
            v[c][k] = -INFINITY;
    return -INFINITY;
}

/* exp(v - m) in place for the active elements (0 for the others); the
 * thread's sum.  __expf: ex2.approx of (v - m) * log2(e), whose error
 * grows with |v - m| only where exp(v - m) is negligible beside the
 * row's largest terms. */
template <int VEC, int CHUNKS>
__device__ __forceinline__ float exp_row(float m, int64_t active, int t,
                                         int nt, float (&v)[CHUNKS][VEC])
{
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < CHUNKS; c++) {
        int64_t base = ((int64_t)c * nt + t) * VEC;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            v[c][k] = base + k < active ? __expf(v[c][k] - m) : 0.0f;
            s += v[c][k];
        }
    }
    return s;
}

template <typename T, int VEC, int CHUNKS>
__device__ __forceinline__ void store_row(T *yr, int64_t len, float inv,
                                          int t, int nt,
                                          float (&v)[CHUNKS][VEC])
{
#pragma unroll
    for (int c = 0; c < CHUNKS; c++) {
        int64_t base = ((int64_t)c * nt + t) * VEC;
        if (base < len) {
#pragma unroll
            for (int k = 0; k < VEC; k++)
                v[c][k] *= inv;
            store_vec<T, VEC>(yr + base, v[c]);
        }
    }
}

/* Max and sum over the G lanes of an aligned group (G divides WARP). */
template <int G> __device__ __forceinline__ float group_max(float v)
{
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <int G> __device__ __forceinline__ float group_sum(float v)
{
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/*
 * G lanes per row, len <= G * VEC * CHUNKS: a warp holds WARP / G rows
 * at a time, R times over (all their loads issued before the first
 * reduction), lane t of a group holding elements (c * G + t) * VEC + k.
 * Short rows get small groups: fewer shuffles per row and more rows in
 * flight per warp.
 */
template <typename T, int VEC, int CHUNKS, int G, int R>
__global__ void __launch_bounds__(BLOCK)
    softmax_group(const T *x, T *y, const int32_t *bounds, int64_t rows,
                  int64_t len)
{
    constexpr int GROUPS = WARP / G;
    constexpr int64_t PER_WARP = (int64_t)GROUPS * R;
    const int lane = threadIdx.x % WARP, t = lane % G, g = lane / G;
    const int64_t warps = (int64_t)gridDim.x * (BLOCK / WARP);
    float v[R][CHUNKS][VEC], m[R];
    int64_t active[R];

    /* row0 is the same for the whole warp: every lane takes part in
     * every shuffle. */
    for (int64_t row0 = ((int64_t)blockIdx.x * (BLOCK / WARP) +
                         threadIdx.x / WARP) * PER_WARP;
         row0 < rows; row0 += warps * PER_WARP) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + (int64_t)r * GROUPS + g;
            active[r] = row < rows ? active_len(bounds, row, len) : 0;
            m[r] = row < rows ? load_row<T, VEC, CHUNKS>(x + row * len, len,
                                                         active[r], t, G,
                                                         v[r])
                              : -INFINITY;
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + (int64_t)r * GROUPS + g;
            float mr = group_max<G>(m[r]);
            float s = group_sum<G>(exp_row<VEC, CHUNKS>(mr, active[r], t, G,
                                                        v[r]));
            if (row < rows) /* the same for the whole group */
                store_row<T, VEC, CHUNKS>(y + row * len, len,
                                          active[r] > 0 ? 1.0f / s : 0.0f, t,
                                          G, v[r]);
        }
    }
}

/* (m, s) <- the merge of two partial softmax sums: s = sum exp(x - m)
 * over a part.  A NaN sum stays NaN (the row is NaN, as in the
 * reference); two parts of max -inf keep the plain sum (0). */
__device__ __forceinline__ void merge_ms(float &m, float &s, float m2,
                                         float s2)
{
    float nm = fmaxf(m, m2);
    if (nm == -INFINITY) {
        s += s2;
        return;
    }
    s = s * __expf(m - nm) + s2 * __expf(m2 - nm);
    m = nm;
}

/*
 * One block per row (R rows at a time), len <= BLOCK * VEC * CHUNKS.
 * Each thread takes exp(v - its own max) and its sum at once; the
 * block merges the (max, sum) pairs in one round (warp shuffles, then
 * the warps' pairs in shared memory, read by every thread: one barrier
 * per R rows, the scratch alternating between two halves so that the
 * next rows need no second barrier); each element is then scaled by
 * exp(own max - row max) / row sum.
 */
template <typename T, int VEC, int CHUNKS, int R>
__global__ void __launch_bounds__(BLOCK)
    softmax_block(const T *x, T *y, const int32_t *bounds, int64_t rows,
                  int64_t len)
{
    constexpr int NW = BLOCK / WARP;
    __shared__ float sm[2][R][NW], ss[2][R][NW];
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    float v[R][CHUNKS][VEC], m[R], s[R];
    int64_t active[R];
    int half = 0;

    for (int64_t row0 = (int64_t)blockIdx.x * R; row0 < rows;
         row0 += (int64_t)gridDim.x * R, half ^= 1) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + r;
            active[r] = row < rows ? active_len(bounds, row, len) : 0;
            m[r] = row < rows ? load_row<T, VEC, CHUNKS>(x + row * len, len,
                                                         active[r],
                                                         threadIdx.x, BLOCK,
                                                         v[r])
                              : fill_row<VEC, CHUNKS>(v[r]);
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (m[r] != -INFINITY) {
                s[r] = exp_row<VEC, CHUNKS>(m[r], active[r], threadIdx.x,
                                            BLOCK, v[r]);
            } else { /* no finite element here: zeros, NaN kept */
                s[r] = 0.0f;
#pragma unroll
                for (int c = 0; c < CHUNKS; c++)
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        s[r] += isnan(v[r][c][k]) ? v[r][c][k] : 0.0f;
                        v[r][c][k] = 0.0f;
                    }
            }
            float wm = m[r], ws = s[r];
#pragma unroll
            for (int o = WARP / 2; o > 0; o /= 2)
                merge_ms(wm, ws, __shfl_xor_sync(0xffffffffu, wm, o),
                         __shfl_xor_sync(0xffffffffu, ws, o));
            if (lane == 0) {
                sm[half][r][w] = wm;
                ss[half][r][w] = ws;
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + r;
            float bm = sm[half][r][0], bs = ss[half][r][0];
#pragma unroll
            for (int i = 1; i < NW; i++)
                merge_ms(bm, bs, sm[half][r][i], ss[half][r][i]);
            if (row < rows)
                store_row<T, VEC, CHUNKS>(
                    y + row * len, len,
                    active[r] > 0 ? __expf(m[r] - bm) / bs : 0.0f,
                    threadIdx.x, BLOCK, v[r]);
        }
    }
}

/* (m, s) merged with one more value x: the running max and the sum of
 * exp(. - max).  A max of -inf keeps the sum at 0 (no NaN from
 * -inf - -inf); a NaN makes the sum NaN for good (as in the reference:
 * the whole row is NaN). */
__device__ __forceinline__ void online_add(float &m, float &s, float x)
{
    if (isnan(x) || isnan(s)) {
        s = NAN;
        return;
    }
    float nm = fmaxf(m, x);
    if (nm == -INFINITY)
        return;
    s = s * expf(m - nm) + expf(x - nm);
    m = nm;
}

__device__ __forceinline__ void online_merge(float &m, float &s, float m2,
                                             float s2)
{
    if (isnan(s) || isnan(s2)) {
        s = NAN;
        return;
    }
    float nm = fmaxf(m, m2);
    if (nm == -INFINITY)
        return;
    s = s * expf(m - nm) + s2 * expf(m2 - nm);
    m = nm;
}

/* One block per row of any length: two passes over global memory. */
template <typename T>
__global__ void __launch_bounds__(BLOCK)
    softmax_online(const T *x, T *y, const int32_t *bounds, int64_t rows,
                   int64_t len)
{
    __shared__ float sm[WARP], ss[WARP];
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * len;
        T *yr = y + row * len;
        int64_t active = active_len(bounds, row, len), j;
        float m = -INFINITY, s = 0.0f;

        for (j = threadIdx.x; j < active; j += BLOCK)
            online_add(m, s, to_f(xr[j]));
        for (int o = WARP / 2; o > 0; o /= 2)
            online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o),
                         __shfl_xor_sync(0xffffffffu, s, o));
        if (lane == 0) {
            sm[w] = m;
            ss[w] = s;
        }
        __syncthreads();
        m = lane < BLOCK / WARP ? sm[lane] : -INFINITY;
        s = lane < BLOCK / WARP ? ss[lane] : 0.0f;
        for (int o = WARP / 2; o > 0; o /= 2)
            online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o),
                         __shfl_xor_sync(0xffffffffu, s, o));
        __syncthreads();
        float inv = 1.0f / s;
        for (j = threadIdx.x; j < len; j += BLOCK)
            yr[j] = from_f<T>(j < active ? expf(to_f(xr[j]) - m) * inv
                                         : 0.0f);
    }
}

/* One thread per column of a short strided axis (len <= CACHE), the
 * column in registers; neighbouring threads read neighbouring
 * addresses. */
template <typename T, int CACHE>
__global__ void softmax_strided(const T *x, T *y, int64_t outer, int64_t len,
                                int64_t inner)
{
    const int64_t cols = outer * inner;

    for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
         c < cols; c += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = c / inner, i = c % inner;
        const T *xc = x + o * len * inner + i;
        T *yc = y + o * len * inner + i;
        float m = -INFINITY, s = 0.0f, v[CACHE];

#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            v[k] = k < len ? to_f(xc[k * inner]) : -INFINITY;
            m = fmaxf(m, v[k]);
        }
#pragma unroll
        for (int k = 0; k < CACHE; k++) {
            v[k] = k < len ? __expf(v[k] - m) : 0.0f;
            s += v[k];
        }
        float inv = 1.0f / s;
#pragma unroll
        for (int k = 0; k < CACHE; k++)
            if (k < len)
                yc[k * inner] = from_f<T>(v[k] * inv);
    }
}

enum { COL_WARPS = 32, COL_UNROLL = 8 };

/*
 * A long strided axis: a block of COL_WARPS warps takes a tile of WARP
 * adjacent columns (of the outer * inner flattened ones), lane l
 * column l; warp w reads the axis' elements w, w + COL_WARPS, ... so
 * that each load of a warp is one coalesced row segment, COL_UNROLL of
 * them in flight.  Each thread keeps a running (max, sum) of its
 * elements, the warps' pairs of a column are merged in shared memory,
 * then a second pass writes.  Two reads and one write of the data.
 */
template <typename T>
__global__ void __launch_bounds__(COL_WARPS * WARP)
    softmax_cols(const T *x, T *y, int64_t outer, int64_t len, int64_t inner)
{
    __shared__ float sm[COL_WARPS][WARP], ss[COL_WARPS][WARP];
    const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    const int64_t cols = outer * inner;

    for (int64_t c0 = (int64_t)blockIdx.x * WARP; c0 < cols;
         c0 += (int64_t)gridDim.x * WARP) {
        const int64_t c = c0 + lane;
        const bool live = c < cols;
        const int64_t o = live ? c / inner : 0, i = live ? c % inner : 0;
        const T *xc = x + o * len * inner + i;
        T *yc = y + o * len * inner + i;
        float m = -INFINITY, s = 0.0f;

        for (int64_t j0 = w; j0 < len; j0 += COL_WARPS * COL_UNROLL) {
            float v[COL_UNROLL], cm = -INFINITY;
#pragma unroll
            for (int u = 0; u < COL_UNROLL; u++) {
                int64_t j = j0 + (int64_t)u * COL_WARPS;
                v[u] = live && j < len ? to_f(xc[j * inner]) : -INFINITY;
                cm = fmaxf(cm, v[u]);
            }
            float nm = fmaxf(m, cm), add = 0.0f;
            if (nm == -INFINITY) { /* nothing finite yet: NaN kept */
#pragma unroll
                for (int u = 0; u < COL_UNROLL; u++)
                    add += isnan(v[u]) ? v[u] : 0.0f;
                s += add;
                continue;
            }
#pragma unroll
            for (int u = 0; u < COL_UNROLL; u++)
                add += __expf(v[u] - nm);
            s = s * __expf(m - nm) + add;
            m = nm;
        }
        sm[w][lane] = m;
        ss[w][lane] = s;
        __syncthreads();
        m = sm[0][lane];
        s = ss[0][lane];
        for (int k = 1; k < COL_WARPS; k++)
            merge_ms(m, s, sm[k][lane], ss[k][lane]);
        __syncthreads(); /* before the next tile writes sm, ss */
        const float inv = 1.0f / s;
        if (!live)
            continue;
        for (int64_t j0 = w; j0 < len; j0 += COL_WARPS * COL_UNROLL) {
            float v[COL_UNROLL];
#pragma unroll
            for (int u = 0; u < COL_UNROLL; u++) {
                int64_t j = j0 + (int64_t)u * COL_WARPS;
                v[u] = j < len ? to_f(xc[j * inner]) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < COL_UNROLL; u++) {
                int64_t j = j0 + (int64_t)u * COL_WARPS;
                if (j < len)
                    yc[j * inner] = from_f<T>(__expf(v[u] - m) * inv);
            }
        }
    }
}

/* Blocks for `rows` rows at `per_block` rows a block (rows > 0). */
unsigned grid_for(int64_t rows, int64_t per_block)
{
    int64_t b = (rows + per_block - 1) / per_block;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

/* Rows a block of softmax_group takes at a time. */
template <int G, int R> constexpr int64_t group_rows()
{
    return (int64_t)(BLOCK / WARP) * (WARP / G) * R;
}

template <typename T, int VEC, int CHUNKS, int G, int R>
void group(const T *x, T *y, const int32_t *b, int64_t rows, int64_t len,
           cudaStream_t s)
{
    softmax_group<T, VEC, CHUNKS, G, R>
        <<<grid_for(rows, group_rows<G, R>()), BLOCK, 0, s>>>(x, y, b, rows,
                                                             len);
}

template <typename T, int VEC, int CHUNKS, int R>
void block(const T *x, T *y, const int32_t *b, int64_t rows, int64_t len,
           cudaStream_t s)
{
    softmax_block<T, VEC, CHUNKS, R>
        <<<grid_for(rows, R), BLOCK, 0, s>>>(x, y, b, rows, len);
}

/*
 * Rows of the innermost axis, the kernel chosen by length and
 * alignment: groups of lanes per row up to 1024 elements (about 16
 * elements a lane, two rows at a time), a block per row up to 8192, the
 * two-pass kernel beyond.  A thread holds at most 32 floats of rows.
 */
template <typename T>
void launch_rows(const T *x, T *y, const int32_t *b, int64_t rows,
                 int64_t len, cudaStream_t s)
{
    constexpr int vec = 16 / (int)sizeof(T);
    bool aligned = ((uintptr_t)x % 16 == 0) && ((uintptr_t)y % 16 == 0) &&
                   len % vec == 0;

    if (!aligned) { /* one element a load */
        if (len <= 8)
            group<T, 1, 1, 8, 4>(x, y, b, rows, len, s);
        else if (len <= 32)
            group<T, 1, 1, 32, 4>(x, y, b, rows, len, s);
        else if (len <= 128)
            group<T, 1, 4, 32, 4>(x, y, b, rows, len, s);
        else if (len <= 512)
            group<T, 1, 16, 32, 2>(x, y, b, rows, len, s);
        else if (len <= 1024)
            group<T, 1, 32, 32, 1>(x, y, b, rows, len, s);
        else if (len <= 4096)
            block<T, 1, 16, 1>(x, y, b, rows, len, s);
        else if (len <= 8192)
            block<T, 1, 32, 1>(x, y, b, rows, len, s);
        else
            softmax_online<T><<<grid_for(rows, 1), BLOCK, 0, s>>>(x, y, b,
                                                                  rows, len);
    } else if constexpr (vec == 4) { /* float32, 4 a vector */
        if (len <= 16)
            group<T, 4, 1, 4, 4>(x, y, b, rows, len, s);
        else if (len <= 32)
            group<T, 4, 1, 8, 4>(x, y, b, rows, len, s);
        else if (len <= 64)
            group<T, 4, 2, 8, 2>(x, y, b, rows, len, s);
        else if (len <= 128)
            group<T, 4, 4, 8, 1>(x, y, b, rows, len, s);
        else if (len <= 256)
            group<T, 4, 4, 16, 2>(x, y, b, rows, len, s);
        else if (len <= 512)
            group<T, 4, 4, 32, 2>(x, y, b, rows, len, s);
        else if (len <= 1024)
            group<T, 4, 8, 32, 1>(x, y, b, rows, len, s);
        else if (len <= 2048)
            block<T, 4, 2, 2>(x, y, b, rows, len, s);
        else if (len <= 4096)
            block<T, 4, 4, 1>(x, y, b, rows, len, s);
        else if (len <= 8192)
            block<T, 4, 8, 1>(x, y, b, rows, len, s);
        else
            softmax_online<T><<<grid_for(rows, 1), BLOCK, 0, s>>>(x, y, b,
                                                                  rows, len);
    } else { /* float16, 8 a vector */
        if (len <= 32)
            group<T, 8, 1, 4, 4>(x, y, b, rows, len, s);
        else if (len <= 64)
            group<T, 8, 1, 8, 4>(x, y, b, rows, len, s);
        else if (len <= 128)
            group<T, 8, 2, 8, 1>(x, y, b, rows, len, s);
        else if (len <= 256)
            group<T, 8, 2, 16, 2>(x, y, b, rows, len, s);
        else if (len <= 512)
            group<T, 8, 2, 32, 2>(x, y, b, rows, len, s);
        else if (len <= 1024)
            group<T, 8, 4, 32, 1>(x, y, b, rows, len, s);
        else if (len <= 2048)
            block<T, 8, 1, 4>(x, y, b, rows, len, s);
        else if (len <= 4096)
            block<T, 8, 2, 1>(x, y, b, rows, len, s);
        else if (len <= 8192)
            block<T, 8, 4, 1>(x, y, b, rows, len, s);
        else
            softmax_online<T><<<grid_for(rows, 1), BLOCK, 0, s>>>(x, y, b,
                                                                  rows, len);
    }
}

template <typename T>
void launch(const void *xv, void *yv, const int32_t *bounds, int64_t outer,
            int64_t len, int64_t inner, cudaStream_t s)
{
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    int64_t cols = outer * inner;

    if (inner == 1)
        launch_rows<T>(x, y, bounds, outer, len, s);
    else if (len <= 8)
        softmax_strided<T, 8><<<grid_for(cols, BLOCK), BLOCK, 0, s>>>(
            x, y, outer, len, inner);
    else if (len <= 32)
        softmax_strided<T, 32><<<grid_for(cols, BLOCK), BLOCK, 0, s>>>(
            x, y, outer, len, inner);
    else
        softmax_cols<T><<<grid_for(cols, WARP), COL_WARPS * WARP, 0, s>>>(
            x, y, outer, len, inner);
}

mica_status_t run(mica_dtype_t dtype, const int32_t *bounds, int64_t outer,
                  int64_t len, int64_t inner, const void *x, void *y,
                  void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (outer <= 0 || len <= 0 || inner <= 0)
        return MICA_OK; /* nothing to compute: never a zero-block grid */
    if (dtype == MICA_FLOAT32)
        launch<float>(x, y, bounds, outer, len, inner, s);
    else if (dtype == MICA_FLOAT16)
        launch<uint16_t>(x, y, bounds, outer, len, inner, s);
    else
        return MICA_KIT_FAIL(err, "softmax on CUDA takes float32 or float16, "
                             "got %s", mica_kit_host->dtype_name(dtype));
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

} // namespace

extern "C" mica_status_t mica__softmax_cuda(mica_dtype_t dtype, int64_t outer,
                                            int64_t len, int64_t inner,
                                            const void *x, void *y,
                                            void *stream, mica_error_t *err)
{
    return run(dtype, NULL, outer, len, inner, x, y, stream, err);
}

extern "C" mica_status_t mica__ragged_softmax_cuda(mica_dtype_t dtype,
                                                   int64_t rows, int64_t len,
                                                   const void *x,
                                                   const int32_t *bounds,
                                                   void *y, void *stream,
                                                   mica_error_t *err)
{
    return run(dtype, bounds, rows, len, 1, x, y, stream, err);
}
