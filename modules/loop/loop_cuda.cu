/*
 * modules/loop/loop_cuda.cu - data movement of the loop boundary layers
 * on CUDA: strided row copies (Iterator, LoopOutput, Recurrence) and the
 * in-place reversal of LoopOutput 'reverse' (the trip limit's read-back is
 * mica_kit_cuda_fetch, <mica/kit_cuda.h>).  Pure data movement: every element
 * type is moved as words of the widest size (8, 4, 2 or 1 bytes) that
 * divides every address, pitch and width involved.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "loop.h"

/* The widest word (8, 4, 2, 1 bytes) dividing every bit of `bits`. */
static size_t word_of(uintptr_t bits)
{
    if (bits % 8 == 0)
        return 8;
    if (bits % 4 == 0)
        return 4;
    return bits % 2 == 0 ? 2 : 1;
}

/* dst row r, word c = src row r, word c; pitches and width in words. */
template <typename T>
static __global__ void copy_rows_kernel(T *dst, int64_t dpitch, const T *src,
                                        int64_t spitch, int64_t width,
                                        int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t r = i / width, c = i - r * width;
        dst[r * dpitch + c] = src[r * spitch + c];
    }
}

template <typename T>
static mica_status_t copy_rows_as(void *dst, size_t dpitch, const void *src,
                                  size_t spitch, size_t width, int64_t rows,
                                  cudaStream_t s, mica_error_t *err)
{
    const unsigned threads = 256;
    int64_t w = (int64_t)(width / sizeof(T)), n = rows * w;
    copy_rows_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)dst, (int64_t)(dpitch / sizeof(T)), (const T *)src,
        (int64_t)(spitch / sizeof(T)), w, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__loop_cuda_zero_rows(void *dst, size_t pitch,
                                                   size_t width, int64_t rows,
                                                   void *stream,
                                                   mica_error_t *err)
{
    if (rows <= 0 || width == 0)
        return MICA_OK;
    MICA_KIT_CUDA_CHECK(cudaMemset2DAsync(dst, pitch, 0, width, (size_t)rows,
                                          (cudaStream_t)stream));
    return MICA_OK;
}

extern "C" mica_status_t mica__loop_cuda_copy_rows(void *dst, size_t dpitch,
                                                   const void *src,
                                                   size_t spitch, size_t width,
                                                   int64_t rows, void *stream,
                                                   mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (rows <= 0 || width == 0)
        return MICA_OK;
    if (rows == 1 || (dpitch == width && spitch == width)) {
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)rows * width,
                                            cudaMemcpyDeviceToDevice, s));
        return MICA_OK;
    }
    switch (word_of((uintptr_t)dst | (uintptr_t)src | dpitch | spitch |
                    width)) {
    case 8:
        return copy_rows_as<uint64_t>(dst, dpitch, src, spitch, width, rows,
                                      s, err);
    case 4:
        return copy_rows_as<uint32_t>(dst, dpitch, src, spitch, width, rows,
                                      s, err);
    case 2:
        return copy_rows_as<uint16_t>(dst, dpitch, src, spitch, width, rows,
                                      s, err);
    default:
        return copy_rows_as<uint8_t>(dst, dpitch, src, spitch, width, rows,
                                     s, err);
    }
}

/*
 * Swap element k with element count-1-k (k < half) of every row; pitch
 * and inner (the element's size) in words.  n = rows * half * inner.
 */
template <typename T>
static __global__ void reverse_kernel(T *base, int64_t pitch, int64_t inner,
                                      int64_t count, int64_t half, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t per_row = half * inner;
        int64_t r = i / per_row, rem = i - r * per_row;
        int64_t k = rem / inner, c = rem - k * inner;
        T *a = base + r * pitch + k * inner + c;
        T *b = base + r * pitch + (count - 1 - k) * inner + c;
        T t = *a;
        *a = *b;
        *b = t;
    }
}

template <typename T>
static mica_status_t reverse_as(void *base, int64_t rows, size_t pitch,
                                size_t inner, int64_t count, cudaStream_t s,
                                mica_error_t *err)
{
    const unsigned threads = 256;
    int64_t w = (int64_t)(inner / sizeof(T)), half = count / 2;
    int64_t n = rows * half * w;
    reverse_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)base, (int64_t)(pitch / sizeof(T)), w, count, half, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__loop_cuda_reverse(void *base, int64_t rows,
                                                 size_t pitch, size_t inner,
                                                 int64_t count, void *stream,
                                                 mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (rows <= 0 || inner == 0 || count < 2)
        return MICA_OK;
    switch (word_of((uintptr_t)base | pitch | inner)) {
    case 8:
        return reverse_as<uint64_t>(base, rows, pitch, inner, count, s, err);
    case 4:
        return reverse_as<uint32_t>(base, rows, pitch, inner, count, s, err);
    case 2:
        return reverse_as<uint16_t>(base, rows, pitch, inner, count, s, err);
    default:
        return reverse_as<uint8_t>(base, rows, pitch, inner, count, s, err);
    }
}

