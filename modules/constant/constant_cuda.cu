/*
 * modules/constant/constant_cuda.cu - device copies of a Constant layer's
 * values: uploaded once, copied device to device on every enqueue.
 */
#include <cuda_runtime_api.h>

#include "mica/kit_cuda.h"
#include "constant.h"

extern "C" mica_status_t mica__constant_cuda_upload(const void *host,
                                                    size_t bytes, void **dev,
                                                    mica_error_t *err)
{
    void *p = NULL;
    *dev = NULL;
    MICA_KIT_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    if (bytes) {
        cudaError_t e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
        /* From pageable memory cudaMemcpy may return before the DMA is
         * done, and enqueue reads the values on a non-blocking stream that
         * is not ordered after it: wait here, once per upload. */
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            cudaFree(p);
            mica_kit_host->set_error(err, "cudaMemcpy of %zu bytes of "
                                     "constant values failed: %s", bytes,
                                     cudaGetErrorString(e));
            return MICA_ERR_DEVICE;
        }
    }
    *dev = p;
    return MICA_OK;
}

extern "C" void mica__constant_cuda_free(void *dev)
{
    if (dev)
        cudaFree(dev);
}

extern "C" mica_status_t mica__constant_cuda_copy(void *dst, const void *src,
                                                  size_t bytes, void *stream,
                                                  mica_error_t *err)
{
    if (bytes)
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(
            dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return MICA_OK;
}
