/*
 * modules/concat/concat_cuda.cu - the Concatenation layer's copies on
 * CUDA: one launch per input, each a strided slab copy in the widest unit
 * (16, 8, 4, 2 or 1 bytes) that divides the row lengths, the offset and
 * both pointers.  A single contiguous slab is one cudaMemcpyAsync.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "concat.h"
#include "mica/kit_cuda.h"

/* Row r of src (row_u units) goes to dst + r * out_u. */
template <typename T>
static __global__ void slab_kernel(T *__restrict__ dst,
                                   const T *__restrict__ src, int64_t row_u,
                                   int64_t out_u, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t r = i / row_u;
        dst[r * out_u + (i - r * row_u)] = src[i];
    }
}

template <typename T>
static mica_status_t launch(void *dst, const void *src, int64_t outer,
                            int64_t row, int64_t out_row, cudaStream_t s,
                            mica_error_t *err)
{
    const unsigned threads = 256;
    int64_t row_u = row / (int64_t)sizeof(T), n = outer * row_u;
    slab_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)dst, (const T *)src, row_u, out_row / (int64_t)sizeof(T), n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__concat_cuda_copy(void *dst, const void *src,
                                                int64_t outer, int64_t row,
                                                int64_t out_row, void *stream,
                                                mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    uint64_t a;

    if (outer <= 0 || row <= 0)
        return MICA_OK;
    if (outer == 1 || row == out_row) {
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)(outer * row),
                                            cudaMemcpyDeviceToDevice, s));
        return MICA_OK;
    }
    a = (uint64_t)row | (uint64_t)out_row | (uint64_t)(uintptr_t)dst |
        (uint64_t)(uintptr_t)src;
    if (!(a & 15))
        return launch<uint4>(dst, src, outer, row, out_row, s, err);
    if (!(a & 7))
        return launch<uint2>(dst, src, outer, row, out_row, s, err);
    if (!(a & 3))
        return launch<uint32_t>(dst, src, outer, row, out_row, s, err);
    if (!(a & 1))
        return launch<uint16_t>(dst, src, outer, row, out_row, s, err);
    return launch<uint8_t>(dst, src, outer, row, out_row, s, err);
}
