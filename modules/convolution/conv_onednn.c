/*
 * modules/convolution/conv_onednn.c - Convolution and Deconvolution on
 * the CPU through oneDNN (implementation "onednn").
 *
 * One primitive per input shape: made at the first run of a shape (and
 * again when the shape changes, within a profile), with the source,
 * destination and weights in the layouts oneDNN prefers (blocked ones;
 * the kit's runner reorders around the primitive); the weights are
 * reordered once per primitive.  Direct algorithms only (no Winograd:
 * the results stay within float32 rounding of the reference).
 * Convolution's kernel [M, C/G, k...] is oneDNN's grouped [G, M/G, C/G,
 * k...] as is; Deconvolution's [C, M/G, k...] is described to oneDNN by
 * strides as [G, M/G, C/G, k...].  No input channel (C = 0) is the
 * reference's case: the bias alone.  FusedConvolution's float32 runs
 * add a post-op to the primitive (mica__conv_dnnl_run_post): the sum of
 * a residual (the kit's accumulator, put into the destination before
 * the primitive runs), part of the cache's key; the ReLU follows on the
 * host (oneDNN's makes NaN of -inf).
 * A 2D Convolution also takes channels last (NHWC, MICA_FORMAT_HWC):
 * where the work per element is small (nhwc_direct: 1x1, depthwise, few
 * channels), the primitive is asked for oneDNN's nhwc source and
 * destination first, which its kernels read and write as they are, so
 * that no reorder runs around it; elsewhere, and where it has no such
 * kernel, its own choice of layouts (blocked, reordered around it).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "kit_nn.h"
#include "kit_onednn.h"

/*
 * Whether a channels-last convolution asks oneDNN for nhwc itself: where
 * the work per element is small (a 1x1 kernel, depthwise, or few input
 * channels per group times the window), the reorders into a blocked
 * layout and back would cost more than the kernel gains from them; a
 * larger one (3x3 over many channels) runs faster blocked (AVX2's
 * jit:avx2 is several times slower on nhwc there), reorders included.
 */
static int nhwc_direct(const mica__conv_problem_t *pb, const mica__window_t *w)
{
    int64_t kv = 1, cpg = pb->c / (pb->p->groups > 0 ? pb->p->groups : 1);
    int i;
    for (i = 0; i < w->nd; i++)
        kv *= w->k[3 - w->nd + i];
    return kv == 1 || cpg == 1 || cpg * kv <= 64;
}

/* Spatial values of a window array v, nd of them, minus `minus`. */
static void spatial(const mica__conv_problem_t *pb, const int64_t *v,
                    int64_t minus, dnnl_dims_t out)
{
    int nd = pb->p->win.nd, i;
    for (i = 0; i < nd; i++)
        out[i] = v[3 - nd + i] - minus;
}

/* dims[0..1] = a, b, then the nd spatial sizes of s. */
static int shape(const mica__conv_problem_t *pb, int64_t a, int64_t b,
                 const int64_t *s, int64_t *dims)
{
    int nd = pb->p->win.nd, i;
    dims[0] = a;
    dims[1] = b;
    for (i = 0; i < nd; i++)
        dims[2 + i] = s[3 - nd + i];
    return nd + 2;
}

/* The kernel as oneDNN's grouped weights [G, M/G, C/G, k...]: its plain
 * (user) descriptor, by strides over mica's layout. */
