/*
 * tests/test_cuda_graph.c - CUDA graphs of an execution context's enqueue
 * (mica_exec_set_cuda_graph, core/exec_graph.c).
 *
 * On the CPU (runs everywhere): a CPU context refuses graphs with a
 * message, says why it has none, and counts nothing.  On CUDA (skipped
 * without a GPU): results with graphs equal the expected ones through a
 * warm-up, a capture and replays with new data each run; a new shape
 * captures again and an old one hits the cache; rebinding an output
 * captures again and binding it back replays; the ninth key evicts the
 * least recently used; turning graphs off and per-layer timing fall back;
 * loops and conditionals are captured as conditional nodes (their
 * results: tests/test_control.c); a layer that waits for the host says
 * why, and gives the same results layer by layer.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifdef MICA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define W 64      /* the width of x */
#define MAXN 32   /* the profile's largest batch */
#define GPU_TESTS 55

static mica_context_t *ctx;

static const char *err(void)
{
    return mica_context_error(ctx);
}

static const char *str(const char *s)
{
    return s ? s : "(null)";
}

static mica_dims_t dims2(int64_t a, int64_t b)
{
    mica_dims_t d;
    memset(&d, 0, sizeof d);
    d.nb_dims = 2;
    d.d[0] = a;
    d.d[1] = b;
    return d;
}

/* x[-1, W] -> relu -> r; y = r + r; one profile [1..MAXN, W], or two:
 * [1..8, W] and [9..MAXN, W]. */
static mica_engine_t *relu_engine2(uint32_t device, int two)
{
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_dims_t x = dims2(-1, W), lo = dims2(1, W), mid = dims2(4, W),
                hi = dims2(MAXN, W);
    int32_t k;

    if (mica_network_create(ctx, &net) != MICA_OK)
        bail("network: %s", err());
    mica_network_add_input(net, "x", MICA_FLOAT32, &x, NULL);
    th_add_layer(net, "relu", "Activation", "type", "relu", "x", NULL, "r");
    th_add_layer(net, "twice", "ElementWise", "op", "sum", "r", "r", "y");
    mica_network_mark_output(net, "y", NULL);
    mica_network_add_profile(net, &k);
    if (two) {
        mica_dims_t h0 = dims2(8, W), l1 = dims2(9, W), m1 = dims2(12, W);
        if (mica_network_set_profile_dims(net, k, "x", &lo, &mid, &h0,
                                          NULL) != MICA_OK)
            bail("profile: %s", err());
        lo = l1;
        mid = m1;
        mica_network_add_profile(net, &k);
    }
    if (mica_network_set_profile_dims(net, k, "x", &lo, &mid, &hi, NULL) !=
        MICA_OK)
        bail("profile: %s", err());
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK)
        diag("build: %s", err());
    mica_network_destroy(net);
    return e;
}

static mica_engine_t *relu_engine(uint32_t device)
{
    return relu_engine2(device, 0);
}

/* The input of batch n for `seed`, and what y must be. */
static void values(int64_t n, int seed, float *in, float *want)
{
    int64_t i;
    for (i = 0; i < n * W; i++) {
        in[i] = (float)((i * 7 + seed * 13) % 23) - 11.0f;
        want[i] = in[i] > 0 ? 2 * in[i] : 0.0f;
    }
}

/* Run batch n with seed's values; 1 if y is right. */
static int run_batch(mica_exec_t *x, int64_t n, int seed)
{
    static float in[MAXN * W], want[MAXN * W];
    mica_dims_t d = dims2(n, W);
    mica_tensor_desc_t desc;
    const float *out = NULL;

    values(n, seed, in, want);
    if (mica_exec_set_input(x, "x", &d, in) != MICA_OK ||
        mica_exec_run(x) != MICA_OK ||
        mica_exec_get_output(x, "y", &desc, (const void **)&out) != MICA_OK) {
        diag("batch %lld: %s", (long long)n, err());
        return 0;
    }
    return desc.dims.d[0] == n &&
           memcmp(out, want, sizeof *out * (size_t)(n * W)) == 0;
}

static mica_cuda_graph_counts_t counts(mica_exec_t *x)
{
    mica_cuda_graph_counts_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    if (mica_exec_cuda_graph_counts(x, &c) != MICA_OK)
        diag("counts: %s", err());
    return c;
}

