/*
 * tools/cmd_bench.c - `mica bench`: time repeated runs of a manifest, an
 * engine file or an ONNX model, as trtexec does, on random (seeded) or
 * given inputs.
 *
 * One execution context, one query in flight: each query is upload,
 * enqueue and download (the host time of these calls is the Enqueue
 * Time), then a wait; the context's markers (mica_exec_set_timing: CUDA
 * events on the context's stream, the host clock on the CPU) time the
 * H2D copies, the layers and the D2H copies.  Inputs live in host memory
 * the device copies from directly (pinned on CUDA), and so do the
 * context's outputs while it is timed.  A first run, untimed, configures
 * and initializes every layer; with CUDA graphs (the default on cuda), a
 * second captures the graph of the enqueue; then warmup queries for
 * --warmup-ms, then
 * timed queries until both --iterations and --duration-s are reached.
 * The report is bench_report.c's.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "inputs.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mica bench MANIFEST|ENGINE|MODEL.onnx [--shapes NAME:AxB,...]\n"
        "                  [--iterations N] [--warmup-ms MS] [--duration-s S]\n"
        "                  [--cuda-graph|--no-cuda-graph] [--no-data-transfers]\n"
        "                  [--profile-layers]\n"
        "                  [--export-times FILE.json] [--export-profile FILE.json]\n"
        "                  [--input NAME=FILE.npy|NAME=random]... [--seed N]\n"
        "                  [--device auto|cpu|cuda] [--profile K] [--prefer T=I]...\n"
        "                  [--fp16] [--no-fusion] [--module-path DIR]...\n"
        "                  [--passes NAME,...] [--no-passes NAME,...]\n"
        "                  [--threads N] [--verbose]\n\n"
        "Time repeated runs of the network, as trtexec does: throughput, then\n"
        "min, max, mean, median and percentiles 90, 95 and 99 of the latency,\n"
        "the enqueue time, the H2D copies, the compute and the D2H copies.\n"
        "Inputs not given get seeded random values (as 'mica run' gives them).\n\n"
        "  --shapes NAME:AxB,...   the shapes to run at (a shape-tensor input:\n"
        "                          its values; default: the profile's opt); for\n"
        "                          an ONNX model, its profile too\n"
        "  --iterations N          run at least N timed queries (default 10)\n"
        "  --warmup-ms MS          warm up for MS milliseconds first (default 200)\n"
        "  --duration-s S          time queries for at least S seconds (default 3)\n"
        "  --cuda-graph            replay the layers as a CUDA graph (the default\n"
        "                          on cuda where the network allows it; refused\n"
        "                          on the cpu)\n"
        "  --no-cuda-graph         enqueue layer by layer\n"
        "  --no-data-transfers     time the layers alone: inputs uploaded once,\n"
        "                          outputs never downloaded\n"
        "  --profile-layers        a per-layer table: name, type, implementation,\n"
        "                          time and share\n"
        "  --export-times FILE     every timed query as JSON (trtexec's\n"
        "                          --exportTimes layout)\n"
        "  --export-profile FILE   the per-layer times as JSON (trtexec's\n"
        "                          --exportProfile layout; implies\n"
        "                          --profile-layers)\n"
        "  --input NAME=FILE.npy   the data of input NAME (or NAME=random)\n"
        "  --seed N                the seed of random inputs (default %d)\n"
        "  --device D              auto, cpu or cuda (default: the manifest's)\n"
        "  --profile K             the optimization profile (default: the first\n"
        "                          that admits the shapes)\n"
        "  --prefer TYPE=IMPL      implementation IMPL for layers of TYPE\n"
        "  --fp16                  let layers run in float16\n"
        "  --no-fusion             apply no fusion rule\n"
        "  --passes NAME,...       run only these graph passes (all, none)\n"
        "  --no-passes NAME,...    run every graph pass but these (all: none)\n"
        CLI_THREADS_HELP
        "  --module-path DIR       another folder of modules (repeatable)\n"
        "  --verbose               a progress line, and what each metric means\n\n"
        "A progress line goes to standard error when it is a terminal (or\n"
        "with --verbose).  Status 1 on any error.\n", CLI_DEFAULT_SEED);
}

static int number(const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (errno || *end || end == v || !(*out >= 0) || *out > 1e9)
        return cli_usage_error("bench", "%s '%s': expected a non-negative "
                               "number", opt, v);
    return CLI_OK;
}

static int parse(bench_t *b, int argc, char **argv, int *help)
{
    int i, taken;
    const char *v;
    char *end;

    *help = 0;
    b->device = CLI_DEVICE_MANIFEST;
    b->profile = -1;
    b->iterations = 10;
    b->warmup_ms = 200;
    b->duration_s = 3;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            *help = 1;
            return CLI_OK;
        } else if (cli_inputs_option("bench", argc, argv, &i, &taken,
                                     &b->inputs) != CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_threads_option("bench", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_onnx_option("bench", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_passes_option("bench", argc, argv, &i, &taken) !=
                   CLI_OK) {
            return CLI_USAGE;
        } else if (taken) {
            continue;
        } else if (cli_is_opt(a, "--iterations")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--iterations")))
                return CLI_USAGE;
            errno = 0;
            b->iterations = strtol(v, &end, 10);
            if (errno || *end || end == v || b->iterations < 1 ||
                b->iterations > BENCH_MAX_QUERIES)
                return cli_usage_error("bench", "--iterations '%s': expected "
                                       "1 to %ld", v, BENCH_MAX_QUERIES);
        } else if (cli_is_opt(a, "--warmup-ms")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--warmup-ms")) ||
                number("--warmup-ms", v, &b->warmup_ms) != CLI_OK)
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--duration-s")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--duration-s")) ||
                number("--duration-s", v, &b->duration_s) != CLI_OK)
                return CLI_USAGE;
        } else if (!strcmp(a, "--cuda-graph")) {
            b->cuda_graph = 1;
        } else if (!strcmp(a, "--no-cuda-graph")) {
            b->cuda_graph = -1;
        } else if (!strcmp(a, "--no-data-transfers")) {
            b->no_transfers = 1;
        } else if (!strcmp(a, "--profile-layers")) {
            b->profile_layers = 1;
        } else if (!strcmp(a, "--verbose")) {
            b->verbose = 1;
        } else if (!strcmp(a, "--no-fusion")) {
            cli_set_no_fusion(1);
        } else if (!strcmp(a, "--fp16")) {
            cli_set_fp16(1);
        } else if (cli_is_opt(a, "--export-times")) {
            if (!(b->export_times = cli_opt_value("bench", argc, argv, &i,
                                                  "--export-times")))
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--export-profile")) {
            if (!(b->export_profile = cli_opt_value("bench", argc, argv, &i,
                                                    "--export-profile")))
                return CLI_USAGE;
            b->profile_layers = 1;
        } else if (cli_is_opt(a, "--device")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--device")))
                return CLI_USAGE;
            if (cli_parse_device(v, &b->device))
                return cli_usage_error("bench", "--device '%s': expected %s",
                                       v, cli_device_choices());
        } else if (cli_is_opt(a, "--profile")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--profile")))
                return CLI_USAGE;
            errno = 0;
            b->profile = strtol(v, &end, 10);
            if (errno || *end || end == v || b->profile < 0)
                return cli_usage_error("bench", "--profile '%s': expected a "
                                       "profile number (0, 1, ...)", v);
        } else if (cli_is_opt(a, "--prefer")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i, "--prefer")) ||
                cli_add_prefer("bench", v) != CLI_OK)
                return CLI_USAGE;
        } else if (cli_is_opt(a, "--module-path")) {
            if (!(v = cli_opt_value("bench", argc, argv, &i,
                                    "--module-path")))
                return CLI_USAGE;
            b->paths[b->nb_paths++] = (char *)v;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("bench", "unknown option '%s'", a);
        } else if (!b->source) {
            b->source = a;
        } else {
            return cli_usage_error("bench", "unexpected argument '%s' (one "
                                   "manifest, engine or model only)", a);
        }
    }
    if (!b->source)
        return cli_usage_error("bench", "no manifest, engine or model given");
    return CLI_OK;
}

/*
 * CUDA graphs (mica_exec_set_cuda_graph): on by default for an engine on
 * a device that has them, since what cannot be captured runs layer by
 * layer with a reason; --cuda-graph asks for them (on a device without
 * them, an error rather than ignored), --no-cuda-graph turns them off
 * (b->cuda_graph 1 and -1; the last given wins).
 */
