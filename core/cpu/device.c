/*
 * core/cpu/device.c - the CPU device: host memory, no streams; every
 * operation is complete when it returns.  Linked into libmica, it
 * reaches it only through the host table it is given, as a device built
 * as a shared object does.
 */
#include <config.h>

#include "device.h"

#include <stdlib.h>
#include <string.h>

static const mica__device_host_t *host;

static int32_t cpu_usable(void)
{
    return 1;
}

static mica_status_t cpu_alloc(mica_context_t *ctx, size_t bytes, void **out)
{
    /* 64-byte alignment for vector loads; size rounded up as C11 asks. */
    size_t n = (bytes + 63) / 64 * 64;
    *out = aligned_alloc(64, n ? n : 64);
    if (!*out)
        return host->fail(ctx, MICA_ERR_NOMEM,
                          "out of host memory allocating %zu bytes", bytes);
    return MICA_OK;
}

static void cpu_free(void *p)
{
    free(p);
}

static mica_status_t cpu_stream_create(mica_context_t *ctx, void **stream)
{
    (void)ctx;
    *stream = NULL;
    return MICA_OK;
}

static void cpu_stream_destroy(void *stream)
{
    (void)stream;
}

static mica_status_t cpu_copy(mica_context_t *ctx, void *dst, const void *src,
                              size_t bytes, void *stream)
{
    (void)ctx;
    (void)stream;
    if (bytes)
        memcpy(dst, src, bytes);
    return MICA_OK;
}

static mica_status_t cpu_sync(mica_context_t *ctx, void *stream)
{
    (void)ctx;
    (void)stream;
    return MICA_OK;
}

static const mica__device_t cpu_device = {
    .struct_size = sizeof(mica__device_t),
    .build = PACKAGE_VERSION,
    .usable = cpu_usable,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .upload = cpu_copy,
    .download = cpu_copy,
    .sync = cpu_sync,
};

/* Linked into libmica: core/device.c opens the "cpu" entry here. */
const mica__device_t *mica__device_cpu_entry(const mica__device_host_t *h)
{
    host = h;
    return &cpu_device;
}
