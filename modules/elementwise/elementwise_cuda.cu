/*
 * modules/elementwise/elementwise_cuda.cu - ElementWise kernels.
 *
 * One kernel template over input type, output type and op (the op's
 * arithmetic is the scalar code of elementwise.h, shared with the CPU
 * reference).  The launcher first folds the shapes: dimensions of size 1
 * are dropped and neighbours that walk both inputs contiguously are
 * merged.  What is left decides the path:
 *   - rank <= 1: a flat loop where each input is either contiguous or a
 *     single value; with 16-byte aligned pointers it moves 16 bytes of
 *     each contiguous input per thread and step (float4 / 8 halves);
 *   - otherwise: a strided broadcast loop over the folded dimensions,
 *     with 32-bit indices and divisions by multiply and shift when the
 *     output has fewer than 2^31 elements, and 16-byte accesses when the
 *     innermost folded dimension is a multiple of the vector width.
 * Grid-stride loops, 64-bit indices, 256 threads per block.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "elementwise.h"

namespace {

/* Load / store through the compute type: float for float32 and float16,
 * int64 for the integer types (SAT: int8 saturates).  bool is uint8_t. */
template <typename T> struct tr;

template <> struct tr<float> {
    enum { SAT = 0 };
    static __device__ __forceinline__ float ld(float x) { return x; }
    static __device__ __forceinline__ float st(float c) { return c; }
};

template <> struct tr<__half> {
    enum { SAT = 0 };
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
    enum { SAT = 1 };
    static __device__ __forceinline__ int64_t ld(int8_t x) { return x; }
    static __device__ __forceinline__ int8_t st(int64_t c)
    {
        return mica__ew_sat8(c);
    }
};

template <> struct tr<int32_t> {
    enum { SAT = 0 };
    static __device__ __forceinline__ int64_t ld(int32_t x) { return x; }
    static __device__ __forceinline__ int32_t st(int64_t c)
    {
        return mica__ew_wrap32(c);
    }
};

template <> struct tr<uint8_t> { /* bool */
    enum { SAT = 0 };
    static __device__ __forceinline__ int64_t ld(uint8_t x) { return x != 0; }
    static __device__ __forceinline__ uint8_t st(int64_t c) { return c != 0; }
    static __device__ __forceinline__ uint8_t st(float c) { return c != 0.0f; }
};

template <int OP, int SAT>
__device__ __forceinline__ float apply(float a, float b)
{
    return mica__ew_f(OP, a, b);
}

template <int OP, int SAT>
__device__ __forceinline__ int64_t apply(int64_t a, int64_t b)
{
    return mica__ew_i(OP, a, b, SAT);
}

template <typename TI, typename TO, int OP>
__device__ __forceinline__ TO ew1(TI a, TI b)
{
    return tr<TO>::st(apply<OP, tr<TI>::SAT>(tr<TI>::ld(a), tr<TI>::ld(b)));
}

/* N elements moved as one aligned access. */
template <typename T, int N> struct alignas(sizeof(T) * N) vec_t {
    T v[N];
};

/*
 * Flat: out[i] = a[i or 0] op b[i or 0].  N > 1: a, b (unless scalar)
 * and out are aligned to N elements; the last n % N elements go one by
 * one.
 */
template <typename TI, typename TO, int OP, int N>
__global__ void ew_flat(const TI *__restrict__ a, const TI *__restrict__ b,
                        TO *__restrict__ o, int64_t n, int a_scalar,
                        int b_scalar)
{
    typedef vec_t<TI, N> vi_t;
    typedef vec_t<TO, N> vo_t;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    const int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nv = n / N;
    const TI sa = a[0], sb = b[0];
    int64_t v, i;

    for (v = start; v < nv; v += step) {
        vi_t va, vb;
        vo_t vo;
        int j;
        if (a_scalar) {
#pragma unroll
            for (j = 0; j < N; j++)
                va.v[j] = sa;
        } else {
            va = reinterpret_cast<const vi_t *>(a)[v];
        }
        if (b_scalar) {
#pragma unroll
            for (j = 0; j < N; j++)
                vb.v[j] = sb;
        } else {
            vb = reinterpret_cast<const vi_t *>(b)[v];
        }
#pragma unroll
        for (j = 0; j < N; j++)
            vo.v[j] = ew1<TI, TO, OP>(va.v[j], vb.v[j]);
        reinterpret_cast<vo_t *>(o)[v] = vo;
    }
    for (i = nv * N + start; i < n; i += step)
        o[i] = ew1<TI, TO, OP>(a_scalar ? sa : a[i], b_scalar ? sb : b[i]);
}

