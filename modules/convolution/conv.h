/*
 * modules/convolution/conv.h - what the implementations of Convolution
 * and Deconvolution share: the layer's params, the problem of one run,
 * and each implementation's entry points.
 *
 * Layouts (row-major, channels first): the input is [..., C, (D,) H, W],
 * every dimension before C a batch dimension; the output [..., M, (D,)
 * H', W'].  Convolution's kernel is [M, C/G, (kD,) kH, kW]; Deconvolution's
 * [C, M/G, (kD,) kH, kW] (ONNX's ConvTranspose): input channel c of group
 * g = c / (C/G) feeds output maps g*M/G .. (g+1)*M/G - 1.  A 2D problem is
 * a 3D one of depth 1 (see kit_window.h).
 */
#ifndef MICA_MOD_CONV_H
#define MICA_MOD_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"
#include "kit_window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The params of one layer, read and checked once at create. */
typedef struct mica__conv_params {
    int32_t deconv;      /* 1: Deconvolution */
    mica__window_t win;
    int64_t m;           /* num_output_maps */
    int64_t groups;
    int64_t c;           /* input channels, as the kernel's size implies */
    int64_t kvol;        /* kD * kH * kW */
    const mica_weights_t *kernel;
    const mica_weights_t *bias; /* NULL: none */
} mica__conv_params_t;

/* One run: the params and the sizes of the tensors. */
typedef struct mica__conv_problem {
    const mica__conv_params_t *p;
    mica_dtype_t dtype;  /* of input and output: float32 or float16 */
    int64_t n;           /* batch: the product of the dimensions before C */
    int64_t c, m;        /* input channels, output maps */
    int64_t in[3], out[3]; /* spatial sizes, depth 1 for 2D */
} mica__conv_problem_t;

/* The problem of input dims `x` (checked by shape inference). */
void mica__conv_problem(const mica__conv_params_t *p, mica_dtype_t dtype,
                        const mica_dims_t *x, mica__conv_problem_t *pb);

/* Element i of weights w as a float (float32 or float16 weights). */
float mica__conv_weight(const mica_weights_t *w, int64_t i);

/* The CPU reference (conv_ref.c): y from x, the layout above. */
void mica__conv_reference(const mica__conv_problem_t *pb, const void *x,
                          void *y);

/* ---- oneDNN (conv_onednn.c) ------------------------------------------- */

/* The oneDNN state of one layer instance: primitives for the last shape
 * seen, the weights in oneDNN's layout. */
typedef struct mica__conv_dnnl mica__conv_dnnl_t;

mica_status_t mica__conv_dnnl_run(mica__conv_dnnl_t **state,
                                  const mica__conv_problem_t *pb,
                                  const void *x, void *y, mica_error_t *err);
void mica__conv_dnnl_free(mica__conv_dnnl_t *state);

/* ---- CUDA (conv_cuda.cu: hand-written kernels) ------------------------ */

/*
 * y from x on `stream`, one thread per output element: w and bias are
 * device arrays of the I/O type (bias may be NULL).  Handles every
 * problem (groups, dilation, asymmetric padding, both layouts).
 */
mica_status_t mica__conv_cuda(const mica__conv_problem_t *pb, const void *x,
                              const void *w, const void *bias, void *y,
                              void *stream, mica_error_t *err);

/* y[n, m, s] += bias[m] (or = bias[m] with `assign`), on `stream`. */
mica_status_t mica__conv_cuda_bias(const mica__conv_problem_t *pb,
                                   const void *bias, void *y, int assign,
                                   void *stream, mica_error_t *err);

/* ---- cuDNN (conv_cudnn.c) --------------------------------------------- */

/* The CUDA state of one layer instance, both CUDA implementations: the
 * weights on the device, cuDNN's descriptors and algorithm. */
typedef struct mica__conv_gpu mica__conv_gpu_t;

/* Allocate the state (NULL: out of memory); `use_cudnn` 0 for the
 * hand-written implementation alone. */
mica__conv_gpu_t *mica__conv_gpu_new(int use_cudnn);
void mica__conv_gpu_free(mica__conv_gpu_t *g);

/* The algorithm (the tactic): -1 until chosen. */
int32_t mica__conv_gpu_algo(const mica__conv_gpu_t *g);
void mica__conv_gpu_set_algo(mica__conv_gpu_t *g, int32_t algo);

/*
 * Choose the algorithm for the problems between `lo` and `hi` (the
 * profile's smallest and largest; opt decides) unless one is set, and
 * record the workspace enqueue may use: the most it needs at `hi`.
 */
mica_status_t mica__conv_gpu_configure(mica__conv_gpu_t *g,
                                       const mica__conv_problem_t *opt,
                                       const mica__conv_problem_t *hi,
                                       mica_error_t *err);
/* The workspace bytes recorded by configure. */
size_t mica__conv_gpu_workspace(const mica__conv_gpu_t *g);

/* Upload the weights (once) and make the handles enqueue needs. */
mica_status_t mica__conv_gpu_init(mica__conv_gpu_t *g,
                                  const mica__conv_params_t *p,
                                  mica_dtype_t dtype, mica_error_t *err);

/* Run: cuDNN where it applies, else the hand-written kernels. */
mica_status_t mica__conv_gpu_run(mica__conv_gpu_t *g,
                                 const mica__conv_problem_t *pb,
                                 const void *x, void *y, void *workspace,
                                 void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_CONV_H */
