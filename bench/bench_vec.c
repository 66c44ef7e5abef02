/*
 * bench/bench_vec.c - the CPU's element kernels against memcpy: one layer
 * of each kind on float32 tensors of N elements (default 4M, argument 1),
 * its inputs and output bound (no copies around the run), timed as the
 * median of repeated enqueues, on T threads (argument 2, default 1:
 * mica_exec_set_threads).  Each row gives the layer's traffic (bytes read
 * plus written) per second and the ratio to memcpy moving the same
 * traffic (a copy of half those bytes), each repetition timing the layer
 * then the copy (medians of both), so that a shared machine's load
 * falls on both alike.
 *
 *     bench/bench_vec [N] [THREADS] [IMPL]
 *
 * IMPL pins an implementation (default: the builder's choice, `vec`;
 * `reference` for the oracle's speed).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { REPS = 41 };

typedef struct kernel {
    const char *label, *type, *key, *value;
    int nb_in;
    int bcast; /* input 1 is [1, C, 1, 1] (a channel) */
} kernel_t;

static const kernel_t kernels[] = {
    {"ElementWise sum", "ElementWise", "op", "sum", 2, 0},
    {"ElementWise prod, per channel", "ElementWise", "op", "prod", 2, 1},
    {"ElementWise max", "ElementWise", "op", "max", 2, 0},
    {"ElementWise div", "ElementWise", "op", "div", 2, 0},
    {"ElementWise less (bool out)", "ElementWise", "op", "less", 2, 0},
    {"Activation relu", "Activation", "type", "relu", 1, 0},
    {"Activation leaky_relu", "Activation", "type", "leaky_relu", 1, 0},
    {"Activation clip", "Activation", "type", "clip", 1, 0},
    {"Activation hard_sigmoid", "Activation", "type", "hard_sigmoid", 1, 0},
    {"Activation sigmoid", "Activation", "type", "sigmoid", 1, 0},
    {"Activation tanh", "Activation", "type", "tanh", 1, 0},
    {"Unary abs", "Unary", "op", "abs", 1, 0},
    {"Unary exp", "Unary", "op", "exp", 1, 0},
    {"Unary floor", "Unary", "op", "floor", 1, 0},
    {"ParametricReLU, per channel", "ParametricReLU", NULL, NULL, 2, 1},
    {"Identity cast to float16", "Identity", "dtype", "float16", 1, 0},
};

static mica_engine_t *build(mica_context_t *ctx, const kernel_t *k,
                            const mica_dims_t *x, const mica_dims_t *y,
                            const char *impl)
{
    mica_network_t *net = NULL;
    const char *in[2] = {"x", "y"}, *out[1] = {"out"};
    mica_field_t field;
    mica_fields_t fields;
    mica_layer_spec_t spec;

    bench_check(ctx, mica_network_create(ctx, &net), "network");
    bench_check(ctx, mica_network_add_input(net, "x", MICA_FLOAT32, x, NULL),
                "x");
    if (k->nb_in == 2)
        bench_check(ctx, mica_network_add_input(net, "y", MICA_FLOAT32, y,
                                                NULL), "y");
    field.name = k->key;
    field.type = MICA_FIELD_STRING;
    field.count = 1;
    field.data = &k->value;
    fields.nb_fields = k->key ? 1 : 0;
    fields.fields = &field;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "l";
    spec.type = k->type;
    spec.implementation = impl;
    spec.nb_inputs = k->nb_in;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    spec.fields = &fields;
    bench_check(ctx, mica_network_add_layer(net, &spec), k->label);
    bench_check(ctx, mica_network_mark_output(net, "out", NULL), "out");
    return bench_build(ctx, net, MICA_DEVICE_CPU);
}

static double memcpy_time(size_t bytes, char *a, char *b)
{
    double t0 = bench_now();
    memcpy(b, a, bytes);
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 4 << 20, c = 64;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    const char *impl = argc > 3 ? argv[3] : NULL;
    mica_context_t *ctx = bench_context();
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    float *o = malloc((size_t)n * 4), *big = malloc((size_t)n * 12);
    size_t i, k;

    if (!x || !y || !o || !big || n < c || n % c) {
        fprintf(stderr, "bench_vec: N must be a multiple of 64\n");
        return 1;
    }
    for (i = 0; i < (size_t)n; i++) {
        x[i] = (float)((int64_t)(i * 7919 % 2001) - 1000) / 100.0f;
        y[i] = (float)((int64_t)(i * 104729 % 1999) - 999) / 300.0f + 0.01f;
    }
    memset(big, 1, (size_t)n * 12);
    printf("# %lld float32 elements, %d thread%s, implementation %s\n",
           (long long)n, threads, threads > 1 ? "s" : "",
           impl ? impl : "(default)");
    printf("%-32s %10s %10s %8s\n", "kernel", "GB/s", "memcpy", "ratio");
    for (k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        const kernel_t *kk = &kernels[k];
        mica_dims_t dx = {4, 0, {1, c, n / c / 8, 8}}, dy = dx;
        mica_engine_t *e;
        mica_exec_t *ex;
        double t[REPS], tc[REPS], tm, bytes;
        int r;

        if (kk->bcast) {
            dy.d[2] = 1;
            dy.d[3] = 1;
        }
        e = build(ctx, kk, &dx, &dy, impl);
        bench_check(ctx, mica_exec_create(e, &ex), "exec");
        bench_check(ctx, mica_exec_set_threads(ex, threads), "threads");
        bench_check(ctx, mica_exec_bind(ex, "x", &dx, x), "bind x");
        if (kk->nb_in == 2)
            bench_check(ctx, mica_exec_bind(ex, "y", &dy, y), "bind y");
        bench_check(ctx, mica_exec_infer_shapes(ex), "shapes");
        bench_check(ctx, mica_exec_bind(ex, "out", NULL, o), "bind out");
        bench_check(ctx, mica_exec_enqueue(ex), "warm-up");
        bench_check(ctx, mica_exec_sync(ex), "warm-up");
        /* bytes read plus written */
        bytes = 4.0 * (double)n * (kk->nb_in == 2 && !kk->bcast ? 2 : 1);
        bytes += !strcmp(kk->value ? kk->value : "", "less") ? (double)n
                 : !strcmp(kk->value ? kk->value : "", "float16")
                     ? 2.0 * (double)n
                     : 4.0 * (double)n;
        /* the layer and memcpy of the same traffic, one after the other
         * in each repetition (the machine may be shared) */
        for (r = 0; r < REPS; r++) {
            double t0 = bench_now();
            mica_exec_enqueue(ex);
            mica_exec_sync(ex);
            t[r] = bench_now() - t0;
            tc[r] = memcpy_time((size_t)(bytes / 2), (char *)big,
                                (char *)big + (size_t)n * 6);
        }
        tm = bench_median(tc, REPS);
        t[0] = bench_median(t, REPS);
        printf("%-32s %10.2f %10.2f %7.0f%%\n", kk->label, bytes / t[0] / 1e9,
               bytes / tm / 1e9, 100.0 * tm / t[0]);
        fflush(stdout);
        mica_exec_destroy(ex);
        mica_engine_destroy(e);
    }
    free(x);
    free(y);
    free(o);
    free(big);
    mica_context_destroy(ctx);
    return 0;
}
