/*
 * modules/common/kit_cudnn.h - cuDNN for the modules (Convolution,
 * Deconvolution, Pooling, LRN; the RNN layer later): the library opened
 * on first use through the kit's loader (never linked), its legacy API's
 * functions and those of its graph (backend) API in the table
 * `mica__cudnn`, typed by cudnn.h's prototypes, a
 * handle per thread and device, error checks and tensor descriptors.
 * Part of the module kit's GPU helpers (libmicamodkit_gpu.la, built when
 * configure found cuDNN), not installed.  A module that needs more of
 * cuDNN appends its functions to the table.
 */
#ifndef MICA_KIT_CUDNN_H
#define MICA_KIT_CUDNN_H

#include <cudnn.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__cudnn_table {
    MICA_KIT_FN(cudnnCreate) create;
    MICA_KIT_FN(cudnnSetStream) set_stream;
    MICA_KIT_FN(cudnnGetErrorString) error_string;
    MICA_KIT_FN(cudnnCreateTensorDescriptor) create_tensor;
    MICA_KIT_FN(cudnnSetTensorNdDescriptor) set_tensor;
    MICA_KIT_FN(cudnnDestroyTensorDescriptor) destroy_tensor;
    MICA_KIT_FN(cudnnCreateFilterDescriptor) create_filter;
    MICA_KIT_FN(cudnnSetFilterNdDescriptor) set_filter;
    MICA_KIT_FN(cudnnDestroyFilterDescriptor) destroy_filter;
    MICA_KIT_FN(cudnnCreateConvolutionDescriptor) create_conv;
    MICA_KIT_FN(cudnnSetConvolutionNdDescriptor) set_conv;
    MICA_KIT_FN(cudnnSetConvolutionGroupCount) set_groups;
    MICA_KIT_FN(cudnnSetConvolutionMathType) set_math;
    MICA_KIT_FN(cudnnDestroyConvolutionDescriptor) destroy_conv;
    MICA_KIT_FN(cudnnGetConvolutionForwardAlgorithm_v7) fwd_algos;
    MICA_KIT_FN(cudnnFindConvolutionForwardAlgorithmEx) fwd_find;
    MICA_KIT_FN(cudnnGetConvolutionForwardWorkspaceSize) fwd_workspace;
    MICA_KIT_FN(cudnnConvolutionForward) fwd;
    MICA_KIT_FN(cudnnGetConvolutionBackwardDataAlgorithm_v7) bwd_algos;
    MICA_KIT_FN(cudnnFindConvolutionBackwardDataAlgorithmEx) bwd_find;
    MICA_KIT_FN(cudnnGetConvolutionBackwardDataWorkspaceSize) bwd_workspace;
    MICA_KIT_FN(cudnnConvolutionBackwardData) bwd;
    MICA_KIT_FN(cudnnAddTensor) add_tensor;
    MICA_KIT_FN(cudnnCreatePoolingDescriptor) create_pool;
    MICA_KIT_FN(cudnnSetPoolingNdDescriptor) set_pool;
    MICA_KIT_FN(cudnnDestroyPoolingDescriptor) destroy_pool;
    MICA_KIT_FN(cudnnPoolingForward) pool;
    MICA_KIT_FN(cudnnCreateLRNDescriptor) create_lrn;
    MICA_KIT_FN(cudnnSetLRNDescriptor) set_lrn;
    MICA_KIT_FN(cudnnDestroyLRNDescriptor) destroy_lrn;
    MICA_KIT_FN(cudnnLRNCrossChannelForward) lrn;
    /* FusedConvolution (modules/convolution/conv_cudnn.c) */
    MICA_KIT_FN(cudnnCreateActivationDescriptor) create_act;
    MICA_KIT_FN(cudnnSetActivationDescriptor) set_act;
    MICA_KIT_FN(cudnnDestroyActivationDescriptor) destroy_act;
    MICA_KIT_FN(cudnnConvolutionBiasActivationForward) fwd_bias_act;
    /* The graph (backend) API, from C (conv_graph.c) */
    MICA_KIT_FN(cudnnGetVersion) version;
    MICA_KIT_FN(cudnnBackendCreateDescriptor) be_create;
    MICA_KIT_FN(cudnnBackendDestroyDescriptor) be_destroy;
    MICA_KIT_FN(cudnnBackendSetAttribute) be_set;
    MICA_KIT_FN(cudnnBackendGetAttribute) be_get;
    MICA_KIT_FN(cudnnBackendFinalize) be_finalize;
    MICA_KIT_FN(cudnnBackendExecute) be_execute;
} mica__cudnn_table_t;

extern MICA_KIT_API mica__cudnn_table_t mica__cudnn;

/* Open cuDNN (once): MICA_OK or MICA_ERR_NOT_FOUND with err set. */
MICA_KIT_API mica_status_t mica__cudnn_open(mica_error_t *err);

/*
 * The calling thread's handle for the current device (kit_handles.h),
 * opening cuDNN first, set to `stream`.
 */
MICA_KIT_API mica_status_t mica__cudnn_handle(cudnnHandle_t *h, void *stream,
                                              mica_error_t *err);

/*
 * Check a cuDNN call in a function returning mica_status_t with `err` in
 * scope: "cudnnPoolingForward(...) failed: CUDNN_STATUS_BAD_PARAM
 * (pool_cudnn.c:42)", st = MICA_ERR_DEVICE, then `goto fail` (the
 * function's one cleanup label).
 */
#define MICA__CUDNN_TRY(call)                                               \
    do {                                                                    \
        cudnnStatus_t cudnn_s_ = (call);                                    \
        if (cudnn_s_ != CUDNN_STATUS_SUCCESS) {                             \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     mica__cudnn.error_string(cudnn_s_),    \
                                     __FILE__, __LINE__);                   \
            st = MICA_ERR_DEVICE;                                           \
            goto fail;                                                      \
        }                                                                   \
    } while (0)

/* cuDNN's type of float32 or float16 data. */
MICA_KIT_API cudnnDataType_t mica__cudnn_dtype(mica_dtype_t t);

/*
 * Set `d` to a tensor of n dims (4 or 5) given in NC(D)HW order, of type
 * t, stored NC(D)HW, or N(D)HWC with `nhwc`.
 */
MICA_KIT_API mica_status_t mica__cudnn_tensor(cudnnTensorDescriptor_t d,
                                              mica_dtype_t t, int n,
                                              const int64_t *dims, int nhwc,
                                              mica_error_t *err);

/* Whether every value of v[0..n-1] and their product fit cuDNN's int. */
MICA_KIT_API int mica__cudnn_fits(const int64_t *v, int n);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_CUDNN_H */
