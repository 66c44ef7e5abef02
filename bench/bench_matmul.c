/*
 * bench/bench_matmul.c - MatrixMultiply 4096x4096x4096 through mica
 * against cuBLAS called directly, in float32 and float16.
 *
 * Both sides use cublasGemmEx-class calls with CUBLAS_COMPUTE_32F and the
 * default math mode (no TF32), row-major data, and are timed the same
 * way: the host clock around the work plus a stream synchronization,
 * median of repeated runs after a warm-up.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "mica/kit.h"
#include "mica/kit_half.h"

enum { N = 4096, REPS = 20 };

/* Row-major test data, the same for cuBLAS and for mica. */
static void *make_data(mica_dtype_t dtype)
{
    size_t esize = mica_dtype_size(dtype), i;
    void *host = malloc((size_t)N * N * esize);
    if (!host)
        exit(1);
    for (i = 0; i < (size_t)N * N; i++) {
        float v = (float)(i % 17) * 0.01f;
        if (dtype == MICA_FLOAT16)
            ((uint16_t *)host)[i] = mica_kit_float_to_half(v);
        else
            ((float *)host)[i] = v;
    }
    return host;
}

static double time_cublas(cudaDataType_t type, const void *host, size_t esize)
{
    cublasHandle_t h;
    void *a, *b, *c;
    float one = 1.0f, zero = 0.0f;
    double t[REPS];
    int i;

    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS ||
        cudaMalloc(&a, (size_t)N * N * esize) != cudaSuccess ||
        cudaMalloc(&b, (size_t)N * N * esize) != cudaSuccess ||
        cudaMalloc(&c, (size_t)N * N * esize) != cudaSuccess) {
        fprintf(stderr, "bench: cuBLAS setup failed\n");
        exit(1);
    }
    cudaMemcpy(a, host, (size_t)N * N * esize, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host, (size_t)N * N * esize, cudaMemcpyHostToDevice);
    for (i = -3; i < REPS; i++) {
        double t0 = bench_now();
        /* Row-major C = A B is column-major C^T = B^T A^T. */
        if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, b, type,
                         N, a, type, N, &zero, c, type, N,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
            CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "bench: cublasGemmEx failed\n");
            exit(1);
        }
        cudaDeviceSynchronize();
        if (i >= 0)
            t[i] = bench_now() - t0;
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cublasDestroy(h);
    return bench_median(t, REPS);
}

static double time_mica(mica_context_t *ctx, mica_dtype_t dtype,
                        const void *host)
{
    mica_network_t *net = NULL;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    mica_layer_spec_t spec;
    mica_dims_t d;
    const char *in[2] = {"a", "b"}, *out[1] = {"c"};
    double t[REPS];
    int r;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = d.d[1] = N;
    bench_check(ctx, mica_network_create(ctx, &net), "network");
    bench_check(ctx, mica_network_add_input(net, "a", dtype, &d, NULL), "a");
    bench_check(ctx, mica_network_add_input(net, "b", dtype, &d, NULL), "b");
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "mm";
    spec.type = "MatrixMultiply";
    spec.nb_inputs = 2;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    bench_check(ctx, mica_network_add_layer(net, &spec), "layer");
    bench_check(ctx, mica_network_mark_output(net, "c", NULL), "output");
    e = bench_build(ctx, net, MICA_DEVICE_CUDA);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    bench_check(ctx, mica_exec_set_input(x, "a", &d, host), "a");
    bench_check(ctx, mica_exec_set_input(x, "b", &d, host), "b");
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (r = -3; r < REPS; r++) {
        double t0 = bench_now();
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        bench_check(ctx, mica_exec_sync(x), "sync");
        if (r >= 0)
            t[r] = bench_now() - t0;
    }
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return bench_median(t, REPS);
}

int main(void)
{
    mica_context_t *ctx = bench_context();
    struct cudaDeviceProp prop;
    double flops = 2.0 * N * N * N;
    double c32, m32, c16, m16;
    void *d32 = make_data(MICA_FLOAT32), *d16 = make_data(MICA_FLOAT16);

    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench: no usable CUDA GPU\n");
        return 1;
    }
    cudaGetDeviceProperties(&prop, 0);
    /* float16 runs a second time in the other order and keeps those
     * figures, so that neither side gains from going first. */
    c32 = time_cublas(CUDA_R_32F, d32, 4);
    m32 = time_mica(ctx, MICA_FLOAT32, d32);
    c16 = time_cublas(CUDA_R_16F, d16, 2);
    m16 = time_mica(ctx, MICA_FLOAT16, d16);
    m16 = time_mica(ctx, MICA_FLOAT16, d16);
    c16 = time_cublas(CUDA_R_16F, d16, 2);
    printf("device: %s\n", prop.name);
    printf("MatrixMultiply %dx%dx%d, median of %d runs\n", N, N, N, REPS);
    printf("%-10s %12s %12s %12s %12s %9s\n", "dtype", "cuBLAS ms",
           "cuBLAS TF/s", "mica ms", "mica TF/s", "of cuBLAS");
    printf("%-10s %12.3f %12.1f %12.3f %12.1f %8.1f%%\n", "float32", 1e3 * c32,
           flops / c32 / 1e12, 1e3 * m32, flops / m32 / 1e12, 100.0 * c32 / m32);
    printf("%-10s %12.3f %12.1f %12.3f %12.1f %8.1f%%\n", "float16", 1e3 * c16,
           flops / c16 / 1e12, 1e3 * m16, flops / m16 / 1e12, 100.0 * c16 / m16);
    free(d32);
    free(d16);
    mica_context_destroy(ctx);
    return 0;
}
