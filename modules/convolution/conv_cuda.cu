/*
 * modules/convolution/conv_cuda.cu - the hand-written CUDA Convolution and
 * Deconvolution (implementation "cuda", and the cudnn implementation's
 * path for what cuDNN does not take): one thread per output element,
 * the definition of conv_ref.c summed in float32 (float16 data too).
 *
 * Direct, not GEMM: each thread reads its window of C/G input channels.
 * That is what a depthwise or otherwise tiny convolution (few channels
 * per group, small maps) wants, where a library's GEMM-shaped algorithms
 * spend more on setup and layout than on arithmetic; for a big dense
 * convolution cuDNN is the fast path.  Threads of a block run along the
 * output's innermost dimension (neighbouring outputs read neighbouring
 * inputs); 64-bit indexing throughout, a grid-stride loop.
 *
 * Channels last (nhwc): thread i still writes y[i], now the innermost
 * dimension is the output map; x and w are read through strides (a
 * channel's step and a spatial position's step), the sums unchanged.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "kit_nn_cuda.h"
#include "conv.h"

namespace {

/* The problem as plain values, passed by value to the kernel. */
struct conv_args {
    int64_t n, c, m, groups, total;
    int64_t in[3], out[3], k[3], stride[3], dil[3], pre[3];
    int deconv, has_bias, nhwc;
};

template <typename T>
__global__ void conv_kernel(conv_args a, const T *__restrict__ x,
                            const T *__restrict__ w,
                            const T *__restrict__ bias, T *__restrict__ y)
{
    const int64_t cpg = a.c / a.groups, mpg = a.m / a.groups;
    const int64_t kvol = a.k[0] * a.k[1] * a.k[2];
    const int64_t ivol = a.in[0] * a.in[1] * a.in[2];
    /* Steps of x per channel and per spatial position; of w per second
     * filter index (c, or o' for deconv) and per tap. */
    const int64_t xcs = a.nhwc ? 1 : ivol, xss = a.nhwc ? a.c : 1;
    const int64_t wb = a.deconv ? mpg : cpg;
    const int64_t wcs = a.nhwc ? 1 : kvol, wks = a.nhwc ? wb : 1;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (; i < a.total; i += step) {
        int64_t r = i, z[3], o = 0, n, g, c, kd, kh, kw;
        float acc;
        if (a.nhwc) { /* y [n, z0, z1, z2, o] */
            o = r % a.m;
            r /= a.m;
        }
        z[2] = r % a.out[2];
        r /= a.out[2];
        z[1] = r % a.out[1];
        r /= a.out[1];
        z[0] = r % a.out[0];
        r /= a.out[0];
        if (!a.nhwc) { /* y [n, o, z0, z1, z2] */
            o = r % a.m;
            r /= a.m;
        }
        n = r;
        g = o / mpg;
        acc = a.has_bias ? mica__to_f(bias[o]) : 0.0f;
        for (c = 0; c < cpg; c++) {
            /* conv: channel g*cpg + c, weights [o, c, ...];
             * deconv: channel g*cpg + c, weights [g*cpg + c, o', ...]
             * (channels last: [o, ..., c] and [g*cpg + c, ..., o']) */
            const int64_t ch = g * cpg + c;
            const T *xc = x + n * a.c * ivol + ch * xcs;
            const T *wc = a.deconv
                              ? w + ch * wb * kvol + (o - g * mpg) * wcs
                              : w + o * wb * kvol + c * wcs;
            for (kd = 0; kd < a.k[0]; kd++) {
                int64_t p0;
                if (a.deconv) {
                    int64_t t = z[0] + a.pre[0] - kd * a.dil[0];
                    if (t < 0 || t % a.stride[0])
                        continue;
                    p0 = t / a.stride[0];
                } else {
                    p0 = z[0] * a.stride[0] - a.pre[0] + kd * a.dil[0];
                }
                if (p0 < 0 || p0 >= a.in[0])
                    continue;
                for (kh = 0; kh < a.k[1]; kh++) {
                    int64_t p1;
                    if (a.deconv) {
                        int64_t t = z[1] + a.pre[1] - kh * a.dil[1];
                        if (t < 0 || t % a.stride[1])
                            continue;
                        p1 = t / a.stride[1];
                    } else {
                        p1 = z[1] * a.stride[1] - a.pre[1] + kh * a.dil[1];
                    }
                    if (p1 < 0 || p1 >= a.in[1])
                        continue;
                    for (kw = 0; kw < a.k[2]; kw++) {
                        int64_t p2;
                        if (a.deconv) {
                            int64_t t = z[2] + a.pre[2] - kw * a.dil[2];
                            if (t < 0 || t % a.stride[2])
                                continue;
                            p2 = t / a.stride[2];
                        } else {
                            p2 = z[2] * a.stride[2] - a.pre[2] +
                                 kw * a.dil[2];
                        }
                        if (p2 < 0 || p2 >= a.in[2])
                            continue;
                        acc += mica__to_f(
                                   xc[((p0 * a.in[1] + p1) * a.in[2] + p2) *
                                      xss]) *
                               mica__to_f(
                                   wc[((kd * a.k[1] + kh) * a.k[2] + kw) *
                                      wks]);
                    }
                }
            }
        }
        mica__put_f(&y[i], acc);
    }
}

