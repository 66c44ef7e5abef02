/*
 * modules/activation/activation_cuda.cu - Activation kernels.
 *
 * One kernel template over element type and activation (the formula is
 * the scalar code of activation.h, shared with the CPU reference).  A flat
 * grid-stride loop; when input and output are 16-byte aligned it moves 16
 * bytes per thread and step.  64-bit indices, 256 threads per block.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "activation.h"

namespace {

template <typename T, int TYPE> struct act;

template <int TYPE> struct act<float, TYPE> {
    static __device__ __forceinline__ float f(float x, float a, float b)
    {
        return mica__act_f(TYPE, x, a, b);
    }
};

template <int TYPE> struct act<__half, TYPE> {
    static __device__ __forceinline__ __half f(__half x, float a, float b)
    {
        return __float2half_rn(mica__act_f(TYPE, __half2float(x), a, b));
    }
};

/* Integer types: relu only. */
template <int TYPE> struct act<int8_t, TYPE> {
    static __device__ __forceinline__ int8_t f(int8_t x, float, float)
    {
        return x < 0 ? (int8_t)0 : x;
    }
};

template <int TYPE> struct act<int32_t, TYPE> {
    static __device__ __forceinline__ int32_t f(int32_t x, float, float)
    {
        return x < 0 ? 0 : x;
    }
};

template <typename T, int N> struct alignas(sizeof(T) * N) vec_t {
    T v[N];
};

/* y[i] = f(x[i]); N > 1: x and y aligned to N elements. */
template <typename T, int TYPE, int N>
__global__ void act_flat(const T *__restrict__ x, T *__restrict__ y,
                         int64_t n, float a, float b)
{
    typedef vec_t<T, N> v_t;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nv = n / N;
    int64_t v, i;

    for (v = start; v < nv; v += step) {
        v_t vx = reinterpret_cast<const v_t *>(x)[v], vy;
        int j;
#pragma unroll
        for (j = 0; j < N; j++)
            vy.v[j] = act<T, TYPE>::f(vx.v[j], a, b);
        reinterpret_cast<v_t *>(y)[v] = vy;
    }
    for (i = nv * N + start; i < n; i += step)
        y[i] = act<T, TYPE>::f(x[i], a, b);
}

template <typename T, int TYPE>
static mica_status_t launch(int64_t n, float a, float b, const void *px,
                            void *py, cudaStream_t stream, mica_error_t *err)
{
    const T *x = static_cast<const T *>(px);
    T *y = static_cast<T *>(py);
    const unsigned threads = 256;
    enum { N = 16 / sizeof(T) };

    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && n >= N)
        act_flat<T, TYPE, N>
            <<<mica_kit_grid(n / N, threads), threads, 0, stream>>>(x, y, n, a,
                                                                    b);
    else
        act_flat<T, TYPE, 1>
            <<<mica_kit_grid(n, threads), threads, 0, stream>>>(x, y, n, a, b);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <int TYPE>
static mica_status_t by_type(mica_dtype_t t, int64_t n, float a, float b,
                             const void *x, void *y, cudaStream_t st,
                             mica_error_t *err)
{
    if (t == MICA_FLOAT32)
        return launch<float, TYPE>(n, a, b, x, y, st, err);
    if (t == MICA_FLOAT16)
        return launch<__half, TYPE>(n, a, b, x, y, st, err);
    if constexpr (TYPE == MICA__ACT_RELU) {
        if (t == MICA_INT8)
            return launch<int8_t, TYPE>(n, a, b, x, y, st, err);
        if (t == MICA_INT32)
            return launch<int32_t, TYPE>(n, a, b, x, y, st, err);
    }
    mica_kit_host->set_error(err, "Activation type %d has no CUDA kernel "
                             "for type %s", TYPE,
                             mica_kit_host->dtype_name(t));
    return MICA_ERR_UNSUPPORTED;
}

} /* namespace */

extern "C" mica_status_t mica__activation_cuda(int type, mica_dtype_t dtype,
                                               int64_t n, float alpha,
                                               float beta, const void *in,
                                               void *out, void *stream,
                                               mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (n <= 0)
        return MICA_OK;
    switch (type) {
#define ACT_CASE(T)                                                         \
    case T:                                                                 \
        return by_type<T>(dtype, n, alpha, beta, in, out, st, err);
    ACT_CASE(MICA__ACT_RELU)
    ACT_CASE(MICA__ACT_SIGMOID)
    ACT_CASE(MICA__ACT_TANH)
    ACT_CASE(MICA__ACT_LEAKY_RELU)
    ACT_CASE(MICA__ACT_ELU)
    ACT_CASE(MICA__ACT_SELU)
    ACT_CASE(MICA__ACT_SOFTSIGN)
    ACT_CASE(MICA__ACT_SOFTPLUS)
    ACT_CASE(MICA__ACT_CLIP)
    ACT_CASE(MICA__ACT_HARD_SIGMOID)
    ACT_CASE(MICA__ACT_SCALED_TANH)
    ACT_CASE(MICA__ACT_THRESHOLDED_RELU)
    ACT_CASE(MICA__ACT_GELU_ERF)
    ACT_CASE(MICA__ACT_GELU_TANH)
#undef ACT_CASE
    default:
        break;
    }
    mica_kit_host->set_error(err, "Activation type %d is unknown", type);
    return MICA_ERR_INVALID;
}
