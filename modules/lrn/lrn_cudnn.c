/*
 * modules/lrn/lrn_cudnn.c - LRN through cuDNN's legacy API
 * (implementation "cudnn"): cudnnLRNCrossChannelForward, whose formula is
 * mica's (alpha divided by the window) and whose limits (window 1 to 16,
 * k >= 1e-5, beta >= 0.01) hold TensorRT's ranges, on [N, C, H*W, 1].
 * A negative alpha, or sizes beyond cuDNN's int, run the hand-written
 * kernel.
 */
#include <config.h>

#include "kit_cudnn.h"
#include "lrn.h"

mica_status_t mica__lrn_cudnn(const mica__lrn_problem_t *pb, const void *x,
                              void *y, void *stream, mica_error_t *err)
{
    cudnnTensorDescriptor_t td = NULL;
    cudnnLRNDescriptor_t ld = NULL;
    const float onef = 1.0f, zerof = 0.0f;
    int64_t d[4];
    cudnnHandle_t h;
    mica_status_t st;

    d[0] = pb->n;
    d[1] = pb->c;
    d[2] = pb->hw;
    d[3] = 1;
    if (pb->p.alpha < 0 || pb->n * pb->c * pb->hw == 0 ||
        !mica__cudnn_fits(d, 4))
        return mica__lrn_cuda(pb, x, y, stream, err);
    if ((st = mica__cudnn_handle(&h, stream, err)) != MICA_OK)
        return st;
    MICA__CUDNN_TRY(mica__cudnn.create_tensor(&td));
    MICA__CUDNN_TRY(mica__cudnn.create_lrn(&ld));
    if ((st = mica__cudnn_tensor(td, pb->dtype, 4, d, 0, err)) != MICA_OK)
        goto fail;
    MICA__CUDNN_TRY(mica__cudnn.set_lrn(ld, (unsigned)pb->p.window,
                                        pb->p.alpha, pb->p.beta, pb->p.k));
    /* Scaling factors are float for float and half data. */
    MICA__CUDNN_TRY(mica__cudnn.lrn(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                    &onef, td, x, &zerof, td, y));
fail:
    if (ld)
        mica__cudnn.destroy_lrn(ld);
    if (td)
        mica__cudnn.destroy_tensor(td);
    return st;
}
