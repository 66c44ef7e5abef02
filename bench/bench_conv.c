/*
 * bench/bench_conv.c - Convolution in float16 through mica against cuDNN
 * called directly with its best algorithm, on ResNet-50's distinct
 * convolutions (and a few depthwise ones) at batch 1 and 256.
 *
 *   bench_conv [SHAPES] [--csv FILE] [--batches 1,256] [--heur]
 *
 * SHAPES defaults to bench/resnet50_convs.txt of the source tree.  Every
 * convolution has a bias (ResNet's batch norms folded), as in a real
 * network.  cuDNN direct: the best of cudnnFindConvolutionForwardAlgorithmEx
 * (1 GiB of workspace), float32 accumulation on tensor cores
 * (CUDNN_TENSOR_OP_MATH), then cudnnAddTensor for the bias: what mica's
 * cudnn implementation calls.  Measured in NCHW (mica's layout) and NHWC
 * (channels last, what PyTorch's channels_last runs); with --heur, "heur"
 * is the first choice of cudnnGetConvolutionForwardAlgorithm_v7 in NCHW (mica's
 * choice until it timed the algorithms too) and "wsq us" the host time
 * of one cudnnGetConvolutionForwardWorkspaceSize for it; mica's "algo"
 * is the one its engine keeps.  mica: a one-layer engine, inputs
 * uploaded once; for depthwise rows also the hand-written "cuda"
 * implementation.  Timing: R calls queued then one synchronization, per
 * call, the median of 5 such trials, host clock, after a warm-up; the
 * same for every column.  The table says what share of cuDNN's NCHW time
 * mica takes (>= 95% is the goal).  --csv writes one line per row for
 * bench/conv_torch.py --mica.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "bench_util.h"
#include "mica/kit_half.h"

#define TRIALS 5
#define WS_BYTES ((size_t)1 << 30)

typedef struct shape {
    char name[32];
    int c, h, w, k, r, s, stride, pad, groups;
} shape_t;

#define CK(call)                                                            \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            fprintf(stderr, "bench: %s: %s\n", #call,                       \
                    cudaGetErrorString(e_));                                \
            exit(1);                                                        \
        }                                                                   \
    } while (0)
#define DK(call)                                                            \
    do {                                                                    \
        cudnnStatus_t s_ = (call);                                          \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                   \
            fprintf(stderr, "bench: %s: %s\n", #call,                       \
                    cudnnGetErrorString(s_));                               \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static int read_shapes(const char *path, shape_t *v, int max)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int n = 0;

    if (!f) {
        fprintf(stderr, "bench: cannot read %s\n", path);
        exit(1);
    }
    while (n < max && fgets(line, sizeof line, f)) {
        shape_t *s = &v[n];
        int got;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        s->groups = 1;
        got = sscanf(line, "%31s %d %d %d %d %d %d %d %d %d", s->name, &s->c,
                     &s->h, &s->w, &s->k, &s->r, &s->s, &s->stride, &s->pad,
                     &s->groups);
        if (got >= 9)
            n++;
    }
    fclose(f);
    return n;
}

static int out_size(int in, int k, int stride, int pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

/* Half values in [-1, 1), a fixed pattern. */
static uint16_t *halves(size_t n, unsigned seed)
{
    uint16_t *h = malloc(n * sizeof *h);
    size_t i;
    if (!h)
        exit(1);
    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        h[i] = mica_kit_float_to_half((float)((seed >> 16) % 2001) / 1000.0f -
                                      1.0f);
    }
    return h;
}

