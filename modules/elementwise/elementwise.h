/*
 * modules/elementwise/elementwise.h - the ElementWise family: its ops, the
 * scalar semantics shared by the CPU reference and the CUDA kernels, and
 * the CUDA launcher's prototype.
 *
 * C-compatible.  Under nvcc the scalar functions are host and device
 * functions, so both implementations compute exactly the same thing.
 *
 * Semantics (TensorRT's IElementWiseLayer, with choices of our own where
 * TensorRT leaves a case undefined):
 * - float32 and float16 compute in float (float16 inputs are widened, the
 *   result is rounded to float16 once).  max and min are fmaxf/fminf: a NaN
 *   loses against a number; and +0 is greater than -0 (IEEE 754-2019's
 *   maximumNumber, minimumNumber), where the C library leaves the sign of
 *   a zero result to the implementation: mica__ew_fmax / mica__ew_fmin.
 * - int32 and int8 compute in 64-bit integers.  Storing an int32 result
 *   wraps (two's complement); storing an int8 result saturates to
 *   [-128, 127] (int8 is treated as integers with scale 1).
 * - div on integers truncates toward zero (TensorRT); floor_div floors.
 *   Integer division by zero is defined to give 0 (div and floor_div);
 *   0 to a negative power also gives 0.  pow on integers is exact: a
 *   negative exponent gives 1/a^n truncated toward zero (so 0 unless
 *   |a| == 1).
 * - and, or, xor take bool; equal takes every type; greater and less take
 *   the numeric types.  Comparison and logic results are bool (0 or 1).
 * - bitwise_and, bitwise_or, bitwise_xor (ONNX's BitwiseAnd, Or, Xor)
 *   take the integer types, shift_left and shift_right (BitShift) the
 *   unsigned ones, on the CPU alone (elementwise.c): on the bits of the
 *   type; a shift by the width or more gives 0.
 */
#ifndef MICA_MOD_ELEMENTWISE_H
#define MICA_MOD_ELEMENTWISE_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ops, in the order of the `op` field's enum values. */
enum {
    MICA__EW_SUM = 0,
    MICA__EW_PROD,
    MICA__EW_MAX,
    MICA__EW_MIN,
    MICA__EW_SUB,
    MICA__EW_DIV,
    MICA__EW_POW,
    MICA__EW_FLOOR_DIV,
    MICA__EW_AND,
    MICA__EW_OR,
    MICA__EW_XOR,
    MICA__EW_EQUAL,
    MICA__EW_GREATER,
    MICA__EW_LESS,
    MICA__EW_BITWISE_AND,
    MICA__EW_BITWISE_OR,
    MICA__EW_BITWISE_XOR,
    MICA__EW_SHIFT_LEFT,
    MICA__EW_SHIFT_RIGHT,
    MICA__EW_COUNT
};

