/*
 * core/cuda/device.c - the CUDA device: a device arena allocated once per
 * execution context, one stream per context, asynchronous copies, and
 * CUDA graphs of a context's enqueue.
 *
 * Built as a shared object of its own (mica_device_cuda.so in
 * $(pkglibdir)), which libmica opens the first time a CUDA device is
 * used (core/device.c): only then are the CUDA runtime and the driver
 * loaded.  It reaches libmica only through the host table it is given.
 *
 * Written against the CUDA runtime's C API, so it compiles with the C
 * compiler; only kernels need nvcc.
 */
#include <config.h>

#include "device.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const mica__device_host_t *host;

/* Record a failed CUDA call on ctx with the call, file and line. */
#define CUDA_TRY(ctx, call)                                                  \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess)                                               \
            return host->fail((ctx), MICA_ERR_DEVICE,                        \
                              "%s failed: %s (%s:%d)", #call,                \
                              cudaGetErrorString(e_), __FILE__, __LINE__);   \
    } while (0)

static int32_t cuda_usable(void)
{
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
        if (!cached)
            (void)cudaGetLastError(); /* clear the sticky-less error */
    }
    return cached;
}

static mica_status_t cuda_alloc(mica_context_t *ctx, size_t bytes, void **out)
{
    cudaError_t e = cudaMalloc(out, bytes ? bytes : 256);
    if (e != cudaSuccess)
        return host->fail(ctx, MICA_ERR_NOMEM,
                          "cudaMalloc of %zu bytes failed: %s", bytes,
                          cudaGetErrorString(e));
    return MICA_OK;
}

static void cuda_free(void *p)
{
    cudaFree(p);
}

static mica_status_t cuda_stream_create(mica_context_t *ctx, void **stream)
{
    cudaStream_t s;
    CUDA_TRY(ctx, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = s;
    return MICA_OK;
}

static void cuda_stream_destroy(void *stream)
{
    cudaStreamDestroy((cudaStream_t)stream);
}

static mica_status_t cuda_upload(mica_context_t *ctx, void *dst,
                                 const void *src, size_t bytes, void *stream)
{
    CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                  (cudaStream_t)stream));
    return MICA_OK;
}

static mica_status_t cuda_download(mica_context_t *ctx, void *dst,
                                   const void *src, size_t bytes, void *stream)
{
    CUDA_TRY(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                                  (cudaStream_t)stream));
    return MICA_OK;
}

static mica_status_t cuda_sync(mica_context_t *ctx, void *stream)
{
    CUDA_TRY(ctx, cudaStreamSynchronize((cudaStream_t)stream));
    return MICA_OK;
}

/* Markers are CUDA events with timing. */
static mica_status_t cuda_marker_create(mica_context_t *ctx, void **marker)
{
    cudaEvent_t ev;
    CUDA_TRY(ctx, cudaEventCreate(&ev));
    *marker = ev;
    return MICA_OK;
}

static void cuda_marker_destroy(void *marker)
{
    cudaEventDestroy((cudaEvent_t)marker);
}

static mica_status_t cuda_marker_record(mica_context_t *ctx, void *marker,
                                        void *stream)
{
    CUDA_TRY(ctx, cudaEventRecord((cudaEvent_t)marker, (cudaStream_t)stream));
    return MICA_OK;
}

static mica_status_t cuda_marker_elapsed(mica_context_t *ctx, void *from,
                                         void *to, double *ms)
{
    float f = 0;
    CUDA_TRY(ctx, cudaEventSynchronize((cudaEvent_t)to));
    CUDA_TRY(ctx, cudaEventElapsedTime(&f, (cudaEvent_t)from,
                                       (cudaEvent_t)to));
    *ms = f;
    return MICA_OK;
}

static mica_status_t cuda_host_alloc(mica_context_t *ctx, size_t bytes,
                                     void **out)
{
    cudaError_t e = cudaMallocHost(out, bytes ? bytes : 1);
    if (e != cudaSuccess)
        return host->fail(ctx, MICA_ERR_NOMEM,
                          "cudaMallocHost of %zu bytes failed: %s", bytes,
                          cudaGetErrorString(e));
    return MICA_OK;
}

static void cuda_host_free(void *p)
{
    cudaFreeHost(p);
}

