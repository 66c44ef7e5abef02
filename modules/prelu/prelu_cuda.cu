/*
 * modules/prelu/prelu_cuda.cu - the ParametricReLU kernel.
 *
 * The launcher receives the folded broadcast view (the kit's
 * mica_kit_broadcast_view with fold): when it has rank 1 or less, both
 * inputs are contiguous or a single value and a flat loop runs;
 * otherwise each output element finds its two input elements through
 * the view's strides (mica_kit_broadcast_offsets, the same code as the
 * CPU reference).  The view is a __grid_constant__ parameter, read in
 * place.  Grid-stride loops, 64-bit indices, 256 threads per block;
 * float16 computes in float32 (mica__prelu, shared with the reference).
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "prelu.h"

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

/* Rank <= 1: x and slope each contiguous (stride 1) or one value (0). */
template <typename T>
__global__ void prelu_flat(const T *__restrict__ x, const T *__restrict__ s,
                           T *__restrict__ y, int64_t n, int64_t sx,
                           int64_t ss)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        st(y, i, mica__prelu(ld(x, i * sx), ld(s, i * ss)));
}

template <typename T>
__global__ void prelu_bcast(const T *__restrict__ x, const T *__restrict__ s,
                            T *__restrict__ y, int64_t n,
                            const __grid_constant__ mica_kit_bcast_t v)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i, off[2];

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        mica_kit_broadcast_offsets(&v, i, off);
        st(y, i, mica__prelu(ld(x, off[0]), ld(s, off[1])));
    }
}

template <typename T>
mica_status_t launch(const mica_kit_bcast_t *v, int64_t n, const void *px,
                     const void *ps, void *py, cudaStream_t stream,
                     mica_error_t *err)
{
    const T *x = static_cast<const T *>(px);
    const T *s = static_cast<const T *>(ps);
    T *y = static_cast<T *>(py);
    const unsigned threads = 256;
    const unsigned blocks = mica_kit_grid(n, threads);

    if (v->rank == 0)
        prelu_flat<T><<<blocks, threads, 0, stream>>>(x, s, y, n, 0, 0);
    else if (v->rank == 1)
        prelu_flat<T><<<blocks, threads, 0, stream>>>(x, s, y, n, v->s[0][0],
                                                      v->s[1][0]);
    else
        prelu_bcast<T><<<blocks, threads, 0, stream>>>(x, s, y, n, *v);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

} /* namespace */

extern "C" mica_status_t mica__prelu_cuda(mica_dtype_t dtype,
                                          const mica_kit_bcast_t *v,
                                          int64_t n, const void *x,
                                          const void *slope, void *y,
                                          void *stream, mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (n <= 0)
        return MICA_OK;
    if (dtype == MICA_FLOAT32)
        return launch<float>(v, n, x, slope, y, st, err);
    if (dtype == MICA_FLOAT16)
        return launch<__half>(v, n, x, slope, y, st, err);
    mica_kit_host->set_error(err, "ParametricReLU has no CUDA kernel for "
                             "type %s", mica_kit_host->dtype_name(dtype));
    return MICA_ERR_UNSUPPORTED;
}
