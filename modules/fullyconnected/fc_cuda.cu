/*
 * modules/fullyconnected/fc_cuda.cu - the bias of FullyConnected on CUDA:
 * y[r, j] (+)= bias[j], one thread per element, 64-bit indexing, a
 * grid-stride loop.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "kit_nn_cuda.h"
#include "fc.h"

namespace {

template <typename T>
__global__ void bias_kernel(int64_t total, int64_t k,
                            const T *__restrict__ bias, T *__restrict__ y,
                            int assign)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < total; i += step) {
        float b = bias ? mica__to_f(bias[i % k]) : 0.0f;
        mica__put_f(&y[i], assign ? b : mica__to_f(y[i]) + b);
    }
}

} // namespace

extern "C" mica_status_t mica__fc_cuda_bias(mica_dtype_t dtype, int64_t rows,
                                            int64_t k, const void *bias,
                                            void *y, int assign, void *stream,
                                            mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t total = rows * k;
    unsigned blocks;

    if (total == 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(total, 256);
    if (dtype == MICA_FLOAT16)
        bias_kernel<__half><<<blocks, 256, 0, s>>>(
            total, k, (const __half *)bias, (__half *)y, assign);
    else
        bias_kernel<float><<<blocks, 256, 0, s>>>(
            total, k, (const float *)bias, (float *)y, assign);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
