/*
 * modules/common/kit_vec.h - the element kernels of the CPU `vec`
 * implementations (ElementWise, Activation, Unary, ParametricReLU, Scale,
 * Select, Identity's casts): the drivers that walk tensors in memory
 * order, and the vector arithmetic an operation's kernel is written in.
 * Part of the module kit's CPU helpers (libmicamodkit_cpu.la); not
 * installed.
 *
 * A kernel computes on contiguous float32 runs; the drivers give it
 * those runs, whatever the tensors are:
 * - mica__vec_map: one input, one output of the same volume and layout
 *   (element i of one is element i of the other): runs of up to
 *   MICA__VEC_BLOCK elements.
 * - mica__vec_binary (and _ternary): inputs broadcast to the output
 *   (TensorRT's rule: each dimension equal or 1), each tensor in its own
 *   memory format (linear or channels last, mica_kit_strides).  The
 *   output's dimensions are put in its memory order, each input's
 *   strides follow, dimensions that lie one after the other in every
 *   tensor are merged, and the innermost becomes the run: along it each
 *   input is contiguous or one repeated value (a scalar, a row or a
 *   channel broadcast), which the kernel takes as a stride of 1 or 0.
 *   Index arithmetic happens once per run, never per element.  An input
 *   with another stride along the run (formats that disagree) is first
 *   gathered into a contiguous block.
 * float16 tensors (and outputs of other types: bool) go through float32
 * blocks converted on the way in and out (F16C where the CPU has it).
 * Large tensors are split between threads (kit_cpu.h's mica__cpu_for);
 * small ones run on the calling thread.
 *
 * The vector type holds MICA__VL (4) float32: GCC's vector extensions
 * of 16 bytes, one SSE register on x86-64's baseline (wider generic
 * vectors would be split, and their comparisons done lane by lane).  Helpers here
 * give, lane by lane, exactly what the C library gives for the same
 * scalar (fmaxf, fminf, floorf), so that a `vec` kernel and the
 * reference agree on NaN, infinities and signed zeros; mica__v_exp,
 * _tanh and _sigmoid are within a few ulp of expf, tanhf and the
 * reference's 1 / (1 + expf(-x)), with the same special values.
 */
#ifndef MICA_KIT_VEC_H
#define MICA_KIT_VEC_H

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "kit_cpu.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per run the kernels get at most (and per staging block). */
#define MICA__VEC_BLOCK 1024

/* ---- the vector type ----------------------------------------------- */

/* always inlined: the kernels are loops of vector instructions */
#define MICA__V static inline __attribute__((always_inline))

#define MICA__VL 4
typedef float mica__vf __attribute__((vector_size(16)));
typedef int32_t mica__vi __attribute__((vector_size(16)));

