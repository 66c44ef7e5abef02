/*
 * modules/common/cuda_check.h - error checking for CUDA launchers.
 *
 * Inside a launcher that returns mica_status_t and has the call's error
 * slot in scope as `err`:
 *
 *     CUDA_CHECK(cudaMemsetAsync(p, 0, n, stream));
 *     kernel<<<grid, block, 0, stream>>>(...);
 *     CUDA_CHECK(cudaGetLastError());
 *
 * On failure the slot reads "cudaMemsetAsync(p, 0, n, stream) failed:
 * invalid argument (modules/foo/foo_cuda.cu:42)" and the launcher returns
 * MICA_ERR_DEVICE.
 */
#ifndef MICA_CUDA_CHECK_H
#define MICA_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "modkit.h"

#define CUDA_CHECK(call)                                                    \
    do {                                                                    \
        cudaError_t cuda_check_e_ = (call);                                 \
        if (cuda_check_e_ != cudaSuccess) {                                 \
            mica__mod_host->set_error(err, "%s failed: %s (%s:%d)", #call,  \
                                      cudaGetErrorString(cuda_check_e_),    \
                                      __FILE__, __LINE__);                  \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

/* Blocks of `threads` needed to cover n elements, capped for grid-stride
 * loops.  Callers never launch when n == 0. */
static inline unsigned mica__grid(int64_t n, unsigned threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

#endif
