/*
 * modules/pooling/pool_onednn.c - Pooling on the CPU through oneDNN
 * (implementation "onednn").
 *
 * The input's planes are oneDNN's channels ([1, planes, (D,) H, W], plain
 * layout, reordered into blocks of 8 channels around the primitive); in
 * channels last (a 2D [N, C, H, W] in HWC, which this implementation
 * takes as the CUDA ones do) oneDNN's nhwc as it is, no reorder.  One
 * primitive per input shape and layout, remade when either changes.
 * max is dnnl_pooling_max, average dnnl_pooling_avg_exclude_padding or
 * _include_padding, max_average_blend both, combined here in float32.
 * Problems with a window wholly in the padding (whose results oneDNN
 * does not define as TensorRT does: -inf, 0) are the reference's.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "kit_nn.h"
#include "kit_onednn.h"
#include "pooling.h"

struct mica__pool_dnnl {
    mica__dnnl_run_t max, avg;   /* each made when the type needs it */
    int made;
    int64_t planes, chans, in[3];
    float *x32, *tmp;            /* blend: float32 input, the average */
};

static mica_status_t make_one(mica__dnnl_run_t *run,
                              const mica__pool_problem_t *pb,
                              dnnl_alg_kind_t alg, mica_error_t *err)
{
    const mica__window_t *w = &pb->p->win;
    int nd = w->nd, i, n = nd + 2;
    dnnl_dims_t xd, yd, strides, kernel, dil, pre, post;
    dnnl_memory_desc_t x_md, y_md, x_blk, y_any;
    dnnl_pooling_v2_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    mica_status_t st = MICA_OK;

    /* channels last: [N, C, spatial] in oneDNN's nhwc (ndhwc) */
    xd[0] = yd[0] = pb->chans > 1 ? pb->planes / pb->chans : 1;
    xd[1] = yd[1] = pb->chans > 1 ? pb->chans : pb->planes;
    for (i = 0; i < nd; i++) {
        xd[2 + i] = pb->in[3 - nd + i];
        yd[2 + i] = pb->out[3 - nd + i];
        strides[i] = w->stride[3 - nd + i];
        kernel[i] = w->k[3 - nd + i];
        dil[i] = w->dil[3 - nd + i] - 1; /* oneDNN counts from 0 */
        pre[i] = w->pre[3 - nd + i];
        post[i] = w->post[3 - nd + i];
    }
    if (pb->chans > 1) {
        /* channels last: oneDNN's nhwc kernels, no reorder */
        dnnl_format_tag_t cl = nd == 2 ? dnnl_nhwc : dnnl_ndhwc;
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&x_md, n, xd, dnnl_f32, cl));
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&y_md, n, yd, dnnl_f32, cl));
        x_blk = x_md;
        y_any = y_md;
    } else {
        if ((st = mica__dnnl_plain(&x_md, n, xd, err)) != MICA_OK ||
            (st = mica__dnnl_plain(&y_md, n, yd, err)) != MICA_OK)
            return st;
        /* oneDNN's fast pooling wants channels in blocks of 8: the
         * planes in that layout (the runner reorders around the
         * primitive). */
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&x_blk, n, xd, dnnl_f32,
                                            nd == 2 ? dnnl_aBcd8b
                                                    : dnnl_aBcde8b));
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&y_any, n, yd, dnnl_f32,
                                            dnnl_format_tag_any));
    }
    MICA__DNNL_TRY(mica__dnnl.pool_desc(&desc, dnnl_forward_inference, alg,
                                        &x_blk, &y_any, strides, kernel, dil,
                                        pre, post));
    MICA__DNNL_TRY(
        mica__dnnl.pd_create(&pd, &desc, NULL, mica__dnnl_engine(), NULL));
    st = mica__dnnl_run_make(run, pd, &x_md, &y_md, NULL, NULL, NULL, 0, err);
fail:
    return st;
}

