/*
 * core/cpu/device.c - the CPU device: host memory, no streams; every
 * operation is complete when it returns.  Linked into libmica, it
 * reaches it only through the host table it is given, as a device built
 * as a shared object does.
 */
#include <config.h>

#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* A marker is the host clock when it was recorded: the CPU's work is
 * done when enqueue returns. */
static mica_status_t cpu_marker_create(mica_context_t *ctx, void **marker)
{
    *marker = calloc(1, sizeof(struct timespec));
    if (!*marker)
        return host->fail(ctx, MICA_ERR_NOMEM, "out of host memory");
    return MICA_OK;
}

static mica_status_t cpu_marker_record(mica_context_t *ctx, void *marker,
                                       void *stream)
{
    (void)stream;
    if (clock_gettime(CLOCK_MONOTONIC, (struct timespec *)marker) != 0)
        return host->fail(ctx, MICA_ERR_DEVICE, "clock_gettime failed");
    return MICA_OK;
}

static mica_status_t cpu_marker_elapsed(mica_context_t *ctx, void *from,
                                        void *to, double *ms)
{
    const struct timespec *a = from, *b = to;
    (void)ctx;
    *ms = (double)(b->tv_sec - a->tv_sec) * 1e3 +
          (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
    return MICA_OK;
}

static mica_status_t cpu_host_alloc(mica_context_t *ctx, size_t bytes,
                                    void **out)
{
    *out = malloc(bytes ? bytes : 1);
    if (!*out)
        return host->fail(ctx, MICA_ERR_NOMEM,
                          "out of host memory allocating %zu bytes", bytes);
    return MICA_OK;
}

/* The CPU's model (the first "model name" of /proc/cpuinfo) and the
 * number of processors online, for the timing cache. */
static void cpu_identity(char *buf, size_t len)
{
    char line[512], model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
    snprintf(buf, len, "cpu: %s, %ld processors", model, n);
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
    .marker_create = cpu_marker_create,
    .marker_destroy = free,
    .marker_record = cpu_marker_record,
    .marker_elapsed = cpu_marker_elapsed,
    .host_alloc = cpu_host_alloc,
    .host_free = free,
    .identity = cpu_identity,
};

/* Linked into libmica: core/device.c opens the "cpu" entry here. */
const mica__device_t *mica__device_cpu_entry(const mica__device_host_t *h)
{
    host = h;
    return &cpu_device;
}
