/*
 * modules/activation/activation_vec.c - Activation's vector kernels on the
 * CPU (implementation "vec"): float32 and float16 tensors, any format
 * (element by element), on several threads for large tensors
 * (kit_vec.h).  Each type computes mica__act_f's formula (activation.h):
 * the comparisons, products and fmaxf/fminf exactly; sigmoid and tanh
 * through the kit's array functions (within a few ulp, the same special
 * values; eight lanes with AVX2 and FMA); elu, selu, softplus and the GELUs call the C library
 * per element.
 * relu on int8 and int32 is the reference's (the caller's fallback).
 */
#include <config.h>

#include <math.h>

#include "activation.h"
#include "kit_vec.h"

typedef struct params {
    float a, b;
} params_t;

#define P ((const params_t *)ctx)
#define V_RELU(x) mica__v_sel((x) < 0.0f, mica__v_set1(0.0f), (x))
#define V_LEAKY(x) mica__v_sel((x) >= 0.0f, (x), P->a * (x))
#define V_SOFTSIGN(x) ((x) / (1.0f + mica__v_abs(x)))
#define V_CLIP(x)                                                           \
    mica__v_max(mica__v_set1(P->a), mica__v_min(mica__v_set1(P->b), (x)))
#define V_HSIG(x)                                                           \
    mica__v_max(mica__v_set1(0.0f),                                       \
                 mica__v_min(mica__v_set1(1.0f), P->a * (x) + P->b))
#define V_STANH(x) (P->a * mica__v_tanh(P->b * (x)))
#define V_THRESH(x) mica__v_sel((x) > P->a, (x), mica__v_set1(0.0f))

MICA__VEC_MAP_KERNEL(k_relu, V_RELU)
/* sigmoid and tanh: the kit's array functions (eight lanes with AVX2) */
static void k_sigmoid(const void *ctx, const float *x, float *y, int64_t n)
{
    (void)ctx;
    mica__vec_sigmoid_n(x, y, n);
}

static void k_tanh(const void *ctx, const float *x, float *y, int64_t n)
{
    (void)ctx;
    mica__vec_tanh_n(x, y, n);
}
MICA__VEC_MAP_KERNEL(k_leaky, V_LEAKY)
MICA__VEC_MAP_KERNEL(k_softsign, V_SOFTSIGN)
MICA__VEC_MAP_KERNEL(k_clip, V_CLIP)
MICA__VEC_MAP_KERNEL(k_hsig, V_HSIG)
MICA__VEC_MAP_KERNEL(k_stanh, V_STANH)
MICA__VEC_MAP_KERNEL(k_thresh, V_THRESH)

/* The formulas without a vector form here: the reference's, per element. */
#define SCALAR_KERNEL(name, type)                                           \
    static void name(const void *ctx, const float *x, float *y, int64_t n)  \
    {                                                                       \
        int64_t i;                                                          \
        for (i = 0; i < n; i++)                                             \
            y[i] = mica__act_f((type), x[i], P->a, P->b);                   \
    }

SCALAR_KERNEL(k_elu, MICA__ACT_ELU)
SCALAR_KERNEL(k_selu, MICA__ACT_SELU)
SCALAR_KERNEL(k_softplus, MICA__ACT_SOFTPLUS)
SCALAR_KERNEL(k_gelu_erf, MICA__ACT_GELU_ERF)
SCALAR_KERNEL(k_gelu_tanh, MICA__ACT_GELU_TANH)

static mica__vec_map_fn *const kernels[MICA__ACT_COUNT] = {
    [MICA__ACT_RELU] = k_relu,
    [MICA__ACT_SIGMOID] = k_sigmoid,
    [MICA__ACT_TANH] = k_tanh,
    [MICA__ACT_LEAKY_RELU] = k_leaky,
    [MICA__ACT_ELU] = k_elu,
    [MICA__ACT_SELU] = k_selu,
    [MICA__ACT_SOFTSIGN] = k_softsign,
    [MICA__ACT_SOFTPLUS] = k_softplus,
    [MICA__ACT_CLIP] = k_clip,
    [MICA__ACT_HARD_SIGMOID] = k_hsig,
    [MICA__ACT_SCALED_TANH] = k_stanh,
    [MICA__ACT_THRESHOLDED_RELU] = k_thresh,
    [MICA__ACT_GELU_ERF] = k_gelu_erf,
    [MICA__ACT_GELU_TANH] = k_gelu_tanh,
};

int mica__act_vec(int type, float alpha, float beta, mica_dtype_t dtype,
                  int64_t n, const void *x, void *y)
{
    params_t p;
    if (type < 0 || type >= MICA__ACT_COUNT || !kernels[type] ||
        !mica__vec_float(dtype))
        return 0;
    p.a = alpha;
    p.b = beta;
    mica__vec_map(kernels[type], &p, n, dtype, x, dtype, y);
    return 1;
}