/* Build x[4, W] -> `type` -> y on device, turn graphs on if `graphs`,
 * run three times with new data: 1 if y is x each time.  The context
 * and its engine go to *out_x and *out_e (destroyed if out_x is NULL). */
static int copy_runs(uint32_t device, const char *type, const char *name,
                     int graphs, mica_exec_t **out_x, mica_engine_t **out_e)
{
    static float in[4 * W], want[4 * W];
    mica_engine_t *e = NULL;
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_exec_t *x = NULL;
    mica_dims_t d = dims2(4, W);
    mica_tensor_desc_t desc;
    const float *out = NULL;
    int k, good = 1;

    if (mica_network_create(ctx, &net) != MICA_OK)
        bail("network: %s", err());
    mica_network_add_input(net, "x", MICA_FLOAT32, &d, NULL);
    th_add_layer(net, name, type, NULL, NULL, "x", NULL, "y");
    mica_network_mark_output(net, "y", NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = device;
    if (mica_engine_build(net, &cfg, &e) != MICA_OK ||
        mica_exec_create(e, &x) != MICA_OK ||
        (graphs && mica_exec_set_cuda_graph(x, 1) != MICA_OK))
        bail("%s: %s", type, err());
    mica_network_destroy(net);
    for (k = 0; k < 3 && good; k++) {
        values(4, k, in, want);
        good = mica_exec_set_input(x, "x", &d, in) == MICA_OK &&
               mica_exec_run(x) == MICA_OK &&
               mica_exec_get_output(x, "y", &desc, (const void **)&out) ==
                   MICA_OK &&
               memcmp(out, in, sizeof in) == 0;
        if (!good)
            diag("%s run %d: %s", type, k, err());
    }
    if (out_x) {
        *out_x = x;
        *out_e = e;
    } else {
        mica_exec_destroy(x);
        mica_engine_destroy(e);
    }
    return good;
}

/* ---- on the CPU ----------------------------------------------------------- */

static void test_cpu(void)
{
    mica_engine_t *e = relu_engine(MICA_DEVICE_CPU);
    mica_exec_t *x = NULL;
    mica_cuda_graph_counts_t c;

    if (!e || mica_exec_create(e, &x) != MICA_OK)
        bail("cpu engine: %s", err());
    is_int(MICA_ERR_INVALID, mica_exec_set_cuda_graph(x, 1),
           "cpu: set_cuda_graph(1) is refused");
    is_string("CUDA graphs are for an engine on the cuda device; this one "
              "runs on the CPU", err(), "  with a message");
    is_int(MICA_OK, mica_exec_set_cuda_graph(x, 0),
           "cpu: set_cuda_graph(0) is accepted");
    is_string("the engine runs on the CPU", str(mica_exec_cuda_graph_why(x)),
              "cpu: why says the engine runs on the CPU");
    c = counts(x);
    ok(c.struct_size == sizeof c && c.cached == 0 && c.captures == 0 &&
       c.replays == 0 && c.warmups == 0 && c.fallbacks == 0 &&
       c.failures == 0 && c.evictions == 0, "cpu: every count is 0");
    is_int(MICA_ERR_INVALID, mica_exec_cuda_graph_counts(x, NULL),
           "counts(NULL) is refused");
    ok(run_batch(x, 3, 1), "cpu: the context still runs");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    ok(copy_runs(MICA_DEVICE_CPU, "HostWait", "hw", 0, NULL, NULL),
       "cpu: HostWait (tests/hostwait/) copies its input");
}

/* ---- on CUDA -------------------------------------------------------------- */

#ifdef MICA_HAVE_CUDA
/* Warm-up, capture, replays; a new shape, the cache; graphs off. */
static void test_replay(void)
{
    mica_engine_t *e = relu_engine(MICA_DEVICE_CUDA);
    mica_exec_t *x = NULL;
    mica_cuda_graph_counts_t c;

    if (!e || mica_exec_create(e, &x) != MICA_OK)
        bail("cuda engine: %s", err());
    is_string("CUDA graphs are off", str(mica_exec_cuda_graph_why(x)),
              "cuda: off by default, and why says so");
    is_int(MICA_OK, mica_exec_set_cuda_graph(x, 1), "cuda: graphs turn on");
    ok(mica_exec_cuda_graph_why(x) == NULL, "  why is NULL: graphs are used");
    ok(run_batch(x, 4, 1), "batch 4, first run (layer by layer): right");
    c = counts(x);
    ok(c.warmups == 1 && c.captures == 0 && c.replays == 0,
       "  counted as a warm-up");
    ok(run_batch(x, 4, 2), "batch 4, second run (captured): right");
    c = counts(x);
    ok(c.captures == 1 && c.replays == 1 && c.cached == 1,
       "  one capture, launched");
    ok(run_batch(x, 4, 3), "batch 4, third run (replayed, new data): right");
    ok(run_batch(x, 4, 4), "batch 4, fourth run (replayed): right");
    c = counts(x);
    ok(c.captures == 1 && c.replays == 3 && c.fallbacks == 0,
       "  replays, no new capture");
    ok(run_batch(x, 7, 5) && run_batch(x, 7, 6),
       "batch 7 (a new shape), twice: right");
    c = counts(x);
    ok(c.captures == 2 && c.warmups == 2 && c.cached == 2,
       "  its own warm-up and capture");
    ok(run_batch(x, 4, 7), "back to batch 4: right");
    c = counts(x);
    ok(c.captures == 2 && c.replays == 5, "  from the cache: a replay");
    ok(mica_exec_cuda_graph_why(x) == NULL, "  why is still NULL");
    is_int(MICA_OK, mica_exec_set_cuda_graph(x, 0), "graphs turn off");
    c = counts(x);
    is_int(0, c.cached, "  and every graph is freed");
    ok(run_batch(x, 4, 8), "  a run layer by layer: right");
    is_int(5, counts(x).replays, "  and no graph launched");
    is_string("CUDA graphs are off", str(mica_exec_cuda_graph_why(x)),
              "  why says they are off");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* A context of e with graphs on. */
static mica_exec_t *graphed(mica_engine_t *e)
{
    mica_exec_t *x = NULL;
    if (!e || mica_exec_create(e, &x) != MICA_OK ||
        mica_exec_set_cuda_graph(x, 1) != MICA_OK)
        bail("cuda engine: %s", err());
    return x;
}

/* Another profile configures the layers again: graphs are forgotten. */
static void test_profiles(void)
{
    mica_engine_t *e = relu_engine2(MICA_DEVICE_CUDA, 1);
    mica_exec_t *x = graphed(e);
    mica_cuda_graph_counts_t c;
    int good;

    good = run_batch(x, 4, 1) && run_batch(x, 4, 2) && run_batch(x, 12, 3) &&
           run_batch(x, 12, 4);
    c = counts(x);
    ok(c.captures == 2 && c.cached == 1,
       "two profiles: a capture each, the first forgotten at the switch");
    good = run_batch(x, 4, 5) && run_batch(x, 4, 6) && good;
    c = counts(x);
    ok(c.warmups == 3 && c.captures == 3,
       "  back to profile 0: a warm-up and a capture again");
    ok(good, "  every run right");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* y bound to device buffer a, then b, then a again. */
static int run_bound(mica_exec_t *x, void *buf, int seed)
{
    static float in[4 * W], want[4 * W], got[4 * W];
    mica_dims_t d = dims2(4, W);

    values(4, seed, in, want);
    if (mica_exec_set_input(x, "x", &d, in) != MICA_OK ||
        mica_exec_bind(x, "y", NULL, buf) != MICA_OK ||
        mica_exec_run(x) != MICA_OK) {
        diag("bound run: %s", err());
        return 0;
    }
    if (cudaMemcpy(got, buf, sizeof got, cudaMemcpyDeviceToHost) !=
        cudaSuccess)
        bail("cudaMemcpy of the bound output failed");
    return memcmp(got, want, sizeof got) == 0;
}

static void test_bind(void)
{
    mica_engine_t *e = relu_engine(MICA_DEVICE_CUDA);
    mica_exec_t *x;
    void *a = NULL, *b = NULL;
    mica_cuda_graph_counts_t c;

    x = graphed(e);
    if (cudaMalloc(&a, sizeof(float) * 4 * W) != cudaSuccess ||
        cudaMalloc(&b, sizeof(float) * 4 * W) != cudaSuccess)
        bail("cudaMalloc failed");
    ok(run_bound(x, a, 1) && run_bound(x, a, 2) && run_bound(x, a, 3),
       "y bound to a: three runs right");
    c = counts(x);
    ok(c.captures == 1 && c.replays == 2, "  captured once, replayed");
    ok(run_bound(x, b, 4) && run_bound(x, b, 5),
       "y bound to b: two runs right (written to b)");
    c = counts(x);
    is_int(2, c.captures, "  a capture of its own");
    ok(run_bound(x, a, 6), "y bound to a again: right");
    c = counts(x);
    ok(c.captures == 2 && c.replays == 4, "  a's graph replayed");
    mica_exec_destroy(x);
    cudaFree(a);
    cudaFree(b);
    mica_engine_destroy(e);
}

/* Nine keys: the first one is evicted. */
static void test_lru(void)
{
    mica_engine_t *e = relu_engine(MICA_DEVICE_CUDA);
    mica_exec_t *x = graphed(e);
    mica_cuda_graph_counts_t c;
    int n, good = 1;

    for (n = 1; n <= 9; n++)
        good = run_batch(x, n, n) && run_batch(x, n, n + 1) && good;
    ok(good, "batches 1 to 9, twice each: right");
    c = counts(x);
    ok(c.captures == 9 && c.evictions == 1 && c.cached == 8,
       "  nine captures, eight kept, one evicted");
    ok(run_batch(x, 9, 3), "batch 9 again: right");
    is_int(10, counts(x).replays, "  replayed");
    ok(run_batch(x, 1, 4), "batch 1 (evicted) again: right");
    c = counts(x);
    ok(c.warmups == 10 && c.captures == 9, "  a warm-up again, no graph");
    ok(run_batch(x, 1, 5), "batch 1 once more: right");
    c = counts(x);
    ok(c.captures == 10 && c.evictions == 2 && c.cached == 8,
       "  captured again, evicting batch 2's");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* Per-layer timing: layer by layer while it is on. */
static void test_timing(void)
{
    mica_engine_t *e = relu_engine(MICA_DEVICE_CUDA);
    mica_exec_t *x = graphed(e);
    mica_cuda_graph_counts_t c;

    if (mica_exec_set_timing(x, MICA_TIMING_STAGES | MICA_TIMING_LAYERS) !=
        MICA_OK)
        bail("timing: %s", err());
    is_string("per-layer timing is on", str(mica_exec_cuda_graph_why(x)),
              "per-layer timing: why says so");
    ok(run_batch(x, 4, 1) && run_batch(x, 4, 2) && run_batch(x, 4, 3),
       "  three runs: right");
    c = counts(x);
    ok(c.captures == 0 && c.fallbacks == 3, "  layer by layer, counted");
    mica_exec_set_timing(x, MICA_TIMING_STAGES);
    ok(run_batch(x, 4, 4) && run_batch(x, 4, 5) && run_batch(x, 4, 6),
       "stage timing only: three runs right");
    c = counts(x);
    ok(c.captures == 1 && c.replays == 2, "  captured and replayed");
    ok(mica_exec_cuda_graph_why(x) == NULL, "  why is NULL");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

static mica_engine_t *manifest_engine(const char *file)
{
    char path[4096];
    const char *dir = getenv("MICA_TOP_SRCDIR");
    mica_manifest_t *m = NULL;
    mica_engine_t *e = NULL;
    mica_build_config_t cfg;

    snprintf(path, sizeof path, "%s/tests/manifests/control/%s",
             dir ? dir : ".", file);
    if (mica_manifest_load(ctx, path, &m) != MICA_OK)
        bail("%s: %s", file, err());
    cfg = *mica_manifest_config(m);
    cfg.device = MICA_DEVICE_CUDA;
    if (mica_engine_build(mica_manifest_network(m), &cfg, &e) != MICA_OK)
        bail("%s: %s", file, err());
    mica_manifest_destroy(m);
    return e;
}

/* The reason of a network with control flow, before any run. */
static void control_why(const char *file, const char *want)
{
    mica_engine_t *e = manifest_engine(file);
    mica_exec_t *x = NULL;
    if (mica_exec_create(e, &x) != MICA_OK ||
        mica_exec_set_cuda_graph(x, 1) != MICA_OK)
        bail("%s: %s", file, err());
    is_string(want, str(mica_exec_cuda_graph_why(x)), "%s: why", file);
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* The while loop is recorded as conditional nodes (its predicate read
 * on the device every trip), replayed, and is right. */
static void test_while(void)
{
    mica_engine_t *e = manifest_engine("while_loop.yaml");
    mica_exec_t *x = NULL;
    mica_dims_t dx, dl;
    float xv[2] = {1.5f, -2}, limit = 3;
    mica_tensor_desc_t desc;
    const float *v = NULL;
    mica_cuda_graph_counts_t c;
    int k, good = 1;

    memset(&dx, 0, sizeof dx);
    dx.nb_dims = 1;
    dx.d[0] = 2;
    memset(&dl, 0, sizeof dl);
    if (mica_exec_create(e, &x) != MICA_OK ||
        mica_exec_set_cuda_graph(x, 1) != MICA_OK ||
        mica_exec_set_input(x, "x", &dx, xv) != MICA_OK ||
        mica_exec_set_input(x, "limit", &dl, &limit) != MICA_OK)
        bail("while_loop.yaml: %s", err());
    for (k = 0; k < 3; k++) {
        if (mica_exec_run(x) != MICA_OK ||
            mica_exec_get_output(x, "v_out", &desc, (const void **)&v) !=
                MICA_OK) {
            diag("while loop: %s", err());
            good = 0;
            break;
        }
        good = good && v[0] == 12.0f && v[1] == -16.0f;
    }
    ok(good, "while loop, three runs with graphs on: v doubled 3 times");
    c = counts(x);
    ok(c.captures == 1 && c.replays == 2 && c.fallbacks == 0,
       "  captured once, with its loop, and replayed");
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

/* A layer of `type` (tests/hostwait/) that waits for the host. */
static void test_host_wait(const char *type, const char *name)
{
    mica_exec_t *x = NULL;
    mica_engine_t *e = NULL;
    mica_cuda_graph_counts_t c;
    const char *why;
    char expect[256];

    ok(copy_runs(MICA_DEVICE_CUDA, type, name, 1, &x, &e),
       "%s: three runs with graphs on, the capture failing: right", type);
    c = counts(x);
    why = mica_exec_cuda_graph_why(x);
    diag("%s: %s", type, str(why));
    if (strcmp(type, "HostWait") == 0) {
        snprintf(expect, sizeof expect, "layer '%s' (%s): "
                 "cudaStreamSynchronize", name, type);
        contains(str(why), "capture failed: ", "  why says the capture "
                 "failed");
        contains(str(why), expect, "  and names the layer and its wait");
        ok(c.captures == 0 && c.failures == 1 && c.fallbacks == 2,
           "  one failed capture, then layer by layer");
    } else {
        /* A wait whose failure is ignored: the capture is invalidated
         * (or, where CUDA lets it through, the graph is right anyway). */
        snprintf(expect, sizeof expect, "capture failed: layer '%s' (%s) "
                 "waits for the host or allocates memory while enqueuing",
                 name, type);
        ok(why ? strcmp(why, expect) == 0 && c.failures == 1
               : c.captures == 1,
           "  why names the layer (or the graph is used)");
        ok(c.captures + c.failures == 1, "  one capture tried");
    }
    mica_exec_destroy(x);
    mica_engine_destroy(e);
}

static void test_cuda(void)
{
    test_replay();
    test_profiles();
    test_bind();
    test_lru();
    test_timing();
    /* Loops and conditionals are conditional nodes: no reason. */
    control_why("while_loop.yaml", "(null)");
    control_why("for_loop.yaml", "(null)");
    control_why("simple_if.yaml", "(null)");
    test_while();
    /* The failed captures make CUDA API calls fail on purpose, which
     * compute-sanitizer counts as errors: bench/compute_sanitizer.sh sets
     * MICA_TEST_NO_API_ERRORS to leave them out. */
    if (getenv("MICA_TEST_NO_API_ERRORS")) {
        skip_block(7, "failed captures: CUDA API errors on purpose "
                   "(MICA_TEST_NO_API_ERRORS is set)");
        return;
    }
    test_host_wait("HostWait", "hw");
    test_host_wait("HostWaitQuiet", "hq");
}
#endif

int main(void)
{
    char path[4096];
    const char *top = getenv("MICA_TOP_BUILDDIR");

    plan_lazy();
    ctx = th_context();
    snprintf(path, sizeof path, "%s/tests/hostwait/.libs/hostwait.so",
             top ? top : ".");
    if (mica_context_load_file(ctx, path) != MICA_OK)
        bail("the hostwait module: %s", err());
    test_cpu();
#ifdef MICA_HAVE_CUDA
    if (th_cuda())
        test_cuda();
    else
        skip_block(GPU_TESTS, "cuda: no usable GPU");
#else
    skip_block(GPU_TESTS, "cuda: not in this build");
#endif
    return exit_status();
}
