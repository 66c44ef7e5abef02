/*
 * modules/identity/identity_cuda.cu - the Identity layer's copy and cast
 * on CUDA.  Every element goes through a double, as on the CPU, so the
 * two implementations agree bit for bit (see identity.c for the rules).
 */
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "cuda_check.h"
#include "identity.h"

static __device__ __forceinline__ double load(const void *p, int t, int64_t i)
{
    switch (t) {
    case MICA_FLOAT32: return ((const float *)p)[i];
    case MICA_FLOAT16: return __half2float(((const __half *)p)[i]);
    case MICA_BFLOAT16: {
        uint32_t x = (uint32_t)((const uint16_t *)p)[i] << 16;
        return __uint_as_float(x);
    }
    case MICA_INT8: return ((const int8_t *)p)[i];
    case MICA_UINT8: return ((const uint8_t *)p)[i];
    case MICA_BOOL: return ((const uint8_t *)p)[i] != 0;
    case MICA_INT32: return ((const int32_t *)p)[i];
    case MICA_INT64: return (double)((const int64_t *)p)[i];
    default: return 0.0;
    }
}

/* NaN to 0, truncation toward zero, saturation to [lo, hi]. */
static __device__ __forceinline__ int64_t to_int(double v, double lo,
                                                 double hi, int64_t ilo,
                                                 int64_t ihi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return ilo;
    if (v >= hi)
        return ihi;
    return (int64_t)v;
}

static __device__ __forceinline__ uint16_t to_bf16(float f)
{
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

static __device__ __forceinline__ void store(void *p, int t, int64_t i,
                                             double v)
{
    switch (t) {
    case MICA_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MICA_FLOAT16: ((__half *)p)[i] = __float2half_rn((float)v); break;
    case MICA_BFLOAT16: ((uint16_t *)p)[i] = to_bf16((float)v); break;
    case MICA_INT8:
        ((int8_t *)p)[i] = (int8_t)to_int(v, -128.0, 127.0, -128, 127);
        break;
    case MICA_UINT8:
        ((uint8_t *)p)[i] = (uint8_t)to_int(v, 0.0, 255.0, 0, 255);
        break;
    case MICA_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    case MICA_INT32:
        ((int32_t *)p)[i] = (int32_t)to_int(v, -2147483648.0, 2147483647.0,
                                            INT32_MIN, INT32_MAX);
        break;
    case MICA_INT64:
        ((int64_t *)p)[i] = to_int(v, -9223372036854775808.0,
                                   9223372036854775808.0, INT64_MIN,
                                   INT64_MAX);
        break;
    default: break;
    }
}

static __global__ void cast_kernel(const void *src, int sdt, void *dst,
                                   int ddt, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        store(dst, ddt, i, load(src, sdt, i));
}

extern "C" mica_status_t mica__identity_cuda_cast(const void *src,
                                                  mica_dtype_t sdt, void *dst,
                                                  mica_dtype_t ddt, int64_t n,
                                                  void *stream,
                                                  mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned threads = 256;

    if (n <= 0)
        return MICA_OK;
    if (sdt == ddt) {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, (size_t)n * mica_dtype_size(sdt),
                                   cudaMemcpyDeviceToDevice, s));
        return MICA_OK;
    }
    cast_kernel<<<mica__grid(n, threads), threads, 0, s>>>(src, (int)sdt, dst,
                                                          (int)ddt, n);
    CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