static void *device_copy(const void *host, size_t bytes)
{
    void *d;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* Per-call seconds of cuDNN with its best algorithm, NCHW or NHWC. */
/*
 * Per-call seconds of cuDNN's convolution and bias on shape s at batch
 * n: the best algorithm cudnnFindConvolutionForwardAlgorithmEx times
 * (heur 0), or heuristics' first choice within the workspace (heur 1,
 * what mica picked until the issue-10 fix), its host cost of a workspace
 * query in *query_us then (what mica paid at every call until then).
 */
static double time_cudnn(cudnnHandle_t h, cudaStream_t st, const shape_t *s,
                         int n, int nhwc, int heur, const void *x,
                         const void *w, const void *b, void *y, void *ws,
                         int reps, int *algo_out, double *query_us)
{
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    int ho = out_size(s->h, s->r, s->stride, s->pad);
    int wo = out_size(s->w, s->s, s->stride, s->pad), got = 0, i, t;
    const float one = 1.0f, zero = 0.0f;
    double v[TRIALS];

    DK(cudnnCreateTensorDescriptor(&xd));
    DK(cudnnCreateTensorDescriptor(&yd));
    DK(cudnnCreateTensorDescriptor(&bd));
    DK(cudnnCreateFilterDescriptor(&wd));
    DK(cudnnCreateConvolutionDescriptor(&cd));
    DK(cudnnSetTensor4dDescriptor(xd, fmt, CUDNN_DATA_HALF, n, s->c, s->h,
                                  s->w));
    DK(cudnnSetTensor4dDescriptor(yd, fmt, CUDNN_DATA_HALF, n, s->k, ho, wo));
    DK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 1,
                                  s->k, 1, 1));
    DK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_HALF, fmt, s->k,
                                  s->c / s->groups, s->r, s->s));
    DK(cudnnSetConvolution2dDescriptor(cd, s->pad, s->pad, s->stride,
                                       s->stride, 1, 1,
                                       CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    DK(cudnnSetConvolutionGroupCount(cd, s->groups));
    DK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    DK(cudnnSetStream(h, st));
    if (heur)
        DK(cudnnGetConvolutionForwardAlgorithm_v7(
            h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    else
        DK(cudnnFindConvolutionForwardAlgorithmEx(
            h, xd, x, wd, w, cd, yd, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
            &got, perf, ws, WS_BYTES));
    for (i = 0; i < got && (perf[i].status != CUDNN_STATUS_SUCCESS ||
                            perf[i].memory > WS_BYTES);
         i++)
        ;
    if (i == got) {
        fprintf(stderr, "bench: %s: cuDNN found no algorithm\n", s->name);
        exit(1);
    }
    *algo_out = (int)perf[i].algo;
    if (heur) {
        double t0 = bench_now();
        size_t bytes;
        for (t = 0; t < 100; t++)
            DK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd,
                                                       perf[i].algo, &bytes));
        *query_us = (bench_now() - t0) / 100 * 1e6;
    }
    for (t = -1; t < TRIALS; t++) {
        double t0 = bench_now();
        int r;
        for (r = 0; r < reps; r++) {
            DK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, perf[i].algo,
                                       ws, WS_BYTES, &zero, yd, y));
            DK(cudnnAddTensor(h, &one, bd, b, &one, yd, y));
        }
        CK(cudaStreamSynchronize(st));
        if (t >= 0)
            v[t] = (bench_now() - t0) / reps;
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    return bench_median(v, TRIALS);
}

/*
 * The cuDNN algorithm in a one-Convolution engine: its layer's tactic
 * less one (modules/convolution/conv.h: tactic = algorithm + 1; 100 is
 * the hand-written kernel), -1 where there is none (another
 * implementation).
 */
static int engine_algo(mica_context_t *ctx, const mica_engine_t *e)
{
    mica_layer_info_t li;
    int32_t i;

    for (i = 0; i < mica_engine_nb_layers(e); i++) {
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        bench_check(ctx, mica_engine_layer(e, i, &li), "engine layer");
        if (strcmp(li.type, "Convolution") == 0)
            return li.tactic > 0 ? (int)li.tactic - 1 : -1;
    }
    return -1;
}

/* Per-call seconds of mica's Convolution (implementation impl, NULL: the
 * default) on a one-layer engine; the algorithm it chose in *algo. */
