/*
 * core/network_format.c - the memory formats a network's caller asks for
 * its inputs and outputs (mica_network_set_format); the builder checks
 * them (core/formats.c) and chooses every other tensor's.
 */
#include <config.h>

#include "graph.h"

#include <stdlib.h>
#include <string.h>

mica_status_t mica_network_set_format(mica_network_t *net, const char *name,
                                      uint32_t format, const char *origin)
{
    char at[512], **names, **origins;
    uint32_t *formats;
    int32_t i;

    if (!name || !name[0])
        return mica__fail(net->ctx, MICA_ERR_INVALID, "%sa format needs a "
                          "tensor name", mica__at(origin, at, sizeof at));
    if (format > MICA_FORMAT_DHWC)
        return mica__fail(net->ctx, MICA_ERR_INVALID, "%sformat of '%s': %u "
                          "is not a format (linear 0, hwc 1, dhwc 2)",
                          mica__at(origin, at, sizeof at), name,
                          (unsigned)format);
    for (i = 0; i < net->nb_formats; i++)
        if (strcmp(net->format_names[i], name) == 0) {
            net->formats[i] = format;
            return MICA_OK;
        }
    names = realloc(net->format_names, sizeof *names * (size_t)(i + 1));
    if (names)
        net->format_names = names;
    origins = realloc(net->format_origins, sizeof *origins * (size_t)(i + 1));
    if (origins)
        net->format_origins = origins;
    formats = realloc(net->formats, sizeof *formats * (size_t)(i + 1));
    if (formats)
        net->formats = formats;
    if (!names || !origins || !formats || !(names[i] = mica__strdup(name)))
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    origins[i] = mica__strdup(origin);
    formats[i] = format;
    net->nb_formats++;
    return MICA_OK;
}

uint32_t mica__network_format(const mica_network_t *net, const char *name)
{
    int32_t i;
    for (i = 0; i < net->nb_formats; i++)
        if (strcmp(net->format_names[i], name) == 0)
            return net->formats[i];
    return MICA_FORMAT_LINEAR;
}

void mica__network_formats_free(mica_network_t *net)
{
    int32_t i;
    for (i = 0; i < net->nb_formats; i++) {
        free(net->format_names[i]);
        free(net->format_origins[i]);
    }
    free(net->format_names);
    free(net->format_origins);
    free(net->formats);
}
