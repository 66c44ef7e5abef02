/*
 * modules/conditional/conditional_cuda.cu - data movement of the
 * conditional boundary layers on CUDA: device copies (IfConditionalInput,
 * IfConditionalOutput) and the read-back of a Condition through a pinned
 * host buffer.
 */
#include <cuda_runtime_api.h>

#include "cuda_check.h"
#include "conditional.h"

extern "C" mica_status_t mica__cond_cuda_copy(void *dst, const void *src,
                                              size_t bytes, void *stream,
                                              mica_error_t *err)
{
    if (bytes == 0 || dst == src)
        return MICA_OK;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                               (cudaStream_t)stream));
    return MICA_OK;
}

extern "C" mica_status_t mica__cond_cuda_host_alloc(void **pinned,
                                                    mica_error_t *err)
{
    CUDA_CHECK(cudaHostAlloc(pinned, 8, cudaHostAllocDefault));
    return MICA_OK;
}

extern "C" void mica__cond_cuda_host_free(void *pinned)
{
    if (pinned)
        cudaFreeHost(pinned);
}

extern "C" mica_status_t mica__cond_cuda_fetch(void **pinned,
                                               const void *src, void *stream,
                                               mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;

    if (!*pinned) {
        mica_status_t st = mica__cond_cuda_host_alloc(pinned, err);
        if (st != MICA_OK)
            return st;
    }
    CUDA_CHECK(cudaMemcpyAsync(*pinned, src, 1, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return MICA_OK;
}
