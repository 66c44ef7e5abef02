/*
 * modules/padding/padding_cuda.cu - the Padding kernel.
 *
 * One thread per output element (grid-stride, 64-bit indices): the
 * element's row and column give the input element it copies, or zero.
 * Consecutive threads write consecutive elements and read consecutive
 * ones inside a row, so both sides coalesce.  One instantiation per
 * element width (1, 2, 4 or 8 bytes); 256 threads per block.
 */
#include <config.h>

#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "padding.h"

namespace {

template <typename T>
__global__ void pad_kernel(const T *__restrict__ x, T *__restrict__ y,
                           mica__pad_t p, int64_t n)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    int64_t i;

    for (i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step) {
        int64_t j = i % p.ow, r = i / p.ow;
        int64_t row = r % p.oh, o = r / p.oh;
        int64_t si = row - p.top, sj = j - p.left;
        y[i] = si >= 0 && si < p.h && sj >= 0 && sj < p.w
                   ? x[(o * p.h + si) * p.w + sj]
                   : T(0);
    }
}

template <typename T>
mica_status_t launch(const mica__pad_t *p, const void *in, void *out,
                     cudaStream_t stream, mica_error_t *err)
{
    const int64_t n = p->outer * p->oh * p->ow;
    const unsigned threads = 256;

    pad_kernel<T><<<mica_kit_grid(n, threads), threads, 0, stream>>>(
        static_cast<const T *>(in), static_cast<T *>(out), *p, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

} /* namespace */

extern "C" mica_status_t mica__padding_cuda(const mica__pad_t *p,
                                            size_t esize, const void *in,
                                            void *out, void *stream,
                                            mica_error_t *err)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);

    if (p->outer * p->oh * p->ow <= 0)
        return MICA_OK;
    switch (esize) {
    case 1: return launch<uint8_t>(p, in, out, st, err);
    case 2: return launch<uint16_t>(p, in, out, st, err);
    case 4: return launch<uint32_t>(p, in, out, st, err);
    case 8: return launch<uint64_t>(p, in, out, st, err);
    default: break;
    }
    mica_kit_host->set_error(err, "Padding has no CUDA kernel for elements "
                             "of %zu bytes", esize);
    return MICA_ERR_UNSUPPORTED;
}
