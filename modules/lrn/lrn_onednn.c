/*
 * modules/lrn/lrn_onednn.c - LRN on the CPU through oneDNN
 * (implementation "onednn"): dnnl_lrn_across_channels, whose formula is
 * TensorRT's (alpha divided by the window), on [N, C, H*W, 1] in the
 * plain layout; one primitive per shape.
 */
#include <config.h>

#include <stdlib.h>

#include "kit_onednn.h"
#include "lrn.h"

struct mica__lrn_dnnl {
    mica__dnnl_run_t run;
    int made;
    int64_t n, c, hw;
};

static mica_status_t make(mica__lrn_dnnl_t *s, const mica__lrn_problem_t *pb,
                          mica_error_t *err)
{
    int64_t d[4];
    dnnl_memory_desc_t md;
    dnnl_lrn_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    mica_status_t st = MICA_OK;

    d[0] = pb->n;
    d[1] = pb->c;
    d[2] = pb->hw;
    d[3] = 1;
    if ((st = mica__dnnl_plain(&md, 4, d, err)) != MICA_OK)
        return st;
    MICA__DNNL_TRY(mica__dnnl.lrn_desc(&desc, dnnl_forward_inference,
                                       dnnl_lrn_across_channels, &md,
                                       pb->p.window, pb->p.alpha, pb->p.beta,
                                       pb->p.k));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    st = mica__dnnl_run_make(&s->run, pd, &md, &md, NULL, NULL, NULL, 0, err);
    s->made = st == MICA_OK;
    s->n = pb->n;
    s->c = pb->c;
    s->hw = pb->hw;
fail:
    return st;
}

mica_status_t mica__lrn_dnnl_run(mica__lrn_dnnl_t **state,
                                 const mica__lrn_problem_t *pb, const void *x,
                                 void *y, mica_error_t *err)
{
    mica__lrn_dnnl_t *s = *state;
    mica_status_t st;

    if (!s) {
        if ((st = mica__dnnl_open(err)) != MICA_OK)
            return st;
        if (!(s = *state = calloc(1, sizeof *s)))
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    if (s->made && (s->n != pb->n || s->c != pb->c || s->hw != pb->hw)) {
        mica__dnnl_run_free(&s->run);
        s->made = 0;
    }
    if (!s->made && (st = make(s, pb, err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec(&s->run, pb->dtype, x, y, err);
}

void mica__lrn_dnnl_free(mica__lrn_dnnl_t *s)
{
    if (!s)
        return;
    if (s->made)
        mica__dnnl_run_free(&s->run);
    free(s);
}
