/*
 * modules/rnn/rnn_cuda.cu - the RNNv2 layer's one kernel: the device copy
 * of the sequence lengths when every sequence has T steps (cuDNN reads
 * them from device memory).  cuDNN does the rest (rnn_cudnn.c).
 */
#include <config.h>

#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "rnn.h"

namespace {

__global__ void fill_i32(int32_t *dst, int64_t n, int32_t value)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        dst[i] = value;
}

} /* namespace */

extern "C" mica_status_t mica__rnn_cuda_fill_i32(int32_t *dst, int64_t n,
                                                 int32_t value, void *stream,
                                                 mica_error_t *err)
{
    if (n <= 0)
        return MICA_OK;
    fill_i32<<<mica_kit_grid(n, 256), 256, 0,
               static_cast<cudaStream_t>(stream)>>>(dst, n, value);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
