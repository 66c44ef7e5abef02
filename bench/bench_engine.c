/*
 * bench/bench_engine.c - building, saving and loading an engine of 100
 * layers and 100 MB of weights: 50 Constant layers of 2 MB each, each
 * added to a running sum by an ElementWise layer.  Reports, median of a
 * few runs, the time to build from a network, to serialize, to read the
 * file, and to load from the bytes (deserialize: checks, layer states,
 * the build).  Issue 5 asks for a load under 50 ms plus the read, and a
 * build under 100 ms.  The first round of each device is reported apart
 * (cold: the process's first touches of 100 MB of fresh memory); the
 * figures are the median of the rounds after it.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { PAIRS = 50, N = 512 * 1024, REPS = 5 };

static mica_network_t *network(mica_context_t *ctx, float *w)
{
    mica_network_t *net = NULL;
    mica_dims_t d;
    char prev[32] = "x", cname[32], sname[32], lname[32];
    int i;

    memset(&d, 0, sizeof d);
    d.nb_dims = 1;
    d.d[0] = N;
    bench_check(ctx, mica_network_create(ctx, &net), "network");
    bench_check(ctx, mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL),
                "x");
    for (i = 0; i < PAIRS; i++) {
        mica_weights_t wt;
        mica_field_t f;
        mica_fields_t fields = {1, &f};
        const char *op = "sum", *ins[2], *outs[1];
        mica_field_t of;
        mica_fields_t ofields = {1, &of};
        mica_layer_spec_t spec;

        memset(&wt, 0, sizeof wt);
        wt.dtype = MICA_FLOAT32;
        wt.count = N;
        wt.values = w + (size_t)i * N;
        wt.dims = d;
        f.name = "weights";
        f.type = MICA_FIELD_WEIGHTS;
        f.count = 1;
        f.data = &wt;
        snprintf(cname, sizeof cname, "c%d", i);
        snprintf(lname, sizeof lname, "const%d", i);
        outs[0] = cname;
        memset(&spec, 0, sizeof spec);
        spec.struct_size = sizeof spec;
        spec.name = lname;
        spec.type = "Constant";
        spec.nb_outputs = 1;
        spec.outputs = outs;
        spec.fields = &fields;
        bench_check(ctx, mica_network_add_layer(net, &spec), "constant");
        of.name = "op";
        of.type = MICA_FIELD_STRING;
        of.count = 1;
        of.data = &op;
        snprintf(sname, sizeof sname, i == PAIRS - 1 ? "y" : "s%d", i);
        snprintf(lname, sizeof lname, "add%d", i);
        ins[0] = prev;
        ins[1] = cname;
        outs[0] = sname;
        spec.name = lname;
        spec.type = "ElementWise";
        spec.nb_inputs = 2;
        spec.inputs = ins;
        spec.outputs = outs;
        spec.fields = &ofields;
        bench_check(ctx, mica_network_add_layer(net, &spec), "add");
        snprintf(prev, sizeof prev, "%s", sname);
    }
    bench_check(ctx, mica_network_mark_output(net, "y", NULL), "output");
    return net;
}

static void run(mica_context_t *ctx, uint32_t device, const char *name,
                float *w)
{
    double t_build[REPS + 1], t_ser[REPS + 1], t_read[REPS + 1];
    double t_load[REPS + 1], cold_build = 0, cold_load = 0;
    char path[256];
    int r;

    snprintf(path, sizeof path, "%s/bench-engine-%s.mica",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    for (r = 0; r <= REPS; r++) {
        mica_network_t *net = network(ctx, w);
        mica_engine_t *e, *back = NULL;
        void *data = NULL;
        size_t size = 0;
        unsigned char *file;
        FILE *f;
        double t0 = bench_now();

        e = bench_build(ctx, net, device);
        t_build[r] = bench_now() - t0;
        t0 = bench_now();
        bench_check(ctx, mica_engine_serialize(e, &data, &size), "serialize");
        t_ser[r] = bench_now() - t0;
        f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
            fprintf(stderr, "bench: cannot write %s\n", path);
            exit(1);
        }
        file = malloc(size);
        t0 = bench_now();
        f = fopen(path, "rb");
        if (!f || !file || fread(file, 1, size, f) != size) {
            fprintf(stderr, "bench: cannot read %s\n", path);
            exit(1);
        }
        fclose(f);
        t_read[r] = bench_now() - t0;
        t0 = bench_now();
        bench_check(ctx, mica_engine_deserialize(ctx, file, size, &back),
                    "deserialize");
        t_load[r] = bench_now() - t0;
        if (r == 1)
            printf("%-6s engine file: %.1f MB, %d layers\n", name,
                   (double)size / 1e6, mica_engine_nb_layers(back));
        free(file);
        mica_free(data);
        mica_engine_destroy(back);
        mica_engine_destroy(e);
        mica_network_destroy(net);
    }
    remove(path);
    cold_build = t_build[0];
    cold_load = t_load[0];
    printf("%-6s %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f\n", name,
           1e3 * bench_median(t_build + 1, REPS),
           1e3 * bench_median(t_ser + 1, REPS),
           1e3 * bench_median(t_read + 1, REPS),
           1e3 * bench_median(t_load + 1, REPS), 1e3 * cold_build,
           1e3 * cold_load);
}

int main(void)
{
    mica_context_t *ctx = bench_context();
    float *w = malloc(sizeof *w * (size_t)PAIRS * N);
    size_t i;

    if (!w)
        return 1;
    for (i = 0; i < (size_t)PAIRS * N; i++)
        w[i] = (float)(i % 97) * 0.01f;
    printf("%d layers, %.0f MB of float32 weights, median of %d runs (ms)\n",
           2 * PAIRS, (double)PAIRS * N * 4 / 1e6, REPS);
    printf("%-6s %12s %12s %12s %12s %12s %12s\n", "device", "build",
           "serialize", "read file", "load bytes", "cold build",
           "cold load");
    run(ctx, MICA_DEVICE_CPU, "cpu", w);
    if (mica_device_usable(MICA_DEVICE_CUDA))
        run(ctx, MICA_DEVICE_CUDA, "cuda", w);
    free(w);
    mica_context_destroy(ctx);
    return 0;
}
