/*
 * modules/pooling/pooling.h - what the implementations of Pooling share:
 * the params and the problem of one run.
 *
 * Layout: the input is [..., (D,) H, W], every dimension before the 2
 * (3) spatial ones a plane pooled on its own; the output [..., (D',) H',
 * W'].  A 2D problem is a 3D one of depth 1 (see kit_window.h).  Channels
 * last (the CUDA implementations, 2D: MICA_FORMAT_HWC): the input is [N,
 * C, H, W] stored NHWC, its planes N x C, with the C planes of one n
 * interleaved (chans = C).
 */
#ifndef MICA_MOD_POOLING_H
#define MICA_MOD_POOLING_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"
#include "kit_window.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MICA__POOL_MAX = 0, MICA__POOL_AVERAGE = 1, MICA__POOL_BLEND = 2 };

typedef struct mica__pool_params {
    int32_t type;        /* MICA__POOL_* */
    int32_t exclude_pad; /* average_count_excludes_padding */
    float blend;         /* blend_factor */
    mica__window_t win;
} mica__pool_params_t;

typedef struct mica__pool_problem {
    const mica__pool_params_t *p;
    mica_dtype_t dtype;   /* float32 or float16 */
    int64_t planes;       /* the product of the dimensions before D/H */
    int64_t chans;        /* channels last: C, the innermost; else 1 */
    int64_t in[3], out[3];
} mica__pool_problem_t;

/* The problem of input x (its dims checked by shape inference; channels
 * last where its format is not linear). */
void mica__pool_problem(const mica__pool_params_t *p,
                        const mica_tensor_desc_t *x,
                        mica__pool_problem_t *pb);

/*
 * Whether some window of the problem lies wholly in the padding along
 * some dimension: its max is -inf, its average without the padding 0.
 */
int mica__pool_has_empty_window(const mica__pool_problem_t *pb);

/* The CPU reference (pooling.c), either layout (pb->chans); its
 * implementation takes linear alone, oneDNN's calls it in channels last
 * too. */
void mica__pool_reference(const mica__pool_problem_t *pb, const void *x,
                          void *y);

/* oneDNN (pool_onednn.c): the state of one instance. */
typedef struct mica__pool_dnnl mica__pool_dnnl_t;
mica_status_t mica__pool_dnnl_run(mica__pool_dnnl_t **state,
                                  const mica__pool_problem_t *pb,
                                  const void *x, void *y, mica_error_t *err);
void mica__pool_dnnl_free(mica__pool_dnnl_t *state);

/* CUDA (pool_cuda.cu): one thread per output element, every problem,
 * either layout. */
mica_status_t mica__pool_cuda(const mica__pool_problem_t *pb, const void *x,
                              void *y, void *stream, mica_error_t *err);

/* cuDNN (pool_cudnn.c): the problems it takes (no blend, symmetric
 * padding, no window wholly in padding), else 0. */
int mica__pool_cudnn_takes(const mica__pool_problem_t *pb);
/* The descriptors of one instance (*d NULL at first, made by the first
 * run and kept), y from x on `stream`. */
typedef struct mica__pool_dnn mica__pool_dnn_t;
mica_status_t mica__pool_cudnn(mica__pool_dnn_t **d,
                               const mica__pool_problem_t *pb, const void *x,
                               void *y, void *stream, mica_error_t *err);
void mica__pool_dnn_free(mica__pool_dnn_t *d);

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_POOLING_H */
