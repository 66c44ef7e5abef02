/*
 * bench/bench_rnn.c - time manifests of static shapes on CUDA: each is
 * built for CUDA, its inputs filled with seeded values in [-1, 1] (int32
 * inputs with 1) and uploaded once, then timed
 * as enqueue plus stream synchronization, the median of the runs after
 * a warm-up.  bench/bench_rnn.py runs it on the RNNv2 and loop forms of
 * an LSTM (tests/gen/lstm_loop.py) beside PyTorch; alone:
 *
 *     bench_rnn [-n RUNS] [-g] MANIFEST...
 *
 * prints one line per manifest: "NAME ms MEDIAN layers LAYERS", then
 * with -g (each run replayed as a CUDA graph, its loops as conditional
 * nodes) "graph on" or "graph off: WHY".
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mica/kit_half.h"

enum { WARMUP = 5, MAX_RUNS = 1000, MAX_INPUTS = 16 };

/* Seeded values in [-1, 1] of dtype t (float32 or float16; int32: 1). */
static void *fill(mica_dtype_t t, int64_t n, uint32_t *seed)
{
    size_t es = mica_dtype_size(t);
    unsigned char *p = malloc((size_t)(n > 0 ? n : 1) * (es ? es : 1));
    int64_t i;

    if (!p) {
        fprintf(stderr, "bench_rnn: out of memory\n");
        exit(1);
    }
    for (i = 0; i < n; i++) {
        float v;
        *seed = *seed * 1664525u + 1013904223u;
        v = (float)(*seed >> 8) / (float)(1u << 23) - 1.0f;
        if (t == MICA_FLOAT32) {
            memcpy(p + 4 * i, &v, 4);
        } else if (t == MICA_FLOAT16) {
            uint16_t h = mica_kit_float_to_half(v);
            memcpy(p + 2 * i, &h, 2);
        } else if (t == MICA_INT32) {
            int32_t one = 1;
            memcpy(p + 4 * i, &one, 4);
        } else {
            memset(p + es * (size_t)i, 0, es);
        }
    }
    return p;
}

static double time_manifest(mica_context_t *ctx, const char *path, int runs,
                            int graphs, int32_t *nb_layers, char *why,
                            size_t len)
{
    mica_manifest_t *m = NULL;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    void *data[MAX_INPUTS];
    double t[MAX_RUNS], ms;
    uint32_t seed = 12345;
    int32_t i, n;
    int r;

    bench_check(ctx, mica_manifest_load(ctx, path, &m), path);
    e = bench_build(ctx, mica_manifest_network(m), MICA_DEVICE_CUDA);
    mica_manifest_destroy(m);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    if (graphs)
        bench_check(ctx, mica_exec_set_cuda_graph(x, 1), "graphs");
    n = mica_engine_nb_inputs(e);
    if (n > MAX_INPUTS) {
        fprintf(stderr, "bench_rnn: %s: more than %d inputs\n", path,
                MAX_INPUTS);
        exit(1);
    }
    for (i = 0; i < n; i++) {
        mica_tensor_info_t info = {.struct_size = sizeof(mica_tensor_info_t)};
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        bench_check(ctx, mica_engine_tensor(e, mica_engine_input(e, i), &info),
                    "input");
        if (mica_dims_volume(&info.dims) < 0) {
            fprintf(stderr, "bench_rnn: %s: input '%s' has a runtime "
                    "dimension; give static shapes\n", path, info.name);
            exit(1);
        }
        data[i] = fill(info.dtype, mica_dims_volume(&info.dims), &seed);
        bench_check(ctx, mica_exec_set_input(x, info.name, &info.dims,
                                             data[i]), info.name);
    }
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (r = -WARMUP; r < runs; r++) {
        double t0 = bench_now();
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        bench_check(ctx, mica_exec_sync(x), "sync");
        if (r >= 0)
            t[r] = bench_now() - t0;
    }
    ms = 1e3 * bench_median(t, runs);
    *nb_layers = mica_engine_nb_layers(e);
    snprintf(why, len, "%s", graphs ? mica_exec_cuda_graph_why(x)
                                        ? mica_exec_cuda_graph_why(x)
                                        : "" : "");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    for (i = 0; i < n; i++)
        free(data[i]);
    return ms;
}

int main(int argc, char **argv)
{
    mica_context_t *ctx;
    int runs = 50, i = 1, graphs = 0;

    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        runs = atoi(argv[2]);
        i = 3;
    }
    if (i < argc && strcmp(argv[i], "-g") == 0) {
        graphs = 1;
        i++;
    }
    if (i >= argc || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_rnn [-n RUNS (1..%d)] [-g] "
                "MANIFEST...\n", MAX_RUNS);
        return 2;
    }
    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench_rnn: no usable GPU\n");
        return 1;
    }
    ctx = bench_context();
    for (; i < argc; i++) {
        int32_t layers = 0;
        char why[512];
        double ms = time_manifest(ctx, argv[i], runs, graphs, &layers, why,
                                  sizeof why);
        printf("%s ms %.4f layers %d", argv[i], ms, (int)layers);
        if (graphs)
            printf(" graph %s%s", why[0] ? "off: " : "on", why);
        printf("\n");
        fflush(stdout);
    }
    mica_context_destroy(ctx);
    return 0;
}
