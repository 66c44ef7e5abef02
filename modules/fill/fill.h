/*
 * modules/fill/fill.h - the Fill family: the per-element arithmetic shared
 * by the CPU reference and the CUDA kernel, and the launcher's prototype.
 *
 * C-compatible.  Under nvcc the scalar functions are host and device
 * functions, so both implementations compute bit-identical values:
 * - linspace on float32 and float16: the value is accumulated in double as
 *   alpha, then fma(beta[k], i_k, acc) for every axis k (fma is correctly
 *   rounded on both sides, so no contraction can differ), then rounded to
 *   float once (and to float16 from that float).  On int32: 64-bit
 *   integer arithmetic, stored wrapped to 32 bits.
 * - random_uniform: u = the top 53 bits of splitmix64(seed + i * golden)
 *   scaled to [0, 1), value = fma(beta - alpha, u, alpha) in double,
 *   rounded to the output type; a value that rounds up to beta (or past
 *   it) is replaced by the largest value of the type below beta, so the
 *   result lies in [alpha, beta) whenever alpha < beta.  `i` is the
 *   row-major element index: the same element always gets the same value,
 *   on every device and every run (TensorRT has no seed to set).
 */
#ifndef MICA_MOD_FILL_H
#define MICA_MOD_FILL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mica/kit.h"
#include "mica/kit_half.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ops, in the order of the `op` field's enum values. */
enum {
    MICA__FILL_LINSPACE = 0,
    MICA__FILL_RANDOM_UNIFORM = 1,
    MICA__FILL_COUNT
};

/* The fixed seed of random_uniform. */
#define MICA__FILL_SEED 0x6d6963612d66696cull /* "mica-fil" */

/*
 * What one run needs besides the pointers: the output's type and dims,
 * alpha and the per-axis betas as doubles (float outputs) and as integers
 * (int32 output).  For random_uniform only beta[0] is used.
 */
typedef struct mica__fill_args {
    int32_t op;
    int32_t rank;
    mica_dtype_t dtype;
    int32_t reserved_;
    int64_t dims[MICA_MAX_DIMS];
    double alpha, beta[MICA_MAX_DIMS];
    int64_t ialpha, ibeta[MICA_MAX_DIMS];
} mica__fill_args_t;

/* splitmix64's finalizer: a bijective 64-bit mix. */
MICA_KIT_HD uint64_t mica__fill_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* The uniform number of element i, in [0, 1), with 53 random bits. */
MICA_KIT_HD double mica__fill_unit(int64_t i)
{
    uint64_t h = mica__fill_mix(MICA__FILL_SEED +
                                (uint64_t)i * 0x9e3779b97f4a7c15ull);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* The largest float below the finite float with bits b. */
MICA_KIT_HD uint32_t mica__fill_below32(uint32_t b)
{
    if ((b & 0x7fffffffu) == 0)
        return 0x80000001u; /* below +-0: the smallest negative */
    return (b & 0x80000000u) ? b + 1 : b - 1;
}

/* The largest float16 below the finite float16 with bits b. */
MICA_KIT_HD uint16_t mica__fill_below16(uint16_t b)
{
    if ((b & 0x7fffu) == 0)
        return 0x8001u;
    return (uint16_t)((b & 0x8000u) ? b + 1 : b - 1);
}

/* The double value of a float linspace element at coordinates c. */
MICA_KIT_HD double mica__fill_linspace(const mica__fill_args_t *a,
                                         const int64_t *c)
{
    double acc = a->alpha;
    int32_t k;
    for (k = 0; k < a->rank; k++)
        acc = fma(a->beta[k], (double)c[k], acc);
    return acc;
}

/* The int32 linspace element at coordinates c (wrapped). */
MICA_KIT_HD int32_t mica__fill_linspace_i(const mica__fill_args_t *a,
                                            const int64_t *c)
{
    uint64_t acc = (uint64_t)a->ialpha;
    int32_t k;
    for (k = 0; k < a->rank; k++)
        acc += (uint64_t)a->ibeta[k] * (uint64_t)c[k];
    return (int32_t)(uint32_t)acc;
}

/* The double value of random_uniform element i. */
MICA_KIT_HD double mica__fill_uniform(const mica__fill_args_t *a,
                                        int64_t i)
{
    return fma(a->beta[0] - a->alpha, mica__fill_unit(i), a->alpha);
}

/*
 * A random_uniform float32 value v kept below beta: if v rounded to
 * float is not below (float)beta while alpha < beta, the float just
 * below (float)beta.
 */
MICA_KIT_HD float mica__fill_clamp32(const mica__fill_args_t *a, double v)
{
    float f = (float)v, fb = (float)a->beta[0];
    if (a->alpha < a->beta[0] && !(f < fb) && isfinite(fb))
        f = mica_kit_bits_float(mica__fill_below32(mica_kit_float_bits(fb)));
    return f;
}

/* The same for float16: the float16 bits of v, kept below beta. */
MICA_KIT_HD uint16_t mica__fill_clamp16(const mica__fill_args_t *a, double v)
{
    uint16_t x = mica_kit_float_to_half((float)v);
    uint16_t hb = mica_kit_float_to_half((float)a->beta[0]);
    float fb = mica_kit_half_to_float(hb);
    if (a->alpha < a->beta[0] && !(mica_kit_half_to_float(x) < fb) &&
        isfinite(fb))
        x = mica__fill_below16(hb);
    return x;
}

/* Element i of a dynamic alpha or beta input of type t (float32, float16,
 * int32, int64), as a double; and of an integer one, as int64. */
MICA_KIT_HD double mica__fill_param(const void *p, mica_dtype_t t, int64_t i)
{
    switch (t) {
    case MICA_FLOAT16: return mica_kit_half_to_float(((const uint16_t *)p)[i]);
    case MICA_INT32: return ((const int32_t *)p)[i];
    case MICA_INT64: return (double)((const int64_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}

MICA_KIT_HD int64_t mica__fill_iparam(const void *p, mica_dtype_t t,
                                      int64_t i)
{
    return t == MICA_INT64 ? ((const int64_t *)p)[i]
                           : ((const int32_t *)p)[i];
}

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Fill `out` (device memory, volume of a->dims > 0 elements of a->dtype)
 * on `stream`.  alpha_p / beta_p: device pointers to the alpha (one
 * element) and beta (one per axis for linspace, one for random_uniform)
 * inputs, of types alpha_t / beta_t, or NULL to use a->alpha / a->beta.
 */
mica_status_t mica__fill_cuda(const mica__fill_args_t *a,
                              const void *alpha_p, mica_dtype_t alpha_t,
                              const void *beta_p, mica_dtype_t beta_t,
                              void *out, void *stream, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_FILL_H */
