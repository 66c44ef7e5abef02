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

struct mica__mm_dnnl {
    mica__dnnl_run_t run;
    int made;
    mica__mm_problem_t key; /* the problem the primitive was made for */
};

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

static mica_status_t make(mica__mm_dnnl_t *s, const mica__mm_problem_t *p,
                          mica_error_t *err)
{
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
    st = mica__dnnl_run_make(&s->run, pd, &a, &c, &b, NULL, NULL, 0, err);
    s->made = st == MICA_OK;
    s->key = *p;
fail:
    return st;
}

mica_status_t mica__matmul_dnnl_run(mica__mm_dnnl_t **state,
                                    const mica__mm_problem_t *p,
                                    const void *a, const void *b, void *c,
                                    mica_error_t *err)
{
    mica__mm_dnnl_t *s = *state;
    mica_status_t st;

    if (p->K == 0) {
        int64_t n = p->M * p->N;
        int32_t i;
        for (i = 0; i < p->nb; i++)
            n *= p->bo[i];
        memset(c, 0, (size_t)n * (p->dtype == MICA_FLOAT16 ? 2 : 4));
        return MICA_OK;
    }
    if (!s) {
        if ((st = mica__dnnl_open(err)) != MICA_OK)
            return st;
        if (!(s = *state = calloc(1, sizeof *s)))
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    if (s->made && memcmp(&s->key, p, sizeof *p) != 0) {
        mica__dnnl_run_free(&s->run);
        s->made = 0;
    }
    if (!s->made && (st = make(s, p, err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec2(&s->run, p->dtype, a, b, c, err);
}

void mica__matmul_dnnl_free(mica__mm_dnnl_t *s)
{
    if (!s)
        return;
    if (s->made)
        mica__dnnl_run_free(&s->run);
    free(s);
}
