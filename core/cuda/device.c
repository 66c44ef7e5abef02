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
};

/* The one exported symbol: libmica calls it once, on first use. */
MICA_EXPORT const mica__device_t *mica__device_entry(
    const mica__device_host_t *h);
const mica__device_t *mica__device_entry(const mica__device_host_t *h)
{
    host = h;
    return &cuda_device;
}
