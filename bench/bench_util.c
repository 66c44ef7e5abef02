/*
 * bench/bench_util.c - see bench_util.h.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <config.h>

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_check(mica_context_t *ctx, mica_status_t st, const char *what)
{
    if (st == MICA_OK)
        return;
    fprintf(stderr, "bench: %s: %s\n", what,
            ctx ? mica_context_error(ctx) : mica_status_name(st));
    exit(1);
}

mica_context_t *bench_context(void)
{
    mica_context_t *ctx = NULL;
    bench_check(NULL, mica_context_create(&ctx), "context");
    bench_check(ctx, mica_context_load_default_modules(ctx), "modules");
    return ctx;
}

mica_network_t *bench_chain(mica_context_t *ctx, const char *type,
                            const char *key, const char *value, int binary,
                            int layers, mica_dtype_t dtype,
                            const mica_dims_t *dims)
{
    mica_network_t *net = NULL;
    char prev[32] = "x", next[32], name[32];
    int i;

    bench_check(ctx, mica_network_create(ctx, &net), "network");
    bench_check(ctx, mica_network_add_input(net, "x", dtype, dims, NULL), "x");
    if (binary)
        bench_check(ctx, mica_network_add_input(net, "y", dtype, dims, NULL),
                    "y");
    for (i = 0; i < layers; i++) {
        const char *in[2], *out[1];
        mica_field_t field;
        mica_fields_t fields;
        mica_layer_spec_t spec;

        snprintf(name, sizeof name, "l%d", i);
        snprintf(next, sizeof next, i == layers - 1 ? "out" : "t%d", i);
        in[0] = prev;
        in[1] = "y";
        out[0] = next;
        field.name = key;
        field.type = MICA_FIELD_STRING;
        field.count = 1;
        field.data = &value;
        fields.nb_fields = 1;
        fields.fields = &field;
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = name;
        spec.type = type;
        spec.nb_inputs = binary ? 2 : 1;
        spec.inputs = in;
        spec.nb_outputs = 1;
        spec.outputs = out;
        spec.fields = &fields;
        bench_check(ctx, mica_network_add_layer(net, &spec), "layer");
        snprintf(prev, sizeof prev, "%s", next);
    }
    bench_check(ctx, mica_network_mark_output(net, "out", NULL), "output");
    return net;
}

mica_engine_t *bench_build(mica_context_t *ctx, mica_network_t *net,
                           uint32_t device)
{
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    bench_check(ctx, mica_engine_build(net, &cfg, &e), "build");
    return e;
}