/* Element i of a hash of i in [-1, 1) (multiples of 1/1024). */
__device__ __forceinline__ float noise(int64_t i)
{
    uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (float)(int)(h % 2048u) / 1024.0f - 1.0f;
}

template <typename T>
__global__ void fill_kernel(T *__restrict__ p, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x;

    for (; i < n; i += step)
        mica__put_f(&p[i], noise(i));
}

} // namespace

extern "C" mica_status_t mica__conv_cuda_fill(void *p, int64_t n,
                                              mica_dtype_t dtype,
                                              void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned blocks;

    if (n <= 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(n, 256);
    if (dtype == MICA_FLOAT16)
        fill_kernel<__half><<<blocks, 256, 0, s>>>((__half *)p, n);
    else
        fill_kernel<float><<<blocks, 256, 0, s>>>((float *)p, n);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}

extern "C" mica_status_t mica__conv_cuda(const mica__conv_problem_t *pb,
                                         int nhwc, const void *x,
                                         const void *w, const void *bias,
                                         void *y, void *stream,
                                         mica_error_t *err)
{
    const mica__conv_params_t *p = pb->p;
    cudaStream_t s = (cudaStream_t)stream;
    conv_args a;
    unsigned blocks;
    int i;

    a.n = pb->n;
    a.c = pb->c;
    a.m = pb->m;
    a.groups = p->groups;
    a.total = pb->n * pb->m * pb->out[0] * pb->out[1] * pb->out[2];
    for (i = 0; i < 3; i++) {
        a.in[i] = pb->in[i];
        a.out[i] = pb->out[i];
        a.k[i] = p->win.k[i];
        a.stride[i] = p->win.stride[i];
        a.dil[i] = p->win.dil[i];
        a.pre[i] = p->win.pre[i];
    }
    a.deconv = p->deconv;
    a.has_bias = bias != NULL;
    a.nhwc = nhwc != 0;
    if (a.total == 0)
        return MICA_OK; /* never launch an empty grid */
    blocks = mica_kit_grid(a.total, 256);
    if (pb->dtype == MICA_FLOAT16)
        conv_kernel<__half><<<blocks, 256, 0, s>>>(
            a, (const __half *)x, (const __half *)w, (const __half *)bias,
            (__half *)y);
    else
        conv_kernel<float><<<blocks, 256, 0, s>>>(
            a, (const float *)x, (const float *)w, (const float *)bias,
            (float *)y);
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
