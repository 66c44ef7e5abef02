/*
 * modules/select/select_cuda.cu - the Select layer on CUDA: one
 * grid-stride kernel per element width; the broadcast view (output dims,
 * per-input strides) travels by value.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "select.h"

typedef struct select_view {
    int32_t rank;
    int64_t dims[MICA_MAX_DIMS];
    int64_t cs[MICA_MAX_DIMS], ts[MICA_MAX_DIMS], es[MICA_MAX_DIMS];
} select_view_t;

template <typename T>
static __global__ void select_kernel(T *__restrict__ dst,
                                     const uint8_t *__restrict__ cond,
                                     const T *__restrict__ a,
                                     const T *__restrict__ b,
                                     select_view_t v, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        int64_t rest = i, ic = 0, ia = 0, ib = 0;
        for (int32_t k = v.rank - 1; k >= 0; k--) {
            int64_t c = rest % v.dims[k];
            rest /= v.dims[k];
            ic += c * v.cs[k];
            ia += c * v.ts[k];
            ib += c * v.es[k];
        }
        dst[i] = cond[ic] ? a[ia] : b[ib];
    }
}

template <typename T>
static void launch(void *dst, const void *cond, const void *a, const void *b,
                   const select_view_t &v, int64_t n, cudaStream_t s)
{
    const unsigned threads = 256;
    select_kernel<T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        (T *)dst, (const uint8_t *)cond, (const T *)a, (const T *)b, v, n);
}

extern "C" mica_status_t mica__select_cuda(void *dst, const void *cond,
                                           const void *then_,
                                           const void *else_, size_t esize,
                                           int32_t rank, const int64_t *dims,
                                           const int64_t *cstr,
                                           const int64_t *tstr,
                                           const int64_t *estr, int64_t n,
                                           void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    select_view_t v;
    int32_t k;

    if (n <= 0)
        return MICA_OK;
    if (rank < 0 || rank > MICA_MAX_DIMS) {
        mica_kit_host->set_error(err, "select of rank %d (at most %d)",
                                 (int)rank, MICA_MAX_DIMS);
        return MICA_ERR_INVALID;
    }
    /* Drop unit output dims: they contribute no offset. */
    v.rank = 0;
    for (k = 0; k < rank; k++) {
        if (dims[k] == 1)
            continue;
        v.dims[v.rank] = dims[k];
        v.cs[v.rank] = cstr[k];
        v.ts[v.rank] = tstr[k];
        v.es[v.rank] = estr[k];
        v.rank++;
    }
    for (k = v.rank; k < MICA_MAX_DIMS; k++) {
        v.dims[k] = 1;
        v.cs[k] = v.ts[k] = v.es[k] = 0;
    }
    switch (esize) {
    case 1: launch<uint8_t>(dst, cond, then_, else_, v, n, s); break;
    case 2: launch<uint16_t>(dst, cond, then_, else_, v, n, s); break;
    case 4: launch<uint32_t>(dst, cond, then_, else_, v, n, s); break;
    case 8: launch<uint64_t>(dst, cond, then_, else_, v, n, s); break;
    default:
        mica_kit_host->set_error(err, "select of %zu-byte elements", esize);
        return MICA_ERR_INVALID;
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
