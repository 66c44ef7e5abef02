/*
 * bench/bench_pointwise.c - Pointwise layers against memory speed
 * (issues 20 and 22): each workload's bytes (every input read once and
 * every output written once) over its time, next to a copy of as many
 * bytes (memcpy on the CPU, a device-to-device cudaMemcpy on CUDA),
 * counted the same way (what it reads plus what it writes).
 *
 * Workloads, each as the layers one by one (no pointwise pass) and as
 * one Pointwise layer (the pass's, or written by hand for one op):
 *   chain3   y = relu((a + b) * c), float32: issue 20's 3-layer chain;
 *   relu     y = relu(x);
 *   scalar   y = x * s, s one value (broadcast);
 *   bias     y = relu(x + b), x [N, 64, H, W], b [1, 64, 1, 1];
 *   sigmoid  y = sigmoid(x) (a transcendental function per element);
 *   half     y = relu(a + b), float16.
 *
 *   bench_pointwise [--device cpu|cuda] [--elements N] [--only NAME]
 *                   [--cpu-time]
 *
 * Defaults: the CPU, 4M elements (16 MiB per float32 tensor); on CUDA
 * 64M.  Inputs and outputs are bound to the device's memory (no copies
 * timed); each figure is the median of 15 rounds of back-to-back runs
 * of at least 20 ms.  One thread on the CPU unless OMP_NUM_THREADS says
 * otherwise (the Pointwise layer itself uses one).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_util.h"
#include "mica/kit_half.h"

enum { ROUNDS = 15 };

static mica_context_t *ctx;
static uint32_t device = MICA_DEVICE_CPU;
/* --cpu-time: the process's CPU time instead of the wall clock (on a
 * shared machine, what the work itself took) */
static int cpu_time;

static double now(void)
{
    struct timespec ts;
    if (!cpu_time)
        return bench_now();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- memory on the device ------------------------------------------- */

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
#if MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
            fprintf(stderr, "bench: cudaMalloc(%zu) failed\n", bytes);
            exit(1);
        }
        cudaMemset(p, 0, bytes);
        return p;
    }
#endif
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

static void dev_free(void *p)
{
#if MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* Host values (floats in [-1, 1], as halfs for float16) into p. */
static void fill(void *p, mica_dtype_t t, int64_t n)
{
    size_t es = mica_dtype_size(t), bytes = (size_t)n * es;
    unsigned char *h = malloc(bytes);
    uint32_t s = 12345;
    int64_t i;

    for (i = 0; i < n; i++) {
        float v;
        s = s * 1103515245u + 12345u;
        v = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
        if (t == MICA_FLOAT16) {
            uint16_t hv = mica_kit_float_to_half(v);
            memcpy(h + i * 2, &hv, 2);
        } else {
            memcpy(h + i * 4, &v, 4);
        }
    }
#if MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice);
        free(h);
        return;
    }
#endif
    memcpy(p, h, bytes);
    free(h);
}

static void sync_device(void)
{
#if MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA)
        cudaDeviceSynchronize();
#endif
}

/* Seconds per call of fn(arg): median over rounds of k calls. */
static double timed(void (*fn)(void *), void *arg)
{
    double t[ROUNDS], t0, once;
    int k = 1, i, r;

    fn(arg); /* warm */
    sync_device();
    t0 = now();
    fn(arg);
    sync_device();
    once = now() - t0;
    if (once < 0.02)
        k = (int)(0.02 / (once > 1e-7 ? once : 1e-7)) + 1;
    for (r = 0; r < ROUNDS; r++) {
        t0 = now();
        for (i = 0; i < k; i++)
            fn(arg);
        sync_device();
        t[r] = (now() - t0) / k;
    }
    return bench_median(t, ROUNDS);
}

/* ---- the copy ------------------------------------------------------------ */

typedef struct copy {
    void *a, *b;
    size_t bytes;
} copy_t;

static void do_copy(void *arg)
{
    copy_t *c = arg;
#if MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice, 0);
        return;
    }
#endif
    memcpy(c->b, c->a, c->bytes);
}

/* Seconds to copy bytes/2 bytes (bytes of traffic). */
static double copy_time(size_t bytes)
{
    copy_t c;
    double t;
    c.bytes = bytes / 2;
    c.a = dev_alloc(c.bytes);
    c.b = dev_alloc(c.bytes);
    fill(c.a, MICA_FLOAT32, (int64_t)(c.bytes / 4));
    t = timed(do_copy, &c);
    dev_free(c.a);
    dev_free(c.b);
    return t;
}

/* ---- networks ------------------------------------------------------------- */

typedef struct work {
    const char *name;
    mica_dtype_t dtype;
    int nb_in;
    int bias;            /* input 1 is [1, 64, 1, 1] */
    int scalar;          /* input 1 is [1] */
    /* the layers: type, op key and value per layer; inputs per layer
     * (names), output names; the Pointwise program of the same */
    const char *layers[3][6];
    const char *program[4];
} work_t;

