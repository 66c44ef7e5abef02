/*
 * bench/bench_layers.c - SoftMax, TopK and Einsum on CUDA against their
 * peers in the same run (issue 11):
 *
 *   SoftMax over [4096, 4096] and [65536, 128] (the last axis; also the
 *   first axis of [4096, 4096], strided), float32 and float16, as bytes
 *   read and written per second against a device-to-device cudaMemcpy of
 *   the same tensor (goal: at least 85%);
 *   TopK max, k = 1 and k = 100, over [256, 32000] float32: time, and the
 *   input read per second against the copy;
 *   Einsum "bhqd,bhkd->bhqk" over [8, 16, 512, 64] (q = k = 512, d = 64),
 *   float32 and float16, against the same product as one
 *   cublasGemmStridedBatchedEx called directly (goal: at least 90%).
 *
 * Every figure is device time: CUDA events on the execution context's
 * stream around REPS back-to-back runs (mica_exec_enqueue, or the library
 * call), after a warm-up, divided by REPS.  A one-layer network per
 * case; inputs uploaded once.
 *
 *     bench_layers [SoftMax] [TopK] [Einsum]
 *
 * runs the layers named (all three without arguments).
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

enum { REPS = 50 };

static cudaStream_t stream;

static void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "bench: %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

/* Host data of n elements of dtype, values in [-4, 4). */
static void *host_data(mica_dtype_t dtype, int64_t n)
{
    size_t es = mica_dtype_size(dtype);
    void *p = malloc((size_t)n * es);
    int64_t i;

    if (!p)
        exit(1);
    for (i = 0; i < n; i++) {
        float v = (float)((i * 7919) % 8000) / 1000.0f - 4.0f;
        if (dtype == MICA_FLOAT16)
            ((uint16_t *)p)[i] = mica_kit_float_to_half(v);
        else
            ((float *)p)[i] = v;
    }
    return p;
}

/* Seconds per device-to-device copy of `bytes`. */
static double time_copy(size_t bytes)
{
    void *a, *b;
    cudaEvent_t e0, e1;
    float ms;
    int i;

    cuda_ok(cudaMalloc(&a, bytes), "cudaMalloc");
    cuda_ok(cudaMalloc(&b, bytes), "cudaMalloc");
    cuda_ok(cudaMemset(a, 1, bytes), "cudaMemset");
    cuda_ok(cudaEventCreate(&e0), "event");
    cuda_ok(cudaEventCreate(&e1), "event");
    for (i = 0; i < 5; i++)
        cuda_ok(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice,
                                stream), "copy");
    cuda_ok(cudaEventRecord(e0, stream), "record");
    for (i = 0; i < REPS; i++)
        cuda_ok(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice,
                                stream), "copy");
    cuda_ok(cudaEventRecord(e1, stream), "record");
    cuda_ok(cudaEventSynchronize(e1), "sync");
    cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return ms / 1e3 / REPS;
}

/* Seconds per run of a one-layer network of `type` with `fields` on
 * inputs "in0".."in<nb_in-1>" (uploaded once), outputs out0..outN. */
static double time_layer(mica_context_t *ctx, const char *type,
                         const mica_fields_t *fields, int nb_in,
                         mica_dtype_t dtype, const mica_dims_t *dims,
                         int nb_out)
{
    static const char *ins[4] = {"in0", "in1", "in2", "in3"};
    static const char *outs[2] = {"out0", "out1"};
    mica_network_t *net = NULL;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    mica_layer_spec_t spec;
    void *host[4];
    cudaEvent_t e0, e1;
    float ms;
    int i;

    bench_check(ctx, mica_network_create(ctx, &net), "network");
    for (i = 0; i < nb_in; i++)
        bench_check(ctx, mica_network_add_input(net, ins[i], dtype, &dims[i],
                                                NULL), "input");
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "layer";
    spec.type = type;
    spec.nb_inputs = nb_in;
    spec.inputs = ins;
    spec.nb_outputs = nb_out;
    spec.outputs = outs;
    spec.fields = fields;
    bench_check(ctx, mica_network_add_layer(net, &spec), "layer");
    for (i = 0; i < nb_out; i++)
        bench_check(ctx, mica_network_mark_output(net, outs[i], NULL),
                    "output");
    e = bench_build(ctx, net, MICA_DEVICE_CUDA);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    bench_check(ctx, mica_exec_set_stream(x, stream), "stream");
    for (i = 0; i < nb_in; i++) {
        host[i] = host_data(dtype, mica_dims_volume(&dims[i]));
        bench_check(ctx, mica_exec_set_input(x, ins[i], &dims[i], host[i]),
                    "set input");
    }
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (i = 0; i < 5; i++)
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
    bench_check(ctx, mica_exec_sync(x), "sync");
    cuda_ok(cudaEventCreate(&e0), "event");
    cuda_ok(cudaEventCreate(&e1), "event");
    cuda_ok(cudaEventRecord(e0, stream), "record");
    for (i = 0; i < REPS; i++)
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
    cuda_ok(cudaEventRecord(e1, stream), "record");
    bench_check(ctx, mica_exec_sync(x), "sync");
    cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    for (i = 0; i < nb_in; i++)
        free(host[i]);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return ms / 1e3 / REPS;
}