static mica_status_t weights_md(const mica__conv_problem_t *pb,
                                dnnl_memory_desc_t *md, mica_error_t *err)
{
    const mica__conv_params_t *p = pb->p;
    int64_t g = p->groups, mpg = pb->m / g, cpg = pb->c / g;
    int nd = p->win.nd, i, n = nd + 3;
    dnnl_dims_t dims, strides;
    mica_status_t st = MICA_OK;

    dims[0] = g;
    dims[1] = mpg;
    dims[2] = cpg;
    for (i = 0; i < nd; i++)
        dims[3 + i] = p->win.k[3 - nd + i];
    for (i = n - 1; i >= 3; i--)
        strides[i] = i == n - 1 ? 1 : strides[i + 1] * dims[i + 1];
    if (p->deconv) { /* [C, M/G, k]: c = g*cpg + i, then o */
        strides[1] = p->kvol;
        strides[2] = mpg * p->kvol;
        strides[0] = cpg * mpg * p->kvol;
    } else {        /* [M, C/G, k]: o = g*mpg + o', then c */
        strides[2] = p->kvol;
        strides[1] = cpg * p->kvol;
        strides[0] = mpg * cpg * p->kvol;
    }
    MICA__DNNL_TRY(mica__dnnl.md_by_strides(md, n, dims, dnnl_f32, strides));
fail:
    return st;
}

/* What a runner is made for: the problem, its layout, its sum. */
typedef struct post_problem {
    const mica__conv_problem_t *pb;
    int nhwc, sum;
} post_problem_t;

/* Make the runner for problem `problem` (a post_problem_t). */
static mica_status_t make(mica__dnnl_run_t *run, const void *problem,
                          mica_error_t *err)
{
    const post_problem_t *pp = problem;
    const mica__conv_problem_t *pb = pp->pb;
    const mica__conv_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    dnnl_dims_t xd, yd, wd, bd;
    dnnl_memory_desc_t x_any, y_any, w_any, b_md, x_plain, y_plain, w_plain;
    dnnl_convolution_desc_t cd;
    dnnl_deconvolution_desc_t dd;
    dnnl_dims_t strides, dil, pre, post;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    float *wbuf = NULL, *bbuf = NULL;
    const float *wf, *bf = NULL;
    mica_status_t st = MICA_OK;
    int nx, nw, i;

    nx = shape(pb, pb->n, pb->c, pb->in, xd);
    shape(pb, pb->n, pb->m, pb->out, yd);
    wd[0] = p->groups;
    wd[1] = pb->m / p->groups;
    wd[2] = pb->c / p->groups;
    for (i = 0; i < w->nd; i++)
        wd[3 + i] = w->k[3 - w->nd + i];
    nw = w->nd + 3;
    bd[0] = pb->m;
    spatial(pb, w->stride, 0, strides);
    spatial(pb, w->dil, 1, dil);
    spatial(pb, w->pre, 0, pre);
    spatial(pb, w->post, 0, post);
    if (pp->nhwc) { /* x and y channels last: oneDNN's nhwc */
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&x_plain, nx, xd, dnnl_f32,
                                            dnnl_nhwc));
        MICA__DNNL_TRY(mica__dnnl.md_by_tag(&y_plain, nx, yd, dnnl_f32,
                                            dnnl_nhwc));
    } else if ((st = mica__dnnl_plain(&x_plain, nx, xd, err)) != MICA_OK ||
               (st = mica__dnnl_plain(&y_plain, nx, yd, err)) != MICA_OK)
        goto fail;
    if ((st = weights_md(pb, &w_plain, err)) != MICA_OK)
        goto fail;
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&x_any, nx, xd, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&y_any, nx, yd, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&w_any, nw, wd, dnnl_f32,
                                        dnnl_format_tag_any));
    MICA__DNNL_TRY(mica__dnnl.md_by_tag(&b_md, 1, bd, dnnl_f32, dnnl_a));
    if (pp->sum && (st = mica__dnnl_post_sum(&attr, err)) != MICA_OK)
        goto fail;
    if (p->deconv) {
        MICA__DNNL_TRY(mica__dnnl.deconv_desc(
            &dd, dnnl_forward_inference, dnnl_deconvolution_direct, &x_any,
            &w_any, p->bias ? &b_md : NULL, &y_any, strides, dil, pre, post));
        MICA__DNNL_TRY(mica__dnnl.pd_create(&pd, &dd, attr,
                                            mica__dnnl_engine(), NULL));
    } else {
        /* Channels last: the source and destination as they are where
         * oneDNN has a kernel for them (its AVX2 and AVX-512 ones do), so
         * that no reorder runs around the primitive; else its choice. */
        if (pp->nhwc && nhwc_direct(pb, w) &&
            mica__dnnl.conv_desc(&cd, dnnl_forward_inference,
                                 dnnl_convolution_direct, &x_plain, &w_any,
                                 p->bias ? &b_md : NULL, &y_plain, strides,
                                 dil, pre, post) == dnnl_success &&
            mica__dnnl.pd_create(&pd, &cd, attr, mica__dnnl_engine(),
                                 NULL) != dnnl_success)
            pd = NULL;
        if (!pd) {
            MICA__DNNL_TRY(mica__dnnl.conv_desc(
                &cd, dnnl_forward_inference, dnnl_convolution_direct, &x_any,
                &w_any, p->bias ? &b_md : NULL, &y_any, strides, dil, pre,
                post));
            MICA__DNNL_TRY(mica__dnnl.pd_create(&pd, &cd, attr,
                                                mica__dnnl_engine(), NULL));
        }
    }
    wf = mica__dnnl_floats(p->kernel, &wbuf);
    if (p->bias)
        bf = mica__dnnl_floats(p->bias, &bbuf);
    if (!wf || (p->bias && !bf)) {
        st = MICA_KIT_FAIL(err, "out of host memory");
        goto fail;
    }
    st = mica__dnnl_run_make(run, pd, &x_plain, &y_plain, &w_plain, wf, bf,
                             pb->m, err);
    pd = NULL; /* consumed */
