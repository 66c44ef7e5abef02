/*
 * mica/kit_cuda.h - the module kit's CUDA half: error checks for CUDA
 * launchers, grid sizes, and device copies and scalar read-backs that
 * need no kernel.  Include it from CUDA code (.cu files, or C that calls
 * the CUDA runtime) built with the CUDA headers on the include path; link
 * the CUDA runtime statically (`pkg-config --variable=cuda_libs
 * mica-module`, see <mica/kit.h>).
 *
 * A launcher, in the style of mica's own modules:
 *
 *     extern "C" mica_status_t swish_cuda(const float *x, float *y,
 *                                         int64_t n, void *stream,
 *                                         mica_error_t *err)
 *     {
 *         if (n == 0)
 *             return MICA_OK;   // never launch an empty grid
 *         swish_kernel<<<mica_kit_grid(n, 256), 256, 0,
 *                        (cudaStream_t)stream>>>(x, y, n);
 *         MICA_KIT_CUDA_CHECK(cudaGetLastError());
 *         return MICA_OK;
 *     }
 */
#ifndef MICA_KIT_CUDA_H
#define MICA_KIT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "mica/kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Check a CUDA runtime call inside a function that returns
 * mica_status_t and has the call's error slot in scope as `err`.  On
 * failure the slot reads "cudaMemsetAsync(p, 0, n, s) failed: invalid
 * argument (foo_cuda.cu:42)" and the function returns MICA_ERR_DEVICE.
 * After a launch, check cudaGetLastError().  The failure, reported, is
 * also taken off the runtime's last error, so that the next launch's
 * check does not report it again: a call that fails only because the
 * stream is being captured into a CUDA graph (a wait for the host) must
 * not fail the enqueue that runs layer by layer instead.
 */
#define MICA_KIT_CUDA_CHECK(call)                                           \
    do {                                                                    \
        cudaError_t mica_kit_e_ = (call);                                   \
        if (mica_kit_e_ != cudaSuccess) {                                   \
            mica_kit_host->set_error(err, "%s failed: %s (%s:%d)", #call,   \
                                     cudaGetErrorString(mica_kit_e_),       \
                                     __FILE__, __LINE__);                   \
            (void)cudaGetLastError();                                       \
            return MICA_ERR_DEVICE;                                         \
        }                                                                   \
    } while (0)

/*
 * Blocks of `threads` that cover n > 0 elements, capped at 65535 * 8 for
 * grid-stride loops (index with int64_t and step by gridDim.x *
 * blockDim.x).  Never launch when n is 0: a grid of zero blocks fails.
 */
static inline unsigned mica_kit_grid(int64_t n, unsigned threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

/* Copy `bytes` of device memory on `stream` (nothing when bytes is 0 or
 * dst == src). */
MICA_KIT_API mica_status_t mica_kit_cuda_copy(void *dst, const void *src,
                                              size_t bytes, void *stream,
                                              mica_error_t *err);

/* Allocate an 8-byte pinned host buffer into *pinned. */
MICA_KIT_API mica_status_t mica_kit_cuda_host_alloc(void **pinned,
                                                    mica_error_t *err);

/* Free a buffer of mica_kit_cuda_host_alloc (NULL: nothing). */
MICA_KIT_API void mica_kit_cuda_host_free(void *pinned);

/*
 * Read `bytes` (at most 8) of device memory at `src` into the pinned host
 * buffer *pinned (allocated here if NULL) and wait for `stream`: the
 * bytes are in *pinned on return (a loop's trip count, a condition).
 */
MICA_KIT_API mica_status_t mica_kit_cuda_fetch(void **pinned,
                                               const void *src, size_t bytes,
                                               void *stream,
                                               mica_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* MICA_KIT_CUDA_H */
