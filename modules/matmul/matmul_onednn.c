/*
 * modules/matmul/matmul_onednn.c - MatrixMultiply on the CPU through
 * oneDNN's matmul (implementation "onednn").
 *
 * oneDNN takes the problem as it is: batch dimensions of 1 broadcast (its
 * own rule, TensorRT's too), a transposed operand is described by its
 * strides, a vector is a matrix of one row (a) or one column (b).  One
 * primitive per shape, remade when the shapes change; an empty inner
 * dimension (K = 0) gives zeros here.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "kit_onednn.h"
#include "matmul.h"

/* A descriptor of nb batch dims b then a rows x cols matrix stored
 * row-major, or transposed (stored cols x rows) with `trans`. */
static mica_status_t operand(dnnl_memory_desc_t *md, int32_t nb,
                             const int64_t *b, int64_t rows, int64_t cols,
                             int trans, mica_error_t *err)
{
    dnnl_dims_t dims, strides;
    mica_status_t st = MICA_OK;
    int64_t mat = rows * cols, s;
    int32_t i;

    for (i = 0; i < nb; i++)
        dims[i] = b[i];
    dims[nb] = rows;
    dims[nb + 1] = cols;
    strides[nb] = trans ? 1 : cols;
    strides[nb + 1] = trans ? rows : 1;
    s = mat > 0 ? mat : 1;
    for (i = nb - 1; i >= 0; i--) {
        strides[i] = s;
        s *= b[i] > 0 ? b[i] : 1;
    }
    MICA__DNNL_TRY(
        mica__dnnl.md_by_strides(md, nb + 2, dims, dnnl_f32, strides));
fail:
    return st;
}

/* Make the runner for `problem` (a mica__mm_problem_t). */
static mica_status_t make(mica__dnnl_run_t *run, const void *problem,
                          mica_error_t *err)
{
    const mica__mm_problem_t *p = problem;
    dnnl_memory_desc_t a, b, c;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    mica_status_t st = MICA_OK;

    if ((st = operand(&a, p->nb, p->ba, p->M, p->K, p->trans_a, err)) !=
            MICA_OK ||
        (st = operand(&b, p->nb, p->bb, p->K, p->N, p->trans_b, err)) !=
            MICA_OK ||
        (st = operand(&c, p->nb, p->bo, p->M, p->N, 0, err)) != MICA_OK)
        return st;
    MICA__DNNL_TRY(mica__dnnl.matmul_desc(&desc, &a, &b, NULL, &c));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    /* b is oneDNN's weights, given at each run in its own layout. */
    st = mica__dnnl_run_make(run, pd, &a, &c, &b, NULL, NULL, 0, err);
fail:
    return st;
}

mica_status_t mica__matmul_dnnl_run(mica__mm_dnnl_t **state,
                                    const mica__mm_problem_t *p,
                                    const void *a, const void *b, void *c,
                                    mica_error_t *err)
{
    mica__dnnl_run_t *run;
    mica_status_t st;

    if (p->K == 0) {
        int64_t n = p->M * p->N;
        int32_t i;
        for (i = 0; i < p->nb; i++)
            n *= p->bo[i];
        memset(c, 0, (size_t)n * (p->dtype == MICA_FLOAT16 ? 2 : 4));
        return MICA_OK;
    }
    /* the problem the primitive is made for */
    if ((st = mica__dnnl_cached(state, p, sizeof *p, make, p, &run, err)) !=
        MICA_OK)
        return st;
    return mica__dnnl_run_exec2(run, p->dtype, a, b, c, err);
}

void mica__matmul_dnnl_free(mica__mm_dnnl_t *s)
{
    mica__dnnl_cache_free(s);
}
