/*
 * modules/attention/attention.h - the Attention layer (TensorRT 10's
 * IAttention; ONNX Attention, opset 23): the plan of one run, the score
 * of one query and key shared by the CPU implementations and the CUDA
 * kernels, and the kernels' launcher.
 *
 * q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], contiguous;
 * Hq a multiple of Hkv (grouped-query attention: query head h reads key
 * and value head h / (Hq / Hkv)).  For query i and key j of head h:
 *     s = (q_i . k_j) * scale + bias(i, j)
 *     s = softcap * tanh(s / softcap)           (softcap > 0 only)
 *     y_i = sum_j softmax_j(s) v_j
 * where bias is the additive mask's element, 0 or -inf for a bool mask
 * (false: -inf), -inf for a key past the mask's last dimension (a mask
 * shorter than Skv, as ONNX pads it) and, causal, -inf where
 * j > i + causal_off.  A row whose every score is -inf gives zeros.
 * Scores, softmax and sums in float32 at least; float16 and bfloat16
 * are widened on load and the output rounded once.
 */
#ifndef MICA_MOD_ATTENTION_H
#define MICA_MOD_ATTENTION_H

#include <math.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MICA__ATTN_NO_MASK = 0, MICA__ATTN_BOOL_MASK, MICA__ATTN_ADD_MASK };

typedef struct mica__attn_plan {
    int64_t b, hq, hkv, sq, skv, d, dv;
    int32_t mask;          /* MICA__ATTN_*_MASK */
    int32_t causal;
    int64_t ms[4];         /* the mask's strides for b, h, i, j (0 where
                              it broadcasts) */
    int64_t mlen;          /* the mask's last dimension (<= skv) */
    int64_t causal_off;    /* key j is seen by query i iff j <= i + off */
    float scale, softcap;
} mica__attn_plan_t;

/* The bias of query i and key j of batch n, head h: the mask's element
 * (`mask` the mask's bytes: uint8 bool, or a float already read by the
 * caller through `madd`), causality; -INFINITY where masked. */
MICA_KIT_HD float mica__attn_bias(const mica__attn_plan_t *p, int64_t n,
                                  int64_t h, int64_t i, int64_t j,
                                  const uint8_t *mbool, float madd)
{
    if (p->causal && j > i + p->causal_off)
        return -INFINITY;
    if (p->mask != MICA__ATTN_NO_MASK && j >= p->mlen)
        return -INFINITY;
    if (p->mask == MICA__ATTN_BOOL_MASK)
        return mbool[n * p->ms[0] + h * p->ms[1] + i * p->ms[2] +
                     j * p->ms[3]]
                   ? 0.0f
                   : -INFINITY;
    (void)n;
    (void)h;
    return p->mask == MICA__ATTN_ADD_MASK ? madd : 0.0f;
}

/* The element offset of the mask's (n, h, i, j); j < mlen. */
MICA_KIT_HD int64_t mica__attn_moff(const mica__attn_plan_t *p, int64_t n,
                                    int64_t h, int64_t i, int64_t j)
{
    return n * p->ms[0] + h * p->ms[1] + i * p->ms[2] + j * p->ms[3];
}

/* The score from the scaled dot product `dot` and the bias. */
MICA_KIT_HD float mica__attn_score(const mica__attn_plan_t *p, float dot,
                                   float bias)
{
    float s = dot * p->scale + bias;
    if (p->softcap > 0.0f)
        s = p->softcap * tanhf(s / p->softcap);
    return s;
}

/* The fusion rules of attentions written out (attn_rules.c). */
#define MICA__ATTN_NB_RULES 12
extern const mica_fusion_rule_t *const mica__attn_rules[MICA__ATTN_NB_RULES];

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * Attention of plan p on the device: q, k, v and y of `dtype` (float32,
 * float16, bfloat16), mask (NULL without one) bool or of `dtype`, on
 * `stream`.  `flash` 0 forces the simple kernel (a warp per query);
 * otherwise float16 and bfloat16 with D = Dv of 64 or 128 take the
 * tensor-core flash kernel.
 */
mica_status_t mica__attention_cuda(mica_dtype_t dtype,
                                   const mica__attn_plan_t *p, const void *q,
                                   const void *k, const void *v,
                                   const void *mask, void *y, int flash,
                                   void *stream, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_ATTENTION_H */