static int use_cuda_graph(const bench_t *b, mica_context_t *ctx,
                          mica_engine_t *engine, mica_exec_t *exec)
{
    if (b->cuda_graph < 0)
        return CLI_OK;
    if (mica_engine_device(engine) != MICA_DEVICE_CUDA) {
        if (!b->cuda_graph)
            return CLI_OK;
        return cli_error("--cuda-graph: CUDA graphs are for the cuda device; "
                         "this engine runs on %s",
                         cli_device_name(mica_engine_device(engine)));
    }
    if (mica_exec_set_cuda_graph(exec, 1) != MICA_OK)
        return cli_error("%s", mica_context_error(ctx));
    return CLI_OK;
}

/* Whether graphs are used, after the untimed runs: NULL if so, else why
 * not. */
static const char *graph_state(const bench_t *b, mica_exec_t *exec)
{
    if (b->cuda_graph < 0)
        return "--no-cuda-graph";
    return mica_exec_cuda_graph_why(exec);
}

/* Copies of the inputs in host memory the device copies from directly. */
static int pin_inputs(cli_inputs_t *in, mica_engine_t *engine, void ***pinned)
{
    int k;
    *pinned = calloc((size_t)in->nb + 1, sizeof **pinned);
    if (!*pinned)
        return cli_error("out of memory");
    for (k = 0; k < in->nb; k++) {
        mica__npy_t *n = &in->v[k].npy;
        if (mica_engine_host_alloc(engine, n->bytes, &(*pinned)[k]) != MICA_OK)
            return cli_error("input '%s': no host memory for %zu bytes",
                             in->v[k].name, n->bytes);
        if (n->bytes)
            memcpy((*pinned)[k], n->data, n->bytes);
    }
    return CLI_OK;
}

