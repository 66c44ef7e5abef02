/*
 * tools/triton/device_cuda.c - memory copies and the device of a backend
 * built with CUDA.  Copies go through cudaMemcpy with cudaMemcpyDefault:
 * with unified addressing the runtime knows where each pointer lies
 * (host, pinned host, any device), so one call covers every pair of
 * Triton's memory types.  Synchronous: the copies are done when it
 * returns, before the server may reuse a buffer.
 *
 * Compiled here but not run on a GPU in this project's CI.
 */
#include <config.h>

#include "backend.h"

#include <string.h>

#include <cuda_runtime_api.h>

int mica__tb_have_cuda(void)
{
    return 1;
}

TRITONSERVER_Error *mica__tb_set_device(int32_t device_id)
{
    cudaError_t e;
    if (device_id < 0)
        return NULL;
    if ((e = cudaSetDevice(device_id)) != cudaSuccess)
        return mica__tb_error(TRITONSERVER_ERROR_UNAVAILABLE,
                              "cudaSetDevice(%d) failed: %s", (int)device_id,
                              cudaGetErrorString(e));
    return NULL;
}

TRITONSERVER_Error *mica__tb_copy(void *dst, TRITONSERVER_MemoryType dst_type,
                                  const void *src,
                                  TRITONSERVER_MemoryType src_type, size_t n)
{
    cudaError_t e;
    if (dst_type != TRITONSERVER_MEMORY_GPU &&
        src_type != TRITONSERVER_MEMORY_GPU) {
        memcpy(dst, src, n);
        return NULL;
    }
    if ((e = cudaMemcpy(dst, src, n, cudaMemcpyDefault)) != cudaSuccess)
        return mica__tb_error(TRITONSERVER_ERROR_INTERNAL,
                              "cudaMemcpy of %zu bytes failed: %s", n,
                              cudaGetErrorString(e));
    return NULL;
}
