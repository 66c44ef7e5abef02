/*
 * modules/resize/resize_cuda.cu - the Resize kernels.
 *
 * One thread per output element (grid-stride, 64-bit indices, 256
 * threads per block): the element's coordinates map to input coordinates
 * through the arithmetic of resize.h, shared with the CPU reference, so
 * that nearest picks the very same elements.  Nearest moves elements of
 * 1, 2 or 4 bytes; linear weighs the 2^m corners (m <= 3 resized
 * dimensions) in float32.  The run is a __grid_constant__ parameter, read
 * in place.  Consecutive threads write consecutive outputs; reads follow
 * the input rows.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "resize.h"

namespace {

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, int64_t i)
{
    return __half2float(p[i]);
}
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half *p, int64_t i, float v)
{
    p[i] = __float2half_rn(v);
}

template <typename T>
__global__ void resize_nearest(const T *__restrict__ x, T *__restrict__ y,
                               int64_t n,
                               const __grid_constant__ mica__resize_t r)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t rem = i, src = 0, stride = 1;
        int32_t k;
        for (k = r.rank - 1; k >= 0; k--) {
            int64_t c = rem % r.out[k];
            rem /= r.out[k];
            if (r.resized[k])
                c = mica__resize_nearest(&r, k, mica__resize_coord(&r, k, c));
            src += c * stride;
            stride *= r.in[k];
        }
        y[i] = x[src];
    }
}

template <typename T>
__global__ void resize_linear(const T *__restrict__ x, T *__restrict__ y,
                              int64_t n,
                              const __grid_constant__ mica__resize_t r)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t rem = i, src = 0, stride = 1;
        int64_t i0[MICA__RZ_LINEAR_DIMS], i1[MICA__RZ_LINEAR_DIMS];
        int64_t st_[MICA__RZ_LINEAR_DIMS];
        float w0[MICA__RZ_LINEAR_DIMS], w1[MICA__RZ_LINEAR_DIMS], acc = 0.0f;
        int32_t k, m = 0, corner, j;
        for (k = r.rank - 1; k >= 0; k--) {
            int64_t c = rem % r.out[k];
            rem /= r.out[k];
            if (r.resized[k] && m < MICA__RZ_LINEAR_DIMS) {
                mica__resize_taps(&r, k, mica__resize_coord(&r, k, c),
                                  &i0[m], &i1[m], &w0[m], &w1[m]);
                st_[m++] = stride;
            } else {
                src += c * stride;
            }
            stride *= r.in[k];
        }
        for (corner = 0; corner < (1 << m); corner++) {
            int64_t off = src;
            float w = 1.0f;
            for (j = 0; j < m; j++) {
                const int hi = (corner >> j) & 1;
                off += st_[j] * (hi ? i1[j] : i0[j]);
                w *= hi ? w1[j] : w0[j];
            }
            acc += w * ld(x, off);
        }
        st(y, i, acc);
    }
}

const unsigned threads = 256;

template <typename T>
mica_status_t nearest(const mica__resize_t *r, int64_t n, const void *x,
                      void *y, cudaStream_t stream, mica_error_t *err)
{
    resize_nearest<T><<<mica_kit_grid(n, threads), threads, 0, stream>>>(
        static_cast<const T *>(x), static_cast<T *>(y), n, *r);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <typename T>
mica_status_t linear(const mica__resize_t *r, int64_t n, const void *x,
                     void *y, cudaStream_t stream, mica_error_t *err)
{
    resize_linear<T><<<mica_kit_grid(n, threads), threads, 0, stream>>>(
        static_cast<const T *>(x), static_cast<T *>(y), n, *r);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

} /* namespace */

extern "C" mica_status_t mica__resize_cuda(const mica__resize_t *r,
                                           int64_t n, mica_dtype_t dtype,
                                           const void *x, void *y,
                                           void *stream, mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (n <= 0)
        return MICA_OK;
    if (r->mode == MICA__RZ_NEAREST) {
        switch (mica_dtype_size(dtype)) {
        case 1: return nearest<uint8_t>(r, n, x, y, st, err);
        case 2: return nearest<uint16_t>(r, n, x, y, st, err);
        case 4: return nearest<uint32_t>(r, n, x, y, st, err);
        default: break;
        }
    } else if (dtype == MICA_FLOAT32) {
        return linear<float>(r, n, x, y, st, err);
    } else if (dtype == MICA_FLOAT16) {
        return linear<__half>(r, n, x, y, st, err);
    }
    mica_kit_host->set_error(err, "Resize has no CUDA kernel for mode %d "
                             "and type %s", (int)r->mode,
                             mica_kit_host->dtype_name(dtype));
    return MICA_ERR_UNSUPPORTED;
}
