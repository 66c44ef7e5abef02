/*
 * modules/nonzero/nonzero_cuda.cu - NonZero on CUDA: one kernel of one
 * thread block, simple rather than fast.
 *
 * The block first counts the non-zero elements (each thread a strided
 * share, summed with one shared atomic), since the rows of the output
 * [rank, count] are count long; then it walks the input in chunks of
 * BLOCK consecutive elements: each thread flags its element, an
 * inclusive scan of the flags in shared memory (Hillis-Steele) gives
 * each non-zero its place after those of the chunks before, and its
 * coordinates are written there.  About n / BLOCK steps: fine for masks
 * of millions of elements.  Thread 0 writes the count last.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "nonzero.h"

#define BLOCK 1024

static __global__ void nonzero_kernel(const void *__restrict__ x,
                                      int32_t kind, int64_t n,
                                      nonzero_dims_t dims,
                                      int32_t *__restrict__ idx,
                                      int32_t *__restrict__ count_out)
{
    __shared__ int32_t scan[BLOCK];
    __shared__ unsigned long long total;
    const int32_t t = (int32_t)threadIdx.x;
    unsigned long long mine = 0;
    int64_t i, base = 0, count;
    int32_t off, d;

    if (t == 0)
        total = 0;
    __syncthreads();
    for (i = t; i < n; i += BLOCK)
        mine += (unsigned long long)nonzero_at(x, kind, i);
    atomicAdd(&total, mine);
    __syncthreads();
    count = (int64_t)total;
    for (int64_t chunk = 0; chunk < n; chunk += BLOCK) {
        int32_t flag;
        i = chunk + t;
        flag = i < n && nonzero_at(x, kind, i);
        scan[t] = flag;
        __syncthreads();
        for (off = 1; off < BLOCK; off <<= 1) {
            int32_t v = t >= off ? scan[t - off] : 0;
            __syncthreads();
            scan[t] += v;
            __syncthreads();
        }
        if (flag) {
            int64_t pos = base + scan[t] - 1, rest = i;
            for (d = dims.rank - 1; d >= 0; d--) {
                idx[(int64_t)d * count + pos] = (int32_t)(rest % dims.d[d]);
                rest /= dims.d[d];
            }
        }
        base += scan[BLOCK - 1];
        __syncthreads(); /* scan is read above before the next chunk */
    }
    if (t == 0)
        *count_out = (int32_t)count;
}

extern "C" mica_status_t mica__nonzero_cuda(const void *x, int32_t k,
                                            int64_t n,
                                            const nonzero_dims_t *dims,
                                            int32_t *idx, int32_t *count,
                                            void *stream, mica_error_t *err)
{
    /* One block, always: even an empty input has its count (0) to write. */
    nonzero_kernel<<<1, BLOCK, 0, (cudaStream_t)stream>>>(x, k, n, *dims,
                                                          idx, count);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
