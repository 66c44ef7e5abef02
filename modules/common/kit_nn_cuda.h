/*
 * modules/common/kit_nn_cuda.h - the element access of the CNN modules'
 * kernels (CUDA C++: included by their .cu files only): a float32 or
 * float16 (__half) element read as float, a float stored as one (float16
 * rounded to nearest, ties to even).  The kernels compute in float.  Part
 * of the module kit's CNN helpers, not installed.
 */
#ifndef MICA_KIT_NN_CUDA_H
#define MICA_KIT_NN_CUDA_H

#include <cuda_fp16.h>

static __device__ __forceinline__ float mica__to_f(float v) { return v; }
static __device__ __forceinline__ float mica__to_f(__half v)
{
    return __half2float(v);
}

static __device__ __forceinline__ void mica__put_f(float *p, float v)
{
    *p = v;
}
static __device__ __forceinline__ void mica__put_f(__half *p, float v)
{
    *p = __float2half_rn(v);
}

#endif /* MICA_KIT_NN_CUDA_H */
