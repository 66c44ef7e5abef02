/*
 * modules/identity/identity_cuda.cu - the Identity layer's copy and cast
 * on CUDA, with the element conversions of identity.h that the CPU uses
 * too: the two implementations agree bit for bit.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "identity.h"

static __global__ void cast_kernel(const void *src, int sdt, void *dst,
                                   int ddt, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        mica__identity_store(dst, ddt, i, mica__identity_load(src, sdt, i));
}

extern "C" mica_status_t mica__identity_cuda_cast(const void *src,
                                                  mica_dtype_t sdt, void *dst,
                                                  mica_dtype_t ddt, int64_t n,
                                                  void *stream,
                                                  mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned threads = 256;

    if (n <= 0)
        return MICA_OK;
    if (sdt == ddt) {
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(dst, src,
                                            (size_t)n * mica_dtype_size(sdt),
                                            cudaMemcpyDeviceToDevice, s));
        return MICA_OK;
    }
    cast_kernel<<<mica_kit_grid(n, threads), threads, 0, s>>>(src, (int)sdt,
                                                              dst, (int)ddt, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
