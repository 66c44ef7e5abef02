/*
 * modules/convolution/fused_conv.h - FusedConvolution: a Convolution with
 * its batch norm (a per-channel Scale) folded into the weights, up to two
 * tensors added to its output (a bias, a residual) and a ReLU, made by
 * the module's fusion rules (fused_rules.c) or written in a manifest.
 *
 *     y = act(conv(x) * scale + shift + a + b)
 *
 * conv(x) is Convolution's (its bias included), scale and shift have M
 * values (or 1, for all maps), a and b (inputs 1 and 2, optional) are
 * broadcast to y as ElementWise broadcasts, act is ReLU or nothing.
 * The layer folds scale and shift into the kernel and bias once, at
 * create (fused_conv.c); its CPU reference is Convolution's (conv_ref.c)
 * on those weights, then the epilogue.
 */
#ifndef MICA_MOD_FUSED_CONV_H
#define MICA_MOD_FUSED_CONV_H

#include "conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The module's fusion rules (fused_rules.c), for its descriptor. */
#define MICA__FUSED_CONV_NB_RULES 9
extern const mica_fusion_rule_t
    *const mica__fused_conv_rules[MICA__FUSED_CONV_NB_RULES];

/* The creators of FusedConvolution (fused_conv.c), for the module's
 * array of creators: reference (CPU), onednn (with oneDNN), cuda and,
 * with cuDNN, cudnn. */
extern const mica_layer_creator_t mica__fused_creator_ref;
#ifdef MICA_HAVE_ONEDNN
extern const mica_layer_creator_t mica__fused_creator_dnnl;
#define MICA__FUSED_CPU_CREATORS                                            \
    , &mica__fused_creator_ref, &mica__fused_creator_dnnl
#else
#define MICA__FUSED_CPU_CREATORS , &mica__fused_creator_ref
#endif
#if MICA_KIT_CUDA
extern const mica_layer_creator_t mica__fused_creator_cuda;
#ifdef MICA_HAVE_CUDNN
extern const mica_layer_creator_t mica__fused_creator_cudnn;
#define MICA__FUSED_CUDNN_CREATOR , &mica__fused_creator_cudnn
#else
#define MICA__FUSED_CUDNN_CREATOR
#endif
#define MICA__FUSED_CONV_CREATORS                                           \
    MICA__FUSED_CPU_CREATORS, &mica__fused_creator_cuda                     \
        MICA__FUSED_CUDNN_CREATOR
#else
#define MICA__FUSED_CONV_CREATORS MICA__FUSED_CPU_CREATORS
#endif

enum {
    MICA__FUSED_ACT_NONE = 0,
    MICA__FUSED_ACT_RELU = 1
};

/*
 * The epilogue on n elements of y (float32 or float16): y += the addends
 * (v: their broadcast view against y, v->nb_in of them, 0 to 2, at a[]),
 * then the activation.  In place: element i reads only y[i].
 */
void mica__fused_epilogue_ref(void *y, mica_dtype_t dtype, int64_t n,
                              const mica_kit_bcast_t *v,
                              const void *const *a, int32_t act);

/* The same on the GPU (fused_cuda.cu), on `stream`. */
mica_status_t mica__fused_epilogue_cuda(void *y, mica_dtype_t dtype,
                                        int64_t n, const mica_kit_bcast_t *v,
                                        const void *a0, const void *a1,
                                        int32_t act, void *stream,
                                        mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_FUSED_CONV_H */
