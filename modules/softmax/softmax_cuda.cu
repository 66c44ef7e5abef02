/*
 * modules/softmax/softmax_cuda.cu - SoftMax and RaggedSoftMax on CUDA.
 *
 * The input is [outer, len, inner] with the softmax along len.
 *
 * inner == 1 (the axis is the innermost, and every RaggedSoftMax):
 *   len <= 1024      softmax_warp: one warp per row; the row is read once
 *                    into registers (each lane holds CHUNKS vectors of VEC
 *                    elements), then max, sum and the output come from
 *                    registers: one read and one write of the data.  Rows
 *                    of at most 8 elements a lane go 4 at a time.
 *   len <= 8192      softmax_block: one block of 256 threads per row, the
 *                    row in registers the same way.
 *   longer           softmax_online: one block per row; a pass keeps a
 *                    running (max, sum) per thread, merged across the
 *                    block, then a second pass writes: two reads, one
 *                    write.
 * inner > 1 (a strided axis): softmax_strided, one thread per column
 * (outer, inner), reading the len elements inner apart (neighbouring
 * threads read neighbouring addresses): a column of at most 32 elements
 * is kept in registers, a longer one takes the online two-pass way.
 *
 * VEC: 16-byte loads and stores (4 float32 or 8 float16) where the
 * pointers are 16-byte aligned and len is a multiple of VEC; else VEC 1.
 * Arithmetic in float; float16 is widened on load and rounded on store.
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

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = WARP / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = WARP / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Max or sum over the block (BLOCK threads); every thread gets it.
 * `scratch` holds WARP floats; the call ends with a barrier so that
 * scratch may be reused at once. */
__device__ __forceinline__ float block_max(float v, float *scratch)
{
    int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    v = warp_max(v);
    if (lane == 0)
        scratch[w] = v;
    __syncthreads();
    v = lane < BLOCK / WARP ? scratch[lane] : -INFINITY;
    v = warp_max(v);
    __syncthreads();
    return v;
}

__device__ __forceinline__ float block_sum(float v, float *scratch)
{
    int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    v = warp_sum(v);
    if (lane == 0)
        scratch[w] = v;
    __syncthreads();
    v = lane < BLOCK / WARP ? scratch[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
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

/* exp(v - m) in place for the active elements (0 for the others); the
 * thread's sum. */
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
            v[c][k] = base + k < active ? expf(v[c][k] - m) : 0.0f;
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

/* One warp per row, len <= WARP * VEC * CHUNKS; R rows at a time, their
 * loads all issued before any reduction (more bytes in flight for short
 * rows). */
template <typename T, int VEC, int CHUNKS, int R>
__global__ void softmax_warp(const T *x, T *y, const int32_t *bounds,
                             int64_t rows, int64_t len)
{
    const int lane = threadIdx.x % WARP;
    const int64_t per_block = BLOCK / WARP;
    float v[R][CHUNKS][VEC], m[R];
    int64_t active[R];

    for (int64_t row0 = (blockIdx.x * per_block + threadIdx.x / WARP) * R;
         row0 < rows; row0 += (int64_t)gridDim.x * per_block * R) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + r;
            active[r] = row < rows ? active_len(bounds, row, len) : 0;
            m[r] = row < rows ? load_row<T, VEC, CHUNKS>(x + row * len, len,
                                                         active[r], lane,
                                                         WARP, v[r])
                              : -INFINITY;
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t row = row0 + r;
            float mr = warp_max(m[r]);
            float s = warp_sum(exp_row<VEC, CHUNKS>(mr, active[r], lane, WARP,
                                                    v[r]));
            if (row < rows) /* the same for the whole warp */
                store_row<T, VEC, CHUNKS>(y + row * len, len,
                                          active[r] > 0 ? 1.0f / s : 0.0f,
                                          lane, WARP, v[r]);
        }
    }
}

