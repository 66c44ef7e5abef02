/*
 * bench/bench_elementwise.c - an ElementWise chain over 64M float32
 * elements on CUDA, against the device's copy bandwidth.
 *
 * Each layer of the chain t(i+1) = t(i) + y reads two 256 MiB tensors and
 * writes one: 768 MiB of traffic a layer.  The reference is a
 * device-to-device cudaMemcpy of 256 MiB, counted as bytes read plus
 * bytes written.  Both are timed as the median of repeated runs after a
 * warm-up, with the host clock around work plus synchronization.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"

enum { LAYERS = 8, REPS = 20 };

static double copy_bandwidth(size_t bytes)
{
    void *a, *b;
    double t[REPS];
    int i;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        fprintf(stderr, "bench: cudaMalloc failed\n");
        exit(1);
    }
    cudaMemset(a, 1, bytes);
    for (i = 0; i < 3; i++)
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
    for (i = 0; i < REPS; i++) {
        double t0 = bench_now();
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaDeviceSynchronize();
        t[i] = bench_now() - t0;
    }
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / bench_median(t, REPS);
}

/* Seconds per run of the chain (enqueue + sync), median. */
static double time_chain(mica_context_t *ctx, const char *type,
                         const char *key, const char *value, int binary,
                         const mica_dims_t *d, const float *host)
{
    mica_network_t *net = bench_chain(ctx, type, key, value, binary, LAYERS,
                                      MICA_FLOAT32, d);
    mica_engine_t *e = bench_build(ctx, net, MICA_DEVICE_CUDA);
    mica_exec_t *x = NULL;
    double t[REPS];
    int i;

    bench_check(ctx, mica_exec_create(e, &x), "exec");
    bench_check(ctx, mica_exec_set_input(x, "x", d, host), "x");
    if (binary)
        bench_check(ctx, mica_exec_set_input(x, "y", d, host), "y");
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (i = 0; i < 3; i++) {
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        bench_check(ctx, mica_exec_sync(x), "sync");
    }
    for (i = 0; i < REPS; i++) {
        double t0 = bench_now();
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        bench_check(ctx, mica_exec_sync(x), "sync");
        t[i] = bench_now() - t0;
    }
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return bench_median(t, REPS);
}

int main(void)
{
    const int64_t n = 64ll << 20;
    mica_context_t *ctx = bench_context();
    mica_dims_t d;
    struct cudaDeviceProp prop;
    float *host;
    double copy, t_sum, t_relu, bw_sum, bw_relu;
    int64_t i;

    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench: no usable CUDA GPU\n");
        return 1;
    }
    cudaGetDeviceProperties(&prop, 0);
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = n;
    host = malloc((size_t)n * sizeof *host);
    if (!host)
        return 1;
    for (i = 0; i < n; i++)
        host[i] = (float)(i % 1000) * 0.001f - 0.5f;

    copy = copy_bandwidth((size_t)n * 4);
    t_sum = time_chain(ctx, "ElementWise", "op", "sum", 1, &d, host);
    t_relu = time_chain(ctx, "Activation", "type", "relu", 0, &d, host);
    bw_sum = LAYERS * 3.0 * (double)n * 4 / t_sum;
    bw_relu = LAYERS * 2.0 * (double)n * 4 / t_relu;

    printf("device: %s\n", prop.name);
    printf("elements: %lld float32, chain of %d layers, median of %d runs\n",
           (long long)n, LAYERS, REPS);
    printf("%-28s %10s %12s %10s\n", "what", "ms/run", "GB/s", "of copy");
    printf("%-28s %10.3f %12.1f %9.1f%%\n", "cudaMemcpy D2D (reference)",
           1e3 * 2.0 * (double)n * 4 / copy, copy / 1e9, 100.0);
    printf("%-28s %10.3f %12.1f %9.1f%%\n", "ElementWise sum chain",
           1e3 * t_sum, bw_sum / 1e9, 100.0 * bw_sum / copy);
    printf("%-28s %10.3f %12.1f %9.1f%%\n", "Activation relu chain",
           1e3 * t_relu, bw_relu / 1e9, 100.0 * bw_relu / copy);
    free(host);
    mica_context_destroy(ctx);
    return 0;
}
