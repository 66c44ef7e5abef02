/*
 * modules/common/kit_nn.h - the layer glue the CNN modules share
 * (Convolution, Deconvolution, Pooling, LRN, FullyConnected; Activation
 * for its relu): the element access of their float32/float16 references,
 * the output_dtypes callback of a layer with one floating-point input,
 * and a vectorized float32 relu.  Part
 * of the module kit's CNN helpers (libmicamodkit_nn.la), not installed.
 */
#ifndef MICA_KIT_NN_H
#define MICA_KIT_NN_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element i of p, float16 (`t` MICA_FLOAT16) or else float32, as double. */
MICA_KIT_API double mica__nn_get(const void *p, mica_dtype_t t, int64_t i);

/* Store v as element i of p, float16 (`t` MICA_FLOAT16) or else float32:
 * rounded once, from double. */
MICA_KIT_API void mica__nn_put(void *p, mica_dtype_t t, int64_t i, double v);

/*
 * The ops' output_dtypes of a layer with one input, float32 or float16,
 * and one output of its type; else the one-line refusal ("takes 1 input
 * and has 1 output, got 2 and 1", "takes float32 or float16 input, got
 * int32").
 */
MICA_KIT_API mica_status_t mica__nn_float_dtypes(const mica_layer_t *layer,
                                                 const mica_dtype_t *in,
                                                 int32_t nb_in,
                                                 mica_dtype_t *out,
                                                 int32_t nb_out,
                                                 mica_error_t *err);

/*
 * Activation's relu on n float32 values, y[i] = x[i] < 0 ? 0 : x[i] (NaN
 * stays NaN, -inf gives 0, -0 stays -0); y may be x.  A mask rather
 * than a branch (which random signs mispredict half the time), in
 * blocks the compiler vectorizes.
 */
MICA_KIT_API void mica__nn_relu_f32(float *y, const float *x, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_NN_H */
