/*
 * modules/attention/attention_cuda.cu - the Attention kernels.
 *
 * attn_flash: float16 and bfloat16, head size D = Dv of 64 or 128, q, k,
 * v 16-byte aligned.  FlashAttention-2's scheme: a block of 4 warps takes
 * 64 queries (16 a warp, held in registers as mma A fragments) and walks
 * the keys in tiles of 64: the tile of k and v is copied to shared memory
 * (zeros past the last key), S = Q K^T by tensor-core mma.sync
 * m16n8k16 (float32 accumulators), the scale, mask, causality and
 * softcap applied to S in registers (attention.h), the online softmax
 * (running maximum and sum per row, the output rescaled when the maximum
 * grows), then O += P V by mma with P rounded to the input type.  The
 * Sq x Skv scores never reach global memory.  Causal without softcap
 * stops at the last tile a query of the block can see.
 *
 * attn_simple: every type and head size (the float32 path, and the
 * fallback): a warp per query, its q row and output accumulator in
 * shared memory, keys 32 at a time (a lane per key for the scores, then
 * the whole warp over the output's columns), the same online softmax.
 */
#include <config.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "attention.h"

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

/* The bias of (n, h, i, j) (j < skv, i < sq). */
template <typename T>
__device__ __forceinline__ float bias_at(const mica__attn_plan_t &p,
                                         const void *mask, int64_t n,
                                         int64_t h, int64_t i, int64_t j)
{
    float madd = 0.0f;
    if (p.mask == MICA__ATTN_ADD_MASK && j < p.mlen)
        madd = ld(static_cast<const T *>(mask),
                  mica__attn_moff(&p, n, h, i, j));
    return mica__attn_bias(&p, n, h, i, j,
                           static_cast<const uint8_t *>(mask), madd);
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* ---- the simple kernel ------------------------------------------------- */

#define SIMPLE_WARPS 4

/* Dynamic shared memory: per warp, d floats of q then dv of output. */
template <typename T>
__global__ void attn_simple(mica__attn_plan_t p, const T *__restrict__ q,
                            const T *__restrict__ k, const T *__restrict__ v,
                            const void *__restrict__ mask, T *__restrict__ y)
{
    extern __shared__ float sm[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *qs = sm + (int64_t)warp * (p.d + p.dv), *acc = qs + p.d;
    const int64_t total = p.b * p.hq * p.sq, group = p.hq / p.hkv;
    int64_t row, c, j0;

    for (row = (int64_t)blockIdx.x * SIMPLE_WARPS + warp; row < total;
         row += (int64_t)gridDim.x * SIMPLE_WARPS) {
        const int64_t i = row % p.sq, h = (row / p.sq) % p.hq,
                      n = row / (p.sq * p.hq);
        const int64_t kvh = n * p.hkv + h / group;
        float m = -INFINITY, l = 0.0f;

        for (c = lane; c < p.d; c += 32)
            qs[c] = ld(q, row * p.d + c);
        for (c = lane; c < p.dv; c += 32)
            acc[c] = 0.0f;
        __syncwarp();
        for (j0 = 0; j0 < p.skv; j0 += 32) {
            const int64_t j = j0 + lane;
            float s = -INFINITY, cm, nm, corr, e;
            int jj, nj = p.skv - j0 < 32 ? (int)(p.skv - j0) : 32;
            if (j < p.skv) {
                const T *kr = k + (kvh * p.skv + j) * p.d;
                float dot = 0.0f;
                for (c = 0; c < p.d; c++)
                    dot += qs[c] * ld(kr, c);
                s = mica__attn_score(&p, dot,
                                     bias_at<T>(p, mask, n, h, i, j));
            }
            cm = warp_max(s);
            nm = fmaxf(m, cm);
            if (nm == -INFINITY)
                continue; /* every key so far masked (uniform in the warp) */
            corr = __expf(m - nm);
            e = s == -INFINITY ? 0.0f : __expf(s - nm);
            l = l * corr + warp_sum(e);
            for (c = lane; c < p.dv; c += 32)
                acc[c] *= corr;
            for (jj = 0; jj < nj; jj++) {
                float pj = __shfl_sync(0xffffffffu, e, jj);
                const T *vr = v + (kvh * p.skv + j0 + jj) * p.dv;
                if (pj == 0.0f)
                    continue;
                for (c = lane; c < p.dv; c += 32)
                    acc[c] += pj * ld(vr, c);
            }
            m = nm;
        }
        for (c = lane; c < p.dv; c += 32)
            st(y, row * p.dv + c, l > 0.0f ? acc[c] / l : 0.0f);
        __syncwarp();
    }
}

template <typename T>
mica_status_t launch_simple(const mica__attn_plan_t *p, const void *q,
                            const void *k, const void *v, const void *mask,
                            void *y, cudaStream_t stream, mica_error_t *err)
{
    const int64_t rows = p->b * p->hq * p->sq;
    const size_t smem = sizeof(float) * SIMPLE_WARPS * (size_t)(p->d + p->dv);

    if (smem > 48 * 1024) {
        mica_kit_host->set_error(err, "Attention on CUDA takes a head size "
                                 "D + Dv of at most 3072, got %lld",
                                 (long long)(p->d + p->dv));
        return MICA_ERR_UNSUPPORTED;
    }
    attn_simple<T><<<mica_kit_grid(rows, SIMPLE_WARPS), 32 * SIMPLE_WARPS,
                     smem, stream>>>(*p, static_cast<const T *>(q),
                                     static_cast<const T *>(k),
                                     static_cast<const T *>(v), mask,
                                     static_cast<T *>(y));
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

/* ---- the flash kernel (tensor cores) ------------------------------------ */

#define BR 64 /* queries of a block: 4 warps of 16 */
#define BC 64 /* keys of a tile */

template <typename T> struct mma_t;

template <> struct mma_t<__half> {
    static __device__ __forceinline__ void run(float *d, const uint32_t *a,
                                               uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                       "r"(b1));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __half2 h = __floats2half2_rn(lo, hi); /* .x = lo: the low half */
        return *reinterpret_cast<uint32_t *>(&h);
    }
};

template <> struct mma_t<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float *d, const uint32_t *a,
                                               uint32_t b0, uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                       "r"(b1));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
};

