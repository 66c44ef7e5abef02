/*
 * modules/convolution/conv_cudnn.c - Convolution and Deconvolution
 * through cuDNN's legacy API (implementation "cudnn"), reached through
 * the kit's lazily opened table (kit_cudnn.h).
 *
 * Convolution is cudnnConvolutionForward; Deconvolution is the transpose,
 * cudnnConvolutionBackwardData with our input as dy and our output as dx:
 * its filter [K, C/G, k...] of the forward convolution from dx (M
 * channels) to dy (C channels) is exactly Deconvolution's kernel [C, M/G,
 * k...].  The bias is cudnnAddTensor after either.  2D problems use 4D
 * descriptors, 3D ones 5D.  float32 computes with CUDNN_FMA_MATH (no
 * TF32); float16 data with float32 accumulation (CUDNN_DATA_FLOAT compute
 * type) and CUDNN_TENSOR_OP_MATH: tensor cores.  Descriptors are set
 * again only when the problem changes.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "kit_cudnn.h"

struct mica__conv_dnn {
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int set;                  /* descriptors hold `key` */
    mica__conv_problem_t key; /* the problem they describe (p ignored) */
    int key_nhwc;
};

mica__conv_dnn_t *mica__conv_dnn_new(void)
{
    return calloc(1, sizeof(mica__conv_dnn_t));
}

void mica__conv_dnn_free(mica__conv_dnn_t *d)
{
    if (!d)
        return;
    /* Descriptors exist only once cuDNN was opened (see describe). */
    if (d->x)
        mica__cudnn.destroy_tensor(d->x);
    if (d->y)
        mica__cudnn.destroy_tensor(d->y);
    if (d->b)
        mica__cudnn.destroy_tensor(d->b);
    if (d->w)
        mica__cudnn.destroy_filter(d->w);
    if (d->conv)
        mica__cudnn.destroy_conv(d->conv);
    free(d);
}

int mica__conv_dnn_takes(const mica__conv_problem_t *pb)
{
    const mica__window_t *w = &pb->p->win;
    int64_t x[5], y[5];
    int i;

    for (i = 0; i < 3; i++)
        if (w->pre[i] != w->post[i] || pb->in[i] < 1 || pb->out[i] < 1)
            return 0;
    x[0] = y[0] = pb->n;
    x[1] = pb->c;
    y[1] = pb->m;
    for (i = 0; i < 3; i++) {
        x[2 + i] = pb->in[i];
        y[2 + i] = pb->out[i];
    }
    return pb->n > 0 && pb->c > 0 && mica__cudnn_fits(x, 5) &&
           mica__cudnn_fits(y, 5);
}

