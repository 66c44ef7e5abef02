/*
 * modules/unary/unary_cuda.cu - Unary kernels.
 *
 * One kernel template over input type, output type and op (the op's
 * arithmetic is the scalar code of unary.h, shared with the CPU
 * reference).  A flat grid-stride loop; when input and output are aligned
 * it moves 16 bytes of input per thread and step.  64-bit indices, 256
 * threads per block.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "unary.h"

namespace {

/* Load / store through the compute type: float for float32 and float16,
 * int64 for int8 (saturating), int32 (wrapping) and bool (uint8_t). */
template <typename T> struct tr;

template <> struct tr<float> {
    static __device__ __forceinline__ float ld(float x) { return x; }
    static __device__ __forceinline__ float st(float c) { return c; }
};

template <> struct tr<__half> {
    static __device__ __forceinline__ float ld(__half x)
    {
        return __half2float(x);
    }
    static __device__ __forceinline__ __half st(float c)
    {
        return __float2half_rn(c);
    }
};

template <> struct tr<int8_t> {
    static __device__ __forceinline__ int64_t ld(int8_t x) { return x; }
    static __device__ __forceinline__ int8_t st(int64_t c)
    {
        return mica__un_sat8(c);
    }
};

template <> struct tr<int32_t> {
    static __device__ __forceinline__ int64_t ld(int32_t x) { return x; }
    static __device__ __forceinline__ int32_t st(int64_t c)
    {
        return mica__un_wrap32(c);
    }
};

template <> struct tr<uint8_t> { /* bool */
    static __device__ __forceinline__ int64_t ld(uint8_t x) { return x != 0; }
    static __device__ __forceinline__ uint8_t st(int64_t c) { return c != 0; }
    static __device__ __forceinline__ uint8_t st(float c) { return c != 0.0f; }
};

template <int OP> __device__ __forceinline__ float apply(float x)
{
    return mica__unary_f(OP, x);
}

template <int OP> __device__ __forceinline__ int64_t apply(int64_t x)
{
    return mica__unary_i(OP, x);
}

template <typename TI, typename TO, int OP>
__device__ __forceinline__ TO un1(TI x)
{
    return tr<TO>::st(apply<OP>(tr<TI>::ld(x)));
}

template <typename T, int N> struct alignas(sizeof(T) * N) vec_t {
    T v[N];
};

/* out[i] = op(in[i]); N > 1: both aligned to N elements. */
template <typename TI, typename TO, int OP, int N>
__global__ void un_flat(const TI *__restrict__ x, TO *__restrict__ y,
                        int64_t n)
{
    typedef vec_t<TI, N> vi_t;
    typedef vec_t<TO, N> vo_t;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nv = n / N;
    int64_t v, i;

    for (v = start; v < nv; v += step) {
        vi_t vx = reinterpret_cast<const vi_t *>(x)[v];
        vo_t vy;
        int j;
#pragma unroll
        for (j = 0; j < N; j++)
            vy.v[j] = un1<TI, TO, OP>(vx.v[j]);
        reinterpret_cast<vo_t *>(y)[v] = vy;
    }
    for (i = nv * N + start; i < n; i += step)
        y[i] = un1<TI, TO, OP>(x[i]);
}

template <typename TI, typename TO, int OP>
static mica_status_t launch(int64_t n, const void *px, void *py,
                            cudaStream_t stream, mica_error_t *err)
{
    const TI *x = static_cast<const TI *>(px);
    TO *y = static_cast<TO *>(py);
    const unsigned threads = 256;
    enum { N = 16 / sizeof(TI) };

    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % (sizeof(TO) * N) == 0 &&
        n >= N)
        un_flat<TI, TO, OP, N>
            <<<mica_kit_grid(n / N, threads), threads, 0, stream>>>(x, y, n);
    else
        un_flat<TI, TO, OP, 1>
            <<<mica_kit_grid(n, threads), threads, 0, stream>>>(x, y, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <int OP>
static mica_status_t by_type(mica_dtype_t t, int64_t n, const void *x,
                             void *y, cudaStream_t st, mica_error_t *err)
{
    constexpr bool ints =
        OP == MICA__UN_ABS || OP == MICA__UN_NEG || OP == MICA__UN_SIGN;
    constexpr bool to_bool = OP == MICA__UN_ISINF || OP == MICA__UN_ISNAN;

    if constexpr (OP == MICA__UN_NOT) {
        if (t == MICA_BOOL)
            return launch<uint8_t, uint8_t, OP>(n, x, y, st, err);
    } else if constexpr (to_bool) {
        if (t == MICA_FLOAT32)
            return launch<float, uint8_t, OP>(n, x, y, st, err);
        if (t == MICA_FLOAT16)
            return launch<__half, uint8_t, OP>(n, x, y, st, err);
    } else {
        if (t == MICA_FLOAT32)
            return launch<float, float, OP>(n, x, y, st, err);
        if (t == MICA_FLOAT16)
            return launch<__half, __half, OP>(n, x, y, st, err);
        if constexpr (ints) {
            if (t == MICA_INT8)
                return launch<int8_t, int8_t, OP>(n, x, y, st, err);
            if (t == MICA_INT32)
                return launch<int32_t, int32_t, OP>(n, x, y, st, err);
        }
    }
    mica_kit_host->set_error(err, "Unary op %d has no CUDA kernel for type "
                             "%s", OP, mica_kit_host->dtype_name(t));
    return MICA_ERR_UNSUPPORTED;
}

} /* namespace */

extern "C" mica_status_t mica__unary_cuda(int op, mica_dtype_t in_type,
                                          int64_t n, const void *in,
                                          void *out, void *stream,
                                          mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (n <= 0)
        return MICA_OK;
    switch (op) {
#define UN_CASE(OPV)                                                        \
    case OPV:                                                               \
        return by_type<OPV>(in_type, n, in, out, st, err);
    UN_CASE(MICA__UN_EXP)
    UN_CASE(MICA__UN_LOG)
    UN_CASE(MICA__UN_SQRT)
    UN_CASE(MICA__UN_RECIP)
    UN_CASE(MICA__UN_ABS)
    UN_CASE(MICA__UN_NEG)
    UN_CASE(MICA__UN_SIN)
    UN_CASE(MICA__UN_COS)
    UN_CASE(MICA__UN_TAN)
    UN_CASE(MICA__UN_SINH)
    UN_CASE(MICA__UN_COSH)
    UN_CASE(MICA__UN_ASIN)
    UN_CASE(MICA__UN_ACOS)
    UN_CASE(MICA__UN_ATAN)
    UN_CASE(MICA__UN_ASINH)
    UN_CASE(MICA__UN_ACOSH)
    UN_CASE(MICA__UN_ATANH)
    UN_CASE(MICA__UN_CEIL)
    UN_CASE(MICA__UN_FLOOR)
    UN_CASE(MICA__UN_ERF)
    UN_CASE(MICA__UN_NOT)
    UN_CASE(MICA__UN_SIGN)
    UN_CASE(MICA__UN_ROUND)
    UN_CASE(MICA__UN_ISINF)
    UN_CASE(MICA__UN_ISNAN)
#undef UN_CASE
    default:
        break;
    }
    mica_kit_host->set_error(err, "Unary op %d is unknown", op);
    return MICA_ERR_INVALID;
}