MICA__V mica__vf mica__v_load(const float *p)
{
    mica__vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

MICA__V void mica__v_store(float *p, mica__vf v)
{
    memcpy(p, &v, sizeof v);
}

MICA__V mica__vf mica__v_set1(float x)
{
    mica__vf v = {x, x, x, x};
    return v;
}

MICA__V mica__vi mica__v_bits(mica__vf v)
{
    return (mica__vi)v;
}

MICA__V mica__vf mica__v_float(mica__vi v)
{
    return (mica__vf)v;
}

/* Lane by lane: m (all ones or zero per lane) ? a : b. */
MICA__V mica__vf mica__v_sel(mica__vi m, mica__vf a, mica__vf b)
{
    return (mica__vf)((m & (mica__vi)a) | (~m & (mica__vi)b));
}

/* fmaxf / fminf as ElementWise defines them (mica__ew_fmax): a when a
 * is the larger (smaller) or b is NaN, +0 above -0, else b. */
MICA__V mica__vf mica__v_max(mica__vf a, mica__vf b)
{
    return mica__v_sel((a > b) | (b != b) | ((a == b) & ((mica__vi)a >= 0)),
                       a, b);
}

MICA__V mica__vf mica__v_min(mica__vf a, mica__vf b)
{
    return mica__v_sel((a < b) | (b != b) | ((a == b) & ((mica__vi)a < 0)),
                       a, b);
}

MICA__V mica__vf mica__v_abs(mica__vf a)
{
    return (mica__vf)((mica__vi)a & 0x7fffffff);
}

/* floorf: exact, -0 and NaN and infinities kept. */
MICA__V mica__vf mica__v_floor(mica__vf x)
{
    mica__vf t = __builtin_convertvector(
        __builtin_convertvector(x, mica__vi), mica__vf);
    mica__vi big = ~(mica__v_abs(x) < mica__v_set1(8388608.0f));
    t = mica__v_sel(t > x, t - 1.0f, t);
    /* a zero result keeps x's sign (floorf(-0) is -0) */
    t = (mica__vf)((mica__vi)t |
                    ((t == 0.0f) & ((mica__vi)x & (int32_t)0x80000000)));
    return mica__v_sel(big, x, t);
}

/* ceilf, as floor. */
MICA__V mica__vf mica__v_ceil(mica__vf x)
{
    return -mica__v_floor(-x);
}

/* expf within 2 ulp; overflow gives +inf, -inf gives 0, denormal
 * results kept, NaN stays NaN. */
MICA__V mica__vf mica__v_exp(mica__vf x)
{
    mica__vf c, fx, r, z, y;
    mica__vi n, n1, n2;

#if defined(__SSE2__)
    /* clamp (NaN handled at the end) and n = round(x / ln 2) with SSE's
     * own min, max and rounding conversion */
    c = (mica__vf)_mm_min_ps((__m128)x, _mm_set1_ps(89.0f));
    c = (mica__vf)_mm_max_ps((__m128)c, _mm_set1_ps(-104.0f));
    n = (mica__vi)_mm_cvtps_epi32((__m128)(c * 1.44269504088896341f));
    fx = __builtin_convertvector(n, mica__vf);
#else
    c = mica__v_max(mica__v_min(x, mica__v_set1(89.0f)),
                    mica__v_set1(-104.0f));
    fx = mica__v_floor(c * 1.44269504088896341f + 0.5f);
    n = __builtin_convertvector(fx, mica__vi);
#endif
    r = c - fx * 0.693359375f + fx * 2.12194440e-4f;
    z = r * r;
    y = ((((1.9875691500E-4f * r + 1.3981999507E-3f) * r +
           8.3334519073E-3f) * r + 4.1665795894E-2f) * r +
         1.6666665459E-1f) * r + 5.0000001201E-1f;
    y = y * z + r + 1.0f;
    /* times 2^n in two steps, so that results below FLT_MIN come out
     * as denormals and above FLT_MAX as infinity */
    n1 = n >> 1;
    n2 = n - n1;
    y = y * (mica__vf)((n1 + 127) << 23) * (mica__vf)((n2 + 127) << 23);
    return mica__v_sel(x != x, x, y);
}

/* The reference's sigmoid, 1 / (1 + expf(-x)). */
MICA__V mica__vf mica__v_sigmoid(mica__vf x)
{
    return 1.0f / (1.0f + mica__v_exp(-x));
}

/* tanhf within 3 ulp; tanh(-0) = -0, +-inf give +-1, NaN stays. */
MICA__V mica__vf mica__v_tanh(mica__vf x)
{
    mica__vf a = mica__v_abs(x), z = x * x, p, e, big;
    mica__vi sign = (mica__vi)x & (int32_t)0x80000000;

    p = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z -
           5.37397155531E-2f) * z + 1.33314422036E-1f) * z -
         3.33332819422E-1f) * z * x + x;
    e = mica__v_exp(mica__v_min(a, mica__v_set1(20.0f)) * 2.0f);
    big = 1.0f - 2.0f / (e + 1.0f);
    big = (mica__vf)((mica__vi)big | sign);
    /* below 2^-12, tanh(x) rounds to x (and -0 stays -0) */
    p = mica__v_sel(a < 2.44140625e-4f, x, p);
    return mica__v_sel(x != x, x, mica__v_sel(a < 0.625f, p, big));
}

/* ---- kernels ------------------------------------------------------- */

/* y[i] = f(x[i]) for i < n (runs of at most MICA__VEC_BLOCK). */
typedef void mica__vec_map_fn(const void *ctx, const float *x, float *y,
                              int64_t n);

/* y[i] = f(a[i * sa], b[i * sb]) for i < n; sa, sb are 0 or 1. */
typedef void mica__vec_bin_fn(const void *ctx, const float *a, int64_t sa,
                              const float *b, int64_t sb, float *y,
                              int64_t n);

/* y[i] = f(c[i * sc], a[i * sa], b[i * sb]); strides 0 or 1. */
typedef void mica__vec_ter_fn(const void *ctx, const float *c, int64_t sc,
                              const float *a, int64_t sa, const float *b,
                              int64_t sb, float *y, int64_t n);

/*
 * A binary kernel `name` from a vector expression VOP(a, b) of
 * mica__vf values (ctx in scope as `ctx`): the contiguous and the
 * broadcast cases each in a loop of its own, the tail through the same
 * expression on a padded vector, so that every element is computed
 * alike.
 */
#define MICA__VEC_BIN_KERNEL(name, VOP)                                     \
    static void name(const void *ctx, const float *a, int64_t sa,           \
                     const float *b, int64_t sb, float *y, int64_t n)       \
    {                                                                       \
        int64_t i = 0;                                                      \
        (void)ctx;                                                          \
        if (sa && sb) {                                                     \
            for (; i + MICA__VL <= n; i += MICA__VL) {                                    \
                mica__vf va = mica__v_load(a + i);                        \
                mica__vf vb = mica__v_load(b + i);                        \
                mica__v_store(y + i, VOP(va, vb));                         \
            }                                                               \
        } else if (sa) {                                                    \
            mica__vf vb = mica__v_set1(b[0]);                             \
            for (; i + MICA__VL <= n; i += MICA__VL) {                                    \
                mica__vf va = mica__v_load(a + i);                        \
                mica__v_store(y + i, VOP(va, vb));                         \
            }                                                               \
        } else if (sb) {                                                    \
            mica__vf va = mica__v_set1(a[0]);                             \
            for (; i + MICA__VL <= n; i += MICA__VL) {                                    \
                mica__vf vb = mica__v_load(b + i);                        \
                mica__v_store(y + i, VOP(va, vb));                         \
            }                                                               \
        }                                                                   \
        if (i < n) {                                                        \
            float ta[8] = {0}, tb[8] = {0}, ty[8];                          \
            int64_t j;                                                      \
            for (j = 0; i + j < n; j++) {                                   \
                ta[j] = a[(i + j) * sa];                                    \
                tb[j] = b[(i + j) * sb];                                    \
            }                                                               \
            {                                                               \
                mica__vf va = mica__v_load(ta), vb = mica__v_load(tb);   \
                mica__v_store(ty, VOP(va, vb));                            \
            }                                                               \
            memcpy(y + i, ty, (size_t)(n - i) * sizeof *y);                 \
        }                                                                   \
    }

