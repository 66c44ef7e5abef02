/*
 * modules/lrn/lrn.h - what the implementations of LRN share: the params,
 * the problem of one run, and the formula (host and device).
 *
 * Layout: [..., C, H, W]: channels are dimension rank-3, the dimensions
 * before it batch dimensions, the last two a plane of size hw.
 */
#ifndef MICA_MOD_LRN_H
#define MICA_MOD_LRN_H

#include <math.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__lrn_params {
    int32_t window;      /* odd, 1 .. 15 */
    float alpha, beta, k;
} mica__lrn_params_t;

typedef struct mica__lrn_problem {
    mica__lrn_params_t p;
    mica_dtype_t dtype;  /* float32 or float16 */
    int64_t n, c, hw;
    int cl;              /* channels last (4-D HWC): [N, H*W, C] in memory */
} mica__lrn_problem_t;

/* y = x / (k + alpha / window * sumsq) ^ beta. */
MICA_KIT_HD float mica__lrn_value(float x, float sumsq,
                                  mica__lrn_params_t p)
{
    return x / powf(p.k + p.alpha / (float)p.window * sumsq, p.beta);
}

/* oneDNN (lrn_onednn.c): kit_onednn.h's cache of the last shape. */
typedef struct mica__dnnl_cache mica__lrn_dnnl_t;
mica_status_t mica__lrn_dnnl_run(mica__lrn_dnnl_t **state,
                                 const mica__lrn_problem_t *pb, const void *x,
                                 void *y, mica_error_t *err);
void mica__lrn_dnnl_free(mica__lrn_dnnl_t *state);

/* CUDA (lrn_cuda.cu): one thread per output element. */
mica_status_t mica__lrn_cuda(const mica__lrn_problem_t *pb, const void *x,
                             void *y, void *stream, mica_error_t *err);

/* The params as written (doubles), for cuDNN, which checks its bounds
 * in double. */
typedef struct mica__lrn_exact {
    int32_t window;
    double alpha, beta, k;
} mica__lrn_exact_t;

/*
 * cuDNN (lrn_cudnn.c): the state of one layer instance, made by
 * configure, which decides once whether cuDNN takes the params (else the
 * hand-written kernel runs them).
 */
typedef struct mica__lrn_dnn mica__lrn_dnn_t;

/* Whether the params lie within cuDNN's bounds (cudnn_ops.h). */
int mica__lrn_cudnn_takes(const mica__lrn_exact_t *e);
/* Make *d (once) and decide; fails only when cuDNN cannot be opened or
 * host memory runs out. */
mica_status_t mica__lrn_dnn_configure(mica__lrn_dnn_t **d,
                                      const mica__lrn_exact_t *e,
                                      mica_error_t *err);
void mica__lrn_dnn_free(mica__lrn_dnn_t *d);
/* y from x on `stream` through cuDNN, or the kernel where it does not
 * take the params or the sizes; d configured. */
mica_status_t mica__lrn_cudnn(mica__lrn_dnn_t *d,
                              const mica__lrn_problem_t *pb, const void *x,
                              void *y, void *stream, mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_LRN_H */
