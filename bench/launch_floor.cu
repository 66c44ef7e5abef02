/*
 * bench/launch_floor.cu - the floor of a layer's host time without CUDA
 * graphs (issue 21, point 4): the host time of one launch of an empty
 * kernel taking the arguments an elementwise layer takes, in batches of
 * 100 launches (a synchronization, not timed, between batches, as
 * bench_overhead times its chain of 100 layers), the median per launch:
 *
 *   runtime        <<<>>> then cudaGetLastError (as mica's modules
 *                  launch) on a stream this runtime made
 *   runtime, foreign stream
 *                  the same on a stream the driver API made (cuStreamCreate),
 *                  as a module's own static runtime sees the stream of the
 *                  execution context, which the CUDA device's runtime made
 *   driver         cuLaunchKernel (reached with cudaGetDriverEntryPoint-
 *                  ByVersion) on the runtime's stream
 *
 * for bench_overhead's table.
 */
#include <algorithm>
#include <chrono>
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <vector>

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

enum { BATCH = 100 };

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned,
                              unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*stream_create_fn)(CUstream *, unsigned);

/* Median us per launch of `reps` batches; how: 0 runtime, 1 driver. */
static double batches(int reps, int how, cudaStream_t s, launch_fn launch,
                      CUfunction f, float *x, float *y)
{
    std::vector<double> t;
    int64_t n = 16;
    float a = 1.0f;
    void *args[4] = {&x, &y, &n, &a};
    int r, i;

    for (r = -5; r < reps; r++) {
        double t0 = now_us();
        for (i = 0; i < BATCH; i++) {
            if (how == 0) {
                empty_kernel<<<1, 256, 0, s>>>(x, y, n, a);
                if (cudaGetLastError() != cudaSuccess)
                    return -1;
            } else if (launch(f, 1, 1, 1, 256, 1, 1, 0, (CUstream)s, args,
                              nullptr) != CUDA_SUCCESS) {
                return -1;
            }
        }
        double dt = now_us() - t0;
        if (cudaStreamSynchronize(s) != cudaSuccess)
            return -1;
        if (r >= 0)
            t.push_back(dt / BATCH);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

extern "C" int mica_bench_launch_floor(int reps, double *runtime_us,
                                       double *foreign_us, double *driver_us)
{
    cudaStream_t s = nullptr;
    CUstream ds = nullptr;
    float *x = nullptr, *y = nullptr;
    launch_fn launch = nullptr;
    stream_create_fn create = nullptr;
    cudaFunction_t f = nullptr;
    cudaDriverEntryPointQueryResult q;

    *runtime_us = *foreign_us = *driver_us = -1;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&x, 64) != cudaSuccess || cudaMalloc(&y, 64) != cudaSuccess)
        return -1;
    *runtime_us = batches(reps, 0, s, nullptr, nullptr, x, y);
    if (cudaGetFuncBySymbol(&f, (const void *)empty_kernel) == cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuLaunchKernel", (void **)&launch,
                                         12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        launch)
        *driver_us = batches(reps, 1, s, launch, (CUfunction)f, x, y);
    if (cudaGetDriverEntryPointByVersion("cuStreamCreate", (void **)&create,
                                         12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        create && create(&ds, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS)
        *foreign_us = batches(reps, 0, (cudaStream_t)ds, nullptr, nullptr, x,
                              y);
    if (ds)
        cudaStreamDestroy((cudaStream_t)ds);
    cudaFree(x);
    cudaFree(y);
    cudaStreamDestroy(s);
    return 0;
}
