/*
 * modules/shuffle/shuffle_cuda.cu - the Shuffle layer's data movement on
 * CUDA: a generic strided transpose (rank <= 8), and plain copies.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "shuffle.h"

/* The transposed view: output dims, and for each output dim the stride of
 * the source dim it comes from.  Passed by value. */
typedef struct transpose_view {
    int32_t rank;
    int64_t odims[MICA_MAX_DIMS];
    int64_t sstride[MICA_MAX_DIMS];
} transpose_view_t;

template <typename T>
static __global__ void transpose_kernel(const T *__restrict__ src,
                                        T *__restrict__ dst,
                                        transpose_view_t v, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t rest = i, off = 0;
        for (int32_t k = v.rank - 1; k >= 0; k--) {
            int64_t c = rest % v.odims[k];
            rest /= v.odims[k];
            off += c * v.sstride[k];
        }
        dst[i] = src[off];
    }
}

extern "C" mica_status_t mica__shuffle_cuda_transpose(const void *src,
                                                      int32_t rank,
                                                      const int64_t *dims,
                                                      const int64_t *perm,
                                                      void *dst, size_t esize,
                                                      void *stream,
                                                      mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t stride[MICA_MAX_DIMS], n = 1;
    transpose_view_t v;
    const unsigned threads = 256;
    unsigned grid;
    int32_t i;

    if (rank < 0 || rank > MICA_MAX_DIMS) {
        mica_kit_host->set_error(err, "transpose of rank %d (at most %d)",
                                 (int)rank, MICA_MAX_DIMS);
        return MICA_ERR_INVALID;
    }
    for (i = rank - 1; i >= 0; i--) {
        stride[i] = n;
        n *= dims[i];
    }
    if (n <= 0)
        return MICA_OK;
    /* Drop unit dims of the output: they move nothing. */
    v.rank = 0;
    for (i = 0; i < rank; i++) {
        if (dims[perm[i]] == 1)
            continue;
        v.odims[v.rank] = dims[perm[i]];
        v.sstride[v.rank] = stride[perm[i]];
        v.rank++;
    }
    for (i = v.rank; i < MICA_MAX_DIMS; i++) {
        v.odims[i] = 1;
        v.sstride[i] = 0;
    }
    grid = mica_kit_grid(n, threads);
    switch (esize) {
    case 1:
        transpose_kernel<uint8_t><<<grid, threads, 0, s>>>(
            (const uint8_t *)src, (uint8_t *)dst, v, n);
        break;
    case 2:
        transpose_kernel<uint16_t><<<grid, threads, 0, s>>>(
            (const uint16_t *)src, (uint16_t *)dst, v, n);
        break;
    case 4:
        transpose_kernel<uint32_t><<<grid, threads, 0, s>>>(
            (const uint32_t *)src, (uint32_t *)dst, v, n);
        break;
    case 8:
        transpose_kernel<uint64_t><<<grid, threads, 0, s>>>(
            (const uint64_t *)src, (uint64_t *)dst, v, n);
        break;
    default:
        mica_kit_host->set_error(err, "transpose of %zu-byte elements",
                                 esize);
        return MICA_ERR_INVALID;
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__shuffle_cuda_copy(void *dst, const void *src,
                                                 size_t bytes, void *stream,
                                                 mica_error_t *err)
{
    if (bytes && dst != src)
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(
            dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return MICA_OK;
}
