/*
 * modules/normalization/normalization.h - the Normalization layer
 * (TensorRT's INormalizationLayer, plus ONNX's RMSNormalization as its
 * `rms` mode): the plan of one run, shared by the CPU implementations
 * and the CUDA kernel, and the kernel's launcher.
 *
 * A run sees x as rows: a row is one position of the axes that are not
 * normalized (the "kept" axes) and holds the `len` elements of the
 * normalized ones (the "reduced" axes).  With num_groups G > 1 the
 * channel axis 1 (C channels) is split into [G, C / G] first: G is a
 * kept axis, C / G a reduced one.  Element j of row i lies at
 *     x:     koff_x(i) + roff_x(j)
 *     scale: koff_s(i) + roff_s(j)        (0 strides along broadcast axes)
 *     bias:  koff_b(i) + roff_b(j)
 * where koff decomposes i over the kept dimensions (row-major) and roff
 * j over the reduced ones.  Then, per row,
 *     standard: y = (x - mean) / sqrt(var + eps) * scale + bias
 *               (var the biased variance, mean and var over the row)
 *     rms:      y = x / sqrt(mean(x^2) + eps) * scale + bias
 * computed in float32 or wider (float16 and bfloat16 widened once, the
 * result rounded once).  A row of no elements writes nothing.
 */
#ifndef MICA_MOD_NORMALIZATION_H
#define MICA_MOD_NORMALIZATION_H

#include <stdint.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most axes of a plan: the rank plus the group split. */
#define MICA__NORM_AXES (MICA_MAX_DIMS + 1)

typedef struct mica__norm_plan {
    int64_t rows, len;       /* rows * len = the volume of x */
    int32_t nk, nr;          /* kept and reduced axes (after merging) */
    int64_t kd[MICA__NORM_AXES], rd[MICA__NORM_AXES];   /* their lengths */
    /* strides in elements of x, scale, bias: [0] x, [1] scale, [2] bias */
    int64_t ks[3][MICA__NORM_AXES], rs[3][MICA__NORM_AXES];
    int32_t contig;          /* x's row i is x[i * len .. (i + 1) * len) */
    int32_t rms;             /* the rms mode */
    int32_t has_bias;        /* bias given (else 0) */
    float eps;
} mica__norm_plan_t;

/* The offsets of row i (off[0..2]: x, scale, bias). */
MICA_KIT_HD void mica__norm_row(const mica__norm_plan_t *p, int64_t i,
                                int64_t *off)
{
    int32_t k;
    off[0] = off[1] = off[2] = 0;
    for (k = p->nk - 1; k >= 0; k--) {
        int64_t c = i % p->kd[k];
        i /= p->kd[k];
        off[0] += c * p->ks[0][k];
        off[1] += c * p->ks[1][k];
        off[2] += c * p->ks[2][k];
    }
}

/* The offsets of element j inside a row, added to off[0..2]. */
MICA_KIT_HD void mica__norm_elem(const mica__norm_plan_t *p, int64_t j,
                                 const int64_t *row, int64_t *off)
{
    int32_t k;
    off[0] = row[0];
    off[1] = row[1];
    off[2] = row[2];
    for (k = p->nr - 1; k >= 0; k--) {
        int64_t c = j % p->rd[k];
        j /= p->rd[k];
        off[0] += c * p->rs[0][k];
        off[1] += c * p->rs[1][k];
        off[2] += c * p->rs[2][k];
    }
}

/* The fusion rules of decomposed layer normalizations (norm_rules.c). */
#define MICA__NORM_NB_RULES 3
extern const mica_fusion_rule_t *const mica__norm_rules[MICA__NORM_NB_RULES];

#if MICA_KIT_CUDA || defined(__CUDACC__)
/*
 * The normalization of plan p (rows * len > 0) on the device: x, scale,
 * bias (NULL where p->has_bias is 0) and y of `dtype` (float32, float16,
 * bfloat16), on `stream`.
 */
mica_status_t mica__normalization_cuda(mica_dtype_t dtype,
                                       const mica__norm_plan_t *p,
                                       const void *x, const void *scale,
                                       const void *bias, void *y,
                                       void *stream, mica_error_t *err);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MICA_MOD_NORMALIZATION_H */
