/*
 * core/device.c - the devices this build has.
 */
#include <config.h>

#include "graph.h"

const mica__device_t *mica__device_get(uint32_t kind)
{
    if (kind == MICA_DEVICE_CPU)
        return &mica__device_cpu;
#ifdef MICA_HAVE_CUDA
    if (kind == MICA_DEVICE_CUDA)
        return &mica__device_cuda;
#endif
    return NULL;
}

int32_t mica_device_usable(mica_device_kind_t device)
{
    const mica__device_t *d = mica__device_get((uint32_t)device);
    return d ? d->usable() : 0;
}
