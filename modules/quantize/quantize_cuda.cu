/*
 * modules/quantize/quantize_cuda.cu - the Quantize and Dequantize
 * kernels.
 *
 * One thread per element (grid-stride, 64-bit indices, 256 threads per
 * block); the scale and zero point of element i are number
 * (i / inner) % k, read through the caches.  The arithmetic is
 * mica__quantize / mica__dequantize of quantize.h, shared with the CPU
 * reference (an IEEE division and rintf: bit-identical results).
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "quantize.h"

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

template <typename X, typename S>
__global__ void quantize_kernel(const X *__restrict__ x,
                                const S *__restrict__ scale,
                                const int8_t *__restrict__ zp,
                                int8_t *__restrict__ y, int64_t n, int64_t k,
                                int64_t inner)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const int64_t c = k == 1 ? 0 : (i / inner) % k;
        y[i] = mica__quantize(ld(x, i), ld(scale, c), zp ? zp[c] : 0);
    }
}

template <typename S>
__global__ void dequantize_kernel(const int8_t *__restrict__ x,
                                  const S *__restrict__ scale,
                                  const int8_t *__restrict__ zp,
                                  S *__restrict__ y, int64_t n, int64_t k,
                                  int64_t inner)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const int64_t c = k == 1 ? 0 : (i / inner) % k;
        st(y, i, mica__dequantize(x[i], ld(scale, c), zp ? zp[c] : 0));
    }
}

const unsigned threads = 256;

template <typename X, typename S>
mica_status_t quantize(const mica__qdq_t *q, const void *x, const void *s,
                       const int8_t *zp, int8_t *y, cudaStream_t stream,
                       mica_error_t *err)
{
    quantize_kernel<X, S><<<mica_kit_grid(q->n, threads), threads, 0,
                            stream>>>(static_cast<const X *>(x),
                                      static_cast<const S *>(s), zp, y, q->n,
                                      q->k, q->inner);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <typename S>
mica_status_t dequantize(const mica__qdq_t *q, const int8_t *x, const void *s,
                         const int8_t *zp, void *y, cudaStream_t stream,
                         mica_error_t *err)
{
    dequantize_kernel<S><<<mica_kit_grid(q->n, threads), threads, 0,
                           stream>>>(x, static_cast<const S *>(s), zp,
                                     static_cast<S *>(y), q->n, q->k,
                                     q->inner);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

int is_float(mica_dtype_t t)
{
    return t == MICA_FLOAT32 || t == MICA_FLOAT16;
}

mica_status_t bad_types(const char *what, const mica__qdq_t *q,
                        mica_error_t *err)
{
    mica_kit_host->set_error(err, "%s has no CUDA kernel for x %s and scale "
                             "%s", what, mica_kit_host->dtype_name(q->xtype),
                             mica_kit_host->dtype_name(q->stype));
    return MICA_ERR_UNSUPPORTED;
}

} /* namespace */

extern "C" mica_status_t mica__quantize_cuda(const mica__qdq_t *q,
                                             const void *x, const void *scale,
                                             const int8_t *zp, int8_t *y,
                                             void *stream, mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    const bool xf = q->xtype == MICA_FLOAT32, sf = q->stype == MICA_FLOAT32;

    if (q->n <= 0)
        return MICA_OK;
    if (!is_float(q->xtype) || !is_float(q->stype))
        return bad_types("Quantize", q, err);
    if (xf && sf)
        return quantize<float, float>(q, x, scale, zp, y, st, err);
    if (xf)
        return quantize<float, __half>(q, x, scale, zp, y, st, err);
    if (sf)
        return quantize<__half, float>(q, x, scale, zp, y, st, err);
    return quantize<__half, __half>(q, x, scale, zp, y, st, err);
}

extern "C" mica_status_t mica__dequantize_cuda(const mica__qdq_t *q,
                                               const int8_t *x,
                                               const void *scale,
                                               const int8_t *zp, void *y,
                                               void *stream,
                                               mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (q->n <= 0)
        return MICA_OK;
    if (q->xtype != MICA_INT8 || !is_float(q->stype))
        return bad_types("Dequantize", q, err);
    if (q->stype == MICA_FLOAT32)
        return dequantize<float>(q, x, scale, zp, y, st, err);
    return dequantize<__half>(q, x, scale, zp, y, st, err);
}
