/*
 * modules/einsum/einsum_cublas.c - the batched GEMMs of Einsum through
 * cuBLAS, opened on first use by the kit (kit_cublas.h: never linked, the
 * module has no DT_NEEDED on a GPU library); the handle is the kit's, one
 * per thread and device.  Plain C, so that the table is typed by
 * cublas_api.h's C prototypes.
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
#include "kit_cublas.h"

mica_status_t mica__ein_cublas_handle(void **handle, mica_error_t *err)
{
    cublasHandle_t h = NULL;
    mica_status_t st;

    /* Asked again at each call: the calling thread's. */
    if ((st = mica__cublas_handle(&h, err)) != MICA_OK)
        return st;
    *handle = h;
    return MICA_OK;
}

void mica__ein_cublas_destroy(void *handle)
{
    (void)handle; /* the kit's, kept for the thread's other layers */
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
    MICA__CUBLAS_CHECK(mica__cublas.set_stream(h, (cudaStream_t)stream));
    MICA__CUBLAS_CHECK(mica__cublas.set_workspace(h, ws, ws_size));
    MICA__CUBLAS_CHECK(mica__cublas.gemm_strided_batched(
        h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b,
        dt, (int)ldb, k * n, a, dt, (int)lda, m * k, &zero, c, dt, (int)n,
        m * n, (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return MICA_OK;
}
