/*
 * core/device.c - the device table: the one place that says which devices
 * exist, what they are called, how they rank and how each is opened; and
 * the choice of a build's device (`device: auto` included).
 *
 * A device built as a shared object is loaded on first use, once per
 * process, under a lock; a failure to load it is kept and reported again
 * to every later caller (the object is not tried twice).
 */
#include <config.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "mica_int.h"

#ifndef MICA_DEVICE_DIR_DEFAULT
#define MICA_DEVICE_DIR_DEFAULT "/usr/local/lib/mica"
#endif

/* The table.  Bits in order; `rank` decides `device: auto`. */
static const mica__device_desc_t table[] = {
    {"cpu", "CPU", "processor", MICA_DEVICE_CPU, 0, 0, &mica__device_cpu,
     NULL, NULL},
    {"cuda", "CUDA", "GPU", MICA_DEVICE_CUDA, 10, 1, NULL,
#ifdef MICA_HAVE_CUDA
     "mica_device_cuda.so",
#else
     NULL,
#endif
     "configure --with-cuda"},
};
#define NB_DEVICES ((int32_t)(sizeof table / sizeof table[0]))

/* What opening each device of the table gave, once. */
static struct {
    int tried;
    const mica__device_t *dev;
    void *handle;
    char error[MICA_ERROR_MAX];
} opened[sizeof table / sizeof table[0]];
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static const mica__device_host_t host = {mica__fail};

const mica__device_desc_t *mica__devices(int32_t *n)
{
    *n = NB_DEVICES;
    return table;
}

const mica__device_desc_t *mica__device_desc(uint32_t bit)
{
    int32_t i;
    for (i = 0; i < NB_DEVICES; i++)
        if (table[i].bit == bit)
            return &table[i];
    return NULL;
}

const mica__device_desc_t *mica__device_by_name(const char *name)
{
    int32_t i;
    for (i = 0; name && i < NB_DEVICES; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

uint32_t mica__device_bits(void)
{
    uint32_t bits = 0;
    int32_t i;
    for (i = 0; i < NB_DEVICES; i++)
        bits |= table[i].bit;
    return bits;
}

const char *mica__device_names(uint32_t bits, const char *sep, char *buf,
                               size_t len)
{
    size_t pos = 0;
    int32_t i;

    buf[0] = '\0';
    for (i = 0; i < NB_DEVICES && pos < len; i++)
        if (bits & table[i].bit)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%s",
                                    pos ? sep : "", table[i].name);
    return buf;
}

const char *mica__device_choices(const char *last_sep, char *buf,
                                 size_t len)
{
    size_t pos = (size_t)snprintf(buf, len, "auto");
    int32_t i;

    for (i = 0; i < NB_DEVICES && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s",
                                i == NB_DEVICES - 1 ? last_sep : ", ",
                                table[i].name);
    return buf;
}

/* Load d's shared object into opened[i]; called once, under the lock. */
static void load_object(int32_t i)
{
    const mica__device_desc_t *d = &table[i];
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

mica_status_t mica__device_open(mica_context_t *ctx,
                                const mica__device_desc_t *d,
                                const mica__device_t **out)
{
    int32_t i = (int32_t)(d - table);

    *out = NULL;
    if (d->builtin) {
        *out = d->builtin;
        return MICA_OK;
    }
    if (!d->object)
        return mica__fail(ctx, MICA_ERR_UNSUPPORTED,
                          "device %s: this build of mica has no %s support "
                          "(%s)", d->name, d->title, d->missing);
    pthread_mutex_lock(&open_lock);
    if (!opened[i].tried) {
        opened[i].tried = 1;
        load_object(i);
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
                      opened[d - table].error);
        return 0;
    }
    return dev->usable();
}

const char *mica_device_name(uint32_t device)
{
    const mica__device_desc_t *d = mica__device_desc(device);
    return d ? d->name : NULL;
}

mica_status_t mica_device_parse(const char *name, uint32_t *device)
{
    const mica__device_desc_t *d = mica__device_by_name(name);

    if (name && strcmp(name, "auto") == 0) {
        *device = 0;
        return MICA_OK;
    }
    if (!d)
        return MICA_ERR_NOT_FOUND;
    *device = d->bit;
    return MICA_OK;
}

/* Whether a creator of the context's registry runs on `bit`. */
static int offered(const mica_context_t *ctx, uint32_t bit)
{
    int32_t i, n = mica_registry_count(ctx);
    mica_creator_info_t info;

    for (i = 0; i < n; i++) {
        info.struct_size = sizeof info;
        if (mica_registry_get(ctx, i, &info) == MICA_OK &&
            (info.devices & bit))
            return 1;
    }
    return 0;
}

/* `device: auto`: the usable device of highest rank; says why at info. */
static mica_status_t pick_auto(mica_context_t *ctx, uint32_t *bit,
                               const mica__device_t **dev)
{
    char skipped[MICA_ERROR_MAX] = "", unusable[128];
    size_t pos = 0;
    int32_t done[sizeof table / sizeof table[0]] = {0};
    int32_t k, i, best;

    for (k = 0; k < NB_DEVICES; k++) {
        const mica__device_desc_t *d;
        const char *why = NULL;
        for (best = -1, i = 0; i < NB_DEVICES; i++)
            if (!done[i] && (best < 0 || table[i].rank > table[best].rank))
                best = i;
        done[best] = 1;
        d = &table[best];
        if (!d->builtin && !d->object)
            why = "not in this build";
        else if (!d->builtin && !offered(ctx, d->bit))
            why = "no loaded module implements a layer for it";
        else if (mica__device_open(ctx, d, dev) != MICA_OK)
            why = mica_context_error(ctx);
        else if (!(*dev)->usable()) {
            snprintf(unusable, sizeof unusable, "no usable %s %s in this "
                     "process", d->title, d->unit);
            why = unusable;
        }
        if (!why) {
            *bit = d->bit;
            mica__log(ctx, MICA_LOG_INFO, "device auto: %s%s%s%s", d->name,
                      pos ? " (" : " (the highest-ranked usable device)",
                      skipped, pos ? ")" : "");
            return MICA_OK;
        }
        if (pos < sizeof skipped)
            pos += (size_t)snprintf(skipped + pos, sizeof skipped - pos,
                                    "%s%s skipped: %s", pos ? "; " : "",
                                    d->name, why);
    }
    return mica__fail(ctx, MICA_ERR_UNSUPPORTED, "device auto: no usable "
                      "device (%s)", skipped);
}

mica_status_t mica__device_pick(mica_context_t *ctx, uint32_t asked,
                                uint32_t *bit, const mica__device_t **dev)
{
    const mica__device_desc_t *d = mica__device_desc(asked);
    mica_status_t st;

    *dev = NULL;
    *bit = asked;
    if (asked == 0)
        return pick_auto(ctx, bit, dev);
    if (!d)
        return mica__fail(ctx, MICA_ERR_INVALID, "unknown device %u",
                          (unsigned)asked);
    if ((st = mica__device_open(ctx, d, dev)) != MICA_OK)
        return st;
    if (!(*dev)->usable())
        return mica__fail(ctx, MICA_ERR_UNSUPPORTED,
                          "device %s: no usable %s %s in this process (use "
                          "--device cpu, or auto)", d->name, d->title,
                          d->unit);
    mica__log(ctx, MICA_LOG_INFO, "device %s: as asked", d->name);
    return MICA_OK;
}
