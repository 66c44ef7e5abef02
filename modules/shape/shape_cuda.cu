/*
 * modules/shape/shape_cuda.cu - the Shape layer on CUDA: one tiny kernel
 * that writes the dimensions, passed by value, into the output.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "shape.h"

typedef struct shape_dims {
    int32_t rank;
    int32_t d[MICA_MAX_DIMS];
} shape_dims_t;

static __global__ void shape_kernel(int32_t *__restrict__ dst, shape_dims_t v)
{
    int32_t i = (int32_t)threadIdx.x;
    if (i < v.rank)
        dst[i] = v.d[i];
}

extern "C" mica_status_t mica__shape_cuda(int32_t *dst, int32_t rank,
                                          const int64_t *dims, void *stream,
                                          mica_error_t *err)
{
    shape_dims_t v;
    int32_t i;

    if (rank <= 0)
        return MICA_OK; /* an empty output: nothing to write */
    if (rank > MICA_MAX_DIMS) {
        mica_kit_host->set_error(err, "input of rank %d (at most %d)",
                                 (int)rank, MICA_MAX_DIMS);
        return MICA_ERR_INVALID;
    }
    v.rank = rank;
    for (i = 0; i < MICA_MAX_DIMS; i++)
        v.d[i] = i < rank ? (int32_t)dims[i] : 0;
    shape_kernel<<<1, MICA_MAX_DIMS, 0, (cudaStream_t)stream>>>(dst, v);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
