/*
 * core/device.c - opening the devices of the table (core/base/device.c):
 * one linked into libmica through its entry here, one built as a shared
 * object by loading it from $MICA_DEVICE_DIR (default $(pkglibdir)) on
 * first use, once per process, under a lock.  A failure to load it is
 * kept and reported again to every later caller (the object is not
 * tried twice).
 */
#include <config.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#ifndef MICA_DEVICE_DIR_DEFAULT
#define MICA_DEVICE_DIR_DEFAULT "/usr/local/lib/mica"
#endif

/* The entries of the devices linked into libmica (`linked` in the
 * table). */
static const struct {
    uint32_t bit;
    mica__device_entry_fn entry;
} linked[] = {
    {MICA_DEVICE_CPU, mica__device_cpu_entry},
};

/* What opening each device gave, once; by bit position. */
static struct {
    int tried;
    const mica__device_t *dev;
    void *handle;
    char error[MICA_ERROR_MAX];
} opened[32];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static const mica__device_host_t host = {mica__fail};

/* The bit position of one device bit. */
static int32_t slot_of(uint32_t bit)
{
    int32_t i = 0;
    while (i < 31 && !(bit & (1u << i)))
        i++;
    return i;
}

/* Load d's shared object into opened[i]; called once, under the lock. */
static void load_object(const mica__device_desc_t *d, int32_t i)
{
    const char *dir = getenv("MICA_DEVICE_DIR");
    mica__device_entry_fn entry;
    const mica__device_t *dev;
    char path[4096];
    void *h;

    if (!dir || !dir[0])
        dir = MICA_DEVICE_DIR_DEFAULT;
    snprintf(path, sizeof path, "%s/%s", dir, d->object);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(opened[i].error, sizeof opened[i].error,
                 "device %s: %.600s (MICA_DEVICE_DIR names the folder of "
                 "%s)", d->name, dlerror(), d->object);
        return;
    }
    *(void **)&entry = dlsym(h, MICA__DEVICE_ENTRY);
    dev = entry ? entry(&host) : NULL;
    if (!dev || dev->struct_size != sizeof *dev ||
        !dev->build || strcmp(dev->build, PACKAGE_VERSION) != 0) {
        snprintf(opened[i].error, sizeof opened[i].error,
                 "device %s: %.600s is not this mica's (%s %s, libmica %s)",
                 d->name, path, entry ? "built for" : "no entry point",
                 dev && dev->build ? dev->build : "?", PACKAGE_VERSION);
        dlclose(h);
        return;
    }
    opened[i].handle = h;
    opened[i].dev = dev;
}

/* Open a linked device into opened[i]; called once, under the lock. */
static void open_linked(const mica__device_desc_t *d, int32_t i)
{
    size_t k;
    for (k = 0; k < sizeof linked / sizeof linked[0]; k++)
        if (linked[k].bit == d->bit)
            opened[i].dev = linked[k].entry(&host);
    if (!opened[i].dev)
        snprintf(opened[i].error, sizeof opened[i].error, "device %s: "
                 "linked into libmica but without an entry", d->name);
}

mica_status_t mica__device_open(mica_context_t *ctx,
                                const mica__device_desc_t *d,
                                const mica__device_t **out)
{
    int32_t i = slot_of(d->bit);

    *out = NULL;
    if (!d->linked && !d->object)
        return mica__fail(ctx, MICA_ERR_UNSUPPORTED,
                          "device %s: this build of mica has no %s support "
                          "(%s)", d->name, d->title, d->missing);
    pthread_mutex_lock(&open_lock);
    if (!opened[i].tried) {
        opened[i].tried = 1;
        if (d->linked)
            open_linked(d, i);
        else
            load_object(d, i);
    }
    pthread_mutex_unlock(&open_lock);
    if (!opened[i].dev)
        return mica__fail(ctx, MICA_ERR_UNSUPPORTED, "%s", opened[i].error);
    *out = opened[i].dev;
    return MICA_OK;
}

int32_t mica_device_usable(mica_device_kind_t device)
{
    const mica__device_desc_t *d = mica__device_desc((uint32_t)device);
    const mica__device_t *dev;
    static int said;

    if (!d)
        return 0;
    if (mica__device_open(NULL, d, &dev) != MICA_OK) {
        /* The build has it but cannot load it: say why, once. */
        if (d->object && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            mica__log(NULL, MICA_LOG_WARNING, "%s",
                      opened[slot_of(d->bit)].error);
        return 0;
    }
    return dev->usable();
}