/*
 * CUDA graphs (core/exec_graph.c).  Capture is thread-local: a call of
 * this thread that cannot be captured (a host wait, cudaMalloc) fails and
 * invalidates the capture, so that no graph misses work; other threads,
 * other contexts' enqueues and allocations included, are not affected,
 * as they would be with the global mode.  The relaxed mode would let an
 * allocation made while enqueuing slip by unrecorded.
 */
static mica_status_t cuda_capture_begin(mica_context_t *ctx, void *stream)
{
    CUDA_TRY(ctx, cudaStreamBeginCapture((cudaStream_t)stream,
                                         cudaStreamCaptureModeThreadLocal));
    return MICA_OK;
}

static mica_status_t cuda_capture_end(mica_context_t *ctx, void *stream,
                                      void **graph)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaError_t e = cudaStreamEndCapture((cudaStream_t)stream, &g);
    const char *call = "cudaStreamEndCapture";

    *graph = NULL;
    if (e == cudaSuccess && g) {
        call = "cudaGraphInstantiate";
        e = cudaGraphInstantiate(&x, g, 0);
    } else if (e == cudaSuccess) {
        e = cudaErrorStreamCaptureInvalidated;
    }
    if (g)
        cudaGraphDestroy(g);
    /* Capture errors are not sticky: clear the one pending, so that the
     * next launch's cudaGetLastError() does not report it. */
    (void)cudaGetLastError();
    if (e != cudaSuccess)
        return host->fail(ctx, MICA_ERR_DEVICE, "%s failed: %s", call,
                          cudaGetErrorString(e));
    *graph = x;
    return MICA_OK;
}

static int32_t cuda_capture_ok(void *stream)
{
    enum cudaStreamCaptureStatus c = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &c) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return c == cudaStreamCaptureStatusActive;
}

static mica_status_t cuda_graph_launch(mica_context_t *ctx, void *graph,
                                       void *stream)
{
    CUDA_TRY(ctx, cudaGraphLaunch((cudaGraphExec_t)graph,
                                  (cudaStream_t)stream));
    return MICA_OK;
}

static void cuda_graph_destroy(void *graph)
{
    cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* The identity of the current GPU for the timing cache: its name,
 * compute capability and multiprocessors, the runtime's and driver's
 * versions, and cuDNN's (libcudnn.so.9 opened to ask it; "none" where it
 * is missing), which decides the convolutions' tactics. */
static void cuda_identity(char *buf, size_t len)
{
    struct cudaDeviceProp p;
    int dev = 0, rt = 0, drv = 0;
    size_t cudnn = 0;
    void *lib;

    memset(&p, 0, sizeof p);
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(buf, len, "cuda: no device");
        return;
    }
    (void)cudaRuntimeGetVersion(&rt);
    (void)cudaDriverGetVersion(&drv);
    if ((lib = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL)) != NULL) {
        size_t (*version)(void) = (size_t(*)(void))dlsym(lib,
                                                          "cudnnGetVersion");
        cudnn = version ? version() : 0;
        dlclose(lib);
    }
    snprintf(buf, len, "cuda: %s, sm_%d%d, %d SMs, runtime %d, driver %d, "
             "cudnn %zu", p.name, p.major, p.minor, p.multiProcessorCount,
             rt, drv, cudnn);
}

/* ---- loops and conditionals in graphs: conditional nodes ----------------
 *
 * A node is added to the graph being captured on `stream` after the work
 * captured so far (cudaStreamGetCaptureInfo's graph and dependencies),
 * the stream then depends on it alone, and its body graph is captured on
 * a stream of its own (cudaStreamBeginCaptureToGraph) until cond_end.
 * The handle belongs to the graph the node is in; the kernels that set
 * it run before the node or inside its body (core/cuda/cond.cu). */

/* core/cuda/cond.cu */
cudaError_t mica__cuda_cond_launch(int32_t op, int32_t value_is_bool,
                                   const void *value, int64_t limit,
                                   int64_t *state, uint64_t handle,
                                   uint64_t handle2, cudaStream_t stream);

/* The graph being captured on s and its dependencies now. */
static mica_status_t capture_info(mica_context_t *ctx, cudaStream_t s,
                                  cudaGraph_t *graph,
                                  const cudaGraphNode_t **deps, size_t *n)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;

    CUDA_TRY(ctx, cudaStreamGetCaptureInfo(s, &cs, NULL, graph, deps, NULL,
                                           n));
    if (cs != cudaStreamCaptureStatusActive)
        return host->fail(ctx, MICA_ERR_DEVICE, "a conditional node on a "
                          "stream that is not being captured");
    return MICA_OK;
}

