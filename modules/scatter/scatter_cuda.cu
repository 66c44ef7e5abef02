/*
 * modules/scatter/scatter_cuda.cu - Scatter on CUDA.
 *
 * out = data (a device copy unless in place), then one thread per update
 * element computes its target as the CPU reference does (scatter.c) and
 * writes it.  A thread whose index is out of range writes nothing and
 * records itself in the workspace's error record (the first one to
 * claim it wins, by atomicCAS); the record is copied back to pinned
 * host memory and the stream synchronized, and a claimed record becomes
 * the call's error.
 *
 * Cost of the check: a 64-byte memset before the kernel and a 64-byte
 * copy back after it, plus a synchronization of the stream: the host
 * waits for the work queued before it, once per run of the layer.  While
 * the stream is captured into a CUDA graph nothing can be read back: the
 * check then only prevents the write.
 */
#include <config.h>

#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"

#include "scatter.h"

namespace {

/* The error record in the workspace. */
struct record {
    int32_t claimed;
    int32_t axis;
    int64_t where; /* indices element, or tuple in nd mode */
    int64_t value;
    int32_t nd;
};

__device__ void report(record *rec, int32_t axis, int64_t where,
                       int64_t value, int32_t nd)
{
    if (atomicCAS(&rec->claimed, 0, 1) == 0) {
        rec->axis = axis;
        rec->where = where;
        rec->value = value;
        rec->nd = nd;
    }
}

template <typename T>
__global__ void scatter_kernel(mica__scatter_t p, const int32_t *indices,
                               const T *updates, T *out, record *rec)
{
    for (int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
         u < p.n_updates; u += (int64_t)gridDim.x * blockDim.x) {
        int64_t off = 0;
        bool good = true;
        if (p.mode == MICA__SCATTER_ELEMENT) {
            int64_t rest = u, stride = 1;
            for (int a = p.rank - 1; a >= 0; a--) {
                int64_t c = rest % p.idx[a];
                rest /= p.idx[a];
                if (a == p.axis) {
                    int64_t v = indices[u], size = p.data[a];
                    if (v < -size || v >= size) {
                        report(rec, a, u, v, 0);
                        good = false;
                        break;
                    }
                    c = v < 0 ? v + size : v;
                }
                off += c * stride;
                stride *= p.data[a];
            }
        } else {
            int64_t t = u / p.slice, e = u % p.slice;
            for (int a = 0; a < p.k; a++) {
                int64_t v = indices[t * p.k + a], size = p.data[a];
                if (v < -size || v >= size) {
                    report(rec, a, t, v, 1);
                    good = false;
                    break;
                }
                off = off * size + (v < 0 ? v + size : v);
            }
            off = off * p.slice + e;
        }
        if (good)
            out[off] = updates[u];
    }
}

template <typename T>
void launch(const mica__scatter_t *p, const int32_t *indices,
            const void *updates, void *out, record *rec, cudaStream_t s)
{
    scatter_kernel<T><<<mica_kit_grid(p->n_updates, 256), 256, 0, s>>>(
        *p, indices, (const T *)updates, (T *)out, rec);
}

} // namespace

extern "C" mica_status_t mica__scatter_cuda(const mica__scatter_t *p,
                                            const void *data,
                                            const int32_t *indices,
                                            const void *updates, void *out,
                                            void *workspace, void **pinned,
                                            void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    record *rec = (record *)workspace;
    const record *host;

    static_assert(sizeof(record) <= MICA__SCATTER_WORKSPACE,
                  "the error record fits the workspace");
    if (data != out)
        MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(out, data,
                                            (size_t)p->n_data * p->esize,
                                            cudaMemcpyDeviceToDevice, s));
    if (p->n_updates == 0)
        return MICA_OK; /* never a zero-block grid */
    MICA_KIT_CUDA_CHECK(cudaMemsetAsync(rec, 0, sizeof(record), s));
    switch (p->esize) {
    case 1: launch<uint8_t>(p, indices, updates, out, rec, s); break;
    case 2: launch<uint16_t>(p, indices, updates, out, rec, s); break;
    case 4: launch<uint32_t>(p, indices, updates, out, rec, s); break;
    case 8: launch<uint64_t>(p, indices, updates, out, rec, s); break;
    default:
        return MICA_KIT_FAIL(err, "Scatter on CUDA: elements of %zu bytes",
                             p->esize);
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    MICA_KIT_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
    if (capture != cudaStreamCaptureStatusNone)
        return MICA_OK;
    if (!*pinned)
        MICA_KIT_CUDA_CHECK(cudaHostAlloc(pinned, sizeof(record),
                                          cudaHostAllocDefault));
    MICA_KIT_CUDA_CHECK(cudaMemcpyAsync(*pinned, rec, sizeof(record),
                                        cudaMemcpyDeviceToHost, s));
    MICA_KIT_CUDA_CHECK(cudaStreamSynchronize(s));
    host = (const record *)*pinned;
    if (host->claimed) {
        int64_t size = p->data[host->axis];
        mica_kit_host->set_error(err, MICA__SCATTER_RANGE_FMT,
                                 (long long)host->value,
                                 host->nd ? "indices tuple"
                                          : "indices element",
                                 (long long)host->where, (int)host->axis,
                                 (long long)size, (long long)size,
                                 (long long)size - 1);
        return MICA_ERR_RUNTIME;
    }
    return MICA_OK;
}

extern "C" void mica__scatter_cuda_free(void *pinned)
{
    if (pinned)
        cudaFreeHost(pinned);
}
