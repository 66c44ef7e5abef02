/*
 * modules/activation/activation.h - the Activation family: its types, the
 * scalar semantics shared by the CPU reference and the CUDA kernels, and
 * the CUDA launcher's prototype.
 *
 * C-compatible.  Under nvcc the scalar function is a host and device
 * function, so both implementations compute the same thing.
 *
 * Semantics (TensorRT's ActivationType; alpha and beta as TensorRT uses
 * them, both 0 unless the manifest sets them, as on a new TensorRT layer):
 *   relu              x < 0 ? 0 : x            (NaN stays NaN)
 *   sigmoid           1 / (1 + exp(-x))
 *   tanh              tanh(x)
 *   leaky_relu        x >= 0 ? x : alpha * x
 *   elu               x >= 0 ? x : alpha * (exp(x) - 1)
 *   selu              x > 0 ? beta * x : beta * alpha * (exp(x) - 1)
 *   softsign          x / (1 + |x|)
 *   softplus          alpha * log(exp(beta * x) + 1)   (computed stably)
 *   clip              max(alpha, min(beta, x))
 *   hard_sigmoid      max(0, min(1, alpha * x + beta))
 *   scaled_tanh       alpha * tanh(beta * x)
 *   thresholded_relu  x > alpha ? x : 0         (the NvInfer.h definition)
 *   gelu_erf          x / 2 * (1 + erf(x / sqrt 2))          (kGELU_ERF)
 *   gelu_tanh         x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
 *                                                            (kGELU_TANH)
 * float32 and float16 compute in float (float16 widened, rounded once).
 * relu also takes int8 and int32 (TensorRT allows integer relu).
 */
#ifndef MICA_MOD_ACTIVATION_H
#define MICA_MOD_ACTIVATION_H

#include <math.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The types, in the order of the `type` field's enum values. */
enum {
    MICA__ACT_RELU = 0,
    MICA__ACT_SIGMOID,
    MICA__ACT_TANH,
    MICA__ACT_LEAKY_RELU,
    MICA__ACT_ELU,
    MICA__ACT_SELU,
    MICA__ACT_SOFTSIGN,
    MICA__ACT_SOFTPLUS,
    MICA__ACT_CLIP,
    MICA__ACT_HARD_SIGMOID,
    MICA__ACT_SCALED_TANH,
    MICA__ACT_THRESHOLDED_RELU,
    MICA__ACT_GELU_ERF,
    MICA__ACT_GELU_TANH,
    MICA__ACT_COUNT
};

MICA_KIT_HD float mica__act_f(int type, float x, float a, float b)
{
    float t;
    switch (type) {
    case MICA__ACT_RELU: return x < 0.0f ? 0.0f : x;
    case MICA__ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case MICA__ACT_TANH: return tanhf(x);
    case MICA__ACT_LEAKY_RELU: return x >= 0.0f ? x : a * x;
    case MICA__ACT_ELU: return x >= 0.0f ? x : a * expm1f(x);
    case MICA__ACT_SELU: return x > 0.0f ? b * x : b * (a * expm1f(x));
    case MICA__ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
    case MICA__ACT_SOFTPLUS:
        /* log(1 + e^t) = max(t, 0) + log1p(e^-|t|): no overflow. */
        t = b * x;
        return a * (fmaxf(t, 0.0f) + log1pf(expf(-fabsf(t))));
    case MICA__ACT_CLIP: return fmaxf(a, fminf(b, x));
    case MICA__ACT_HARD_SIGMOID: return fmaxf(0.0f, fminf(1.0f, a * x + b));
    case MICA__ACT_SCALED_TANH: return a * tanhf(b * x);
    case MICA__ACT_THRESHOLDED_RELU: return x > a ? x : 0.0f;
    case MICA__ACT_GELU_ERF:
        return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case MICA__ACT_GELU_TANH:
        return 0.5f * x *
               (1.0f + tanhf(0.79788456080286536f *
                             (x + 0.044715f * x * x * x)));
    default: return 0.0f;
    }
}

/* The fusion rules of decomposed GELUs (gelu_rules.c). */
#define MICA__GELU_NB_RULES 2
extern const mica_fusion_rule_t *const mica__gelu_rules[MICA__GELU_NB_RULES];

#ifndef __CUDACC__
/* The vector kernels (activation_vec.c): y = f(x) over n elements of a
 * float32 or float16 tensor; 0 (nothing done) for another dtype. */
int mica__act_vec(int type, float alpha, float beta, mica_dtype_t dtype,
                  int64_t n, const void *x, void *y);
#endif

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Run activation `type` on the device over n > 0 elements of `dtype`
 * (float32, float16; int8 and int32 for relu): out[i] = f(in[i]).
 */
mica_status_t mica__activation_cuda(int type, mica_dtype_t dtype, int64_t n,
                                    float alpha, float beta, const void *in,
                                    void *out, void *stream,
                                    mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_ACTIVATION_H */
