/*
 * modules/pooling/pool_cudnn.c - Pooling through cuDNN's legacy API
 * (implementation "cudnn"), reached through the kit's lazily opened
 * table (kit_cudnn.h).
 *
 * cuDNN takes max and average (counting the padding or not) with
 * symmetric padding smaller than the window; pooling.c sends the rest
 * (max_average_blend, asymmetric padding, windows wholly in the padding)
 * to the hand-written kernel.  The planes are cuDNN's channels: [1,
 * planes, (D,) H, W].  Descriptors are made per call: a few host calls,
 * against the kernel's microseconds.
 */
#include <config.h>

#include "kit_cudnn.h"
#include "pooling.h"

int mica__pool_cudnn_takes(const mica__pool_problem_t *pb)
{
    const mica__window_t *w = &pb->p->win;
    int64_t d[5];
    int i;

    if (pb->p->type == MICA__POOL_BLEND || mica__pool_has_empty_window(pb))
        return 0;
    for (i = 0; i < 3; i++)
        if (w->pre[i] != w->post[i] || w->pre[i] >= w->k[i])
            return 0;
    d[0] = pb->planes;
    for (i = 0; i < 3; i++)
        d[1 + i] = pb->in[i];
    d[4] = 1;
    return pb->planes > 0 && mica__cudnn_fits(d, 5);
}

mica_status_t mica__pool_cudnn(const mica__pool_problem_t *pb, const void *x,
                               void *y, void *stream, mica_error_t *err)
{
    const mica__pool_params_t *p = pb->p;
    const mica__window_t *w = &p->win;
    cudnnTensorDescriptor_t xd = NULL, yd = NULL;
    cudnnPoolingDescriptor_t pd = NULL;
    cudnnPoolingMode_t mode;
    int nd = w->nd, i, win[3], pad[3], stride[3];
    int64_t xs[5], ys[5];
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h;
    mica_status_t st;

    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK)
        return st;
    xs[0] = ys[0] = 1;
    xs[1] = ys[1] = pb->planes;
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        xs[2 + i] = pb->in[j];
        ys[2 + i] = pb->out[j];
        win[i] = (int)w->k[j];
        pad[i] = (int)w->pre[j];
        stride[i] = (int)w->stride[j];
    }
    mode = p->type == MICA__POOL_MAX ? CUDNN_POOLING_MAX_DETERMINISTIC
           : p->exclude_pad ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                            : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&xd));
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&yd));
    MICA__CUDNN_TRY(mica__cudnn.create_pool(&pd));
    if ((st = mica__cudnn_tensor(xd, pb->dtype, nd + 2, xs, 0, err)) !=
            MICA_OK ||
        (st = mica__cudnn_tensor(yd, pb->dtype, nd + 2, ys, 0, err)) !=
            MICA_OK)
        goto fail;
    MICA__CUDNN_TRY(mica__cudnn.set_pool(pd, mode, CUDNN_NOT_PROPAGATE_NAN,
                                         nd, win, pad, stride));
    MICA__CUDNN_TRY(mica__cudnn.pool(h, pd, &one, xd, x, &zero, yd, y));
fail:
    if (pd)
        mica__cudnn.destroy_pool(pd);
    if (yd)
        mica__cudnn.destroy_tensor(yd);
    if (xd)
        mica__cudnn.destroy_tensor(xd);
    return st;
}
