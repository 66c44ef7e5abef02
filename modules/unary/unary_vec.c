/*
 * modules/unary/unary_vec.c - Unary's kernels on the CPU (implementation
 * "vec"): float32 and float16 tensors, any format (element by element),
 * on several threads for large tensors (kit_vec.h).  exp through the
 * kit's vector exp (within 2 ulp of expf, the same special values);
 * recip, abs, neg, ceil, floor, sign, isinf and isnan as vectors, exactly
 * mica__unary_f's results (unary.h); every other op calls the C library
 * per element, as the reference does.  int8, int32 and bool inputs are
 * the reference's (the caller's fallback).
 */
#include <config.h>

#include <float.h>
#include <math.h>

#include "unary.h"
#include "kit_vec.h"

#define V_RECIP(x) (1.0f / (x))
#define V_ABS(x) mica__v_abs(x)
#define V_NEG(x) (-(x))
#define V_CEIL(x) mica__v_ceil(x)
#define V_FLOOR(x) mica__v_floor(x)
#define V_SIGN(x)                                                           \
    mica__v_sel((x) > 0.0f, mica__v_set1(1.0f),                           \
                 mica__v_sel((x) < 0.0f, mica__v_set1(-1.0f), (x)))
#define V_ONE(m) mica__v_sel((m), mica__v_set1(1.0f), mica__v_set1(0.0f))
#define V_ISINF(x) V_ONE(mica__v_abs(x) > FLT_MAX)
#define V_ISNAN(x) V_ONE((x) != (x))

/* exp: the kit's array function (eight lanes with AVX2) */
static void k_exp(const void *ctx, const float *x, float *y, int64_t n)
{
    (void)ctx;
    mica__vec_exp_n(x, y, n);
}
MICA__VEC_MAP_KERNEL(k_recip, V_RECIP)
MICA__VEC_MAP_KERNEL(k_abs, V_ABS)
MICA__VEC_MAP_KERNEL(k_neg, V_NEG)
MICA__VEC_MAP_KERNEL(k_ceil, V_CEIL)
MICA__VEC_MAP_KERNEL(k_floor, V_FLOOR)
MICA__VEC_MAP_KERNEL(k_sign, V_SIGN)
MICA__VEC_MAP_KERNEL(k_isinf, V_ISINF)
MICA__VEC_MAP_KERNEL(k_isnan, V_ISNAN)

/* The C library per element (the reference's function). */
static void k_scalar(const void *ctx, const float *x, float *y, int64_t n)
{
    int op = *(const int *)ctx;
    int64_t i;
    for (i = 0; i < n; i++)
        y[i] = mica__unary_f(op, x[i]);
}

static mica__vec_map_fn *const kernels[MICA__UN_COUNT] = {
    [MICA__UN_EXP] = k_exp,     [MICA__UN_RECIP] = k_recip,
    [MICA__UN_ABS] = k_abs,     [MICA__UN_NEG] = k_neg,
    [MICA__UN_CEIL] = k_ceil,   [MICA__UN_FLOOR] = k_floor,
    [MICA__UN_SIGN] = k_sign,   [MICA__UN_ISINF] = k_isinf,
    [MICA__UN_ISNAN] = k_isnan,
};

int mica__unary_vec(int op, mica_dtype_t ti, mica_dtype_t to, int64_t n,
                    const void *x, void *y)
{
    if (op < 0 || op >= MICA__UN_COUNT || op == MICA__UN_NOT ||
        !mica__vec_float(ti))
        return 0;
    mica__vec_map(kernels[op] ? kernels[op] : k_scalar, &op, n, ti, x, to,
                  y);
    return 1;
}