static mica_status_t make(mica__pool_dnnl_t *s, const mica__pool_problem_t *pb,
                          mica_error_t *err)
{
    const mica__pool_params_t *p = pb->p;
    dnnl_alg_kind_t avg = p->exclude_pad ? dnnl_pooling_avg_exclude_padding
                                         : dnnl_pooling_avg_include_padding;
    mica_status_t st = MICA_OK;
    int64_t nx = pb->planes * pb->in[0] * pb->in[1] * pb->in[2];
    int64_t ny = pb->planes * pb->out[0] * pb->out[1] * pb->out[2];

    if (p->type != MICA__POOL_AVERAGE &&
        (st = make_one(&s->max, pb, dnnl_pooling_max, err)) != MICA_OK)
        return st;
    if (p->type != MICA__POOL_MAX &&
        (st = make_one(&s->avg, pb, avg, err)) != MICA_OK) {
        mica__dnnl_run_free(&s->max);
        return st;
    }
    if (p->type == MICA__POOL_BLEND) {
        s->x32 = malloc((size_t)nx * sizeof(float));
        s->tmp = malloc((size_t)(2 * ny) * sizeof(float));
        if (!s->x32 || !s->tmp) {
            mica__dnnl_run_free(&s->max);
            mica__dnnl_run_free(&s->avg);
            return MICA_KIT_FAIL(err, "out of host memory");
        }
    }
    s->made = 1;
    s->planes = pb->planes;
    s->chans = pb->chans;
    memcpy(s->in, pb->in, sizeof s->in);
    return MICA_OK;
}

static void unmake(mica__pool_dnnl_t *s)
{
    mica__dnnl_run_free(&s->max);
    mica__dnnl_run_free(&s->avg);
    free(s->x32);
    free(s->tmp);
    s->x32 = s->tmp = NULL;
    s->made = 0;
}

/* max_average_blend: both pools in float32, then the blend. */
static mica_status_t blend(mica__pool_dnnl_t *s, const mica__pool_problem_t *pb,
                           const void *x, void *y, mica_error_t *err)
{
    int64_t nx = pb->planes * pb->in[0] * pb->in[1] * pb->in[2];
    int64_t ny = pb->planes * pb->out[0] * pb->out[1] * pb->out[2], i;
    const float *xf = x;
    float b = pb->p->blend, *mx = s->tmp, *av = s->tmp + ny;
    mica_status_t st;

    if (pb->dtype == MICA_FLOAT16) {
        for (i = 0; i < nx; i++)
            s->x32[i] = (float)mica__nn_get(x, MICA_FLOAT16, i);
        xf = s->x32;
    }
    if ((st = mica__dnnl_run_exec(&s->max, MICA_FLOAT32, xf, mx, err)) !=
            MICA_OK ||
        (st = mica__dnnl_run_exec(&s->avg, MICA_FLOAT32, xf, av, err)) !=
            MICA_OK)
        return st;
    for (i = 0; i < ny; i++) {
        float v = (b == 1.0f ? 0.0f : (1.0f - b) * mx[i]) + b * av[i];
        mica__nn_put(y, pb->dtype, i, v);
    }
    return MICA_OK;
}

mica_status_t mica__pool_dnnl_run(mica__pool_dnnl_t **state,
                                  const mica__pool_problem_t *pb,
                                  const void *x, void *y, mica_error_t *err)
{
    mica__pool_dnnl_t *s = *state;
    mica_status_t st;

    if (mica__pool_has_empty_window(pb)) {
        mica__pool_reference(pb, x, y);
        return MICA_OK;
    }
    if (!s) {
        if ((st = mica__dnnl_open(err)) != MICA_OK)
            return st;
        if (!(s = *state = calloc(1, sizeof *s)))
            return MICA_KIT_FAIL(err, "out of host memory");
    }
    if (s->made && (s->planes != pb->planes || s->chans != pb->chans ||
                    memcmp(s->in, pb->in, sizeof s->in) != 0))
        unmake(s);
    if (!s->made && (st = make(s, pb, err)) != MICA_OK)
        return st;
    switch (pb->p->type) {
    case MICA__POOL_MAX:
        return mica__dnnl_run_exec(&s->max, pb->dtype, x, y, err);
    case MICA__POOL_AVERAGE:
        return mica__dnnl_run_exec(&s->avg, pb->dtype, x, y, err);
    default:
        return blend(s, pb, x, y, err);
    }
}

void mica__pool_dnnl_free(mica__pool_dnnl_t *s)
{
    if (!s)
        return;
    unmake(s);
    free(s);
}
