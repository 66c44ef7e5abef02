/*
 * bench/bench_shapes.c - the host cost of changing input shapes between
 * runs within one optimization profile: a 50-layer chain over [N, 256]
 * float32 with N in 1..64.  Times set_input + infer_shapes (phase 1:
 * profile check, every dimension re-evaluated, descriptors refreshed)
 * alternating between shapes, and checks that the device's free memory
 * does not move, i.e. that no device allocation happens.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_util.h"

enum { LAYERS = 50, REPS = 400 };

static size_t device_free(uint32_t device)
{
#ifdef MICA_HAVE_CUDA
    size_t free_b = 0, total = 0;
    if (device == MICA_DEVICE_CUDA && cudaMemGetInfo(&free_b, &total) == cudaSuccess)
        return free_b;
#endif
    (void)device;
    return 0;
}

static void run(mica_context_t *ctx, uint32_t device, const char *name)
{
    mica_network_t *net;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    mica_dims_t d, lo, opt, hi;
    float *host = calloc(64 * 256, sizeof *host);
    double t_change[REPS], t_same[REPS];
    size_t free0, free1;
    int32_t k;
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = -1;
    d.d[1] = 256;
    lo = opt = hi = d;
    lo.d[0] = 1;
    opt.d[0] = 32;
    hi.d[0] = 64;
    net = bench_chain(ctx, "Activation", "type", "relu", 0, LAYERS,
                      MICA_FLOAT32, &d);
    bench_check(ctx, mica_network_add_profile(net, &k), "profile");
    bench_check(ctx, mica_network_set_profile_dims(net, k, "x", &lo, &opt, &hi,
                                                   NULL), "profile dims");
    e = bench_build(ctx, net, device);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    d.d[0] = 64;
    bench_check(ctx, mica_exec_set_input(x, "x", &d, host), "x");
    bench_check(ctx, mica_exec_run(x), "run");
    free0 = device_free(device);
    for (i = -20; i < REPS; i++) {
        double t0;
        d.d[0] = 1 + (i + 40) % 64; /* a new batch size every time */
        t0 = bench_now();
        bench_check(ctx, mica_exec_set_input(x, "x", &d, host), "x");
        bench_check(ctx, mica_exec_infer_shapes(x), "shapes");
        if (i >= 0)
            t_change[i] = bench_now() - t0;
        bench_check(ctx, mica_exec_run(x), "run");
        t0 = bench_now();
        bench_check(ctx, mica_exec_set_input(x, "x", &d, host), "x");
        bench_check(ctx, mica_exec_infer_shapes(x), "shapes");
        if (i >= 0)
            t_same[i] = bench_now() - t0;
    }
    free1 = device_free(device);
    printf("%-6s %22.2f %22.2f %20s\n", name, 1e6 * bench_median(t_change, REPS),
           1e6 * bench_median(t_same, REPS),
           device != MICA_DEVICE_CUDA ? "n/a"
           : free0 == free1           ? "0 bytes"
                                      : "CHANGED");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    free(host);
}

int main(void)
{
    mica_context_t *ctx = bench_context();
    printf("%d-layer Activation chain over [N, 256] float32, N in 1..64, "
           "median of %d shape changes\n", LAYERS, REPS);
    printf("%-6s %22s %22s %20s\n", "device", "new shape: host us",
           "same shape: host us", "device memory moved");
    run(ctx, MICA_DEVICE_CPU, "cpu");
    if (mica_device_usable(MICA_DEVICE_CUDA))
        run(ctx, MICA_DEVICE_CUDA, "cuda");
    mica_context_destroy(ctx);
    return 0;
}
