/*
 * modules/unary/unary.h - the Unary family: its ops, the scalar semantics
 * shared by the CPU reference and the CUDA kernels, and the CUDA
 * launcher's prototype.
 *
 * C-compatible.  Under nvcc the scalar functions are host and device
 * functions, so both implementations compute the same thing.
 *
 * Semantics (TensorRT's IUnaryLayer):
 * - float32 and float16 compute in float (float16 widened, the result
 *   rounded to float16 once) with the C library's float functions.
 * - round is half to even (rintf in the default rounding mode).
 * - sign gives -1, 0 or 1 (and keeps -0 and NaN as they are).
 * - abs, neg and sign also take int8 and int32: computed exactly, then
 *   int32 wraps (abs and neg of -2^31 give -2^31) and int8 saturates
 *   (abs and neg of -128 give 127), as in the ElementWise module.
 * - not takes bool; isinf and isnan take float32/float16 and give bool.
 */
#ifndef MICA_MOD_UNARY_H
#define MICA_MOD_UNARY_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ops, in the order of the `op` field's enum values (TensorRT's). */
enum {
    MICA__UN_EXP = 0,
    MICA__UN_LOG,
    MICA__UN_SQRT,
    MICA__UN_RECIP,
    MICA__UN_ABS,
    MICA__UN_NEG,
    MICA__UN_SIN,
    MICA__UN_COS,
    MICA__UN_TAN,
    MICA__UN_SINH,
    MICA__UN_COSH,
    MICA__UN_ASIN,
    MICA__UN_ACOS,
    MICA__UN_ATAN,
    MICA__UN_ASINH,
    MICA__UN_ACOSH,
    MICA__UN_ATANH,
    MICA__UN_CEIL,
    MICA__UN_FLOOR,
    MICA__UN_ERF,
    MICA__UN_NOT,
    MICA__UN_SIGN,
    MICA__UN_ROUND,
    MICA__UN_ISINF,
    MICA__UN_ISNAN,
    MICA__UN_COUNT
};

/* One op on a float; isinf and isnan give 1 or 0. */
MICA_KIT_HD float mica__unary_f(int op, float x)
{
    switch (op) {
    case MICA__UN_EXP: return expf(x);
    case MICA__UN_LOG: return logf(x);
    case MICA__UN_SQRT: return sqrtf(x);
    case MICA__UN_RECIP: return 1.0f / x;
    case MICA__UN_ABS: return fabsf(x);
    case MICA__UN_NEG: return -x;
    case MICA__UN_SIN: return sinf(x);
    case MICA__UN_COS: return cosf(x);
    case MICA__UN_TAN: return tanf(x);
    case MICA__UN_SINH: return sinhf(x);
    case MICA__UN_COSH: return coshf(x);
    case MICA__UN_ASIN: return asinf(x);
    case MICA__UN_ACOS: return acosf(x);
    case MICA__UN_ATAN: return atanf(x);
    case MICA__UN_ASINH: return asinhf(x);
    case MICA__UN_ACOSH: return acoshf(x);
    case MICA__UN_ATANH: return atanhf(x);
    case MICA__UN_CEIL: return ceilf(x);
    case MICA__UN_FLOOR: return floorf(x);
    case MICA__UN_ERF: return erff(x);
    case MICA__UN_SIGN: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;
    case MICA__UN_ROUND: return rintf(x);
    case MICA__UN_ISINF: return fabsf(x) > FLT_MAX ? 1.0f : 0.0f;
    case MICA__UN_ISNAN: return x != x ? 1.0f : 0.0f;
    default: return 0.0f;
    }
}

/* One op on an integer (abs, neg, sign on int8/int32; not on bool). */
MICA_KIT_HD int64_t mica__unary_i(int op, int64_t x)
{
    switch (op) {
    case MICA__UN_ABS: return x < 0 ? -x : x;
    case MICA__UN_NEG: return -x;
    case MICA__UN_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case MICA__UN_NOT: return x == 0;
    default: return 0;
    }
}

MICA_KIT_HD int8_t mica__un_sat8(int64_t v)
{
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

MICA_KIT_HD int32_t mica__un_wrap32(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

#ifndef __CUDACC__
/* The vector kernels (unary_vec.c): y = op(x) over n elements of a
 * float32 or float16 input (y of type `to`: the input's, or bool);
 * 0 (nothing done) for other inputs. */
int mica__unary_vec(int op, mica_dtype_t ti, mica_dtype_t to, int64_t n,
                    const void *x, void *y);
#endif

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Run op on the device over n > 0 elements: out[i] = op(in[i]).  in_type
 * is the input's type, the output's follows (bool for isinf and isnan).
 */
mica_status_t mica__unary_cuda(int op, mica_dtype_t in_type, int64_t n,
                               const void *in, void *out, void *stream,
                               mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_UNARY_H */
