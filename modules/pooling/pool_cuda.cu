/*
 * modules/pooling/pool_cuda.cu - the hand-written CUDA Pooling
 * (implementation "cuda", and the cudnn implementation's path for what
 * cuDNN does not compute as mica does): one thread per output element,
 * the definition of pooling.c in float32 (float16 data too), 64-bit
 * indexing, a grid-stride loop.  Channels last (chans > 1): thread i
 * still writes y[i], the channel now innermost, and reads its plane's
 * positions chans apart.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "kit_nn_cuda.h"
#include "pooling.h"

namespace {

struct pool_args {
    int64_t planes, chans, total;
    int64_t in[3], out[3], k[3], stride[3], pre[3], dil[3];
    int type, exclude;
    float blend;
};

template <typename T>
__global__ void pool_kernel(pool_args a, const T *__restrict__ x,
                            T *__restrict__ y)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    /* in float: three window lengths (each below 2^31) may multiply
     * past 64 bits */
    const float size = (float)a.k[0] * (float)a.k[1] * (float)a.k[2];

    for (; i < a.total; i += step) {
        /* y [n, z0, z1, z2, c], c of chans (1: linear, n the plane) */
        int64_t r = i / a.chans, c = i % a.chans, z[3], n, lo[3];
        int64_t a0, a1, a2, p0, p1, p2, valid = 0;
        float mx = -INFINITY, sum = 0.0f, avg, v;
        int d;
        z[2] = r % a.out[2];
        r /= a.out[2];
        z[1] = r % a.out[1];
        r /= a.out[1];
        z[0] = r % a.out[0];
        n = r / a.out[0];
        for (d = 0; d < 3; d++)
            lo[d] = z[d] * a.stride[d] - a.pre[d];
        const T *xp = x + n * a.chans * a.in[0] * a.in[1] * a.in[2] + c;
        /* the window's positions lo + a * dil inside the input */
        for (a0 = 0; a0 < a.k[0]; a0++) {
            p0 = lo[0] + a0 * a.dil[0];
            if (p0 < 0 || p0 >= a.in[0])
                continue;
            for (a1 = 0; a1 < a.k[1]; a1++) {
                p1 = lo[1] + a1 * a.dil[1];
                if (p1 < 0 || p1 >= a.in[1])
                    continue;
                for (a2 = 0; a2 < a.k[2]; a2++) {
                    p2 = lo[2] + a2 * a.dil[2];
                    if (p2 < 0 || p2 >= a.in[2])
                        continue;
                    v = mica__to_f(
                        xp[((p0 * a.in[1] + p1) * a.in[2] + p2) * a.chans]);
                    mx = v > mx ? v : mx;
                    sum += v;
                    valid++;
                }
            }
        }
        if (a.exclude)
            avg = valid ? sum / (float)valid : 0.0f;
        else
            avg = sum / size;
        if (a.type == MICA__POOL_MAX)
            v = mx;
        else if (a.type == MICA__POOL_AVERAGE)
            v = avg;
        else
            v = (a.blend == 1.0f ? 0.0f : (1.0f - a.blend) * mx) +
                a.blend * avg;
        mica__put_f(&y[i], v);
    }
}

} // namespace

extern "C" mica_status_t mica__pool_cuda(const mica__pool_problem_t *pb,
                                         const void *x, void *y, void *stream,
                                         mica_error_t *err)
{
    const mica__pool_params_t *p = pb->p;
    cudaStream_t s = (cudaStream_t)stream;
    pool_args a;
    unsigned blocks;
    int i;

    a.planes = pb->planes;
    a.chans = pb->chans > 0 ? pb->chans : 1; /* 0 channels: no elements */
    a.total = pb->planes * pb->out[0] * pb->out[1] * pb->out[2];
    for (i = 0; i < 3; i++) {
        a.in[i] = pb->in[i];
        a.out[i] = pb->out[i];
        a.k[i] = p->win.k[i];
        a.stride[i] = p->win.stride[i];
        a.pre[i] = p->win.pre[i];
        a.dil[i] = p->win.dil[i];
    }
    a.type = p->type;
    a.exclude = p->exclude_pad;
    a.blend = p->blend;
    if (a.total == 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(a.total, 256);
    if (pb->dtype == MICA_FLOAT16)
        pool_kernel<__half><<<blocks, 256, 0, s>>>(a, (const __half *)x,
                                                   (__half *)y);
    else
        pool_kernel<float><<<blocks, 256, 0, s>>>(a, (const float *)x,
                                                  (float *)y);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
