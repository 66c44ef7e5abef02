/*
 * bench/bench_model.c - the time of one run of a whole manifest through
 * mica (until `mica bench` exists): build, then time the execution.
 *
 *   bench_model MANIFEST [--device cpu|cuda] [--fp16] [--runs R]
 *               [--cuda-graph]
 *
 * --cuda-graph replays the enqueue as a CUDA graph (mica_exec_set_cuda_
 * graph; the warm-up captures it); the line then says graph=on, or
 * graph=off and why the context fell back.
 * Every input gets a fixed pattern of values in [-1, 1] at its build-time
 * shape (give a manifest without runtime dimensions) and is uploaded
 * once.  Timing: R runs queued then one synchronization (on the CPU a
 * run finishes before the next starts), per run, the median of 5 such
 * trials after a warm-up; host clock.  host_ms is the host's share: the
 * time the R enqueue calls took before the synchronization, per run
 * (near ms: the host, not the device, sets the pace).  Prints one line,
 *   bench_model: MANIFEST device=cuda precision=float16 batch=N
 *       ms=T images_per_s=I build_s=B host_ms=H
 * that bench/resnet50_torch.py and bench/resnet50_cpu.py read.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mica/kit_half.h"

#define TRIALS 5

/* The fixed pattern in `dtype`, n values; malloc'd. */
static void *pattern(mica_dtype_t dtype, int64_t n)
{
    size_t es = mica_dtype_size(dtype);
    unsigned char *p = malloc((size_t)(n > 0 ? n : 1) * (es ? es : 1));
    unsigned seed = 12345u;
    int64_t i;

    if (!p)
        exit(1);
    for (i = 0; i < n; i++) {
        float v;
        seed = seed * 1103515245u + 12345u;
        v = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
        if (dtype == MICA_FLOAT16)
            ((uint16_t *)p)[i] = mica_kit_float_to_half(v);
        else if (dtype == MICA_FLOAT32)
            ((float *)p)[i] = v;
        else
            memset(p + (size_t)i * es, 0, es);
    }
    return p;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    uint32_t device = MICA_DEVICE_CUDA;
    int fp16 = 0, graph = 0, runs = 20, i, t;
    mica_context_t *ctx = bench_context();
    mica_manifest_t *m = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    void *data[16] = {NULL};
    int64_t batch = 1;
    double v[TRIALS], q[TRIALS], t0, build_s;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = strcmp(argv[++i], "cpu") == 0 ? MICA_DEVICE_CPU
                                                   : MICA_DEVICE_CUDA;
        else if (strcmp(argv[i], "--fp16") == 0)
            fp16 = 1;
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cuda-graph") == 0)
            graph = 1;
        else
            path = argv[i];
    }
    if (!path || runs < 1) {
        fprintf(stderr, "usage: bench_model MANIFEST [--device cpu|cuda] "
                        "[--fp16] [--runs R] [--cuda-graph]\n");
        return 2;
    }
    if (device == MICA_DEVICE_CUDA && !mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench: no usable CUDA GPU\n");
        return 1;
    }
    bench_check(ctx, mica_manifest_load(ctx, path, &m), path);
    cfg = *mica_manifest_config(m);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (fp16)
        cfg.precisions |= 1u << MICA_FLOAT16;
    t0 = bench_now();
    bench_check(ctx, mica_engine_build(mica_manifest_network(m), &cfg, &e),
                "build");
    build_s = bench_now() - t0;
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    if (graph)
        bench_check(ctx, mica_exec_set_cuda_graph(x, 1), "--cuda-graph");
    for (i = 0; i < mica_engine_nb_inputs(e) && i < 16; i++) {
        mica_tensor_info_t ti;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        bench_check(ctx, mica_engine_tensor(e, mica_engine_input(e, i), &ti),
                    "input");
        if (i == 0 && ti.dims.nb_dims > 0)
            batch = ti.dims.d[0];
        data[i] = pattern(ti.dtype, mica_dims_volume(&ti.dims));
        bench_check(ctx, mica_exec_set_input(x, ti.name, &ti.dims, data[i]),
                    ti.name);
    }
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (t = -1; t < TRIALS; t++) {
        int r, n = t < 0 ? 3 : runs;
        double s = bench_now();
        double e;
        for (r = 0; r < n; r++)
            bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        e = bench_now();
        bench_check(ctx, mica_exec_sync(x), "sync");
        if (t >= 0) {
            v[t] = (bench_now() - s) / n;
            q[t] = (e - s) / n;
        }
    }
    t0 = bench_median(v, TRIALS);
    printf("bench_model: %s device=%s precision=%s batch=%lld ms=%.4f "
           "images_per_s=%.1f build_s=%.2f host_ms=%.4f\n", path,
           device == MICA_DEVICE_CUDA ? "cuda" : "cpu",
           fp16 ? "float16" : "float32", (long long)batch, 1e3 * t0,
           (double)batch / t0, build_s, 1e3 * bench_median(q, TRIALS));
    if (graph) {
        const char *why = mica_exec_cuda_graph_why(x);
        printf("bench_model: graph=%s%s%s%s\n", why ? "off" : "on",
               why ? " (" : "", why ? why : "", why ? ")" : "");
    }
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
    for (i = 0; i < 16; i++)
        free(data[i]);
    mica_context_destroy(ctx);
    return 0;
}
