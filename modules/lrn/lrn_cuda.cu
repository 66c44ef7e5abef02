/*
 * modules/lrn/lrn_cuda.cu - the hand-written CUDA LRN (implementation
 * "cuda", and the cudnn implementation's path for a negative alpha): one
 * thread per output element summing its window of channels in float32
 * (float16 data too), 64-bit indexing, a grid-stride loop.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "kit_nn_cuda.h"
#include "lrn.h"

namespace {

template <typename T>
__global__ void lrn_kernel(mica__lrn_params_t p, int64_t c, int64_t hw,
                           int64_t total, const T *__restrict__ x,
                           T *__restrict__ y)
{
    const int64_t half = (p.window - 1) / 2;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (; i < total; i += step) {
        int64_t s = i % hw, ch = (i / hw) % c, n = i / (hw * c), j;
        int64_t lo = ch - half < 0 ? 0 : ch - half;
        int64_t hi = ch + half >= c ? c - 1 : ch + half;
        float sum = 0.0f;
        for (j = lo; j <= hi; j++) {
            float e = mica__to_f(x[(n * c + j) * hw + s]);
            sum += e * e;
        }
        mica__put_f(&y[i], mica__lrn_value(mica__to_f(x[i]), sum, p));
    }
}

} // namespace

extern "C" mica_status_t mica__lrn_cuda(const mica__lrn_problem_t *pb,
                                        const void *x, void *y, void *stream,
                                        mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t total = pb->n * pb->c * pb->hw;
    unsigned blocks;

    if (total == 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(total, 256);
    if (pb->dtype == MICA_FLOAT16)
        lrn_kernel<__half><<<blocks, 256, 0, s>>>(
            pb->p, pb->c, pb->hw, total, (const __half *)x, (__half *)y);
    else
        lrn_kernel<float><<<blocks, 256, 0, s>>>(
            pb->p, pb->c, pb->hw, total, (const float *)x, (float *)y);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