/* Set d's descriptors for pb (after cuDNN is open). */
static mica_status_t describe(mica__conv_dnn_t *d,
                              const mica__conv_problem_t *pb, int nhwc,
                              mica_error_t *err)
{
    const mica__conv_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    int nd = w->nd, n = nd + 2, i, pad[3], stride[3], dil[3], fd[5];
    int64_t xd[5], yd[5], bd[5];
    cudnnDataType_t t = mica__cudnn_dtype(pb->dtype);
    mica_status_t st = MICA_OK;

    if (d->set && d->key_nhwc == nhwc && d->key.dtype == pb->dtype &&
        d->key.n == pb->n && d->key.c == pb->c &&
        memcmp(d->key.in, pb->in, sizeof pb->in) == 0)
        return MICA_OK;
    d->set = 0;
    if (!d->x) {
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->x));
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->y));
        MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->b));
        MICA__CUDNN_TRY(mica__cudnn.create_filter(&d->w));
        MICA__CUDNN_TRY(mica__cudnn.create_conv(&d->conv));
    }
    xd[0] = yd[0] = pb->n;
    xd[1] = pb->c;
    yd[1] = pb->m;
    bd[0] = 1;
    bd[1] = pb->m;
    /* The filter: [M, C/G, k] forward, [C, M/G, k] backward data. */
    fd[0] = (int)(p->deconv ? pb->c : pb->m);
    fd[1] = (int)(p->deconv ? pb->m / p->groups : pb->c / p->groups);
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        xd[2 + i] = pb->in[j];
        yd[2 + i] = pb->out[j];
        bd[2 + i] = 1;
        fd[2 + i] = (int)w->k[j];
        pad[i] = (int)w->pre[j];
        stride[i] = (int)w->stride[j];
        dil[i] = (int)w->dil[j];
    }
    if ((st = mica__cudnn_tensor(d->x, pb->dtype, n, xd, nhwc, err)) !=
            MICA_OK ||
        (st = mica__cudnn_tensor(d->y, pb->dtype, n, yd, nhwc, err)) !=
            MICA_OK ||
        (st = mica__cudnn_tensor(d->b, pb->dtype, n, bd, 0, err)) != MICA_OK)
        goto fail;
    MICA__CUDNN_TRY(mica__cudnn.set_filter(
        d->w, t, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, n, fd));
    MICA__CUDNN_TRY(mica__cudnn.set_conv(d->conv, nd, pad, stride, dil,
                                         CUDNN_CROSS_CORRELATION,
                                         CUDNN_DATA_FLOAT));
    MICA__CUDNN_TRY(mica__cudnn.set_groups(d->conv, (int)p->groups));
    MICA__CUDNN_TRY(mica__cudnn.set_math(
        d->conv,
        pb->dtype == MICA_FLOAT16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    d->key = *pb;
    d->key_nhwc = nhwc;
    d->set = 1;
fail:
    return st;
}

mica_status_t mica__conv_dnn_choose(mica__conv_dnn_t *d,
                                    const mica__conv_problem_t *pb, int nhwc,
                                    size_t ws_cap, int32_t *algo,
                                    mica_error_t *err)
{
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t
        bwd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnHandle_t h;
    mica_status_t st;
    int n = 0, i;

    if ((st = mica__cudnn_handle(&h, NULL, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    *algo = MICA__CONV_DIRECT; /* when no cuDNN algorithm will do */
    if (!pb->p->deconv) {
        MICA__CUDNN_TRY(mica__cudnn.fwd_algos(
            h, d->x, d->w, d->conv, d->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
            &n, fwd));
        for (i = 0; i < n; i++)
            if (fwd[i].status == CUDNN_STATUS_SUCCESS &&
                fwd[i].memory <= ws_cap) {
                *algo = (int32_t)fwd[i].algo;
                break;
            }
    } else {
        MICA__CUDNN_TRY(mica__cudnn.bwd_algos(
            h, d->w, d->x, d->conv, d->y,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, bwd));
        for (i = 0; i < n; i++)
            if (bwd[i].status == CUDNN_STATUS_SUCCESS &&
                bwd[i].memory <= ws_cap) {
                *algo = (int32_t)bwd[i].algo;
                break;
            }
    }
fail:
    return st;
}

mica_status_t mica__conv_dnn_workspace(mica__conv_dnn_t *d,
                                       const mica__conv_problem_t *pb,
                                       int nhwc, int32_t algo, size_t *bytes,
                                       mica_error_t *err)
{
    cudnnHandle_t h;
    mica_status_t st;

    *bytes = 0;
    if ((st = mica__cudnn_handle(&h, NULL, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    if (!pb->p->deconv)
        MICA__CUDNN_TRY(mica__cudnn.fwd_workspace(
            h, d->x, d->w, d->conv, d->y, (cudnnConvolutionFwdAlgo_t)algo,
            bytes));
    else
        MICA__CUDNN_TRY(mica__cudnn.bwd_workspace(
            h, d->w, d->x, d->conv, d->y,
            (cudnnConvolutionBwdDataAlgo_t)algo, bytes));
fail:
    if (st != MICA_OK)
        st = MICA_ERR_UNSUPPORTED;
    return st;
}

int32_t mica__conv_dnn_plain_algo(const mica__conv_problem_t *pb)
{
    return pb->p->deconv ? (int32_t)CUDNN_CONVOLUTION_BWD_DATA_ALGO_0
                         : (int32_t)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
}

mica_status_t mica__conv_dnn_run(mica__conv_dnn_t *d,
                                 const mica__conv_problem_t *pb, int nhwc,
                                 int32_t algo, const void *x, const void *w,
                                 const void *bias, void *y, void *workspace,
                                 size_t ws_bytes, void *stream,
                                 mica_error_t *err)
{
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h;
    mica_status_t st;

    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK ||
        (st = describe(d, pb, nhwc, err)) != MICA_OK)
        return st;
    if (!pb->p->deconv)
        MICA__CUDNN_TRY(mica__cudnn.fwd(h, &one, d->x, x, d->w, w, d->conv,
                                        (cudnnConvolutionFwdAlgo_t)algo,
                                        workspace, ws_bytes, &zero, d->y, y));
    else
        MICA__CUDNN_TRY(mica__cudnn.bwd(h, &one, d->w, w, d->x, x, d->conv,
                                        (cudnnConvolutionBwdDataAlgo_t)algo,
                                        workspace, ws_bytes, &zero, d->y, y));
    if (bias)
        MICA__CUDNN_TRY(
            mica__cudnn.add_tensor(h, &one, d->b, bias, &one, d->y, y));
fail:
    return st;
}
