/*
 * modules/common/kit_cudnn.c - cuDNN opened on first use, its handles per
 * thread and device, tensor descriptors (see kit_cudnn.h).
 */
#include <config.h>

#include "kit_cudnn.h"

#include <limits.h>

#include "kit_handles.h"

MICA_KIT_API mica__cudnn_table_t mica__cudnn;

#define SYM(m, n) MICA_KIT_SYM(mica__cudnn, m, n)
static const mica_kit_sym_t cudnn_syms[] = {
    SYM(create, "cudnnCreate"),
    SYM(set_stream, "cudnnSetStream"),
    SYM(error_string, "cudnnGetErrorString"),
    SYM(create_tensor, "cudnnCreateTensorDescriptor"),
    SYM(set_tensor, "cudnnSetTensorNdDescriptor"),
    SYM(destroy_tensor, "cudnnDestroyTensorDescriptor"),
    SYM(create_filter, "cudnnCreateFilterDescriptor"),
    SYM(set_filter, "cudnnSetFilterNdDescriptor"),
    SYM(destroy_filter, "cudnnDestroyFilterDescriptor"),
    SYM(create_conv, "cudnnCreateConvolutionDescriptor"),
    SYM(set_conv, "cudnnSetConvolutionNdDescriptor"),
    SYM(set_groups, "cudnnSetConvolutionGroupCount"),
    SYM(set_math, "cudnnSetConvolutionMathType"),
    SYM(destroy_conv, "cudnnDestroyConvolutionDescriptor"),
    SYM(fwd_algos, "cudnnGetConvolutionForwardAlgorithm_v7"),
    SYM(fwd_find, "cudnnFindConvolutionForwardAlgorithmEx"),
    SYM(fwd_workspace, "cudnnGetConvolutionForwardWorkspaceSize"),
    SYM(fwd, "cudnnConvolutionForward"),
    SYM(bwd_algos, "cudnnGetConvolutionBackwardDataAlgorithm_v7"),
    SYM(bwd_find, "cudnnFindConvolutionBackwardDataAlgorithmEx"),
    SYM(bwd_workspace, "cudnnGetConvolutionBackwardDataWorkspaceSize"),
    SYM(bwd, "cudnnConvolutionBackwardData"),
    SYM(add_tensor, "cudnnAddTensor"),
    SYM(create_pool, "cudnnCreatePoolingDescriptor"),
    SYM(set_pool, "cudnnSetPoolingNdDescriptor"),
    SYM(destroy_pool, "cudnnDestroyPoolingDescriptor"),
    SYM(pool, "cudnnPoolingForward"),
    SYM(create_lrn, "cudnnCreateLRNDescriptor"),
    SYM(set_lrn, "cudnnSetLRNDescriptor"),
    SYM(destroy_lrn, "cudnnDestroyLRNDescriptor"),
    SYM(lrn, "cudnnLRNCrossChannelForward"),
    SYM(create_act, "cudnnCreateActivationDescriptor"),
    SYM(set_act, "cudnnSetActivationDescriptor"),
    SYM(destroy_act, "cudnnDestroyActivationDescriptor"),
    SYM(fwd_bias_act, "cudnnConvolutionBiasActivationForward"),
    SYM(version, "cudnnGetVersion"),
    SYM(be_create, "cudnnBackendCreateDescriptor"),
    SYM(be_destroy, "cudnnBackendDestroyDescriptor"),
    SYM(be_set, "cudnnBackendSetAttribute"),
    SYM(be_get, "cudnnBackendGetAttribute"),
    SYM(be_finalize, "cudnnBackendFinalize"),
    SYM(be_execute, "cudnnBackendExecute"),
};
#undef SYM

static mica_kit_lib_t cudnn_lib =
    MICA_KIT_LIB("cuDNN", "libcudnn.so." MICA_KIT_STR(CUDNN_MAJOR),
                 &mica__cudnn, cudnn_syms);

static mica__handles_t handles = MICA__HANDLES_INIT;

mica_status_t mica__cudnn_open(mica_error_t *err)
{
    return mica_kit_lib_open(&cudnn_lib, err);
}

/* A new handle; 0 or -1 with err set. */
static int make(void **out, mica_error_t *err)
{
    cudnnHandle_t h = NULL;
    cudnnStatus_t s = mica__cudnn.create(&h);

    if (s != CUDNN_STATUS_SUCCESS) {
        mica_kit_host->set_error(err, "cannot make a cuDNN handle: %s",
                                 mica__cudnn.error_string(s));
        return -1;
    }
    *out = h;
    return 0;
}

mica_status_t mica__cudnn_handle(cudnnHandle_t *h, void *stream,
                                 mica_error_t *err)
{
    mica_status_t st;
    void *p = NULL;

    if ((st = mica__cudnn_open(err)) != MICA_OK ||
        (st = mica__handle_get(&handles, &p, make, err)) != MICA_OK)
        return st;
    *h = (cudnnHandle_t)p;
    MICA__CUDNN_TRY(mica__cudnn.set_stream(*h, (cudaStream_t)stream));
fail:
    return st;
}

cudnnDataType_t mica__cudnn_dtype(mica_dtype_t t)
{
    return t == MICA_FLOAT16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

int mica__cudnn_fits(const int64_t *v, int n)
{
    int64_t p = 1;
    int i;
    for (i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > INT_MAX)
            return 0;
        p *= v[i] > 0 ? v[i] : 1;
        if (p > INT_MAX)
            return 0;
    }
    return 1;
}

mica_status_t mica__cudnn_tensor(cudnnTensorDescriptor_t d, mica_dtype_t t,
                                 int n, const int64_t *dims, int nhwc,
                                 mica_error_t *err)
{
    int dim[5], stride[5], i;
    mica_status_t st = MICA_OK;

    for (i = 0; i < n; i++)
        dim[i] = (int)dims[i];
    if (!nhwc) {
        for (i = n - 1; i >= 0; i--)
            stride[i] = i == n - 1 ? 1 : stride[i + 1] * dim[i + 1];
    } else {
        /* N, then the spatial dims, then C innermost. */
        stride[1] = 1;
        for (i = n - 1; i >= 2; i--)
            stride[i] = i == n - 1 ? dim[1] : stride[i + 1] * dim[i + 1];
        stride[0] = stride[2] * dim[2];
    }
    MICA__CUDNN_TRY(mica__cudnn.set_tensor(d, mica__cudnn_dtype(t), n, dim,
                                           stride));
fail:
    return st;
}
