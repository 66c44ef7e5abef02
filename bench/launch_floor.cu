/*
 * bench/launch_floor.cu - the floor of a layer's host time without CUDA
 * graphs (issue 21, point 4): the host time of one launch of an empty
 * kernel taking the arguments an elementwise layer takes, on a
 * non-blocking stream, through the runtime (<<<>>> then
 * cudaGetLastError, as mica's modules launch) and through the driver's
 * cuLaunchKernel (reached with cudaGetDriverEntryPointByVersion), for
 * bench_overhead's table.
 */
#include <chrono>
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

static __global__ void empty_kernel(const float *x, float *y, int64_t n,
                                    float a)
{
    if (n < 0)
        y[0] = x[0] * a;
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

extern "C" int mica_bench_launch_floor(int reps, double *runtime_us,
                                       double *driver_us)
{
    typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
    cudaStream_t s;
    float *x = nullptr, *y = nullptr;
    int64_t n = 16;
    float a = 1.0f;
    void *args[4] = {&x, &y, &n, &a};
    launch_fn launch = nullptr;
    cudaFunction_t f;
    cudaDriverEntryPointQueryResult q;
    double t0;
    int i;

    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&x, 64) != cudaSuccess || cudaMalloc(&y, 64) != cudaSuccess)
        return -1;
    for (i = 0; i < 100; i++)
        empty_kernel<<<1, 256, 0, s>>>(x, y, n, a);
    cudaStreamSynchronize(s);
    t0 = now_us();
    for (i = 0; i < reps; i++) {
        empty_kernel<<<1, 256, 0, s>>>(x, y, n, a);
        if (cudaGetLastError() != cudaSuccess)
            return -1;
    }
    *runtime_us = (now_us() - t0) / reps;
    cudaStreamSynchronize(s);
    *driver_us = -1;
    if (cudaGetFuncBySymbol(&f, (const void *)empty_kernel) == cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&launch,
                                         12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        launch) {
        t0 = now_us();
        for (i = 0; i < reps; i++)
            if (launch((CUfunction)f, 1, 1, 1, 256, 1, 1, 0, (CUstream)s,
                       args, nullptr) != CUDA_SUCCESS)
                break;
        if (i == reps)
            *driver_us = (now_us() - t0) / reps;
        cudaStreamSynchronize(s);
    }
    cudaFree(x);
    cudaFree(y);
    cudaStreamDestroy(s);
    return 0;
}
