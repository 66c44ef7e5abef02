/*
 * modules/lrn/lrn_onednn.c - LRN on the CPU through oneDNN
 * (implementation "onednn"): dnnl_lrn_across_channels, whose formula is
 * TensorRT's (alpha divided by the window), on [N, C, H*W, 1] in the
 * plain layout or in nhwc (a channels-last x); one primitive per shape
 * and layout.
 */
#include <config.h>

#include <stdlib.h>

#include "kit_onednn.h"
#include "lrn.h"

/* Make the runner for `problem` (a mica__lrn_problem_t). */
static mica_status_t make(mica__dnnl_run_t *run, const void *problem,
                          mica_error_t *err)
{
    const mica__lrn_problem_t *pb = problem;
    dnnl_dims_t d = {0};
    dnnl_memory_desc_t md;
    dnnl_lrn_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    mica_status_t st = MICA_OK;

    d[0] = pb->n;
    d[1] = pb->c;
    d[2] = pb->hw;
    d[3] = 1;
    if (pb->cl) /* [N, H*W, C] in memory: nhwc of [N, C, H*W, 1] */
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&md, 4, d, dnnl_f32, dnnl_nhwc));
    else if ((st = mica__dnnl_plain(&md, 4, d, err)) != MICA_OK)
        return st;
    MICA__DNNL_TRY(mica__dnnl.lrn_desc(&desc, dnnl_forward_inference,
                                       dnnl_lrn_across_channels, &md,
                                       pb->p.window, pb->p.alpha, pb->p.beta,
                                       pb->p.k));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    st = mica__dnnl_run_make(run, pd, &md, &md, NULL, NULL, NULL, 0, err);
fail:
    return st;
}

mica_status_t mica__lrn_dnnl_run(mica__lrn_dnnl_t **state,
                                 const mica__lrn_problem_t *pb, const void *x,
                                 void *y, mica_error_t *err)
{
    int64_t key[4] = {pb->n, pb->c, pb->hw, pb->cl};
    mica__dnnl_run_t *run;
    mica_status_t st;

    if ((st = mica__dnnl_cached(state, key, sizeof key, make, pb, &run,
                                err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec(run, pb->dtype, x, y, err);
}

void mica__lrn_dnnl_free(mica__lrn_dnnl_t *s)
{
    mica__dnnl_cache_free(s);
}
