/*
 * modules/einsum/einsum_cuda.cu - the gather of Einsum on CUDA: strided
 * copies (transposes, diagonals, broadcasts) with an optional sum over
 * other dimensions (see mica__ein_gather_t in einsum.h).
 *
 * gather_thread: one thread per output element, looping over the summed
 * elements (few of them).  gather_block: one block per output element,
 * its threads sharing the sum (many summed elements, few outputs).
 * Offsets and counts are 64-bit; float accumulation.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "einsum.h"

namespace {

enum { BLOCK = 256, WARP = 32 };

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(uint16_t v)
{
    return __half2float(__ushort_as_half(v));
}
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ uint16_t from_f<uint16_t>(float v)
{
    return __half_as_ushort(__float2half_rn(v));
}

/* The source offset of element i of the dims (size, stride)[0..n). */
__device__ __forceinline__ int64_t offset(int64_t i, int32_t n,
                                          const int64_t *size,
                                          const int64_t *stride)
{
    int64_t off = 0;
    for (int32_t d = n - 1; d >= 0; d--) {
        off += (i % size[d]) * stride[d];
        i /= size[d];
    }
    return off;
}

template <typename T>
__global__ void gather_thread(mica__ein_gather_t g, const T *src, T *dst)
{
    for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
         o < g.n_out; o += (int64_t)gridDim.x * blockDim.x) {
        int64_t base = offset(o, g.nd, g.osize, g.ostride);
        float acc = 0.0f;
        for (int64_t r = 0; r < g.n_red; r++)
            acc += to_f(src[base + offset(r, g.nr, g.rsize, g.rstride)]);
        dst[o] = from_f<T>(acc);
    }
}

template <typename T>
__global__ void __launch_bounds__(BLOCK)
    gather_block(mica__ein_gather_t g, const T *src, T *dst)
{
    __shared__ float part[BLOCK / WARP];

    for (int64_t o = blockIdx.x; o < g.n_out; o += gridDim.x) {
        int64_t base = offset(o, g.nd, g.osize, g.ostride);
        float acc = 0.0f;
        for (int64_t r = threadIdx.x; r < g.n_red; r += BLOCK)
            acc += to_f(src[base + offset(r, g.nr, g.rsize, g.rstride)]);
        for (int s = WARP / 2; s > 0; s /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, s);
        if (threadIdx.x % WARP == 0)
            part[threadIdx.x / WARP] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            float t = 0.0f;
            for (int w = 0; w < BLOCK / WARP; w++)
                t += part[w];
            dst[o] = from_f<T>(t);
        }
        __syncthreads();
    }
}

template <typename T>
void launch(const mica__ein_gather_t *g, const void *src, void *dst,
            cudaStream_t s)
{
    if (g->n_red >= 1024 && g->n_out < 65536)
        gather_block<T><<<mica_kit_grid(g->n_out, 1), BLOCK, 0, s>>>(
            *g, (const T *)src, (T *)dst);
    else
        gather_thread<T><<<mica_kit_grid(g->n_out, BLOCK), BLOCK, 0, s>>>(
            *g, (const T *)src, (T *)dst);
}

} // namespace

extern "C" mica_status_t mica__ein_gather_cuda(mica_dtype_t dtype,
                                               const mica__ein_gather_t *g,
                                               const void *src, void *dst,
                                               void *stream,
                                               mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (g->n_out <= 0)
        return MICA_OK; /* never a zero-block grid */
    if (dtype == MICA_FLOAT32)
        launch<float>(g, src, dst, s);
    else if (dtype == MICA_FLOAT16)
        launch<uint16_t>(g, src, dst, s);
    else
        return MICA_KIT_FAIL(err, "Einsum on CUDA takes float32 or float16, "
                             "got %s", mica_kit_host->dtype_name(dtype));
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
