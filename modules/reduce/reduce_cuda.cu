/*
 * modules/reduce/reduce_cuda.cu - the Reduce layer on CUDA.
 *
 * Each output element reduces R input elements found through a strided
 * view: the kept axes give the base offset of an output, the reduced axes
 * the offsets within it (both decomposed from flat indices, so the reduced
 * axes need not be contiguous).  Small R: one warp per output; larger R:
 * one block per output, warp shuffles then shared memory.  Floating types
 * accumulate in float (float16 included), integers in int64 (sum and prod
 * wrap modulo 2^64 before the final conversion, as on the CPU).
 */
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit_cuda.h"
#include "reduce.h"

typedef struct reduce_view {
    int32_t nk, nr;
    int64_t kdims[MICA_MAX_DIMS], kstr[MICA_MAX_DIMS];
    int64_t rdims[MICA_MAX_DIMS], rstr[MICA_MAX_DIMS];
    int64_t nout, R;
} reduce_view_t;

static __device__ __forceinline__ int64_t offset_of(int64_t i, int32_t n,
                                                    const int64_t *dims,
                                                    const int64_t *str)
{
    int64_t off = 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        off += (i % dims[k]) * str[k];
        i /= dims[k];
    }
    return off;
}

/* ---- per-type traits ---------------------------------------------------- */

template <typename T> struct traits;

template <> struct traits<float> {
    typedef float acc_t;
    static __device__ float load(float x) { return x; }
    static __device__ float lowest() { return __int_as_float(0xff800000); }
    static __device__ float highest() { return __int_as_float(0x7f800000); }
};

template <> struct traits<__half> {
    typedef float acc_t;
    static __device__ float load(__half x) { return __half2float(x); }
    static __device__ float lowest() { return __int_as_float(0xff800000); }
    static __device__ float highest() { return __int_as_float(0x7f800000); }
};

template <> struct traits<int32_t> {
    typedef long long acc_t;
    static __device__ long long load(int32_t x) { return x; }
    static __device__ long long lowest() { return INT32_MIN; }
    static __device__ long long highest() { return INT32_MAX; }
};

template <> struct traits<int8_t> {
    typedef long long acc_t;
    static __device__ long long load(int8_t x) { return x; }
    static __device__ long long lowest() { return -128; }
    static __device__ long long highest() { return 127; }
};

template <typename T, int OP>
static __device__ __forceinline__ typename traits<T>::acc_t identity()
{
    if (OP == MICA_REDUCE_PROD)
        return 1;
    if (OP == MICA_REDUCE_MAX)
        return traits<T>::lowest();
    if (OP == MICA_REDUCE_MIN)
        return traits<T>::highest();
    return 0;
}

template <int OP>
static __device__ __forceinline__ float combine(float a, float b)
{
    if (OP == MICA_REDUCE_PROD)
        return a * b;
    if (OP == MICA_REDUCE_MAX)
        return fmaxf(a, b);
    if (OP == MICA_REDUCE_MIN)
        return fminf(a, b);
    return a + b;
}

template <int OP>
static __device__ __forceinline__ long long combine(long long a, long long b)
{
    if (OP == MICA_REDUCE_PROD)
        return (long long)((unsigned long long)a * (unsigned long long)b);
    if (OP == MICA_REDUCE_MAX)
        return a > b ? a : b;
    if (OP == MICA_REDUCE_MIN)
        return a < b ? a : b;
    return (long long)((unsigned long long)a + (unsigned long long)b);
}

template <typename T, int OP> struct finish;

template <int OP> struct finish<float, OP> {
    static __device__ float run(float acc, int64_t R)
    {
        return OP == MICA_REDUCE_AVG ? acc / (float)R : acc;
    }
};

template <int OP> struct finish<__half, OP> {
    static __device__ __half run(float acc, int64_t R)
    {
        return __float2half_rn(OP == MICA_REDUCE_AVG ? acc / (float)R : acc);
    }
};

template <int OP> struct finish<int32_t, OP> {
    static __device__ int32_t run(long long acc, int64_t R)
    {
        if (OP == MICA_REDUCE_AVG)
            acc = R ? acc / R : 0;
        return (int32_t)(uint32_t)(unsigned long long)acc;
    }
};

template <int OP> struct finish<int8_t, OP> {
    static __device__ int8_t run(long long acc, int64_t R)
    {
        if (OP == MICA_REDUCE_AVG)
            acc = R ? acc / R : -128;
        return (int8_t)(acc < -128 ? -128 : acc > 127 ? 127 : acc);
    }
};

template <int OP, typename A>
static __device__ __forceinline__ A warp_reduce(A acc)
{
    for (int d = 16; d > 0; d >>= 1)
        acc = combine<OP>(acc, __shfl_xor_sync(0xffffffffu, acc, d));
    return acc;
}

/* ---- kernels ------------------------------------------------------------ */

template <typename T, int OP>
static __global__ void reduce_warp_kernel(const T *__restrict__ src,
                                          T *__restrict__ dst,
                                          reduce_view_t v)
{
    typedef typename traits<T>::acc_t A;
    int lane = threadIdx.x & 31;
    int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;

    for (int64_t o = warp; o < v.nout; o += nwarps) {
        int64_t base = offset_of(o, v.nk, v.kdims, v.kstr);
        A acc = identity<T, OP>();
        for (int64_t r = lane; r < v.R; r += 32)
            acc = combine<OP>(acc, traits<T>::load(
                                       src[base + offset_of(r, v.nr, v.rdims,
                                                            v.rstr)]));
        acc = warp_reduce<OP>(acc);
        if (lane == 0)
            dst[o] = finish<T, OP>::run(acc, v.R);
    }
}

