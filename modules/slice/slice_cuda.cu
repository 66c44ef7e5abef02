/*
 * modules/slice/slice_cuda.cu - the Slice layer on CUDA: one kernel for
 * every rank (<= 8) and mode, moving elements of 1, 2 or 4 bytes.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "slice.h"

/* One output element per thread (grid-stride): its coordinates, each
 * mapped to an input index by the mode; any -1 reads the fill value. */
template <typename T>
static __global__ void slice_kernel(const T *__restrict__ src,
                                    T *__restrict__ dst, int64_t n,
                                    mica__slice_view_t v,
                                    const T *__restrict__ fill_dev,
                                    T fill_val)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    T fill = fill_dev ? *fill_dev : fill_val;
    for (; i < n; i += step) {
        int64_t rest = i, off = 0;
        bool bad = false;
        for (int32_t a = v.rank - 1; a >= 0; a--) {
            int64_t c = rest % v.out_dims[a];
            int64_t k = mica__slice_map(v.start[a] + c * v.stride[a],
                                        v.in_dims[a], v.mode);
            rest /= v.out_dims[a];
            if (k < 0)
                bad = true;
            else
                off += k * v.in_strides[a];
        }
        dst[i] = bad ? fill : src[off];
    }
}

extern "C" mica_status_t mica__slice_cuda(const void *src, void *dst,
                                          int64_t n, size_t esize,
                                          const mica__slice_view_t *v,
                                          const void *fill_dev,
                                          uint32_t fill_bits, void *stream,
                                          mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned threads = 256;
    unsigned grid;

    if (n <= 0)
        return MICA_OK;
    grid = mica_kit_grid(n, threads);
    switch (esize) {
    case 1:
        slice_kernel<uint8_t><<<grid, threads, 0, s>>>(
            (const uint8_t *)src, (uint8_t *)dst, n, *v,
            (const uint8_t *)fill_dev, (uint8_t)fill_bits);
        break;
    case 2:
        slice_kernel<uint16_t><<<grid, threads, 0, s>>>(
            (const uint16_t *)src, (uint16_t *)dst, n, *v,
            (const uint16_t *)fill_dev, (uint16_t)fill_bits);
        break;
    case 4:
        slice_kernel<uint32_t><<<grid, threads, 0, s>>>(
            (const uint32_t *)src, (uint32_t *)dst, n, *v,
            (const uint32_t *)fill_dev, fill_bits);
        break;
    default:
        mica_kit_host->set_error(err, "slice of %zu-byte elements", esize);
        return MICA_ERR_INVALID;
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
