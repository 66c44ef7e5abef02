/*
 * modules/fullyconnected/fc_onednn.c - FullyConnected on the CPU through
 * oneDNN's inner product (implementation "onednn"): source [rows, C*H*W]
 * plain, weights [K, C*H*W] reordered once into oneDNN's layout, one
 * primitive per batch size.  No input value (C*H*W = 0) gives the bias,
 * computed here.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "kit_nn.h"
#include "fc.h"
#include "kit_onednn.h"

/* Make the runner for `problem` (a mica__fc_problem_t). */
static mica_status_t make(mica__dnnl_run_t *run, const void *problem,
                          mica_error_t *err)
{
    const mica__fc_problem_t *pb = problem;
    dnnl_dims_t xd, yd, wd, bd;
    dnnl_memory_desc_t x_md, y_md, w_plain, w_any, b_md;
    dnnl_inner_product_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    float *wbuf = NULL, *bbuf = NULL;
    const float *wf, *bf = NULL;
    mica_status_t st = MICA_OK;

    xd[0] = yd[0] = pb->rows;
    xd[1] = wd[1] = pb->cols;
    yd[1] = wd[0] = bd[0] = pb->k;
    if ((st = mica__dnnl_plain(&x_md, 2, xd, err)) != MICA_OK ||
        (st = mica__dnnl_plain(&y_md, 2, yd, err)) != MICA_OK ||
        (st = mica__dnnl_plain(&w_plain, 2, wd, err)) != MICA_OK)
        return st;
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&w_any, 2, wd, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a));
    MICA__DNNL_TRY(mica__dnnl.ip_desc(&desc, dnnl_forward_inference, &x_md,
                                      &w_any, pb->bias ? &b_md : NULL,
                                      &y_md));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    wf = mica__dnnl_floats(pb->kernel, &wbuf);
    if (pb->bias)
        bf = mica__dnnl_floats(pb->bias, &bbuf);
    if (!wf || (pb->bias && !bf)) {
        st = MICA_KIT_FAIL(err, "out of host memory");
        goto fail;
    }
    st = mica__dnnl_run_make(run, pd, &x_md, &y_md, &w_plain, wf, bf, pb->k,
                             err);
    pd = NULL;
fail:
    if (pd)
        mica__dnnl.pd_destroy(pd);
    free(wbuf);
    free(bbuf);
    return st;
}

/* C*H*W = 0: every row is the bias (zeros without one). */
static void bias_only(const mica__fc_problem_t *pb, void *y)
{
    int64_t r, j;
    for (r = 0; r < pb->rows; r++)
        for (j = 0; j < pb->k; j++)
            mica__nn_put(y, pb->dtype, r * pb->k + j,
                         pb->bias ? mica__nn_get(pb->bias->values,
                                                 pb->bias->dtype, j)
                                  : 0.0);
}

mica_status_t mica__fc_dnnl_run(mica__fc_dnnl_t **state,
                                const mica__fc_problem_t *pb, const void *x,
                                void *y, mica_error_t *err)
{
    mica__dnnl_run_t *run;
    mica_status_t st;

    if (pb->cols == 0) {
        bias_only(pb, y);
        return MICA_OK;
    }
    /* one primitive per batch size */
    if ((st = mica__dnnl_cached(state, &pb->rows, sizeof pb->rows, make, pb,
                                &run, err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec(run, pb->dtype, x, y, err);
}

void mica__fc_dnnl_free(mica__fc_dnnl_t *s)
{
    mica__dnnl_cache_free(s);
}