/* Folded shape: out dims and element strides of a and b (0: broadcast). */
struct bshape {
    int rank;
    int64_t d[MICA_MAX_DIMS];
    int64_t sa[MICA_MAX_DIMS];
    int64_t sb[MICA_MAX_DIMS];
};

template <typename TI, typename TO, int OP>
__global__ void ew_bcast(const TI *__restrict__ a, const TI *__restrict__ b,
                         TO *__restrict__ o, int64_t n, bshape s)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t rem = i, ia = 0, ib = 0;
        int k;
        for (k = s.rank - 1; k >= 0; k--) {
            int64_t c = rem % s.d[k];
            rem /= s.d[k];
            ia += c * s.sa[k];
            ib += c * s.sb[k];
        }
        o[i] = ew1<TI, TO, OP>(a[ia], b[ib]);
    }
}

/*
 * Division by a run-time constant as a multiply and a shift (the method of
 * Granlund and Montgomery), for dividends below 2^31.
 */
struct udiv {
    uint32_t d, magic, shift;
};

static udiv make_udiv(uint32_t d)
{
    udiv u;
    u.d = d;
    u.shift = 0;
    while (u.shift < 31 && (1u << u.shift) < d)
        u.shift++;
    u.magic = (uint32_t)((((uint64_t)1 << 32) *
                          (((uint64_t)1 << u.shift) - d)) / d + 1);
    return u;
}

__device__ __forceinline__ uint32_t udiv_q(const udiv &u, uint32_t n)
{
    return (__umulhi(n, u.magic) + n) >> u.shift;
}

/* The folded shape in 32 bits, for outputs of fewer than 2^31 elements. */
struct bshape32 {
    int rank;
    udiv d[MICA_MAX_DIMS];
    uint32_t sa[MICA_MAX_DIMS];
    uint32_t sb[MICA_MAX_DIMS];
};

template <typename TI, typename TO, int OP>
__global__ void ew_bcast32(const TI *__restrict__ a, const TI *__restrict__ b,
                           TO *__restrict__ o, uint32_t n, bshape32 s)
{
    const uint32_t step = gridDim.x * blockDim.x;
    uint32_t i;

    for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        uint32_t rem = i, ia = 0, ib = 0;
        int k;
#pragma unroll 2
        for (k = s.rank - 1; k >= 0; k--) {
            uint32_t q = udiv_q(s.d[k], rem), c = rem - q * s.d[k].d;
            rem = q;
            ia += c * s.sa[k];
            ib += c * s.sb[k];
        }
        o[i] = ew1<TI, TO, OP>(a[ia], b[ib]);
    }
}

/*
 * The same over vectors of N elements when the innermost folded dimension
 * is a multiple of N: s counts that dimension in vectors (its strides are
 * 0 or N), so a vector never crosses a row; an input whose inner stride is
 * 0 repeats one element across the vector.
 */
template <typename TI, typename TO, int OP, int N>
__global__ void ew_bcast32v(const TI *__restrict__ a,
                            const TI *__restrict__ b, TO *__restrict__ o,
                            uint32_t nv, bshape32 s)
{
    typedef vec_t<TI, N> vi_t;
    typedef vec_t<TO, N> vo_t;
    const uint32_t step = gridDim.x * blockDim.x;
    const int in = s.rank - 1;
    const bool a_rep = s.sa[in] == 0, b_rep = s.sb[in] == 0;
    uint32_t v;

    for (v = blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += step) {
        uint32_t rem = v, ia = 0, ib = 0;
        vi_t va, vb;
        vo_t vo;
        int k, j;
#pragma unroll 2
        for (k = in; k >= 0; k--) {
            uint32_t q = udiv_q(s.d[k], rem), c = rem - q * s.d[k].d;
            rem = q;
            ia += c * s.sa[k];
            ib += c * s.sb[k];
        }
        if (a_rep) {
            const TI x = a[ia];
#pragma unroll
            for (j = 0; j < N; j++)
                va.v[j] = x;
        } else {
            va = *reinterpret_cast<const vi_t *>(a + ia);
        }
        if (b_rep) {
            const TI x = b[ib];
#pragma unroll
            for (j = 0; j < N; j++)
                vb.v[j] = x;
        } else {
            vb = *reinterpret_cast<const vi_t *>(b + ib);
        }
#pragma unroll
        for (j = 0; j < N; j++)
            vo.v[j] = ew1<TI, TO, OP>(va.v[j], vb.v[j]);
        reinterpret_cast<vo_t *>(o)[v] = vo;
    }
}

