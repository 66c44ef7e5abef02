/*
 * modules/gather/gather_cuda.cu - the Gather layer on CUDA: one kernel for
 * the three modes (the index arithmetic is gather.h's, shared with the CPU
 * reference), moving elements of 1, 2, 4 or 8 bytes.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "gather.h"

/* One output element per thread (grid-stride); invalid indices give 0. */
template <typename T>
static __global__ void gather_kernel(const T *__restrict__ data,
                                     const int32_t *__restrict__ idx,
                                     T *__restrict__ dst, int64_t n,
                                     mica__gather_view_t v)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t k = mica__gather_src(&v, idx, i);
        dst[i] = k < 0 ? (T)0 : data[k];
    }
}

extern "C" mica_status_t mica__gather_cuda(const void *data,
                                           const int32_t *indices, void *dst,
                                           int64_t n, size_t esize,
                                           const mica__gather_view_t *v,
                                           void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned threads = 256;
    unsigned grid;

    if (n <= 0)
        return MICA_OK;
    grid = mica_kit_grid(n, threads);
    switch (esize) {
    case 1:
        gather_kernel<uint8_t><<<grid, threads, 0, s>>>(
            (const uint8_t *)data, indices, (uint8_t *)dst, n, *v);
        break;
    case 2:
        gather_kernel<uint16_t><<<grid, threads, 0, s>>>(
            (const uint16_t *)data, indices, (uint16_t *)dst, n, *v);
        break;
    case 4:
        gather_kernel<uint32_t><<<grid, threads, 0, s>>>(
            (const uint32_t *)data, indices, (uint32_t *)dst, n, *v);
        break;
    case 8:
        gather_kernel<uint64_t><<<grid, threads, 0, s>>>(
            (const uint64_t *)data, indices, (uint64_t *)dst, n, *v);
        break;
    default:
        mica_kit_host->set_error(err, "gather of %zu-byte elements", esize);
        return MICA_ERR_INVALID;
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