static const work_t works[] = {
    {"chain3", MICA_FLOAT32, 3, 0, 0,
     {{"ElementWise", "op", "sum", "a", "b", "t0"},
      {"ElementWise", "op", "prod", "t0", "c", "t1"},
      {"Activation", "type", "relu", "t1", NULL, "y"}},
     {"t0 = sum(in0, in1)", "t1 = prod(t0, in2)", "y = relu(t1)", NULL}},
    {"relu", MICA_FLOAT32, 1, 0, 0,
     {{"Activation", "type", "relu", "a", NULL, "y"}},
     {"y = relu(in0)", NULL}},
    {"scalar", MICA_FLOAT32, 2, 0, 1,
     {{"ElementWise", "op", "prod", "a", "b", "y"}},
     {"y = prod(in0, in1)", NULL}},
    {"bias", MICA_FLOAT32, 2, 1, 0,
     {{"ElementWise", "op", "sum", "a", "b", "t0"},
      {"Activation", "type", "relu", "t0", NULL, "y"}},
     {"t0 = sum(in0, in1)", "y = relu(t0)", NULL}},
    {"sigmoid", MICA_FLOAT32, 1, 0, 0,
     {{"Activation", "type", "sigmoid", "a", NULL, "y"}},
     {"y = sigmoid(in0)", NULL}},
    {"half", MICA_FLOAT16, 2, 0, 0,
     {{"ElementWise", "op", "sum", "a", "b", "t0"},
      {"Activation", "type", "relu", "t0", NULL, "y"}},
     {"t0 = sum(in0, in1)", "y = relu(t0)", NULL}},
};

static const char *const in_names[3] = {"a", "b", "c"};

/* The dims of input k of w over n elements. */
static mica_dims_t dims_of(const work_t *w, int k, int64_t n)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    if (w->bias) { /* a: [1, 64, n / 4096, 64], b: [1, 64, 1, 1] */
        d.nb_dims = 4;
        d.d[0] = 1;
        d.d[1] = 64;
        d.d[2] = k == 1 ? 1 : n / 4096;
        d.d[3] = k == 1 ? 1 : 64;
    } else {
        d.nb_dims = 1;
        d.d[0] = k == 1 && w->scalar ? 1 : n;
    }
    return d;
}

/* mode 0: the layers as written; 1: the pointwise pass on them; 2: one
 * Pointwise layer written by hand. */
static mica_network_t *network(const work_t *w, int64_t n, int mode)
{
    mica_network_t *net = NULL;
    int k, l;

    bench_check(ctx, mica_network_create(ctx, &net), "network");
    for (k = 0; k < w->nb_in; k++) {
        mica_dims_t d = dims_of(w, k, n);
        bench_check(ctx, mica_network_add_input(net, in_names[k], w->dtype,
                                                &d, NULL), "input");
    }
    if (mode == 2) {
        const char *res[1] = {"y"}, *outs[1] = {"y"};
        mica_field_t f[2];
        mica_fields_t fs = {2, f};
        mica_layer_spec_t spec;
        int nl = 0;
        while (w->program[nl])
            nl++;
        f[0].name = "program";
        f[0].type = MICA_FIELD_STRING;
        f[0].count = nl;
        f[0].data = w->program;
        f[1].name = "results";
        f[1].type = MICA_FIELD_STRING;
        f[1].count = 1;
        f[1].data = res;
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = "pw";
        spec.type = "Pointwise";
        spec.nb_inputs = w->nb_in;
        spec.inputs = in_names;
        spec.nb_outputs = 1;
        spec.outputs = outs;
        spec.fields = &fs;
        bench_check(ctx, mica_network_add_layer(net, &spec), "Pointwise");
    } else {
        for (l = 0; l < 3 && w->layers[l][0]; l++) {
            const char *ins[2] = {w->layers[l][3], w->layers[l][4]};
            const char *outs[1] = {w->layers[l][5]};
            const char *v = w->layers[l][2];
            mica_field_t f;
            mica_fields_t fs = {1, &f};
            mica_layer_spec_t spec;
            char name[16];
            snprintf(name, sizeof name, "l%d", l);
            f.name = w->layers[l][1];
            f.type = MICA_FIELD_STRING;
            f.count = 1;
            f.data = &v;
            memset(&spec, 0, sizeof spec);
            spec.struct_size = sizeof spec;
            spec.name = name;
            spec.type = w->layers[l][0];
            spec.nb_inputs = ins[1] ? 2 : 1;
            spec.inputs = ins;
            spec.nb_outputs = 1;
            spec.outputs = outs;
            spec.fields = &fs;
            bench_check(ctx, mica_network_add_layer(net, &spec), "layer");
        }
    }
    bench_check(ctx, mica_network_mark_output(net, "y", NULL), "output");
    return net;
}