/* Strides of `in` against the output dims, 0 along broadcast dims. */
static void strides(const mica_dims_t *in, const mica_dims_t *od, int64_t *s)
{
    int64_t acc = 1;
    int k;
    for (k = in->nb_dims - 1; k >= 0; k--) {
        s[k] = in->d[k] == 1 && od->d[k] != 1 ? 0 : acc;
        acc *= in->d[k];
    }
}

/* Drop size-1 dims, merge neighbours that are contiguous in a and b. */
static void fold(const mica_tensor_desc_t *a, const mica_tensor_desc_t *b,
                 const mica_tensor_desc_t *out, bshape *s)
{
    int64_t sa[MICA_MAX_DIMS], sb[MICA_MAX_DIMS];
    int k, r = 0;

    strides(&a->dims, &out->dims, sa);
    strides(&b->dims, &out->dims, sb);
    for (k = 0; k < out->dims.nb_dims; k++) {
        int64_t d = out->dims.d[k];
        if (d == 1)
            continue;
        if (r > 0 && s->sa[r - 1] == sa[k] * d && s->sb[r - 1] == sb[k] * d) {
            s->d[r - 1] *= d;
            s->sa[r - 1] = sa[k];
            s->sb[r - 1] = sb[k];
            continue;
        }
        s->d[r] = d;
        s->sa[r] = sa[k];
        s->sb[r] = sb[k];
        r++;
    }
    s->rank = r;
}