static double time_mica(mica_context_t *ctx, const shape_t *s, int n,
                        const char *impl, const uint16_t *xh,
                        const uint16_t *wh, const uint16_t *bh, int reps,
                        int *algo)
{
    int64_t m = s->k, ks[2], st[2], pad[2], groups = s->groups;
    mica_weights_t kw, bw;
    mica_field_t f[7];
    mica_fields_t fields;
    mica_layer_spec_t spec;
    mica_network_t *net = NULL;
    mica_build_config_t cfg;
    mica_engine_t *e = NULL;
    mica_exec_t *x = NULL;
    mica_dims_t d;
    const char *in[1] = {"x"}, *out[1] = {"y"};
    double v[TRIALS];
    int t;

    ks[0] = s->r;
    ks[1] = s->s;
    st[0] = st[1] = s->stride;
    pad[0] = pad[1] = s->pad;
    memset(&kw, 0, sizeof kw);
    kw.dtype = MICA_FLOAT16;
    kw.count = (int64_t)s->k * (s->c / s->groups) * s->r * s->s;
    kw.values = wh;
    bw = kw;
    bw.count = s->k;
    bw.values = bh;
    f[0] = (mica_field_t){"num_output_maps", MICA_FIELD_INT, 1, &m};
    f[1] = (mica_field_t){"kernel_size", MICA_FIELD_INT, 2, ks};
    f[2] = (mica_field_t){"stride", MICA_FIELD_INT, 2, st};
    f[3] = (mica_field_t){"padding", MICA_FIELD_INT, 2, pad};
    f[4] = (mica_field_t){"groups", MICA_FIELD_INT, 1, &groups};
    f[5] = (mica_field_t){"kernel", MICA_FIELD_WEIGHTS, 1, &kw};
    f[6] = (mica_field_t){"bias", MICA_FIELD_WEIGHTS, 1, &bw};
    fields.nb_fields = 7;
    fields.fields = f;
    memset(&d, 0, sizeof d);
    d.nb_dims = 4;
    d.d[0] = n;
    d.d[1] = s->c;
    d.d[2] = s->h;
    d.d[3] = s->w;
    memset(&spec, 0, sizeof spec);
    spec.struct_size = sizeof spec;
    spec.name = "conv";
    spec.type = "Convolution";
    spec.implementation = impl;
    spec.nb_inputs = 1;
    spec.inputs = in;
    spec.nb_outputs = 1;
    spec.outputs = out;
    spec.fields = &fields;
    bench_check(ctx, mica_network_create(ctx, &net), "network");
    bench_check(ctx, mica_network_add_input(net, "x", MICA_FLOAT16, &d, NULL),
                "input");
    bench_check(ctx, mica_network_add_layer(net, &spec), "layer");
    bench_check(ctx, mica_network_mark_output(net, "y", NULL), "output");
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.device = MICA_DEVICE_CUDA;
    bench_check(ctx, mica_engine_build(net, &cfg, &e), "build");
    *algo = engine_algo(ctx, e);
    bench_check(ctx, mica_exec_create(e, &x), "exec");
    bench_check(ctx, mica_exec_set_input(x, "x", &d, xh), "set input");
    bench_check(ctx, mica_exec_upload(x), "upload");
    for (t = -1; t < TRIALS; t++) {
        double t0 = bench_now();
        int r;
        for (r = 0; r < reps; r++)
            bench_check(ctx, mica_exec_enqueue(x), "enqueue");
        bench_check(ctx, mica_exec_sync(x), "sync");
        if (t >= 0)
            v[t] = (bench_now() - t0) / reps;
    }
    mica_exec_destroy(x);
    mica_engine_destroy(e);
    mica_network_destroy(net);
    return bench_median(v, TRIALS);
}