static mica_status_t cuda_cond_handle(mica_context_t *ctx, void *stream,
                                      uint64_t *handle)
{
    cudaGraphConditionalHandle h;
    const cudaGraphNode_t *deps;
    cudaGraph_t graph;
    size_t n = 0;
    mica_status_t st;

    if ((st = capture_info(ctx, (cudaStream_t)stream, &graph, &deps, &n)) !=
        MICA_OK)
        return st;
    CUDA_TRY(ctx, cudaGraphConditionalHandleCreate(&h, graph, 0, 0));
    *handle = (uint64_t)h;
    return MICA_OK;
}

static mica_status_t cuda_cond_node(mica_context_t *ctx, void *stream,
                                    int32_t kind, uint64_t handle,
                                    int32_t bodies, void **graphs)
{
    cudaStream_t s = (cudaStream_t)stream;
    const cudaGraphNode_t *deps;
    struct cudaGraphNodeParams p;
    cudaGraphNode_t node;
    cudaGraph_t graph;
    size_t n = 0;
    int32_t i;
    mica_status_t st;

#if CUDART_VERSION < 12080
    /* An if node's else body came with CUDA 12.8. */
    if (bodies > 1)
        return host->fail(ctx, MICA_ERR_UNSUPPORTED, "an if node with an "
                          "else body needs CUDA 12.8 (built with %d)",
                          (int)CUDART_VERSION);
#endif
    if ((st = capture_info(ctx, s, &graph, &deps, &n)) != MICA_OK)
        return st;
    memset(&p, 0, sizeof p);
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = (cudaGraphConditionalHandle)handle;
    p.conditional.type = kind == MICA__COND_NODE_WHILE ? cudaGraphCondTypeWhile
                                                       : cudaGraphCondTypeIf;
    p.conditional.size = (unsigned)bodies;
    CUDA_TRY(ctx, cudaGraphAddNode(&node, graph, deps, NULL, n, &p));
    CUDA_TRY(ctx, cudaStreamUpdateCaptureDependencies(
                      s, &node, NULL, 1, cudaStreamSetCaptureDependencies));
    for (i = 0; i < bodies; i++)
        graphs[i] = p.conditional.phGraph_out[i];
    return MICA_OK;
}

static mica_status_t cuda_cond_body(mica_context_t *ctx, void *body_stream,
                                    void *graph)
{
    CUDA_TRY(ctx, cudaStreamBeginCaptureToGraph(
                      (cudaStream_t)body_stream, (cudaGraph_t)graph, NULL,
                      NULL, 0, cudaStreamCaptureModeThreadLocal));
    return MICA_OK;
}

static mica_status_t cuda_cond_end(mica_context_t *ctx, void *body_stream)
{
    cudaGraph_t g = NULL;
    /* The body graph is the node's: not destroyed here. */
    CUDA_TRY(ctx, cudaStreamEndCapture((cudaStream_t)body_stream, &g));
    return MICA_OK;
}

static mica_status_t cuda_cond_set(mica_context_t *ctx, void *stream,
                                   const mica__cond_set_t *w)
{
    CUDA_TRY(ctx, mica__cuda_cond_launch(w->op, w->value_dtype == MICA_BOOL,
                                         w->value, w->limit, w->state,
                                         w->handle, w->handle2,
                                         (cudaStream_t)stream));
    return MICA_OK;
}

static const mica__device_t cuda_device = {
    .struct_size = sizeof(mica__device_t),
    .build = PACKAGE_VERSION,
    .usable = cuda_usable,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .upload = cuda_upload,
    .download = cuda_download,
    .sync = cuda_sync,
    .marker_create = cuda_marker_create,
    .marker_destroy = cuda_marker_destroy,
    .marker_record = cuda_marker_record,
    .marker_elapsed = cuda_marker_elapsed,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .capture_ok = cuda_capture_ok,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    .identity = cuda_identity,
    .cond_handle = cuda_cond_handle,
    .cond_node = cuda_cond_node,
    .cond_body = cuda_cond_body,
    .cond_end = cuda_cond_end,
    .cond_set = cuda_cond_set,
};

/* The one exported symbol: libmica calls it once, on first use. */
MICA_EXPORT const mica__device_t *mica__device_entry(
    const mica__device_host_t *h);
const mica__device_t *mica__device_entry(const mica__device_host_t *h)
{
    host = h;
    return &cuda_device;
}
