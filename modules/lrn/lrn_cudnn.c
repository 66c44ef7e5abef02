/*
 * modules/lrn/lrn_cudnn.c - LRN through cuDNN's legacy API
 * (implementation "cudnn"): cudnnLRNCrossChannelForward, whose formula is
 * mica's (alpha divided by the window), on [N, C, H*W, 1].
 *
 * cuDNN takes window 1 to 16, k >= 1e-5 and beta >= 0.01 (cudnn_ops.h's
 * CUDNN_LRN_*), which hold TensorRT's ranges; it is given the params as
 * written (doubles), since their float roundings can fall under those
 * bounds (0.01f < 0.01).  Whether cuDNN takes the params is decided once,
 * at configure time: the descriptor is set there, and params cuDNN
 * refuses (a negative alpha, or any it rejects) run the hand-written
 * kernel, as do sizes beyond cuDNN's int.  The tensor descriptor is set
 * again only when the shape changes.
 */
#include <config.h>

#include <stdlib.h>

#include "kit_cudnn.h"
#include "lrn.h"

struct mica__lrn_dnn {
    cudnnLRNDescriptor_t ld;  /* set: cuDNN takes the params */
    cudnnTensorDescriptor_t td;
    int decided, takes;
    mica_dtype_t key_dtype;   /* td describes [n, c, hw, 1] of this type */
    int64_t key[3];
};

void mica__lrn_dnn_free(mica__lrn_dnn_t *d)
{
    if (!d)
        return;
    /* Descriptors exist only once cuDNN was opened. */
    if (d->ld)
        mica__cudnn.destroy_lrn(d->ld);
    if (d->td)
        mica__cudnn.destroy_tensor(d->td);
    free(d);
}

int mica__lrn_cudnn_takes(const mica__lrn_exact_t *e)
{
    return e->window >= CUDNN_LRN_MIN_N && e->window <= CUDNN_LRN_MAX_N &&
           e->alpha >= 0 && e->beta >= CUDNN_LRN_MIN_BETA &&
           e->k >= CUDNN_LRN_MIN_K;
}

mica_status_t mica__lrn_dnn_configure(mica__lrn_dnn_t **dp,
                                      const mica__lrn_exact_t *e,
                                      mica_error_t *err)
{
    mica__lrn_dnn_t *d = *dp;
    mica_status_t st;
    cudnnStatus_t s;

    if (d && d->decided)
        return MICA_OK;
    if (!d && !(d = *dp = calloc(1, sizeof *d))) {
        mica_kit_host->set_error(err, "out of host memory");
        return MICA_ERR_NOMEM;
    }
    d->decided = 1;
    if (!mica__lrn_cudnn_takes(e))
        return MICA_OK;
    if ((st = mica__cudnn_open(err)) != MICA_OK)
        goto fail;
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&d->td));
    MICA__CUDNN_TRY(mica__cudnn.create_lrn(&d->ld));
    /* A refusal here is cuDNN's word on params within mica's ranges: the
     * hand-written kernel runs them, as it does a negative alpha. */
    s = mica__cudnn.set_lrn(d->ld, (unsigned)e->window, e->alpha, e->beta,
                            e->k);
    d->takes = s == CUDNN_STATUS_SUCCESS;
    return MICA_OK;
fail:
    d->decided = 0;
    return st;
}

mica_status_t mica__lrn_cudnn(mica__lrn_dnn_t *d,
                              const mica__lrn_problem_t *pb, const void *x,
                              void *y, void *stream, mica_error_t *err)
{
    const float onef = 1.0f, zerof = 0.0f;
    int64_t dims[4];
    cudnnHandle_t h;
    mica_status_t st;

    dims[0] = pb->n;
    dims[1] = pb->c;
    dims[2] = pb->hw;
    dims[3] = 1;
    if (!d->takes || pb->n * pb->c * pb->hw == 0 ||
        !mica__cudnn_fits(dims, 4))
        return mica__lrn_cuda(pb, x, y, stream, err);
    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK)
        return st;
    if (d->key_dtype != pb->dtype || d->key[0] != pb->n ||
        d->key[1] != pb->c || d->key[2] != pb->hw) {
        d->key[0] = -1; /* unset until described */
        if ((st = mica__cudnn_tensor(d->td, pb->dtype, 4, dims, 0, err)) !=
            MICA_OK)
            return st;
        d->key_dtype = pb->dtype;
        d->key[0] = pb->n;
        d->key[1] = pb->c;
        d->key[2] = pb->hw;
    }
    /* Scaling factors are float for float and half data. */
    MICA__CUDNN_TRY(mica__cudnn.lrn(h, d->ld, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                    &onef, d->td, x, &zerof, d->td, y));
fail:
    return st;
}
