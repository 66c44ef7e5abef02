/*
 * modules/fullyconnected/fc_cublas.c - FullyConnected through cuBLAS
 * (implementation "cublas"): Y = X W^T as one GEMM, then the bias
 * (fc_cuda.cu).
 *
 * Row-major Y [rows, K] is column-major Y^T [K, rows] = W X^T: cuBLAS gets
 * W (row-major [K, cols], column-major [cols, K]) transposed and X
 * (column-major [cols, rows]) as it is.  float32 computes in float32
 * (CUBLAS_COMPUTE_32F, the handle's default math: no TF32); float16 data
 * accumulates in float32.  The weights live on the device in the I/O
 * type, uploaded by initialize; cuBLAS's scratch is the layer's
 * workspace.  cuBLAS is the kit's (kit_cublas.h): opened on first use,
 * one handle per thread and device.
 */
#include <config.h>

#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdlib.h>

#include "mica/kit_cuda.h"
#include "kit_nn.h"
#include "fc.h"
#include "kit_cublas.h"

struct mica__fc_gpu {
    void *w, *b;          /* device weights, NULL until uploaded */
    mica_dtype_t wtype;
};

mica__fc_gpu_t *mica__fc_gpu_new(void)
{
    return calloc(1, sizeof(mica__fc_gpu_t));
}

static void drop(mica__fc_gpu_t *g)
{
    /* cudaFree's errors are those of earlier calls: nothing to do. */
    if (g->w)
        cudaFree(g->w);
    if (g->b)
        cudaFree(g->b);
    g->w = g->b = NULL;
}

void mica__fc_gpu_free(mica__fc_gpu_t *g)
{
    if (!g)
        return;
    drop(g);
    free(g);
}

/* Upload w (float32 or float16) into *dev as `dtype`. */
static mica_status_t upload(void **dev, const mica_weights_t *w,
                            mica_dtype_t dtype, mica_error_t *err)
{
    size_t es = mica_dtype_size(dtype);
    size_t bytes = (size_t)(w->count ? w->count : 1) * es;
    unsigned char *h = malloc(bytes);
    cudaError_t e;
    int64_t i;

    if (!h) {
        mica_kit_host->set_error(err, "out of host memory");
        return MICA_ERR_NOMEM;
    }
    for (i = 0; i < w->count; i++)
        mica__nn_put(h, dtype, i, mica__nn_get(w->values, w->dtype, i));
    e = cudaMalloc(dev, bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(*dev, h, bytes, cudaMemcpyHostToDevice);
    free(h);
    MICA_KIT_CUDA_CHECK(e);
    return MICA_OK;
}

mica_status_t mica__fc_gpu_init(mica__fc_gpu_t *g, const mica__fc_problem_t *pb,
                                mica_error_t *err)
{
    mica_status_t st;

    if (g->w && g->wtype == pb->dtype)
        return MICA_OK;
    drop(g);
    if ((st = upload(&g->w, pb->kernel, pb->dtype, err)) != MICA_OK ||
        (pb->bias && (st = upload(&g->b, pb->bias, pb->dtype, err)) != MICA_OK))
        return st;
    g->wtype = pb->dtype;
    return MICA_OK;
}

static int fits(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

mica_status_t mica__fc_gpu_run(mica__fc_gpu_t *g, const mica__fc_problem_t *pb,
                               const void *x, void *y, void *workspace,
                               void *stream, mica_error_t *err)
{
    cudaDataType_t dt = pb->dtype == MICA_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h;
    mica_status_t st;

    if (pb->rows == 0)
        return MICA_OK;
    if (pb->cols == 0) /* an empty sum: the bias (zeros without one) */
        return mica__fc_cuda_bias(pb->dtype, pb->rows, pb->k, g->b, y, 1,
                                  stream, err);
    if (!fits(pb->rows) || !fits(pb->cols) || !fits(pb->k))
        return MICA_KIT_FAIL(err, "FullyConnected of %lld rows x %lld values "
                             "x %lld outputs is too large for cuBLAS's 32-bit "
                             "sizes", (long long)pb->rows,
                             (long long)pb->cols, (long long)pb->k);
    if ((st = mica__cublas_handle(&h, err)) != MICA_OK)
        return st;
    /* Setting the stream resets the workspace: set it after. */
    MICA__CUBLAS_CHECK(mica__cublas.set_stream(h, (cudaStream_t)stream));
    if (workspace)
        MICA__CUBLAS_CHECK(mica__cublas.set_workspace(
            h, workspace, MICA__FC_CUBLAS_WORKSPACE));
    MICA__CUBLAS_CHECK(mica__cublas.gemm(
        h, CUBLAS_OP_T, CUBLAS_OP_N, (int)pb->k, (int)pb->rows, (int)pb->cols,
        &one, g->w, dt, (int)pb->cols, x, dt, (int)pb->cols, &zero, y, dt,
        (int)pb->k, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    if (g->b)
        return mica__fc_cuda_bias(pb->dtype, pb->rows, pb->k, g->b, y, 0,
                                  stream, err);
    return MICA_OK;
}