/* A map kernel `name` from a vector expression VOP(x) (ctx in scope). */
#define MICA__VEC_MAP_KERNEL(name, VOP)                                     \
    static void name(const void *ctx, const float *x, float *y, int64_t n)  \
    {                                                                       \
        int64_t i = 0;                                                      \
        (void)ctx;                                                          \
        for (; i + MICA__VL <= n; i += MICA__VL) {                                        \
            mica__vf vx = mica__v_load(x + i);                            \
            mica__v_store(y + i, VOP(vx));                                 \
        }                                                                   \
        if (i < n) {                                                        \
            float tx[8] = {0}, ty[8];                                       \
            mica__vf vx;                                                   \
            memcpy(tx, x + i, (size_t)(n - i) * sizeof *x);                 \
            vx = mica__v_load(tx);                                         \
            mica__v_store(ty, VOP(vx));                                    \
            memcpy(y + i, ty, (size_t)(n - i) * sizeof *y);                 \
        }                                                                   \
    }

/* ---- drivers ------------------------------------------------------- */

/* Whether the drivers take tensors of dtype t as float data (float32,
 * float16) or, as an output only, bool (a kernel's non-zero is 1). */
MICA_KIT_API int mica__vec_float(mica_dtype_t t);

/*
 * y = f(x) over n elements: x of dtype tx (float32 or float16), y of ty
 * (float32, float16 or bool); x and y may be the same buffer.
 */
MICA_KIT_API void mica__vec_map(mica__vec_map_fn *fn, const void *ctx,
                                int64_t n, mica_dtype_t tx, const void *x,
                                mica_dtype_t ty, void *y);

/*
 * y = f(a, b) with broadcasting and any formats (see the file's
 * comment): a, b float32 or float16 of one rank, each dimension equal
 * to y's or 1 (checked by the caller: mica_kit_broadcast_view); y
 * float32, float16 or bool.  MICA_ERR_UNSUPPORTED (err set) for a
 * format mica_kit_strides does not know.
 */
MICA_KIT_API mica_status_t mica__vec_binary(
    mica__vec_bin_fn *fn, const void *ctx, const mica_tensor_desc_t *a,
    const void *pa, const mica_tensor_desc_t *b, const void *pb,
    const mica_tensor_desc_t *y, void *py, mica_error_t *err);

/* As mica__vec_binary with three inputs: y = f(c, a, b) (Select). */
MICA_KIT_API mica_status_t mica__vec_ternary(
    mica__vec_ter_fn *fn, const void *ctx, const mica_tensor_desc_t *c,
    const void *pc, const mica_tensor_desc_t *a, const void *pa,
    const mica_tensor_desc_t *b, const void *pb, const mica_tensor_desc_t *y,
    void *py, mica_error_t *err);

/* n values of dtype `from` (float32, float16, bool, int8, int32, int64,
 * uint8) as float32 into dst, and back (to: float32, float16, bool). */
MICA_KIT_API void mica__vec_to_f32(float *dst, mica_dtype_t from,
                                   const void *src, int64_t n);
MICA_KIT_API void mica__vec_from_f32(void *dst, mica_dtype_t to,
                                     const float *src, int64_t n);

/*
 * y[i] = exp(x[i]), sigmoid(x[i]) = 1 / (1 + exp(-x[i])), tanh(x[i]) for
 * i < n, x and y the same or apart: the functions above, on eight lanes
 * with AVX2 and FMA where the CPU has them (kit_vec_math.c).
 */
MICA_KIT_API void mica__vec_exp_n(const float *x, float *y, int64_t n);
MICA_KIT_API void mica__vec_sigmoid_n(const float *x, float *y, int64_t n);
MICA_KIT_API void mica__vec_tanh_n(const float *x, float *y, int64_t n);

/*
 * dst (dense, in the order of dims) = the elements of src at
 * sum(c_k * strides[k]) for the coordinates c of dims[rank] (strides in
 * elements of esize bytes: 1, 2, 4 or 8, any sign): kit_gather.c.
 */
MICA_KIT_API void mica__vec_gather(const void *src, int32_t rank,
                                   const int64_t *dims,
                                   const int64_t *strides, void *dst,
                                   size_t esize);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_VEC_H */
