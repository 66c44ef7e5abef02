/*
 * modules/scale/scale_cuda.cu - the Scale kernel and its coefficients'
 * upload.
 *
 * One thread per element (grid-stride, 64-bit indices, 256 threads per
 * block); coefficient (i / inner) % k comes from a small table that stays
 * in the caches.  The power is a template flag: without a power other
 * than 1 no powf is compiled in.  float16 computes in float32
 * (mica__scale, shared with the CPU reference).
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "scale.h"

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

template <typename T, bool POWER>
__global__ void scale_kernel(const T *__restrict__ x, T *__restrict__ y,
                             int64_t n, const float *__restrict__ coef,
                             int64_t k, int64_t inner)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        const int64_t c = k == 1 ? 0 : (i / inner) % k;
        st(y, i, mica__scale(ld(x, i), coef[c], coef[k + c],
                             coef[2 * k + c], POWER));
    }
}

template <typename T>
mica_status_t launch(const mica__scale_run_t *r, int64_t n, const void *x,
                     void *y, cudaStream_t stream, mica_error_t *err)
{
    const unsigned threads = 256, blocks = mica_kit_grid(n, threads);
    const T *px = static_cast<const T *>(x);
    T *py = static_cast<T *>(y);

    if (r->use_power)
        scale_kernel<T, true><<<blocks, threads, 0, stream>>>(
            px, py, n, r->coef, r->k, r->inner);
    else
        scale_kernel<T, false><<<blocks, threads, 0, stream>>>(
            px, py, n, r->coef, r->k, r->inner);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

} /* namespace */

extern "C" mica_status_t mica__scale_cuda_upload(const float *host,
                                                 int64_t k, float **dev,
                                                 mica_error_t *err)
{
    const size_t bytes = 3 * (size_t)k * sizeof(float);
    float *p = NULL;
    cudaError_t e;

    *dev = NULL;
    MICA_KIT_CUDA_CHECK(cudaMalloc((void **)&p, bytes));
    e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
    /* from pageable memory the copy may still be in flight: enqueue reads
     * the table on a stream that is not ordered after it */
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        cudaFree(p);
        mica_kit_host->set_error(err, "cudaMemcpy of %zu bytes of Scale "
                                 "coefficients failed: %s", bytes,
                                 cudaGetErrorString(e));
        return MICA_ERR_DEVICE;
    }
    *dev = p;
    return MICA_OK;
}

extern "C" void mica__scale_cuda_free(float *dev)
{
    if (dev)
        cudaFree(dev);
}

extern "C" mica_status_t mica__scale_cuda(mica_dtype_t dtype,
                                          const mica__scale_run_t *r,
                                          int64_t n, const void *x, void *y,
                                          void *stream, mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (n <= 0)
        return MICA_OK;
    if (dtype == MICA_FLOAT32)
        return launch<float>(r, n, x, y, st, err);
    if (dtype == MICA_FLOAT16)
        return launch<__half>(r, n, x, y, st, err);
    mica_kit_host->set_error(err, "Scale has no CUDA kernel for type %s",
                             mica_kit_host->dtype_name(dtype));
    return MICA_ERR_UNSUPPORTED;
}