/* fmaxf / fminf with the sign of a zero defined: +0 > -0. */
MICA_KIT_HD float mica__ew_fmax(float a, float b)
{
    if (b != b)
        return a;
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

MICA_KIT_HD float mica__ew_fmin(float a, float b)
{
    if (b != b)
        return a;
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

/* One float op; comparisons give 1 or 0. */
MICA_KIT_HD float mica__ew_f(int op, float a, float b)
{
    switch (op) {
    case MICA__EW_SUM: return a + b;
    case MICA__EW_PROD: return a * b;
    case MICA__EW_MAX: return mica__ew_fmax(a, b);
    case MICA__EW_MIN: return mica__ew_fmin(a, b);
    case MICA__EW_SUB: return a - b;
    case MICA__EW_DIV: return a / b;
    case MICA__EW_POW: return powf(a, b);
    case MICA__EW_FLOOR_DIV: return floorf(a / b);
    case MICA__EW_EQUAL: return a == b ? 1.0f : 0.0f;
    case MICA__EW_GREATER: return a > b ? 1.0f : 0.0f;
    case MICA__EW_LESS: return a < b ? 1.0f : 0.0f;
    default: return 0.0f;
    }
}

/* Saturating product for int8 pow: magnitudes stop at 2^20. */
MICA_KIT_HD int64_t mica__ew_clamp20(int64_t v)
{
    const int64_t c = (int64_t)1 << 20;
    return v > c ? c : v < -c ? -c : v;
}

/*
 * a to the power e on integers.  sat: int8 (the result only needs to be
 * right up to saturation); else int32 (the result wraps modulo 2^32).
 */
MICA_KIT_HD int64_t mica__ew_ipow(int64_t a, int64_t e, int sat)
{
    if (e < 0)
        return a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0;
    if (sat) {
        int64_t r = 1, base = mica__ew_clamp20(a);
        while (e) {
            if (e & 1)
                r = mica__ew_clamp20(r * base);
            e >>= 1;
            if (e)
                base = mica__ew_clamp20(base * base);
        }
        return r;
    } else {
        uint32_t r = 1, base = (uint32_t)(int32_t)a;
        while (e) {
            if (e & 1)
                r *= base;
            e >>= 1;
            base *= base;
        }
        return (int64_t)(int32_t)r;
    }
}

/*
 * One integer (int8, int32, bool) op; sat: the type is int8.  Sums,
 * differences and products wrap modulo 2^64 (unsigned arithmetic: the
 * low 32 bits, all that an int32 result keeps, are the same), so that
 * the intermediate values of a fused chain never overflow.
 */
MICA_KIT_HD int64_t mica__ew_i(int op, int64_t a, int64_t b, int sat)
{
    int64_t q;
    switch (op) {
    case MICA__EW_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
    case MICA__EW_PROD: return (int64_t)((uint64_t)a * (uint64_t)b);
    case MICA__EW_MAX: return a > b ? a : b;
    case MICA__EW_MIN: return a < b ? a : b;
    case MICA__EW_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case MICA__EW_DIV:
        return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
    case MICA__EW_POW: return mica__ew_ipow(a, b, sat);
    case MICA__EW_FLOOR_DIV:
        if (b == 0)
            return 0;
        if (b == -1)
            return (int64_t)(0 - (uint64_t)a);
        q = a / b;
        if (q * b != a && ((a < 0) != (b < 0)))
            q--;
        return q;
    case MICA__EW_AND: return (a != 0) && (b != 0);
    case MICA__EW_OR: return (a != 0) || (b != 0);
    case MICA__EW_XOR: return (a != 0) != (b != 0);
    case MICA__EW_EQUAL: return a == b;
    case MICA__EW_GREATER: return a > b;
    case MICA__EW_LESS: return a < b;
    case MICA__EW_BITWISE_AND: return a & b;
    case MICA__EW_BITWISE_OR: return a | b;
    case MICA__EW_BITWISE_XOR: return a ^ b;
    default: return 0;
    }
}

/* Storing an integer result: int8 saturates, int32 wraps. */
MICA_KIT_HD int8_t mica__ew_sat8(int64_t v)
{
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

MICA_KIT_HD int32_t mica__ew_wrap32(int64_t v)
{
    return (int32_t)(uint32_t)(uint64_t)v;
}

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Run op on the device: out = a op b with broadcasting (a, b and out have
 * the same rank; a dimension of a or b is 1 or equal to out's).  Pointers
 * are device memory, stream a cudaStream_t.  out must not be empty.
 */
mica_status_t mica__elementwise_cuda(int op, const mica_tensor_desc_t *a,
                                     const mica_tensor_desc_t *b,
                                     const mica_tensor_desc_t *out,
                                     const void *pa, const void *pb, void *po,
                                     void *stream, mica_error_t *err);
#endif

/* The vector kernels (elementwise_vec.c): whether op on inputs of type t
 * is theirs (float32 and float16), and y = inputs[0] op inputs[1] with
 * broadcasting, every tensor in its own format (linear or channels
 * last). */
int mica__ew_vec_takes(int op, mica_dtype_t t);
mica_status_t mica__ew_vec_run(int op, const mica_tensor_desc_t *in,
                               const mica_tensor_desc_t *out,
                               const void *const *inputs, void *y,
                               mica_error_t *err);

#ifdef MICA_HAVE_ONEDNN
/* oneDNN (elementwise_onednn.c): one instance's state, NULL until its
 * first run (the primitive of its last problem). */
typedef struct mica__ew_dnnl mica__ew_dnnl_t;

/*
 * y = inputs[0] op inputs[1] through oneDNN where it computes what the
 * reference does: float32 sum, prod, sub and div of rank >= 1, the
 * broadcast within what its binary primitive takes (file comment), and
 * oneDNN can be loaded (else a warning naming layer `name`, once).
 * *taken 0 (and MICA_OK): not done, the caller runs the reference.
 */
mica_status_t mica__ew_dnnl_run(mica__ew_dnnl_t **state, const char *name,
                                int op, const mica_tensor_desc_t *in,
                                const mica_tensor_desc_t *out,
                                const void *const *inputs, void *y,
                                int *taken, mica_error_t *err);
void mica__ew_dnnl_free(mica__ew_dnnl_t *state);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_ELEMENTWISE_H */
