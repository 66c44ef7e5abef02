/*
 * core/cuda/cond.cu - the tiny kernels that steer CUDA's conditional
 * graph nodes for loops and conditionals recorded into a graph
 * (core/base/device.h's mica__cond_set_t says what each does): one
 * thread reads a trip count, a predicate or a condition in device memory,
 * keeps a loop's trip and bound, and sets the handles with
 * cudaGraphSetConditional, so that no trip waits for the host.
 */
#include <cuda_runtime.h>
#include <stdint.h>

enum { LOOP_START = 0, LOOP_WHILE = 1, LOOP_NEXT = 2, BRANCH = 3 };

static __global__ void cond_kernel(int32_t op, int32_t is_bool,
                                   const void *value, int64_t limit,
                                   int64_t *state,
                                   cudaGraphConditionalHandle h,
                                   cudaGraphConditionalHandle h2)
{
    switch (op) {
    case LOOP_START: {
        int64_t bound = limit;
        if (value) {
            int64_t v;
            if (is_bool) {
                v = *(const unsigned char *)value ? -1 : 0;
            } else {
                int32_t c = *(const int32_t *)value;
                v = c < 0 ? 0 : c;
            }
            if (v >= 0 && (bound < 0 || v < bound))
                bound = v;
        }
        state[0] = 0;
        state[1] = bound;
        cudaGraphSetConditional(h, bound != 0);
        break;
    }
    case LOOP_WHILE: {
        unsigned p = *(const unsigned char *)value != 0;
        cudaGraphSetConditional(h2, p);
        if (!p)
            cudaGraphSetConditional(h, 0);
        break;
    }
    case LOOP_NEXT: {
        int64_t t = state[0] + 1;
        state[0] = t;
        cudaGraphSetConditional(h, state[1] < 0 || t < state[1]);
        break;
    }
    default: /* BRANCH: an if node with its else body */
        cudaGraphSetConditional(h, *(const unsigned char *)value != 0);
        break;
    }
}

extern "C" cudaError_t mica__cuda_cond_launch(int32_t op,
                                              int32_t value_is_bool,
                                              const void *value,
                                              int64_t limit, int64_t *state,
                                              uint64_t handle,
                                              uint64_t handle2,
                                              cudaStream_t stream)
{
    cond_kernel<<<1, 1, 0, stream>>>(op, value_is_bool, value, limit, state,
                                     (cudaGraphConditionalHandle)handle,
                                     (cudaGraphConditionalHandle)handle2);
    return cudaGetLastError();
}