/* Seconds per cublasGemmStridedBatchedEx of bhqd,bhkd->bhqk. */
static double time_cublas(mica_dtype_t dtype, int bh, int q, int k, int d)
{
    cudaDataType_t t = dtype == MICA_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
    size_t es = mica_dtype_size(dtype);
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t h;
    void *a, *b, *c, *host;
    cudaEvent_t e0, e1;
    float ms;
    int i;

    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench: cublasCreate failed\n");
        exit(1);
    }
    cublasSetStream(h, stream);
    cuda_ok(cudaMalloc(&a, (size_t)bh * q * d * es), "cudaMalloc");
    cuda_ok(cudaMalloc(&b, (size_t)bh * k * d * es), "cudaMalloc");
    cuda_ok(cudaMalloc(&c, (size_t)bh * q * k * es), "cudaMalloc");
    host = host_data(dtype, (int64_t)bh * q * d);
    cuda_ok(cudaMemcpy(a, host, (size_t)bh * q * d * es,
                       cudaMemcpyHostToDevice), "upload");
    cuda_ok(cudaMemcpy(b, host, (size_t)bh * k * d * es,
                       cudaMemcpyHostToDevice), "upload");
    free(host);
    cuda_ok(cudaEventCreate(&e0), "event");
    cuda_ok(cudaEventCreate(&e1), "event");
    for (i = -5; i < REPS; i++) {
        if (i == 0)
            cuda_ok(cudaEventRecord(e0, stream), "record");
        /* Row-major S[q][k] = Q[q][d] K[k][d]^T: column-major S^T = K Q^T,
         * K read transposed (op T), Q as is. */
        if (cublasGemmStridedBatchedEx(
                h, CUBLAS_OP_T, CUBLAS_OP_N, k, q, d, &one, b, t, d,
                (long long)k * d, a, t, d, (long long)q * d, &zero, c, t, k,
                (long long)q * k, bh, CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "bench: cublasGemmStridedBatchedEx failed\n");
            exit(1);
        }
    }
    cuda_ok(cudaEventRecord(e1, stream), "record");
    cuda_ok(cudaEventSynchronize(e1), "sync");
    cuda_ok(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cublasDestroy(h);
    return ms / 1e3 / REPS;
}

/* Fields: one int, one string (NULL names: absent). */
static mica_fields_t *fields_of(const char *iname, int64_t ival,
                                const char *iname2, int64_t ival2,
                                const char *sname, const char *sval)
{
    static mica_field_t f[3];
    static int64_t iv[2];
    static const char *sv;
    static mica_fields_t fs;
    int n = 0;

    iv[0] = ival;
    iv[1] = ival2;
    sv = sval;
    if (iname)
        f[n++] = (mica_field_t){iname, MICA_FIELD_INT, 1, &iv[0]};
    if (iname2)
        f[n++] = (mica_field_t){iname2, MICA_FIELD_INT, 1, &iv[1]};
    if (sname)
        f[n++] = (mica_field_t){sname, MICA_FIELD_STRING, 1, &sv};
    fs.nb_fields = n;
    fs.fields = f;
    return &fs;
}

typedef struct row {
    char what[64];
    double ms, gbs, peer_ms, ratio;
    const char *peer;
} row_t;

/* Whether layer type `t` is to be timed: named in argv, or no names. */
static int wanted(int argc, char **argv, const char *t)
{
    int i;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], t) == 0)
            return 1;
    return argc < 2;
}

