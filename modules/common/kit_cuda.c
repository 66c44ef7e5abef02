/*
 * modules/common/kit_cuda.c - device copies and scalar read-backs for
 * the modules' CUDA implementations (see <mica/kit_cuda.h>).  Plain CUDA
 * runtime calls: compiled as C.
 */
#include <config.h>

#include "mica/kit_cuda.h"

mica_status_t mica_kit_cuda_copy(void *dst, const void *src, size_t bytes,
                                 void *stream, mica_error_t *err)
{
    if (bytes == 0 || dst == src)
        return MICA_OK;
    MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes,
                                        cudaMemcpyDeviceToDevice,
                                        (cudaStream_t)stream));
    return MICA_OK;
}

mica_status_t mica_kit_cuda_host_alloc(void **pinned, mica_error_t *err)
{
    MICA_KIT_CUDA_CHECK(cudaHostAlloc(pinned, 8, cudaHostAllocDefault));
    return MICA_OK;
}

void mica_kit_cuda_host_free(void *pinned)
{
    if (pinned)
        cudaFreeHost(pinned);
}

mica_status_t mica_kit_cuda_fetch(void **pinned, const void *src,
                                  size_t bytes, void *stream,
                                  mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (bytes > 8)
        return MICA_KIT_FAIL(err, "cannot read back %zu bytes (8 at most)",
                             bytes);
    if (!*pinned) {
        mica_status_t st = mica_kit_cuda_host_alloc(pinned, err);
        if (st != MICA_OK)
            return st;
    }
    MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(*pinned, src, bytes,
                                        cudaMemcpyDeviceToHost, s));
    MICA_KIT_CUDA_CHECK(cudaStreamSynchronize(s));
    return MICA_OK;
}
