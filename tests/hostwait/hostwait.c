/*
 * tests/hostwait/hostwait.c - a test module whose CUDA layers wait for
 * the host while enqueuing, as a layer that reads a value back does, so
 * that tests/test_cuda_graph.c can see a capture fail and fall back.
 *
 * "HostWait" (x -> y = x) checks for an error left pending (as after a
 * launch), copies its input, then synchronizes its stream and reports
 * the failure (MICA_KIT_CUDA_CHECK: a capture makes the wait fail, and
 * the layer-by-layer run after it must not see that error again);
 * "HostWaitQuiet" ignores that failure (and clears it), as a careless
 * module would, so that only the capture's own state tells.  On the CPU,
 * both are a copy.  Not installed.
 */
#include <config.h>

#include <string.h>

#include "mica/kit.h"

#if MICA_KIT_CUDA
#include <cuda_runtime_api.h>

#include "mica/kit_cuda.h"
#endif

static size_t bytes_of(const mica_tensor_desc_t *d)
{
    return (size_t)mica_dims_volume(&d->dims) * mica_dtype_size(d->dtype);
}

static MICA_KIT_ENQUEUE(copy_cpu)
{
    size_t n = bytes_of(&in[0]);
    if (n)
        memcpy(outputs[0], inputs[0], n);
    return MICA_OK;
}

#if MICA_KIT_CUDA
/* Copy, then wait; `quiet`: the wait's failure is ignored. */
static mica_status_t copy_wait(const mica_tensor_desc_t *in,
                               const void *const *inputs,
                               void *const *outputs, void *stream, int quiet,
                               mica_error_t *err)
{
    mica_status_t st;
    size_t n = bytes_of(&in[0]);
    /* As after a launch: an error left pending fails here. */
    MICA_KIT_CUDA_CHECK(cudaGetLastError());
    if (n && (st = mica_kit_cuda_copy(outputs[0], inputs[0], n, stream,
                                      err)) != MICA_OK)
        return st;
    if (quiet) {
        if (cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess)
            (void)cudaGetLastError();
        return MICA_OK;
    }
    MICA_KIT_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)stream));
    return MICA_OK;
}

static MICA_KIT_ENQUEUE(wait_cuda)
{
    return copy_wait(in, inputs, outputs, stream, 0, err);
}

static MICA_KIT_ENQUEUE(quiet_cuda)
{
    return copy_wait(in, inputs, outputs, stream, 1, err);
}
#endif

MICA_KIT_LAYER_PAIR(wait, "HostWait", NULL, 0, mica_kit_layer_create,
                    copy_cpu, wait_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = mica_kit_same_dtypes,
                    .output_dims = mica_kit_same_dims,
                    .supports_format = mica_kit_float_linear)
MICA_KIT_LAYER_PAIR(quiet, "HostWaitQuiet", NULL, 0, mica_kit_layer_create,
                    copy_cpu, quiet_cuda,
                    .nb_outputs = mica_kit_one_output,
                    .output_dtypes = mica_kit_same_dtypes,
                    .output_dims = mica_kit_same_dims,
                    .supports_format = mica_kit_float_linear)

static const mica_layer_creator_t *const creators[] = {
    MICA_KIT_PAIR(wait), MICA_KIT_PAIR(quiet)};

MICA_KIT_ENTRY("hostwait", PACKAGE_VERSION, "MIT",
               "test layers that wait for the host while enqueuing",
               creators)
