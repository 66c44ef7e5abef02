/*
 * swish_cuda.cu - Swish's kernels and their launcher: a grid-stride loop
 * over n elements, float32 or float16 (computed in float, rounded as the
 * CPU rounds, through <mica/kit_half.h>).
 */
#include <stdint.h>

#include <mica/kit_cuda.h>
#include <mica/kit_half.h>

#include "swish.h"

static __global__ void swish_f32(const float *x, float *y, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = swish(x[i]);
}

static __global__ void swish_f16(const uint16_t *x, uint16_t *y, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = mica_kit_float_to_half(swish(mica_kit_half_to_float(x[i])));
}

extern "C" mica_status_t swish_cuda(mica_dtype_t t, const void *x, void *y,
                                    int64_t n, void *stream,
                                    mica_error_t *err)
{
    const unsigned threads = 256;
    cudaStream_t s = (cudaStream_t)stream;

    if (n == 0) /* never launch an empty grid */
        return MICA_OK;
    if (t == MICA_FLOAT16)
        swish_f16<<<mica_kit_grid(n, threads), threads, 0, s>>>(
            (const uint16_t *)x, (uint16_t *)y, n);
    else
        swish_f32<<<mica_kit_grid(n, threads), threads, 0, s>>>(
            (const float *)x, (float *)y, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
