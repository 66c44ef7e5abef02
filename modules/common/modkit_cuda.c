/*
 * modules/common/modkit_cuda.c - device copies and scalar read-backs for
 * the modules' CUDA implementations (see modkit_cuda.h).  Plain CUDA
 * runtime calls: compiled as C.
 */
#include <config.h>

#include "cuda_check.h"
#include "modkit_cuda.h"

mica_status_t mica__mod_cuda_copy(void *dst, const void *src, size_t bytes,
                                  void *stream, mica_error_t *err)
{
    if (bytes == 0 || dst == src)
        return MICA_OK;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                               (cudaStream_t)stream));
    return MICA_OK;
}

mica_status_t mica__mod_cuda_host_alloc(void **pinned, mica_error_t *err)
{
    CUDA_CHECK(cudaHostAlloc(pinned, 8, cudaHostAllocDefault));
    return MICA_OK;
}

void mica__mod_cuda_host_free(void *pinned)
{
    if (pinned)
        cudaFreeHost(pinned);
}

mica_status_t mica__mod_cuda_fetch(void **pinned, const void *src,
                                   size_t bytes, void *stream,
                                   mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (bytes > 8)
        return MOD_FAIL(err, "cannot read back %zu bytes (8 at most)", bytes);
    if (!*pinned) {
        mica_status_t st = mica__mod_cuda_host_alloc(pinned, err);
        if (st != MICA_OK)
            return st;
    }
    CUDA_CHECK(cudaMemcpyAsync(*pinned, src, bytes, cudaMemcpyDeviceToHost,
                               s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return MICA_OK;
}
