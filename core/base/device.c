/*
 * core/base/device.c - the device table: the one place that says which
 * devices exist, what they are called, how they rank and how each is
 * opened.  Opening them is core/device.c's, the choice of a build's
 * device core/device_pick.c's.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "device.h"
#include "mica_int.h"

/* The table.  Bits in order; `rank` decides `device: auto`. */
static const mica__device_desc_t table[] = {
    {.name = "cpu", .title = "CPU", .unit = "processor",
     .bit = MICA_DEVICE_CPU, .rank = 0, .streams = 0, .linked = 1,
     .cl_float32 = "onednn", .host_memory = 1},
    {.name = "cuda", .title = "CUDA", .unit = "GPU",
     .bit = MICA_DEVICE_CUDA, .rank = 10, .streams = 1,
#ifdef MICA_HAVE_CUDA
     .object = "mica_device_cuda.so",
#endif
     .missing = "configure --with-cuda"},
};
#define NB_DEVICES ((int32_t)(sizeof table / sizeof table[0]))

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