template <typename TI, typename TO, int OP>
static mica_status_t launch(const bshape &s, int64_t n, const void *pa,
                            const void *pb, void *po, cudaStream_t stream,
                            mica_error_t *err)
{
    const TI *a = static_cast<const TI *>(pa);
    const TI *b = static_cast<const TI *>(pb);
    TO *o = static_cast<TO *>(po);
    const unsigned threads = 256;
    enum { N = 16 / sizeof(TI) };

    if (s.rank <= 1) {
        int as = s.rank == 0 || s.sa[0] == 0;
        int bs = s.rank == 0 || s.sb[0] == 0;
        bool aligned = (as || (uintptr_t)a % 16 == 0) &&
                       (bs || (uintptr_t)b % 16 == 0) &&
                       (uintptr_t)o % (sizeof(TO) * N) == 0;
        if (aligned && n >= N)
            ew_flat<TI, TO, OP, N>
                <<<mica_kit_grid(n / N, threads), threads, 0, stream>>>(
                    a, b, o, n, as, bs);
        else
            ew_flat<TI, TO, OP, 1>
                <<<mica_kit_grid(n, threads), threads, 0, stream>>>(a, b, o, n,
                                                                    as, bs);
    } else if (n < ((int64_t)1 << 31)) {
        const int in = s.rank - 1;
        bshape32 s32;
        int k;
        bool vec = s.d[in] % N == 0 &&
                   (s.sa[in] == 0 || (uintptr_t)a % 16 == 0) &&
                   (s.sb[in] == 0 || (uintptr_t)b % 16 == 0) &&
                   (uintptr_t)o % (sizeof(TO) * N) == 0;
        s32.rank = s.rank;
        for (k = 0; k < s.rank; k++) {
            s32.d[k] = make_udiv((uint32_t)s.d[k]);
            s32.sa[k] = (uint32_t)s.sa[k];
            s32.sb[k] = (uint32_t)s.sb[k];
        }
        if (vec) {
            s32.d[in] = make_udiv((uint32_t)(s.d[in] / N));
            s32.sa[in] *= N;
            s32.sb[in] *= N;
            ew_bcast32v<TI, TO, OP, N>
                <<<mica_kit_grid(n / N, threads), threads, 0, stream>>>(
                    a, b, o, (uint32_t)(n / N), s32);
        } else {
            ew_bcast32<TI, TO, OP>
                <<<mica_kit_grid(n, threads), threads, 0, stream>>>(
                    a, b, o, (uint32_t)n, s32);
        }
    } else {
        ew_bcast<TI, TO, OP>
            <<<mica_kit_grid(n, threads), threads, 0, stream>>>(a, b, o, n, s);
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

template <int OP>
static mica_status_t by_type(mica_dtype_t t, const bshape &s, int64_t n,
                             const void *a, const void *b, void *o,
                             cudaStream_t st, mica_error_t *err)
{
    constexpr bool logic =
        OP == MICA__EW_AND || OP == MICA__EW_OR || OP == MICA__EW_XOR;
    constexpr bool cmp = OP == MICA__EW_EQUAL || OP == MICA__EW_GREATER ||
                         OP == MICA__EW_LESS;

    if constexpr (logic) {
        if (t == MICA_BOOL)
            return launch<uint8_t, uint8_t, OP>(s, n, a, b, o, st, err);
    } else if constexpr (cmp) {
        switch (t) {
        case MICA_FLOAT32:
            return launch<float, uint8_t, OP>(s, n, a, b, o, st, err);
        case MICA_FLOAT16:
            return launch<__half, uint8_t, OP>(s, n, a, b, o, st, err);
        case MICA_INT8:
            return launch<int8_t, uint8_t, OP>(s, n, a, b, o, st, err);
        case MICA_INT32:
            return launch<int32_t, uint8_t, OP>(s, n, a, b, o, st, err);
        case MICA_BOOL:
            if constexpr (OP == MICA__EW_EQUAL)
                return launch<uint8_t, uint8_t, OP>(s, n, a, b, o, st, err);
            break;
        default:
            break;
        }
    } else {
        switch (t) {
        case MICA_FLOAT32:
            return launch<float, float, OP>(s, n, a, b, o, st, err);
        case MICA_FLOAT16:
            return launch<__half, __half, OP>(s, n, a, b, o, st, err);
        case MICA_INT8:
            return launch<int8_t, int8_t, OP>(s, n, a, b, o, st, err);
        case MICA_INT32:
            return launch<int32_t, int32_t, OP>(s, n, a, b, o, st, err);
        default:
            break;
        }
    }
    mica_kit_host->set_error(err, "ElementWise op %d has no CUDA kernel for "
                             "type %s", OP, mica_kit_host->dtype_name(t));
    return MICA_ERR_UNSUPPORTED;
}

} /* namespace */

extern "C" mica_status_t
mica__elementwise_cuda(int op, const mica_tensor_desc_t *a,
                       const mica_tensor_desc_t *b,
                       const mica_tensor_desc_t *out, const void *pa,
                       const void *pb, void *po, void *stream,
                       mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    int64_t n = mica_dims_volume(&out->dims);
    mica_dtype_t t = a->dtype;
    bshape s;

    if (n <= 0)
        return MICA_OK;
    fold(a, b, out, &s);
    switch (op) {
#define EW_CASE(OPV)                                                        \
    case OPV:                                                               \
        return by_type<OPV>(t, s, n, pa, pb, po, st, err);
    EW_CASE(MICA__EW_SUM)
    EW_CASE(MICA__EW_PROD)
    EW_CASE(MICA__EW_MAX)
    EW_CASE(MICA__EW_MIN)
    EW_CASE(MICA__EW_SUB)
    EW_CASE(MICA__EW_DIV)
    EW_CASE(MICA__EW_POW)
    EW_CASE(MICA__EW_FLOOR_DIV)
    EW_CASE(MICA__EW_AND)
    EW_CASE(MICA__EW_OR)
    EW_CASE(MICA__EW_XOR)
    EW_CASE(MICA__EW_EQUAL)
    EW_CASE(MICA__EW_GREATER)
    EW_CASE(MICA__EW_LESS)
#undef EW_CASE
    default:
        break;
    }
    mica_kit_host->set_error(err, "ElementWise op %d is unknown", op);
    return MICA_ERR_INVALID;
}
