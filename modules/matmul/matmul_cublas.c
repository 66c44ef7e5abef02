/*
 * modules/matmul/matmul_cublas.c - MatrixMultiply through cuBLAS.  Host
 * code only (no kernel of its own): plain C, so that the table of cuBLAS
 * functions is typed by the C prototypes (C++ sees overloads of some).
 *
 * Row-major C = A B is column-major C^T = B^T A^T, so cuBLAS gets the
 * operands swapped: (B, A) with m = N, n = M.  A row-major buffer read
 * column-major is its transpose, so an operand that is not transposed is
 * passed with CUBLAS_OP_N and one that is, with CUBLAS_OP_T.
 *
 * float32 computes with CUBLAS_COMPUTE_32F (never TF32); float16 data
 * accumulates in float (CUBLAS_COMPUTE_32F, float alpha and beta).  A batch
 * whose operands are each either whole or broadcast as a whole is one
 * strided-batched call (stride 0 for a broadcast operand); other
 * broadcasts loop over all batch dims but the last, one strided-batched
 * call each.  No copies: cuBLAS reads the operands in place, and its
 * scratch is the layer's workspace (MICA_MATMUL_CUBLAS_WORKSPACE bytes).
 *
 * cuBLAS is not linked: the kit opens libcublas.so.<major of the headers>
 * when the first handle is needed (configure), and the few functions used
 * here are called through its table `mica__cublas` (kit_cublas.h).  The
 * handle is the kit's, one per thread and device, shared with the other
 * layers of the module.  Loading the module maps no GPU library.
 */
#include <config.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "kit_cublas.h"
#include "matmul.h"

mica_status_t mica__matmul_cuda_handle(void **handle, mica_error_t *err)
{
    cublasHandle_t h = NULL;
    mica_status_t st;

    /* Asked again at each call: the calling thread's. */
    if ((st = mica__cublas_handle(&h, err)) != MICA_OK)
        return st;
    *handle = h;
    return MICA_OK;
}

void mica__matmul_cuda_destroy(void *handle)
{
    (void)handle; /* the kit's, kept for the thread's other layers */
}

static int fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

mica_status_t mica__matmul_cuda(void *handle, const mica__mm_problem_t *p,
                                const void *a, const void *b, void *c,
                                void *workspace, size_t ws_size, void *stream,
                                mica_error_t *err)
{
    cublasHandle_t h = (cublasHandle_t)handle;
    cudaStream_t s = (cudaStream_t)stream;
    cudaDataType_t dt = p->dtype == MICA_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
    size_t esize = p->dtype == MICA_FLOAT16 ? 2 : 4;
    const float alpha = 1.0f, beta = 0.0f;
    int64_t batch = 1, sa_mat = p->M * p->K, sb_mat = p->K * p->N;
    int64_t sc_mat = p->M * p->N, va = 1, vb = 1;
    int full_a = 1, full_b = 1;
    cublasOperation_t opa = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    int64_t lda = p->trans_a ? p->M : p->K;
    int64_t ldb = p->trans_b ? p->K : p->N;
    int32_t i;

    for (i = 0; i < p->nb; i++) {
        batch *= p->bo[i];
        va *= p->ba[i];
        vb *= p->bb[i];
        full_a &= p->ba[i] == p->bo[i];
        full_b &= p->bb[i] == p->bo[i];
    }
    if (batch * sc_mat == 0)
        return MICA_OK;
    if (p->K == 0) { /* an empty sum: zeros */
        MICA_KIT_CUDA_CHECK(
            cudaMemsetAsync(c, 0, (size_t)(batch * sc_mat) * esize, s));
        return MICA_OK;
    }
    if (!fits_int(p->M) || !fits_int(p->N) || !fits_int(p->K) ||
        !fits_int(batch)) {
        mica_kit_host->set_error(err, "matrix product of %lld x %lld x %lld "
                                 "(batch %lld) is too large for cuBLAS's "
                                 "32-bit sizes", (long long)p->M,
                                 (long long)p->N, (long long)p->K,
                                 (long long)batch);
        return MICA_ERR_UNSUPPORTED;
    }
    /* Setting the stream resets the workspace: set it after. */
    MICA__CUBLAS_CHECK(mica__cublas.set_stream(h, s));
    if (workspace && ws_size)
        MICA__CUBLAS_CHECK(mica__cublas.set_workspace(h, workspace, ws_size));

    if (batch == 1) {
        MICA__CUBLAS_CHECK(mica__cublas.gemm(
            h, opb, opa, (int)p->N, (int)p->M, (int)p->K, &alpha, b, dt,
            (int)ldb, a, dt, (int)lda, &beta, c, dt, (int)p->N,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return MICA_OK;
    }
    if ((full_a || va == 1) && (full_b || vb == 1)) {
        MICA__CUBLAS_CHECK(mica__cublas.gemm_strided_batched(
            h, opb, opa, (int)p->N, (int)p->M, (int)p->K, &alpha, b, dt,
            (int)ldb, full_b ? sb_mat : 0, a, dt, (int)lda,
            full_a ? sa_mat : 0, &beta, c, dt, (int)p->N, sc_mat, (int)batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return MICA_OK;
    }
    {
        /* Mixed broadcast: loop over the outer batch dims, batch the last. */
        int64_t inner = p->bo[p->nb - 1], outer = batch / inner, o;
        int64_t astr[MICA_MAX_DIMS], bstr[MICA_MAX_DIMS], x, y;
        int64_t sa_in = p->ba[p->nb - 1] == 1 ? 0 : sa_mat;
        int64_t sb_in = p->bb[p->nb - 1] == 1 ? 0 : sb_mat;

        x = sa_mat;
        y = sb_mat;
        for (i = p->nb - 1; i >= 0; i--) {
            astr[i] = p->ba[i] == 1 ? 0 : x;
            bstr[i] = p->bb[i] == 1 ? 0 : y;
            x *= p->ba[i];
            y *= p->bb[i];
        }
        for (o = 0; o < outer; o++) {
            int64_t rest = o, aoff = 0, boff = 0;
            for (i = p->nb - 2; i >= 0; i--) {
                int64_t ci = rest % p->bo[i];
                rest /= p->bo[i];
                aoff += ci * astr[i];
                boff += ci * bstr[i];
            }
            MICA__CUBLAS_CHECK(mica__cublas.gemm_strided_batched(
                h, opb, opa, (int)p->N, (int)p->M, (int)p->K, &alpha,
                (const char *)b + (size_t)boff * esize, dt, (int)ldb, sb_in,
                (const char *)a + (size_t)aoff * esize, dt, (int)lda, sa_in,
                &beta, (char *)c + (size_t)(o * inner * sc_mat) * esize, dt,
                (int)p->N, sc_mat, (int)inner, CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT));
        }
    }
    return MICA_OK;
}
