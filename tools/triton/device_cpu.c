/*
 * tools/triton/device_cpu.c - memory copies of a backend built without
 * CUDA: host memory only (CPU and pinned CPU memory are both host
 * memory).  GPU memory from the server is refused with an error.
 */
#include <config.h>

#include "backend.h"

#include <string.h>

int mica__tb_have_cuda(void)
{
    return 0;
}

TRITONSERVER_Error *mica__tb_set_device(int32_t device_id)
{
    (void)device_id;
    return NULL;
}

TRITONSERVER_Error *mica__tb_copy(void *dst, TRITONSERVER_MemoryType dst_type,
                                  const void *src,
                                  TRITONSERVER_MemoryType src_type, size_t n)
{
    if (dst_type == TRITONSERVER_MEMORY_GPU ||
        src_type == TRITONSERVER_MEMORY_GPU)
        return mica__tb_error(TRITONSERVER_ERROR_UNSUPPORTED, "a tensor in "
                              "GPU memory, but this mica backend was built "
                              "without CUDA");
    memcpy(dst, src, n);
    return NULL;
}
