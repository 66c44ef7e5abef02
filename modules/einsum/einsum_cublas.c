/*
 * modules/einsum/einsum_cublas.c - the batched GEMMs of Einsum through
 * cuBLAS, opened on first use by the kit's loader (never linked: the
 * module has no DT_NEEDED on a GPU library).  Plain C, so that the table
 * is typed by cublas_api.h's C prototypes.
 *
 * Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A)
 * with m = N, n = M, as in modules/matmul/matmul_cublas.c.  float32
 * computes in float32 (CUBLAS_COMPUTE_32F, default math: no TF32),
 * float16 data accumulates in float.
 */
#include <config.h>

#include <cublas_v2.h>
#include <limits.h>

#include "mica/kit_cuda.h"

#include "einsum.h"

static struct {
    MICA_KIT_FN(cublasCreate_v2) create;
    MICA_KIT_FN(cublasDestroy_v2) destroy;
    MICA_KIT_FN(cublasSetMathMode) set_math_mode;
    MICA_KIT_FN(cublasGetStatusString) status_string;
    MICA_KIT_FN(cublasSetStream_v2) set_stream;
    MICA_KIT_FN(cublasSetWorkspace_v2) set_workspace;
    MICA_KIT_FN(cublasGemmStridedBatchedEx) gemm_strided_batched;
} cublas;

static const mica_kit_sym_t cublas_syms[] = {
    MICA_KIT_SYM(cublas, create, "cublasCreate_v2"),
    MICA_KIT_SYM(cublas, destroy, "cublasDestroy_v2"),
    MICA_KIT_SYM(cublas, set_math_mode, "cublasSetMathMode"),
    MICA_KIT_SYM(cublas, status_string, "cublasGetStatusString"),
    MICA_KIT_SYM(cublas, set_stream, "cublasSetStream_v2"),
    MICA_KIT_SYM(cublas, set_workspace, "cublasSetWorkspace_v2"),
    MICA_KIT_SYM(cublas, gemm_strided_batched, "cublasGemmStridedBatchedEx"),
};

static mica_kit_lib_t cublas_lib =
    MICA_KIT_LIB("cuBLAS", "libcublas.so." MICA_KIT_STR(CUBLAS_VER_MAJOR),
                 &cublas, cublas_syms);

#define CUBLAS_CHECK(call)                                                  \
    do {                                                                    \
        cublasStatus_t cublas_check_s_ = (call);                            \
        if (cublas_check_s_ != CUBLAS_STATUS_SUCCESS) {                     \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     cublas.status_string(cublas_check_s_), \
                                     __FILE__, __LINE__);                   \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

mica_status_t mica__ein_cublas_handle(void **handle, mica_error_t *err)
{
    cublasHandle_t h = NULL;
    cublasStatus_t s;
    mica_status_t st;

    if (*handle)
        return MICA_OK;
    if ((st = mica_kit_lib_open(&cublas_lib, err)) != MICA_OK)
        return st;
    CUBLAS_CHECK(cublas.create(&h));
    s = cublas.set_math_mode(h, CUBLAS_DEFAULT_MATH);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cublas.destroy(h);
        mica_kit_host->set_error(err, "cublasSetMathMode failed: %s",
                                 cublas.status_string(s));
        return MICA_ERR_DEVICE;
    }
    *handle = h;
    return MICA_OK;
}

void mica__ein_cublas_destroy(void *handle)
{
    if (handle) /* made by mica__ein_cublas_handle: cuBLAS is open */
        cublas.destroy((cublasHandle_t)handle);
}

mica_status_t mica__ein_gemm(void *handle, mica_dtype_t dtype, int trans_a,
                             int trans_b, int64_t batch, int64_t m,
                             int64_t n, int64_t k, const void *a,
                             const void *b, void *c, void *ws,
                             size_t ws_size, void *stream, mica_error_t *err)
{
    cublasHandle_t h = (cublasHandle_t)handle;
    cudaDataType_t dt = dtype == MICA_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
    const float one = 1.0f, zero = 0.0f;
    int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;

    if (batch * m * n == 0)
        return MICA_OK;
    if (batch > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
        mica_kit_host->set_error(err, "Einsum: a product of %lld x %lld x "
                                 "%lld (batch %lld) is too large for "
                                 "cuBLAS's 32-bit sizes", (long long)m,
                                 (long long)n, (long long)k,
                                 (long long)batch);
        return MICA_ERR_UNSUPPORTED;
    }
    CUBLAS_CHECK(cublas.set_stream(h, (cudaStream_t)stream));
    CUBLAS_CHECK(cublas.set_workspace(h, ws, ws_size));
    CUBLAS_CHECK(cublas.gemm_strided_batched(
        h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b,
        dt, (int)ldb, k * n, a, dt, (int)lda, m * k, &zero, c, dt, (int)n,
        m * n, (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return MICA_OK;
}
