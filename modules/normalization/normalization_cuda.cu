/*
 * modules/normalization/normalization_cuda.cu - the Normalization kernel.
 *
 * A team of threads per row (normalization.h): one warp for rows of up
 * to 4096 elements (several rows per block of 4 warps), a block of 512
 * threads for longer ones.  Three passes over the row: the sum (the
 * mean), the sum of squares around the mean (the biased variance; RMS:
 * around 0), then the output, each reduced in float32 through warp
 * shuffles (and shared memory between the warps of a block).  float16
 * and bfloat16 are widened on load and rounded once on store.  Rows that
 * lie contiguously with scale and bias along them (or one per row), the
 * common case of layer normalization, take direct indices; any other
 * plan decomposes each element's index over the plan's axes.
 */
#include <config.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "normalization.h"

namespace {

__device__ __forceinline__ float ld(const float *p, int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, int64_t i)
{
    return __half2float(p[i]);
}
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}
__device__ __forceinline__ void st(float *p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half *p, int64_t i, float v)
{
    p[i] = __float2half_rn(v);
}
__device__ __forceinline__ void st(__nv_bfloat16 *p, int64_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}

/* The sum over the team of TEAM threads (a warp or the block); every
 * thread of the team gets it.  `red` holds a float per warp (blocks). */
template <int TEAM>
__device__ __forceinline__ float team_sum(float v, float *red)
{
    int o;
#pragma unroll
    for (o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (TEAM > 32) {
        const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
        if (lane == 0)
            red[w] = v;
        __syncthreads();
        v = lane < TEAM / 32 ? red[lane] : 0.0f;
#pragma unroll
        for (o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        __syncthreads(); /* red is reused by the next reduction */
    }
    return v;
}

/* Where element j of the row at `row` lies in x, scale and bias. */
template <bool CONTIG>
__device__ __forceinline__ void where(const mica__norm_plan_t &p, int64_t i,
                                      int64_t j, const int64_t *row,
                                      int64_t *off)
{
    if (CONTIG) {
        off[0] = i * p.len + j;
        off[1] = row[1] + (p.nr ? j * p.rs[1][0] : 0);
        off[2] = row[2] + (p.nr ? j * p.rs[2][0] : 0);
    } else {
        mica__norm_elem(&p, j, row, off);
    }
}

/* TEAM threads per row; blockDim.x = TEAM * ROWS. */
template <typename T, int TEAM, bool CONTIG>
__global__ void norm_rows(mica__norm_plan_t p, const T *__restrict__ x,
                          const T *__restrict__ scale,
                          const T *__restrict__ bias, T *__restrict__ y)
{
    __shared__ float red[32];
    const int rows_per_block = blockDim.x / TEAM;
    const int t = threadIdx.x % TEAM;
    const int64_t first = (int64_t)blockIdx.x * rows_per_block +
                          threadIdx.x / TEAM;
    const int64_t step = (int64_t)gridDim.x * rows_per_block;
    const float n = (float)p.len;
    int64_t i, j, row[3], off[3];

    for (i = first; i < p.rows; i += step) {
        float mean = 0.0f, var = 0.0f, inv, a = 0.0f, shift = 0.0f;
        mica__norm_row(&p, i, row);
        if (!p.rms) {
            /* around the row's first element: x - shift keeps its digits
             * where the mean is large against the spread */
            where<CONTIG>(p, i, 0, row, off);
            shift = ld(x, off[0]);
            for (j = t; j < p.len; j += TEAM) {
                where<CONTIG>(p, i, j, row, off);
                a += ld(x, off[0]) - shift;
            }
            mean = team_sum<TEAM>(a, red) / n;
        }
        a = 0.0f;
        for (j = t; j < p.len; j += TEAM) {
            float v;
            where<CONTIG>(p, i, j, row, off);
            v = (ld(x, off[0]) - shift) - mean;
            a += v * v;
        }
        var = team_sum<TEAM>(a, red) / n;
        inv = rsqrtf(var + p.eps);
        for (j = t; j < p.len; j += TEAM) {
            float v;
            where<CONTIG>(p, i, j, row, off);
            v = ((ld(x, off[0]) - shift) - mean) * inv * ld(scale, off[1]);
            if (p.has_bias)
                v += ld(bias, off[2]);
            st(y, off[0], v);
        }
    }
}

/* Rows of up to this many elements take one warp each. */
#define WARP_ROW_MAX 4096

template <typename T, bool CONTIG>
mica_status_t launch(const mica__norm_plan_t *p, const void *x,
                     const void *s, const void *b, void *y,
                     cudaStream_t stream, mica_error_t *err)
{
    const T *tx = static_cast<const T *>(x), *ts = static_cast<const T *>(s),
            *tb = static_cast<const T *>(b);
    T *ty = static_cast<T *>(y);

    if (p->len <= WARP_ROW_MAX) {
        const unsigned rows_per_block = 4;
        norm_rows<T, 32, CONTIG>
            <<<mica_kit_grid(p->rows, rows_per_block), 32 * rows_per_block,
               0, stream>>>(*p, tx, ts, tb, ty);
    } else {
        norm_rows<T, 512, CONTIG>
            <<<mica_kit_grid(p->rows, 1), 512, 0, stream>>>(*p, tx, ts, tb,
                                                           ty);
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <typename T>
mica_status_t by_plan(const mica__norm_plan_t *p, const void *x,
                      const void *s, const void *b, void *y,
                      cudaStream_t stream, mica_error_t *err)
{
    /* direct indices: contiguous rows, scale and bias along them or one
     * per row */
    bool rowwise = p->nr == 0 ||
                   (p->nr == 1 && (p->rs[1][0] == 0 || p->rs[1][0] == 1) &&
                    (p->rs[2][0] == 0 || p->rs[2][0] == 1));
    if (p->contig && rowwise)
        return launch<T, true>(p, x, s, b, y, stream, err);
    return launch<T, false>(p, x, s, b, y, stream, err);
}

} /* namespace */

extern "C" mica_status_t mica__normalization_cuda(
    mica_dtype_t dtype, const mica__norm_plan_t *p, const void *x,
    const void *scale, const void *bias, void *y, void *stream,
    mica_error_t *err)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);

    if (p->rows <= 0 || p->len <= 0)
        return MICA_OK;
    switch (dtype) {
    case MICA_FLOAT32:
        return by_plan<float>(p, x, scale, bias, y, s, err);
    case MICA_FLOAT16:
        return by_plan<__half>(p, x, scale, bias, y, s, err);
    case MICA_BFLOAT16:
        return by_plan<__nv_bfloat16>(p, x, scale, bias, y, s, err);
    default:
        break;
    }
    mica_kit_host->set_error(err, "Normalization has no CUDA kernel for type "
                             "%s", mica_kit_host->dtype_name(dtype));
    return MICA_ERR_UNSUPPORTED;
}