int main(int argc, char **argv)
{
    const char *path = MICA_BENCH_SRCDIR "/bench/resnet50_convs.txt";
    const char *csv_path = NULL;
    int batches[4] = {1, 256}, nb_batches = 2, nb, bi, i, heur = 0;
    static shape_t shapes[64];
    mica_context_t *ctx = bench_context();
    struct cudaDeviceProp prop;
    cudnnHandle_t h;
    cudaStream_t st;
    FILE *csv = NULL;
    void *ws;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else if (strcmp(argv[i], "--heur") == 0)
            heur = 1;
        else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
            nb_batches = sscanf(argv[++i], "%d,%d,%d,%d", &batches[0],
                                &batches[1], &batches[2], &batches[3]);
        else
            path = argv[i];
    }
    if (!mica_device_usable(MICA_DEVICE_CUDA)) {
        fprintf(stderr, "bench: no usable CUDA GPU\n");
        return 1;
    }
    nb = read_shapes(path, shapes, 64);
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "bench: cannot write %s\n", csv_path);
        return 1;
    }
    if (csv)
        fprintf(csv, "name,batch,cudnn_nchw_ms,cudnn_nhwc_ms,mica_ms,"
                     "mica_cuda_ms,heur_nchw_ms,heur_algo,wsquery_us,"
                     "cudnn_algo,mica_algo\n");
    CK(cudaGetDeviceProperties(&prop, 0));
    CK(cudaStreamCreate(&st));
    CK(cudaMalloc(&ws, WS_BYTES));
    DK(cudnnCreate(&h));
    printf("device: %s, cuDNN %zu\n", prop.name, cudnnGetVersion());
    for (bi = 0; bi < nb_batches; bi++) {
        int n = batches[bi];
        double sum_c = 0, sum_m = 0;
        printf("\nConvolution float16, batch %d (ms per call; mica = its "
               "cudnn implementation, NCHW)\n", n);
        printf("%-8s %10s %4s %10s %4s %10s %4s %6s %10s %4s %9s %10s\n",
               "conv", "cuDNN NCHW", "algo", "cuDNN NHWC", "algo",
               "heur NCHW", "algo", "wsq us", "mica", "algo", "of cuDNN",
               "mica cuda");
        for (i = 0; i < nb; i++) {
            const shape_t *s = &shapes[i];
            int ho = out_size(s->h, s->r, s->stride, s->pad);
            int wo = out_size(s->w, s->s, s->stride, s->pad), a1, a2;
            int a3 = -1, am = -1, ac = -1;
            size_t nx = (size_t)n * s->c * s->h * s->w;
            size_t ny = (size_t)n * s->k * ho * wo;
            size_t nw = (size_t)s->k * (s->c / s->groups) * s->r * s->s;
            uint16_t *xh = halves(nx, 1), *wh = halves(nw, 2);
            uint16_t *bh = halves((size_t)s->k, 3);
            void *x = device_copy(xh, nx * 2), *w = device_copy(wh, nw * 2);
            void *b = device_copy(bh, (size_t)s->k * 2), *y;
            int reps = n == 1 ? 200 : 10;
            double c1, c2, c3 = 0, m, mc = -1, q = 0;

            CK(cudaMalloc(&y, ny * 2));
            c1 = time_cudnn(h, st, s, n, 0, 0, x, w, b, y, ws, reps, &a1,
                            &q);
            c2 = time_cudnn(h, st, s, n, 1, 0, x, w, b, y, ws, reps, &a2,
                            &q);
            if (heur)
                c3 = time_cudnn(h, st, s, n, 0, 1, x, w, b, y, ws, reps,
                                &a3, &q);
            m = time_mica(ctx, s, n, NULL, xh, wh, bh, reps, &am);
            if (s->groups > 1)
                mc = time_mica(ctx, s, n, "cuda", xh, wh, bh, reps, &ac);
            sum_c += c1;
            sum_m += m;
            printf("%-8s %10.4f %4d %10.4f %4d %10.4f %4d %6.1f %10.4f %4d "
                   "%8.1f%%", s->name, 1e3 * c1, a1, 1e3 * c2, a2, 1e3 * c3,
                   a3, q, 1e3 * m, am, 100.0 * c1 / m);
            if (mc >= 0)
                printf(" %10.4f", 1e3 * mc);
            printf("\n");
            if (csv)
                fprintf(csv, "%s,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%.2f,%d,%d\n",
                        s->name, n, 1e3 * c1, 1e3 * c2, 1e3 * m,
                        mc >= 0 ? 1e3 * mc : -1, 1e3 * c3, a3, q, a1, am);
            fflush(stdout);
            cudaFree(x);
            cudaFree(w);
            cudaFree(b);
            cudaFree(y);
            free(xh);
            free(wh);
            free(bh);
        }
        printf("%-8s %10.4f %4s %10s %4s %10s %4s %6s %10.4f %4s %8.1f%%\n",
               "sum", 1e3 * sum_c, "", "", "", "", "", "", 1e3 * sum_m, "",
               100.0 * sum_c / sum_m);
    }
    if (csv)
        fclose(csv);
    cudnnDestroy(h);
    cudaFree(ws);
    cudaStreamDestroy(st);
    mica_context_destroy(ctx);
    return 0;
}
