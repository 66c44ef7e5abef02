/*
 * modules/pooling/pool_cudnn.c - Pooling through cuDNN's legacy API
 * (implementation "cudnn"), reached through the kit's lazily opened
 * table (kit_cudnn.h).
 *
 * cuDNN takes max and average (counting the padding or not) with
 * symmetric padding smaller than the window; pooling.c sends the rest
 * (max_average_blend, asymmetric padding, windows wholly in the padding)
 * to the hand-written kernel.  The planes are cuDNN's channels: [1,
 * planes, (D,) H, W]; channels last, [N, C, H, W] in NHWC (pooling.h).
 * The descriptors are made at the first run and
 * kept by the layer instance; the tensors' are set again only when the
 * shape changes.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

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
        if (w->pre[i] != w->post[i] || w->pre[i] >= w->k[i] ||
            w->dil[i] != 1) /* cuDNN's pooling has no dilation */
            return 0;
    d[0] = pb->planes;
    for (i = 0; i < 3; i++)
        d[1 + i] = pb->in[i];
    d[4] = 1;
    return pb->planes > 0 && mica__cudnn_fits(d, 5);
}

struct mica__pool_dnn {
    cudnnTensorDescriptor_t x, y;
    cudnnPoolingDescriptor_t pool; /* set once: the params */
    int set;                       /* x and y describe key */
    mica__pool_problem_t key;      /* (p ignored) */
};

void mica__pool_dnn_free(mica__pool_dnn_t *d)
{
    if (!d)
        return;
    /* Descriptors exist only once cuDNN was opened. */
    if (d->pool)
        mica__cudnn.destroy_pool(d->pool);
    if (d->y)
        mica__cudnn.destroy_tensor(d->y);
    if (d->x)
        mica__cudnn.destroy_tensor(d->x);
    free(d);
}

/* A new state for params p: its descriptors made, the pooling one set
 * (cuDNN opened first); NULL with err set on failure. */
static mica__pool_dnn_t *make(const mica__pool_params_t *p,
                              mica_error_t *err)
{
    const mica__window_t *w = &p->win;
    int nd = w->nd, i, win[3], pad[3], stride[3];
    cudnnPoolingMode_t mode;
    mica__pool_dnn_t *d;
    mica_status_t st = MICA_OK;

    if (mica__cudnn_open(err) != MICA_OK)
        return NULL;
    if (!(d = calloc(1, sizeof *d))) {
        mica_kit_host->set_error(err, "out of host memory");
        return NULL;
    }
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        win[i] = (int)w->k[j];
        pad[i] = (int)w->pre[j];
        stride[i] = (int)w->stride[j];
    }
    mode = p->type == MICA__POOL_MAX ? CUDNN_POOLING_MAX_DETERMINISTIC
           : p->exclude_pad ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                            : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->x));
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->y));
    MICA__CUDNN_TRY(mica__cudnn.create_pool(&d->pool));
    MICA__CUDNN_TRY(mica__cudnn.set_pool(d->pool, mode,
                                         CUDNN_NOT_PROPAGATE_NAN, nd, win,
                                         pad, stride));
    return d;
fail:
    (void)st;
    mica__pool_dnn_free(d);
    return NULL;
}

/* Make *dp once, then set its tensors for pb unless they describe it
 * already. */
static mica_status_t describe(mica__pool_dnn_t **dp,
                              const mica__pool_problem_t *pb,
                              mica_error_t *err)
{
    mica__pool_dnn_t *d = *dp;
    int nd = pb->p->win.nd, i, nhwc;
    int64_t xs[5], ys[5];
    mica_status_t st;

    if (d && d->set && d->key.dtype == pb->dtype &&
        d->key.planes == pb->planes && d->key.chans == pb->chans &&
        memcmp(d->key.in, pb->in, sizeof pb->in) == 0)
        return MICA_OK;
    if (!d && !(d = *dp = make(pb->p, err)))
        return MICA_ERR_DEVICE;
    d->set = 0;
    /* One channel channels last is the same bytes as linear. */
    nhwc = pb->chans > 1;
    xs[0] = ys[0] = nhwc ? pb->planes / pb->chans : 1;
    xs[1] = ys[1] = nhwc ? pb->chans : pb->planes;
    for (i = 0; i < nd; i++) {
        int j = 3 - nd + i;
        xs[2 + i] = pb->in[j];
        ys[2 + i] = pb->out[j];
    }
    if ((st = mica__cudnn_tensor(d->x, pb->dtype, nd + 2, xs, nhwc,
                                 err)) != MICA_OK ||
        (st = mica__cudnn_tensor(d->y, pb->dtype, nd + 2, ys, nhwc,
                                 err)) != MICA_OK)
        return st;
    d->key = *pb;
    d->set = 1;
    return MICA_OK;
}

mica_status_t mica__pool_cudnn(mica__pool_dnn_t **d,
                               const mica__pool_problem_t *pb, const void *x,
                               void *y, void *stream, mica_error_t *err)
{
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h;
    mica_status_t st;

    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK ||
        (st = describe(d, pb, err)) != MICA_OK)
        return st;
    MICA__CUDNN_TRY(
        mica__cudnn.pool(h, (*d)->pool, &one, (*d)->x, x, &zero, (*d)->y, y));
fail:
    return st;
}
