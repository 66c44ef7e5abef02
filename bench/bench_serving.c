/*
 * bench/bench_serving.c - a model served in-process: T client threads,
 * each with its own context, engine (loaded from one set of engine bytes,
 * weights shared) and execution context, each running one request after
 * another (set_input, run, get_output) on the rows of an input file.
 * The figures sit next to the same model behind Triton
 * (bench/triton_bench.py runs both), so the serving overhead shows.
 *
 *   bench_serving MANIFEST X.npy [THREADS...]    (default 1 8 32)
 *
 * One request is one row of X.npy ([1, IN]); rows are taken in turn.
 * Each thread count runs $BENCH_SECONDS (default 5) after a warm-up of
 * 100 requests per thread; the line printed per thread count gives
 * requests per second and the median and 99th percentile latency.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <config.h>

#include "bench_util.h"
#include "npy.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256
#define MAX_SAMPLES (1 << 20)

static const void *bytes;
static size_t nbytes;
static char *in_name, *out_name;
static mica__npy_t x;
static double seconds = 5;

typedef struct worker {
    pthread_t thread;
    int index;
    double *lat;       /* seconds per request */
    int n;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    mica_context_t *ctx = bench_context();
    mica_engine_t *e = NULL;
    mica_exec_t *exec = NULL;
    size_t row = x.bytes / (size_t)x.dims.d[0];
    mica_dims_t dims = x.dims;
    mica_tensor_desc_t desc;
    const void *out;
    double end = 0, t0;
    int64_t k = w->index;
    int warm = 100;

    bench_check(ctx, mica_engine_deserialize_borrow(ctx, bytes, nbytes, &e),
                "load");
    bench_check(ctx, mica_exec_create(e, &exec), "exec");
    dims.d[0] = 1;
    while (w->n < MAX_SAMPLES) {
        const char *src = (const char *)x.data +
                          (size_t)(k++ % x.dims.d[0]) * row;
        t0 = bench_now();
        bench_check(ctx, mica_exec_set_input(exec, in_name, &dims, src),
                    "set_input");
        bench_check(ctx, mica_exec_run(exec), "run");
        bench_check(ctx, mica_exec_get_output(exec, out_name, &desc, &out),
                    "output");
        if (warm > 0) {
            if (--warm == 0)
                end = bench_now() + seconds;
            continue;
        }
        w->lat[w->n++] = bench_now() - t0;
        if (bench_now() >= end)
            break;
    }
    mica_exec_destroy(exec);
    mica_engine_destroy(e);
    mica_context_destroy(ctx);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double p = *(const double *)a, q = *(const double *)b;
    return (p > q) - (p < q);
}

static void run(int threads)
{
    worker_t *w = calloc((size_t)threads, sizeof *w);
    double *all, t0, wall;
    int i, n = 0;

    if (!w)
        exit(1);
    t0 = bench_now();
    for (i = 0; i < threads; i++) {
        w[i].index = i;
        if (!(w[i].lat = malloc(MAX_SAMPLES * sizeof(double))))
            exit(1);
        pthread_create(&w[i].thread, NULL, work, &w[i]);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(w[i].thread, NULL);
        n += w[i].n;
    }
    wall = bench_now() - t0;
    if (!(all = malloc((size_t)n * sizeof *all)))
        exit(1);
    for (n = 0, i = 0; i < threads; i++) {
        memcpy(all + n, w[i].lat, (size_t)w[i].n * sizeof *all);
        n += w[i].n;
        free(w[i].lat);
    }
    qsort(all, (size_t)n, sizeof *all, cmp);
    /* Requests over the measured window (the warm-up excluded per thread,
     * so the window is the wall time less the shortest warm-up: close
     * enough at 5 s against a few ms). */
    printf("in-process  threads %3d  %9.0f req/s  p50 %8.1f us  p99 %8.1f "
           "us  (%d requests, %.1f s)\n", threads,
           n / (wall < seconds ? wall : seconds), 1e6 * all[n / 2],
           1e6 * all[(size_t)((double)n * 0.99)], n, wall);
    fflush(stdout);
    free(all);
    free(w);
}

int main(int argc, char **argv)
{
    static const int defaults[] = {1, 8, 32};
    mica_context_t *ctx;
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_tensor_info_t info;
    void *data = NULL;
    char err[256];
    const char *env = getenv("BENCH_SECONDS");
    int i;

    if (argc < 3) {
        fprintf(stderr, "usage: bench_serving MANIFEST X.npy [THREADS...]\n");
        return 2;
    }
    if (env && atof(env) > 0)
        seconds = atof(env);
    if (mica__npy_read(argv[2], &x, err, sizeof err) != MICA_OK) {
        fprintf(stderr, "bench: %s\n", err);
        return 1;
    }
    if (x.dims.nb_dims != 2 || x.dims.d[0] < 1) {
        fprintf(stderr, "bench: %s: want rows [N, IN]\n", argv[2]);
        return 1;
    }
    ctx = bench_context();
    bench_check(ctx, mica_manifest_load(ctx, argv[1], &m), "manifest");
    bench_check(ctx, mica_engine_build(mica_manifest_network(m),
                                       mica_manifest_config(m), &e), "build");
    bench_check(ctx, mica_engine_serialize(e, &data, &nbytes), "serialize");
    bytes = data;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    mica_engine_tensor(e, mica_engine_input(e, 0), &info);
    in_name = strdup(info.name);
    mica_engine_tensor(e, mica_engine_output(e, 0), &info);
    out_name = strdup(info.name);
    printf("bench_serving: %s, input %s [1, %lld] per request, output %s, "
           "%s\n", argv[1], in_name, (long long)x.dims.d[1], out_name,
           mica_engine_device(e) == MICA_DEVICE_CUDA ? "cuda" : "cpu");
    if (argc == 3)
        for (i = 0; i < 3; i++)
            run(defaults[i]);
    for (i = 3; i < argc; i++) {
        int t = atoi(argv[i]);
        if (t < 1 || t > MAX_THREADS) {
            fprintf(stderr, "bench: %s threads: 1 to %d\n", argv[i],
                    MAX_THREADS);
            return 2;
        }
        run(t);
    }
    mica_engine_destroy(e);
    mica_manifest_destroy(m);
    mica_free(data);
    mica_context_destroy(ctx);
    mica__npy_free(&x);
    free(in_name);
    free(out_name);
    return 0;
}