template <typename T, int OP>
static __global__ void reduce_block_kernel(const T *__restrict__ src,
                                           T *__restrict__ dst,
                                           reduce_view_t v)
{
    typedef typename traits<T>::acc_t A;
    __shared__ A partial[32];
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    int nw = (blockDim.x + 31) >> 5;

    for (int64_t o = blockIdx.x; o < v.nout; o += gridDim.x) {
        int64_t base = offset_of(o, v.nk, v.kdims, v.kstr);
        A acc = identity<T, OP>();
        for (int64_t r = threadIdx.x; r < v.R; r += blockDim.x)
            acc = combine<OP>(acc, traits<T>::load(
                                       src[base + offset_of(r, v.nr, v.rdims,
                                                            v.rstr)]));
        acc = warp_reduce<OP>(acc);
        if (lane == 0)
            partial[wid] = acc;
        __syncthreads();
        if (wid == 0) {
            acc = lane < nw ? partial[lane] : identity<T, OP>();
            acc = warp_reduce<OP>(acc);
            if (lane == 0)
                dst[o] = finish<T, OP>::run(acc, v.R);
        }
        __syncthreads();
    }
}

template <typename T, int OP>
static mica_status_t launch_op(const void *src, void *dst,
                               const reduce_view_t &v, cudaStream_t s,
                               mica_error_t *err)
{
    if (v.R <= 256) {
        const unsigned threads = 256;
        reduce_warp_kernel<T, OP>
            <<<mica_kit_grid(v.nout * 32, threads), threads, 0, s>>>(
                (const T *)src, (T *)dst, v);
    } else {
        const unsigned threads = 256;
        unsigned grid = (unsigned)(v.nout > 65535 * 8 ? 65535 * 8 : v.nout);
        reduce_block_kernel<T, OP><<<grid, threads, 0, s>>>((const T *)src,
                                                            (T *)dst, v);
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <typename T>
static mica_status_t launch(const void *src, void *dst, int32_t op,
                            const reduce_view_t &v, cudaStream_t s,
                            mica_error_t *err)
{
    switch (op) {
    case MICA_REDUCE_SUM: return launch_op<T, MICA_REDUCE_SUM>(src, dst, v, s, err);
    case MICA_REDUCE_PROD: return launch_op<T, MICA_REDUCE_PROD>(src, dst, v, s, err);
    case MICA_REDUCE_MAX: return launch_op<T, MICA_REDUCE_MAX>(src, dst, v, s, err);
    case MICA_REDUCE_MIN: return launch_op<T, MICA_REDUCE_MIN>(src, dst, v, s, err);
    case MICA_REDUCE_AVG: return launch_op<T, MICA_REDUCE_AVG>(src, dst, v, s, err);
    default:
        mica_kit_host->set_error(err, "unknown reduce operation %d", (int)op);
        return MICA_ERR_INVALID;
    }
}

extern "C" mica_status_t mica__reduce_cuda(const void *src, void *dst,
                                           mica_dtype_t dtype, int32_t op,
                                           int32_t rank, const int64_t *dims,
                                           uint32_t mask, void *stream,
                                           mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t stride = 1;
    reduce_view_t v;
    int32_t k;

    memset(&v, 0, sizeof v);
    v.nout = 1;
    v.R = 1;
    for (k = rank - 1; k >= 0; k--) {
        int64_t d = dims[k];
        if (mask & (1u << k)) {
            v.R *= d;
            if (d != 1) {
                v.rdims[v.nr] = d;
                v.rstr[v.nr++] = stride;
            }
        } else {
            v.nout *= d;
            if (d != 1) {
                v.kdims[v.nk] = d;
                v.kstr[v.nk++] = stride;
            }
        }
        stride *= d;
    }
    /* Collected from the last axis: put them back in row-major order. */
    for (k = 0; k < v.nk / 2; k++) {
        int64_t t = v.kdims[k]; v.kdims[k] = v.kdims[v.nk - 1 - k]; v.kdims[v.nk - 1 - k] = t;
        t = v.kstr[k]; v.kstr[k] = v.kstr[v.nk - 1 - k]; v.kstr[v.nk - 1 - k] = t;
    }
    for (k = 0; k < v.nr / 2; k++) {
        int64_t t = v.rdims[k]; v.rdims[k] = v.rdims[v.nr - 1 - k]; v.rdims[v.nr - 1 - k] = t;
        t = v.rstr[k]; v.rstr[k] = v.rstr[v.nr - 1 - k]; v.rstr[v.nr - 1 - k] = t;
    }
    if (v.nout <= 0)
        return MICA_OK;
    switch (dtype) {
    case MICA_FLOAT32: return launch<float>(src, dst, op, v, s, err);
    case MICA_FLOAT16: return launch<__half>(src, dst, op, v, s, err);
    case MICA_INT32: return launch<int32_t>(src, dst, op, v, s, err);
    case MICA_INT8: return launch<int8_t>(src, dst, op, v, s, err);
    default:
        mica_kit_host->set_error(err, "reduce of type %s is not supported",
                                 mica_kit_host->dtype_name(dtype));
        return MICA_ERR_INVALID;
    }
}
