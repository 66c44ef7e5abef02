/*
 * modules/matmul/matmul.h - the cuBLAS side of the MatrixMultiply module.
 */
#ifndef MICA_MOD_MATMUL_H
#define MICA_MOD_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "mica/layer.h"
#include "mica/module.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One batched product C = op(A) op(B), row-major: A is M x K (stored K x M
 * when trans_a), B is K x N (stored N x K when trans_b), C is M x N.  The
 * batch has rank nb with output dims bo; ba and bb are the operands' batch
 * dims, each equal to bo's or 1 (broadcast).
 */
typedef struct mica__mm_problem {
    mica_dtype_t dtype; /* float32 or float16 */
    int32_t nb;
    int64_t bo[MICA_MAX_DIMS], ba[MICA_MAX_DIMS], bb[MICA_MAX_DIMS];
    int64_t M, N, K;
    int32_t trans_a, trans_b;
} mica__mm_problem_t;

/* oneDNN (matmul_onednn.c): the state of one instance, remade when the
 * shapes change (kit_onednn.h's cache); c = op(a) op(b) on the CPU. */
typedef struct mica__dnnl_cache mica__mm_dnnl_t;
mica_status_t mica__matmul_dnnl_run(mica__mm_dnnl_t **state,
                                    const mica__mm_problem_t *p,
                                    const void *a, const void *b, void *c,
                                    mica_error_t *err);
void mica__matmul_dnnl_free(mica__mm_dnnl_t *state);

/* The calling thread's cuBLAS handle (the kit's) into *handle. */
mica_status_t mica__matmul_cuda_handle(void **handle, mica_error_t *err);
/* Forget a handle: the kit keeps it (nothing to do). */
void mica__matmul_cuda_destroy(void *handle);
/* cuBLAS's scratch, taken from the layer's workspace (NVIDIA's advice
 * for Hopper): with it cuBLAS allocates nothing while running, so a run
 * can be captured in a CUDA graph. */
#define MICA_MATMUL_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* Queue the product on `stream` with the handle; `workspace` (may be
 * NULL) holds `ws_size` bytes for cuBLAS. */
mica_status_t mica__matmul_cuda(void *handle, const mica__mm_problem_t *p,
                                const void *a, const void *b, void *c,
                                void *workspace, size_t ws_size,
                                void *stream, mica_error_t *err);

/* FusedMatrixMultiply (fused_matmul.c): its creators, and the fusion
 * rules that make it (fused_rules.c). */
extern const mica_layer_creator_t mica__fmm_reference;
#ifdef MICA_HAVE_ONEDNN
extern const mica_layer_creator_t mica__fmm_onednn;
#endif
#define MICA__FMM_NB_RULES 4
extern const mica_fusion_rule_t *const mica__fmm_rules[MICA__FMM_NB_RULES];

#ifdef __cplusplus
}
#endif

#endif
