/*
 * modules/einsum/einsum.h - the Einsum family: the parsed equation, its
 * binding to the inputs' ranks and sizes, and the CUDA side (a plan of
 * gathers and batched GEMMs).
 *
 * Labels are numbered: 'A'..'Z' 0..25, 'a'..'z' 26..51 (ASCII order, the
 * order of implicit outputs), and the dimensions an ellipsis stands for
 * 52..59, right-aligned across the inputs as NumPy broadcasts them.
 */
#ifndef MICA_MOD_EINSUM_H
#define MICA_MOD_EINSUM_H

#include <stddef.h>
#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MICA__EIN_MAX_IN 16    /* inputs */
#define MICA__EIN_LETTERS 52   /* labels written as letters */
#define MICA__EIN_LABELS 60    /* letters and ellipsis dimensions */
#define MICA__EIN_ELLIPSIS (-1) /* the ellipsis in a parsed term */
#define MICA__EIN_MAX_LD 16    /* dimensions of a CUDA intermediate */

/* A parsed equation: terms of label numbers (MICA__EIN_ELLIPSIS for
 * "..."), each at most MICA_MAX_DIMS labels besides the ellipsis. */
typedef struct mica__ein_eq {
    int32_t nb_terms;
    int32_t len[MICA__EIN_MAX_IN];
    int8_t term[MICA__EIN_MAX_IN][MICA_MAX_DIMS + 1];
    int32_t pos[MICA__EIN_MAX_IN]; /* 1-based position of each term */
    int32_t has_output;            /* explicit mode ("->") */
    int32_t out_len;
    int8_t out[MICA_MAX_DIMS + 1];
} mica__ein_eq_t;

/*
 * Parse `text` (the grammar is in docs/manifest.md).  Fails with one
 * line naming the 1-based position of the problem.
 */
mica_status_t mica__ein_parse(const char *text, mica__ein_eq_t *eq,
                              mica_error_t *err);

/* The equation bound to its inputs' ranks: the label of each dimension. */
typedef struct mica__ein_bind {
    int32_t nb_in;
    int32_t rank[MICA__EIN_MAX_IN];
    int8_t lab[MICA__EIN_MAX_IN][MICA_MAX_DIMS];
    int32_t out_rank;
    int8_t out[MICA_MAX_DIMS];
} mica__ein_bind_t;

/* Bind eq to nb_in inputs of the given ranks; fails when the number of
 * terms, a term's rank or the output's rank does not fit. */
mica_status_t mica__ein_bind(const mica__ein_eq_t *eq, int32_t nb_in,
                             const int32_t *ranks, mica__ein_bind_t *b,
                             mica_error_t *err);

/*
 * The size of every label from the inputs' dimensions (-1 in dims: not
 * known, skipped): size[l] for l < MICA__EIN_LABELS, -1 for an unused or
 * unknown label.  A label's occurrences must be equal or 1 (then
 * broadcast), and equal within one input (a diagonal).
 */
mica_status_t mica__ein_sizes(const mica__ein_bind_t *b,
                              const int64_t (*dims)[MICA_MAX_DIMS],
                              int64_t *size, mica_error_t *err);

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * gather: dst[o] = sum over r of src[offset(o) + offset(r)], o over
 * nd dimensions of sizes osize (row-major into dst) with source strides
 * ostride, r over nr dimensions rsize / rstride (nr 0: a plain strided
 * copy: transposes, diagonals, broadcasts).  Accumulates in float.
 */
typedef struct mica__ein_gather {
    int32_t nd, nr;
    int64_t osize[MICA__EIN_MAX_LD], ostride[MICA__EIN_MAX_LD];
    int64_t rsize[MICA__EIN_MAX_LD], rstride[MICA__EIN_MAX_LD];
    int64_t n_out, n_red;
} mica__ein_gather_t;

/* Queue a gather of `dtype` (float32, float16), n_out > 0. */
mica_status_t mica__ein_gather_cuda(mica_dtype_t dtype,
                                    const mica__ein_gather_t *g,
                                    const void *src, void *dst, void *stream,
                                    mica_error_t *err);

/* cuBLAS, opened on first use: the calling thread's handle (the kit's)
 * into *handle; destroy forgets one (the kit keeps it). */
mica_status_t mica__ein_cublas_handle(void **handle, mica_error_t *err);
void mica__ein_cublas_destroy(void *handle);
/* cuBLAS's scratch at the end of the layer's workspace. */
#define MICA__EIN_CUBLAS_WORKSPACE ((size_t)32 << 20)

/*
 * Row-major C[b] = op(A[b]) op(B[b]) for b < batch: A is M x K (stored
 * K x M when trans_a), B is K x N (stored N x K when trans_b), all
 * contiguous per batch.  float32 or float16, float accumulation.
 */
mica_status_t mica__ein_gemm(void *handle, mica_dtype_t dtype, int trans_a,
                             int trans_b, int64_t batch, int64_t m,
                             int64_t n, int64_t k, const void *a,
                             const void *b, void *c, void *ws,
                             size_t ws_size, void *stream,
                             mica_error_t *err);

/* The order of pairwise contractions: step s contracts operands
 * pair[s][0] and pair[s][1] (inputs 0..n-1, results n, n+1, ...). */
typedef struct mica__ein_order {
    int32_t nb;
    int32_t pair[MICA__EIN_MAX_IN][2];
} mica__ein_order_t;

/* The cheapest-first (fewest multiply-adds) greedy order for `size`. */
void mica__ein_choose_order(const mica__ein_bind_t *b, const int64_t *size,
                            mica__ein_order_t *order);

/* Workspace bytes for sizes at most `size` (cuBLAS's included). */
size_t mica__ein_workspace(const mica__ein_bind_t *b,
                           const mica__ein_order_t *order,
                           const int64_t *size, mica_dtype_t dtype);

/* Run the einsum on the device: inputs of the bound dims, `size` from
 * mica__ein_sizes, every output element computed. */
mica_status_t mica__ein_run(const mica__ein_bind_t *b,
                            const mica__ein_order_t *order,
                            const int64_t *size,
                            const int64_t (*dims)[MICA_MAX_DIMS],
                            mica_dtype_t dtype, const void *const *inputs,
                            void *output, void *workspace, size_t ws_size,
                            void *handle, void *stream, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_EINSUM_H */