static void do_run(void *arg)
{
    bench_check(ctx, mica_exec_enqueue((mica_exec_t *)arg), "enqueue");
#if MICA_HAVE_CUDA
    if (device != MICA_DEVICE_CUDA)
#endif
        bench_check(ctx, mica_exec_sync((mica_exec_t *)arg), "sync");
}

/* Seconds per run of w in `mode`; *nl the engine's layers. */
static double run_time(const work_t *w, int64_t n, int mode, int *nl)
{
    mica_network_t *net = network(w, n, mode);
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    void *mem[4];
    double t;
    int k;

    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    cfg.no_passes = mode == 1 ? NULL : "all";
    bench_check(ctx, mica_engine_build(net, &cfg, &e), "build");
    *nl = mica_engine_nb_layers(e);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    for (k = 0; k < w->nb_in; k++) {
        mica_dims_t d = dims_of(w, k, n);
        int64_t v = 1;
        int j;
        for (j = 0; j < d.nb_dims; j++)
            v *= d.d[j];
        mem[k] = dev_alloc((size_t)v * mica_dtype_size(w->dtype));
        fill(mem[k], w->dtype, v);
        bench_check(ctx, mica_exec_bind(x, in_names[k], &d, mem[k]), "bind");
    }
    mem[3] = dev_alloc((size_t)n * mica_dtype_size(w->dtype));
    bench_check(ctx, mica_exec_bind(x, "y", NULL, mem[3]), "bind y");
    t = timed(do_run, x);
    mica_exec_destroy(x);
    for (k = 0; k < w->nb_in; k++)
        dev_free(mem[k]);
    dev_free(mem[3]);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return t;
}

/* Bytes a run of w moves: full inputs read, the output written (a
 * broadcast input counts its own size). */
static size_t traffic(const work_t *w, int64_t n)
{
    size_t b = (size_t)n * mica_dtype_size(w->dtype);
    int k;
    for (k = 0; k < w->nb_in; k++) {
        mica_dims_t d = dims_of(w, k, n);
        int64_t v = 1;
        int j;
        for (j = 0; j < d.nb_dims; j++)
            v *= d.d[j];
        b += (size_t)v * mica_dtype_size(w->dtype);
    }
    return b;
}

int main(int argc, char **argv)
{
    int64_t n = 0;
    const char *only = NULL;
    size_t i;
    int a;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--device") && a + 1 < argc) {
            a++;
            device = !strcmp(argv[a], "cuda") ? MICA_DEVICE_CUDA
                                              : MICA_DEVICE_CPU;
        } else if (!strcmp(argv[a], "--elements") && a + 1 < argc) {
            n = strtoll(argv[++a], NULL, 10);
        } else if (!strcmp(argv[a], "--cpu-time")) {
            cpu_time = 1;
        } else if (!strcmp(argv[a], "--only") && a + 1 < argc) {
            only = argv[++a];
        } else {
            fprintf(stderr, "usage: bench_pointwise [--device cpu|cuda] "
                    "[--elements N] [--only NAME] [--cpu-time]\n");
            return 2;
        }
    }
#if !MICA_HAVE_CUDA
    if (device == MICA_DEVICE_CUDA) {
        fprintf(stderr, "bench_pointwise: built without CUDA\n");
        return 2;
    }
#endif
    if (n <= 0)
        n = device == MICA_DEVICE_CUDA ? (int64_t)1 << 26 : (int64_t)1 << 22;
    n = n / 4096 * 4096; /* the bias workload's [1, 64, n/4096, 64] */
    ctx = bench_context();
    printf("# %s, %lld elements per full tensor; GB/s = (bytes read + "
           "written) / time; copy: %s of half the bytes\n",
           device == MICA_DEVICE_CUDA ? "cuda" : "cpu", (long long)n,
           device == MICA_DEVICE_CUDA ? "cudaMemcpy D2D" : "memcpy");
    printf("%-8s %10s %8s %8s %9s %8s %9s %8s %7s %7s\n", "workload",
           "MB moved", "copy", "layers", "(layers)", "pass", "(layers)",
           "hand", "pass/cp", "hand/cp");
    for (i = 0; i < sizeof works / sizeof works[0]; i++) {
        const work_t *w = &works[i];
        size_t bytes = traffic(w, n);
        double tc, t0, t1, t2;
        int l0, l1, l2;
        if (only && strcmp(only, w->name))
            continue;
        tc = copy_time(bytes);
        t0 = run_time(w, n, 0, &l0);
        t1 = run_time(w, n, 1, &l1);
        t2 = run_time(w, n, 2, &l2);
        printf("%-8s %10.1f %8.1f %8.1f %9d %8.1f %9d %8.1f %6.0f%% "
               "%6.0f%%\n", w->name, (double)bytes / 1e6,
               (double)bytes / tc / 1e9, (double)bytes / t0 / 1e9, l0,
               (double)bytes / t1 / 1e9, l1, (double)bytes / t2 / 1e9,
               100.0 * tc / t1, 100.0 * tc / t2);
        fflush(stdout);
    }
    mica_context_destroy(ctx);
    return 0;
}
