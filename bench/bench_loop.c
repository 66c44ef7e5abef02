/*
 * bench/bench_loop.c - the cost of a loop: 1000 trips of a small body
 * (ElementWise prod, ElementWise sum, Activation relu on 1024 float32,
 * the state carried by a Recurrence) against the same three layers run
 * 1000 times as a plain network, enqueued back to back.  The difference
 * per trip is what the loop adds beyond the body's kernels: the
 * Recurrence's update, the interpreter, the trip count's one read-back.
 * On CUDA a second row turns CUDA graphs on for both contexts: the body
 * alone is then replayed as a graph each run, while the loop runs layer
 * by layer (its trip count is read on the host; the reason is printed).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

enum { N = 1024, TRIPS = 1000, REPS = 20 };

static const char *loop_yaml =
    "mica: 1\n"
    "inputs:\n"
    "  x: {dtype: float32, shape: [1024]}\n"
    "  a: {dtype: float32, shape: [1024]}\n"
    "  b: {dtype: float32, shape: [1024]}\n"
    "  n: {dtype: int32, shape: []}\n"
    "layers:\n"
    "  - {name: trip, type: TripLimit, loop: L, inputs: [n]}\n"
    "  - {name: state, type: Recurrence, loop: L, inputs: [x, next], "
    "outputs: [cur]}\n"
    "  - {name: mul, type: ElementWise, inputs: [cur, a], outputs: [m], "
    "params: {op: prod}}\n"
    "  - {name: add, type: ElementWise, inputs: [m, b], outputs: [s], "
    "params: {op: sum}}\n"
    "  - {name: relu, type: Activation, inputs: [s], outputs: [next], "
    "params: {type: relu}}\n"
    "  - {name: last, type: LoopOutput, loop: L, inputs: [cur], "
    "outputs: [y]}\n"
    "outputs: [y]\n";

/* The body alone, as a plain network. */
static const char *body_yaml =
    "mica: 1\n"
    "inputs:\n"
    "  cur: {dtype: float32, shape: [1024]}\n"
    "  a: {dtype: float32, shape: [1024]}\n"
    "  b: {dtype: float32, shape: [1024]}\n"
    "layers:\n"
    "  - {name: mul, type: ElementWise, inputs: [cur, a], outputs: [m], "
    "params: {op: prod}}\n"
    "  - {name: add, type: ElementWise, inputs: [m, b], outputs: [s], "
    "params: {op: sum}}\n"
    "  - {name: relu, type: Activation, inputs: [s], outputs: [y], "
    "params: {type: relu}}\n"
    "outputs: [y]\n";

static mica_engine_t *build(mica_context_t *ctx, const char *text,
                            uint32_t device)
{
    char path[] = "/tmp/mica-bench-loop-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    mica_manifest_t *m = NULL;
    mica_engine_t *e;

    if (!f) {
        fprintf(stderr, "bench_loop: cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    bench_check(ctx, mica_manifest_load(ctx, path, &m), path);
    unlink(path);
    e = bench_build(ctx, mica_manifest_network(m), device);
    mica_manifest_destroy(m);
    return e;
}

static void inputs(mica_context_t *ctx, mica_exec_t *x, const char *first,
                   const float *v, const float *a, const float *b)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = N;
    bench_check(ctx, mica_exec_set_input(x, first, &d, v), first);
    bench_check(ctx, mica_exec_set_input(x, "a", &d, a), "a");
    bench_check(ctx, mica_exec_set_input(x, "b", &d, b), "b");
}

static void run(mica_context_t *ctx, uint32_t device, const char *name,
                int graphs)
{
    static float v[N], a[N], b[N];
    mica_engine_t *le = build(ctx, loop_yaml, device);
    mica_engine_t *be = build(ctx, body_yaml, device);
    mica_exec_t *lx = NULL, *bx = NULL;
    mica_dims_t d0;
    int32_t trips = TRIPS;
    double t_loop[REPS], t_body[REPS], loop, body;
    int i, r;

    for (i = 0; i < N; i++) {
        v[i] = (float)(i % 17);
        a[i] = 0.5f;
        b[i] = 1.0f;
    }
    memset(&d0, 0, sizeof d0);
    bench_check(ctx, mica_exec_create(le, &lx), "exec");
    bench_check(ctx, mica_exec_create(be, &bx), "exec");
    if (graphs) {
        bench_check(ctx, mica_exec_set_cuda_graph(lx, 1), "graphs");
        bench_check(ctx, mica_exec_set_cuda_graph(bx, 1), "graphs");
    }
    inputs(ctx, lx, "x", v, a, b);
    bench_check(ctx, mica_exec_set_input(lx, "n", &d0, &trips), "n");
    inputs(ctx, bx, "cur", v, a, b);
    bench_check(ctx, mica_exec_upload(lx), "upload");
    bench_check(ctx, mica_exec_upload(bx), "upload");
    for (r = -3; r < REPS; r++) {
        double t0 = bench_now();
        bench_check(ctx, mica_exec_enqueue(lx), "loop");
        bench_check(ctx, mica_exec_sync(lx), "sync");
        if (r >= 0)
            t_loop[r] = bench_now() - t0;
        t0 = bench_now();
        for (i = 0; i < TRIPS; i++)
            bench_check(ctx, mica_exec_enqueue(bx), "body");
        bench_check(ctx, mica_exec_sync(bx), "sync");
        if (r >= 0)
            t_body[r] = bench_now() - t0;
    }
    loop = 1e6 * bench_median(t_loop, REPS) / TRIPS;
    body = 1e6 * bench_median(t_body, REPS) / TRIPS;
    printf("%-10s %16.2f %18.2f %20.2f\n", name, loop, body, loop - body);
    if (graphs)
        printf("%-10s (loop: %s; body: %s)\n", "",
               mica_exec_cuda_graph_why(lx) ? mica_exec_cuda_graph_why(lx)
                                            : "graph",
               mica_exec_cuda_graph_why(bx) ? mica_exec_cuda_graph_why(bx)
                                            : "graph");
    mica_exec_destroy(lx);
    mica_exec_destroy(bx);
    mica_engine_destroy(le);
    mica_engine_destroy(be);
}

int main(void)
{
    mica_context_t *ctx = bench_context();
    printf("loop of %d trips over 3 layers on %d float32, median of %d "
           "runs\n", TRIPS, N, REPS);
    printf("%-10s %16s %18s %20s\n", "device", "loop us/trip",
           "body alone us/run", "loop overhead us/trip");
    run(ctx, MICA_DEVICE_CPU, "cpu", 0);
    if (mica_device_usable(MICA_DEVICE_CUDA)) {
        run(ctx, MICA_DEVICE_CUDA, "cuda", 0);
        run(ctx, MICA_DEVICE_CUDA, "cuda-graph", 1);
    }
    mica_context_destroy(ctx);
    return 0;
}