/* One block per row, len <= BLOCK * VEC * CHUNKS. */
template <typename T, int VEC, int CHUNKS>
__global__ void __launch_bounds__(BLOCK)
    softmax_block(const T *x, T *y, const int32_t *bounds, int64_t rows,
                  int64_t len)
{
    __shared__ float scratch[WARP];
    float v[CHUNKS][VEC];

    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t active = active_len(bounds, row, len);
        float m = block_max(load_row<T, VEC, CHUNKS>(x + row * len, len,
                                                     active, threadIdx.x,
                                                     BLOCK, v),
                            scratch);
        float s = block_sum(exp_row<VEC, CHUNKS>(m, active, threadIdx.x,
                                                 BLOCK, v),
                            scratch);
        store_row<T, VEC, CHUNKS>(y + row * len, len,
                                  active > 0 ? 1.0f / s : 0.0f, threadIdx.x,
                                  BLOCK, v);
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

/* One thread per column of a strided axis; CACHE > 0: len <= CACHE, kept
 * in registers; CACHE 0: any len, two passes. */
template <typename T, int CACHE>
__global__ void softmax_strided(const T *x, T *y, int64_t outer, int64_t len,
                                int64_t inner)
{
    const int64_t cols = outer * inner;

    for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
         c < cols; c += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = c / inner, i = c % inner, j;
        const T *xc = x + o * len * inner + i;
        T *yc = y + o * len * inner + i;
        float m = -INFINITY, s = 0.0f;

        if constexpr (CACHE > 0) {
            float v[CACHE];
#pragma unroll
            for (int k = 0; k < CACHE; k++) {
                v[k] = k < len ? to_f(xc[k * inner]) : -INFINITY;
                m = fmaxf(m, v[k]);
            }
#pragma unroll
            for (int k = 0; k < CACHE; k++) {
                v[k] = k < len ? expf(v[k] - m) : 0.0f;
                s += v[k];
            }
            float inv = 1.0f / s;
#pragma unroll
            for (int k = 0; k < CACHE; k++)
                if (k < len)
                    yc[k * inner] = from_f<T>(v[k] * inv);
        } else {
            for (j = 0; j < len; j++)
                online_add(m, s, to_f(xc[j * inner]));
            float inv = 1.0f / s;
            for (j = 0; j < len; j++)
                yc[j * inner] = from_f<T>(expf(to_f(xc[j * inner]) - m) * inv);
        }
    }
}

/* Blocks for `rows` rows at `per_block` rows a block (rows > 0). */
unsigned grid_for(int64_t rows, int64_t per_block)
{
    int64_t b = (rows + per_block - 1) / per_block;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

/* The smallest CHUNKS of {CHUNKS, 2 CHUNKS, ..., MAXC} whose kernel
 * covers len, launched; false if none does. */
template <typename T, int VEC, int CHUNKS, int MAXC>
bool try_warp(const T *x, T *y, const int32_t *b, int64_t rows, int64_t len,
              cudaStream_t s)
{
    constexpr int R = CHUNKS * VEC <= 8 ? 4 : 1; /* <= 32 floats */
    if (len <= (int64_t)WARP * VEC * CHUNKS) {
        softmax_warp<T, VEC, CHUNKS, R>
            <<<grid_for(rows, BLOCK / WARP * R), BLOCK, 0, s>>>(x, y, b, rows,
                                                                 len);
        return true;
    }
    if constexpr (CHUNKS * 2 <= MAXC)
        return try_warp<T, VEC, CHUNKS * 2, MAXC>(x, y, b, rows, len, s);
    else
        return false;
}

template <typename T, int VEC, int CHUNKS, int MAXC>
bool try_block(const T *x, T *y, const int32_t *b, int64_t rows, int64_t len,
               cudaStream_t s)
{
    if (len <= (int64_t)BLOCK * VEC * CHUNKS) {
        softmax_block<T, VEC, CHUNKS>
            <<<grid_for(rows, 1), BLOCK, 0, s>>>(x, y, b, rows, len);
        return true;
    }
    if constexpr (CHUNKS * 2 <= MAXC)
        return try_block<T, VEC, CHUNKS * 2, MAXC>(x, y, b, rows, len, s);
    else
        return false;
}

/* Rows of the innermost axis, the kernel chosen by length and alignment.
 * Every kernel holds at most 32 floats of a row per thread. */
template <typename T>
void launch_rows(const T *x, T *y, const int32_t *bounds, int64_t rows,
                 int64_t len, cudaStream_t s)
{
    const int vec = 16 / (int)sizeof(T);
    bool aligned = ((uintptr_t)x % 16 == 0) && ((uintptr_t)y % 16 == 0) &&
                   len % vec == 0;
    bool done;

    if (aligned && vec == 4)
        done = try_warp<T, 4, 1, 8>(x, y, bounds, rows, len, s) ||
               try_block<T, 4, 1, 8>(x, y, bounds, rows, len, s);
    else if (aligned && vec == 8)
        done = try_warp<T, 8, 1, 4>(x, y, bounds, rows, len, s) ||
               try_block<T, 8, 1, 4>(x, y, bounds, rows, len, s);
    else
        done = try_warp<T, 1, 1, 32>(x, y, bounds, rows, len, s) ||
               try_block<T, 1, 1, 32>(x, y, bounds, rows, len, s);
    if (!done)
        softmax_online<T><<<grid_for(rows, 1), BLOCK, 0, s>>>(x, y, bounds,
                                                              rows, len);
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
        softmax_strided<T, 0><<<grid_for(cols, BLOCK), BLOCK, 0, s>>>(
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