int main(int argc, char **argv)
{
    static const struct {
        int64_t r, c;
        mica_dtype_t t;
        int axis;
    } sm[] = {
        {4096, 4096, MICA_FLOAT32, 1}, {4096, 4096, MICA_FLOAT16, 1},
        {65536, 128, MICA_FLOAT32, 1}, {65536, 128, MICA_FLOAT16, 1},
        {4096, 4096, MICA_FLOAT32, 0}, {4096, 4096, MICA_FLOAT16, 0},
    };
    static const mica_dtype_t et[2] = {MICA_FLOAT32, MICA_FLOAT16};
    mica_context_t *ctx = bench_context();
    struct cudaDeviceProp prop;
    row_t rows[16];
    int nr = 0, i;

    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench: no usable CUDA GPU\n");
        return 1;
    }
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "properties");
    cuda_ok(cudaStreamCreate(&stream), "stream");

    for (i = 0; wanted(argc, argv, "SoftMax") &&
                i < (int)(sizeof sm / sizeof sm[0]);
         i++) {
        mica_dims_t d = {2, 0, {sm[i].r, sm[i].c}};
        size_t bytes = (size_t)(sm[i].r * sm[i].c) *
                       mica_dtype_size(sm[i].t);
        double copy = time_copy(bytes);
        double t = time_layer(ctx, "SoftMax",
                              fields_of("axis", sm[i].axis, NULL, 0, NULL,
                                        NULL),
                              1, sm[i].t, &d, 1);
        row_t *r = &rows[nr++];
        snprintf(r->what, sizeof r->what, "SoftMax [%lld,%lld] %s axis %d",
                 (long long)sm[i].r, (long long)sm[i].c,
                 sm[i].t == MICA_FLOAT16 ? "f16" : "f32", sm[i].axis);
        r->ms = 1e3 * t;
        r->gbs = 2.0 * (double)bytes / t / 1e9;
        r->peer = "D2D copy";
        r->peer_ms = 1e3 * copy;
        r->ratio = copy / t;
    }
    for (i = 0; wanted(argc, argv, "TopK") && i < 2; i++) {
        int k = i ? 100 : 1;
        mica_dims_t d = {2, 0, {256, 32000}};
        size_t bytes = (size_t)256 * 32000 * 4;
        double copy = time_copy(bytes);
        double t = time_layer(ctx, "TopK",
                              fields_of("k", k, "axis", 1, "op", "max"), 1,
                              MICA_FLOAT32, &d, 2);
        row_t *r = &rows[nr++];
        snprintf(r->what, sizeof r->what, "TopK [256,32000] f32 max k %d",
                 k);
        r->ms = 1e3 * t;
        r->gbs = (double)bytes / t / 1e9; /* the input read once */
        r->peer = "D2D copy";
        r->peer_ms = 1e3 * copy;
        r->ratio = copy / (2.0 * t); /* read GB/s over the copy's GB/s */
    }
    for (i = 0; wanted(argc, argv, "Einsum") && i < 2; i++) {
        mica_dims_t d[2] = {{4, 0, {8, 16, 512, 64}},
                            {4, 0, {8, 16, 512, 64}}};
        double direct = time_cublas(et[i], 8 * 16, 512, 512, 64);
        double t = time_layer(ctx, "Einsum",
                              fields_of(NULL, 0, NULL, 0, "equation",
                                        "bhqd,bhkd->bhqk"),
                              2, et[i], d, 1);
        row_t *r = &rows[nr++];
        snprintf(r->what, sizeof r->what,
                 "Einsum bhqd,bhkd->bhqk [8,16,512,64] %s",
                 et[i] == MICA_FLOAT16 ? "f16" : "f32");
        r->ms = 1e3 * t;
        r->gbs = 2.0 * 128 * 512 * 512 * 64 / t / 1e12; /* TFLOP/s */
        r->peer = "cuBLAS";
        r->peer_ms = 1e3 * direct;
        r->ratio = direct / t;
    }

    printf("device: %s, %d SMs; device time, mean of %d runs\n", prop.name,
           prop.multiProcessorCount, REPS);
    printf("%-44s %9s %10s %-9s %9s %8s\n", "what", "mica ms", "GB/s|TF/s",
           "peer", "peer ms", "of peer");
    for (i = 0; i < nr; i++)
        printf("%-44s %9.4f %10.1f %-9s %9.4f %7.1f%%\n", rows[i].what,
               rows[i].ms, rows[i].gbs, rows[i].peer, rows[i].peer_ms,
               100.0 * rows[i].ratio);
    cudaStreamDestroy(stream);
    mica_context_destroy(ctx);
    return 0;
}
