/*
 * modules/convolution/fused_cuda.cu - FusedConvolution's epilogue on the
 * GPU (fused_conv.h): y += a0 + a1 (broadcast through the kit's view),
 * then ReLU, in place, one element per thread of a grid-stride loop,
 * summed in float and rounded once, as the CPU reference does.
 */
#include <config.h>

#include <stdint.h>

#include "mica/kit_cuda.h"
#include "fused_conv.h"
#include "kit_nn_cuda.h"

namespace {

template <typename T>
__global__ void epilogue_kernel(T *y, int64_t n, mica_kit_bcast_t v,
                                const T *a0, const T *a1, int32_t relu)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t off[MICA_KIT_BCAST_MAX_IN];

    for (; i < n; i += step) {
        float s = mica__to_f(y[i]);
        if (v.nb_in > 0) {
            mica_kit_broadcast_offsets(&v, i, off);
            s += mica__to_f(a0[off[0]]);
            if (v.nb_in > 1)
                s += mica__to_f(a1[off[1]]);
        }
        if (relu && s < 0.0f)
            s = 0.0f; /* NaN stays NaN, as Activation's relu */
        mica__put_f(&y[i], s);
    }
}

} // namespace

extern "C" mica_status_t mica__fused_epilogue_cuda(
    void *y, mica_dtype_t dtype, int64_t n, const mica_kit_bcast_t *v,
    const void *a0, const void *a1, int32_t act, void *stream,
    mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int32_t relu = act == MICA__FUSED_ACT_RELU;
    unsigned blocks;

    if (n == 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(n, 256);
    if (dtype == MICA_FLOAT16)
        epilogue_kernel<__half><<<blocks, 256, 0, s>>>(
            (__half *)y, n, *v, (const __half *)a0, (const __half *)a1, relu);
    else
        epilogue_kernel<float><<<blocks, 256, 0, s>>>(
            (float *)y, n, *v, (const float *)a0, (const float *)a1, relu);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
