/*
 * modules/fill/fill_cuda.cu - the Fill kernel.
 *
 * One grid-stride kernel per output type; the per-element arithmetic is
 * fill.h's, shared with the CPU reference, so both give the same bits.
 * Alpha and beta inputs are read on the device by every block (a few
 * values, cached), so a dynamic alpha/beta costs no host synchronization.
 */
#include <config.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mica/kit_cuda.h"
#include "fill.h"

namespace {

/* The element i of the output, stored. */
template <int OP, mica_dtype_t T>
__device__ void fill_one(const mica__fill_args_t &a, int64_t i, void *out)
{
    if (OP == MICA__FILL_LINSPACE) {
        int64_t c[MICA_MAX_DIMS], rem = i;
        for (int32_t k = a.rank - 1; k >= 0; k--) {
            c[k] = rem % a.dims[k];
            rem /= a.dims[k];
        }
        if (T == MICA_INT32)
            ((int32_t *)out)[i] = mica__fill_linspace_i(&a, c);
        else if (T == MICA_FLOAT16)
            ((uint16_t *)out)[i] =
                mica_kit_float_to_half((float)mica__fill_linspace(&a, c));
        else
            ((float *)out)[i] = (float)mica__fill_linspace(&a, c);
    } else {
        double v = mica__fill_uniform(&a, i);
        if (T == MICA_FLOAT16) {
            ((uint16_t *)out)[i] = mica__fill_clamp16(&a, v);
        } else {
            ((float *)out)[i] = mica__fill_clamp32(&a, v);
        }
    }
}

template <int OP, mica_dtype_t T>
__global__ void fill_kernel(mica__fill_args_t a, const void *alpha_p,
                            mica_dtype_t alpha_t, const void *beta_p,
                            mica_dtype_t beta_t, void *out, int64_t n)
{
    if (alpha_p) {
        int32_t nb = OP == MICA__FILL_LINSPACE ? a.rank : 1;
        a.alpha = mica__fill_param(alpha_p, alpha_t, 0);
        if (T == MICA_INT32)
            a.ialpha = mica__fill_iparam(alpha_p, alpha_t, 0);
        for (int32_t k = 0; k < nb; k++) {
            a.beta[k] = mica__fill_param(beta_p, beta_t, k);
            if (T == MICA_INT32)
                a.ibeta[k] = mica__fill_iparam(beta_p, beta_t, k);
        }
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        fill_one<OP, T>(a, i, out);
}

template <int OP, mica_dtype_t T>
void launch(const mica__fill_args_t *a, const void *alpha_p,
            mica_dtype_t alpha_t, const void *beta_p, mica_dtype_t beta_t,
            void *out, int64_t n, cudaStream_t s)
{
    const unsigned threads = 256;
    fill_kernel<OP, T><<<mica_kit_grid(n, threads), threads, 0, s>>>(
        *a, alpha_p, alpha_t, beta_p, beta_t, out, n);
}

} // namespace

extern "C" mica_status_t mica__fill_cuda(const mica__fill_args_t *a,
                                         const void *alpha_p,
                                         mica_dtype_t alpha_t,
                                         const void *beta_p,
                                         mica_dtype_t beta_t, void *out,
                                         void *stream, mica_error_t *err)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t n = 1;
    for (int32_t k = 0; k < a->rank; k++)
        n *= a->dims[k];
    if (n <= 0)
        return MICA_OK;
    if (a->op == MICA__FILL_LINSPACE) {
        switch (a->dtype) {
        case MICA_INT32:
            launch<MICA__FILL_LINSPACE, MICA_INT32>(a, alpha_p, alpha_t,
                                                    beta_p, beta_t, out, n, s);
            break;
        case MICA_FLOAT16:
            launch<MICA__FILL_LINSPACE, MICA_FLOAT16>(a, alpha_p, alpha_t,
                                                      beta_p, beta_t, out, n,
                                                      s);
            break;
        default:
            launch<MICA__FILL_LINSPACE, MICA_FLOAT32>(a, alpha_p, alpha_t,
                                                      beta_p, beta_t, out, n,
                                                      s);
            break;
        }
    } else if (a->dtype == MICA_FLOAT16) {
        launch<MICA__FILL_RANDOM_UNIFORM, MICA_FLOAT16>(a, alpha_p, alpha_t,
                                                        beta_p, beta_t, out,
                                                        n, s);
    } else {
        launch<MICA__FILL_RANDOM_UNIFORM, MICA_FLOAT32>(a, alpha_p, alpha_t,
                                                        beta_p, beta_t, out,
                                                        n, s);
    }
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    return MICA_OK;
}
