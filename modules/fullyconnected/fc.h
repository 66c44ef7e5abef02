/*
 * modules/fullyconnected/fc.h - what the implementations of
 * FullyConnected share: the problem of one run and each implementation's
 * entry points.
 *
 * The input [..., C, H, W] is read as a matrix X of rows = the product of
 * the leading dimensions and cols = C*H*W; the kernel W is [K, C*H*W]
 * row-major; Y = X W^T + bias is [rows, K], the output [..., K, 1, 1].
 */
#ifndef MICA_MOD_FC_H
#define MICA_MOD_FC_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__fc_problem {
    mica_dtype_t dtype;             /* of input and output */
    int64_t rows, cols, k;
    const mica_weights_t *kernel;   /* float32 or float16 */
    const mica_weights_t *bias;     /* NULL: none */
} mica__fc_problem_t;

/* oneDNN (fc_onednn.c): kit_onednn.h's cache of the last batch size. */
typedef struct mica__dnnl_cache mica__fc_dnnl_t;
mica_status_t mica__fc_dnnl_run(mica__fc_dnnl_t **state,
                                const mica__fc_problem_t *pb, const void *x,
                                void *y, mica_error_t *err);
void mica__fc_dnnl_free(mica__fc_dnnl_t *state);

/* cuBLAS (fc_cublas.c): the CUDA state of one instance. */
typedef struct mica__fc_gpu mica__fc_gpu_t;
mica__fc_gpu_t *mica__fc_gpu_new(void);
void mica__fc_gpu_free(mica__fc_gpu_t *g);
/* Upload pb's kernel and bias in pb->dtype (once; again if the type
 * changed) and make the cuBLAS handle. */
mica_status_t mica__fc_gpu_init(mica__fc_gpu_t *g, const mica__fc_problem_t *pb,
                                mica_error_t *err);
/* cuBLAS's scratch, from the layer's workspace. */
#define MICA__FC_CUBLAS_WORKSPACE ((size_t)32 << 20)
mica_status_t mica__fc_gpu_run(mica__fc_gpu_t *g, const mica__fc_problem_t *pb,
                               const void *x, void *y, void *workspace,
                               void *stream, mica_error_t *err);

/* fc_cuda.cu: y[r, j] = bias[j] (assign) or += bias[j], on `stream`;
 * bias in the I/O type. */
mica_status_t mica__fc_cuda_bias(mica_dtype_t dtype, int64_t rows, int64_t k,
                                 const void *bias, void *y, int assign,
                                 void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_FC_H */