fail:
    if (pd)
        mica__dnnl.pd_destroy(pd);
    if (attr)
        mica__dnnl.attr_destroy(attr);
    free(wbuf);
    free(bbuf);
    return st;
}

/* The runner of pb with its post-op (the key: the shape, the layout and
 * the sum). */
static mica_status_t runner(mica__conv_dnnl_t **state,
                            const mica__conv_problem_t *pb, int nhwc,
                            int sum, mica__dnnl_run_t **run,
                            mica_error_t *err)
{
    int64_t key[7] = {pb->n, pb->c, pb->in[0], pb->in[1], pb->in[2], nhwc,
                      sum};
    post_problem_t pp;

    pp.pb = pb;
    pp.nhwc = nhwc;
    pp.sum = sum;
    return mica__dnnl_cached(state, key, sizeof key, make, &pp, run, err);
}

mica_status_t mica__conv_dnnl_run(mica__conv_dnnl_t **state,
                                  const mica__conv_problem_t *pb, int nhwc,
                                  const void *x, void *y, mica_error_t *err)
{
    mica__dnnl_run_t *run;
    mica_status_t st;

    if (pb->c == 0) { /* nothing to convolve: the bias (linear alone) */
        mica__conv_reference(pb, x, y);
        return MICA_OK;
    }
    if ((st = runner(state, pb, nhwc, 0, &run, err)) != MICA_OK)
        return st;
    return mica__dnnl_run_exec(run, pb->dtype, x, y, err);
}

int mica__conv_dnnl_post_takes(const mica__conv_problem_t *pb)
{
    return pb->dtype == MICA_FLOAT32 && pb->c > 0 && !pb->p->deconv;
}

mica_status_t mica__conv_dnnl_run_post(mica__conv_dnnl_t **state,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, const float *x,
                                       const float *acc, int relu, float *y,
                                       mica_error_t *err)
{
    mica__dnnl_run_t *run;
    mica_status_t st;

    if ((st = runner(state, pb, nhwc, acc != NULL, &run, err)) != MICA_OK)
        return st;
    st = acc ? mica__dnnl_run_exec_acc(run, x, acc, y, err)
             : mica__dnnl_run_exec(run, MICA_FLOAT32, x, y, err);
    /* Activation's relu here rather than oneDNN's post-op, which gives
     * 0 for NaN and NaN for -inf */
    if (st == MICA_OK && relu)
        mica__nn_relu_f32(y, y, run->dst_count);
    return st;
}

void mica__conv_dnnl_free(mica__conv_dnnl_t *s)
{
    mica__dnnl_cache_free(s);
}
