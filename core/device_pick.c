/*
 * core/device_pick.c - the device a build runs on: the one asked for,
 * checked and opened, or for `device: auto` the usable device of highest
 * rank in the table (core/base/device.c), probing a device only when a
 * loaded module implements layers for it.  Says at info level what it
 * chose and why.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "graph.h"

/* Whether a creator of the context's registry runs on `bit`. */
static int offered(const mica_context_t *ctx, uint32_t bit)
{
    int32_t i, n = mica_registry_count(ctx);
    mica_creator_info_t info = {.struct_size = sizeof(mica_creator_info_t)};

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
    int32_t done[32] = {0}, nb; /* one entry per bit: 32 at most */
    const mica__device_desc_t *table = mica__devices(&nb);
    int32_t k, i, best;

    for (k = 0; k < nb; k++) {
        const mica__device_desc_t *d;
        const char *why = NULL;
        for (best = -1, i = 0; i < nb; i++)
            if (!done[i] && (best < 0 || table[i].rank > table[best].rank))
                best = i;
        done[best] = 1;
        d = &table[best];
        if (!d->linked && !d->object)
            why = "not in this build";
        else if (!d->linked && !offered(ctx, d->bit))
            why = "no loaded module implements a layer for it";
        else if (mica__device_open(ctx, d, dev) != MICA_OK) {
            /* The build has it and cannot load it: a broken install, worth
             * more than an info line. */
            why = mica_context_error(ctx);
            mica__log(ctx, MICA_LOG_WARNING, "device auto: %s", why);
        } else if (!(*dev)->usable()) {
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