/* ---- trips on the device: the trip and trip count read from memory ---- */

/*
 * Slice i = *iter (len-1-i with `reverse`) along the axis: to_slice 0,
 * dst[r][c] = src[r][i][c] (Iterator); 1, dst[r][i][c] = src[r][c]
 * (LoopOutput).  Nothing where i is outside [0, len).  rows x row words.
 */
template <typename T>
static __global__ void slice_kernel(T *dst, const T *src, int64_t outer,
                                    int64_t len, int64_t row,
                                    const int64_t *iter, int reverse,
                                    int to_slice)
{
    int64_t i = *iter, k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x, n = outer * row;

    if (reverse)
        i = len - 1 - i;
    if (i < 0 || i >= len)
        return;
    for (; k < n; k += step) {
        int64_t r = k / row, c = k - r * row;
        if (to_slice)
            dst[(r * len + i) * row + c] = src[r * row + c];
        else
            dst[r * row + c] = src[(r * len + i) * row + c];
    }
}

template <typename T>
static mica_status_t slice_as(void *dst, const void *src, int64_t outer,
                              int64_t len, size_t row, const int64_t *iter,
                              int reverse, int to_slice, cudaStream_t s,
                              mica_error_t *err)
{
    const unsigned threads = 256;
    int64_t w = (int64_t)(row / sizeof(T)), n = outer * w;
    slice_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)dst, (const T *)src, outer, len, w, iter, reverse, to_slice);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__loop_cuda_slice(void *dst, const void *src,
                                               int64_t outer, int64_t len,
                                               size_t row,
                                               const int64_t *iter,
                                               int reverse, int to_slice,
                                               void *stream,
                                               mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (outer <= 0 || len <= 0 || row == 0)
        return MICA_OK;
    switch (word_of((uintptr_t)dst | (uintptr_t)src | row)) {
    case 8:
        return slice_as<uint64_t>(dst, src, outer, len, row, iter, reverse,
                                  to_slice, s, err);
    case 4:
        return slice_as<uint32_t>(dst, src, outer, len, row, iter, reverse,
                                  to_slice, s, err);
    case 2:
        return slice_as<uint16_t>(dst, src, outer, len, row, iter, reverse,
                                  to_slice, s, err);
    default:
        return slice_as<uint8_t>(dst, src, outer, len, row, iter, reverse,
                                 to_slice, s, err);
    }
}

/*
 * LoopOutput's exit with the trip count in memory: count = min(*trips,
 * len); elements count..len-1 of every row become zeros, and with
 * `reverse` elements 0..count-1 are put in reverse order.  inner words
 * an element, rows of len elements.
 */
template <typename T>
static __global__ void exit_kernel(T *base, int64_t outer, int64_t len,
                                   int64_t inner, const int64_t *trips,
                                   int reverse)
{
    int64_t count = *trips < len ? *trips : len;
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x, n = outer * len * inner;

    if (count < 0)
        count = 0;
    for (; k < n; k += step) {
        int64_t per_row = len * inner;
        int64_t r = k / per_row, rem = k - r * per_row;
        int64_t e = rem / inner, c = rem - e * inner;
        T *p = base + r * per_row;
        if (e >= count) {
            p[e * inner + c] = 0;
        } else if (reverse && e < count / 2) {
            T *q = p + (count - 1 - e) * inner + c, t = p[e * inner + c];
            p[e * inner + c] = *q;
            *q = t;
        }
    }
}

template <typename T>
static mica_status_t exit_as(void *base, int64_t outer, int64_t len,
                             size_t inner, const int64_t *trips, int reverse,
                             cudaStream_t s, mica_error_t *err)
{
    const unsigned threads = 256;
    int64_t w = (int64_t)(inner / sizeof(T)), n = outer * len * w;
    exit_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)base, outer, len, w, trips, reverse);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__loop_cuda_exit(void *base, int64_t outer,
                                              int64_t len, size_t inner,
                                              const int64_t *trips,
                                              int reverse, void *stream,
                                              mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (outer <= 0 || len <= 0 || inner == 0)
        return MICA_OK;
    switch (word_of((uintptr_t)base | inner)) {
    case 8:
        return exit_as<uint64_t>(base, outer, len, inner, trips, reverse, s,
                                 err);
    case 4:
        return exit_as<uint32_t>(base, outer, len, inner, trips, reverse, s,
                                 err);
    case 2:
        return exit_as<uint16_t>(base, outer, len, inner, trips, reverse, s,
                                 err);
    default:
        return exit_as<uint8_t>(base, outer, len, inner, trips, reverse, s,
                                err);
    }
}