/* Two 16-bit values as one register: lo in the low half. */
__device__ __forceinline__ uint32_t pack16(uint16_t lo, uint16_t hi)
{
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

template <typename T, int HD>
__global__ void __launch_bounds__(128)
    attn_flash(mica__attn_plan_t p, const T *__restrict__ q,
               const T *__restrict__ k, const T *__restrict__ v,
               const void *__restrict__ mask, T *__restrict__ y)
{
    enum { LD = HD + 8, KS = HD / 16, NT = BC / 8, OT = HD / 8 };
    __shared__ __align__(16) uint16_t ks_[BC * LD];
    __shared__ __align__(16) uint16_t vs_[BC * LD];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int gid = lane / 4, tq = lane % 4;
    const int64_t nh = (int64_t)blockIdx.z * gridDim.y + blockIdx.y;
    const int64_t n = nh / p.hq, h = nh % p.hq;
    const int64_t kvh = n * p.hkv + h / (p.hq / p.hkv);
    const int64_t q0 = (int64_t)blockIdx.x * BR;
    const int64_t r0 = q0 + warp * 16 + gid; /* rows r0 and r0 + 8 */
    const uint16_t *qh = reinterpret_cast<const uint16_t *>(q) +
                         nh * p.sq * HD;
    const uint16_t *kh = reinterpret_cast<const uint16_t *>(k) +
                         kvh * p.skv * HD;
    const uint16_t *vh = reinterpret_cast<const uint16_t *>(v) +
                         kvh * p.skv * HD;
    uint32_t qa[KS][4];
    float o[OT][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    int64_t kend = p.skv, k0;
    int a, b, e;

    if (nh >= p.b * p.hq)
        return;
    /* q's A fragments, zeros past the last query */
    for (a = 0; a < KS; a++)
        for (b = 0; b < 4; b++) {
            const int64_t r = r0 + (b & 1) * 8;
            const int c = a * 16 + (b >> 1) * 8 + tq * 2;
            qa[a][b] = r < p.sq ? *reinterpret_cast<const uint32_t *>(
                                      qh + r * HD + c)
                                : 0u;
        }
    for (a = 0; a < OT; a++)
        for (b = 0; b < 4; b++)
            o[a][b] = 0.0f;
    if (p.causal && p.softcap <= 0.0f) {
        const int64_t last = q0 + BR - 1 + p.causal_off + 1;
        kend = last < kend ? (last < 0 ? 0 : last) : kend;
    }
    for (k0 = 0; k0 < kend; k0 += BC) {
        float s[NT][4];
        __syncthreads(); /* the tile before is read */
        for (a = threadIdx.x; a < BC * HD / 8; a += blockDim.x) {
            const int r = a / (HD / 8), c = (a % (HD / 8)) * 8;
            uint4 kv4 = make_uint4(0, 0, 0, 0), vv4 = kv4;
            if (k0 + r < p.skv) {
                kv4 = *reinterpret_cast<const uint4 *>(kh + (k0 + r) * HD + c);
                vv4 = *reinterpret_cast<const uint4 *>(vh + (k0 + r) * HD + c);
            }
            *reinterpret_cast<uint4 *>(&ks_[r * LD + c]) = kv4;
            *reinterpret_cast<uint4 *>(&vs_[r * LD + c]) = vv4;
        }
        __syncthreads();
        /* S = Q K^T */
        for (a = 0; a < NT; a++)
            for (b = 0; b < 4; b++)
                s[a][b] = 0.0f;
        for (a = 0; a < KS; a++)
            for (b = 0; b < NT; b++) {
                const uint16_t *kr = &ks_[(b * 8 + gid) * LD + a * 16 + tq * 2];
                mma_t<T>::run(s[b], qa[a],
                              *reinterpret_cast<const uint32_t *>(kr),
                              *reinterpret_cast<const uint32_t *>(kr + 8));
            }
        /* scores, then the online softmax of rows r0 and r0 + 8 */
        for (e = 0; e < 2; e++) {
            const int64_t r = r0 + e * 8;
            float mx = -INFINITY, nm, corr, sum = 0.0f;
            for (a = 0; a < NT; a++)
                for (b = 0; b < 2; b++) {
                    const int64_t j = k0 + a * 8 + tq * 2 + b;
                    float *sv = &s[a][e * 2 + b];
                    if (r >= p.sq || j >= p.skv)
                        *sv = -INFINITY;
                    else
                        *sv = mica__attn_score(
                            &p, *sv, bias_at<T>(p, mask, n, h, r, j));
                    mx = fmaxf(mx, *sv);
                }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            nm = fmaxf(m[e], mx);
            corr = nm == -INFINITY ? 1.0f : __expf(m[e] - nm);
            for (a = 0; a < NT; a++)
                for (b = 0; b < 2; b++) {
                    float *sv = &s[a][e * 2 + b];
                    *sv = *sv == -INFINITY ? 0.0f : __expf(*sv - nm);
                    sum += *sv;
                }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            l[e] = l[e] * corr + sum;
            m[e] = nm;
            for (a = 0; a < OT; a++) {
                o[a][e * 2] *= corr;
                o[a][e * 2 + 1] *= corr;
            }
        }
        /* O += P V, 16 keys at a time */
        for (a = 0; a < BC / 16; a++) {
            uint32_t pa[4];
            pa[0] = mma_t<T>::pack(s[2 * a][0], s[2 * a][1]);
            pa[1] = mma_t<T>::pack(s[2 * a][2], s[2 * a][3]);
            pa[2] = mma_t<T>::pack(s[2 * a + 1][0], s[2 * a + 1][1]);
            pa[3] = mma_t<T>::pack(s[2 * a + 1][2], s[2 * a + 1][3]);
            for (b = 0; b < OT; b++) {
                const uint16_t *vc = &vs_[(a * 16 + tq * 2) * LD + b * 8 + gid];
                uint32_t b0 = pack16(vc[0], vc[LD]);
                uint32_t b1 = pack16(vc[8 * LD], vc[9 * LD]);
                mma_t<T>::run(o[b], pa, b0, b1);
            }
        }
    }
    for (e = 0; e < 2; e++) {
        const int64_t r = r0 + e * 8;
        const float inv = l[e] > 0.0f ? 1.0f / l[e] : 0.0f;
        T *yr = y + (nh * p.sq + r) * HD;
        if (r >= p.sq)
            continue;
        for (a = 0; a < OT; a++) {
            st(yr, a * 8 + tq * 2, o[a][e * 2] * inv);
            st(yr, a * 8 + tq * 2 + 1, o[a][e * 2 + 1] * inv);
        }
    }
}

template <typename T, int HD>
mica_status_t launch_flash(const mica__attn_plan_t *p, const void *q,
                           const void *k, const void *v, const void *mask,
                           void *y, cudaStream_t stream, mica_error_t *err)
{
    const int64_t nh = p->b * p->hq, ymax = 65535;
    const int64_t gy = nh < ymax ? nh : ymax, gz = (nh + gy - 1) / gy;
    dim3 grid((unsigned)((p->sq + BR - 1) / BR), (unsigned)gy, (unsigned)gz);

    if (gz > 65535 || (p->sq + BR - 1) / BR > 0x7fffffff) {
        mica_kit_host->set_error(err, "Attention on CUDA: %lld heads of %lld "
                                 "queries are too many for one grid",
                                 (long long)nh, (long long)p->sq);
        return MICA_ERR_UNSUPPORTED;
    }
    attn_flash<T, HD><<<grid, 128, 0, stream>>>(
        *p, static_cast<const T *>(q), static_cast<const T *>(k),
        static_cast<const T *>(v), mask, static_cast<T *>(y));
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

int aligned16(const void *a) { return (uintptr_t)a % 16 == 0; }

template <typename T>
mica_status_t by_shape(const mica__attn_plan_t *p, const void *q,
                       const void *k, const void *v, const void *mask,
                       void *y, int flash, cudaStream_t stream,
                       mica_error_t *err)
{
    if (flash && p->d == p->dv && aligned16(q) && aligned16(k) &&
        aligned16(v) && aligned16(y)) {
        if (p->d == 64)
            return launch_flash<T, 64>(p, q, k, v, mask, y, stream, err);
        if (p->d == 128)
            return launch_flash<T, 128>(p, q, k, v, mask, y, stream, err);
    }
    return launch_simple<T>(p, q, k, v, mask, y, stream, err);
}

} /* namespace */

extern "C" mica_status_t mica__attention_cuda(mica_dtype_t dtype,
                                              const mica__attn_plan_t *p,
                                              const void *q, const void *k,
                                              const void *v, const void *mask,
                                              void *y, int flash, void *stream,
                                              mica_error_t *err)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);

    if (p->b * p->hq * p->sq * p->dv == 0)
        return MICA_OK;
    switch (dtype) {
    case MICA_FLOAT32:
        return launch_simple<float>(p, q, k, v, mask, y, s, err);
    case MICA_FLOAT16:
        return by_shape<__half>(p, q, k, v, mask, y, flash, s, err);
    case MICA_BFLOAT16:
        return by_shape<__nv_bfloat16>(p, q, k, v, mask, y, flash, s, err);
    default:
        break;
    }
    mica_kit_host->set_error(err, "Attention has no CUDA kernel for type %s",
                             mica_kit_host->dtype_name(dtype));
    return MICA_ERR_UNSUPPORTED;
}