static void print_setup(const bench_t *b, const cli_source_t *src,
                        mica_engine_t *engine, const char *graph_why)
{
    uint32_t dev = mica_engine_device(engine);
    printf("=== Benchmark: %s%s%s%s ===\n", src->path,
           cli_source_name(src)[0] ? " (" : "", cli_source_name(src),
           cli_source_name(src)[0] ? ")" : "");
    printf("Device: %s%s\n", cli_device_name(dev), cli_fp16() ? ", fp16" : "");
    cli_inputs_print(&b->inputs, stdout, 1);
    if (graph_why)
        printf("CUDA graphs: off (%s)\n", graph_why);
    else
        printf("CUDA graphs: on\n");
    if (b->no_transfers)
        printf("Data transfers: off (inputs uploaded once, outputs not "
               "downloaded)\n");
    else
        printf("Data transfers: on (%s)\n", dev == MICA_DEVICE_CPU
               ? "copies in host memory: the cpu device has no H2D or D2H"
               : "pinned host buffers");
    printf("Per-layer timing: %s\n", b->profile_layers ? "on" : "off");
    printf("Iterations: at least %ld; duration: at least %.6g s; warmup: "
           "%.6g ms\n\n", b->iterations, b->duration_s, b->warmup_ms);
}

int cmd_bench(int argc, char **argv)
{
    bench_t b;
    bench_run_t r;
    bench_layers_t l;
    bench_query_t *qs = NULL;
    int rc, help, k;
    mica_context_t *ctx = NULL;
    cli_source_t src;
    mica_engine_t *engine = NULL;
    mica_exec_t *exec = NULL;
    mica_status_t st;
    void **pinned = NULL;
    const char *graph_why = NULL;

    memset(&b, 0, sizeof b);
    memset(&r, 0, sizeof r);
    memset(&l, 0, sizeof l);
    memset(&src, 0, sizeof src);
    if (!(b.paths = calloc((size_t)argc + 1, sizeof(char *)))) {
        rc = cli_error("out of memory");
        goto out;
    }
    if ((rc = parse(&b, argc, argv, &help)) != CLI_OK)
        goto out;
    if (help) {
        usage(stdout);
        goto out;
    }
    if ((rc = cli_inputs_read(&b.inputs)) != CLI_OK ||
        (rc = cli_context(&ctx, b.paths, b.nb_paths, 0)) != CLI_OK ||
        (rc = cli_open(ctx, b.source, b.device, &src)) != CLI_OK)
        goto out;
    engine = src.engine;
    if ((rc = cli_inputs_complete(&b.inputs, engine, b.profile,
                                  cli_onnx_shapes())) != CLI_OK ||
        (rc = pin_inputs(&b.inputs, engine, &pinned)) != CLI_OK)
        goto out;
    l.nb = mica_engine_nb_layers(engine);
    if (b.profile_layers) {
        int64_t rows = BENCH_MAX_LAYER_SAMPLES;
        l.total = calloc((size_t)l.nb + 1, sizeof *l.total);
        l.runs = calloc((size_t)l.nb + 1, sizeof *l.runs);
        l.samples = malloc((size_t)rows * (size_t)(l.nb + 1) *
                           sizeof *l.samples);
        if (!l.total || !l.runs || !l.samples) {
            rc = cli_error("out of memory");
            goto out;
        }
    }
    st = mica_exec_create(engine, &exec);
    if (st == MICA_OK)
        st = cli_exec_threads(exec);
    if (st == MICA_OK && b.profile >= 0 && mica_engine_nb_profiles(engine))
        st = mica_exec_set_profile(exec, (int32_t)b.profile);
    for (k = 0; st == MICA_OK && k < b.inputs.nb; k++)
        st = mica_exec_set_input(exec, b.inputs.v[k].name,
                                 &b.inputs.v[k].npy.dims, pinned[k]);
    if (st != MICA_OK) {
        rc = cli_error("%s", mica_context_error(ctx));
        goto out;
    }
    if ((rc = use_cuda_graph(&b, ctx, engine, exec)) != CLI_OK)
        goto out;
    /* The first run configures and initializes, and with timing on
     * already, gives the outputs their pinned host copies: not timed.
     * With graphs, a second captures the graph (or finds why not). */
    if ((st = mica_exec_set_timing(exec, MICA_TIMING_STAGES |
                                   (b.profile_layers ? MICA_TIMING_LAYERS
                                                     : 0))) != MICA_OK ||
        (st = mica_exec_run(exec)) != MICA_OK ||
        (b.cuda_graph >= 0 && mica_engine_device(engine) == MICA_DEVICE_CUDA &&
         (st = mica_exec_run(exec)) != MICA_OK)) {
        rc = cli_error("%s", mica_context_error(ctx));
        goto out;
    }
    graph_why = graph_state(&b, exec);
    print_setup(&b, &src, engine, graph_why);
    fflush(stdout);
    if ((rc = bench_measure(&b, ctx, exec, &r, &l, &qs)) != CLI_OK)
        goto out;
    r.source = b.source;
    r.name = cli_source_name(&src);
    r.device = mica_engine_device(engine);
    r.transfers = !b.no_transfers;
    r.cuda_graph = graph_why == NULL;
    r.cuda_graph_why = graph_why;
    r.profile_layers = b.profile_layers;
    r.verbose = b.verbose;
    bench_print_summary(&r, stdout);
    if (b.profile_layers)
        bench_print_layers(&r, engine, &l, stdout);
    if ((b.export_times && (rc = bench_export_times(&r, b.export_times)) !=
                               CLI_OK) ||
        (b.export_profile &&
         (rc = bench_export_profile(engine, &l, b.export_profile)) != CLI_OK))
        goto out;
    if (b.export_times)
        printf("times: %s\n", b.export_times);
    if (b.export_profile)
        printf("profile: %s\n", b.export_profile);
out:
    if (exec)
        mica_exec_destroy(exec);
    for (k = 0; pinned && k < b.inputs.nb; k++)
        mica_engine_host_free(engine, pinned[k]);
    free(pinned);
    cli_close(&src);
    if (ctx)
        mica_context_destroy(ctx);
    cli_inputs_free(&b.inputs);
    free(b.paths);
    free(qs);
    free(l.total);
    free(l.runs);
    free(l.samples);
    return rc;
}
