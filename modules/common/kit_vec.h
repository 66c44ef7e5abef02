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
 * The vector type holds 8 float32 (GCC's vector extensions: AVX where
 * the compiler targets it, two SSE registers otherwise).  Helpers here
 * give, lane by lane, exactly what the C library gives for the same
 * scalar (fmaxf, fminf, floorf), so that a `vec` kernel and the
 * reference agree on NaN, infinities and signed zeros; mica__v8_exp,
 * _tanh and _sigmoid are within a few ulp of expf, tanhf and the
 * reference's 1 / (1 + expf(-x)), with the same special values.
 */
#ifndef MICA_KIT_VEC_H
#define MICA_KIT_VEC_H

#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "kit_cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per run the kernels get at most (and per staging block). */
#define MICA__VEC_BLOCK 1024

/* ---- the vector type ----------------------------------------------- */

/* GCC warns that passing 32-byte vectors by value without AVX differs
 * from the AVX calling convention: these helpers are static inline,
 * never called across objects built with other flags. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef float mica__v8f __attribute__((vector_size(32)));
typedef int32_t mica__v8i __attribute__((vector_size(32)));

static inline mica__v8f mica__v8_load(const float *p)
{
    mica__v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void mica__v8_store(float *p, mica__v8f v)
{
    memcpy(p, &v, sizeof v);
}

static inline mica__v8f mica__v8_set1(float x)
{
    mica__v8f v = {x, x, x, x, x, x, x, x};
    return v;
}

static inline mica__v8i mica__v8_bits(mica__v8f v)
{
    return (mica__v8i)v;
}

static inline mica__v8f mica__v8_float(mica__v8i v)
{
    return (mica__v8f)v;
}

/* Lane by lane: m (all ones or zero per lane) ? a : b. */
static inline mica__v8f mica__v8_sel(mica__v8i m, mica__v8f a, mica__v8f b)
{
    return (mica__v8f)((m & (mica__v8i)a) | (~m & (mica__v8i)b));
}

/* glibc's fmaxf / fminf: a when a >= b (a <= b) or b is NaN, else b. */
static inline mica__v8f mica__v8_max(mica__v8f a, mica__v8f b)
{
    return mica__v8_sel((a >= b) | (b != b), a, b);
}

static inline mica__v8f mica__v8_min(mica__v8f a, mica__v8f b)
{
    return mica__v8_sel((a <= b) | (b != b), a, b);
}

static inline mica__v8f mica__v8_abs(mica__v8f a)
{
    return (mica__v8f)((mica__v8i)a & 0x7fffffff);
}

/* floorf: exact, -0 and NaN and infinities kept. */
static inline mica__v8f mica__v8_floor(mica__v8f x)
{
    mica__v8f t = __builtin_convertvector(
        __builtin_convertvector(x, mica__v8i), mica__v8f);
    mica__v8i big = ~(mica__v8_abs(x) < mica__v8_set1(8388608.0f));
    t = mica__v8_sel(t > x, t - 1.0f, t);
    /* a zero result keeps x's sign (floorf(-0) is -0) */
    t = (mica__v8f)((mica__v8i)t |
                    ((t == 0.0f) & ((mica__v8i)x & (int32_t)0x80000000)));
    return mica__v8_sel(big, x, t);
}

/* ceilf, as floor. */
static inline mica__v8f mica__v8_ceil(mica__v8f x)
{
    return -mica__v8_floor(-x);
}

/* expf within 2 ulp; overflow gives +inf, -inf gives 0, denormal
 * results kept, NaN stays NaN. */
static inline mica__v8f mica__v8_exp(mica__v8f x)
{
    mica__v8f c = mica__v8_max(mica__v8_min(x, mica__v8_set1(89.0f)),
                               mica__v8_set1(-104.0f));
    mica__v8f fx = mica__v8_floor(c * 1.44269504088896341f + 0.5f);
    mica__v8f r = c - fx * 0.693359375f + fx * 2.12194440e-4f;
    mica__v8f z = r * r, y;
    mica__v8i n = __builtin_convertvector(fx, mica__v8i), n1, n2;

    y = ((((1.9875691500E-4f * r + 1.3981999507E-3f) * r +
           8.3334519073E-3f) * r + 4.1665795894E-2f) * r +
         1.6666665459E-1f) * r + 5.0000001201E-1f;
    y = y * z + r + 1.0f;
    /* times 2^n in two steps, so that results below FLT_MIN come out
     * as denormals and above FLT_MAX as infinity */
    n1 = n >> 1;
    n2 = n - n1;
    y = y * (mica__v8f)((n1 + 127) << 23) * (mica__v8f)((n2 + 127) << 23);
    return mica__v8_sel(x != x, x, y);
}

/* The reference's sigmoid, 1 / (1 + expf(-x)). */
static inline mica__v8f mica__v8_sigmoid(mica__v8f x)
{
    return 1.0f / (1.0f + mica__v8_exp(-x));
}

/* tanhf within 3 ulp; tanh(-0) = -0, +-inf give +-1, NaN stays. */
static inline mica__v8f mica__v8_tanh(mica__v8f x)
{
    mica__v8f a = mica__v8_abs(x), z = x * x, p, e, big;
    mica__v8i sign = (mica__v8i)x & (int32_t)0x80000000;

    p = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z -
           5.37397155531E-2f) * z + 1.33314422036E-1f) * z -
         3.33332819422E-1f) * z * x + x;
    e = mica__v8_exp(mica__v8_min(a, mica__v8_set1(20.0f)) * 2.0f);
    big = 1.0f - 2.0f / (e + 1.0f);
    big = (mica__v8f)((mica__v8i)big | sign);
    return mica__v8_sel(x != x, x, mica__v8_sel(a < 0.625f, p, big));
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
 * mica__v8f values (ctx in scope as `ctx`): the contiguous and the
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
            for (; i + 8 <= n; i += 8) {                                    \
                mica__v8f va = mica__v8_load(a + i);                        \
                mica__v8f vb = mica__v8_load(b + i);                        \
                mica__v8_store(y + i, VOP(va, vb));                         \
            }                                                               \
        } else if (sa) {                                                    \
            mica__v8f vb = mica__v8_set1(b[0]);                             \
            for (; i + 8 <= n; i += 8) {                                    \
                mica__v8f va = mica__v8_load(a + i);                        \
                mica__v8_store(y + i, VOP(va, vb));                         \
            }                                                               \
        } else if (sb) {                                                    \
            mica__v8f va = mica__v8_set1(a[0]);                             \
            for (; i + 8 <= n; i += 8) {                                    \
                mica__v8f vb = mica__v8_load(b + i);                        \
                mica__v8_store(y + i, VOP(va, vb));                         \
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
                mica__v8f va = mica__v8_load(ta), vb = mica__v8_load(tb);   \
                mica__v8_store(ty, VOP(va, vb));                            \
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
        for (; i + 8 <= n; i += 8) {                                        \
            mica__v8f vx = mica__v8_load(x + i);                            \
            mica__v8_store(y + i, VOP(vx));                                 \
        }                                                                   \
        if (i < n) {                                                        \
            float tx[8] = {0}, ty[8];                                       \
            mica__v8f vx;                                                   \
            memcpy(tx, x + i, (size_t)(n - i) * sizeof *x);                 \
            vx = mica__v8_load(tx);                                         \
            mica__v8_store(ty, VOP(vx));                                    \
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

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_VEC_H */
