/*
 * modules/common/kit_cublas.c - cuBLAS opened on first use, and its
 * handles per thread and device (see kit_cublas.h).
 */
#include <config.h>

#include "kit_cublas.h"

#include "kit_handles.h"

MICA_KIT_API mica__cublas_table_t mica__cublas;

static const mica_kit_sym_t cublas_syms[] = {
    MICA_KIT_SYM(mica__cublas, create, "cublasCreate_v2"),
    MICA_KIT_SYM(mica__cublas, destroy, "cublasDestroy_v2"),
    MICA_KIT_SYM(mica__cublas, set_math_mode, "cublasSetMathMode"),
    MICA_KIT_SYM(mica__cublas, status_string, "cublasGetStatusString"),
    MICA_KIT_SYM(mica__cublas, set_stream, "cublasSetStream_v2"),
    MICA_KIT_SYM(mica__cublas, set_workspace, "cublasSetWorkspace_v2"),
    MICA_KIT_SYM(mica__cublas, gemm, "cublasGemmEx"),
    MICA_KIT_SYM(mica__cublas, gemm_strided_batched,
                 "cublasGemmStridedBatchedEx"),
};

static mica_kit_lib_t cublas_lib =
    MICA_KIT_LIB("cuBLAS", "libcublas.so." MICA_KIT_STR(CUBLAS_VER_MAJOR),
                 &mica__cublas, cublas_syms);

static mica__handles_t handles = MICA__HANDLES_INIT;

mica_status_t mica__cublas_open(mica_error_t *err)
{
    return mica_kit_lib_open(&cublas_lib, err);
}

/* A new handle with plain float32 arithmetic; 0 or -1 with err set. */
static int make(void **out, mica_error_t *err)
{
    cublasHandle_t h = NULL;
    cublasStatus_t s = mica__cublas.create(&h);

    if (s == CUBLAS_STATUS_SUCCESS) {
        s = mica__cublas.set_math_mode(h, CUBLAS_DEFAULT_MATH);
        if (s != CUBLAS_STATUS_SUCCESS)
            mica__cublas.destroy(h);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        mica_kit_host->set_error(err, "cannot make a cuBLAS handle: %s",
                                 mica__cublas.status_string(s));
        return -1;
    }
    *out = h;
    return 0;
}

mica_status_t mica__cublas_handle(cublasHandle_t *h, mica_error_t *err)
{
    mica_status_t st;
    void *p = NULL;

    if ((st = mica__cublas_open(err)) != MICA_OK ||
        (st = mica__handle_get(&handles, &p, make, err)) != MICA_OK)
        return st;
    *h = (cublasHandle_t)p;
    return MICA_OK;
}
