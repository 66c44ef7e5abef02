/*
 * modules/common/kit_cublas.h - cuBLAS for the modules (MatrixMultiply,
 * FullyConnected): the library opened on first use through the kit's
 * loader (never linked), its functions in the table `mica__cublas`, typed
 * by cublas_api.h's prototypes, and a handle per thread and device.  Part
 * of the module kit's GPU helpers (libmicamodkit_gpu.la, CUDA builds),
 * not installed.
 */
#ifndef MICA_KIT_CUBLAS_H
#define MICA_KIT_CUBLAS_H

#include <cublas_v2.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mica__cublas_table {
    MICA_KIT_FN(cublasCreate_v2) create;
    MICA_KIT_FN(cublasDestroy_v2) destroy;
    MICA_KIT_FN(cublasSetMathMode) set_math_mode;
    MICA_KIT_FN(cublasGetStatusString) status_string;
    MICA_KIT_FN(cublasSetStream_v2) set_stream;
    MICA_KIT_FN(cublasSetWorkspace_v2) set_workspace;
    MICA_KIT_FN(cublasGemmEx) gemm;
    MICA_KIT_FN(cublasGemmStridedBatchedEx) gemm_strided_batched;
} mica__cublas_table_t;

extern MICA_KIT_API mica__cublas_table_t mica__cublas;

/* Open cuBLAS (once): MICA_OK or MICA_ERR_NOT_FOUND with err set. */
MICA_KIT_API mica_status_t mica__cublas_open(mica_error_t *err);

/*
 * The calling thread's handle for the current device (kit_handles.h),
 * opening cuBLAS first: plain float32 arithmetic (CUBLAS_DEFAULT_MATH, no
 * TF32).  Set its stream, then its workspace, at each call.
 */
MICA_KIT_API mica_status_t mica__cublas_handle(cublasHandle_t *h,
                                               mica_error_t *err);

/*
 * Check a cuBLAS call in a function returning mica_status_t with `err`
 * in scope: "cublasGemmEx(...) failed: the reason (file.c:42)" and
 * MICA_ERR_DEVICE.
 */
#define MICA__CUBLAS_CHECK(call)                                            \
    do {                                                                    \
        cublasStatus_t cublas_check_s_ = (call);                            \
        if (cublas_check_s_ != CUBLAS_STATUS_SUCCESS) {                     \
            mica_kit_host->set_error(                                       \
                err, "%s failed: %s (%s:%d)", #call,                        \
                mica__cublas.status_string(cublas_check_s_), __FILE__,      \
                __LINE__);                                                  \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_CUBLAS_H */
