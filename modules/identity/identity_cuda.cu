/*
 * modules/identity/identity_cuda.cu - the Identity layer's copy, cast and
 * reorder on CUDA, with the element conversions and offsets of identity.h
 * that the CPU uses too: the two implementations agree bit for bit.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "identity.h"

static __global__ void cast_kernel(const void *src, int sdt, void *dst,
                                   int ddt, int sat, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        mica__identity_store_sat(dst, ddt, i,
                                 mica__identity_load(src, sdt, i), sat);
}

/* One logical element per thread (grid-strided): read where the input's
 * format puts it, write where the output's does. */
static __global__ void reorder_kernel(const void *src, int sdt, void *dst,
                                      int ddt, int sat,
                                      mica__identity_reorder_t r, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t from, to;
        mica__identity_offsets(&r, i, &from, &to);
        mica__identity_store_sat(dst, ddt, to,
                                 mica__identity_load(src, sdt, from), sat);
    }
}

extern "C" mica_status_t mica__identity_cuda_reorder(
    const void *src, mica_dtype_t sdt, void *dst, mica_dtype_t ddt,
    int saturate, const mica__identity_reorder_t *r, int64_t n, void *stream,
    mica_error_t *err)
{
    const unsigned threads = 256;

    if (n <= 0)
        return MICA_OK;
    reorder_kernel<<<mica_kit_grid(n, threads), threads, 0,
                     (cudaStream_t)stream>>>(src, (int)sdt, dst, (int)ddt,
                                              saturate, *r, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__identity_cuda_cast(const void *src,
                                                  mica_dtype_t sdt, void *dst,
                                                  mica_dtype_t ddt,
                                                  int saturate, int64_t n,
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
    cast_kernel<<<mica_kit_grid(n, threads), threads, 0, s>>>(
        src, (int)sdt, dst, (int)ddt, saturate, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
