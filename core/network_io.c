/*
 * core/network_io.c - a network's inputs, the tensors marked as its
 * outputs, and the int8 scales given to its tensors (the generic C API;
 * the layers are in network.c).
 */
#include <config.h>

#include "graph.h"

#include <stdlib.h>
#include <string.h>

mica_status_t mica_network_add_input(mica_network_t *net, const char *name,
                                     mica_dtype_t dtype,
                                     const mica_dims_t *dims,
                                     const char *origin)
{
    mica__net_input_t *grown, *in;
    char at[512];
    int32_t i;

    if (!mica__valid_name(name))
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sa network input needs a name",
                          mica__at(origin, at, sizeof at));
    if (!mica_dtype_size(dtype))
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sinput '%s': unknown dtype %d",
                          mica__at(origin, at, sizeof at), name, (int)dtype);
    if (!dims || dims->nb_dims < 0 || dims->nb_dims > MICA_MAX_DIMS)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sinput '%s': rank must be 0 to %d",
                          mica__at(origin, at, sizeof at), name,
                          MICA_MAX_DIMS);
    for (i = 0; i < dims->nb_dims; i++)
        if (dims->d[i] < -1)
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%sinput '%s': dimension %d is %lld (a size, "
                              "or -1 for a runtime dimension)",
                              mica__at(origin, at, sizeof at), name, (int)i,
                              (long long)dims->d[i]);
    /* each profile's largest shape is checked with the profile */
    if (mica__declared_bytes(net->ctx, origin, name, dims, dtype) != MICA_OK)
        return MICA_ERR_INVALID;
    grown = realloc(net->inputs, sizeof *grown * (size_t)(net->nb_inputs + 1));
    if (!grown)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    net->inputs = grown;
    in = &net->inputs[net->nb_inputs];
    memset(in, 0, sizeof *in);
    in->name = mica__strdup(name);
    in->origin = mica__strdup(origin);
    in->dtype = dtype;
    in->dims = *dims;
    if (!in->name || (origin && !in->origin)) {
        free(in->name);
        free(in->origin);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    net->nb_inputs++;
    return MICA_OK;
}

mica_status_t mica_network_add_shape_input(mica_network_t *net,
                                           const char *name,
                                           const mica_dims_t *dims,
                                           const char *origin)
{
    char at[512];
    int32_t i;
    mica_status_t st;

    if (dims && dims->nb_dims > 1)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sshape-tensor input '%s': rank %d, but a shape "
                          "tensor has rank 0 or 1",
                          mica__at(origin, at, sizeof at), name ? name : "",
                          (int)dims->nb_dims);
    for (i = 0; dims && i < dims->nb_dims; i++)
        if (dims->d[i] < 0)
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%sshape-tensor input '%s': its length must "
                              "be fixed, not %lld",
                              mica__at(origin, at, sizeof at), name,
                              (long long)dims->d[i]);
    if (dims && dims->nb_dims == 1 && dims->d[0] > MICA__MAX_SHAPE_VALUES)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sshape-tensor input '%s': %lld values, more "
                          "than the %d a shape tensor may have",
                          mica__at(origin, at, sizeof at), name,
                          (long long)dims->d[0], MICA__MAX_SHAPE_VALUES);
    st = mica_network_add_input(net, name, MICA_INT32, dims, origin);
    if (st == MICA_OK)
        net->inputs[net->nb_inputs - 1].is_shape = 1;
    return st;
}

/* Append name (with origin) to a list of output names. */
static mica_status_t add_output(mica_network_t *net, char ***list,
                                char ***origins_list, int32_t *n,
                                const char *name, const char *origin,
                                const char *what)
{
    char **names, **origins, at[512];
    int32_t i;

    if (!mica__valid_name(name))
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%san %s needs a tensor name",
                          mica__at(origin, at, sizeof at), what);
    for (i = 0; i < *n; i++)
        if (strcmp((*list)[i], name) == 0)
            return mica__fail(net->ctx, MICA_ERR_INVALID,
                              "%stensor '%s' is marked as an %s twice",
                              mica__at(origin, at, sizeof at), name, what);
    names = realloc(*list, sizeof *names * (size_t)(*n + 1));
    if (names)
        *list = names;
    origins = realloc(*origins_list, sizeof *origins * (size_t)(*n + 1));
    if (origins)
        *origins_list = origins;
    if (!names || !origins)
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    names[*n] = mica__strdup(name);
    origins[*n] = mica__strdup(origin);
    if (!names[*n] || (origin && !origins[*n])) {
        free(names[*n]);
        free(origins[*n]);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    (*n)++;
    return MICA_OK;
}

mica_status_t mica_network_set_scale(mica_network_t *net, const char *name,
                                     float scale, const char *origin)
{
    char at[512], **names, **origins;
    float *scales;
    int32_t i;

    if (!mica__valid_name(name) || !(scale > 0.0f) || scale > 3.4e38f)
        return mica__fail(net->ctx, MICA_ERR_INVALID,
                          "%sscale of '%s': %g is not a finite positive number",
                          mica__at(origin, at, sizeof at), name ? name : "",
                          (double)scale);
    for (i = 0; i < net->nb_scales; i++)
        if (strcmp(net->scale_names[i], name) == 0) {
            net->scales[i] = scale;
            return MICA_OK;
        }
    names = realloc(net->scale_names, sizeof *names * (size_t)(i + 1));
    if (names)
        net->scale_names = names;
    origins = realloc(net->scale_origins, sizeof *origins * (size_t)(i + 1));
    if (origins)
        net->scale_origins = origins;
    scales = realloc(net->scales, sizeof *scales * (size_t)(i + 1));
    if (scales)
        net->scales = scales;
    if (!names || !origins || !scales || !(names[i] = mica__strdup(name)))
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    origins[i] = mica__strdup(origin);
    if (origin && !origins[i]) {
        free(names[i]);
        return mica__fail(net->ctx, MICA_ERR_NOMEM, "out of host memory");
    }
    scales[i] = scale;
    net->nb_scales++;
    return MICA_OK;
}

mica_status_t mica_network_mark_output(mica_network_t *net, const char *name,
                                       const char *origin)
{
    return add_output(net, &net->outputs, &net->output_origins,
                      &net->nb_outputs, name, origin, "output");
}

mica_status_t mica_network_mark_shape_output(mica_network_t *net,
                                             const char *name,
                                             const char *origin)
{
    return add_output(net, &net->shape_outputs, &net->shape_output_origins,
                      &net->nb_shape_outputs, name, origin, "output for shapes");
}
