/*
 * bench/bench_overhead.c - the executor's host overhead per layer: a
 * chain of 100 Activation layers over 16 float32 elements, so that the
 * work itself is negligible.  Reports, per layer, the host time of
 * enqueue alone and of enqueue plus synchronization, on every usable
 * device, and on CUDA again with the enqueue replayed as a CUDA graph
 * (mica_exec_set_cuda_graph; the warm-up runs capture it).  On CUDA
 * the floor comes last: the host time of one launch of an empty kernel
 * through the runtime (on its own stream and on one it did not make, as
 * a module's static runtime sees the context's) and through the driver
 * (launch_floor.cu), what a layer costs at least without graphs.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "bench_util.h"

enum { LAYERS = 100, REPS = 200 };

static void run(mica_context_t *ctx, uint32_t device, const char *name,
                int graphs)
{
    mica_dims_t d;
    float host[16];
    mica_network_t *net;
    mica_engine_t *e;
    mica_exec_t *x = NULL;
    double t_enq[REPS], t_all[REPS];
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = 16;
    for (i = 0; i < 16; i++)
        host[i] = (float)i - 8.0f;
    net = bench_chain(ctx, "Activation", "type", "relu", 0, LAYERS,
                      MICA_FLOAT32, &d);
    e = bench_build(ctx, net, device);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    if (graphs)
        bench_check(ctx, mica_exec_set_cuda_graph(x, 1), "graphs");
    bench_check(ctx, mica_exec_set_input(x, "x", &d, host), "x");
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (i = -20; i < REPS; i++) {
        double t0 = bench_now(), t1;
        bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        t1 = bench_now();
        bench_check(ctx, mica_exec_sync(x), "sync");
        if (i >= 0) {
            t_enq[i] = t1 - t0;
            t_all[i] = bench_now() - t0;
        }
    }
    printf("%-10s %18.3f %22.3f\n", name,
           1e6 * bench_median(t_enq, REPS) / LAYERS,
           1e6 * bench_median(t_all, REPS) / LAYERS);
    if (graphs && mica_exec_cuda_graph_why(x))
        printf("%-10s (graphs not used: %s)\n", "",
               mica_exec_cuda_graph_why(x));
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
}

#ifdef MICA_HAVE_CUDA
int mica_bench_launch_floor(int reps, double *runtime_us, double *foreign_us,
                            double *driver_us);
#endif

int main(void)
{
    mica_context_t *ctx = bench_context();
    printf("chain of %d Activation layers over 16 float32, median of %d runs\n",
           LAYERS, REPS);
    printf("%-10s %18s %22s\n", "device", "enqueue us/layer",
           "enqueue+sync us/layer");
    run(ctx, MICA_DEVICE_CPU, "cpu", 0);
    if (mica_device_usable(MICA_DEVICE_CUDA)) {
        run(ctx, MICA_DEVICE_CUDA, "cuda", 0);
        run(ctx, MICA_DEVICE_CUDA, "cuda-graph", 1);
#ifdef MICA_HAVE_CUDA
        {
            double rt = -1, fs = -1, drv = -1;
            if (mica_bench_launch_floor(REPS, &rt, &fs, &drv) == 0)
                printf("floor: one empty kernel launch, host us (batches of "
                       "100): runtime (<<<>>> + cudaGetLastError) %.3f, the "
                       "same on a stream the driver made %.3f, driver "
                       "(cuLaunchKernel) %.3f\n", rt, fs, drv);
        }
#endif
    }
    mica_context_destroy(ctx);
    return 0;
}
